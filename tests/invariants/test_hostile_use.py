"""Hostile use of the library and the command line: each defect class reproduced as a hostile
user would, plus the variants a hostile tester tries next (other revisions, commands, output
modes, paths). Grouped by subject: the error line, allocation before checking, memory and time
bounds, control bytes in output, diff and JSON, inputs and targets that are not regular files,
the umask, lossless export/import, dialects, convert options, model errors, messages, checked
assignment, files changed under a mapped checkpoint.

Each test is one attack, named after what it shows. The command line runs as a real subprocess
(``python -m onert_checkpoint``) with a timeout, so a block is a failure and not a hang; every
run is checked for the command line's promises: exit status 0, 1 or 2, errors as one line
``onert-ckpt: error: <snake_case_code>: ...``, never a traceback or a Python exception's name,
no raw control byte on stdout or stderr. Memory is measured with tracemalloc (NumPy reports to
it), time as the ratio of process CPU time at two sizes (generous bounds, never absolute
timings).
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, CheckpointError, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.layout import Schema3Layout
from onert_checkpoint.format.model import Section

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
FC3 = DATA / "fc3.circle"
FC3_SGD = DATA / "fc3-sgd-step12.ckpt"
FC3_ADAM = DATA / "fc3-adam-step12.ckpt"
FC3SQ_ADAM = DATA / "fc3sq-adam-step12.ckpt"
FC2_ADAM = DATA / "fc2-adam-step8.ckpt"

CLI_TIMEOUT = 60
#: C0 controls but newline and tab, DEL, C1 (as UTF-8), and the bidi/format characters a
#: terminal acts on (U+202A-U+202E, U+2066-U+2069): none may reach stdout or stderr raw.
RAW_CONTROL = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)
#: ``onert-ckpt: error: <snake_case_code>: ...``; the library's errors add `` at FIELD (offset N)``
#: after the code (see test_error_line_puts_the_code_before_the_first_colon).
ERROR_LINE = re.compile(r"^onert-ckpt: error: ([a-z][a-z0-9_]*)(?: at [^\n]*?)?: ")
#: Names a hostile file carries: OSC title, CSI colour, C1 CSI, bidi override, NUL, CR/BS, DEL.
HOSTILE = ["\x1b]0;pwned\x07", "\x1b[31mred\x1b[0m", "\x9b2J", "\u202eevil", "a\x00b", "\r\x08x",
           "\x7f"]
NAN, INF = float("nan"), float("inf")


# Helpers -------------------------------------------------------------------------------------


@dataclass
class Run:
    args: tuple[str, ...]
    status: int
    out: bytes
    err: bytes

    @property
    def text(self) -> str:
        return (self.out + self.err).decode("utf-8", "replace")

    def error_code(self) -> str | None:
        lines = self.err.decode("utf-8", "replace").splitlines()
        for line in lines:
            m = ERROR_LINE.match(line)
            if m:
                return m.group(1)
        return None


def check_run(argv: list[str], status: int, out: bytes, err: bytes) -> Run:
    """The command line's promises, checked on every run."""
    run = Run(tuple(argv), status, out, err)
    where = f"onert-ckpt {argv}: exit {status}\nstdout: {out[-2000:]!r}\nstderr: {err[-2000:]!r}"
    assert status in (0, 1, 2), where
    assert b"Traceback" not in err and b"UNCAUGHT" not in err, where
    assert not RAW_CONTROL.search(out), f"raw control byte on stdout: {where}"
    assert not RAW_CONTROL.search(err), f"raw control byte on stderr: {where}"
    err_lines = err.decode("utf-8", "replace").splitlines()
    errors = [ln for ln in err_lines if ln.startswith("onert-ckpt: error:")]
    for line in errors:
        m = ERROR_LINE.match(line)
        assert m, f"error line without a snake_case code: {where}"
        assert "error" not in m.group(1) or m.group(1).endswith("_error"), where
    if status != 0 and argv and argv[0] != "validate":
        # every failing command says why in one line (diff and info/dump --json: exit 1 may be
        # the verdict, with no error line)
        verdict = status == 1 and not errors and (argv[0] == "diff" or "--json" in argv)
        if not verdict:
            assert len(errors) == 1 and len(err_lines) == 1, f"not one error line: {where}"
    return run


def cli(*args: object, timeout: float = CLI_TIMEOUT, limit_as: int | None = None) -> Run:
    """``python -m onert_checkpoint ARGS`` in a child process, with a timeout (a block fails
    the test instead of hanging it)."""
    argv = [str(a) for a in args]

    def limits() -> None:
        if limit_as is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    try:
        p = subprocess.run(
            [sys.executable, "-m", "onert_checkpoint", *argv], capture_output=True,
            stdin=subprocess.DEVNULL, timeout=timeout, preexec_fn=limits,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"onert-ckpt {argv} blocked for {timeout} s")
    return check_run(argv, p.returncode, p.stdout, p.stderr)


def cli_many(*argvs: list[object], timeout: float = CLI_TIMEOUT) -> list[Run]:
    """Several ``cli`` runs at once (each its own child process)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(lambda a: cli(*a, timeout=timeout), argvs))


#: Runs many command lines in one child process (one interpreter start instead of one per
#: command): each through ``tools.cli.main`` with stdout/stderr as byte buffers, encoded as a
#: real process's streams are (stdout strict UTF-8, stderr backslashreplace).
_BATCH = textwrap.dedent("""
    import base64, contextlib, io, json, sys
    from onert_checkpoint.tools.cli import main
    results = []
    for argv in json.loads(sys.stdin.read()):
        out, err = io.BytesIO(), io.BytesIO()
        o = io.TextIOWrapper(out, "utf-8", "strict", write_through=True)
        e = io.TextIOWrapper(err, "utf-8", "backslashreplace", write_through=True)
        with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            try:
                status = main(argv)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
            except BaseException as exc:
                status = 99
                e.write(f"UNCAUGHT {exc!r}")
        results.append([status, base64.b64encode(out.getvalue()).decode(),
                        base64.b64encode(err.getvalue()).decode()])
    print(json.dumps(results))
""")


def cli_batch(*argvs: list[object], timeout: float = CLI_TIMEOUT,
              limit_as: int | None = None) -> list[Run]:
    """The command lines ``argvs`` run by one child process; every run checked as ``cli``
    checks it. If the batch blocks, each command is run in its own process with a short
    timeout, so that the failure names the command that blocks."""
    import base64

    lists = [[str(a) for a in argv] for argv in argvs]

    def limits() -> None:
        if limit_as is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    try:
        p = subprocess.run([sys.executable, "-c", _BATCH], input=json.dumps(lists).encode(),
                           capture_output=True, timeout=timeout, preexec_fn=limits)
    except subprocess.TimeoutExpired:
        for argv in lists:
            cli(*argv, timeout=10)  # fails on the first command that blocks
        pytest.fail(f"a batch of {len(lists)} command lines blocked: {lists}")
    assert p.returncode == 0, p.stderr[-3000:]
    results = json.loads(p.stdout)
    return [check_run(argv, status, base64.b64decode(o), base64.b64decode(e))
            for argv, (status, o, e) in zip(lists, results)]


def strict_json(text: str | bytes) -> object:
    def refuse(token: str) -> object:
        raise AssertionError(f"non-standard JSON token {token!r} in {text[:300]!r}")

    return json.loads(text, parse_constant=refuse)


def json_lines(run: Run) -> list[object]:
    out = run.out.decode("utf-8")
    assert out.strip(), f"no JSON on stdout: {run}"
    try:
        return [strict_json(out)]
    except json.JSONDecodeError:
        return [strict_json(line) for line in out.splitlines() if line.strip()]


def library_call(call, *args, **kwargs):
    """Returns (result, error); only CheckpointError and OSError may escape a library call."""
    try:
        return call(*args, **kwargs), None
    except (CheckpointError, OSError) as exc:
        return None, exc


def v1_bytes(n: int, esize: int = 4, step: int = 7) -> bytes:
    """A valid onert (SGD) schema-1 file of ``n`` entries of ``esize`` bytes, made with NumPy."""
    table = 20 + 4 * n
    other = table + esize * n
    head = np.array([0, other, 0, other, n], "<u4").tobytes()
    head = bytes([0xAD, 0x01, 0x01, 0x00]) + head[4:]
    offsets = (table + esize * np.arange(n, dtype=np.int64)).astype("<u4").tobytes()
    data = np.arange(n * max(esize, 1) // 4 + 1, dtype="<f4").tobytes()[: esize * n]
    return head + offsets + data + np.array([step, 0], "<u4").tobytes()


def hostile_v2() -> Checkpoint:
    """A valid schema-2 checkpoint built to hurt the code after ``load``: a self-described
    optimizer whose slot names are terminal sequences, hostile tensor names and state keys,
    NaN/Inf values in tensors and state, a bytes state value, an unknown optional section."""
    tensors = [
        Tensor(0, np.array([NAN, INF, -INF, -0.0], np.float32), dtype="float32", shape=(4,),
               name=HOSTILE[0]),
        Tensor(1, np.array([1.0, 2.0], np.float32), dtype="float32", shape=(2,), name=HOSTILE[1]),
        Tensor(2, np.frombuffer(b"\x1b[2J\x07\x9b", np.uint8).copy(), name=HOSTILE[3]),
        Tensor(3, np.arange(6, dtype=np.float32), dtype="float32", shape=(2, 3), name="a\x00b"),
    ]
    slots = {HOSTILE[0]: {}, HOSTILE[2]: {}, "\u202eslot": {}, "m": {}}
    for entries in slots.values():
        for t in tensors[:2]:
            entries[t.index] = Buffer(t.index, np.full(t.data.size, NAN, np.float32))
    state = TrainingState(step=3, epoch=1)
    state["learning_rate"] = NAN
    state["\x1b]0;key\x07"] = b"\x00\x1b[31m\xff"
    state["loss"] = INF
    state["note"] = "\x1b]52;c;cHduZWQ=\x07"
    return Checkpoint(tensors=tensors, optimizer=Optimizer("optimizer_7", slots), state=state,
                      layout=Schema3Layout("v3", sections=[
                          Section(kind=4242, data=b"\x1b]0;section\x07 unknown")]))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """The files the attacks use, written once."""
    d = tmp_path_factory.mktemp("attack-files")
    out: dict[str, Path] = {}
    out["hostile"] = d / "hostile.ckpt"
    oc.save(hostile_v2(), out["hostile"])
    other = hostile_v2()
    other.state["\x1b]0;key\x07"] = b"\x01different"
    other.state["learning_rate"] = 0.5
    out["hostile_b"] = d / "hostile-b.ckpt"
    oc.save(other, out["hostile_b"])
    # batch_size=1: the export trained one sample per step (Adam's units, SPEC 9.3)
    micro = oc.convert(oc.load(FC3_ADAM), "v1", dialect="onert-micro", model=FC3, batch_size=1)
    out["micro"] = d / "fc3-adam-micro.ckpt"
    oc.save(micro, out["micro"])
    out["wof"] = d / "fc3.wof"
    # WOF is indexed as onert-micro is: made from the onert-micro file
    oc.save(oc.convert(oc.load(out["micro"]), "wof", allow_lossy=True), out["wof"])
    out["v2"] = d / "fc3-adam.v2"
    oc.save(oc.convert(oc.load(FC3_ADAM), "v2"), out["v2"])
    plain = Checkpoint(tensors=[Tensor(0, np.arange(4, dtype=np.float32))],
                       optimizer=Optimizer("sgd"), state=TrainingState(step=1, epoch=0))
    out["png"] = d / "image.ckpt"
    out["png"].write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(40))
    out["npz"] = d / "arrays.ckpt"
    oc.to_npz(oc.load(FC3_SGD), out["npz"])
    out["safetensors"] = d / "tensors.ckpt"
    oc.to_safetensors(oc.load(FC3_SGD), out["safetensors"])
    out["gguf"] = d / "model.ckpt"
    out["gguf"].write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(32))
    out["plain"] = d / "plain.ckpt"
    oc.save(plain, out["plain"])
    # fc3.circle with two tensor names replaced (same length) by an OSC start and a C1 CSI:
    # hostile names that come from the model, not from the checkpoint
    raw = FC3.read_bytes()
    for name, evil in ((b"w0", b"\x1b]"), (b"b0", b"\xc2\x9b")):
        prefix = b"\x02\x00\x00\x00"  # a flatbuffers string: u32 length, bytes, NUL
        assert raw.count(prefix + name + b"\x00") == 1
        raw = raw.replace(prefix + name + b"\x00", prefix + evil + b"\x00")
    # not "hostile.circle": beside hostile.ckpt that name is the checkpoint's model by the
    # command line's convention, and these names are for the --model attacks only
    out["hostile_model"] = d / "hostile-names.circle"
    out["hostile_model"].write_bytes(raw)
    return out


def one_error(run: Run, status: int, code: str | None = None) -> str:
    assert run.status == status, f"expected exit {status}: {run}"
    got = run.error_code()
    assert got is not None, f"no error line: {run}"
    if code is not None:
        assert got == code, f"expected {code}, got {got}: {run}"
    return run.err.decode("utf-8", "replace")


# The error line itself -------------------------------------------------------------------------

STRICT_ERROR_LINE = re.compile(r"^onert-ckpt: error: [a-z][a-z0-9_]*: \S")


def test_error_line_puts_the_code_before_the_first_colon(files, tmp_path):
    """The issue's form ``onert-ckpt: error: <snake_case_code>: ...`` for errors the library
    raises with a field and an offset (a parser that splits on ': ' must get the code)."""
    runs = [cli("info", files["png"])]
    runs += cli_batch(["info", "--model", FC3, FC3SQ_ADAM],
                      ["convert", origin_file(tmp_path / "h.ckpt", 2**40), tmp_path / "o.ckpt",
                       "--to", "v1"])
    for run in runs:
        line = run.err.decode().strip()
        assert STRICT_ERROR_LINE.match(line), f"not 'onert-ckpt: error: <code>: ...': {line}"


# Allocation before checking (convert) ----------------------------------------------------------

EXTS = ("npz", "safetensors")
HUGE = [2**24 + 1, 2**28, 2**32, 2**40, 2**64 - 1]


def origin_file(path: Path, count: int, revision: str = "v1",
                dialect: str | None = "onert-micro") -> Path:
    c = Checkpoint(tensors=[Tensor(0, np.arange(4, dtype=np.float32).view(np.uint8))],
                   optimizer=Optimizer("sgd"), state=TrainingState(step=1, epoch=0),
                   layout=Schema3Layout("v3", origin={"revision": revision, "dialect": dialect,
                                                      "num_entries": count, "footerless": False}))
    oc.save(c, path)
    return path


@pytest.mark.parametrize("count", HUGE)
@pytest.mark.parametrize("target", ["v1", "wof", "v1-onert-micro"])
def test_huge_origin_count_library_convert_refused_without_allocating(count, target,
                                                                          tmp_path):
    src = oc.load(origin_file(tmp_path / "h.ckpt", count, "wof" if target == "wof" else "v1"))
    revision, _, dialect = target.partition("-")
    tracemalloc.start()
    try:
        out, err = library_call(oc.convert, src, revision, dialect=dialect or None,
                                allow_lossy=True)
        if err is None:
            _, err = library_call(oc.save, out, tmp_path / "o.ckpt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(err, CheckpointError) and err.code == "not_representable", err
    assert peak < 16 << 20, f"peak {peak >> 20} MiB for a {src.file_size}-byte file"
    assert not (tmp_path / "o.ckpt").exists()


def test_huge_origin_count_cli_convert_exit_1_under_1gib(tmp_path):
    """The issue's command (2**28, --to v1; a real process limited to 1 GiB of address
    space), then 2**40, 2**64-1, the WOF target and a dialect given: exit 1
    not_representable, nothing written."""
    run = cli("convert", origin_file(tmp_path / "h28.ckpt", 2**28), tmp_path / "o.ckpt",
              "--to", "v1", limit_as=1 << 30)
    one_error(run, 1, "not_representable")
    argvs = []
    for count in (2**28, 2**40, 2**64 - 1):
        src = origin_file(tmp_path / f"w{count}.ckpt", count, "wof")
        src1 = origin_file(tmp_path / f"v{count}.ckpt", count, "v1")
        argvs += [["convert", src, tmp_path / "o.ckpt", "--to", "wof", "--allow-lossy"],
                  ["convert", src1, tmp_path / "o.ckpt", "--to", "v1"],
                  ["convert", src1, tmp_path / "o.ckpt", "--to", "v1", "--dialect",
                   "onert-micro"]]
    for run in cli_batch(*argvs, limit_as=1 << 30):
        one_error(run, 1, "not_representable")
    assert not (tmp_path / "o.ckpt").exists()


def test_largest_legal_table_is_streamed(tmp_path):
    """2**24 entries (the stated limit) is written, in windows: the 64 MiB offset table is
    never held in memory at once."""
    src = oc.load(origin_file(tmp_path / "h.ckpt", 2**24))
    tracemalloc.start()
    try:
        oc.save(oc.convert(src, "v1"), tmp_path / "o.ckpt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (tmp_path / "o.ckpt").stat().st_size > 64 << 20
    assert peak < 32 << 20, f"peak {peak >> 20} MiB writing a 64 MiB table"
    back = oc.load(tmp_path / "o.ckpt")
    assert back.layout.num_entries == 2**24 and len(back) == 1


def test_huge_origin_count_export_import_roundtrip(tmp_path):
    src = origin_file(tmp_path / "h.ckpt", 2**64 - 1)
    for run in cli_batch(*[["export", src, tmp_path / f"e.{ext}"] for ext in EXTS]):
        assert run.status == 0, run
    for run in cli_batch(*[["import", tmp_path / f"e.{ext}", tmp_path / f"back-{ext}.ckpt"]
                           for ext in EXTS]):
        assert run.status == 0, run
    for ext in EXTS:
        assert (tmp_path / f"back-{ext}.ckpt").read_bytes() == src.read_bytes(), ext


def test_huge_origin_count_import_to_v1_refused(tmp_path):
    src = origin_file(tmp_path / "h.ckpt", 2**40)
    oc.to_npz(oc.load(src), tmp_path / "e.npz")
    run = cli("import", tmp_path / "e.npz", tmp_path / "o.ckpt", "--revision", "v1",
              limit_as=1 << 30)
    if run.status == 0:  # the origin is dropped, a table of the tensors written: must load
        assert len(oc.load(tmp_path / "o.ckpt")) == 1
    else:
        one_error(run, 1, "not_representable")


def test_limit_stated_in_spec_is_the_code_limit():
    """The named limit on allocation before checking is stated in spec/SPEC.md (9.2) with the
    value the writer enforces."""
    from onert_checkpoint.format.revisions.blocks import MAX_TABLE_ENTRIES

    spec = (Path(__file__).resolve().parents[2] / "spec" / "SPEC.md").read_text("utf-8")
    assert MAX_TABLE_ENTRIES == 2**24
    assert re.search(r"MAX_TABLE_ENTRIES`? = 2\^24", spec), "SPEC does not state the limit"


# Memory amplification on load ----------------------------------------------------------------


def load_peak(data: bytes | Path) -> int:
    tracemalloc.start()
    try:
        c = oc.load(data)
        len(c)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("esize", [0, 4])
def test_v1_million_entries_load_memory(esize, tmp_path):
    data = v1_bytes(1 << 20, esize)
    path = tmp_path / "m.ckpt"
    path.write_bytes(data)
    del data
    peak = load_peak(path)
    size = path.stat().st_size
    assert peak <= (64 << 20) + 8 * size, f"load of {size} B peaked at {peak >> 20} MiB"


@pytest.mark.parametrize("mode", [False])
def test_v1_million_entries_copying_load_memory(mode, tmp_path):
    """The copying load (mmap=False) on the 1M-entry file: the copy plus the entries, within the
    bound."""
    path = tmp_path / "m.ckpt"
    path.write_bytes(v1_bytes(1 << 20, 0))
    tracemalloc.start()
    try:
        c = oc.load(path, mmap=mode)
        c[len(c) - 1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    assert peak <= (64 << 20) + 8 * size, f"load of {size} B peaked at {peak >> 20} MiB"


def test_v1_million_entries_child_rss(tmp_path):
    """The same from outside: a child's resident set grows by less than the bound."""
    path = tmp_path / "m.ckpt"
    path.write_bytes(v1_bytes(1 << 20, 0))
    code = textwrap.dedent(f"""
        import onert_checkpoint as oc
        def hwm():  # this address space's own peak (ru_maxrss holds the spawning process's)
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
        before = hwm()
        c = oc.load({str(path)!r}); n = len(c); c[n - 1]; c[0]
        after = hwm()
        print((after - before) * 1024)
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120, text=True)
    assert p.returncode == 0, p.stderr
    grown = int(p.stdout.split()[-1])
    size = path.stat().st_size
    assert grown <= (64 << 20) + 8 * size, f"RSS grew {grown >> 20} MiB for {size} B"


def v2_many_slots(n: int, slots: int = 16) -> bytes:
    tensors = [Tensor(i, np.full(4, i, np.float32)) for i in range(n)]
    opt = Optimizer("optimizer_9", {f"s{k}": {i: Buffer(i, np.zeros(4, np.float32))
                                             for i in range(n)} for k in range(slots)})
    return oc.to_bytes(Checkpoint(tensors=tensors, optimizer=opt,
                                  state=TrainingState(step=1), revision="v2"))


def test_v2_self_described_16_slots_memory_slope():
    """Load memory of a schema-2 file with a 16-slot self-described optimizer: within the
    bound at both sizes, and growing by at most 8 bytes per file byte between them (the
    issue's 65,536-tensor file peaked at 36x its size)."""
    small, big = v2_many_slots(512), v2_many_slots(4096)
    p_small, p_big = load_peak(small), load_peak(big)
    for data, peak in ((small, p_small), (big, p_big)):
        assert peak <= (64 << 20) + 8 * len(data), f"{len(data)} B peaked at {peak >> 20} MiB"
    slope = (p_big - p_small) / (len(big) - len(small))
    assert slope <= 8, f"load memory grows {slope:.1f} bytes per file byte"


def test_v2_16_slots_walk_every_entry_memory():
    """Touching every entry's size (as info does) stays within the bound too."""
    data = v2_many_slots(4096)
    tracemalloc.start()
    try:
        c = oc.load(data)
        total = sum(t.nbytes for t in c.tensors)
        total += sum(b.nbytes for s in c.optimizer.slots.values() for b in s.values())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == 4096 * 16 * 17
    assert peak <= (64 << 20) + 8 * len(data), f"{len(data)} B peaked at {peak >> 20} MiB"


def test_v2_16_slots_last_range_invalid_memory():
    """The issue's second measurement: the same file with only its last optimizer range
    invalid (checksums recomputed so that the range rule runs) is refused within the bound."""
    from tests.fuzz.structure import reseal_v2

    data = v2_many_slots(4096)
    sections = [struct.unpack_from("<IIQQ", data, 64 + 32 * i)[:4]
                for i in range(struct.unpack_from("<I", data, 24)[0])]
    (_, _, start, length), = [e for e in sections if e[0] == 2]  # the optimizer section
    target = None
    for at in range(start + length - 8, start + length - 256, -1):
        if at % 8:
            continue
        probe = bytearray(data)
        struct.pack_into("<Q", probe, at, struct.unpack_from("<Q", probe, at)[0] + 4)
        _, err = library_call(oc.load, reseal_v2(bytes(probe)))
        if err is not None and str(err.field).endswith("[4095].ofs_data"):
            target = at
            break
    assert target is not None, "the last slot entry's ofs_data was not found"
    bad = bytearray(data)
    struct.pack_into("<Q", bad, target, struct.unpack_from("<Q", bad, target)[0] + (1 << 40))
    bad_bytes = reseal_v2(bytes(bad))
    tracemalloc.start()
    try:
        _, err = library_call(oc.load, bad_bytes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(err, CheckpointError), err
    assert peak <= (64 << 20) + 8 * len(data), f"{len(data)} B peaked at {peak >> 20} MiB"


# Time linear in the entries --------------------------------------------------------------------


def cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        # the cyclic collector's passes scan everything the test session keeps alive: their
        # cost depends on what ran before, not on the operation timed, so it is off meanwhile
        gc.collect()
        gc.disable()
        try:
            t = time.process_time()
            fn()
            best = min(best, time.process_time() - t)
        finally:
            gc.enable()
    return max(best, 1e-4)


RATIO = 24  # 8x the entries: linear is ~8, n log n ~10, quadratic ~64
SMALL, BIG = 1500, 12000  # the 5k / 40k made smaller for speed: the same 8x ratio


def test_diff_self_8x_entries_linear():
    a5, a40 = oc.load(v1_bytes(SMALL)), oc.load(v1_bytes(BIG))
    b5, b40 = oc.load(v1_bytes(SMALL)), oc.load(v1_bytes(BIG))
    assert oc.diff(a40, b40).equal
    t5 = cpu(lambda: oc.diff(a5, b5).to_dict())
    t40 = cpu(lambda: oc.diff(a40, b40).to_dict(), 1)
    assert t40 / t5 < RATIO, f"diff: {t40 / t5:.1f}x the 5k time for 8x the entries"


def test_getitem_by_index_and_name_linear():
    def named(n: int) -> Checkpoint:
        c = oc.load(v1_bytes(n))
        for t in c.tensors:
            t.name = f"t{t.index}"
        return c

    c5, c40 = named(SMALL), named(BIG)

    def lookups(c: Checkpoint) -> None:
        for i in range(len(c)):
            c[i]
            c[f"t{i}"]

    t5, t40 = cpu(lambda: lookups(c5)), cpu(lambda: lookups(c40), 1)
    assert t40 / t5 < RATIO, f"lookups: {t40 / t5:.1f}x the 5k time for 8x the entries"


@pytest.mark.parametrize("operation", ["convert-v2", "convert-v2-v1", "to_numpy_dict",
                                       "from_numpy_dict", "content_equal", "describe"])
def test_library_operations_linear(operation):
    small, big = oc.load(v1_bytes(SMALL)), oc.load(v1_bytes(BIG))
    pairs = {n: oc.to_numpy_dict(c, metadata=True) for n, c in ((SMALL, small), (BIG, big))}
    ops = {
        "convert-v2": lambda c, n: oc.to_bytes(oc.convert(c, "v2")),
        "convert-v2-v1": lambda c, n: oc.to_bytes(oc.convert(oc.convert(c, "v2"), "v1")),
        "to_numpy_dict": lambda c, n: oc.to_numpy_dict(c, metadata=True),
        "from_numpy_dict": lambda c, n: oc.to_bytes(oc.from_numpy_dict(*pairs[n])),
        "content_equal": lambda c, n: c.content_equal(oc.load(v1_bytes(n))),
        "describe": lambda c, n: oc.describe(c),
    }
    op = ops[operation]
    op(small, SMALL)  # warm up: imports, and memory first touched (page faults) in both sizes
    op(big, BIG)
    t5, t40 = cpu(lambda: op(small, SMALL)), cpu(lambda: op(big, BIG), 2)
    assert t40 / t5 < RATIO, f"{operation}: {t40 / t5:.1f}x the small time for 8x the entries"


def cli_in_process_cpu(args: list[str]) -> float:
    import contextlib
    import io

    from onert_checkpoint.tools.cli import main

    def go() -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(args)

    return cpu(go, 1)


@pytest.mark.parametrize("command", [["dump", "--limit", "1"], ["diff", "--json"],
                                     ["info", "--json"], ["dump", "--layout", "--json"],
                                     ["validate"], ["export"]])
def test_cli_commands_8x_entries_linear(command, tmp_path):
    paths = {}
    for n in (SMALL, BIG):
        paths[n] = tmp_path / f"{n}.ckpt"
        paths[n].write_bytes(v1_bytes(n))
    if command[0] == "export":
        args = {n: ["export", str(paths[n]), str(tmp_path / f"{n}.npz")] for n in paths}
    elif command[0] == "diff":
        args = {n: [*command, str(paths[n]), str(paths[n])] for n in paths}
    else:
        args = {n: [*command, str(paths[n])] for n in paths}
    cli_in_process_cpu(args[SMALL])  # warm the imports
    t5, t40 = cli_in_process_cpu(args[SMALL]), cli_in_process_cpu(args[BIG])
    assert t40 / t5 < RATIO, f"{command}: {t40 / t5:.1f}x the 5k time for 8x the entries"


def test_dump_limit_1_and_tensor_lookup_subprocess(tmp_path):
    path = tmp_path / "10k.ckpt"
    path.write_bytes(v1_bytes(10000))
    dump = cli("dump", "--limit", "1", path)
    assert dump.status == 0 and dump.out.count(b"entry ") == 10000
    one, diff = cli_batch(["dump", "--tensor", "9999", path], ["diff", path, path])
    assert one.status == 0 and one.out.startswith(b"entry 9999"), one
    assert diff.status == 0, diff


# Raw control sequences -------------------------------------------------------------------------


I04_COMMANDS = [
        ["info", "{hostile}"],
        ["info", "--json", "{hostile}"],
        ["validate", "{hostile}"],
        ["validate", "--json", "{hostile}"],
        ["dump", "{hostile}"],
        ["dump", "--slot", HOSTILE[0], "{hostile}"],
        ["dump", "--tensor", HOSTILE[0], "{hostile}"],
        ["dump", "--tensor", "\x1b]0;missing\x07", "{hostile}"],
        ["dump", "--slot", "\x1b]0;missing\x07", "{hostile}"],
        ["dump", "--layout", "{hostile}"],
        ["dump", "--layout", "--json", "{hostile}"],
        ["diff", "{hostile}", "{hostile}"],
        ["diff", "{hostile}", "{hostile_b}"],
        ["diff", "--json", "{hostile}", "{hostile_b}"],
        ["diff", "{hostile}", "{plain}"],
        ["export", "{hostile}", "{tmp}/e.npz"],
        ["convert", "{hostile}", "{tmp}/\x1b]0;out\x07.ckpt"],
        ["info", "{tmp}/\x1b]0;missing\x07\u202e.ckpt"],
        ["edit", "{hostile}", "{tmp}/edited.ckpt", "--step", "4"],
    ["info", b"{tmp}/\xff\x1b]0;bad-utf8\x07.ckpt"],
    ["info", "--model", "{model}", "{sgd}"],
    ["dump", "--model", "{model}", "--limit", "2", "{sgd}"],
    ["dump", "--model", "{model}", "--tensor", "nope", "{sgd}"],
    ["diff", "--model", "{model}", "{sgd}", "{adam}"],
    ["diff", "--json", "--model", "{model}", "{sgd}", "{adam}"],
    ["export", "--model", "{model}", "{adam}", "{tmp}/m.safetensors"],
    ["new", "--model", "{model}", "{tmp}/new.ckpt"],
    ["convert", "{hostile}", b"{tmp}/\xfe\x9b.ckpt", "--to", "v2"],
]


def test_no_raw_control_bytes_in_any_command(files, tmp_path):
    """Every command and output mode on a file full of terminal sequences, hostile tensor,
    slot and state names given as arguments, hostile output paths, paths that are not UTF-8:
    cli_batch() checks stdout and stderr of each run."""
    def expand(a):
        if isinstance(a, bytes):
            return os.fsdecode(a.replace(b"{tmp}", os.fsencode(tmp_path)))
        return a.format(hostile=files["hostile"], hostile_b=files["hostile_b"],
                        plain=files["plain"], tmp=tmp_path, model=files["hostile_model"],
                        sgd=FC3_SGD, adam=FC3_ADAM) if "{" in a else a

    argvs = [[expand(a) for a in args] for args in I04_COMMANDS]
    for run in cli_batch(*argvs):
        if "--json" in run.args:
            json_lines(run)
    # and one real process for the plainest case: the summary of info
    cli("info", files["hostile"])


def test_hostile_slot_names_escaped_in_info_header_and_summary(files):
    run = cli("info", files["hostile"])
    assert run.status == 0, run
    assert b"\\x1b]0;pwned\\x07" in run.out, "slot name not shown escaped"
    summary = run.out.decode().strip().splitlines()[-1]
    assert "optimizer state" in summary and "\\x9b" in summary, summary


def test_safe_text_used_by_library_reprs():
    """A tester's next step: the library's own strings (repr, error messages) built from a
    hostile name must be printable as well when they reach a terminal via the CLI."""
    c = oc.load(oc.to_bytes(hostile_v2()))
    with pytest.raises(KeyError):
        c["\x1b]0;nope\x07"]
    assert "\x1b" not in repr(c) and all("\x1b" not in repr(t) for t in c.tensors)


# diff and JSON ---------------------------------------------------------------------------------


def test_diff_self_nan_state_equal_library_and_cli(files):
    a, b = oc.load(files["hostile"]), oc.load(files["hostile"])
    d = oc.diff(a, b)
    assert d.equal, d.to_dict()
    strict_json(json.dumps(d.to_dict(), allow_nan=False))
    text = cli("diff", files["hostile"], files["hostile"])
    (run,) = cli_batch(["diff", "--json", files["hostile"], files["hostile"]])
    assert text.status == 0 and run.status == 0, (text, run)
    json_lines(run)


def test_diff_differing_bytes_state_is_strict_json_exit_1(files):
    run = cli("diff", "--json", files["hostile"], files["hostile_b"])
    assert run.status == 1, run
    (obj,) = json_lines(run)
    assert obj, obj
    (run,) = cli_batch(["diff", files["hostile"], files["hostile_b"]])
    assert run.status == 1 and b"different" in run.out, run
    d = oc.diff(oc.load(files["hostile"]), oc.load(files["hostile_b"]))
    assert not d.equal
    strict_json(json.dumps(d.to_dict(), allow_nan=False))


def test_every_json_output_strict_on_nan_inf(files):
    runs = cli_batch(["info", "--json", files["hostile"]], ["validate", "--json",
                                                            files["hostile"]],
                     ["validate", "--json", "--strict", files["hostile"], files["png"]],
                     ["dump", "--layout", "--json", files["hostile"]],
                     ["dump", "--layout", "--json", files["png"]],
                     ["info", "--json", files["png"]],
                     ["diff", "--json", files["hostile"], files["plain"]])
    for run in runs:
        json_lines(run)  # strict: a bare NaN / Infinity token fails


def test_diff_json_nan_vs_number_and_inf_weights(tmp_path):
    """NaN learning rate against a number, infinite weights against finite: the max_abs /
    max_rel fields are non-finite, and must still be strict JSON."""
    a = Checkpoint(tensors=[Tensor(0, np.array([INF, 1.0], np.float32), dtype="float32",
                                   shape=(2,))], state=TrainingState(learning_rate=NAN))
    b = Checkpoint(tensors=[Tensor(0, np.array([1.0, NAN], np.float32), dtype="float32",
                                   shape=(2,))], state=TrainingState(learning_rate=0.1))
    oc.save(a, tmp_path / "a.ckpt")
    oc.save(b, tmp_path / "b.ckpt")
    run = cli("diff", "--json", "--rtol", "1e-3", tmp_path / "a.ckpt", tmp_path / "b.ckpt")
    assert run.status == 1, run
    json_lines(run)
    d = oc.diff(oc.load(tmp_path / "a.ckpt"), oc.load(tmp_path / "b.ckpt"))
    strict_json(json.dumps(d.to_dict(), allow_nan=False))


def test_real_file_equals_itself_with_model(files):
    names = [FC3_SGD, FC3_ADAM, files["micro"], files["wof"], files["v2"]]
    for run in cli_batch(*[["diff", "--json", "--model", FC3, n, n] for n in names],
                         *[["diff", n, n] for n in names]):
        assert run.status == 0, run


def test_diff_self_nan_payloads_and_negative_zero(tmp_path):
    """Two different NaN payloads in a state value or -0.0 vs 0.0: a file is still equal to
    itself (byte-identical), whatever the library's float equality says."""
    c = Checkpoint(tensors=[Tensor(0, np.frombuffer(b"\x01\x00\xc0\x7f\x00\x00\x00\x80",
                                                   np.float32).copy(), dtype="float32",
                                   shape=(2,))],
                   state=TrainingState(loss=-0.0, lr=NAN))
    oc.save(c, tmp_path / "n.ckpt")
    assert oc.diff(oc.load(tmp_path / "n.ckpt"), oc.load(tmp_path / "n.ckpt")).equal
    (run,) = cli_batch(["diff", tmp_path / "n.ckpt", tmp_path / "n.ckpt"])
    assert run.status == 0, run


def test_file_equals_its_conversions(files, tmp_path):
    """diff of a file against its lossless conversions (schema 2; the other dialect, paired by
    name through the model): equal, exit 0 (the differing facts are notes, not differences)."""
    runs = cli_batch(["diff", FC3_ADAM, files["v2"]], ["diff", "--json", FC3_ADAM, files["v2"]],
                     ["diff", "--model", FC3, FC3_ADAM, files["micro"]],
                     ["diff", "--json", "--model", FC3, files["micro"], FC3_ADAM])
    for run in runs:
        assert run.status == 0, run
    for run in runs[1::2]:
        json_lines(run)


# Inputs that are not regular files -------------------------------------------------------------


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.ckpt"
    os.mkfifo(path)
    return path


I06_FIFO_COMMANDS = [
        ["info", "{p}"], ["info", "--json", "{p}"], ["validate", "{p}"],
        ["validate", "--json", "{p}"], ["dump", "{p}"], ["dump", "--layout", "{p}"],
        ["dump", "--layout", "--json", "{p}"], ["diff", "{p}", "{real}"],
        ["convert", "{p}", "{tmp}/o.ckpt", "--to", "v2"], ["export", "{p}", "{tmp}/o.npz"],
        ["info", "--model", "{p}", "{real}"], ["convert", "{real}", "{tmp}/o.ckpt", "--to", "v1",
                                                "--dialect", "onert-micro", "--model", "{p}"],
        ["new", "--model", "{p}", "{tmp}/n.ckpt"], ["import", "{pnpz}", "{tmp}/i.ckpt"],
        ["import", "{psafe}", "{tmp}/i.ckpt"], ["edit", "{p}", "{tmp}/e.ckpt", "--step", "1"],
        ["bake", "{p}", "--model", "{model}", "{tmp}/b.circle"],
        ["bake", "{real}", "--model", "{p}", "{tmp}/b.circle"],
        ["diff", "--model", "{p}", "{real}", "{real}"],
]


def test_fifo_never_blocks_cli(fifo, tmp_path):
    """A FIFO as checkpoint, model, import input, in every command: refused at once (each
    run is a real process with a timeout), naming the path."""
    pnpz, psafe = tmp_path / "pipe.npz", tmp_path / "pipe.safetensors"
    os.mkfifo(pnpz)
    os.mkfifo(psafe)
    argvs = [[a.format(p=fifo, real=FC3_SGD, tmp=tmp_path, pnpz=pnpz, psafe=psafe, model=FC3)
              for a in args] for args in I06_FIFO_COMMANDS]
    for run in cli_batch(*argvs, timeout=30):
        assert run.status in (1, 2), run
        if "--json" not in run.args or run.err:
            assert run.error_code() is not None or b"cannot read" in run.out, run
        assert str(tmp_path).encode() in run.out + run.err, f"the path is not named: {run}"


def test_fifo_never_blocks_library(fifo, tmp_path):
    pnpz, psafe = tmp_path / "p.npz", tmp_path / "p.safetensors"
    os.mkfifo(pnpz)
    os.mkfifo(psafe)
    code = textwrap.dedent(f"""
        import onert_checkpoint as oc
        from onert_checkpoint import CheckpointError
        calls = [
            ("load", lambda: oc.load({str(fifo)!r})),
            ("load-nommap", lambda: oc.load({str(fifo)!r}, mmap=False)),
            ("open", lambda: oc.open({str(fifo)!r}).__enter__()),
            ("load-model", lambda: oc.load({str(FC3_SGD)!r}, model={str(fifo)!r})),
            ("circle", lambda: oc.CircleModel.load({str(fifo)!r})),
            ("npz", lambda: oc.from_npz({str(pnpz)!r})),
            ("safetensors", lambda: oc.from_safetensors({str(psafe)!r})),
            ("bind", lambda: oc.bind(oc.load({str(FC3_SGD)!r}), {str(fifo)!r})),
            ("new_checkpoint", lambda: oc.new_checkpoint({str(fifo)!r})),
            ("convert-model", lambda: oc.convert(oc.load({str(FC3_SGD)!r}), "v1",
                                                 dialect="onert-micro", model={str(fifo)!r})),
            ("model-dev-zero", lambda: oc.load({str(FC3_SGD)!r}, model="/dev/zero")),
        ]
        import os, threading

        def each(name, call):
            try:
                call()
                print(name, "returned", flush=True)
            except (CheckpointError, OSError) as exc:
                print(name, "ok", type(exc).__name__, flush=True)
            except Exception as exc:
                print(name, "ESCAPED", type(exc).__name__, exc, flush=True)

        for name, call in calls:  # a call that blocks is reported, and the rest still run
            th = threading.Thread(target=each, args=(name, call), daemon=True)
            th.start()
            th.join(5)
            if th.is_alive():
                print(name, "BLOCKED", flush=True)
        os._exit(0)
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=90, stdin=subprocess.DEVNULL)
    bad = [ln for ln in p.stdout.splitlines() if " ok " not in f"{ln} "]
    assert p.stdout.count("\n") == 11, p.stdout + p.stderr[-1000:]
    assert not bad, bad


SPECIAL_PATHS = ["/dev/null", "/dev/zero", "/proc/self/status", "/proc/self/maps",
                 "/sys/kernel/mm/transparent_hugepage/enabled", "/", "/proc/self/fd/0"]


def test_special_files_as_checkpoint_and_model():
    """Devices, /proc and /sys pseudo files, the root folder, stdin: as the checkpoint and as
    the model, an error at once (/dev/zero as the model must not be read forever)."""
    paths = [p for p in SPECIAL_PATHS if os.path.exists(p)]
    argvs = [["info", p] for p in paths]
    argvs += [["info", "--model", p, FC3_SGD] for p in ("/dev/zero", "/proc/self/status")]
    for run in cli_batch(*argvs, timeout=30):
        assert run.status in (1, 2), run
        assert run.error_code() in ("io_error", "bad_magic", "truncated_header",
                                    "model_mismatch"), run
    for p in paths:
        _, err = library_call(oc.load, p)
        assert err is not None, p


def test_symlink_chain_loop_and_dangling(tmp_path):
    a, b, c = tmp_path / "a.ckpt", tmp_path / "b.ckpt", tmp_path / "c.ckpt"
    b.symlink_to(FC3_SGD)
    a.symlink_to(b)
    assert len(oc.load(a)) == 6
    loop1, loop2 = tmp_path / "l1", tmp_path / "l2"
    loop1.symlink_to(loop2)
    loop2.symlink_to(loop1)
    _, err = library_call(oc.load, loop1)
    assert isinstance(err, OSError)
    c.symlink_to(tmp_path / "missing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "to-fifo.ckpt").symlink_to(fifo)
    ok = cli("info", a)
    bad = cli_batch(["info", loop1], ["info", c], ["info", tmp_path / "to-fifo.ckpt"],
                    timeout=30)
    assert ok.status == 0, ok
    for run in bad:
        one_error(run, 2, "io_error")


def test_mmap_false_and_auto_load_equal():
    ref = oc.load(FC3_ADAM)
    for mode in (False, "auto"):
        c = oc.load(FC3_ADAM, mmap=mode)
        assert oc.to_bytes(c) == oc.to_bytes(ref) == FC3_ADAM.read_bytes()


# save replaces whatever is at the path --------------------------------------------------------


def small() -> Checkpoint:
    return Checkpoint(tensors=[Tensor(0, np.arange(8, dtype=np.uint8))],
                      state=TrainingState(step=2, epoch=0))


def special_target(kind: str, tmp_path: Path, tag: str = "") -> Path:
    path = tmp_path / f"target-{kind}{tag}"
    if kind == "chardev":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
        (path / "inside").write_bytes(b"keep")
    elif kind == "socket":
        import socket

        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()
    return path


TARGET_KINDS = ["chardev", "fifo", "dir", "socket"]


def node(path: Path) -> tuple[int, int, int]:
    st = os.lstat(path)
    return st.st_mode, st.st_ino, st.st_rdev


WRITERS = ["save", "to_npz", "to_safetensors", "save-v1"]


def test_library_writers_refuse_special_targets(tmp_path):
    """save (v2, v1), to_npz, to_safetensors to a device node, FIFO, directory, socket: an
    OSError naming the path, the node untouched, no temporary left (a child process: a FIFO
    could block, a device could be replaced)."""
    folder = tmp_path / "w"
    folder.mkdir()
    targets = {f"{w}@{k}": special_target(k, folder, w) for w in WRITERS for k in TARGET_KINDS}
    before = {w: node(t) for w, t in targets.items()}
    code = textwrap.dedent(f"""
        import onert_checkpoint as oc
        c = oc.load({str(FC3_SGD)!r}); t = {{k: str(v) for k, v in {targets!r}.items()}}
        calls = {{"save": lambda t: oc.save(c, t), "to_npz": lambda t: oc.to_npz(c, t),
                 "to_safetensors": lambda t: oc.to_safetensors(c, t),
                 "save-v1": lambda t: oc.save(c, t, revision="v1", dialect="onert")}}
        for w, target in t.items():
            try:
                calls[w.split("@")[0]](target)
                print(w, "wrote", flush=True)
            except OSError as exc:
                print(w, "refused", exc.filename == target, ".tmp" in str(exc), flush=True)
            except Exception as exc:
                print(w, "ESCAPED", type(exc).__name__, str(exc)[:200], flush=True)
    """).replace("PosixPath", "str")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"a writer blocked; so far: {exc.stdout!r}")
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert lines == [f"{w} refused True False" for w in targets], lines
    for w, t in targets.items():
        assert node(t) == before[w], f"{w} changed the node"
        if w.endswith("@dir"):
            assert sorted(x.name for x in t.iterdir()) == ["inside"]
    assert sorted(x.name for x in folder.iterdir()) == sorted(t.name for t in targets.values())


CLI_WRITERS = ["convert", "export", "import", "new", "edit", "bake"]


def test_cli_writers_refuse_special_targets(tmp_path):
    """Every command that writes, to a device node, FIFO, directory, socket: exit 2 io_error
    naming the user's path (never a temporary), the node untouched, no temporary left."""
    folder = tmp_path / "w"
    folder.mkdir()
    npz = tmp_path / "in.npz"
    oc.to_npz(oc.load(FC3_SGD), npz)
    targets, argv = {}, {}
    for kind in TARGET_KINDS:
        for c in CLI_WRITERS:
            t = targets[f"{c}@{kind}"] = special_target(kind, folder,
                                                        c + (".npz" if c == "export" else ""))
            argv[f"{c}@{kind}"] = {
                "convert": ["convert", FC3_SGD, t, "--to", "v2"],
                "export": ["export", FC3_SGD, t],
                "import": ["import", npz, t],
                "new": ["new", "--model", FC3, t],
                "edit": ["edit", FC3_SGD, t, "--step", "3"],
                "bake": ["bake", FC3_SGD, "--model", FC3, t],
            }[c]
    before = {c: node(t) for c, t in targets.items()}
    first = cli(*argv["convert@chardev"], timeout=20)  # the case, a real process
    rest = [k for k in argv if k != "convert@chardev"]
    runs = dict(zip(["convert@chardev", *rest],
                    [first, *cli_batch(*[argv[k] for k in rest], timeout=40)]))
    problems = []
    for command, run in runs.items():
        if run.status != 2 or run.error_code() not in ("io_error", "unknown_format"):
            problems.append(f"{command}: exit {run.status}: {run.text.strip()[:200]}")
        elif b".tmp" in run.err:
            problems.append(f"{command}: names a temporary: {run.err!r}")
        if node(targets[command]) != before[command]:
            problems.append(f"{command}: the node was changed")
    assert not problems, "\n".join(problems)
    assert sorted(x.name for x in folder.iterdir()) == sorted(t.name for t in targets.values())


def test_symlink_chain_followed_and_kept(tmp_path):
    real = tmp_path / "real.ckpt"
    real.write_bytes(b"old")
    (tmp_path / "l1").symlink_to(real)
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    oc.save(oc.load(FC3_SGD), tmp_path / "l2")
    assert (tmp_path / "l2").is_symlink() and (tmp_path / "l1").is_symlink()
    assert real.read_bytes() == FC3_SGD.read_bytes()
    run = cli("convert", FC3_SGD, tmp_path / "l2", "--to", "v2")
    assert run.status == 0, run
    assert (tmp_path / "l2").is_symlink() and oc.load(real).revision == "v2"
    oc.to_npz(oc.load(FC3_SGD), tmp_path / "l2")
    assert (tmp_path / "l2").is_symlink() and zipfile.is_zipfile(real)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["l1", "l2", "real.ckpt"]


def test_symlink_to_device_refused(tmp_path):
    dev = special_target("chardev", tmp_path)
    link = tmp_path / "link.ckpt"
    link.symlink_to(dev)
    before = node(dev)
    _, err = library_call(oc.save, small(), link)
    assert isinstance(err, OSError), err
    assert node(dev) == before and link.is_symlink()
    one_error(cli("convert", FC3_SGD, link, "--to", "v2"), 2, "io_error")
    assert node(dev) == before and link.is_symlink()


# The process-wide umask --------------------------------------------------------------------


def test_save_and_exports_never_touch_umask(tmp_path, monkeypatch):
    calls = []
    real = os.umask

    def spy(mask: int) -> int:
        calls.append(mask)
        return real(mask)

    monkeypatch.setattr(os, "umask", spy)
    c = oc.load(FC3_ADAM)
    oc.save(c, tmp_path / "a.ckpt")
    oc.save(c, tmp_path / "a.ckpt", revision="v1", dialect="onert")
    oc.to_npz(c, tmp_path / "a.npz")
    oc.to_safetensors(c, tmp_path / "a.safetensors")
    oc.edit_file(tmp_path / "a.ckpt", tmp_path / "b.ckpt", step=3) if hasattr(
        oc, "edit_file") else None
    assert calls == [], f"the process umask was set: {calls}"


@pytest.mark.parametrize("mask", [0o077, 0o022])
def test_new_file_mode_follows_umask_in_a_child(mask, tmp_path):
    code = textwrap.dedent(f"""
        import os, threading, onert_checkpoint as oc
        os.umask({mask})
        c = oc.load({str(FC3_SGD)!r}); stop = False; made = []
        def other():
            i = 0
            while not stop:
                p = os.path.join({str(tmp_path)!r}, f"t{{i}}"); i += 1
                with open(p, "w"): pass
                made.append(os.stat(p).st_mode & 0o777); os.unlink(p)
        th = threading.Thread(target=other); th.start()
        for i in range(40):
            oc.save(c, os.path.join({str(tmp_path)!r}, "s.ckpt"))
            os.unlink(os.path.join({str(tmp_path)!r}, "s.ckpt"))
        oc.save(c, os.path.join({str(tmp_path)!r}, "s.ckpt"))
        stop = True; th.join()
        print(oct(os.stat(os.path.join({str(tmp_path)!r}, "s.ckpt")).st_mode & 0o777),
              sorted(set(map(oct, made))))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    want = oct(0o666 & ~mask)
    assert p.stdout.split()[0] == want, p.stdout
    assert p.stdout.split(None, 1)[1].strip() == f"['{want}']", p.stdout


# Lossless export/import -----------------------------------------------------------------------

ROUNDTRIP = ["hostile", "micro", "wof", "v2", "plain", "fc3-sgd", "fc3-adam", "fc3sq-adam",
             "fc2-adam", "origin-max", "v2-named"]


def roundtrip_file(name: str, files: dict[str, Path], tmp_path: Path) -> Path:
    if name in files:
        return files[name]
    if name.startswith("fc"):
        return DATA / f"{name}-step{'8' if name.startswith('fc2') else '12'}.ckpt"
    if name == "origin-max":
        return origin_file(tmp_path / "o.ckpt", 2**64 - 1)
    c = oc.load(FC3_ADAM, model=FC3)
    path = tmp_path / "named.v2"
    oc.save(oc.convert(c, "v2"), path)
    return path


@pytest.mark.parametrize("ext", ["npz", "safetensors"])
@pytest.mark.parametrize("name", ROUNDTRIP)
def test_export_import_lossless_library(name, ext, files, tmp_path):
    src = roundtrip_file(name, files, tmp_path)
    data = src.read_bytes()
    to, frm = (oc.to_npz, oc.from_npz) if ext == "npz" else (oc.to_safetensors,
                                                             oc.from_safetensors)
    _, err = library_call(to, oc.load(src), tmp_path / f"e.{ext}")
    assert err is None, f"export refused a valid file: {err}"
    back, err = library_call(frm, tmp_path / f"e.{ext}")
    assert err is None, f"import refused an export: {err}"
    assert oc.to_bytes(back) == data, f"{name}: {ext} round trip is not lossless"


def test_export_import_lossless_cli(files, tmp_path):
    names = ["hostile", "micro", "wof", "v2-named", "origin-max"]
    srcs = {n: roundtrip_file(n, files, tmp_path) for n in names}
    first = cli("export", srcs["hostile"], tmp_path / "hostile.npz")  # one real process
    assert first.status == 0, first
    exports = [["export", srcs[n], tmp_path / f"{n}.{ext}"] for n in names for ext in EXTS]
    for run in cli_batch(*exports):
        assert run.status == 0, run
    imports = [["import", tmp_path / f"{n}.{ext}", tmp_path / f"{n}-{ext}.ckpt"]
               for n in names for ext in EXTS]
    for run in cli_batch(*imports):
        assert run.status == 0, run
    for n in names:
        for ext in EXTS:
            assert (tmp_path / f"{n}-{ext}.ckpt").read_bytes() == srcs[n].read_bytes(), (n, ext)


def test_export_with_model_import_without_is_lossless(files, tmp_path):
    names = ["fc3-adam", "micro", "fc3-sgd"]
    srcs = {n: roundtrip_file(n, files, tmp_path) for n in names}
    for run in cli_batch(*[["export", "--model", FC3, srcs[n], tmp_path / f"{n}.{ext}"]
                           for n in names for ext in EXTS]):
        assert run.status == 0, run
    for run in cli_batch(*[["import", tmp_path / f"{n}.{ext}", tmp_path / f"{n}-{ext}.ckpt"]
                           for n in names for ext in EXTS]):
        assert run.status == 0, run
    for n in names:
        for ext in EXTS:
            assert (tmp_path / f"{n}-{ext}.ckpt").read_bytes() == srcs[n].read_bytes(), (n, ext)


def test_numpy_dict_roundtrip_hostile(files):
    data = files["hostile"].read_bytes()
    arrays, meta = oc.to_numpy_dict(oc.load(data), metadata=True)
    assert oc.to_bytes(oc.from_numpy_dict(arrays, meta)) == data


VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors"


def test_every_valid_vector_export_import_lossless_and_equal_to_itself(tmp_path):
    """'For every valid file of every revision': each valid conformance vector (schema 1 both
    dialects, footer-less, absent and empty entries, WOF, schema 2 with every dtype, number
    edges, sections), a 0-byte-entry file, an empty WOF and an empty schema 2: export/import
    in both formats gives back the same bytes, and diff says it equals itself."""
    cands = {"zero-size": v1_bytes(5, 0), "empty-wof": bytes.fromhex("ad01010000000000"),
             "empty-v2": oc.to_bytes(Checkpoint())}
    for p in sorted(VECTORS.glob("*.ckpt")):
        if not p.name.startswith("invalid"):
            cands[p.name] = p.read_bytes()
    assert len(cands) > 40, "the valid vectors were not found"
    problems = []
    for name, data in cands.items():
        c = oc.load(data)
        for to, frm, ext in ((oc.to_npz, oc.from_npz, "npz"),
                             (oc.to_safetensors, oc.from_safetensors, "safetensors")):
            try:
                to(c, tmp_path / f"x.{ext}")
                if oc.to_bytes(frm(tmp_path / f"x.{ext}")) != data:
                    problems.append(f"{name} {ext}: not lossless")
            except (CheckpointError, OSError) as exc:
                problems.append(f"{name} {ext}: refused: {exc}")
        if not oc.diff(c, oc.load(data)).equal:
            problems.append(f"{name}: differs from itself")
    assert not problems, "\n".join(problems)


# Dialect conversion without the model ---------------------------------------------------------


I10_CASES = [
    ("fc3-sgd", ["--to", "v1", "--dialect", "onert-micro"]),
    ("fc3-adam", ["--to", "v1", "--dialect", "onert-micro"]),
    ("fc3-sgd", ["--dialect", "onert-micro"]),
    ("micro", ["--to", "v1", "--dialect", "onert"]),
    ("micro", ["--dialect", "onert"]),
    ("v2", ["--to", "v1", "--dialect", "onert-micro"]),
    ("wof", ["--to", "v1", "--dialect", "onert"]),  # WOF is indexed as onert-micro is
]


def test_dialect_change_without_model_refused_cli(files, tmp_path):
    """The issue's command (a real process), then SGD and Adam inputs, the other direction,
    without --to, from schema 2 and WOF: exit 2 model_required naming --model, nothing
    written."""
    run = cli("convert", FC3_SGD, tmp_path / "y.ckpt", "--to", "v1", "--dialect", "onert-micro")
    assert "--model" in one_error(run, 2, "model_required")
    argvs = [["convert", roundtrip_file(src, files, tmp_path), tmp_path / f"y{i}.ckpt", *extra]
             for i, (src, extra) in enumerate(I10_CASES)]
    problems = []
    for run in cli_batch(*argvs):
        if run.status != 2 or run.error_code() != "model_required" or b"--model" not in run.err:
            problems.append(f"{run.args[1:]}: exit {run.status}: {run.text.strip()[:160]}")
    assert not problems, "\n".join(problems)
    assert not list(tmp_path.glob("y*.ckpt"))


def test_library_convert_and_save_refuse_dialect_change_without_model(files, tmp_path):
    c, a = oc.load(FC3_SGD), oc.load(FC3_ADAM)
    calls = {
        "convert(sgd)": lambda: oc.convert(c, "v1", dialect="onert-micro"),
        "convert(adam)": lambda: oc.convert(a, "v1", dialect="onert-micro"),
        "save(sgd, dialect=onert-micro)": lambda: oc.save(c, tmp_path / "s.ckpt", revision="v1",
                                                          dialect="onert-micro"),
        "to_bytes(sgd, dialect=onert-micro)": lambda: oc.to_bytes(c, revision="v1",
                                                                  dialect="onert-micro"),
        "to_bytes(micro, dialect=onert)": lambda: oc.to_bytes(oc.load(files["micro"]),
                                                              revision="v1", dialect="onert"),
    }
    problems = []
    for name, call in calls.items():
        try:
            call()
        except (CheckpointError, ValueError) as exc:
            if "model" not in str(exc):
                problems.append(f"{name}: refused without naming the model: {exc}")
        else:
            problems.append(f"{name}: written without the model")
    assert not problems, "\n".join(problems)
    assert not (tmp_path / "s.ckpt").exists()


def test_import_with_dialect_without_model(tmp_path):
    """Export an onert file, import it as onert-micro without the model: refused (or, if
    written, the result must still describe the same tensors as the model says)."""
    oc.to_npz(oc.load(FC3_SGD), tmp_path / "e.npz")
    run = cli("import", tmp_path / "e.npz", tmp_path / "y.ckpt", "--revision", "v1",
              "--dialect", "onert-micro")
    if run.status == 0:
        check = cli("validate", "--model", FC3, tmp_path / "y.ckpt")
        bound = oc.load(tmp_path / "y.ckpt", model=FC3)
        ref = oc.load(FC3_SGD, model=FC3)
        for t in ref.tensors:
            assert np.array_equal(bound[t.name].data, t.data), (t.name, check)
    else:
        err = one_error(run, 2)
        assert "--model" in err


def test_edit_dialect_without_model(tmp_path):
    run = cli("edit", FC3_SGD, tmp_path / "y.ckpt", "--to", "v1", "--dialect", "onert-micro",
              "--step", "1")
    if run.status == 0:
        bound = oc.load(tmp_path / "y.ckpt", model=FC3)
        ref = oc.load(FC3_SGD, model=FC3)
        for t in ref.tensors:
            assert np.array_equal(bound[t.name].data, t.data), t.name
    else:
        assert "--model" in one_error(run, 2)
        assert not (tmp_path / "y.ckpt").exists()


def test_onert_content_to_wof_without_model(tmp_path):
    """WOF entries are circle tensor indices, as onert-micro's are (format/convert.py
    content_dialect): writing onert content as WOF re-indexes it, which needs the model,
    exactly like --dialect onert-micro."""
    run = cli("convert", FC3_SGD, tmp_path / "x.wof", "--to", "wof", "--allow-lossy")
    assert "--model" in one_error(run, 2, "model_required")
    assert not (tmp_path / "x.wof").exists()
    try:
        oc.convert(oc.load(FC3_SGD), "wof", allow_lossy=True)
    except (CheckpointError, ValueError) as exc:
        assert "model" in str(exc)
    else:
        pytest.fail("oc.convert wrote onert content as WOF without the model")


TARGETS = [("v1", "onert"), ("v1", "onert-micro"), ("v1", None), ("wof", None), ("v2", None)]


@pytest.mark.parametrize("name", ["fc3-sgd", "fc3-adam", "micro", "wof", "v2", "v2-named"])
def test_convert_every_target_and_dialect_with_model(name, files, tmp_path):
    """Every target revision and dialect, with the model: only CheckpointError escapes; what
    is written loads, binds to the model with the same weights, and converts back to the
    very same bytes when nothing was dropped."""
    src = roundtrip_file(name, files, tmp_path)
    ref = oc.load(src, model=FC3)
    for revision, dialect in TARGETS:
        try:
            out = oc.convert(oc.load(src), revision, dialect=dialect, model=FC3)
        except CheckpointError as exc:
            assert exc.code in ("not_representable",), exc
            continue
        data = oc.to_bytes(out)
        back = oc.load(data, model=FC3)
        for t in ref.tensors:
            assert np.array_equal(back[t.name].data, t.data), (revision, dialect, t.name)
        adds_names = revision == "v2" and oc.load(src).tensors[0].name is None
        if revision == ref.revision and dialect in (None, ref.dialect) and not adds_names:
            assert data == src.read_bytes(), (revision, dialect)


# convert with --dialect and --model but no --to -----------------------------------------------


@pytest.mark.parametrize("src,dialect", [("fc3-sgd", "onert-micro"), ("micro", "onert")])
def test_convert_dialect_model_without_to(src, dialect, files, tmp_path):
    path = roundtrip_file(src, files, tmp_path)
    out = tmp_path / "y.ckpt"
    # --batch-size 1: the Adam export trained one sample per step (Adam's units, SPEC 9.3)
    run = cli("convert", path, out, "--dialect", dialect, "--model", FC3, "--batch-size", "1")
    assert run.status == 0, run
    got = oc.load(out)
    # an onert Adam file is byte-for-byte a valid onert-micro file: detected as "either"
    assert got.revision == "v1" and got.dialect in (dialect, None), got
    back = tmp_path / "back.ckpt"
    other = "onert" if dialect == "onert-micro" else "onert-micro"
    check, conv = cli_batch(["validate", "--model", FC3, out],
                            ["convert", out, back, "--dialect", other, "--model", FC3,
                             "--batch-size", "1"])
    assert check.status == 0 and conv.status == 0, (check, conv)
    assert back.read_bytes() == path.read_bytes(), "dialect round trip not exact"


def test_convert_same_revision_no_options_is_identity(files, tmp_path):
    names = ("fc3-adam", "micro", "wof", "v2", "hostile", "origin-max")
    paths = {n: roundtrip_file(n, files, tmp_path) for n in names}
    for run in cli_batch(*[["convert", paths[n], tmp_path / f"{n}.same"] for n in names]):
        assert run.status == 0, run
    for n in names:
        assert (tmp_path / f"{n}.same").read_bytes() == paths[n].read_bytes(), n


@pytest.mark.parametrize("name", ["fc3-adam", "micro", "fc3-sgd"])
def test_lossless_revision_round_trips(name, files, tmp_path):
    path = roundtrip_file(name, files, tmp_path)
    c = oc.load(path)
    up = oc.to_bytes(oc.convert(c, "v2"))
    down = oc.convert(oc.load(up), "v1")
    assert oc.to_bytes(down) == path.read_bytes()


def test_dialect_on_v2_input_without_to(files, tmp_path):
    run = cli("convert", files["v2"], tmp_path / "y.ckpt", "--dialect", "onert-micro",
              "--model", FC3)
    if run.status == 0:
        assert oc.load(tmp_path / "y.ckpt").dialect in ("onert-micro", None)
    else:
        one_error(run, run.status)


def test_hints_name_options_the_command_has(tmp_path):
    """A refused lossy write advises an option: the command given must have it (import has no
    --allow-lossy; the model-error complaint about order='probe', for another command)."""
    oc.to_npz(oc.load(FC3_ADAM), tmp_path / "e.npz")
    runs = cli_batch(["import", tmp_path / "e.npz", tmp_path / "o.wof", "--revision", "wof"],
                     ["convert", FC3_ADAM, tmp_path / "o2.wof", "--to", "wof"],
                     ["edit", FC3_ADAM, tmp_path / "o3.wof", "--to", "wof", "--step", "1"])
    from onert_checkpoint.tools.cli import build_parser

    parser = build_parser()
    for run in runs:
        assert run.status in (1, 2), run
        command = run.args[0]
        sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        options = {o for action in sub._actions for o in action.option_strings}
        for hint in re.findall(r"(--[a-z][a-z-]*)", run.err.decode()):
            assert hint in options, f"{command} advises {hint}, an option it does not have: {run}"


# Model errors --------------------------------------------------------------------------------


def test_checkpoint_of_another_model_is_model_mismatch(tmp_path):
    """The issue's command (a real process), then every command that takes --model."""
    runs = [cli("info", FC3SQ_ADAM, "--model", FC3)]
    runs += cli_batch(
        ["info", "--json", "--model", FC3, FC3SQ_ADAM], ["validate", "--model", FC3, FC3SQ_ADAM],
        ["validate", "--json", "--model", FC3, FC3SQ_ADAM], ["dump", "--model", FC3, FC3SQ_ADAM],
        ["export", "--model", FC3, FC3SQ_ADAM, tmp_path / "e.npz"],
        ["diff", "--model", FC3, FC3SQ_ADAM, FC3SQ_ADAM],
        ["convert", FC3SQ_ADAM, tmp_path / "c.ckpt", "--dialect", "onert-micro", "--model", FC3],
        ["bake", FC3SQ_ADAM, "--model", FC3, tmp_path / "b.circle"],
        ["edit", FC3SQ_ADAM, tmp_path / "e.ckpt", "--model", FC3, "--step", "1"],
    )
    for run in runs:
        assert run.status == 1, run
        text = run.text
        assert "model_mismatch" in text, text
        assert "ambiguous" not in text and "order=" not in text and "probe" not in text, text
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_library_bind_wrong_model():
    _, err = library_call(oc.load, FC3SQ_ADAM, model=FC3)
    assert isinstance(err, CheckpointError) and err.code == "model_mismatch", err
    assert "order=" not in err.message


BAD_MODELS = ["missing", "dir", "fifo", "empty", "png", "ckpt", "devnull"]


def test_bad_model_files(tmp_path):
    """--model naming a missing file, a directory, a FIFO, /dev/null (I/O errors: exit 2
    io_error naming the path, like a missing checkpoint), an empty file, a PNG, a checkpoint
    (not a model: exit 1 with the project's code), for info, validate, convert, export."""
    paths = {}
    for model in BAD_MODELS:
        path = paths[model] = tmp_path / f"{model}.circle"
        if model == "dir":
            path.mkdir()
        elif model == "fifo":
            os.mkfifo(path)
        elif model == "empty":
            path.write_bytes(b"")
        elif model == "png":
            path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
        elif model == "ckpt":
            path.write_bytes(FC3_SGD.read_bytes())
        elif model == "devnull":
            paths[model] = Path(os.devnull)
    first = cli("info", "--model", paths["missing"], FC3_SGD)  # the case
    cases = [(m, [c, "--model", paths[m], FC3_SGD]) for m in BAD_MODELS
             for c in ("info", "validate")]
    cases += [(m, ["convert", FC3_SGD, tmp_path / "o.ckpt", "--to", "v1", "--dialect",
                   "onert-micro", "--model", paths[m]]) for m in BAD_MODELS]
    cases += [(m, ["export", "--model", paths[m], FC3_SGD, tmp_path / "o.npz"])
              for m in BAD_MODELS]
    runs = [first, *cli_batch(*[argv for _, argv in cases[1:]], timeout=40)]
    problems = []
    for (model, argv), run in zip(cases, runs):
        if model in ("missing", "dir", "fifo", "devnull"):
            if run.status != 2 or run.error_code() != "io_error" or \
                    str(paths[model]).encode() not in run.err:
                problems.append(f"{model} {argv[0]}: exit {run.status}: {run.text.strip()[:200]}")
        elif run.status != 1 or run.error_code() in (None, "io_error"):
            problems.append(f"{model} {argv[0]}: exit {run.status}: {run.text.strip()[:200]}")
    assert not problems, "\n".join(problems)
    assert not (tmp_path / "o.ckpt").exists() and not (tmp_path / "o.npz").exists()


# Messages name the user's paths, not internals --------------------------------------------------


WRITING = ["convert", "export-npz", "export-safetensors", "import", "new", "edit", "bake"]
WHERE = ["missing-folder", "directory", "empty", "file-as-folder"]


def test_unwritable_outputs_name_the_users_path(tmp_path):
    """Every command that writes, to a missing folder, a directory, the empty path, a path
    under a regular file: exit 2, one line naming the user's path (usage_error for the empty
    path), never an internal temporary name; nothing left behind."""
    npz = tmp_path / "in.npz"
    oc.to_npz(oc.load(FC3_SGD), npz)
    suffix = {"export-npz": ".npz", "export-safetensors": ".safetensors", "bake": ".circle"}
    (tmp_path / "plainfile").write_bytes(b"x")
    cases = []
    for command in WRITING:
        for where in WHERE:
            name = f"out-{command}" + suffix.get(command, ".ckpt")
            if where == "missing-folder":
                out = str(tmp_path / "no" / "such" / name)
            elif where == "directory":
                (tmp_path / name).mkdir()
                out = str(tmp_path / name)
            elif where == "file-as-folder":
                out = str(tmp_path / "plainfile" / name)
            else:
                out = ""
            argv = {
                "convert": ["convert", FC3_SGD, out, "--to", "v2"],
                "export-npz": ["export", FC3_SGD, out],
                "export-safetensors": ["export", FC3_SGD, out],
                "import": ["import", npz, out],
                "new": ["new", "--model", FC3, out],
                "edit": ["edit", FC3_SGD, out, "--step", "1"],
                "bake": ["bake", FC3_SGD, "--model", FC3, out],
            }[command]
            cases.append((command, where, out, argv))
    before = sorted(p.name for p in tmp_path.iterdir())
    first = cli(*cases[0][3])  # the case in a real process: convert, missing folder
    runs = [first, *cli_batch(*[argv for *_, argv in cases[1:]])]
    problems = []
    for (command, where, out, _), run in zip(cases, runs):
        err = run.err.decode("utf-8", "replace")
        want = "usage_error" if where == "empty" else None
        if run.status != 2 or run.error_code() is None or (want and run.error_code() != want):
            problems.append(f"{command} {where}: exit {run.status}: {err.strip()[:200]}")
        elif where != "empty" and out not in err:
            problems.append(f"{command} {where}: the user's path is not named: {err.strip()}")
        elif ".tmp" in err:
            problems.append(f"{command} {where}: names an internal temporary: {err.strip()}")
    assert not problems, "\n".join(problems)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


FOREIGN = [("png", None, "png"), ("npz", "import", "zip"), ("safetensors", "import",
                                                               "safetensors"),
           ("gguf", None, "gguf"), ("circle", "--model", "circle")]


def test_foreign_files_as_checkpoint_say_what_they_are(files, tmp_path):
    """A PNG, npz, safetensors, GGUF, circle model given as the checkpoint, to info (a real
    process), validate, diff, convert, export, dump: bad_magic saying what the file looks
    like, and what to do (import; --model)."""
    argvs = []
    for kind, _, _ in FOREIGN:
        path = FC3 if kind == "circle" else files[kind]
        argvs += [["info", path], ["validate", path], ["diff", path, FC3_SGD],
                  ["convert", path, tmp_path / "o.ckpt", "--to", "v2"],
                  ["export", path, tmp_path / "o.npz"], ["dump", path]]
    runs = [cli(*argvs[0]), *cli_batch(*argvs[1:])]
    problems = []
    for i, run in enumerate(runs):
        _, hint, label = FOREIGN[i // 6]
        text = run.text
        if run.status != 1 or "bad_magic" not in text:
            problems.append(f"{run.args}: exit {run.status}: {text.strip()[:200]}")
        elif label not in text.lower() or (hint is not None and hint not in text):
            problems.append(f"{run.args}: does not say it looks like {label} / {hint}: {text}")
    assert not problems, "\n".join(problems)
    assert not (tmp_path / "o.ckpt").exists() and not (tmp_path / "o.npz").exists()


def test_foreign_files_library_message(files):
    for kind in ("npz", "safetensors", "png"):
        _, err = library_call(oc.load, files[kind])
        assert isinstance(err, CheckpointError) and err.code == "bad_magic"
        assert "looks like" in err.message or "is a" in err.message or kind in err.message, err


DUMP_KEYS = ["w1", "b0", "\x1b]0;x\x07", "99", "-1", "1.5", "", "00", "\u0661"]


def test_dump_unknown_tensor_hints_and_lists():
    """``dump --tensor w1`` without --model (a real process), then other keys that name no
    entry: no_such_tensor listing the entries, hinting --model for names."""
    runs = [cli("dump", "--tensor", "w1", FC3_SGD)]
    runs += cli_batch(*[["dump", "--tensor", key, FC3_SGD] for key in DUMP_KEYS[1:]],
                      ["dump", "--tensor", "w1", "--slot", "m", FC3_ADAM],
                      ["dump", "--slot", "\x1b]0;x\x07", FC3_ADAM])
    for key, run in zip([*DUMP_KEYS, "w1", "slot"], runs):
        if key == "00" and run.status == 0:  # read as entry 0: fine
            continue
        err = one_error(run, run.status)
        assert run.status in (1, 2), run
        assert run.error_code() in ("no_such_tensor", "no_such_slot", "usage_error"), run
        if key in ("w1", "b0"):
            assert "--model" in err and "0, 1" in err, err


def test_dump_tensor_name_with_model_works():
    run = cli("dump", "--model", FC3, "--tensor", "w1", FC3_SGD)
    assert run.status == 0 and b"w1" in run.out, run


def test_dump_json_without_layout_prints_values_as_strict_json():
    for run in cli_batch(["dump", "--json", FC3_SGD],
                         ["dump", "--json", "--tensor", "0", FC3_SGD],
                         ["dump", "--json", "--model", FC3, FC3_SGD],
                         ["dump", "--json", "--slot", "m", FC3_ADAM]):
        assert run.status == 0, run
        assert json.loads(run.out)["entries"], run


def test_library_save_errors_name_user_path(tmp_path):
    for target in (tmp_path / "missing" / "x.ckpt", tmp_path):
        _, err = library_call(oc.save, small(), target)
        assert isinstance(err, OSError)
        assert str(target) in str(err) and ".tmp" not in str(err), err
    for writer in (oc.to_npz, oc.to_safetensors):
        _, err = library_call(writer, small(), tmp_path / "missing" / "x.bin")
        assert isinstance(err, OSError), err
        assert ".tmp" not in str(err), err
    try:
        oc.save(small(), "")
    except (ValueError, OSError) as exc:
        assert "empty" in str(exc) or exc.__class__ is FileNotFoundError
    else:
        pytest.fail("saved to the empty path")


# Checked assignment -----------------------------------------------------------------------------


def bound() -> Checkpoint:
    return oc.load(FC3_ADAM, model=FC3)


BAD_VALUES = {
    "float64-wrong-shape": lambda: np.ones((8, 4), np.float64),
    "float32-transposed-shape": lambda: np.ones((6, 7), np.float32),
    "list-wrong-shape": lambda: [[1.0] * 4] * 8,
    "ragged-list": lambda: [[1.0] * 6] * 6 + [[1.0]],
    "0-d": lambda: np.array(1.0, np.float32),
    "int-lossy": lambda: np.full((7, 6), 2**40 + 1, np.int64),
    "float64-lossy": lambda: np.full((7, 6), 0.1, np.float64),
    "string": lambda: "hello",
    "object": lambda: np.array([object()] * 42, dtype=object).reshape(7, 6),
    "none": lambda: None,
    "bytes-wrong-size": lambda: b"\x00" * 10,
    "complex": lambda: np.full((7, 6), 1 + 1j, np.complex64),
    "float64-overflow": lambda: np.full((7, 6), 1e300),
}


@pytest.mark.parametrize("bad", list(BAD_VALUES))
@pytest.mark.parametrize("target", ["weight", "m", "v"])
def test_bound_assignment_checked_and_named(bad, target):
    c = bound()
    entry = c["w0"] if target == "weight" else c.slot(target, "w0")
    before = np.array(entry.data, copy=True)
    try:
        entry.data = BAD_VALUES[bad]()
    except CheckpointError as exc:
        assert "w0" in str(exc) or "entry 5" in str(exc), exc
    else:
        pytest.fail(f"{target} of w0 took {bad}")
    assert np.array_equal(entry.data, before)
    assert oc.to_bytes(c) == FC3_ADAM.read_bytes(), "a refused assignment changed the file"


@pytest.mark.parametrize("value", ["non-contiguous", "float64-exact", "list-exact", "fortran"])
def test_bound_assignment_of_good_values_round_trips(value, tmp_path):
    c = bound()
    want = np.arange(42, dtype=np.float32).reshape(7, 6) / 8
    new = {"non-contiguous": np.ascontiguousarray(want.T).T,
           "float64-exact": want.astype(np.float64),
           "list-exact": want.tolist(),
           "fortran": np.asfortranarray(want)}[value]
    c["w0"].data = new
    c.slot("m", "w0").data = new
    oc.save(c, tmp_path / "a.ckpt")
    back = oc.load(tmp_path / "a.ckpt", model=FC3)
    assert np.array_equal(back["w0"].data, want)
    assert np.array_equal(back.slot("m", "w0").data, want)
    assert back.slot("m", "w0").data.dtype == np.float32


@pytest.mark.parametrize("bad", ["wrong-size", "list-floats", "object", "none"])
def test_unbound_assignment_checked(bad):
    c = oc.load(FC3_ADAM)
    entry = c[5]
    value = {"wrong-size": np.ones(10, np.float32), "list-floats": [0.5] * 168,
             "object": np.array([object()] * 168, dtype=object), "none": None}[bad]
    with pytest.raises(CheckpointError) as info:
        entry.data = value
    assert "5" in str(info.value)
    assert oc.to_bytes(c) == FC3_ADAM.read_bytes()


def test_unbound_same_size_typed_array_round_trips(tmp_path):
    c = oc.load(FC3_ADAM)
    new = np.linspace(0, 1, 42, dtype=np.float32)
    c[5].data = new
    oc.save(c, tmp_path / "a.ckpt")
    back = oc.load(tmp_path / "a.ckpt", model=FC3)
    assert np.array_equal(back["w0"].data.reshape(-1), new)


def test_assigned_file_loads_with_its_model(tmp_path):
    """The issue's exact sequence with a shape-compatible but mistyped array: either refused,
    or the written file loads with its model."""
    c = bound()
    try:
        c["w0"].data = np.ones((7, 6), np.float16)
    except CheckpointError:
        pass
    oc.save(c, tmp_path / "a.ckpt")
    oc.load(tmp_path / "a.ckpt", model=FC3)


def test_edit_replace_checks_like_assignment(tmp_path):
    """Assignment through the command line (``edit --replace KEY=FILE.npy``): a pickled object
    array (never unpickled), a wrong dtype and shape, a header claiming 10**11 elements, an
    untyped entry, a missing file: one error line, nothing written; a good array works."""
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}] * 42, dtype=object).reshape(7, 6),
            allow_pickle=True)
    np.save(tmp_path / "f64.npy", np.ones((8, 4)))
    np.save(tmp_path / "ok.npy", np.full((7, 6), 0.25, np.float32))
    (tmp_path / "huge.npy").write_bytes(
        b"\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, "
        b"'shape': (100000000000,), }      \n")
    bad = ["obj", "f64", "huge", "missing"]
    argvs = [["edit", FC3_ADAM, tmp_path / f"{b}.ckpt", "--model", FC3, "--replace",
              f"w0={tmp_path / (b + '.npy')}"] for b in bad]
    argvs += [["edit", FC3_ADAM, tmp_path / "raw.ckpt", "--replace", f"5={tmp_path / 'f64.npy'}"],
              ["edit", FC3_ADAM, tmp_path / "good.ckpt", "--model", FC3, "--replace",
               f"w0={tmp_path / 'ok.npy'}"]]
    runs = cli_batch(*argvs, limit_as=2 << 30)
    for run in runs[:-1]:
        assert run.status in (1, 2) and run.error_code() is not None, run
    assert runs[-1].status == 0, runs[-1]
    assert sorted(p.name for p in tmp_path.glob("*.ckpt")) == ["good.ckpt"]
    got = oc.load(tmp_path / "good.ckpt", model=FC3)
    assert np.array_equal(got["w0"].data, np.full((7, 6), 0.25, np.float32))


# Mapped files changed after load ------------------------------------------------------------------


@pytest.mark.parametrize("path", ["v1", "v2", "wof"])
def test_copying_load_survives_truncation_and_rewrite(path, files, tmp_path):
    src = {"v1": FC3_ADAM, "v2": files["v2"], "wof": files["wof"]}[path]
    victim = tmp_path / "victim.ckpt"
    victim.write_bytes(src.read_bytes())
    code = textwrap.dedent(f"""
        import os, numpy as np, onert_checkpoint as oc
        p = {str(victim)!r}
        c = oc.load(p, mmap=False)
        first = [np.array(t.data, copy=True) for t in c.tensors]
        with open(p, "r+b") as f:
            f.truncate(0)
        ok = all(np.array_equal(a, t.data) for a, t in zip(first, c.tensors))
        c2 = oc.load({str(src)!r}, mmap=False)
        views = [t.data for t in c2.tensors]
        print("truncated-ok", ok, sum(v.nbytes for v in views))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"child died ({p.returncode}): {p.stderr[-800:]}"
    assert "truncated-ok True" in p.stdout, p.stdout


def test_copying_load_not_changed_by_inplace_write(tmp_path):
    victim = tmp_path / "victim.ckpt"
    victim.write_bytes(FC3_ADAM.read_bytes())
    c = oc.load(victim, mmap=False)
    before = np.array(c[5].data, copy=True)
    with open(victim, "r+b") as f:
        f.seek(c[5].offset)
        f.write(b"\xff" * c[5].nbytes)
    assert np.array_equal(c[5].data, before)


def test_mapped_v2_written_in_place_is_detected_on_first_access(files, tmp_path):
    """A mapped schema-2 file written in place after load: the first data access checks the
    data section's CRC and refuses, instead of handing out the changed bytes."""
    victim = tmp_path / "victim.v2"
    victim.write_bytes(files["v2"].read_bytes())
    c = oc.load(victim)
    with open(victim, "r+b") as f:
        f.seek(c.tensors[0].offset)
        f.write(b"\xff\xff\xff\xff")
    with pytest.raises(CheckpointError):
        _ = c.tensors[0].data


@pytest.mark.parametrize("command", ["info", "dump", "validate", "export", "diff", "convert"])
def test_cli_file_truncated_after_load_no_sigbus(command, files, tmp_path):
    """A truncated input cannot kill the command line: the file is truncated by someone else
    right after the CLI loaded it (made deterministic: the child's ``cli.load`` truncates the
    file once the real load returns). A copying read (cheap for small files) leaves the
    command working; a mapped one dies of SIGBUS (the same happens for real: ``validate`` of
    a 27 MB file killed by ``truncate`` from another shell, exit -7, every time)."""
    victim = tmp_path / "victim.ckpt"
    victim.write_bytes((files["v2"] if command == "convert" else FC3_ADAM).read_bytes())
    argv = {"info": ["info", victim], "dump": ["dump", victim], "validate": ["validate", victim],
            "export": ["export", victim, tmp_path / "e.npz"], "diff": ["diff", victim, FC3_ADAM],
            "convert": ["convert", victim, tmp_path / "o.ckpt", "--to", "v1"]}[command]
    code = textwrap.dedent(f"""
        import os, sys
        from onert_checkpoint.tools import cli
        real = cli.load
        def load_then_truncate(*args, **kwargs):
            ckpt = real(*args, **kwargs)
            if str(args[0]) == {str(victim)!r}:
                os.truncate(args[0], 0)
            return ckpt
        cli.load = load_then_truncate
        sys.exit(cli.main({[str(a) for a in argv]!r}))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert p.returncode in (0, 1, 2), f"killed by signal {-p.returncode}: {p.stderr[-500:]!r}"
    check_run([str(a) for a in argv], p.returncode, p.stdout, p.stderr)


def test_arrays_kept_after_open_exits(tmp_path):
    """Arrays taken inside ``with oc.open(...)`` and used after it closed the file, and after
    the file was removed: still the bytes that were read, no crash (a child: a view on an
    unmapped region would kill the process)."""
    victim = tmp_path / "victim.ckpt"
    victim.write_bytes(FC3_ADAM.read_bytes())
    code = textwrap.dedent(f"""
        import os, numpy as np, onert_checkpoint as oc
        ref = oc.load({str(FC3_ADAM)!r}, mmap=False)
        with oc.open({str(victim)!r}) as c:
            arr, raw = c[5].data, c.slot("m", 5).raw
        os.unlink({str(victim)!r})
        print(bool(np.array_equal(arr, ref[5].data)),
              bool(np.array_equal(raw, ref.slot("m", 5).raw)))
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, f"exit {p.returncode}: {p.stderr[-500:]}"
    assert p.stdout.split() == ["True", "True"], p.stdout


def test_cli_survives_truncation_race(tmp_path):
    """The CLI reads files it is given: truncate one while many ``info``/``validate`` runs read
    it; none may die of SIGBUS (status must stay 0, 1 or 2: cli() checks)."""
    victim = tmp_path / "victim.ckpt"
    data = FC3_ADAM.read_bytes() * 1
    victim.write_bytes(data)
    procs = [subprocess.Popen([sys.executable, "-m", "onert_checkpoint", cmd, str(victim)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for cmd in ("info", "validate", "dump")]
    for _ in range(200):
        victim.write_bytes(b"")
        victim.write_bytes(data)
    for p in procs:
        _out, err = p.communicate(timeout=60)
        assert p.returncode in (0, 1, 2), (p.returncode, err[-500:])
        assert b"Traceback" not in err, err


IMPORT_INPUTS = ["truncated-npz", "truncated-safetensors", "garbage-npz", "pickle-npz",
                 "huge-header-safetensors", "empty-npz", "nan-metadata-safetensors",
                 "png-as-npz", "ckpt-as-safetensors"]


def test_hostile_import_inputs(tmp_path):
    """Import reads untrusted files too: only CheckpointError/OSError from the library, one
    error line from the command line (never a zipfile, pickle or safetensors exception)."""
    raws = {}
    for ext in EXTS:
        good = tmp_path / f"good.{ext}"
        (oc.to_npz if ext == "npz" else oc.to_safetensors)(oc.load(FC3_ADAM), good)
        raws[ext] = good.read_bytes()
    paths = {}
    for kind in IMPORT_INPUTS:
        ext = "npz" if "npz" in kind else "safetensors"
        path = paths[kind] = tmp_path / f"{kind}.{ext}"
        raw = raws[ext]
        if kind.startswith("truncated"):
            path.write_bytes(raw[: len(raw) // 2])
        elif kind == "garbage-npz":
            path.write_bytes(b"PK\x03\x04" + bytes(100))
        elif kind == "pickle-npz":
            np.savez(path, **{"0": np.array([{"a": 1}], dtype=object)})
        elif kind == "empty-npz":
            np.savez(path)
        elif kind == "huge-header-safetensors":
            path.write_bytes((2**62).to_bytes(8, "little") + b"{}")
        elif kind == "nan-metadata-safetensors":
            n = int.from_bytes(raw[:8], "little")
            head = raw[8:8 + n].replace(b'"__metadata__":{', b'"__metadata__":{"x":NaN,', 1)
            path.write_bytes(len(head).to_bytes(8, "little") + head + raw[8 + n:])
        elif kind == "png-as-npz":
            path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
        elif kind == "ckpt-as-safetensors":
            path.write_bytes(FC3_ADAM.read_bytes())
    problems = []
    for kind, path in paths.items():
        reader = oc.from_npz if path.suffix == ".npz" else oc.from_safetensors
        try:
            reader(path)
        except (CheckpointError, OSError):
            pass
        except Exception as exc:
            problems.append(f"{kind}: {type(exc).__name__} escaped: {str(exc)[:160]}")
        else:
            if kind not in ("empty-npz", "nan-metadata-safetensors"):
                problems.append(f"{kind}: read without an error")
    runs = cli_batch(*[["import", p, tmp_path / f"{k}.ckpt"] for k, p in paths.items()])
    for kind, run in zip(paths, runs):
        if run.status == 0 and kind not in ("empty-npz", "nan-metadata-safetensors"):
            problems.append(f"{kind}: imported: {run.out!r}")
    assert not problems, "\n".join(problems)
