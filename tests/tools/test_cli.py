"""The command line, run as a real subprocess on the real onert exports.

Every command: its output, its exit status, its ``--json`` parsed, and bad input answered by
exactly one line on stderr and never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real-onert"
ADAM = REAL / "fc2-adam-step8.ckpt"
SGD = REAL / "fc2-sgd-step8.ckpt"
MODEL = REAL / "fc2.circle"
HOSTILE = "\x1b[31mevil"


def run(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", COLUMNS="100")
    return subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", *map(str, args)],
        capture_output=True, text=True, cwd=cwd or ROOT, env=env, timeout=120,
    )


def one_error_line(result: subprocess.CompletedProcess[str], code: str) -> str:
    """The run failed with exactly one clean stderr line that names ``code``."""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("onert-ckpt: error: ")
    assert code in lines[0]
    return lines[0]


@pytest.fixture
def bad_magic(tmp_path: Path) -> Path:
    path = tmp_path / "bad.ckpt"
    path.write_bytes(b"\x00\x00" + ADAM.read_bytes()[2:])
    return path


@pytest.fixture
def footerless(tmp_path: Path) -> Path:
    """The SGD export as an earlier onert exporter wrote it: ofs_other = 0, no footer."""
    raw = bytearray(SGD.read_bytes()[:-8])
    struct.pack_into("<I", raw, 12, 0)
    path = tmp_path / "old.ckpt"
    path.write_bytes(bytes(raw))
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A schema-2 file whose first tensor is named with a terminal escape sequence."""
    ckpt = oc.convert(oc.load(ADAM), "v2")
    ckpt.tensors[0].name = HOSTILE
    path = tmp_path / "hostile.ckpt"
    oc.save(ckpt, path)
    return path


# The tool as a whole -------------------------------------------------------------------------


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"onert-ckpt {oc.__version__}"


@pytest.mark.parametrize(
    "command",
    ["info", "validate", "dump", "diff", "convert", "export", "import", "new", "conformance",
     "completion"],
)
def test_every_command_has_help_with_examples(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout
    assert f"onert-ckpt {command}" in result.stdout.split("examples:")[1]


def test_entry_point_is_installed() -> None:
    exe = shutil.which("onert-ckpt", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the onert-ckpt script is not on this interpreter's bin folder")
    result = subprocess.run([exe, "info", str(SGD)], capture_output=True, text=True)
    assert result.returncode == 0 and "optimizer  sgd" in result.stdout


def test_usage_error_is_one_line_exit_2() -> None:
    result = run("dump")
    assert result.returncode == 2
    one_error_line(result, "usage_error")


def test_no_command_prints_help_exit_2() -> None:
    result = run()
    assert result.returncode == 2
    assert "COMMAND" in result.stderr


def test_missing_file_is_io_error_exit_2(tmp_path: Path) -> None:
    result = run("info", tmp_path / "absent.ckpt")
    assert result.returncode == 2
    one_error_line(result, "io_error")


def test_debug_shows_the_traceback(bad_magic: Path) -> None:
    result = run("--debug", "info", bad_magic)
    assert result.returncode == 1
    assert "Traceback" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("onert-ckpt: error: bad_magic")
    after = run("info", "--debug", bad_magic)
    assert "Traceback" in after.stderr


def test_completion_bash() -> None:
    pytest.importorskip("shtab", reason="shtab (shell completion) is not installed")
    result = run("completion", "bash")
    assert result.returncode == 0
    assert "complete" in result.stdout and "onert-ckpt" in result.stdout
    for command in ("info", "validate", "dump", "diff", "convert", "export", "import", "new"):
        assert command in result.stdout


# info ---------------------------------------------------------------------------------------


def test_info_table_and_summary() -> None:
    result = run("info", ADAM)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "revision   v1" in out
    assert "file size  880 bytes (880 B)" in out
    assert "state      step=8, epoch=0" in out
    assert "    0      36    128  5a7208f6   320+128   604+128" in out
    assert out.rstrip().endswith("4 tensors, 268 B of weights, 536 B of optimizer state (m, v)")


def test_info_with_model_names_dtypes_shapes() -> None:
    result = run("info", "--model", MODEL, ADAM)
    assert result.returncode == 0, result.stderr
    rows = [line.split("  ") for line in result.stdout.splitlines() if line.startswith("    ")]
    cells = [[c.strip() for c in r if c.strip()][-3:] for r in rows]
    assert cells == [
        ["float32", "[8, 4]", "w0"],
        ["float32", "[8]", "b0"],
        ["float32", "[3, 8]", "w1"],
        ["float32", "[3]", "b1"],
    ]


def test_info_json() -> None:
    result = run("info", "--json", "--model", MODEL, SGD)
    assert result.returncode == 0
    desc = json.loads(result.stdout)
    assert desc.pop("model") == {"path": str(MODEL), "found": "--model"}  # which model
    assert desc == oc.describe(oc.bind(oc.load(SGD), MODEL))
    assert desc["tensors"][0]["name"] == "w0" and desc["tensors"][0]["shape"] == [8, 4]


def test_info_invalid_file(bad_magic: Path) -> None:
    result = run("info", bad_magic)
    assert result.returncode == 1
    assert result.stdout == ""
    line = one_error_line(result, "bad_magic")
    assert line.startswith("onert-ckpt: error: bad_magic: magic is ")
    assert line.endswith(" [at magic (offset 0)]")


def test_info_json_invalid_file(bad_magic: Path) -> None:
    result = run("info", "--json", bad_magic)
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "bad_magic"


def test_info_model_that_does_not_fit(tmp_path: Path) -> None:
    not_a_model = tmp_path / "x.circle"
    not_a_model.write_bytes(b"garbage!" * 4)
    result = run("info", "--model", not_a_model, ADAM)
    assert result.returncode == 1
    one_error_line(result, "model_mismatch")


# validate -----------------------------------------------------------------------------------


def test_validate_real_files() -> None:
    result = run("validate", ADAM, SGD)
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        f"{ADAM}: ok (v1, 4 tensors)",
        f"{SGD}: ok (v1 onert, 4 tensors)",
    ]


def test_validate_any_invalid_exits_1(bad_magic: Path) -> None:
    result = run("validate", ADAM, bad_magic)
    assert result.returncode == 1
    assert f"{bad_magic}: invalid: bad_magic at magic (offset 0)" in result.stdout


def test_validate_unreadable_exits_2(tmp_path: Path) -> None:
    result = run("validate", ADAM, tmp_path / "absent.ckpt")
    assert result.returncode == 2
    assert "cannot read" in result.stdout


def test_validate_json(bad_magic: Path) -> None:
    result = run("validate", "--json", ADAM, bad_magic)
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["valid"] for o in objs] == [True, False]
    assert objs[1]["error"]["code"] == "bad_magic"


def test_validate_strict_fails_on_footerless(footerless: Path) -> None:
    lenient = run("validate", footerless)
    assert lenient.returncode == 0
    assert "quirks: footerless" in lenient.stdout
    strict = run("validate", "--strict", footerless)
    assert strict.returncode == 1
    assert "quirk: footerless" in strict.stdout


def test_validate_strict_accepts_onert_epoch_zero() -> None:
    assert run("validate", "--strict", ADAM, SGD).returncode == 0


def test_validate_with_model() -> None:
    assert run("validate", "--model", MODEL, ADAM, SGD).returncode == 0


# dump ---------------------------------------------------------------------------------------


def test_dump_tensor_as_numpy_prints_it() -> None:
    result = run("dump", ADAM, "--tensor", "3", "--dtype", "float32")
    assert result.returncode == 0
    expected = np.frombuffer(oc.load(ADAM)[3].raw, "<f4")
    title, body = result.stdout.split("\n", 1)
    assert title == "entry 3 weights float32 [3]"
    assert body.strip() == str(expected)


def test_dump_without_a_known_dtype_prints_raw_bytes_as_export_writes_them() -> None:
    # Typed when the type is known (model, schema-2 record, --dtype), clearly raw otherwise:
    # the same rule as `export` (tests/tools/test_tools_hardening.py checks the two agree).
    result = run("dump", ADAM, "--tensor", "3")
    assert result.returncode == 0
    title, body = result.stdout.split("\n", 1)
    assert title == (
        "entry 3 weights raw bytes (uint8; no dtype known: give --model or --dtype) [12]"
    )
    assert body.strip() == str(oc.load(ADAM)[3].raw)
    arrays = oc.to_numpy_dict(oc.load(ADAM))
    assert arrays["3"].dtype == np.uint8 and arrays["3"].shape == (12,)


def test_dump_by_name_with_model_and_slot() -> None:
    result = run("dump", "--model", MODEL, ADAM, "--tensor", "w1", "--slot", "v")
    assert result.returncode == 0
    assert result.stdout.startswith("entry 2 w1 v float32 [3, 8]\n[[")
    ckpt = oc.load(ADAM)
    expected = np.frombuffer(ckpt.slot("v", 2).raw, "<f4").reshape(3, 8)
    assert result.stdout.split("\n", 1)[1].strip() == str(expected)


def test_dump_limit_and_dtype() -> None:
    result = run("dump", SGD, "--tensor", "0", "--limit", "3", "--dtype", "uint8")
    assert result.returncode == 0
    assert result.stdout.startswith("entry 0 weights uint8 [128] (first 3 of 128 values)")
    raw = oc.load(SGD)[0].raw[:3]
    assert result.stdout.split("\n")[1] == str(raw)


def test_dump_all_entries() -> None:
    result = run("dump", SGD)
    assert result.returncode == 0
    assert [line.split()[1] for line in result.stdout.splitlines() if line.startswith("entry")] \
        == ["0", "1", "2", "3"]


def test_dump_unknown_tensor() -> None:
    result = run("dump", ADAM, "--tensor", "nope")
    assert result.returncode == 2
    one_error_line(result, "no_such_tensor")


def test_dump_slot_of_sgd() -> None:
    result = run("dump", SGD, "--slot", "m")
    assert result.returncode == 2
    one_error_line(result, "no_such_slot")


def test_dump_bad_dtype() -> None:
    result = run("dump", SGD, "--dtype", "float33")
    assert result.returncode == 2
    one_error_line(result, "bad_dtype")


def test_dump_layout() -> None:
    result = run("dump", "--layout", ADAM)
    assert result.returncode == 0
    rows = [line.split(None, 4) for line in result.stdout.splitlines()[2:]]
    first = {r[2]: (int(r[0]), int(r[1]), r[3] if len(r) > 3 else "") for r in rows}
    assert first["magic"] == (0, 2, "429")
    assert first["ofs_opt1"] == (4, 4, "304")
    assert first["ofs_opt2"] == (8, 4, "588")
    assert first["ofs_other"] == (12, 4, "872")
    assert first["num_entries"] == (16, 4, "4")
    assert rows[-1][:4] == ["876", "4", "footer.epoch", "0"]
    # Offsets never go backwards: the map is in file order.
    offsets = [int(r[0]) for r in rows]
    assert offsets == sorted(offsets)


def test_dump_layout_json_covers_the_file() -> None:
    result = run("dump", "--layout", "--json", ADAM)
    assert result.returncode == 0
    lmap = json.loads(result.stdout)
    assert lmap["revision"] == "v1" and lmap["error"] is None
    leaves = [f for f in lmap["fields"] if not f["name"].endswith("table")]
    covered = sorted((f["offset"], f["offset"] + f["size"]) for f in leaves)
    pos = 0
    for start, end in covered:
        assert start == pos, (start, pos)
        pos = end
    assert pos == lmap["file_size"] == 880


def test_dump_layout_of_invalid_file_maps_the_header(tmp_path: Path) -> None:
    raw = bytearray(ADAM.read_bytes())
    struct.pack_into("<I", raw, 12, 10_000)  # footer past the end
    path = tmp_path / "broken.ckpt"
    path.write_bytes(bytes(raw))
    result = run("dump", "--layout", path)
    assert result.returncode == 1
    assert "ofs_other" in result.stdout and "10000" in result.stdout
    assert "invalid: truncated_file at ofs_other (offset 12)" in result.stdout


def test_dump_layout_v2(tmp_path: Path) -> None:
    path = tmp_path / "v2.ckpt"
    oc.save(oc.convert(oc.load(ADAM), "v2"), path)
    result = run("dump", "--layout", "--json", path)
    assert result.returncode == 0
    lmap = json.loads(result.stdout)
    names = [f["name"] for f in lmap["fields"]]
    assert lmap["revision"] == "v2"
    assert {"header_crc", "num_sections", "tensors[0] data", "v[3] data"} <= set(names)


# diff ---------------------------------------------------------------------------------------


def test_diff_same_file() -> None:
    result = run("diff", ADAM, ADAM)
    assert result.returncode == 0
    assert result.stdout.rstrip().endswith("equal (atol=0, rtol=0)")


def test_diff_adam_and_sgd() -> None:
    result = run("diff", "--json", ADAM, SGD)
    assert result.returncode == 1
    d = json.loads(result.stdout)
    assert d["equal"] is False
    assert d["state"] == {"optimizer": ["adam", "sgd"]}
    statuses = {(e["key"], e["slot"]): e["status"] for e in d["entries"]}
    assert statuses[("0", "m")] == "only_a"
    assert statuses[("0", "weights")] == "differs"


def test_diff_tolerance(tmp_path: Path) -> None:
    ckpt = oc.load(ADAM)
    values = np.frombuffer(ckpt[0].raw, "<f4").copy()
    values[5] += 1e-6
    ckpt.tensors[0].data = values.view(np.uint8)
    path = tmp_path / "nudged.ckpt"
    oc.save(ckpt, path)
    strict = run("diff", ADAM, path)
    assert strict.returncode == 1
    assert "0  weights  differs" in strict.stdout
    assert run("diff", "--atol", "1e-5", ADAM, path).returncode == 0


def test_diff_state(tmp_path: Path) -> None:
    ckpt = oc.load(SGD)
    ckpt.state["step"] = 9
    path = tmp_path / "later.ckpt"
    oc.save(ckpt, path)
    result = run("diff", SGD, path)
    assert result.returncode == 1
    assert "state step: 8 != 9" in result.stdout


def test_diff_across_revisions_and_dialects(tmp_path: Path) -> None:
    v2 = tmp_path / "v2.ckpt"
    oc.save(oc.convert(oc.load(ADAM), "v2"), v2)
    result = run("diff", ADAM, v2)
    assert result.returncode == 0, result.stdout
    assert "note: revision v1 != v2" in result.stdout
    micro = tmp_path / "micro.ckpt"
    oc.save(oc.new_checkpoint(oc.CircleModel.load(MODEL), dialect="onert-micro"),
            micro)
    onert = tmp_path / "onert.ckpt"
    oc.save(oc.new_checkpoint(oc.CircleModel.load(MODEL)), onert)
    named = run("diff", "--model", MODEL, onert, micro)
    assert named.returncode == 0, named.stdout
    assert "entries paired by name" in named.stdout


# convert ------------------------------------------------------------------------------------


def test_convert_to_v2_and_back_is_identical(tmp_path: Path) -> None:
    for src in (ADAM, SGD):
        v2, back = tmp_path / "v2.ckpt", tmp_path / "back.ckpt"
        up = run("convert", src, v2, "--to", "v2")
        assert up.returncode == 0, up.stderr
        assert up.stdout.startswith(f"wrote {v2}: v2")
        down = run("convert", v2, back, "--to", "v1")
        assert down.returncode == 0, down.stderr
        assert back.read_bytes() == src.read_bytes()


def test_convert_lossy_needs_permission(tmp_path: Path) -> None:
    out = tmp_path / "w.wof"
    refused = run("convert", ADAM, out, "--to", "wof")
    assert refused.returncode == 1
    assert "--allow-lossy" in one_error_line(refused, "not_representable")
    assert not out.exists()
    allowed = run("convert", ADAM, out, "--to", "wof", "--allow-lossy")
    assert allowed.returncode == 0
    assert oc.load(out).revision == "wof"


def test_convert_bad_target() -> None:
    result = run("convert", ADAM, "x.ckpt", "--to", "v9")
    assert result.returncode == 2
    one_error_line(result, "usage_error")


# export / import ----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
@pytest.mark.parametrize("src", [ADAM, SGD], ids=["adam", "sgd"])
def test_export_import_round_trip_is_lossless(tmp_path: Path, src: Path, suffix: str) -> None:
    exported, back = tmp_path / f"x{suffix}", tmp_path / "back.ckpt"
    result = run("export", src, exported)
    assert result.returncode == 0, result.stderr
    arrays = 12 if src == ADAM else 4
    assert result.stdout.strip() == f"wrote {exported}: {arrays} arrays"
    result = run("import", exported, back)
    assert result.returncode == 0, result.stderr
    assert back.read_bytes() == src.read_bytes()


def test_export_with_model_names_and_metadata(tmp_path: Path) -> None:
    safetensors = pytest.importorskip("safetensors")
    out = tmp_path / "fc2.safetensors"
    assert run("export", "--model", MODEL, ADAM, out).returncode == 0
    with safetensors.safe_open(str(out), framework="np") as f:
        keys = set(f.keys())
        meta = f.metadata()
        w0 = f.get_tensor("w0")
    assert keys == {f"{n}{s}" for n in ("w0", "b0", "w1", "b1") for s in ("", ".m", ".v")}
    assert w0.shape == (8, 4) and w0.dtype == np.float32
    assert meta["optimizer"] == "adam" and json.loads(meta["state"]) == {"step": 8, "epoch": 0}
    assert meta["revision"] == "v1" and meta["num_entries"] == "4"
    back = tmp_path / "back.ckpt"
    assert run("import", out, back).returncode == 0
    assert back.read_bytes() == ADAM.read_bytes()


def test_import_foreign_file_named_after_the_model(tmp_path: Path) -> None:
    """A safetensors file someone else wrote: tensor names, no metadata of ours."""
    from safetensors.numpy import save_file

    ckpt = oc.load(ADAM)
    oc.bind(ckpt, MODEL)
    save_file({t.name: np.array(t.data) for t in ckpt.tensors}, str(tmp_path / "w.safetensors"))
    out = tmp_path / "w.ckpt"
    result = run("import", "--model", MODEL, tmp_path / "w.safetensors", out)
    assert result.returncode == 0, result.stderr
    got = oc.load(out)
    assert got.optimizer.kind == "sgd" and got.dialect == "onert"
    assert [bytes(t.raw) for t in got.tensors] == [bytes(t.raw) for t in ckpt.tensors]


def test_export_unknown_suffix() -> None:
    result = run("export", ADAM, "out.bin")
    assert result.returncode == 2
    one_error_line(result, "unknown_format")


# new ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("dialect", ["onert", "onert-micro"])
def test_new_from_model(tmp_path: Path, optimizer: str, dialect: str) -> None:
    out = tmp_path / "start.ckpt"
    result = run("new", "--model", MODEL, "--optimizer", optimizer, "--dialect", dialect, out)
    assert result.returncode == 0, result.stderr
    ckpt = oc.load(out)
    assert ckpt.step == 0 and ckpt.epoch == 0
    assert ckpt.optimizer.kind == optimizer
    assert ckpt.dialect in (dialect, None)
    for entries in ckpt.optimizer.slots.values():
        assert all(not b.raw.any() for b in entries.values())
    info = json.loads(run("info", "--json", "--model", MODEL, out).stdout)
    assert sorted(t["name"] for t in info["tensors"]) == ["b0", "b1", "w0", "w1"]
    if dialect == "onert":
        # Same layout as the runtime's own export of this model.
        real = oc.load(ADAM if optimizer == "adam" else SGD)
        assert ckpt.file_size == real.file_size
        assert [t.offset for t in ckpt.tensors] == [t.offset for t in real.tensors]


def test_new_is_accepted_by_the_onert_runtime(tmp_path: Path) -> None:
    train = pytest.importorskip("onert.experimental.train", reason="onert is not installed")
    shutil.copy(MODEL, tmp_path / "m.circle")
    assert run("new", "--model", "m.circle", "--optimizer", "adam", "c.ckpt",
               cwd=tmp_path).returncode == 0
    cwd = os.getcwd()
    os.chdir(tmp_path)  # onert 0.1.0 mangles checkpoint paths of 16+ characters
    try:
        s = train.session("m.circle")
        s.compile(optimizer="adam", loss="mean_squared_error", batch_size=1)
        s.session.train_import_checkpoint("c.ckpt")
    finally:
        os.chdir(cwd)


def test_new_needs_a_model(tmp_path: Path) -> None:
    result = run("new", tmp_path / "x.ckpt")
    assert result.returncode == 2
    one_error_line(result, "usage_error")


# Hostile strings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [("info",), ("dump", "--tensor", "0", "--limit", "2"), ("validate",), ("dump", "--layout")],
    ids=["info", "dump", "validate", "layout"],
)
def test_hostile_names_are_escaped(hostile: Path, args: tuple[str, ...]) -> None:
    result = run(*args, hostile)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout + result.stderr
    if args[0] in ("info", "dump") and "--layout" not in args:
        assert "\\x1b[31mevil" in result.stdout


def test_hostile_file_name_is_escaped(tmp_path: Path) -> None:
    path = tmp_path / f"{HOSTILE}.ckpt"
    path.write_bytes(b"\x00\x00\x01")
    result = run("validate", path)
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\\x1b[31mevil" in result.stdout
    result = run("info", path)
    assert "\x1b" not in result.stderr
    one_error_line(result, "bad_magic")


def test_hostile_names_in_json_are_escaped(hostile: Path) -> None:
    result = run("info", "--json", hostile)
    assert "\x1b" not in result.stdout
    assert json.loads(result.stdout)["tensors"][0]["name"] == HOSTILE


# Progress -----------------------------------------------------------------------------------


def test_progress_bar_for_big_files_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over 64 MiB and on a terminal, every written chunk advances a tqdm bar."""
    from onert_checkpoint.tools import cli
    from onert_checkpoint.tools.cli_common import PROGRESS_THRESHOLD

    ckpt = oc.load(ADAM)
    seen: list[int] = []
    oc.save(ckpt, tmp_path / "cb.ckpt", progress=seen.append)
    assert sum(seen) == ADAM.stat().st_size and len(seen) > 1

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    cli._save(ckpt, str(tmp_path / "x.ckpt"), size_hint=PROGRESS_THRESHOLD + 1, progress=True)
    assert "writing" in capsys.readouterr().err
    assert (tmp_path / "x.ckpt").read_bytes() == ADAM.read_bytes()
    # Small files: no bar.
    cli._save(ckpt, str(tmp_path / "y.ckpt"), size_hint=100, progress=True)
    assert capsys.readouterr().err == ""
