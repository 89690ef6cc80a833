"""``onert-ckpt conformance``: run another reader on every conformance vector and corpus case.

A reader conforms when, for each file, it prints TOOLKIT.md section 1's JSON description: for a
valid file an object equal to the vector's, for an invalid one ``{"error": {...}}`` with the
vector's ``code``, ``field`` and ``offset`` (``message`` is free text). The comparison is as strict
about JSON types as TOOLKIT 1 is: integers exactly (u64 offsets exceed 2^53), other numbers as
binary64 bits (``-0.0`` is not ``0.0``, ``1.0`` not ``1``), ``true`` not ``1``.

A reader MAY skip schema 3's optional section kinds as unknown kinds (``--skips-kind``); the
vectors whose result depends on them are then judged by spec/vectors/optional-kinds.ndjson.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import math
import os
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from onert_checkpoint_generated import layout

from ..format.revisions import registry
from ..format.source import open_source
from .cli_common import EXIT_INVALID, EXIT_OK, CliError, count_arg
from .render import safe_text

__all__ = ["Case", "Outcome", "cmd_conformance", "compare", "conformance_arguments",
           "corpus_cases", "run_case", "skipping_expectations", "vector_cases"]

#: The folders of a source checkout, found from this file (src/onert_checkpoint/tools/).
_CHECKOUT = Path(__file__).resolve().parents[3]

#: The revisions of each conformance profile (SPEC.md section 10; micro: schema 3, the recommended).
PROFILES = {"micro": frozenset({registry.RECOMMENDED.name}), "full": frozenset(registry.names())}
#: The optional section kinds a reader may skip as unknown kinds (SPEC.md 7.4, 7.5, 10).
OPTIONAL_KINDS = {layout.V3_DATA_BLOCKS_KIND: "data_blocks",
                  layout.V3_RANGE_INDEX_KIND: "range_index"}
#: What a reader that skips optional kinds gives, where it differs (beside the vectors).
SKIPPING_TABLE = "optional-kinds.ndjson"


@dataclass(frozen=True)
class Case:
    """One file and what a conforming reader prints for it."""

    #: ``vector <name>`` or ``corpus <name>``
    name: str
    path: Path
    #: a vector's whole JSON; for the corpus ``{"error": {"code", "field", "offset"}}`` or
    #: ``{"revision": ..., "dialect": ...}`` (the corpus records only those of a valid file)
    expect: dict[str, Any]
    #: the rule the case tests, as its vector table or corpus manifest says
    rule: str
    #: False for corpus cases of valid files: only revision and dialect are compared
    whole: bool = True


@dataclass
class Outcome:
    case: Case
    #: None when the reader agrees; else what differs, in one line
    disagreement: str | None = None
    #: the reader printed more than the limit: what it printed was cut there
    truncated: bool = False


#: The largest vector description, vector table or corpus manifest read (each is a few kB to a
#: few hundred kB; a bigger one is refused, not read into memory).
FILE_LIMIT = 16 << 20


def _read_head(path: Path, size: int) -> bytes:
    """At most the first ``size`` bytes of the regular file ``path``; anything else is refused
    unread (``open_source``: an OSError naming the path, io_error, exit 2)."""
    with open_source(path) as view:
        return bytes(view[:size])


def _bad_file(path: Path, why: str) -> CliError:
    return CliError("usage_error", f"{safe_text(str(path))}: {why}")


def _read_json(path: Path, *, lines: bool = False) -> Any:
    """The JSON value of ``path`` (with ``lines``, its lines' values); a file that is not JSON,
    not UTF-8, or larger than FILE_LIMIT is a usage error naming it."""
    raw = _read_head(path, FILE_LIMIT + 1)
    if len(raw) > FILE_LIMIT:
        raise _bad_file(path, f"larger than {FILE_LIMIT} bytes: not a conformance file")
    try:
        text = raw.decode("utf-8")
        if lines:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise _bad_file(path, f"not JSON: {safe_text(str(err) or type(err).__name__)}") from None


def _rules_of_readme(readme: Path) -> dict[str, str]:
    """Vector name -> the last column of its row in spec/vectors/README.md (the rule an
    invalid vector tests, or what a valid one shows)."""
    rules: dict[str, str] = {}
    if not readme.is_file():
        return rules
    for line in _read_head(readme, FILE_LIMIT).decode("utf-8", "replace").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`") and cells[0].endswith("`"):
            rules[cells[0].strip("`")] = cells[-1]
    return rules


def _expectation(value: Any, where: Path, what: str) -> dict[str, Any]:
    """``value`` if it is what a case expects: an object, whose ``error`` (if any) is an
    object with ``code``, ``field`` and ``offset``; else a usage error naming ``where``."""
    error = value.get("error", {}) if isinstance(value, dict) else None
    if not isinstance(error, dict) or ("error" in value and not {"code", "field", "offset"}
                                       <= set(error)):
        raise _bad_file(where, f"{what} is not an object, or its error lacks code, field or "
                        "offset (TOOLKIT.md section 1)")
    return value


def skipping_expectations(folder: Path) -> dict[tuple[str, frozenset[int]], dict[str, Any]]:
    """(vector name, the optional kinds a reader skips) -> what that reader gives, for every
    line of ``folder``'s optional-kinds.ndjson (absent: none)."""
    table = folder / SKIPPING_TABLE
    if not table.exists():
        return {}
    found = {}
    for i, row in enumerate(_read_json(table, lines=True)):
        try:
            key = (str(row["vector"]), frozenset(int(k, 16) for k in row["skips"]))
        except (TypeError, KeyError, ValueError):
            raise _bad_file(table, f"line {i + 1}: not {{\"vector\": NAME, \"skips\": "
                            "[HEX, ...], \"expect\": {...}}") from None
        found[key] = _expectation(row.get("expect"), table, f"line {i + 1}'s expect")
    return found


def vector_cases(folder: Path, skips: frozenset[int] = frozenset()) -> list[Case]:
    """Every ``<name>.ckpt`` of ``folder`` with its ``<name>.json`` (for a reader that skips the
    kinds ``skips``, optional-kinds.ndjson's result where it has one). A file that is not a
    regular file is refused (OSError) before any is opened."""
    rules = _rules_of_readme(folder / "README.md")
    instead = skipping_expectations(folder) if skips else {}
    shown = ", ".join(f"0x{k:X}" for k in sorted(skips))
    cases = []
    for ckpt in sorted(folder.glob("*.ckpt")):
        _read_head(ckpt, 0)  # a FIFO or a folder is refused here, never read
        expect = _expectation(_read_json(ckpt.with_suffix(".json")), ckpt.with_suffix(".json"),
                              "the vector's description")
        rule = rules.get(ckpt.stem, "")
        if (ckpt.stem, skips) in instead:
            expect = instead[ckpt.stem, skips]
            rule += f" (as read by a reader that skips kind {shown}: {SKIPPING_TABLE})"
        cases.append(Case(f"vector {ckpt.stem}", ckpt, expect, rule))
    return cases


def _corpus_case(i: int, c: Any, manifest: Path) -> Case | None:
    """Case ``i`` of the manifest, None for one not judged on the file alone; one without
    the keys of the manifest's format is a usage error naming it."""
    try:
        name, expect = f"corpus {c['name']}", c["expect"]
        if c.get("model") or expect.get("pending"):
            return None
        path = manifest.parent / "files" / str(c["file"])
        if "error" in expect:
            error = {k: expect[k if k != "code" else "error"] for k in ("code", "field", "offset")}
            return Case(name, path, {"error": error}, str(c.get("why", "")))
        summary = {"revision": expect["revision"], "dialect": expect["dialect"]}
        return Case(name, path, summary, str(c.get("why", "")), whole=False)
    except (TypeError, KeyError, AttributeError) as err:
        lacks = f"lacks {err}" if isinstance(err, KeyError) else "is not an object"
        raise _bad_file(manifest, f"cases[{i}] {safe_text(lacks)} (a case has name, file and "
                        "expect: error, field and offset, or revision and dialect)") from None


def corpus_cases(manifest: Path) -> tuple[list[Case], list[str]]:
    """The corpus cases a reader of files alone can be judged on, and the names of those read
    through a circle model or not yet triaged (``pending``). A file that is not a regular file
    is refused (OSError) before any is opened."""
    data = _read_json(manifest)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise _bad_file(manifest, 'not a corpus manifest ({"cases": [...]})')
    cases, skipped = [], []
    for i, c in enumerate(data["cases"]):
        case = _corpus_case(i, c, manifest)
        if case is None:
            skipped.append(f"corpus {c['name']}")
            continue
        _read_head(case.path, 0)  # a FIFO or a folder is refused here, never read
        cases.append(case)
    return cases, skipped


_KINDS = ((type(None), "null"), (bool, "boolean"), (int, "integer"),
          (float, "number with a fraction or exponent"), (str, "string"), (list, "array"))


def _kind(value: Any) -> str:
    return next((name for kind, name in _KINDS if isinstance(value, kind)), "object")


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (RecursionError, ValueError):  # nested too deep; an integer of over 4300 digits
        return f"(a {_kind(value)} too deep or too long to show)"
    return text if len(text) <= 80 else text[:77] + "..."


def _keys(keys: list[str]) -> str:
    """At most five of ``keys``, each cut at 80 characters."""
    more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
    return ", ".join(repr(k[:80]) for k in keys[:5]) + more


def _first_difference(want: Any, got: Any, where: str) -> str | None:
    """Where ``got`` first differs from ``want`` by TOOLKIT section 1's rules, or None."""
    if _kind(want) != _kind(got):
        return f"{where}: expected {_kind(want)} {_show(want)}, got {_kind(got)} {_show(got)}"
    if isinstance(want, dict):
        parts = [f"{word} {_keys(sorted(keys))}" for word, keys in
                 (("missing", set(want) - set(got)), ("unexpected", set(got) - set(want))) if keys]
        if parts:
            return f"{where}: {'; '.join(parts)}"
        inner = ((want[k], got[k], f"{where}.{k}") for k in want)
    elif isinstance(want, list):
        if len(want) != len(got):
            return f"{where}: expected {len(want)} elements, got {len(got)}"
        inner = ((a, b, f"{where}[{i}]") for i, (a, b) in enumerate(zip(want, got)))
    if isinstance(want, (dict, list)):
        return next((d for a, b, at in inner if (d := _first_difference(a, b, at))), None)
    if isinstance(want, float):
        # binary64 against binary64: the same bits (-0.0 and 0.0 differ; NaN cannot occur,
        # TOOLKIT 1.3 writes it as {"float": "nan"})
        if struct.pack("<d", want) != struct.pack("<d", got):
            return f"{where}: expected {want!r}, got {got!r}"
        return None
    if want != got:
        return f"{where}: expected {_show(want)}, got {_show(got)}"
    return None


def _error_text(error: dict[str, Any]) -> str:
    return f"error {error.get('code')} (field {error.get('field')}, offset {error.get('offset')})"


def compare(case: Case, got: Any) -> str | None:
    """What in ``got`` (a reader's parsed output) disagrees with ``case``, or None."""
    want = case.expect
    got_error = got.get("error") if isinstance(got, dict) else None
    if "error" in want:
        expected = f"expected {_error_text(want['error'])}"
        if not isinstance(got_error, dict):
            return f"{expected}; the reader found the file valid"
        keys = ("code", "field", "offset")  # the message is free text (TOOLKIT 1.4)
        if any(k not in got_error for k in keys):
            return f"{expected}; the error object lacks a key: {_show(got_error)}"
        mine = {k: got_error[k] for k in keys}
        found = _first_difference({k: want["error"][k] for k in keys}, mine, "error")
        return None if found is None else f"{expected}, got {_error_text(mine)} ({found})"
    if got_error is not None:
        shown = _error_text(got_error) if isinstance(got_error, dict) else _show(got_error)
        return f"expected a valid file; the reader reported {shown}"
    if not isinstance(got, dict):
        return f"expected an object, got {_kind(got)} {_show(got)}"
    if case.whole:
        return _first_difference(want, got, "$")
    return _first_difference(want, {k: got.get(k) for k in want}, "$")


#: What is kept of each stream a reader prints (``--max-output``; a description is at most about
#: 10 kB). Parsed, 1 MiB of JSON holding 349,000 empty arrays took 27 MiB.
MAX_OUTPUT = 1 << 20
#: Seconds a reader's stdout and stderr may stay open (held by a child) after the reader exited.
EXIT_GRACE = 0.5
#: Seconds between checks for an interruption or (without pidfd) the reader's exit.
_POLL = 0.05


def _argv(command: Sequence[str], path: Path) -> list[str]:
    """``command`` with ``{file}`` replaced by ``path``; the path appended when no argument
    names ``{file}``. The path is absolute, so that a file named ``-n.ckpt`` reaches the
    reader as a path and never as an option."""
    path = path.absolute()
    if any("{file}" in arg for arg in command):
        return [arg.replace("{file}", str(path)) for arg in command]
    return [*command, str(path)]


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON (TOOLKIT 1.3 writes {{\"float\": ...}})")


def _exited(pid: int) -> bool:
    """Whether the child ``pid`` has exited, without reaping it: until it is reaped its
    process group's id cannot be reused, so that killing the group kills only its own."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


@dataclass
class _Run:
    #: what was kept of its stdout and stderr (each at most the limit)
    out: dict[str, bytearray]
    #: why the runner stopped it (too slow, too much output, interrupted); None: it exited
    stopped: str | None = None
    status: int = 0
    #: its stdout or stderr was still open when the run ended (held by a child of its own)
    held: bool = True
    #: it printed more than the limit
    truncated: bool = False


def _read_until_exit(proc: subprocess.Popen[bytes], run: _Run, timeout: float, limit: int,
                     stop: threading.Event) -> None:
    """Keep at most ``limit`` bytes of each of the reader's stdout and stderr until it exits and
    both are closed (or ``EXIT_GRACE`` after it exits), or until it is too slow, prints too
    much, or the run is interrupted (said in ``run.stopped``)."""
    deadline = time.monotonic() + timeout
    exited_at = None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, "stdout")  # type: ignore[arg-type]
        sel.register(proc.stderr, selectors.EVENT_READ, "stderr")  # type: ignore[arg-type]
        pidfd = None  # readable when the reader exits (Linux 5.3 and later); else polled
        with contextlib.suppress(AttributeError, OSError):
            pidfd = os.pidfd_open(proc.pid)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ, None)
        try:
            while True:
                now = time.monotonic()
                if exited_at is None and _exited(proc.pid):
                    exited_at = now
                    if pidfd is not None:
                        sel.unregister(pidfd)
                # (once the reader exited, only its stdout and stderr can be left in sel)
                if exited_at is not None and (not sel.get_map() or now > exited_at + EXIT_GRACE):
                    return
                if now >= deadline:
                    run.stopped = f"did not finish within {timeout:g} s"
                    return
                if stop.is_set():
                    run.stopped = "was stopped: the run was interrupted"
                    return
                wait = min(deadline - now, _POLL if pidfd is None else 10 * _POLL)
                for key, _ in sel.select(wait):
                    if key.data is None:
                        continue  # the reader exited: seen at the top of the loop
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        sel.unregister(key.fd)
                        continue
                    kept = run.out[key.data]
                    room = limit - len(kept)
                    kept += chunk[:room]
                    if len(chunk) > room:
                        run.truncated = True
                        run.stopped = (f"printed more than {limit} bytes on {key.data}: its "
                                       "output was cut there (--max-output sets the limit)")
                        return
        finally:
            run.held = any(key.data for key in sel.get_map().values())
            if pidfd is not None:
                os.close(pidfd)


def _kill(pid: int, *, session: bool) -> None:
    """SIGKILL the process group of the reader ``pid`` (not yet reaped: the id is still its
    own) and, with ``session``, every process of its session (/proc), groups made by ``set -m``
    too; a process that left it by ``setsid`` is not followed."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if not session or not os.path.isdir("/proc"):
        return
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(os.path.join(entry.path, "stat"), "rb") as f:
                if int(f.read().rsplit(b")", 1)[1].split()[3]) == pid:  # its session
                    os.kill(int(entry.name), signal.SIGKILL)


def _run_reader(argv: list[str], timeout: float, limit: int, stop: threading.Event) -> _Run:
    """Run ``argv`` in a session of its own with nothing on stdin; its group is killed when the
    run ends, and its session too when a child held its output open, so no child outlives its
    case."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    run = _Run({"stdout": bytearray(), "stderr": bytearray()})
    with proc:  # closes the pipes and reaps it, after the kill
        try:
            _read_until_exit(proc, run, timeout, limit, stop)
        finally:
            _kill(proc.pid, session=run.held)
    run.status = proc.returncode
    return run


def _parse(stdout: bytes) -> tuple[Any, str | None]:
    """The JSON value a reader printed, or None and why it is not one."""
    try:
        return json.loads(stdout.decode("utf-8"), parse_constant=_reject_constant), None
    except UnicodeDecodeError as err:
        return None, f"the output is not UTF-8 (byte {err.start}: {stdout[err.start:err.end]!r})"
    except RecursionError:
        return None, ("the output is not one JSON text this runner can read: it nests "
                      f"deeper than Python's recursion limit ({sys.getrecursionlimit()})")
    except ValueError as err:
        return None, f"the output is not one JSON text ({err})"


def run_case(command: Sequence[str], case: Case, timeout: float, limit: int = MAX_OUTPUT,
             stop: threading.Event | None = None, micro: bool = False) -> Outcome:
    """Run the reader on one case and compare its output (at most ``limit`` bytes of it).
    With ``micro``, an output in the micro profile's line format is judged by that profile's
    promise (SPEC.md section 11, :mod:`.micro_profile`)."""
    try:
        run = _run_reader(_argv(command, case.path), timeout, limit, stop or threading.Event())
    except OSError as err:
        return Outcome(case, f"the reader could not be run: {err}")
    if run.stopped is not None:
        return Outcome(case, f"the reader {run.stopped}", truncated=run.truncated)
    if run.status < 0:
        return Outcome(case, f"the reader was killed by signal {-run.status}")
    if micro and run.out["stdout"].startswith(b"micro 1"):
        from .micro_profile import judge  # the library's reader: only for this profile

        out = run.out["stdout"].decode("utf-8", "replace")
        return Outcome(case, judge(case.path, out, run.status))
    got, why = _parse(bytes(run.out["stdout"]))
    if why is not None:
        stderr = run.out["stderr"].decode("utf-8", "replace").strip().splitlines()
        tail = f"; stderr: {stderr[-1][:120]}" if stderr else ""
        return Outcome(case, why + tail)
    return Outcome(case, compare(case, got))  # what it printed is not kept: memory


def run_all(command: Sequence[str], cases: Iterable[Case], timeout: float, jobs: int,
            limit: int = MAX_OUTPUT, micro: bool = False) -> list[Outcome]:
    """Every case, ``jobs`` readers at a time, in the cases' order. An exception here (Ctrl-C)
    stops the readers running and runs no other."""
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(run_case, command, c, timeout, limit, stop, micro) for c in cases]
        return [f.result() for f in futures]
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)


def _default(relative: str) -> Path:
    """``relative`` under the working directory if it is there, else under the checkout this
    package was installed from."""
    here = Path(relative)
    return here if here.exists() else _CHECKOUT / relative


def conformance_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("reader", nargs=argparse.REMAINDER, metavar="-- READER [ARG...]",
                   help="the reader's command line after --; {file} is replaced by each file's "
                   "path (appended when absent)")
    p.add_argument("--vectors", metavar="DIR", type=Path,
                   help="the conformance vectors (default: spec/vectors)")
    p.add_argument("--corpus", metavar="MANIFEST", type=Path,
                   help="the corpus manifest (default: tests/corpus/manifest.json)")
    p.add_argument("--no-vectors", action="store_true", help="run the corpus only")
    p.add_argument("--no-corpus", action="store_true", help="run the vectors only")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--profile", choices=sorted(PROFILES),
                       help="the revisions of a conformance profile (SPEC.md section 10): micro "
                       "(v3; a reader printing the micro line format is judged by SPEC.md "
                       "section 11's promise), full (every revision; the default)")
    which.add_argument("--revisions", type=_revisions_arg, metavar="LIST",
                       help="the revisions the reader implements, e.g. v3 or v3,v1,wof: cases "
                       "of other version bytes are not run (detection cases always are)")
    p.add_argument("--skips-kind", type=_optional_kind_arg, action="append", metavar="KIND",
                   help="an optional section kind the reader skips as an unknown kind (SPEC.md "
                   "section 10, TOOLKIT.md section 4): 0x100008 (data_blocks) or 0x100009 "
                   "(range_index), by number or name; repeatable. Vectors whose result depends "
                   "on it are judged by what a reader that skips it gives "
                   "(spec/vectors/optional-kinds.ndjson)")
    p.add_argument("--select", metavar="GLOB", action="append",
                   help="only the cases whose name (without 'vector '/'corpus ') matches; "
                   "repeatable")
    p.add_argument("--timeout", type=_seconds_arg, default=60.0, metavar="SECONDS",
                   help="a reader that runs longer on one file disagrees, and it and its "
                   "children are killed (60)")
    p.add_argument("--jobs", type=count_arg, default=os.cpu_count() or 1, metavar="N",
                   help="readers run at once (the number of CPUs)")
    p.add_argument("--max-output", type=count_arg, default=MAX_OUTPUT, metavar="BYTES",
                   help="a reader that prints more on stdout or stderr for one file disagrees, "
                   f"and is stopped there ({MAX_OUTPUT})")
    p.add_argument("--json", action="store_true", help="the report as JSON")


def _seconds_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, not {text!r}")
    return value


def in_profile(case: Case, revisions: frozenset[str]) -> bool:
    """Whether the case's version byte names one of ``revisions``; a file that detection
    refuses before any revision's rules (SPEC.md 3, steps 1 to 4) is in every profile."""
    head = _read_head(case.path, 3)
    if len(head) < 3 or int.from_bytes(head[:2], "little") != layout.MAGIC:
        return True
    found = {r.name for r in registry.with_version(head[2])}
    return not found or bool(found & revisions)


def _optional_kind_arg(text: str) -> int:
    by_name = {name: kind for kind, name in OPTIONAL_KINDS.items()}
    try:
        kind = by_name[text] if text in by_name else int(text, 0)
    except ValueError:
        kind = -1
    if kind not in OPTIONAL_KINDS:
        named = ", ".join(f"0x{k:X} ({n})" for k, n in OPTIONAL_KINDS.items())
        raise argparse.ArgumentTypeError(f"a reader may skip only an optional kind ({named}), "
                                         f"not {text!r}")
    return kind


def _lists_kinds(path: Path, kinds: frozenset[int]) -> bool:
    """Whether a schema-3 file's section table (as far as the file holds it) lists one of
    ``kinds``."""
    from .layout_map import section_entries

    head = _read_head(path, layout.Header.SIZE + layout.SectionEntry.SIZE * layout.MAX_SECTIONS)
    recommended = layout.MAGIC.to_bytes(2, "little") + bytes([registry.RECOMMENDED.version])
    return head[:3] == recommended and any(kind in kinds for kind, _, _ in section_entries(head))


def _revisions_arg(text: str) -> frozenset[str]:
    chosen = frozenset(r.strip() for r in text.split(",") if r.strip())
    if not chosen or chosen - PROFILES["full"]:
        named = ", ".join(r.name for r in registry.REVISIONS)
        raise argparse.ArgumentTypeError(f"revisions are a comma-separated subset of {named}, "
                                         f"not {text!r}")
    for version in {registry.revision(r).version for r in chosen}:
        share = [r.name for r in registry.with_version(version)]
        if set(share) - chosen:
            raise argparse.ArgumentTypeError(
                f"{' and '.join(share)} share version byte {version} and are told apart by "
                "structure (SPEC.md section 3): name both or neither")
    return chosen


def cmd_conformance(args: argparse.Namespace) -> int:
    command = list(args.reader[1:] if args.reader[:1] == ["--"] else args.reader)
    if not command:
        raise CliError("usage_error", "name the reader to run after --, for example: "
                       "onert-ckpt conformance -- ./my-reader {file}")
    if "{file}" in command[0] or shutil.which(command[0]) is None:
        raise CliError("usage_error", f"the reader {safe_text(command[0])!r} is not a program "
                       "that can be run (not found on PATH, or not executable)")
    cases: list[Case] = []
    skipped: list[str] = []
    skips = frozenset(args.skips_kind or ())
    if not args.no_vectors:
        folder = args.vectors or _default("spec/vectors")
        if not folder.is_dir() or not any(folder.glob("*.ckpt")):
            raise CliError("usage_error", f"no conformance vectors in {safe_text(str(folder))} "
                           "(--vectors names the folder of a checkout's spec/vectors)")
        cases += vector_cases(folder, skips)
    if not args.no_corpus:
        manifest = args.corpus or _default("tests/corpus/manifest.json")
        if not manifest.is_file():
            raise CliError("usage_error", f"no corpus manifest at {safe_text(str(manifest))} "
                           "(--corpus names a checkout's tests/corpus/manifest.json)")
        found, skipped = corpus_cases(manifest)
        if skips:  # the corpus records one result: a file listing a skipped kind is not judged
            skipped += [c.name for c in found if _lists_kinds(c.path, skips)]
            found = [c for c in found if not _lists_kinds(c.path, skips)]
        cases += found
    cases = [c for c in cases if not args.select
             or any(fnmatch.fnmatchcase(c.name.split(" ", 1)[1], g) for g in args.select)]
    revisions = args.revisions or PROFILES[args.profile or "full"]
    outside = [c.name for c in cases if not in_profile(c, revisions)]
    cases = [c for c in cases if in_profile(c, revisions)]
    skipped += outside
    if not cases:
        raise CliError("usage_error", "no case to run (see --select, --no-vectors, --no-corpus)")
    outcomes = run_all(command, cases, args.timeout, args.jobs, args.max_output,
                       args.profile == "micro")
    bad = [o for o in outcomes if o.disagreement is not None]
    if args.json:
        disagree = [{"case": o.case.name, "file": str(o.case.path), "rule": o.case.rule,
                     "disagreement": o.disagreement, "output_truncated": o.truncated} for o in bad]
        print(json.dumps({"cases": len(outcomes), "agree": len(outcomes) - len(bad),
                          "disagree": disagree, "not_run": skipped,
                          "skips_kinds": [f"0x{k:X}" for k in sorted(skips)]}, indent=1))
    else:
        for o in bad:
            print(f"DISAGREE {safe_text(o.case.name)}: {safe_text(o.disagreement or '')}")
            print(f"  rule: {safe_text(o.case.rule or '(none recorded)')}")
            print(f"  file: {safe_text(str(o.case.path))}")
        note = (f", {len(skipped)} not run (outside the revisions, or needing a circle model, "
                "or not triaged)" if skipped else "")
        print(f"{len(outcomes)} cases: {len(outcomes) - len(bad)} agree, {len(bad)} "
              f"disagree{note}")
    return EXIT_INVALID if bad else EXIT_OK

