"""Fuzzing the paths that take a circle model after a successful load: ``bind``,
``bake`` (both shared-copy policies), ``to_dialect`` (both runtimes), ``edit``, the value
sanity checks and ``to_torch``, on fc3 (tests/data/real-onert).

The inputs are *valid* files that fit the model, so the deep code runs: the real onert exports
as schema 1, schema 2 (with hostile state keys and model indices that the file itself
asserts, in range or not), onert-micro and WOF, with NaN and infinite values written into
their tensors; then the hostile schema-2 files of tests/fuzz/test_fuzz_entrypoints.py and the
schema-1/WOF files of tests/strategies.py, which mostly do not fit. Property: each call
returns or raises the project's :class:`~onert_checkpoint.CheckpointError`; nothing else
escapes (an IndexError from a file's model index past the model did, in ``to_torch``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onert_checkpoint as oc
from onert_checkpoint import CheckpointError
from onert_checkpoint.circle.bake import bake
from onert_checkpoint.circle.binding import bind
from onert_checkpoint.circle.dialect_convert import to_dialect
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.tools.edit import edit
from onert_checkpoint.tools.sanity import value_warnings
from tests.fuzz.test_fuzz_entrypoints import hostile_v2
from tests.strategies import checkpoint_files

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
MODEL = CircleModel.load(DATA / "fc3.circle")
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SPECIAL = [float("nan"), float("inf"), float("-inf"), -0.0, 3.4e38]
#: order="predict": the runtime probe (order="auto") would start onert for every example
CALLS: dict[str, Any] = {
    "bind": lambda c: bind(c, MODEL, order="predict"),
    "bind by size": lambda c: bind(c, MODEL, order="size"),
    "bake": lambda c: bake(c, MODEL, order="predict"),
    "bake untie": lambda c: bake(c, MODEL, order="predict", shared="untie"),
    # batch_size=1: the real files trained one sample per step (Adam's units, SPEC 9.3)
    "to onert-micro": lambda c: to_dialect(c, "onert-micro", MODEL, order="predict",
                                           batch_size=1),
    "to onert": lambda c: to_dialect(c, "onert", MODEL, order="predict", batch_size=1),
    "edit": lambda c: edit(c, step=5, reset_optimizer=True),
    "edit drop": lambda c: edit(c, epoch=1, drop_optimizer=True),
    "value warnings": value_warnings,
}
try:
    import torch  # noqa: F401  (the bridge's extra)

    from onert_checkpoint.interchange.torch_bridge import to_torch

    CALLS["to_torch"] = lambda c: to_torch(c, MODEL)
except ImportError:  # the [torch] extra is not installed: the other paths still run
    pass


def check_model_paths(data: bytes) -> int:
    """Every call on a fresh load of ``data``; the number of calls that returned."""
    returned = 0
    for call in CALLS.values():
        try:
            ckpt = oc.load(data)
        except CheckpointError:
            return 0
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # value warnings of NaN weights, by design
                call(ckpt)
            returned += 1
        except CheckpointError:
            pass
    return returned


def _fitting(revision: str, source: str) -> oc.Checkpoint:
    base = oc.load(DATA / source)
    if revision == "v2":
        return oc.convert(base, "v2", model=MODEL)
    if revision == "v1":
        return base
    micro = oc.convert(base, "v1", dialect="onert-micro", model=MODEL, batch_size=1)
    return micro if revision == "micro" else oc.convert(micro, "wof", allow_lossy=True)


@st.composite
def fitting_files(draw: st.DrawFn) -> bytes:
    ckpt = _fitting(draw(st.sampled_from(["v1", "v2", "micro", "wof"])),
                    draw(st.sampled_from(["fc3-sgd-step12.ckpt", "fc3-adam-step12.ckpt"])))
    for t in ckpt.tensors:
        if draw(st.booleans()) and t.nbytes >= 4:
            values = np.array(t.raw).view(np.float32).copy()
            values[draw(st.integers(0, values.size - 1))] = draw(st.sampled_from(SPECIAL))
            t.data = values.reshape(t.shape) if t.shape else values
    if ckpt.revision == "v2":
        for key in draw(st.lists(st.sampled_from(["\x1b]0;x\x07", "lr", "a\x00b"]),
                                 unique=True, max_size=2)):
            ckpt.state[key] = draw(st.sampled_from([float("nan"), b"\x00", "x", 2**63 - 1]))
        for t in ckpt.tensors:
            if draw(st.booleans()):
                t.model_index = draw(st.sampled_from([None, 0, 2, 8, 9, 2**31, 2**32 - 1]))
    try:
        return oc.to_bytes(ckpt)
    except CheckpointError:  # e.g. a model index used twice: the writer refuses it
        return oc.to_bytes(_fitting("v2", "fc3-sgd-step12.ckpt"))


def test_the_real_files_take_every_path() -> None:
    """The unmutated files fit: every path returns (the fuzz below is not all refusals)."""
    for revision in ("v1", "v2", "micro"):
        for source in ("fc3-sgd-step12.ckpt", "fc3-adam-step12.ckpt"):
            data = oc.to_bytes(_fitting(revision, source))
            assert check_model_paths(data) == len(CALLS), (revision, source)


@SETTINGS
@given(data=fitting_files())
def test_files_that_fit_the_model(data: bytes) -> None:
    check_model_paths(data)


@SETTINGS
@given(ckpt=hostile_v2())
def test_hostile_schema2_files(ckpt: oc.Checkpoint) -> None:
    try:
        data = oc.to_bytes(ckpt)
    except CheckpointError:
        return
    check_model_paths(data)


@SETTINGS
@given(sample=checkpoint_files())
def test_schema1_and_wof_files(sample: Any) -> None:
    check_model_paths(sample.data)


@pytest.mark.parametrize("index", [9, 2**31, 2**32 - 1])
def test_a_schema2_model_index_past_the_model(index: int) -> None:
    """The case the fuzz found: a record's model index, as the file asserts it."""
    ckpt = _fitting("v2", "fc3-adam-step12.ckpt")
    ckpt.tensors[2].model_index = index
    check_model_paths(oc.to_bytes(ckpt))
