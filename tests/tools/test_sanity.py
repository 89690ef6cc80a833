"""Value sanity (onert_checkpoint.tools.sanity, ``validate``'s warnings) on real onert exports
with values a structural check cannot see: NaN and infinity, a negative Adam v, Adam state at
step 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.model import Buffer

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"
MODEL = DATA / "fc2.circle"


def _validate(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", "validate", *argv],
                          cwd=cwd, capture_output=True, text=True, check=False)


def _with(path: Path, out: Path, *, weight: tuple[int, int, float] | None = None,
          slot: tuple[str, int, int, float] | None = None, step: int | None = None) -> Path:
    """A copy of ``path`` with one value set: ``weight=(entry, element, value)``,
    ``slot=(name, entry, element, value)``, and/or the step."""
    ckpt = oc.load(path)
    if weight is not None:
        entry, element, value = weight
        data = ckpt[entry].raw.view("<f4").copy()
        data[element] = value
        ckpt[entry].data = data
    if slot is not None:
        name, entry, element, value = slot
        buf = ckpt.optimizer.slots[name][entry]
        data = buf.raw.view("<f4").copy()
        data[element] = value
        ckpt.optimizer.slots[name][entry] = Buffer(buf.index, data, buf.offset)
    if step is not None:
        ckpt.state["step"] = step
    oc.save(ckpt, out)
    return out


def test_real_exports_have_no_findings() -> None:
    for path in (ADAM, SGD):
        assert oc.value_warnings(oc.load(path)) == []
        assert oc.value_warnings(oc.load(path, model=MODEL)) == []


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_weight(tmp_path, value: float) -> None:
    path = _with(SGD, tmp_path / "c.ckpt", weight=(2, 5, value))
    found = oc.value_warnings(oc.load(path, model=MODEL))
    assert [(w.code, w.field) for w in found] == [("non_finite_weight", "weights[2]")]
    assert "'w1'" in found[0].message and "element 5" in found[0].message


def test_non_finite_slot_and_negative_v(tmp_path) -> None:
    path = _with(ADAM, tmp_path / "a.ckpt", slot=("m", 1, 0, np.nan))
    assert [(w.code, w.field) for w in oc.value_warnings(oc.load(path))] == [
        ("non_finite_slot", "m[1]")]
    path = _with(ADAM, tmp_path / "b.ckpt", slot=("v", 3, 2, -1e-3))
    found = oc.value_warnings(oc.load(path, model=MODEL))
    assert [(w.code, w.field) for w in found] == [("negative_adam_v", "v[3]")]
    assert "'b1'" in found[0].message
    # a negative m is normal: no finding
    path = _with(ADAM, tmp_path / "c.ckpt", slot=("m", 3, 2, -1e-3))
    assert oc.value_warnings(oc.load(path)) == []


def test_adam_state_at_step_0(tmp_path) -> None:
    path = _with(ADAM, tmp_path / "a.ckpt", step=0)
    found = oc.value_warnings(oc.load(path))
    assert [w.code for w in found] == ["adam_state_at_step_0"]
    assert found[0].field == "m[0]"
    # a fresh checkpoint (zero state, step 0) is fine
    fresh = oc.new_checkpoint(oc.CircleModel.load(MODEL), optimizer="adam")
    assert oc.value_warnings(fresh) == []
    # SGD at step 0 has no state to be wrong about
    assert oc.value_warnings(oc.load(_with(SGD, tmp_path / "s.ckpt", step=0))) == []


def test_validate_warns_and_strict_fails(tmp_path) -> None:
    _with(ADAM, tmp_path / "bad.ckpt", weight=(0, 0, np.nan), slot=("v", 1, 0, -2.0))
    done = _validate("bad.ckpt", str(ADAM), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "bad.ckpt: warning: non_finite_weight at weights[0]: " in lines[0]
    assert "bad.ckpt: warning: negative_adam_v at v[1]: " in lines[1]
    assert lines[2].startswith("bad.ckpt: ok (v1")
    done = _validate("--strict", "bad.ckpt", cwd=tmp_path)
    assert done.returncode == 1
    assert "ok (" not in done.stdout and "non_finite_weight" in done.stdout
    assert _validate("--strict", str(ADAM), cwd=tmp_path).returncode == 0
    done = _validate("--json", "--strict", "--model", str(MODEL), "bad.ckpt", cwd=tmp_path)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["valid"] is False
    assert [(w["code"], w["field"]) for w in report["warnings"]] == [
        ("non_finite_weight", "weights[0]"), ("negative_adam_v", "v[1]")]
    assert "'w0'" in report["warnings"][0]["message"]
    assert json.loads(_validate("--json", "bad.ckpt", cwd=tmp_path).stdout)["valid"] is True


def test_a_damaged_optimizer_state_warning_names_the_reset(tmp_path) -> None:
    _with(ADAM, tmp_path / "m.ckpt", slot=("m", 0, 0, np.nan))
    _with(tmp_path / "m.ckpt", tmp_path / "bad.ckpt", slot=("v", 2, 0, -1.0))
    done = _validate("--model", str(MODEL), "bad.ckpt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "non_finite_slot at m[0]" in lines[0] and "negative_adam_v at v[2]" in lines[1]
    for line in lines[:2]:
        assert "onert-ckpt edit --reset-optimizer" in line
    # a damaged weight is not the optimizer's: no reset advised
    _with(ADAM, tmp_path / "w.ckpt", weight=(0, 0, np.nan))
    done = _validate("w.ckpt", cwd=tmp_path)
    assert "non_finite_weight" in done.stdout and "--reset-optimizer" not in done.stdout
