"""Which circle tensor each onert checkpoint entry holds: prediction against the runtime.

The prediction (:func:`predict_onert_order`) replays libstdc++'s unordered_map; the probe
(:func:`probe_onert_order`) asks onert 0.1.0 itself. Tests that need the runtime skip when the
``onert`` wheel is missing.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from circle_builder import OpSpec, TensorSpec, build_fc_model, build_model

from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import (
    LibstdcxxUnorderedMap,
    predict_onert_order,
    probe_onert_order,
    trainable_indices,
)
from onert_checkpoint.format.errors import ModelMismatchError

#: onert 0.1.0's own two-layer model (tests/data/real-onert/regenerate.py says where it is from)
REAL_FC2 = Path(__file__).resolve().parents[1] / "data" / "real-onert" / "fc2.circle"

# FORMAT-FACTS section 2: onert 0.1.0 on chains of L FC layers, constants at 1,2, 4,5, ...
OBSERVED = {
    1: [1, 2],
    2: [1, 2, 4, 5],
    3: [8, 7, 5, 4, 2, 1],
    4: [7, 8, 10, 11, 1, 2, 5, 4],
    5: [8, 5, 7, 2, 14, 1, 13, 4, 11, 10],
}


def _random_models(count: int, seed: int) -> list[bytes]:
    """Seeded FC chains of 1 to 8 layers; narrow widths make many tensors share a size."""
    rng = random.Random(seed)
    models = []
    for i in range(count):
        layers = rng.randint(1, 8)
        top = rng.choice([2, 3, 8])  # 2: almost every weight has the same size
        widths = [rng.randint(1, top) for _ in range(layers + 1)]
        layout = ("chain", "consts_first", "shuffled")[i % 3]
        models.append(build_fc_model(widths, seed=rng.randrange(1 << 30), layout=layout))
    return models


# libstdc++ container --------------------------------------------------------------------------


def test_unordered_map_small_table_reverses_insertion_order() -> None:
    # 13 buckets on the first insert; distinct buckets: each new key goes to the list head
    table = LibstdcxxUnorderedMap(range(5))
    assert table.bucket_count == 13
    assert table.keys() == [4, 3, 2, 1, 0]


def test_unordered_map_same_bucket_goes_first_in_bucket() -> None:
    table = LibstdcxxUnorderedMap([0, 1, 13])  # 13 shares bucket 0 with 0
    assert table.keys() == [1, 13, 0]


def test_unordered_map_rehash_grows_to_next_prime() -> None:
    table = LibstdcxxUnorderedMap(range(14))
    assert table.bucket_count == 29
    assert sorted(table.keys()) == list(range(14))
    table.erase(5)
    assert 5 not in table and len(table) == 13


# prediction ------------------------------------------------------------------------------------


@pytest.mark.parametrize("layers", sorted(OBSERVED))
def test_prediction_reproduces_format_facts(layers: int) -> None:
    model = CircleModel.load(build_fc_model([4] + [5 + k for k in range(layers)], seed=layers))
    assert predict_onert_order(model) == OBSERVED[layers]
    assert predict_onert_order(model) == OBSERVED[layers]


def test_prediction_of_real_model() -> None:
    model = CircleModel.load(REAL_FC2)
    assert predict_onert_order(model) == [1, 2, 4, 5]


# against the runtime ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def onert_runtime() -> object:
    return pytest.importorskip("onert", reason="the onert wheel (pip install onert) is missing")


@pytest.mark.parametrize("layers", sorted(OBSERVED))
def test_probe_reproduces_format_facts(onert_runtime: object, layers: int) -> None:
    model = build_fc_model([4] + [5 + k for k in range(layers)], seed=layers)
    assert probe_onert_order(model) == OBSERVED[layers]


@pytest.mark.parametrize("batch", range(4))
def test_prediction_matches_runtime(onert_runtime: object, batch: int) -> None:
    mismatches = []
    for raw in _random_models(20, seed=batch):
        model = CircleModel.load(raw)
        probed = probe_onert_order(raw)
        assert probed is not None and -1 not in probed
        if predict_onert_order(model) != probed:
            mismatches.append((len(model.tensors), probed))
    assert mismatches == []


def _deep_models() -> list[tuple[str, bytes]]:
    """FC chains of 9 to 128 layers in every layout (past each rehash of onert's unordered_map).

    The unordered_map simulation goes wrong at different depths when it is broken: a missing
    head-bucket update in the rehash from 9 layers, a bucket pointer moved to a node threaded
    into a non-empty bucket during the rehash from 21 to 30 layers (depending on the layout).
    Most models give every layer the same width, so every weight has the same size as every
    other and only the probe's markers tell the entries apart; the rest draw widths 1..8.
    """
    rng = random.Random(12)
    models = []
    depths = (9, 16, 21, 23, 30, 40, 47, 64, 96, 128)
    for k, layers in enumerate(depths):
        for layout in ("chain", "consts_first", "shuffled"):
            if (k + len(layout)) % 3 == 0:
                widths = [rng.randint(1, 8) for _ in range(layers + 1)]
                kind = "varied"
            else:
                widths = [(2, 3, 4)[k % 3]] * (layers + 1)
                kind = f"equal{widths[0]}"
            seed = rng.randrange(1 << 30)
            raw = build_fc_model(widths, seed, layout=layout)
            models.append((f"{layers}-{layout}-{kind}", raw))
    return models


DEEP_MODELS = _deep_models()


@pytest.mark.parametrize("name,raw", DEEP_MODELS, ids=[name for name, _ in DEEP_MODELS])
def test_prediction_matches_runtime_on_deep_models(
    onert_runtime: object, name: str, raw: bytes
) -> None:
    model = CircleModel.load(raw)
    probed = probe_onert_order(raw)
    assert probed is not None and -1 not in probed
    assert sorted(probed) == sorted(trainable_indices(model))
    assert predict_onert_order(model) == probed


def test_deep_models_reach_past_the_rehashes() -> None:
    """The deep models grow the operand maps through several rehashes (13, 29, 59, 127, 257,
    541 buckets for 1 + 3 * 128 + 4 operands) and hold only equal-size constants in most."""
    assert max(len(CircleModel.load(raw).tensors) for _, raw in DEEP_MODELS) > 257
    assert min(int(name.split("-")[0]) for name, _ in DEEP_MODELS if "equal" in name) <= 9
    assert sum(int(name.split("-")[0]) >= 40 and "equal" in name for name, _ in DEEP_MODELS) >= 6
    table = LibstdcxxUnorderedMap(range(1 + 3 * 128 + 4))
    assert table.bucket_count == 541


def test_probe_is_cached(onert_runtime: object) -> None:
    raw = build_fc_model([3, 4, 2], seed=9)
    first = probe_onert_order(raw)
    first.append(99)  # callers get copies
    assert probe_onert_order(raw) == [1, 2, 4, 5]


# circle_model ----------------------------------------------------------------------------------


def test_circle_model_reads_builder_output() -> None:
    model = CircleModel.load(build_fc_model([4, 8, 3], seed=1))
    assert [t.name for t in model.tensors] == ["input", "w0", "b0", "out0", "w1", "b1", "out1"]
    w0 = model.tensors[1]
    assert (w0.dtype, w0.type_code, w0.shape, w0.nbytes, w0.is_constant) == (
        "float32",
        0,
        (8, 4),
        128,
        True,
    )
    assert not model.tensors[0].is_constant and model.initial_data(0) is None
    assert [op.opcode for op in model.operators] == ["FULLY_CONNECTED"] * 2
    assert model.operators[1].inputs == (3, 4, 5) and model.operators[1].outputs == (6,)
    assert (model.inputs, model.outputs) == ((0,), (6,))


def test_initial_data_is_a_typed_view() -> None:
    raw = build_fc_model([2, 3], seed=4)
    rng = np.random.default_rng(4)
    weights = (rng.standard_normal((3, 2)) * 0.1).astype(np.float32)
    data = CircleModel.load(raw).initial_data(1)
    assert data is not None and data.shape == (3, 2) and data.dtype == np.float32
    assert np.array_equal(data, weights)
    assert not data.flags.owndata


def test_circle_model_reads_real_model() -> None:
    model = CircleModel.load(REAL_FC2)
    assert [t.nbytes for t in model.tensors if t.is_constant] == [128, 32, 96, 12]


def test_circle_model_types_without_numpy_dtype() -> None:
    spec = [TensorSpec("x", (1, 2)), TensorSpec("s", (2,), "int32", np.array([1, 2], np.int32))]
    raw = build_model(
        [*spec, TensorSpec("y", (1, 2))], [OpSpec("RESHAPE", (0, 1), (2,), (1, 2))], [0], [2]
    )
    model = CircleModel.load(raw)
    assert model.tensors[1].dtype == "int32" and model.tensors[1].nbytes == 8
    assert model.operators[0].opcode == "RESHAPE"


def test_micro_saved_indices_walk_operators_backwards() -> None:
    model = CircleModel.load(build_fc_model([4, 8, 3], seed=1))
    assert model.micro_saved_indices() == [4, 5, 1, 2]
    assert model.micro_saved_indices(num_train_layers=1) == [4, 5]


@pytest.mark.parametrize(
    "raw",
    [b"", b"CIR0", b"\x00" * 64, b"\x10\x00\x00\x00CIR0" + b"\xff" * 40, b"TFL3" * 10],
)
def test_bad_model_is_model_mismatch(raw: bytes) -> None:
    with pytest.raises(ModelMismatchError) as info:
        CircleModel.load(raw)
    assert info.value.code == "model_mismatch" and info.value.field == "model"


def test_truncated_model_is_model_mismatch() -> None:
    raw = build_fc_model([4, 8, 3], seed=1)
    with pytest.raises(ModelMismatchError):
        CircleModel.load(raw[: len(raw) // 3])


def test_missing_file_is_an_io_error_and_garbage_model_mismatch(tmp_path: object) -> None:
    """A model that cannot be read is an OSError naming its path, as for a checkpoint; one
    that is read but is not a circle model is ModelMismatchError."""
    with pytest.raises(FileNotFoundError) as info:
        CircleModel.load(f"{tmp_path}/absent.circle")
    assert info.value.filename == f"{tmp_path}/absent.circle"
    with open(f"{tmp_path}/garbage.circle", "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with pytest.raises(ModelMismatchError):
        CircleModel.load(f"{tmp_path}/garbage.circle")


def _retyped_fc(weight_type: int, weight_shape: tuple[int, ...] = (2, 4)) -> bytes:
    """A one-layer FC model whose weight claims another circle type code or shape than its
    32 bytes of float32 data (what a hostile or broken model file does)."""
    import flatbuffers
    from circle_schema.v0_9.circle.Model import ModelT

    raw = build_model(
        [TensorSpec("x", (1, 4)), TensorSpec("w", (2, 4), "float32", np.ones((2, 4), np.float32)),
         TensorSpec("b", (2,), "float32", np.ones(2, np.float32)), TensorSpec("y", (1, 2))],
        [OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))], [0], [3])
    obj = ModelT.InitFromPackedBuf(bytearray(raw), 0)
    obj.subgraphs[0].tensors[1].type = weight_type
    obj.subgraphs[0].tensors[1].shape = np.asarray(weight_shape, np.int32)
    builder = flatbuffers.Builder(1024)
    builder.Finish(obj.Pack(builder), file_identifier=b"CIR0")
    return bytes(builder.Output())


def test_a_model_the_runtime_aborts_on_leaves_the_caller_alive(
    onert_runtime: object, tmp_path: Path
) -> None:
    """onert 0.1.0 trains an INT8-typed weight holding 32 bytes with "SGD: Not supported data
    type" and then aborts the process ("double free or corruption"). The probe runs the runtime
    in a child process: the caller gets [-1] (no answer) and lives on; the command line says
    model_mismatch. Checked in a child of the test, so that a regression cannot kill pytest."""
    import subprocess
    import sys

    model = tmp_path / "int8-weight.circle"
    model.write_bytes(_retyped_fc(9))  # circle TensorType INT8
    code = ("from onert_checkpoint.circle.onert_order import probe_onert_order; "
            f"print('alive', probe_onert_order({str(model)!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0 and done.stdout == "alive [-1]\n", (done.returncode, done.stderr)
    ckpt = tmp_path / "c.ckpt"
    ckpt.write_bytes(REAL_FC2.with_name("fc2-sgd-step8.ckpt").read_bytes())
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", "info", str(ckpt), "--model",
                           str(model)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1 and done.stderr.startswith("onert-ckpt: error: model_mismatch")
    assert "Traceback" not in done.stderr and "double free" not in done.stderr


def test_the_probe_changes_no_process_state(
    onert_runtime: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No os.chdir in the caller's process (other threads resolve relative paths meanwhile):
    the runtime's short relative paths are the child's working folder."""
    import os

    def refuse(path: object) -> None:
        raise AssertionError("the probe changed the working folder of the process")

    monkeypatch.setattr(os, "chdir", refuse)  # the cache is this test's own: the runtime runs
    model = build_fc_model([3, 4, 2], seed=7)
    assert probe_onert_order(model) == predict_onert_order(CircleModel.load(model))


def test_the_marker_of_a_shape_its_buffer_does_not_hold_is_not_allocated(
    onert_runtime: object
) -> None:
    """A weight whose shape claims 2**60 float32 elements over 32 bytes of data: the probe's
    marker model keeps its bytes (no exabyte allocation); the runtime cannot train it: [-1]."""
    assert probe_onert_order(_retyped_fc(0, (2**30, 2**30))) == [-1]
