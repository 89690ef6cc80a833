"""Adam's state between onert's and onert-micro's units: ``convert(..., batch_size=B)`` and
``onert-ckpt convert --batch-size B`` (spec/SPEC.md 9.3; measured against the real runtimes in
tests/interop/test_micro_cross.py).

onert-micro sums a batch's gradients where onert averages them, so moving Adam state towards
onert-micro multiplies m by B and v by B**2, and towards onert divides them. These tests check
the exact values (against exact rational arithmetic), both directions, round trips, and every
refusal, on the committed real onert export (tests/data/real-onert) with synthetic state.
"""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.adam_units import ADAM_POWERS, rescale, rescale_slots
from onert_checkpoint.circle.dialect_convert import to_dialect
from onert_checkpoint.format.model import Buffer

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
MODEL = DATA / "fc2.circle"
ADAM = DATA / "fc2-adam-step8.ckpt"  # trained one sample per step (regenerate.py)
SGD = DATA / "fc2-sgd-step8.ckpt"
F32_MAX = Fraction(float(np.finfo(np.float32).max))


def _rn32(q: Fraction) -> np.float32:
    """``q`` rounded to the nearest float32, ties to even, computed exactly."""
    if abs(q) > F32_MAX:
        return np.float32(np.inf if q > 0 else -np.inf)  # compared only where finite
    guess = np.float32(float(q))
    best: tuple[tuple[Fraction, int], np.float32] | None = None
    for c in (np.nextafter(guess, np.float32(-np.inf)), guess,
              np.nextafter(guess, np.float32(np.inf))):
        if not np.isfinite(c):
            continue
        key = (abs(Fraction(float(c)) - q), int(c.view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    assert best is not None
    return best[1]


def _exact(values: np.ndarray, batch: int, power: int, to_micro: bool) -> np.ndarray:
    out = []
    for x in values.tolist():
        q = Fraction(x) * batch**power if to_micro else Fraction(x) / batch**power
        out.append(np.copysign(_rn32(q), np.float32(x)))  # a zero keeps the sign of x
    return np.array(out, dtype=np.float32)


def _values(seed: int, count: int = 400) -> np.ndarray:
    """float32 values of every binade, both signs, with zeros and float32 subnormals."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x) & (np.abs(x) < 1e30)]
    extra = np.array([0.0, -0.0, 1.0, -3.0, 1e-45, 1.2e-38, 0.1], dtype=np.float32)
    return np.concatenate([x, extra, (rng.standard_normal(100) * 1e-3).astype(np.float32)])


def _onert_with_state(seed: int, scale: float = 1e-2) -> oc.Checkpoint:
    """The real onert Adam export, its m and v replaced by seeded values (v >= 0)."""
    ckpt = oc.load(ADAM, model=MODEL)
    rng = np.random.default_rng(seed)
    for slot in ("m", "v"):
        for entry in ckpt.optimizer.slots[slot].values():
            values = rng.standard_normal(entry.data.shape) * scale
            entry.data = (np.abs(values) if slot == "v" else values).astype(np.float32)
    return ckpt


def _micro_with_state(seed: int) -> oc.Checkpoint:
    """The same in onert-micro's layout (re-indexed at batch 1, then state replaced)."""
    micro = oc.load(oc.to_bytes(oc.convert(oc.load(ADAM), "v1", dialect="onert-micro",
                                           model=MODEL, batch_size=1)), model=MODEL)
    rng = np.random.default_rng(seed)
    for slot in ("m", "v"):
        for entry in micro.optimizer.slots[slot].values():
            values = rng.standard_normal(entry.data.shape) * 0.05
            entry.data = (np.abs(values) if slot == "v" else values).astype(np.float32)
    return oc.load(oc.to_bytes(micro), model=MODEL)


def _by_tensor(ckpt: oc.Checkpoint, slot: str) -> dict[int, np.ndarray]:
    """Slot values keyed by circle tensor index (either dialect)."""
    bound = oc.load(oc.to_bytes(ckpt), model=MODEL)
    return {t.model_index: bound.optimizer.slots[slot][t.index].raw.view("<f4").copy()
            for t in bound.tensors}


# the arithmetic --------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [2, 3, 5, 6, 7, 12, 1000, 4095, 23169, 46341, 100003])
@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("to_micro", [True, False])
def test_each_value_is_rounded_once(batch: int, power: int, to_micro: bool) -> None:
    """Equal to the exact product or quotient rounded once to float32 (overflow aside), for odd
    parts of B below the proven bound (23171) and, in this sample, above it too."""
    x = _values(batch * 4 + power * 2 + to_micro)
    got = rescale(x, batch, power, to_micro=to_micro)
    want = _exact(x, batch, power, to_micro)
    finite = np.isfinite(got)
    assert np.array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))
    # what became infinite was beyond float32's range exactly
    for xi in x[~finite].tolist():
        assert abs(Fraction(xi) * batch**power) > F32_MAX


def test_power_of_two_batches_scale_exactly() -> None:
    x = _values(1)
    x = x[(np.abs(x) > 1e-30) & (np.abs(x) < 1e20)]  # no float32 subnormal on the way back
    for batch in (2, 4, 64, 1024):
        for power in (1, 2):
            up = rescale(x, batch, power, to_micro=True)
            assert np.array_equal(up, x * np.float32(batch**power))
            assert np.array_equal(rescale(up, batch, power, to_micro=False), x)


def test_a_round_trip_by_3_stays_within_one_unit() -> None:
    """Multiplying by 3 cannot reach every float32: there and back may be one ulp away."""
    x = _values(2)
    x = x[(np.abs(x) > 1e-30) & (np.abs(x) < 1e30)]
    for power in (1, 2):
        back = rescale(rescale(x, 3, power, to_micro=False), 3, power, to_micro=True)
        ulps = np.abs(back.view(np.int32).astype(np.int64) - x.view(np.int32).astype(np.int64))
        assert int(ulps.max()) <= 1


def test_non_finite_values_stay_and_only_overflow_is_refused() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32)
    got = rescale(x, 5, 2, to_micro=True)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf and got[3] == 25.0
    slots = {"m": {0: Buffer(0, x.view(np.uint8))}, "v": {0: Buffer(0, x.view(np.uint8))}}
    out = rescale_slots(slots, 5, to_micro=True, dtypes={0: "float32"})
    assert out["v"][0].raw.view("<f4")[3] == 25.0


def test_non_float32_state_is_refused() -> None:
    x = np.arange(1, 5, dtype=np.int32)
    slots = {"m": {7: Buffer(3, x.view(np.uint8))}}
    with pytest.raises(oc.CheckpointError) as info:
        rescale_slots(slots, 2, to_micro=True, dtypes={7: "int32"})
    assert (info.value.code, info.value.field) == ("not_representable", "m[3]")
    # zeros have no units: nothing to refuse
    zeros = {"m": {7: Buffer(3, np.zeros(16, np.uint8))}}
    assert rescale_slots(zeros, 2, to_micro=True, dtypes={7: "int32"})["m"][7] is zeros["m"][7]


# convert: both directions, exact factors ----------------------------------------------------


@pytest.mark.parametrize("batch", [2, 3, 7])
def test_onert_to_micro_multiplies_m_by_b_and_v_by_b_squared(batch: int) -> None:
    src = _onert_with_state(batch)
    out = oc.convert(src, "v1", dialect="onert-micro", model=MODEL, batch_size=batch)
    assert out.dialect == "onert-micro"
    for slot, power in ADAM_POWERS.items():
        before, after = _by_tensor(src, slot), _by_tensor(out, slot)
        assert sorted(before) == sorted(after)
        for i, values in before.items():
            assert after[i].tobytes() == _exact(values, batch, power, True).tobytes(), (slot, i)
    weights = {t.model_index: t.raw.tobytes()
               for t in oc.load(oc.to_bytes(src), model=MODEL).tensors}
    assert weights == {t.model_index: t.raw.tobytes()
                       for t in oc.load(oc.to_bytes(out), model=MODEL).tensors}
    assert out.step == src.step


@pytest.mark.parametrize("batch", [2, 3, 7])
def test_micro_to_onert_divides_m_by_b_and_v_by_b_squared(batch: int) -> None:
    src = _micro_with_state(batch)
    out = oc.convert(src, "v1", dialect="onert", model=MODEL, batch_size=batch)
    for slot, power in ADAM_POWERS.items():
        before, after = _by_tensor(src, slot), _by_tensor(out, slot)
        for i, values in before.items():
            assert after[i].tobytes() == _exact(values, batch, power, False).tobytes(), (slot, i)


@pytest.mark.parametrize("batch", [1, 2, 4, 64])
def test_micro_onert_micro_round_trip_gives_the_same_bytes(batch: int) -> None:
    micro = _micro_with_state(10 + batch)
    raw = oc.to_bytes(micro)
    onert = oc.load(oc.to_bytes(oc.convert(micro, "v1", dialect="onert", model=MODEL,
                                           batch_size=batch)))
    assert onert.dialect in ("onert", None)
    again = oc.convert(onert, "v1", dialect="onert-micro", model=MODEL, batch_size=batch)
    assert oc.to_bytes(again) == raw
    if batch > 1:
        assert oc.to_bytes(onert) != oc.to_bytes(
            oc.convert(micro, "v1", dialect="onert", model=MODEL, batch_size=1))


@pytest.mark.parametrize("batch", [1, 2, 8])
def test_onert_micro_onert_round_trip_gives_the_same_bytes(batch: int) -> None:
    raw = ADAM.read_bytes()
    micro = oc.load(oc.to_bytes(oc.convert(oc.load(raw), "v1", dialect="onert-micro",
                                           model=MODEL, batch_size=batch)))
    back = oc.convert(micro, "v1", dialect="onert", model=MODEL, batch_size=batch)
    assert oc.to_bytes(back) == raw


def test_within_one_runtime_nothing_is_rescaled() -> None:
    """onert -> onert (re-indexed through the model) with a batch size: the same bytes."""
    ckpt = oc.load(ADAM)
    same = to_dialect(ckpt, "onert", MODEL, batch_size=3)
    assert oc.to_bytes(same) == ADAM.read_bytes()
    micro = _micro_with_state(5)
    again = to_dialect(micro, "onert-micro", MODEL, batch_size=3)
    assert oc.to_bytes(again) == oc.to_bytes(micro)


def test_sgd_and_zero_state_need_no_batch_size() -> None:
    """SGD has no state and all-zero Adam state has no units: no batch size needed, and one
    given changes nothing."""
    sgd = oc.load(SGD)
    plain = oc.to_bytes(oc.convert(sgd, "v1", dialect="onert-micro", model=MODEL))
    assert plain == oc.to_bytes(oc.convert(sgd, "v1", dialect="onert-micro", model=MODEL,
                                           batch_size=5))
    fresh = oc.load(oc.to_bytes(oc.new_checkpoint(MODEL, optimizer="adam")))
    moved = oc.convert(fresh, "v1", dialect="onert-micro", model=MODEL)
    assert moved.dialect == "onert-micro"
    assert oc.to_bytes(moved) == oc.to_bytes(
        oc.convert(fresh, "v1", dialect="onert-micro", model=MODEL, batch_size=9))


def test_wof_ignores_the_batch_size() -> None:
    wof = oc.convert(oc.load(ADAM), "wof", model=MODEL, allow_lossy=True, batch_size=3)
    assert oc.to_bytes(wof) == oc.to_bytes(
        oc.convert(oc.load(ADAM), "wof", model=MODEL, allow_lossy=True, batch_size=1))


# refusals -------------------------------------------------------------------------------------


def _refused(call, field: str = "batch_size") -> oc.CheckpointError:
    with pytest.raises(oc.CheckpointError) as info:
        call()
    assert (info.value.code, info.value.field) == ("not_representable", field), info.value
    return info.value


def test_adam_state_crossing_without_a_batch_size_is_refused() -> None:
    error = _refused(lambda: oc.convert(oc.load(ADAM), "v1", dialect="onert-micro",
                                        model=MODEL))
    assert "batch_size=" in error.message and "--batch-size" in error.message
    micro = _micro_with_state(3)
    _refused(lambda: oc.convert(micro, "v1", dialect="onert", model=MODEL))
    # through schema 2 (origin: onert) to onert-micro
    v2 = oc.load(oc.to_bytes(oc.convert(oc.load(ADAM), "v2")))
    _refused(lambda: oc.convert(v2, "v1", dialect="onert-micro", model=MODEL, allow_lossy=True))


@pytest.mark.parametrize("bad", [0, -2, 2**31, True, 2.0, "2"])
def test_bad_batch_sizes_are_refused(bad: object) -> None:
    _refused(lambda: oc.convert(oc.load(ADAM), "v1", dialect="onert-micro", model=MODEL,
                                batch_size=bad))  # type: ignore[arg-type]


def test_overflow_is_refused_not_written() -> None:
    ckpt = _onert_with_state(4)
    entry = next(iter(ckpt.optimizer.slots["v"].values()))
    values = entry.data.copy()
    values.flat[3] = np.float32(3e37)  # v: x 2**2 fits, x 4**2 does not
    entry.data = values
    raw = oc.to_bytes(ckpt)
    error = _refused(lambda: oc.convert(oc.load(raw), "v1", dialect="onert-micro", model=MODEL,
                                        batch_size=4), field=f"v[{entry.index}]")
    assert "overflows float32" in error.message and "element 3" in error.message
    oc.convert(oc.load(raw), "v1", dialect="onert-micro", model=MODEL, batch_size=2)


# schema 2's batch_size key ------------------------------------------------------------------


def test_upgrade_records_the_batch_size_and_a_downgrade_uses_it() -> None:
    v2 = oc.load(oc.to_bytes(oc.convert(oc.load(ADAM), "v2", model=MODEL, batch_size=3)))
    assert v2.state["batch_size"] == 3
    used = oc.convert(v2, "v1", dialect="onert-micro", model=MODEL, allow_lossy=True)
    told = oc.convert(oc.load(ADAM), "v1", dialect="onert-micro", model=MODEL, batch_size=3)
    assert oc.to_bytes(used) == oc.to_bytes(told)
    # the same number given again is fine; another is refused
    oc.convert(v2, "v1", dialect="onert-micro", model=MODEL, allow_lossy=True, batch_size=3)
    error = _refused(lambda: oc.convert(v2, "v1", dialect="onert-micro", model=MODEL,
                                        allow_lossy=True, batch_size=2))
    assert "records batch_size 3" in error.message
    # a downgrade without allow_lossy names the key it would lose (schema 1 keeps step, epoch)
    error = _refused(lambda: oc.convert(v2, "v1", dialect="onert-micro", model=MODEL),
                     field=None)  # type: ignore[arg-type]
    assert "'batch_size'" in error.message


def test_a_recorded_batch_size_of_0_is_not_a_batch_size() -> None:
    v2 = oc.convert(oc.load(ADAM), "v2", model=MODEL)
    v2.state["batch_size"] = 0
    v2 = oc.load(oc.to_bytes(v2))
    _refused(lambda: oc.convert(v2, "v1", dialect="onert-micro", model=MODEL, allow_lossy=True))
    again = oc.convert(v2, "v2", batch_size=2)
    assert again.state["batch_size"] == 2


# the command line ---------------------------------------------------------------------------


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *argv],
                          capture_output=True, text=True, timeout=120)


def test_cli_convert_batch_size(tmp_path: Path) -> None:
    out = tmp_path / "micro.ckpt"
    base = ["convert", str(ADAM), str(out), "--to", "v1", "--dialect", "onert-micro",
            "--model", str(MODEL)]
    refused = _cli(*base)
    assert refused.returncode == 1, refused
    assert "not_representable" in refused.stderr and "--batch-size" in refused.stderr
    assert not out.exists()
    for bad in ("0", "-1", "two", "1.5"):
        usage = _cli(*base, "--batch-size", bad)
        assert usage.returncode == 2 and "--batch-size" in usage.stderr, usage
        assert not out.exists()
    done = _cli(*base, "--batch-size", "3")
    assert done.returncode == 0, done
    want = oc.convert(oc.load(ADAM), "v1", dialect="onert-micro", model=MODEL, batch_size=3)
    assert out.read_bytes() == oc.to_bytes(want)
    v2 = tmp_path / "run.v2"
    assert _cli("convert", str(ADAM), str(v2), "--to", "v2", "--batch-size", "3").returncode == 0
    assert oc.load(v2).state["batch_size"] == 3


def test_cli_import_batch_size(tmp_path: Path) -> None:
    """``import --dialect onert-micro --model --batch-size`` rescales like convert."""
    exported, out = tmp_path / "run.safetensors", tmp_path / "micro.ckpt"
    assert _cli("export", str(ADAM), str(exported), "--model", str(MODEL)).returncode == 0
    base = ["import", str(exported), str(out), "--model", str(MODEL), "--dialect",
            "onert-micro"]
    refused = _cli(*base)
    assert refused.returncode == 1 and "batch_size" in refused.stderr, refused
    assert not out.exists()
    done = _cli(*base, "--batch-size", "3")
    assert done.returncode == 0, done
    want = oc.convert(oc.load(ADAM), "v1", dialect="onert-micro", model=MODEL, batch_size=3)
    assert out.read_bytes() == oc.to_bytes(want)


def test_to_torch_keeps_onerts_units_for_shared_copies() -> None:
    """onert content whose shared weights have copies goes through onert-micro's indexing to
    become torch parameters: re-indexed only, the Adam state kept in onert's (= torch's) units
    and never refused for want of a batch size."""
    pytest.importorskip("torch", reason="torch is not installed (pip install '.[torch]')")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
    from circle_builder import build_shared_fc_model

    model = build_shared_fc_model(3, [(0, 0), (0, 1)], seed=1)  # layer 1 reads layer 0's w
    ckpt = oc.new_checkpoint(model, optimizer="adam", dialect="onert")
    for slot, value in (("m", 0.5), ("v", 0.25)):
        for entry in ckpt.optimizer.slots[slot].values():
            entry.data = np.full(entry.nbytes // 4, value, np.float32).view(np.uint8)
    ckpt = oc.load(oc.to_bytes(ckpt), model=model)
    indices = [t.model_index for t in ckpt.tensors]
    assert None in indices  # onert's copy of the shared weight (w0@op1, SPEC B.9)
    _, optim = oc.to_torch(ckpt, model)
    assert optim["state"]
    for state in optim["state"].values():
        assert bool((state["exp_avg"] == 0.5).all()) and bool((state["exp_avg_sq"] == 0.25).all())


def test_cli_edit_batch_size(tmp_path: Path) -> None:
    """``edit --to v1 --dialect onert-micro --model --batch-size`` converts like convert."""
    out = tmp_path / "micro.ckpt"
    base = ["edit", str(ADAM), str(out), "--to", "v1", "--dialect", "onert-micro", "--model",
            str(MODEL), "--step", "8"]
    refused = _cli(*base)
    assert refused.returncode == 1 and "batch_size" in refused.stderr, refused
    assert not out.exists()
    done = _cli(*base, "--batch-size", "3")
    assert done.returncode == 0, done
    want = oc.convert(oc.load(ADAM), "v1", dialect="onert-micro", model=MODEL, batch_size=3)
    assert out.read_bytes() == oc.to_bytes(want)


def test_schema2_input_takes_its_units_from_its_origin() -> None:
    """to_dialect on a schema-2 file (records name circle tensors whatever the runtime): the
    origin says whose units the state is in, so onert -> v2 -> onert-micro rescales exactly as
    a direct conversion, and v2 -> onert is not rescaled at all."""
    raw = ADAM.read_bytes()
    v2 = oc.load(oc.to_bytes(oc.convert(oc.load(raw), "v2", model=MODEL)))
    direct = oc.convert(oc.load(raw), "v1", dialect="onert-micro", model=MODEL, batch_size=3)
    assert oc.to_bytes(to_dialect(v2, "onert-micro", MODEL, batch_size=3)) == oc.to_bytes(direct)
    assert oc.to_bytes(to_dialect(v2, "onert", MODEL, batch_size=3)) == raw
    micro_v2 = oc.load(oc.to_bytes(oc.convert(oc.load(oc.to_bytes(direct)), "v2", model=MODEL)))
    assert micro_v2.layout.origin["dialect"] == "onert-micro"
    assert oc.to_bytes(to_dialect(micro_v2, "onert-micro", MODEL, batch_size=3)) == oc.to_bytes(
        direct)


@pytest.mark.parametrize("zero", ["m", "v"])
def test_one_all_zero_moment_does_not_hide_the_other(zero: str) -> None:
    """m all zero and v not (or the reverse): the state still has units, so crossing dialects
    without B is refused, and with B the non-zero moment is rescaled (v by B**2, m by B) while
    the zero one stays zero."""
    src = _onert_with_state(17)
    for entry in src.optimizer.slots[zero].values():
        entry.data = np.zeros_like(entry.data)
    _refused(lambda: oc.convert(src, "v1", dialect="onert-micro", model=MODEL))
    batch = 3
    out = oc.convert(src, "v1", dialect="onert-micro", model=MODEL, batch_size=batch)
    for slot, power in ADAM_POWERS.items():
        before, after = _by_tensor(src, slot), _by_tensor(out, slot)
        for i, values in before.items():
            if slot == zero:
                assert not after[i].any(), (slot, i)
            else:
                assert values.any()
                want = _exact(values, batch, power, True)
                assert after[i].tobytes() == want.tobytes(), (slot, i)
