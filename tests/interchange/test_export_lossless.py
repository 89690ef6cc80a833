"""export then import gives back the same bytes, for every valid file of every revision:
schema 1 in both dialects, WOF, the real onert exports, and schema-2 files
with self-described optimizers, unknown optional sections, non-finite and bytes state values,
tensor names, dtypes, shapes and model indices.
"""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.layout import Schema2Layout
from onert_checkpoint.format.model import Section
from tests.strategies import SampleFile, checkpoint_files, rich_checkpoints

ROOT = Path(__file__).resolve().parents[2]

#: Printable-or-not text for names, slot names and state strings: controls, bidi, NUL.
names = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12
).filter(lambda s: len(s.encode("utf-8")) <= 48)


def _float_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


#: Floats including every NaN payload and sign, the infinities and both zeros.
state_floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 2**64 - 1).map(_float_bits),
    st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0]),
)
state_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1), state_floats, names, st.binary(max_size=24)
)


@st.composite
def v2_checkpoints(draw: st.DrawFn) -> Checkpoint:
    """A schema-2 checkpoint built from scratch, with what only schema 2 holds."""
    indices = sorted(draw(st.sets(st.integers(0, 40), max_size=5)))
    tensors = []
    tensor_names = draw(st.lists(names, min_size=len(indices), max_size=len(indices),
                                 unique=True))
    model_indices = draw(st.lists(st.integers(0, 1000), min_size=len(indices),
                                  max_size=len(indices), unique=True))
    for k, i in enumerate(indices):
        count = draw(st.integers(1, 6))
        dtype = draw(st.sampled_from(["float32", "uint8", "int16", "float16", None]))
        size = {"float32": 4, "uint8": 1, "int16": 2, "float16": 2, None: 1}[dtype] * count
        data = np.frombuffer(draw(st.binary(min_size=size, max_size=size)), np.uint8).copy()
        t = Tensor(index=i, data=data)
        if draw(st.booleans()):
            t.name = tensor_names[k]
        if dtype is not None:
            t.dtype, t.shape = dtype, (count,)
        if draw(st.booleans()):
            t.model_index = model_indices[k]
        tensors.append(t)
    optimizer = None
    kind = draw(st.sampled_from(["none", "sgd", "adam", "self"]))
    if kind == "adam":
        optimizer = Optimizer("adam")
        for slot in ("m", "v"):
            optimizer.slots[slot] = {t.index: Buffer(t.index, t.raw.copy()) for t in tensors}
    elif kind == "sgd":
        optimizer = Optimizer("sgd")
    elif kind == "self":
        code = draw(st.integers(16, 2**32 - 1))
        slots = draw(st.lists(names, min_size=1, max_size=3, unique=True))
        optimizer = Optimizer(f"optimizer_{code}", {})
        for slot in slots:
            chosen = draw(st.sets(st.sampled_from([t.index for t in tensors]))) if tensors else []
            optimizer.slots[slot] = {
                i: Buffer(i, np.frombuffer(draw(st.binary(max_size=16)), np.uint8).copy())
                for i in sorted(chosen)
            }
    keys = draw(st.lists(names.map(lambda s: "k" + s), max_size=4, unique=True))
    state = TrainingState({k: draw(state_values) for k in keys})
    if draw(st.booleans()):
        state["step"] = draw(st.integers(0, 2**63 - 1))
    kinds = draw(st.sets(st.integers(6, 5000), max_size=2))
    sections = [Section(k, draw(st.binary(min_size=1, max_size=40)), False) for k in sorted(kinds)]
    return Checkpoint(tensors=tensors, optimizer=optimizer, state=state,
                      layout=Schema2Layout("v2", sections=sections))


def _round_trip(data: bytes) -> None:
    ckpt = oc.load(data)
    with tempfile.TemporaryDirectory() as tmp:
        for suffix, write, read in (
            (".safetensors", oc.to_safetensors, oc.from_safetensors),
            (".npz", oc.to_npz, oc.from_npz),
        ):
            path = os.path.join(tmp, "x" + suffix)
            write(ckpt, path)
            assert oc.to_bytes(read(path)) == data, suffix


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(v2_checkpoints())
def test_export_import_is_lossless_for_schema_2(ckpt: Checkpoint) -> None:
    _round_trip(oc.to_bytes(ckpt))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rich_checkpoints())
def test_export_import_is_lossless_for_schema_3(ckpt: Checkpoint) -> None:
    """Schema 3's storage order (the order column, 0-byte tensors sharing an offset) too."""
    _round_trip(oc.to_bytes(ckpt, revision="v3"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(checkpoint_files())
def test_export_import_is_lossless_for_every_revision(sample: SampleFile) -> None:
    _round_trip(sample.data)


def test_a_nan_payload_and_an_unknown_section_survive_the_command_line(tmp_path: Path) -> None:
    payload = _float_bits(0xFFF8_0000_0000_0ABC)
    ckpt = Checkpoint(
        tensors=[Tensor(0, np.arange(8, dtype=np.uint8), name="w\x1b[31m")],
        optimizer=Optimizer("optimizer_99", {"mom\u202e": {0: Buffer(0, np.ones(3, np.uint8))}}),
        state=TrainingState(learning_rate=payload, kblob=b"\x00\x01"),
        layout=Schema2Layout("v2", sections=[Section(300, b"opaque", False)]),
    )
    src = tmp_path / "src.ckpt"
    oc.save(ckpt, src)
    for suffix in (".safetensors", ".npz"):
        exported, back = tmp_path / f"x{suffix}", tmp_path / f"back{suffix}.ckpt"
        for argv in (["export", src, exported], ["import", exported, back]):
            result = subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, argv)],
                                    capture_output=True, cwd=ROOT, timeout=120)
            assert result.returncode == 0, result.stderr
        assert back.read_bytes() == src.read_bytes(), suffix


@pytest.mark.parametrize(
    ("meta", "says"),
    [({"state": "{not json"}, "state"), ({"arrays": '{"0": "x"}'}, "arrays"),
     ({"sections": '[{"kind": 9}]'}, "sections"), ({"offsets": '{"0": "x"}'}, "offsets"),
     ({"tensors": "{oops"}, "tensors"), ({"arrays": "["}, "arrays")],
)
def test_malformed_export_metadata_is_a_checkpoint_error(meta: dict[str, str],
                                                         says: str) -> None:
    arrays, good = oc.to_numpy_dict(oc.load(ROOT / "tests/data/real-onert/fc2-sgd-step8.ckpt"),
                                    metadata=True)
    with pytest.raises(oc.CheckpointError, match=says):
        oc.from_numpy_dict(arrays, {**good, **meta})


@pytest.mark.parametrize("suffix", [".npz", ".safetensors"])
def test_a_damaged_import_source_is_a_checkpoint_error(tmp_path: Path, suffix: str) -> None:
    ckpt = oc.load(ROOT / "tests/data/real-onert/fc2-adam-step8.ckpt")
    path = tmp_path / f"x{suffix}"
    (oc.to_npz if suffix == ".npz" else oc.to_safetensors)(ckpt, path)
    path.write_bytes(path.read_bytes()[:40])
    read = oc.from_npz if suffix == ".npz" else oc.from_safetensors
    with pytest.raises(oc.CheckpointError, match="not a readable"):
        read(path)


def test_slot_names_a_container_cannot_hold_travel_in_the_metadata() -> None:
    # NUL does not survive as part of an npz or safetensors array name.
    ckpt = Checkpoint(
        tensors=[Tensor(0, np.arange(4, dtype=np.uint8), name="w")],
        optimizer=Optimizer("optimizer_21", {"\x00": {0: Buffer(0, np.ones(2, np.uint8))},
                                             "m\x00x": {0: Buffer(0, np.zeros(1, np.uint8))}}),
        revision="v2",
    )
    _round_trip(oc.to_bytes(ckpt))
