"""Baking and binding do not hold the model in memory: the weights stay in the mapped files.

``bake`` maps the model and the checkpoint, rebuilds only the flatbuffer's tables, and writes
the new model in pieces around the weights it leaves where they lie (circle/rebuild.py,
``_Builder``); a command reading through a model maps it (``CircleModel.load``). Memory is
measured as tests/bench/bench_memory.py measures the commands: the child's ``RssAnon`` (private
anonymous pages: the heap and NumPy's buffers, not the page cache of the files it maps),
sampled every 5 ms, against the same command's peak on a tiny model.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.initial import trainable_tensors
from tests.bench.bench_memory import peak_anon

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

MIB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "real-onert"
#: What baking a 64 MiB model may hold beyond baking a tiny one: the tables and the pages the
#: builder writes next to each weight (measured: about 2 MiB; before, 7x the model: 450 MiB).
BEYOND_TINY = 16 * MIB


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[int, np.ndarray]]:
    """A 64 MiB FC model (four 2048 x 2048 layers) and a checkpoint whose weights all differ."""
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    from circle_builder import build_fc_model

    folder = tmp_path_factory.mktemp("bake-memory")
    model_path, ckpt_path = folder / "m.circle", folder / "c.ckpt"
    model_path.write_bytes(build_fc_model([2048] * 5, seed=1))
    model = oc.CircleModel.load(model_path)
    weights = {i: model.initial_data(i) + np.float32(1) for i in trainable_tensors(model)[1]}
    oc.save(oc.checkpoint_from_arrays(model, weights, optimizer="sgd"), ckpt_path, revision="v1")
    return model_path, ckpt_path, weights


def _peak(*argv: object) -> int:
    peak, _, status = peak_anon([*map(str, argv), "--order", "predict"], str(ROOT / "src"))
    assert status == 0
    return peak


@pytest.mark.slow
def test_baking_a_large_model_holds_its_tables_not_its_weights(trained, tmp_path):
    model_path, ckpt_path, weights = trained
    tiny = _peak("bake", DATA / "fc2-sgd-step8.ckpt", "--model", DATA / "fc2.circle",
                 tmp_path / "tiny.circle")
    big = _peak("bake", ckpt_path, "--model", model_path, tmp_path / "big.circle")
    assert big - tiny <= BEYOND_TINY, (
        f"bake of a {model_path.stat().st_size / MIB:.0f} MiB model: {big / MIB:.1f} MiB "
        f"anonymous, {tiny / MIB:.1f} MiB for a tiny one"
    )
    baked = oc.CircleModel.load(tmp_path / "big.circle")
    for index, values in weights.items():
        assert np.array_equal(baked.initial_data(index), values)


@pytest.mark.slow
def test_reading_through_a_large_model_maps_it(trained):
    model_path, ckpt_path, _ = trained
    tiny = _peak("info", "--model", DATA / "fc2.circle", DATA / "fc2-sgd-step8.ckpt")
    big = _peak("info", "--model", model_path, ckpt_path)
    assert big - tiny <= BEYOND_TINY, f"{big / MIB:.1f} MiB anonymous, {tiny / MIB:.1f} tiny"


def test_progress_counts_every_byte_written(tmp_path):
    ticks: list[int] = []
    out = tmp_path / "b.circle"
    baked = oc.bake(DATA / "fc2-sgd-step8.ckpt", DATA / "fc2.circle", out, progress=ticks.append)
    assert ticks and sum(ticks) == out.stat().st_size == len(baked)
    assert baked == oc.bake(DATA / "fc2-sgd-step8.ckpt", DATA / "fc2.circle") == out.read_bytes()
