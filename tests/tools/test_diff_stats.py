"""How much each tensor moved (``diff``: elements changed, relative L2 change, mean absolute
change, ``--ignore-state``) and what it holds (``info --stats``), checked against NumPy's own
figures on the real onert exports of tests/data/real-onert.

The command line runs as ``python -m onert_checkpoint`` in a subprocess, as a user runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.tools.stats import CHUNK, entry_stats
from tests.large_files import v3_many_entries

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
MODEL = DATA / "fc2.circle"


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


def _edited(tmp_path: Path, where: list[int], by: float) -> tuple[Path, np.ndarray, np.ndarray]:
    """fc2 with ``by`` added to some values of w0 (written by ``edit --replace``)."""
    w0 = np.array(oc.load(ADAM, model=MODEL)["w0"].data)  # float32
    new = w0.copy()
    new.reshape(-1)[where] += np.float32(by)
    np.save(tmp_path / "w0.npy", new)
    out = tmp_path / "edited.ckpt"
    done = run("edit", ADAM, out, "--model", MODEL, "--replace", f"w0={tmp_path / 'w0.npy'}")
    assert done.returncode == 0, done.stderr
    return out, w0, new


def test_diff_reports_changed_elements_rel_l2_and_mean_abs(tmp_path: Path) -> None:
    edited, w0, new = _edited(tmp_path, [0, 5, 31], 0.25)
    done = run("diff", "--json", "--model", MODEL, ADAM, edited)
    assert done.returncode == 1
    rows = {(e["key"], e["slot"]): e for e in json.loads(done.stdout)["entries"]}
    moved = rows["w0", "weights"]
    delta, w0 = new.astype(np.float64) - w0, w0.astype(np.float64)
    assert (moved["changed"], moved["elements"]) == (3, 32)
    assert moved["rel_l2"] == pytest.approx(np.linalg.norm(delta) / np.linalg.norm(w0), rel=1e-12)
    assert moved["mean_abs"] == pytest.approx(np.abs(delta).mean(), rel=1e-12)
    assert moved["max_abs"] == pytest.approx(np.abs(delta).max(), rel=1e-12)
    kept = [e for k, e in rows.items() if k != ("w0", "weights")]
    assert kept and all((e["changed"], e["rel_l2"], e["mean_abs"]) == (0, 0.0, 0.0) for e in kept)
    text = run("diff", "--model", MODEL, ADAM, edited).stdout
    header = next(line for line in text.splitlines() if line.startswith("entry"))
    assert header.split() == ["entry", "slot", "status", "changed", "rel_l2", "mean_abs",
                              "max_abs", "max_rel", ]
    assert any(line.split()[:4] == ["w0", "weights", "differs", "3/32"]
               for line in text.splitlines())


def test_diff_rel_l2_where_a_is_zero_is_zero_or_infinite() -> None:
    def pair(a: list[float], b: list[float]) -> oc.CheckpointDiff:
        ck = [oc.Checkpoint([oc.Tensor(0, np.array(v, np.float32), dtype="float32")])
              for v in (a, b)]
        return oc.diff(*ck)

    assert pair([0, 0], [0, 0]).entries[0].rel_l2 == 0.0
    moved = pair([0, 0], [0, 1e-3])
    assert moved.entries[0].rel_l2 == float("inf") and moved.entries[0].changed == 1
    assert moved.to_dict()["entries"][0]["rel_l2"] == {"float": "inf"}
    assert pair([3, 4], [3, 4.5]).entries[0].rel_l2 == pytest.approx(0.5 / 5)


def test_diff_figures_of_an_entry_past_one_chunk_are_the_whole_arrays() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal(3 * CHUNK + 7).astype(np.float32)
    b = a + rng.standard_normal(a.size).astype(np.float32) * (rng.random(a.size) < 0.1)
    (e,) = oc.diff(*(oc.Checkpoint([oc.Tensor(0, x, dtype="float32")]) for x in (a, b))).entries
    delta = b.astype(np.float64) - a
    assert e.changed == int(np.count_nonzero(delta)) and e.elements == a.size
    assert e.rel_l2 == pytest.approx(np.linalg.norm(delta) / np.linalg.norm(a.astype(float)))
    assert e.mean_abs == pytest.approx(np.abs(delta).mean())
    assert e.max_abs == pytest.approx(np.abs(delta).max())


def test_ignore_state_leaves_files_of_another_step_equal(tmp_path: Path) -> None:
    later = tmp_path / "step9.ckpt"
    assert run("edit", ADAM, later, "--step", "9").returncode == 0
    done = run("diff", ADAM, later)
    assert done.returncode == 1 and "different" in done.stdout.splitlines()[-1]
    done = run("diff", "--ignore-state", ADAM, later)
    assert done.returncode == 0, done.stdout
    assert "state step: 8 != 9 (ignored: --ignore-state)" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("equal")
    as_json = json.loads(run("diff", "--json", "--ignore-state", ADAM, later).stdout)
    assert as_json["equal"] and as_json["ignore_state"] and as_json["state"] == {"step": [8, 9]}
    edited, _, _ = _edited(tmp_path, [1], 0.5)  # values still count
    assert run("diff", "--ignore-state", "--atol", "0.1", ADAM, edited).returncode == 1
    assert run("diff", "--ignore-state", "--atol", "0.6", ADAM, edited).returncode == 0


@pytest.mark.parametrize("name", ["fc2-adam-step8", "fc3-adam-step12"])
def test_info_stats_are_numpy_s_figures_per_tensor_and_slot(name: str) -> None:
    model = DATA / (name.split("-")[0] + ".circle")
    done = run("info", "--stats", "--json", "--model", model, DATA / f"{name}.ckpt")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["stats"]
    ckpt = oc.load(DATA / f"{name}.ckpt", model=model)
    expected = [(t.index, t.name, slot, np.asarray(e.data, np.float64).reshape(-1))
                for t in ckpt.tensors
                for slot, e in [("weights", t)] + [(s, ckpt.optimizer.slots[s][t.index])
                                                   for s in ckpt.optimizer.slots]]
    assert [(s["index"], s["name"], s["slot"]) for s in stats] == [x[:3] for x in expected]
    for s, (_, _, _, v) in zip(stats, expected):
        assert s["dtype"] == "float32" and s["count"] == v.size
        assert (s["min"], s["max"]) == (v.min(), v.max())
        assert s["mean"] == pytest.approx(v.mean(), rel=1e-12, abs=1e-15)
        assert s["std"] == pytest.approx(v.std(), rel=1e-9, abs=1e-15)
        assert (s["nan"], s["inf"], s["zeros"]) == (0, 0, float(np.mean(v == 0)))
    text = run("info", "--stats", "--model", model, DATA / f"{name}.ckpt").stdout.splitlines()
    at = text.index(next(line for line in text if line.split()[:3] == ["entry", "slot", "dtype"]))
    assert len(text) - at - 1 == len(expected)


def test_info_stats_count_nan_inf_and_zeros_and_average_the_finite_values(
    tmp_path: Path
) -> None:
    values = np.array([np.nan, np.inf, -np.inf, 0, 0, 1, 2, 3] * (CHUNK // 4), np.float32)
    path = tmp_path / "odd.ckpt"
    oc.save(oc.Checkpoint([oc.Tensor(0, values, name="odd", dtype="float32",
                                     shape=values.shape)]), path, revision="v3")
    done = run("info", "--stats", "--json", path)
    (s,) = json.loads(done.stdout)["stats"]
    n = values.size // 8
    assert (s["nan"], s["inf"], s["zeros"], s["count"]) == (n, 2 * n, 0.25, values.size)
    finite = np.array([0, 0, 1, 2, 3] * n, np.float64)
    assert (s["min"], s["max"], s["name"]) == (0.0, 3.0, "odd")
    assert s["mean"] == pytest.approx(finite.mean()) and s["std"] == pytest.approx(finite.std())
    line = run("info", "--stats", path).stdout.splitlines()[-1].split()
    assert line[-4:] == [str(n), str(2 * n), "25.0%", "odd"]


def test_stats_of_an_entry_past_one_chunk_are_the_whole_array_s() -> None:
    v = (np.random.default_rng(3).standard_normal(5 * CHUNK + 3) * 7 + 100).astype(np.float32)
    s = entry_stats(oc.Tensor(0, v), "float32")
    assert s.mean == pytest.approx(v.astype(float).mean(), rel=1e-12)
    assert s.std == pytest.approx(v.astype(float).std(), rel=1e-9)
    assert (s.min, s.max, s.count) == (v.min(), v.max(), v.size)


def test_info_stats_of_corrupt_data_is_the_checksum_error(tmp_path: Path) -> None:
    good = tmp_path / "good.ckpt"
    oc.save(oc.load(ADAM), good, revision="v3")
    data = bytearray(good.read_bytes())
    data[oc.load(bytes(data), verify_data=False).tensors[0].offset] ^= 1
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(bytes(data))
    code = json.loads(run("validate", "--json", bad).stdout)["error"]["code"]
    for extra in ([], ["--json"]):
        done = run("info", "--stats", *extra, bad)
        assert done.returncode == 1 and code in done.stdout + done.stderr
        assert "zeros" not in done.stdout


def _named(order: list[int], by: float = 0.0) -> oc.Checkpoint:
    """Tensors ``t<k>`` ([k + by, 1]) for k in ``order`` (entry index = position), each with
    an m slot entry ([k, 2])."""
    tensors = [oc.Tensor(i, np.array([k + by, 1], np.float32), name=f"t{k}", dtype="float32")
               for i, k in enumerate(order)]
    m = {i: oc.Buffer(i, np.array([k, 2], np.float32)) for i, k in enumerate(order)}
    return oc.Checkpoint(tensors, oc.Optimizer("adam", {"m": m, "v": {}}))


@pytest.mark.parametrize("loaded", [False, True])
def test_diff_pairs_tensors_listed_in_another_order_and_lists_b_s_own_last(loaded: bool) -> None:
    """Rows in A's order, then B's own: whether B follows A's order (one pass over each) or
    not (looked up), loaded (columns) or built."""
    a, b = _named([0, 1, 2, 3]), _named([3, 9, 2, 1, 0, 8])
    if loaded:
        a, b = (oc.load(oc.to_bytes(c, revision="v3")) for c in (a, b))
    rows = [(e.key, e.slot, e.status) for e in oc.diff(a, b).entries]
    assert rows == [(f"t{k}", s, "equal") for k in range(4) for s in ("weights", "m")] + [
        (f"t{k}", s, "only_b") for k in (9, 8) for s in ("weights", "m")]


def test_diff_of_loaded_files_holds_one_chunk_of_tensors_at_a_time() -> None:
    """The tensors of both files are made, compared and dropped a chunk at a time; pairing
    through a dict of every tensor (the code before) held all 20,000 of each at once."""
    a, b = (oc.load(v3_many_entries(20_000, 1)) for _ in range(2))
    calls, held = [0], []

    def progress(_: int) -> None:
        calls[0] += 1
        if calls[0] % 1000 == 0:
            held.append(len(a.tensors.made()) + len(b.tensors.made()))

    found = oc.diff(a, b, progress=progress)
    assert found.equal and len(found.entries) == 40_000 and calls[0] == 40_000
    assert max(held) < 20_000


def test_diff_rows_read_back_as_they_were_compared_and_as_json_in_pieces() -> None:
    found = oc.diff(_named([0, 1, 2]), _named([1, 2, 5], by=0.5))
    rows = list(found.entries)
    assert [e.status for e in rows] == ["only_a", "only_a", "differs", "equal", "differs",
                                        "equal", "only_b", "only_b"]
    assert rows[2].max_abs == 0.5 and rows[0].nbytes_a == 8 and rows[0].max_abs is None
    assert found.entries[-1] == rows[-1] and found.entries[1:3] == rows[1:3]
    assert found.entries == rows and found.entries != rows[:-1]
    assert repr(found.entries) == (
        "EntryDiffs(8 rows: {'only_a': 2, 'differs': 2, 'equal': 2, 'only_b': 2})")
    with pytest.raises(IndexError):
        found.entries[len(rows)]
    text = "".join(found.json_pieces(hint="h"))
    assert json.loads(text) == {**found.to_dict(), "hint": "h"}
    assert text == json.dumps({**found.to_dict(), "hint": "h"})
