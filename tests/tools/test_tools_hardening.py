"""The tools after a successful load, attacked as a hostile user would (bad input gets the
project's error, in linear time, with no control byte reaching the terminal); export and dump
agree on which entries are typed.

The command line runs as a real subprocess (``python -m onert_checkpoint``); the per-field
escaping and the linear-time checks call the command functions in-process, without the
stdout/stderr guard of ``main()``, so that each layer is tested on its own.
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.layout import Schema1Layout, Schema2Layout
from onert_checkpoint.format.model import Section
from onert_checkpoint.format.sniff import looks_like
from onert_checkpoint.tools import cli
from onert_checkpoint.tools.describe import describe
from onert_checkpoint.tools.diff import diff
from onert_checkpoint.tools.layout_map import layout_map
from onert_checkpoint.tools.render import SafeStream, safe_text
from tests.interchange.test_export_lossless import v2_checkpoints
from tests.strategies import checkpoint_files, mutated_files

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real-onert"

#: An OSC window-title sequence, CSI colour codes, a C1 CSI, a bidi override and NUL.
HOSTILE = "\x1b]0;pwned\x07\x1b[31m\x9b\u202e\x00"
#: The same without NUL, which a command-line argument cannot hold.
HOSTILE_ARG = HOSTILE.replace("\x00", "")


def run(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", COLUMNS="100")
    return subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", *map(str, args)],
        capture_output=True, cwd=ROOT, env=env, timeout=timeout,
    )


def control_chars(text: str) -> list[str]:
    """Characters a terminal may act on: C0 (but the line feed), DEL, C1, bidi controls."""
    bad = []
    for c in text:
        o = ord(c)
        if (o < 32 and c != "\n") or 0x7F <= o <= 0x9F or 0x202A <= o <= 0x202E or (
            0x2066 <= o <= 0x2069
        ):
            bad.append(c)
    return bad


def assert_clean(data: bytes) -> str:
    text = data.decode("utf-8")
    assert not control_chars(text), (control_chars(text), text[:2000])
    return text


def strict_json(line: str) -> object:
    """Parse as RFC 8259 JSON: NaN, Infinity and -Infinity are refused."""

    def refuse(token: str) -> object:
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(line, parse_constant=refuse)


def hostile_checkpoint(*, nan_state: bool = True) -> Checkpoint:
    """A valid schema-2 checkpoint with hostile tensor, slot, state key and value strings,
    a self-described optimizer, an unknown optional section and non-finite values."""
    tensors = [
        Tensor(index=0, data=np.array([1, np.inf, np.nan, -np.inf], np.float32),
               name="w" + HOSTILE, dtype="float32", shape=(4,)),
        Tensor(index=1, data=np.arange(6, dtype=np.uint8)),
    ]
    slot = "s" + HOSTILE
    opt = Optimizer("optimizer_9", {slot: {0: Buffer(0, np.ones(4, np.float32)),
                                           1: Buffer(1, np.zeros(6, np.uint8))}})
    state = TrainingState(
        {"step": 3, "k" + HOSTILE: "v" + HOSTILE, "blob": b"\x00\xff\x1b"}
    )
    if nan_state:
        state["learning_rate"] = math.nan
    return Checkpoint(tensors=tensors, optimizer=opt, state=state,
                      layout=Schema2Layout("v2", sections=[Section(77, b"kept" + HOSTILE.encode(),
                                           False)]))


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.ckpt"
    oc.save(hostile_checkpoint(), path)
    return path


def many(n: int, path: Path, revision: str = "v1") -> Path:
    """An Adam checkpoint of ``n`` 8-byte entries."""
    tensors = [Tensor(index=i, data=np.full(2, i, np.float32).view(np.uint8)) for i in range(n)]
    opt = Optimizer("adam")
    for s in ("m", "v"):
        opt.slots[s] = {i: Buffer(i, np.full(2, i, np.float32)) for i in range(n)}
    ckpt = Checkpoint(tensors=tensors, optimizer=opt, state=TrainingState(step=1, epoch=0),
                      layout=Schema1Layout("v1", dialect="onert", num_entries=n))
    oc.save(ckpt, path, revision=revision)
    return path


# Every tool operation linear in the entry count -----------------------------------------------


def python_lines(fn: Callable[[], object]) -> int:
    """How many Python lines ``fn`` executes (a deterministic measure of work: C code such as
    NumPy's is not counted, a Python loop over the entries is)."""
    count = 0

    def tracer(frame: object, event: str, arg: object) -> object:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def in_process(argv: list[str]) -> Callable[[], object]:
    """A command function called without main()'s guard (its output goes to pytest's capture)."""
    args = cli.build_parser().parse_args(argv)
    return lambda: args.func(args)


def _diff(p: Path) -> Callable[[], object]:
    a, b = oc.load(p), oc.load(p)
    return lambda: diff(a, b).to_dict()


def _loaded(fn: Callable[[Checkpoint], object]) -> Callable[[Path], Callable[[], object]]:
    def setup(p: Path) -> Callable[[], object]:
        ckpt = oc.load(p)
        return lambda: fn(ckpt)

    return setup


def _from_numpy_dict(p: Path) -> Callable[[], object]:
    arrays, meta = oc.to_numpy_dict(oc.load(p), metadata=True)
    return lambda: oc.from_numpy_dict(arrays, meta)


OPERATIONS: dict[str, Callable[[Path], Callable[[], object]]] = {
    "diff": _diff,
    "diff cli": lambda p: in_process(["diff", "--json", str(p), str(p)]),
    "dump cli": lambda p: in_process(["dump", "--limit", "1", str(p)]),
    "dump slot cli": lambda p: in_process(["dump", "--slot", "v", "--limit", "1", str(p)]),
    "info cli": lambda p: in_process(["info", str(p)]),
    "describe": _loaded(describe),
    "layout_map": lambda p: (lambda: layout_map(p).to_dict()),
    "to_numpy_dict": _loaded(lambda c: oc.to_numpy_dict(c, metadata=True)),
    "from_numpy_dict": _from_numpy_dict,
    "convert": _loaded(lambda c: oc.convert(c, "v1" if c.revision == "v2" else "v2")),
}


@pytest.mark.parametrize("revision", ["v1", "v2"])
@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_tool_work_grows_linearly(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  name: str, revision: str) -> None:
    # 4x the entries: linear work is ~4x, the quadratic searches this replaced were ~16x.
    small = python_lines(OPERATIONS[name](many(200, tmp_path / f"s-{revision}.ckpt", revision)))
    large = python_lines(OPERATIONS[name](many(800, tmp_path / f"l-{revision}.ckpt", revision)))
    capsys.readouterr()
    assert large / small < 6, (name, small, large)


# No control byte reaches the terminal ---------------------------------------------------------


def test_safe_text_escapes_every_terminal_control() -> None:
    escaped = safe_text("a" + HOSTILE + "\u2066\u0085\x7f\r\n")
    assert not control_chars(escaped) and "\n" not in escaped
    assert escaped.startswith("a\\x1b]0;pwned\\x07\\x1b[31m\\x9b\\u202e\\x00")


def test_safe_stream_escapes_but_keeps_lines() -> None:
    class Sink:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

    sink = Sink()
    SafeStream(sink).write("x\x1b[2J\ny\x07\n")  # type: ignore[arg-type]
    assert sink.text == "x\\x1b[2J\ny\\x07\n"


COMMANDS = [
    ["info", "{f}"],
    ["info", "--json", "{f}"],
    ["validate", "{f}"],
    ["validate", "--json", "{f}"],
    ["dump", "{f}"],
    ["dump", "{f}", "--slot", "s" + HOSTILE_ARG],
    ["dump", "{f}", "--slot", "nope"],
    ["dump", "{f}", "--tensor", "nope"],
    ["dump", "--layout", "{f}"],
    ["dump", "--layout", "--json", "{f}"],
    ["diff", "{f}", "{f}"],
    ["diff", "--json", "{f}", "{f}"],
    ["diff", "{f}", "{g}"],
    ["diff", "--json", "{f}", "{g}"],
    ["export", "{f}", "{d}/x.npz"],
    ["export", "{f}", "{d}/x.safetensors"],
    ["convert", "{f}", "{d}/y.ckpt", "--to", "v1"],
    ["convert", "{f}", "{d}/y.ckpt", "--to", "wof", "--allow-lossy"],
    ["info", "{f}", "--bogus" + HOSTILE_ARG],
]


def _ids(argv: list[str]) -> str:
    return " ".join(argv[:3]).encode("unicode_escape").decode()


@pytest.mark.parametrize("argv", COMMANDS, ids=_ids)
def test_no_control_byte_reaches_stdout_or_stderr(tmp_path: Path, hostile: Path,
                                                  argv: list[str]) -> None:
    other = hostile_checkpoint(nan_state=False)
    other.state["blob"] = b"\x01" + HOSTILE.encode()
    oc.save(other, tmp_path / "other.ckpt")
    args = [a.format(f=hostile, g=tmp_path / "other.ckpt", d=tmp_path) for a in argv]
    result = run(*args)
    assert_clean(result.stdout)
    err = assert_clean(result.stderr)
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [["info", "{f}"], ["diff", "{f}", "{f}"], ["dump", "{f}"], ["dump", "{f}", "--slot", "{s}"],
     ["validate", "{f}"], ["dump", "--layout", "{f}"]],
    ids=["info", "diff", "dump", "dump-slot", "validate", "layout"],
)
def test_every_string_from_the_file_is_escaped_by_the_command_itself(
    hostile: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # Without main()'s SafeStream: the rendering escapes each field (so tables stay aligned).
    args = cli.build_parser().parse_args(
        [a.format(f=hostile, s="s" + HOSTILE) for a in argv]
    )
    args.func(args)
    out = capsys.readouterr().out
    assert not control_chars(out), control_chars(out)
    assert "\\x1b]0;pwned\\x07" in out


def test_info_table_columns_stay_aligned_with_hostile_slot_names(hostile: Path) -> None:
    lines = assert_clean(run("info", hostile).stdout).splitlines()
    table = lines[lines.index("") + 1 : lines.index("", lines.index("") + 1)]
    header, rows = table[0], table[1:]
    # The slot column's right edge is the same in the header and every row.
    edge = header.index(".offset") + len(".offset")
    assert all(row[edge - 1] != " " and (len(row) == edge or row[edge] == " ") for row in rows)


# Strict JSON, bytes state values, a file equals itself --------------------------------------


def test_diff_json_is_strict_with_nan_inf_and_bytes(tmp_path: Path, hostile: Path) -> None:
    other = hostile_checkpoint()
    other.tensors[0].data = np.array([1, 2, np.nan, 3], np.float32)
    other.state["learning_rate"] = math.inf
    other.state["blob"] = b"\x01"
    oc.save(other, tmp_path / "b.ckpt")
    result = run("diff", "--json", hostile, tmp_path / "b.ckpt")
    assert result.returncode == 1, result.stderr
    doc = strict_json(assert_clean(result.stdout))
    assert isinstance(doc, dict) and doc["equal"] is False
    assert doc["state"]["learning_rate"] == [{"float": "nan"}, {"float": "inf"}]
    assert doc["state"]["blob"] == [{"bytes": "00ff1b"}, {"bytes": "01"}]
    w0 = next(e for e in doc["entries"] if e["key"] == "0" and e["slot"] == "weights")
    assert w0["status"] == "differs" and w0["max_abs"] == {"float": "inf"}


def test_diff_of_a_file_with_nan_state_against_itself_is_equal(hostile: Path) -> None:
    for extra in ((), ("--json",)):
        result = run("diff", *extra, hostile, hostile)
        assert result.returncode == 0, result.stdout
        if extra:
            assert strict_json(result.stdout.decode())["equal"] is True  # type: ignore[index]
    a, b = oc.load(hostile), oc.load(hostile)
    assert diff(a, b).equal


def test_state_floats_compare_bit_for_bit() -> None:
    def with_lr(value: float) -> Checkpoint:
        return Checkpoint(tensors=[Tensor(0, np.zeros(4, np.uint8))],
                          state=TrainingState(learning_rate=value), revision="v2")

    payload = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0]
    assert diff(with_lr(math.nan), with_lr(math.nan)).equal
    assert not diff(with_lr(math.nan), with_lr(payload)).equal
    assert not diff(with_lr(0.0), with_lr(-0.0)).equal
    assert diff(with_lr(0.5), with_lr(0.5)).equal


@pytest.mark.parametrize(
    "argv",
    [["info", "--json", "{f}"], ["validate", "--json", "{f}"],
     ["dump", "--layout", "--json", "{f}"], ["diff", "--json", "{f}", "{f}"]],
    ids=["info", "validate", "layout", "diff"],
)
def test_every_json_output_is_strict(hostile: Path, argv: list[str]) -> None:
    result = run(*[a.format(f=hostile) for a in argv])
    for line in assert_clean(result.stdout).splitlines():
        strict_json(line)


def test_info_json_writes_non_finite_state_as_spec_section_9(hostile: Path) -> None:
    doc = strict_json(run("info", "--json", hostile).stdout.decode())
    assert doc["state"]["learning_rate"] == {"float": "nan"}  # type: ignore[index]
    assert doc["state"]["blob"] == {"bytes": "00ff1b"}  # type: ignore[index]


# Dialect conversion needs the model; --to defaults to the input's revision -------------------


def test_convert_to_another_dialect_without_model_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "y.ckpt"
    result = run("convert", REAL / "fc3-sgd-step12.ckpt", out, "--to", "v1",
                 "--dialect", "onert-micro")
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "--model" in err and "model_required" in err
    assert not out.exists()
    with pytest.raises(oc.NotRepresentableError, match="needs the circle model") as info:
        oc.convert(oc.load(REAL / "fc3-sgd-step12.ckpt"), "v1", dialect="onert-micro")
    assert info.value.code == "not_representable" and info.value.field == "dialect"


def test_convert_between_dialects_without_to_round_trips(tmp_path: Path) -> None:
    src = REAL / "fc3-adam-step12.ckpt"
    micro, back = tmp_path / "micro.ckpt", tmp_path / "back.ckpt"
    model = REAL / "fc3.circle"
    # --batch-size 1: the export trained one sample per step (Adam's units, SPEC 9.3)
    result = run("convert", src, micro, "--dialect", "onert-micro", "--model", model,
                 "--batch-size", "1")
    assert result.returncode == 0, result.stderr
    assert oc.load(micro).revision == "v1" and oc.load(micro).dialect == "onert-micro"
    result = run("convert", micro, back, "--dialect", "onert", "--model", model,
                 "--batch-size", "1")
    assert result.returncode == 0, result.stderr
    assert back.read_bytes() == src.read_bytes()


def test_convert_of_a_v2_file_to_another_dialect_needs_the_model_too(tmp_path: Path) -> None:
    v2 = tmp_path / "v2.ckpt"
    oc.save(oc.convert(oc.load(REAL / "fc3-sgd-step12.ckpt"), "v2"), v2)
    result = run("convert", v2, tmp_path / "y.ckpt", "--to", "v1", "--dialect", "onert-micro")
    assert result.returncode == 2 and b"--model" in result.stderr
    result = run("convert", v2, tmp_path / "y.ckpt", "--to", "v1", "--dialect", "onert-micro",
                 "--model", REAL / "fc3.circle")
    assert result.returncode == 0, result.stderr
    assert oc.load(tmp_path / "y.ckpt").dialect == "onert-micro"


# Model errors -----------------------------------------------------------------------------------


def test_a_checkpoint_of_another_model_is_model_mismatch() -> None:
    result = run("info", REAL / "fc3sq-adam-step12.ckpt", "--model", REAL / "fc3.circle")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "model_mismatch" in err and "ambiguous" not in err and "order=" not in err


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo"])
def test_an_unreadable_model_is_an_io_error(tmp_path: Path, kind: str) -> None:
    model = tmp_path / "m.circle"
    if kind == "directory":
        model.mkdir()
    elif kind == "fifo":
        os.mkfifo(model)
    result = run("info", REAL / "fc2-adam-step8.ckpt", "--model", model, timeout=30)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "io_error" in err and str(model) in err


# Messages that say what to do -------------------------------------------------------------------


def _sample(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / f"sample.{kind}"
    if kind == "circle":
        return REAL / "fc2.circle"
    if kind == "png":
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(32))
    elif kind == "gguf":
        path.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(32))
    elif kind == "npz":
        oc.to_npz(oc.load(REAL / "fc2-sgd-step8.ckpt"), path)
    elif kind == "safetensors":
        oc.to_safetensors(oc.load(REAL / "fc2-sgd-step8.ckpt"), path)
    return path


@pytest.mark.parametrize(
    ("kind", "says"),
    [("circle", ["circle model", "--model"]), ("png", ["PNG"]), ("gguf", ["GGUF"]),
     ("npz", ["npz", "import"]), ("safetensors", ["safetensors", "import"])],
)
def test_a_file_that_is_not_a_checkpoint_is_named(tmp_path: Path, kind: str,
                                                  says: list[str]) -> None:
    path = _sample(kind, tmp_path)
    result = run("info", path)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "bad_magic" in err and all(s in err for s in says), err
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(path)
    assert info.value.code == "bad_magic" and says[0] in info.value.message
    assert looks_like(path.read_bytes()[:16], path.stat().st_size)


def test_random_bytes_look_like_nothing() -> None:
    assert looks_like(b"\x00\x01\x02\x03\x04\x05\x06\x07") == ""


def test_dump_of_a_name_without_model_hints_model_and_lists_entries() -> None:
    result = run("dump", REAL / "fc2-adam-step8.ckpt", "--tensor", "w1")
    assert result.returncode == 2
    err = result.stderr.decode()
    assert "no_such_tensor" in err and "--model" in err and "entries: 0, 1, 2, 3" in err


def test_dump_json_without_layout_prints_the_values() -> None:
    result = run("dump", "--json", REAL / "fc2-adam-step8.ckpt")
    assert result.returncode == 0 and not result.stderr
    assert len(json.loads(result.stdout)["entries"]) == 4


@pytest.mark.parametrize(
    "argv",
    [["convert", "{c}", ""], ["export", "{c}", ""], ["import", "{s}", ""],
     ["new", "", "--model", "{m}"]],
    ids=["convert", "export", "import", "new"],
)
def test_an_empty_output_path_is_a_usage_error(tmp_path: Path, argv: list[str]) -> None:
    st = _sample("safetensors", tmp_path)
    args = [a.format(c=REAL / "fc2-sgd-step8.ckpt", s=st, m=REAL / "fc2.circle") for a in argv]
    result = run(*args)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "usage_error" in err, err


def test_an_unwritable_output_names_the_users_path(tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "dir" / "x.ckpt"
    result = run("convert", REAL / "fc2-sgd-step8.ckpt", out)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and str(out) in err and ".tmp" not in err


def test_dump_and_export_agree_on_untyped_entries(tmp_path: Path) -> None:
    # typed when the type is known, raw bytes otherwise, in both tools.
    src = REAL / "fc2-adam-step8.ckpt"
    arrays = oc.to_numpy_dict(oc.load(src))
    out = run("dump", src, "--tensor", "1").stdout.decode()
    title, body = out.split("\n", 1)
    assert "raw bytes" in title and title.endswith("[32]") and arrays["1"].dtype == np.uint8
    assert body.strip() == str(arrays["1"])
    named = oc.to_numpy_dict(oc.bind(oc.load(src), REAL / "fc2.circle"))
    out = run("dump", src, "--tensor", "b0", "--model", REAL / "fc2.circle").stdout.decode()
    assert out.startswith("entry 1 b0 weights float32 [8]") and named["b0"].dtype == np.float32



@pytest.mark.parametrize(
    "argv",
    [["export", "{c}", "{f}.npz"], ["export", "{c}", "{f}.safetensors"],
     ["import", "{f}.npz", "{d}/x.ckpt"]],
    ids=["export-npz", "export-safetensors", "import"],
)
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, argv: list[str]) -> None:
    fifo = tmp_path / "pipe"
    for suffix in (".npz", ".safetensors"):
        os.mkfifo(f"{fifo}{suffix}")
    args = [a.format(c=REAL / "fc2-sgd-step8.ckpt", f=fifo, d=tmp_path) for a in argv]
    result = run(*args, timeout=30)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "not a regular file" in err


def test_info_shows_non_finite_and_bytes_state_as_text(hostile: Path) -> None:
    out = run("info", hostile).stdout.decode()
    state = next(line for line in out.splitlines() if line.startswith("state"))
    assert "learning_rate=nan" in state and "blob=bytes 00ff1b" in state


# Every tool on every valid file, mutated ones included ------------------------------------------


def _every_tool(data: bytes) -> None:
    """Run each public tool on ``data``; only CheckpointError may escape, outputs are strict
    JSON, a file equals itself and exports losslessly."""
    from onert_checkpoint.tools.dump import tensor_values
    from onert_checkpoint.tools.jsonout import dumps

    try:
        ckpt = oc.load(data)
        ckpt.verify()  # load defers the data checks: a file is valid once they pass too
    except oc.CheckpointError:
        return
    strict_json(dumps(describe(ckpt)))
    text = "\n".join(cli.info_lines(describe(ckpt), ckpt.layout.quirks))
    assert not control_chars(text.replace("\n", ""))
    result = diff(ckpt, oc.load(data))
    assert result.equal, result.to_dict()
    strict_json(dumps(result.to_dict()))
    lmap = layout_map(data)
    assert lmap.error is None
    strict_json(dumps(lmap.to_dict()))
    slots = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
    for t in ckpt.tensors:
        tensor_values(ckpt, t)
        for slot, entries in slots.items():
            if t.index in entries:
                tensor_values(ckpt, t, slot=slot)
    arrays, meta = oc.to_numpy_dict(ckpt, metadata=True)
    assert oc.to_bytes(oc.from_numpy_dict(arrays, meta)) == data
    for to, dialect in (("v2", None), ("v1", None), ("v1", "onert"), ("v1", "onert-micro"),
                        ("wof", None)):
        for lossy in (False, True):
            try:
                out = oc.convert(ckpt, to, dialect=dialect, allow_lossy=lossy)
                written = oc.to_bytes(out)
            except oc.CheckpointError:
                continue
            assert oc.load(written).revision == to


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(checkpoint_files(), mutated_files().map(lambda m: m[0])))
def test_every_tool_holds_on_every_valid_file(data: object) -> None:
    _every_tool(data if isinstance(data, bytes) else data.data)  # type: ignore[attr-defined]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(v2_checkpoints())
def test_every_tool_holds_on_schema_2_files_with_what_only_schema_2_has(ckpt: Checkpoint) -> None:
    _every_tool(oc.to_bytes(ckpt))


@pytest.mark.parametrize(
    "argv",
    [["diff", "{c}", "{c}", "--atol", "nan"], ["diff", "{c}", "{c}", "--rtol", "-1"],
     ["diff", "{c}", "{c}", "--atol", "inf"], ["dump", "{c}", "--threshold", "-3"],
     ["dump", "{c}", "--limit", "-1"], ["convert", "{c}", "{d}/x.ckpt", "--to", "v2",
                                        "--dialect", "onert"]],
    ids=["atol-nan", "rtol-negative", "atol-inf", "threshold", "limit", "dialect-v2"],
)
def test_options_that_cannot_mean_anything_are_usage_errors(tmp_path: Path,
                                                            argv: list[str]) -> None:
    result = run(*[a.format(c=REAL / "fc2-sgd-step8.ckpt", d=tmp_path) for a in argv])
    assert result.returncode == 2
    err = result.stderr.decode()
    assert len(err.splitlines()) == 1 and "usage_error" in err, err
    assert not (tmp_path / "x.ckpt").exists()


def test_one_sided_nan_is_infinitely_apart_and_two_nans_are_close() -> None:
    def weights(*values: float) -> Checkpoint:
        return Checkpoint(tensors=[Tensor(0, np.array(values, np.float32), dtype="float32",
                                          shape=(len(values),))], revision="v2")

    row = diff(weights(math.nan, 1.0), weights(1.0, 1.0)).entries[0]
    assert row.status == "differs" and row.max_abs == math.inf and row.max_rel == math.inf
    quiet, other = np.array([np.nan], np.float32), np.array([np.nan], np.float32)
    other.view(np.uint32)[0] |= 1  # another NaN payload: different bytes, both NaN
    row = diff(weights(*quiet, 2.0), weights(*other, 2.0)).entries[0]
    assert row.status == "close" and row.max_abs == 0.0


def test_saving_in_another_dialect_without_the_model_is_refused(tmp_path: Path) -> None:
    onert = oc.load(REAL / "fc3-sgd-step12.ckpt")
    for call in (lambda: oc.save(onert, tmp_path / "s.ckpt", revision="v1", dialect="onert-micro"),
                 lambda: oc.to_bytes(onert, revision="v1", dialect="onert-micro")):
        with pytest.raises(oc.NotRepresentableError, match="circle model") as info:
            call()
        assert info.value.field == "dialect"
    assert not (tmp_path / "s.ckpt").exists()
    assert oc.to_bytes(onert, revision="v1", dialect="onert") == (
        REAL / "fc3-sgd-step12.ckpt"
    ).read_bytes()


@pytest.mark.parametrize("name", ["fc3-adam-step12.ckpt", "wof", "v2-scratch"])
def test_content_of_unknown_indexing_needs_the_model_for_any_dialect(tmp_path: Path,
                                                                      name: str) -> None:
    if name == "wof":  # circle-indexed, from an onert-micro file
        src = tmp_path / "x.wof"
        micro = oc.convert(oc.load(REAL / "fc3-sgd-step12.ckpt"), "v1", dialect="onert-micro",
                           model=REAL / "fc3.circle")
        oc.save(oc.convert(micro, "wof", allow_lossy=True), src)
    elif name == "v2-scratch":
        src = tmp_path / "x.v2"
        oc.save(Checkpoint(tensors=[Tensor(0, np.zeros(4, np.uint8))], revision="v2"), src)
    else:
        src = REAL / name
    for dialect in ("onert", "onert-micro"):
        result = run("convert", src, tmp_path / "y.ckpt", "--to", "v1", "--dialect", dialect)
        assert result.returncode == 2 and b"model_required" in result.stderr, result.stderr
    assert run("convert", src, tmp_path / "y.ckpt", "--to", "v1").returncode == 0


def test_onert_content_to_wof_needs_the_model(tmp_path: Path) -> None:
    # WOF entries are circle tensor indices (SPEC section 5): onert's order must be re-indexed.
    src, model = REAL / "fc3-sgd-step12.ckpt", REAL / "fc3.circle"
    result = run("convert", src, tmp_path / "x.wof", "--to", "wof", "--allow-lossy")
    assert result.returncode == 2 and b"model_required" in result.stderr
    assert b"--model" in result.stderr and not (tmp_path / "x.wof").exists()
    with pytest.raises(oc.NotRepresentableError, match="circle model"):
        oc.convert(oc.load(src), "wof", allow_lossy=True)
    result = run("convert", src, tmp_path / "x.wof", "--to", "wof", "--allow-lossy",
                 "--model", model)
    assert result.returncode == 0, result.stderr
    micro = oc.convert(oc.load(src), "v1", dialect="onert-micro", model=model)
    by_tensor = {t.index: t.raw.tobytes() for t in micro.tensors}
    wof = oc.load(tmp_path / "x.wof")
    assert {t.index: t.raw.tobytes() for t in wof.tensors} == by_tensor
