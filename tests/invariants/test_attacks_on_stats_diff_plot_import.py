"""The newest commands (``info --stats``, ``diff``'s measures, ``plot``, ``import
--optimizer``, ``info FILE...``, ``edit --replace``, ``dump --layout``) under hostile input:
values at the edge of float64, dtypes and shapes that disagree, damaged data blocks, special
files, lying headers, truncations. Each gives a figure that is right (finite where the truth
is), or one error line of the project's own (``onert-ckpt: error: <code>: ...``) with the
promised exit status: never a NaN for a finite truth, a NumPy warning, an internal_error, a
traceback, or time and memory that grow with the tensor count.

The command line runs as ``python -m onert_checkpoint`` in a subprocess, as a user runs it,
on files written by the library and on the real onert exports of tests/data/real-onert.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
VECTORS = Path(__file__).parents[2] / "spec" / "vectors"
ERROR_LINE = re.compile(r"^onert-ckpt: error: [a-z_]+: .+$")


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=120, check=False)


def refused(done: subprocess.CompletedProcess, status: int, code: str | None = None) -> str:
    """The one error line of a refusal with exit ``status`` (``code``: its code)."""
    assert done.returncode == status, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and ERROR_LINE.match(lines[0]), done.stderr
    assert "internal_error" not in lines[0]
    if code is not None:
        assert lines[0].startswith(f"onert-ckpt: error: {code}: "), lines[0]
    return lines[0]


def quiet(done: subprocess.CompletedProcess, status: int = 0) -> subprocess.CompletedProcess:
    """A run that ends with ``status`` and prints nothing on stderr (no NumPy warning)."""
    assert done.returncode == status and done.stderr == "", (done.returncode, done.stderr)
    return done


def saved(path: Path, *tensors: oc.Tensor) -> Path:
    oc.save(oc.Checkpoint(list(tensors)), path, revision="v3")
    return path


def f64(index: int, values: list[float], name: str = "x") -> oc.Tensor:
    return oc.Tensor(index, np.array(values, np.float64), dtype="float64", name=name)


# info --stats -------------------------------------------------------------------------------

#: float64 values whose squares (or sums) overflow: the figures must still be the true ones
HUGE = {
    "one-value-past-2^664": [1e200] * 4,
    "spread-to-the-largest": [1e300, -1e300, 1.7e308],
    "opposite-extremes": [1.7e308, -1.7e308, 1.0],
}


@pytest.mark.parametrize("values", HUGE.values(), ids=HUGE.keys())
def test_stats_of_float64_values_near_the_limit_are_their_true_mean_and_std(
        tmp_path: Path, values: list[float]) -> None:
    ckpt = saved(tmp_path / "huge.ckpt", f64(0, values))
    stats = json.loads(quiet(run("info", "--stats", "--json", ckpt)).stdout)["stats"][0]
    unit = 2.0 ** 1023  # the truth, computed where nothing overflows
    scaled = np.array(values) / unit
    assert stats["mean"] == pytest.approx(scaled.mean() * unit, rel=1e-9)
    assert stats["std"] == pytest.approx(scaled.std() * unit, rel=1e-9)
    text = quiet(run("info", "--stats", ckpt)).stdout
    assert "nan" not in text.split("\n\nentry  slot")[-1].split("\n", 2)[1].split()[7:8]


ODD = {
    "nan-only": [np.nan] * 5,
    "inf-only": [np.inf, -np.inf],
    "empty": [],
}


@pytest.mark.parametrize("values", ODD.values(), ids=ODD.keys())
def test_stats_of_entries_without_finite_values_count_them_and_average_none(
        tmp_path: Path, values: list[float]) -> None:
    ckpt = saved(tmp_path / "odd.ckpt",
                 oc.Tensor(0, np.array(values, np.float32), dtype="float32", name="x"))
    stats = json.loads(quiet(run("info", "--stats", "--json", ckpt)).stdout)["stats"][0]
    assert (stats["min"], stats["max"], stats["mean"], stats["std"]) == (None,) * 4
    arr = np.array(values)
    assert (stats["nan"], stats["inf"], stats["count"]) == (
        int(np.isnan(arr).sum()), int(np.isinf(arr).sum()), arr.size)


@pytest.mark.parametrize("dtype", ["float16", "int8", "bool", "int64", "uint8"])
def test_stats_of_each_dtype_are_numpys_figures_of_its_values(
        tmp_path: Path, dtype: str) -> None:
    values = (np.arange(-3, 9) % 7).astype(dtype)
    ckpt = saved(tmp_path / f"{dtype}.ckpt", oc.Tensor(0, values, dtype=dtype, name="x"))
    stats = json.loads(quiet(run("info", "--stats", "--json", ckpt)).stdout)["stats"][0]
    wide = values.astype(np.float64)
    assert (stats["dtype"], stats["min"], stats["max"]) == (dtype, wide.min(), wide.max())
    assert stats["mean"] == pytest.approx(wide.mean()) and stats["std"] == pytest.approx(
        wide.std())


def test_stats_of_several_files_report_the_truncated_one_and_go_on(tmp_path: Path) -> None:
    good = DATA / "fc2-adam-step8.ckpt"
    cut = tmp_path / "cut.ckpt"
    cut.write_bytes(good.read_bytes()[:100])
    done = run("info", "--stats", "--json", good, cut, good)
    assert done.returncode == 1
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["file"] for o in objects] == [str(good), str(cut), str(good)]
    assert "stats" in objects[2] and objects[1]["error"]["code"] == "truncated_file"


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_info_json_of_several_files_gives_an_object_for_an_unreadable_one(
        tmp_path: Path, kind: str) -> None:
    odd = tmp_path / "odd.ckpt"
    os.mkfifo(odd) if kind == "fifo" else odd.mkdir()
    good = DATA / "fc2-sgd-step8.ckpt"
    done = run("info", "--json", good, odd, good)
    assert done.returncode == 2 and done.stderr.startswith("onert-ckpt: error: io_error: ")
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["file"] for o in objects] == [str(good), str(odd), str(good)]
    assert objects[1]["error"]["code"] == "io_error" and "revision" in objects[2]


# diff ---------------------------------------------------------------------------------------


def test_diff_of_float64_values_near_the_limit_gives_the_true_rel_l2(tmp_path: Path) -> None:
    a = saved(tmp_path / "a.ckpt", f64(0, [1.7e308, -1.7e308]))
    b = saved(tmp_path / "b.ckpt", f64(0, [1.6e308, -1.6e308]))
    done = run("diff", "--json", a, b)
    assert done.returncode == 1 and done.stderr == ""
    entry = json.loads(done.stdout)["entries"][0]
    assert entry["rel_l2"] == pytest.approx(0.1 / 1.7, rel=1e-12)
    assert entry["mean_abs"] == pytest.approx(1e307, rel=1e-12)


@pytest.mark.parametrize("fact", ["dtype", "shape"])
def test_diff_of_the_same_bytes_as_another_dtype_or_shape_says_so(
        tmp_path: Path, fact: str) -> None:
    if fact == "dtype":
        ta = oc.Tensor(0, np.array([1, 2], np.float32), dtype="float32", name="x")
        tb = oc.Tensor(0, np.array([1, 2], np.float32).view(np.int32), dtype="int32", name="x")
    else:
        values = np.arange(6, dtype=np.float32)
        ta, tb = (oc.Tensor(0, values.reshape(s), dtype="float32", name="x", shape=s)
                  for s in ((2, 3), (3, 2)))
    a, b = saved(tmp_path / "a.ckpt", ta), saved(tmp_path / "b.ckpt", tb)
    done = run("diff", "--json", a, b)
    assert done.returncode == 1, done.stderr
    entry = json.loads(done.stdout)["entries"][0]
    assert entry["status"] == fact and entry["rel_l2"] is None
    assert "different" in run("diff", a, b).stdout


def test_diff_names_the_file_whose_data_block_is_damaged(tmp_path: Path) -> None:
    good = tmp_path / "good.ckpt"
    done = run("convert", DATA / "fc3-adam-step12.ckpt", good, "--to", "v3",
               "--model", DATA / "fc3.circle")
    assert done.returncode == 0, done.stderr
    raw = bytearray(good.read_bytes())
    raw[-100] ^= 0xFF  # a weight byte: only the data block's CRC-32C sees it
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(bytes(raw))
    line = refused(run("diff", good, bad), 1, "block_checksum")
    assert f"B ({bad})" in line
    line = refused(run("plot", good, good, bad, tmp_path / "t.png"), 1, "block_checksum")
    assert f"file 3 ({bad})" in line


def test_diff_hint_of_index_pairing_is_not_given_for_entries_paired_by_name(
        tmp_path: Path) -> None:
    a = saved(tmp_path / "a.ckpt", oc.Tensor(0, np.zeros(2, np.float32), dtype="float32",
                                             name="x"))
    b = saved(tmp_path / "b.ckpt", oc.Tensor(0, np.zeros(3, np.float32), dtype="float32",
                                             name="x"))
    done = run("diff", a, b)
    assert done.returncode == 1 and "paired by name" in done.stdout
    assert "hint:" not in done.stdout


def test_diff_ignore_state_of_other_optimizers_still_compares_the_slots() -> None:
    done = run("diff", "--ignore-state", "--json", DATA / "fc2-adam-step8.ckpt",
               DATA / "fc2-sgd-step8.ckpt")
    out = json.loads(done.stdout)
    assert done.returncode == 1 and out["ignore_state"] is True
    assert out["state"]["optimizer"] == ["adam", "sgd"]
    assert {e["status"] for e in out["entries"] if e["slot"] != "weights"} == {"only_a"}


# plot ---------------------------------------------------------------------------------------


def test_plot_histogram_of_values_spanning_float64_is_drawn_to_scale(tmp_path: Path) -> None:
    ckpt = saved(tmp_path / "wide.ckpt", f64(0, [1e300, -1e300, 1.7e308], "d"),
                 f64(1, [1e200] * 4, "c"))
    out = tmp_path / "h.svg"
    assert quiet(run("plot", ckpt, out)).stdout == (
        f"wrote {out}: histograms of 2 tensors (weights), 2 panels of 50 bins\n")
    svg = out.read_text()
    assert "d weights (x 2^1023)" in svg and "c weights (x 2^664)" in svg


def _many(path: Path, n: int, by: float) -> Path:
    return saved(path, *(oc.Tensor(i, np.array([1, 2 + by * (i % 97)], np.float32) + i,
                                   dtype="float32", name=f"t{i}") for i in range(n)))


def test_plot_change_of_10000_tensors_draws_the_largest_max_bars(tmp_path: Path) -> None:
    from onert_checkpoint.tools.plot import MAX_BARS

    a, b = _many(tmp_path / "a.ckpt", 10_000, 0), _many(tmp_path / "b.ckpt", 10_000, 0.5)
    out = tmp_path / "c.svg"
    done = quiet(run("plot", a, b, out))
    assert done.stdout == (f"wrote {out}: change a.ckpt -> b.ckpt: {MAX_BARS} bars (the largest "
                           "of 10000 tensors), relative L2 change of weights\n")
    svg = out.read_text()
    assert svg.count('id="bar-') == MAX_BARS and f"{MAX_BARS} largest of 10000" in svg
    assert 'id="bar-t96"' in svg and 'id="bar-t97"' not in svg  # i % 97 == 96 moved most


def test_plot_trajectory_of_many_tensors_draws_at_most_max_lines(tmp_path: Path) -> None:
    from onert_checkpoint.tools.plot import MAX_LINES

    files = [_many(tmp_path / f"{k}.ckpt", 500, by) for k, by in enumerate((0, 0.25, 0.5))]
    out = tmp_path / "t.svg"
    done = quiet(run("plot", *files, out))
    assert done.stdout == (f"wrote {out}: trajectory over 3 checkpoints: {MAX_LINES} lines (those "
                           "that end farthest of 500 tensors), relative L2 change of weights "
                           "from the first\n")
    assert out.read_text().count('id="line-') == MAX_LINES


@pytest.mark.parametrize("files", [1, 2])
def test_plot_of_a_checkpoint_without_tensors_is_a_usage_error(
        tmp_path: Path, files: int) -> None:
    empty = saved(tmp_path / "none.ckpt")
    refused(run("plot", *[empty] * files, tmp_path / "p.png"), 2, "usage_error")
    assert not (tmp_path / "p.png").exists()


# import -------------------------------------------------------------------------------------


def _safetensors(path: Path, header: dict, data: bytes, length: int | None = None) -> Path:
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return path


F32 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
LYING_SAFETENSORS = {
    "offsets-past-the-end": ({"0": {**F32, "shape": [4], "data_offsets": [0, 16]}}, 8, None),
    "overlapping": ({"0": F32, "1": {**F32, "data_offsets": [4, 12]}}, 12, None),
    "huge-header-size": ({"0": F32}, 8, 1 << 62),
    "header-past-the-end": ({"0": F32}, 8, 5000),
    "shape-against-offsets": ({"0": {**F32, "shape": [3]}}, 8, None),
    "negative-shape": ({"0": {**F32, "shape": [-2]}}, 8, None),
}


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("case", LYING_SAFETENSORS.values(), ids=LYING_SAFETENSORS.keys())
def test_import_of_a_safetensors_file_whose_header_lies_is_refused(
        tmp_path: Path, case: tuple, optimizer: str) -> None:
    header, size, length = case
    src = _safetensors(tmp_path / "in.safetensors", header, b"\0" * size, length)
    out = tmp_path / "out.ckpt"
    refused(run("import", src, out, "--optimizer", optimizer), 1, "not_representable")
    assert not out.exists()


def _npz(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, body in members.items():
            z.writestr(name, body)
    return path


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


BAD_NPZ = {
    "object-member": {"0.npy": _npy(np.array([{"a": 1}], dtype=object))},
    "truncated-member": {"0.npy": _npy(np.zeros(2, np.float32))[:60]},
    "text-member": {"0.npy": b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 100},
}


@pytest.mark.parametrize("members", BAD_NPZ.values(), ids=BAD_NPZ.keys())
def test_import_of_an_npz_member_that_is_not_an_array_is_refused(
        tmp_path: Path, members: dict[str, bytes]) -> None:
    out = tmp_path / "out.ckpt"
    refused(run("import", _npz(tmp_path / "in.npz", members), out, "--optimizer", "adam"), 1,
            "not_representable")
    assert not out.exists()


def test_import_optimizer_keeps_state_already_there_or_refuses_to_drop_it(
        tmp_path: Path) -> None:
    src = tmp_path / "fc2.safetensors"
    assert run("export", DATA / "fc2-adam-step8.ckpt", src).returncode == 0
    out = tmp_path / "back.ckpt"
    quiet(run("import", src, out, "--optimizer", "adam"))
    assert oc.to_bytes(oc.load(out)) == oc.to_bytes(oc.load(DATA / "fc2-adam-step8.ckpt"))
    line = refused(run("import", src, tmp_path / "sgd.ckpt", "--optimizer", "sgd"), 1,
                   "not_representable")
    assert "adam state" in line and not (tmp_path / "sgd.ckpt").exists()


@pytest.mark.parametrize("dtype", ["float16", "int64", "bool", ">f4"])
def test_import_of_mixed_dtypes_keeps_each_arrays_values(tmp_path: Path, dtype: str) -> None:
    arrays = {"0": np.array([1.5, -2], np.float32), "1": np.array([1, 0, 3]).astype(dtype)}
    src = _npz(tmp_path / "in.npz", {f"{k}.npy": _npy(v) for k, v in arrays.items()})
    out = tmp_path / "out.ckpt"
    quiet(run("import", src, out, "--optimizer", "sgd"))
    got = oc.load(out)
    for k, v in arrays.items():
        assert np.array_equal(np.asarray(got[int(k)].data), v)


# edit --replace, dump --layout --------------------------------------------------------------


def _npy_header(text: str, declared: int | None = None) -> bytes:
    text += " " * (-(len(text) + 11) % 64) + "\n"
    size = len(text) if declared is None else declared
    return b"\x93NUMPY\x01\x00" + size.to_bytes(2, "little") + text.encode()


F4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
BAD_NPY = {
    "truncated-header": _npy(np.zeros(2, np.float32))[:20],
    "header-cut-mid-literal": _npy_header(F4, 40),
    "object-dtype": _npy(np.array([1, None], dtype=object)),
    "negative-shape": _npy_header(F4.replace("(2,)", "(-2,)")) + b"\0" * 8,
    "header-not-a-literal": _npy_header(F4.replace("(2,)", "(2**62,)")),
}


@pytest.mark.parametrize("body", BAD_NPY.values(), ids=BAD_NPY.keys())
def test_edit_replace_with_a_malformed_npy_is_a_usage_error(tmp_path: Path, body: bytes) -> None:
    ckpt = saved(tmp_path / "in.ckpt", oc.Tensor(0, np.zeros(2, np.float32), dtype="float32",
                                                 name="x", shape=(2,)))
    (tmp_path / "new.npy").write_bytes(body)
    out = tmp_path / "out.ckpt"
    line = refused(run("edit", ckpt, out, "--replace", f"x={tmp_path / 'new.npy'}"), 2,
                   "usage_error")
    assert "not a .npy array" in line and not out.exists()


def test_edit_replace_with_a_fortran_order_npy_keeps_the_values(tmp_path: Path) -> None:
    values = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    ckpt = saved(tmp_path / "in.ckpt", oc.Tensor(0, np.zeros((2, 3), np.float32),
                                                 dtype="float32", name="x", shape=(2, 3)))
    np.save(tmp_path / "new.npy", values)
    out = tmp_path / "out.ckpt"
    quiet(run("edit", ckpt, out, "--replace", f"x={tmp_path / 'new.npy'}"))
    assert np.array_equal(np.asarray(oc.load(out)["x"].data), values)


def test_dump_layout_of_truncations_of_a_v3_vector_is_a_valid_dump_or_one_error(
        tmp_path: Path) -> None:
    raw = (VECTORS / "v3-range-index.ckpt").read_bytes()
    cuts = sorted({0, 1, 2, 3, 8, 63, 64, 65, 95, 96, 255, 256, 257, *range(300, len(raw), 1500),
                   len(raw) - 1})
    for cut in cuts:
        path = tmp_path / f"cut{cut}.ckpt"
        path.write_bytes(raw[:cut])
        done = run("dump", "--layout", "--json", path)
        out = json.loads(done.stdout)  # a dump of what is there, or the refusal, as JSON
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
        if done.returncode == 1:  # the refusal names its field and byte offset
            error = out["error"]
            assert error["field"] and isinstance(error["offset"], int), (cut, error)
            assert error["code"] != "internal_error"


def _peak_kib(*args: object) -> int:
    """Peak resident memory (KiB) of one command run in a child of a fresh interpreter."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=False, "
            "stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "onert_checkpoint",
                           *map(str, args)], capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.parametrize("command", [["dump", "--layout"], ["info", "--stats"]],
                         ids=["dump-layout", "info-stats"])
def test_text_tables_of_200000_entries_hold_no_row_per_entry(
        tmp_path: Path, command: list[str]) -> None:
    many = saved(tmp_path / "many.ckpt", *(oc.Tensor(i, np.zeros(0, np.float32),
                                                     dtype="float32") for i in range(200_000)))
    few = saved(tmp_path / "few.ckpt", *(oc.Tensor(i, np.zeros(0, np.float32),
                                                   dtype="float32") for i in range(4)))
    grown = _peak_kib(*command, many) - _peak_kib(*command, few)
    # the bound of every reading command: 64 MiB + 8x the file (1.8 MB here) above 4 tensors
    assert grown * 1024 <= 64 * 2**20 + 8 * many.stat().st_size, grown


@pytest.mark.parametrize("kind", ["hist", "change", "trajectory"])
def test_plot_of_names_with_control_bytes_and_dollars_is_well_formed_svg(
        tmp_path: Path, kind: str) -> None:
    from xml.dom import minidom

    names = ["esc\x1b[31m<b>\"&", "$\\frac{$", "a$b$c"]
    files = [saved(tmp_path / f"{k}$x$.ckpt", *(
        oc.Tensor(i, np.array([1, 2 + k], np.float32), dtype="float32", name=n)
        for i, n in enumerate(names))) for k in range({"hist": 1, "change": 2}.get(kind, 3))]
    out = tmp_path / "p.svg"
    quiet(run("plot", "--kind", kind, *files, out))
    svg = minidom.parse(str(out))  # XML 1.0 has no control byte: a raw ESC is not well-formed
    ids = {g.getAttribute("id") for g in svg.getElementsByTagName("g")}
    assert any(i.endswith("esc\\x1b[31m<b>\"&" + ("-weights" if kind == "hist" else ""))
               for i in ids), sorted(ids)
