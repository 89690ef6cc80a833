"""Upgrades and downgrades (spec/SPEC.md, section 9)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import onert_checkpoint as oc
from onert_checkpoint import (
    Buffer,
    Checkpoint,
    Optimizer,
    Tensor,
    TrainingState,
    convert,
    downgrade,
    upgrade,
)
from tests.strategies import checkpoints, wof_checkpoints

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REAL = Path(__file__).parents[1] / "data" / "real-onert"


def through_v2(ckpt: Checkpoint) -> Checkpoint:
    """upgrade, then write schema 2 and read it back (offsets become schema-2 offsets)."""
    return oc.load(oc.to_bytes(upgrade(ckpt, to="v2")))


@FAST
@given(checkpoints())
def test_downgrade_of_upgrade_is_the_same_v1_file(ckpt: Checkpoint) -> None:
    original = oc.to_bytes(ckpt)
    loaded = oc.load(original)
    back = downgrade(through_v2(loaded))
    assert oc.to_bytes(back) == original


@FAST
@given(checkpoints())
def test_downgrade_to_the_same_dialect_by_name(ckpt: Checkpoint) -> None:
    original = oc.to_bytes(ckpt)
    loaded = oc.load(original)
    if loaded.dialect is not None:
        assert oc.to_bytes(downgrade(through_v2(loaded), loaded.dialect)) == original


@FAST
@given(wof_checkpoints())
def test_wof_round_trip(ckpt: Checkpoint) -> None:
    original = oc.to_bytes(ckpt)
    v2 = through_v2(oc.load(original))
    assert v2.layout.origin["revision"] == "wof"
    assert oc.to_bytes(downgrade(v2, to="wof")) == original
    assert oc.to_bytes(convert(v2, to="wof")) == original


@FAST
@given(checkpoints())
def test_upgrade_preserves_every_tensor_slot_and_state_value(ckpt: Checkpoint) -> None:
    loaded = oc.load(oc.to_bytes(ckpt))
    upgraded = through_v2(loaded)
    assert upgraded.revision == "v2"
    assert upgraded.content_equal(loaded)
    assert upgraded.layout.origin == {
        "revision": "v1",
        "dialect": loaded.dialect,
        "num_entries": loaded.table_length,
        "footerless": "footerless" in loaded.layout.quirks,
    }


@pytest.mark.parametrize("name", ["fc2-adam-step8.ckpt", "fc2-sgd-step8.ckpt"])
def test_real_files(name: str) -> None:
    raw = (REAL / name).read_bytes()
    v2 = through_v2(oc.load(raw))
    assert oc.to_bytes(downgrade(v2)) == raw
    assert oc.to_bytes(convert(oc.load(raw), to="v1")) == raw


@pytest.mark.parametrize("name", ["fc2-adam-step8.ckpt", "fc2-sgd-step8.ckpt"])
def test_upgrade_with_model_names_the_tensors(name: str) -> None:
    ckpt = oc.load(REAL / name)
    named = oc.load(oc.to_bytes(upgrade(ckpt, model=REAL / "fc2.circle")))
    assert [t.name for t in named.tensors] == ["w0", "b0", "w1", "b1"]
    assert [t.data.shape for t in named.tensors] == [(8, 4), (8,), (3, 8), (3,)]
    assert named.content_equal(ckpt)
    with pytest.raises(oc.NotRepresentableError, match="names"):
        downgrade(named)
    assert oc.to_bytes(downgrade(named, allow_lossy=True)) == (REAL / name).read_bytes()


def _rich() -> Checkpoint:
    ckpt = Checkpoint(
        tensors=[Tensor(index=0, data=np.ones(2, np.float32))],
        optimizer=Optimizer("sgd_momentum"),
        state=TrainingState(step=4, epoch=1, learning_rate=0.1, log_dir="runs/a"),
    )
    ckpt.optimizer.slots["momentum"][0] = Buffer(0, np.zeros(2, np.float32))
    return ckpt


def test_downgrade_lists_what_would_be_lost() -> None:
    with pytest.raises(oc.NotRepresentableError) as info:
        downgrade(_rich(), "onert")
    assert info.value.code == "not_representable"
    for lost in ("sgd_momentum", "learning_rate", "log_dir"):
        assert lost in str(info.value)


def test_allow_lossy_keeps_what_fits() -> None:
    out = downgrade(_rich(), "onert-micro", allow_lossy=True)
    back = oc.load(oc.to_bytes(out))
    assert back.revision == "v1" and back.dialect == "onert-micro"
    assert dict(back.state) == {"step": 4, "epoch": 1}
    assert back.optimizer.kind == "sgd" and back[0].nbytes == 8


def test_not_laid_out_even_when_lossy() -> None:
    ckpt = Checkpoint(
        tensors=[Tensor(index=0, data=np.ones(2, np.float32))], optimizer=Optimizer("adam")
    )
    ckpt.optimizer.slots["m"][0] = Buffer(0, np.zeros(3, np.uint8))
    with pytest.raises(oc.NotRepresentableError):
        downgrade(ckpt, "onert", allow_lossy=True)


def test_convert_dispatches() -> None:
    raw = (REAL / "fc2-adam-step8.ckpt").read_bytes()
    v2 = convert(oc.load(raw), to="v2")
    assert v2.revision == "v2"
    assert oc.to_bytes(convert(v2, to="v1")) == raw
    with pytest.raises(ValueError):
        convert(v2, to="v4")
