"""``onert-ckpt conformance``: run another reader on every conformance vector and corpus case.

A reader conforms when, for each file, it prints the JSON description of TOOLKIT.md section 1:
for a valid file an object equal to the vector's after JSON parsing (TOOLKIT 1.1 to 1.3), for an
invalid one ``{"error": {...}}`` with the vector's ``code``, ``field`` and ``offset`` (TOOLKIT
1.4; ``message`` is free text). This module loads the cases (spec/vectors/*.json with the rule
each one tests from spec/vectors/README.md; tests/corpus/manifest.json with each case's
``why``), runs the reader's command on each file, compares as TOOLKIT section 1 says and reports
every disagreement with its rule.

The comparison is strict about JSON types, because TOOLKIT section 1 is: a number written without
fraction or exponent is an integer and is compared exactly (u64 offsets exceed 2^53); any other
number is a binary64, compared as a binary64 (so ``-0.0`` is not ``0.0``, and ``1.0`` is not
``1``); ``true`` is not ``1``; key order and white space do not matter.

A reader MAY skip schema 3's optional section kinds (data_blocks, range_index: SPEC.md 2, TOOLKIT 4
and 15) as unknown kinds. It says so with ``--skips-kind``; the vectors whose result depends on
knowing a kind it skips are then judged by spec/vectors/optional-kinds.ndjson, what a reader
that skips exactly those kinds gives (one JSON line per vector and set of skipped kinds).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import struct
import subprocess
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Case",
    "Outcome",
    "cmd_conformance",
    "compare",
    "conformance_arguments",
    "corpus_cases",
    "run_case",
    "skipping_expectations",
    "vector_cases",
]

#: The folders of a source checkout, found from this file (src/onert_checkpoint/tools/).
_CHECKOUT = Path(__file__).resolve().parents[3]

#: The revisions of each conformance profile (SPEC.md section 10).
PROFILES: dict[str, frozenset[str]] = {
    "micro": frozenset({"v3"}),
    "full": frozenset({"v1", "wof", "v2", "v3"}),
}
#: The optional section kinds a reader may skip as unknown kinds (SPEC.md 7.4, 7.5, 10).
OPTIONAL_KINDS: dict[int, str] = {0x100008: "data_blocks", 0x100009: "range_index"}
#: What a reader that skips optional kinds gives, where it differs (beside the vectors).
SKIPPING_TABLE = "optional-kinds.ndjson"
#: The revisions a version byte names (SPEC.md section 3: v1 and WOF share byte 1).
_BY_VERSION = {1: frozenset({"v1", "wof"}), 2: frozenset({"v2"}), 3: frozenset({"v3"})}


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
    got: Any = field(default=None, repr=False)


# ---- the cases -------------------------------------------------------------------------------


def _rules_of_readme(readme: Path) -> dict[str, str]:
    """Vector name -> the last column of its row in spec/vectors/README.md (the rule an
    invalid vector tests, or what a valid one shows)."""
    rules: dict[str, str] = {}
    if not readme.is_file():
        return rules
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`") and cells[0].endswith("`"):
            rules[cells[0].strip("`")] = cells[-1]
    return rules


def skipping_expectations(folder: Path) -> dict[tuple[str, frozenset[int]], dict[str, Any]]:
    """(vector name, the optional kinds a reader skips) -> what that reader gives, for every
    line of ``folder``'s optional-kinds.ndjson (absent: none)."""
    table = folder / SKIPPING_TABLE
    if not table.is_file():
        return {}
    found = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            found[row["vector"], frozenset(int(k, 16) for k in row["skips"])] = row["expect"]
    return found


def vector_cases(folder: Path, skips: frozenset[int] = frozenset()) -> list[Case]:
    """Every ``<name>.ckpt`` of ``folder`` with its ``<name>.json``; for a reader that skips
    the optional kinds ``skips``, the result optional-kinds.ndjson records instead where it
    records one."""
    rules = _rules_of_readme(folder / "README.md")
    instead = skipping_expectations(folder) if skips else {}
    shown = ", ".join(f"0x{k:X}" for k in sorted(skips))
    cases = []
    for ckpt in sorted(folder.glob("*.ckpt")):
        expect = json.loads(ckpt.with_suffix(".json").read_text(encoding="utf-8"))
        rule = rules.get(ckpt.stem, "")
        if (ckpt.stem, skips) in instead:
            expect = instead[ckpt.stem, skips]
            rule += f" (as read by a reader that skips kind {shown}: {SKIPPING_TABLE})"
        cases.append(Case(f"vector {ckpt.stem}", ckpt, expect, rule))
    return cases


def corpus_cases(manifest: Path) -> tuple[list[Case], list[str]]:
    """The corpus cases a reader of files alone can be judged on, and the names of those it
    cannot: cases read through a circle model (errors of category ``model``, never raised from
    a file alone, SPEC section 12) and fuzzer finds not yet triaged (``pending``)."""
    data = json.loads(manifest.read_text(encoding="utf-8"))
    cases, skipped = [], []
    for c in data["cases"]:
        name = f"corpus {c['name']}"
        expect = c["expect"]
        if c.get("model") or expect.get("pending"):
            skipped.append(name)
            continue
        path = manifest.parent / "files" / c["file"]
        why = c.get("why", "")
        if "error" in expect:
            error = {"code": expect["error"], "field": expect["field"], "offset": expect["offset"]}
            cases.append(Case(name, path, {"error": error}, why))
        else:
            summary = {"revision": expect["revision"], "dialect": expect["dialect"]}
            cases.append(Case(name, path, summary, why, whole=False))
    return cases, skipped


# ---- the comparison --------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number with a fraction or exponent"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _first_difference(want: Any, got: Any, where: str) -> str | None:
    """Where ``got`` first differs from ``want`` by TOOLKIT section 1's rules, or None."""
    if _kind(want) != _kind(got):
        return f"{where}: expected {_kind(want)} {_show(want)}, got {_kind(got)} {_show(got)}"
    if isinstance(want, dict):
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        if missing or extra:
            parts = [f"missing {', '.join(map(repr, missing))}"] if missing else []
            parts += [f"unexpected {', '.join(map(repr, extra))}"] if extra else []
            return f"{where}: {'; '.join(parts)}"
        for key in want:
            found = _first_difference(want[key], got[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(want, list):
        if len(want) != len(got):
            return f"{where}: expected {len(want)} elements, got {len(got)}"
        for i, (a, b) in enumerate(zip(want, got)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
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
        if not isinstance(got_error, dict):
            return f"expected {_error_text(want['error'])}; the reader found the file valid"
        mine = {k: got_error.get(k) for k in ("code", "field", "offset")}
        if any(k not in got_error for k in ("code", "field", "offset")):
            return f"expected {_error_text(want['error'])}; the error object lacks a key: " \
                + _show(got_error)
        found = _first_difference(want["error"], mine, "error")
        if found:
            return f"expected {_error_text(want['error'])}, got {_error_text(mine)} ({found})"
        return None
    if got_error is not None:
        shown = _error_text(got_error) if isinstance(got_error, dict) else _show(got_error)
        return f"expected a valid file; the reader reported {shown}"
    if not isinstance(got, dict):
        return f"expected an object, got {_kind(got)} {_show(got)}"
    if case.whole:
        return _first_difference(want, got, "$")
    return _first_difference(want, {k: got.get(k) for k in want}, "$")


# ---- running a reader ------------------------------------------------------------------------


def _argv(command: Sequence[str], path: Path) -> list[str]:
    """``command`` with ``{file}`` replaced by ``path``; the path appended when no argument
    names ``{file}``."""
    if any("{file}" in arg for arg in command):
        return [arg.replace("{file}", str(path)) for arg in command]
    return [*command, str(path)]


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON (TOOLKIT 1.3 writes {{\"float\": ...}})")


def run_case(command: Sequence[str], case: Case, timeout: float) -> Outcome:
    """Run the reader on one case and compare its output."""
    try:
        res = subprocess.run(
            _argv(command, case.path), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return Outcome(case, f"the reader did not finish within {timeout:g} s")
    except OSError as err:
        return Outcome(case, f"the reader could not be run: {err}")
    if res.returncode < 0:
        return Outcome(case, f"the reader was killed by signal {-res.returncode}")
    text = res.stdout.decode("utf-8", "replace")
    try:
        got = json.loads(text, parse_constant=_reject_constant)
    except ValueError as err:
        stderr = res.stderr.decode("utf-8", "replace").strip().splitlines()
        tail = f"; stderr: {stderr[-1][:120]}" if stderr else ""
        return Outcome(case, f"the output is not one JSON text ({err}){tail}")
    return Outcome(case, compare(case, got), got)


def run_all(
    command: Sequence[str], cases: Iterable[Case], timeout: float, jobs: int
) -> list[Outcome]:
    """Every case, ``jobs`` readers at a time, in the cases' order."""
    cases = list(cases)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda c: run_case(command, c, timeout), cases))


# ---- the command -----------------------------------------------------------------------------


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
                       "(v3), full (every revision; the default)")
    which.add_argument("--revisions", type=_revisions_arg, metavar="LIST",
                       help="the revisions the reader implements, e.g. v3 or v3,v1,wof: cases "
                       "of other version bytes are not run (detection cases always are)")
    p.add_argument("--skips-kind", type=_optional_kind_arg, action="append", metavar="KIND",
                   help="an optional section kind the reader skips as an unknown kind (SPEC.md "
                   "15): 0x100008 (data_blocks) or 0x100009 (range_index), by number or name; "
                   "repeatable. Vectors whose result depends on it are judged by what a reader "
                   "that skips it gives (spec/vectors/optional-kinds.ndjson)")
    p.add_argument("--select", metavar="GLOB", action="append",
                   help="only the cases whose name (without 'vector '/'corpus ') matches; "
                   "repeatable")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="a reader that runs longer on one file disagrees (60)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="readers run at once (the number of CPUs)")
    p.add_argument("--json", action="store_true", help="the report as JSON")


def revisions_of(path: Path) -> frozenset[str] | None:
    """The revisions the file's version byte names, or None for a file that revision
    detection refuses before any revision's rules (SPEC.md section 3, steps 1 to 4: too
    short, another magic, a version byte no revision has), which every profile must
    refuse alike."""
    with open(path, "rb") as f:
        head = f.read(3)
    if len(head) < 3 or head[:2] != b"\xad\x01":
        return None
    return _BY_VERSION.get(head[2])


def in_profile(case: Case, revisions: frozenset[str]) -> bool:
    found = revisions_of(case.path)
    return found is None or bool(found & revisions)


def _optional_kind_arg(text: str) -> int:
    by_name = {name: kind for kind, name in OPTIONAL_KINDS.items()}
    try:
        kind = by_name[text] if text in by_name else int(text, 0)
    except ValueError:
        kind = -1
    if kind not in OPTIONAL_KINDS:
        named = ", ".join(f"0x{k:X} ({n})" for k, n in OPTIONAL_KINDS.items())
        raise argparse.ArgumentTypeError(
            f"a reader may skip only an optional kind ({named}), not {text!r}"
        )
    return kind


def _lists_kinds(path: Path, kinds: frozenset[int]) -> bool:
    """Whether a schema-3 file's section table (as far as the file holds it) lists one of
    ``kinds``."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:3] != b"\xad\x01\x03":
            return False
        n = min(struct.unpack_from("<I", head, 24)[0], 64)
        table = f.read(32 * n)
    return any(struct.unpack_from("<I", table, 32 * i)[0] in kinds
               for i in range(len(table) // 32))


def _revisions_arg(text: str) -> frozenset[str]:
    chosen = frozenset(r.strip() for r in text.split(",") if r.strip())
    unknown = chosen - PROFILES["full"]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"revisions are a comma-separated subset of v1, wof, v2, v3, not {text!r}"
        )
    if len(chosen & {"v1", "wof"}) == 1:
        raise argparse.ArgumentTypeError(
            "v1 and wof share version byte 1 and are told apart by structure (SPEC.md "
            "section 3): name both or neither"
        )
    return chosen


def _select(cases: list[Case], patterns: list[str] | None) -> list[Case]:
    if not patterns:
        return cases
    return [c for c in cases
            if any(fnmatch.fnmatchcase(c.name.split(" ", 1)[1], g) for g in patterns)]


def cmd_conformance(args: argparse.Namespace) -> int:
    from .cli import EXIT_INVALID, EXIT_OK, CliError
    from .render import safe_text

    command = list(args.reader)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise CliError("usage_error", "name the reader to run after --, for example: "
                       "onert-ckpt conformance -- ./my-reader {file}")
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
    cases = _select(cases, args.select)
    revisions = args.revisions or PROFILES[args.profile or "full"]
    outside = [c.name for c in cases if not in_profile(c, revisions)]
    cases = [c for c in cases if in_profile(c, revisions)]
    skipped += outside
    if not cases:
        raise CliError("usage_error", "no case to run (see --select, --no-vectors, --no-corpus)")
    outcomes = run_all(command, cases, args.timeout, args.jobs)
    bad = [o for o in outcomes if o.disagreement is not None]
    if args.json:
        report = {
            "cases": len(outcomes),
            "agree": len(outcomes) - len(bad),
            "disagree": [
                {"case": o.case.name, "file": str(o.case.path), "rule": o.case.rule,
                 "disagreement": o.disagreement}
                for o in bad
            ],
            "not_run": skipped,
            "skips_kinds": [f"0x{k:X}" for k in sorted(skips)],
        }
        print(json.dumps(report, indent=1))
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

