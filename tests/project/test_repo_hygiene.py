"""No tracked file names an absolute path of the machine it was written on.

A path such as the developer's checkout, home folder or temporary folder works on that machine
only: a test that opens one fails on every other machine, and a README that shows one is wrong
for every reader. Tests use tests/data or ``tmp_path``; the shared reference folder is found
relative to the repository.

The rule (``machine_paths``) flags, in every file ``git ls-files`` lists outside
tests/corpus/files (fuzz inputs are arbitrary bytes), text or binary alike:

* a path that starts at one of the well-known per-machine roots (``_ROOTS``: the top-level
  work, root and temporary folders, a user's folder under home or Users, and the temporary
  folders under var and private), written bare, after a quote or a bracket, after ``=`` or
  ``:``, or as a ``file://`` address;
* the absolute path of this checkout, of its parent folder and of the current home folder,
  whatever they are on the machine running the test (so a CI runner's own paths count too).

It does not flag the same words inside a longer path or an address (``../shared/work/x``,
``https://host/home/u``), nor names such as ``tmp_path``, ``O_TMPFILE`` or ``tempfile``. No file
is exempt: this module spells the roots in pieces so that it passes its own rule.

Nor does the code, a test or a document under src/, tests/, docs/, spec/ or README.md cite
an entry of an issue tracker (``tracker_references``): the tracker is not in the repository,
so such a citation tells a reader only when a line was written. A check says what it proves;
a test is named after it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Fuzz inputs are arbitrary bytes; the corpus's README, manifest and builder are scanned.
EXEMPT_PREFIXES = ("tests/corpus/files/",)

_S = "/"  # the roots below are joined from pieces so this file passes its own rule
_ROOTS = [
    _S + "work",
    _S + "root",
    _S + "tmp",
    _S + "var" + _S + "tmp",
    _S + "private" + _S + "tmp",
    _S + "home" + _S + r"[^/\s'\"]+",
    _S + "Users" + _S + r"[^/\s'\"]+",
]
# A root starts a path when nothing that could belong to a longer path or an address comes right
# before it (a letter, digit, '_', '.', '~', '-' or '/'), or when it follows "file://". It ends
# at a '/' or at anything that cannot continue a folder name.
_FIXED = re.compile(
    r"(?:(?<![\w.~/-])|(?<=file:" + _S + _S + r"))(?:" + "|".join(_ROOTS) + r")(?=/|[^\w.-]|$)"
)


def _machine_roots() -> list[str]:
    """This machine's own folders: the checkout, its parent and the home folder (never '/')."""
    found = {str(ROOT), str(ROOT.parent), str(Path.home())}
    return sorted(p for p in found if p.strip("/") and len(p) > 1)


def machine_paths(text: str, roots: list[str] | None = None) -> list[str]:
    """The absolute machine paths in ``text`` (see the module docstring for the rule)."""
    hits = {m.start(): m.group(0) for m in _FIXED.finditer(text)}
    for root in _machine_roots() if roots is None else roots:
        pattern = r"(?<![\w.~/-])" + re.escape(root) + r"(?=/|[^\w.-]|$)"
        for m in re.finditer(pattern, text):
            if len(m.group(0)) > len(hits.get(m.start(), "")):
                hits[m.start()] = m.group(0)
    return [hits[at] for at in sorted(hits)]


def _tracked_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    done = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    )
    return [name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_names_a_machine_path() -> None:
    offenders = []
    names = _tracked_files()
    assert len(names) > 100, names  # the listing worked
    for name in names:
        if name.startswith(EXEMPT_PREFIXES):
            continue
        path = ROOT / name
        if not path.is_file():  # deleted in the working tree, not yet committed
            continue
        text = path.read_bytes().decode("latin-1")
        for lineno, line in enumerate(text.splitlines(), 1):
            for hit in machine_paths(line):
                offenders.append(f"{name}:{lineno}: {hit!r} in {line.strip()[:100]!r}")
    assert offenders == [], "absolute machine paths:\n" + "\n".join(offenders)


# The rule itself: what it must flag and what it must leave alone ----------------------------

W, T, R = _S + "work", _S + "tmp", _S + "root"

FLAGGED = [
    # two lines tests/interop/test_onert_order.py once had
    f'    model = CircleModel.load("{W}/shared/reference/real-onert/fc2.circle")',
    f"REAL ?= {W}/shared/reference/real-onert",  # the old spec/c/Makefile
    f"\t./ockpt-info $$f > {T}/ockpt-check.a",
    f"mkdir -p {T}/corpus && cp x {T}/corpus/",  # the old spec/c/README.md
    f"cd {W} && make",
    f"open('{R}/.cache/x')",
    f"path = Path({W!r})",
    f"see file://{W}/main/README.md",
    f"[link]({T}/x)",
    f"HOME={_S}home{_S}alice{_S}src",
    f"{_S}Users{_S}bob{_S}code/x.py",
    f"{_S}var{_S}tmp{_S}ockpt",
    f"x:{T}/a",
]

LEFT_ALONE = [
    "the shared folder: Path(__file__).parents[2] / '..' / 'shared'",
    f"../shared{W}/x and spec/c{T}/y",  # inside a longer relative path
    f"https://example.org{_S}home{_S}user/work",  # inside an address
    "def test_x(tmp_path): O_TMPFILE, tempfile.mkdtemp(), tmpdir",
    f"{_S}dev{_S}null, {_S}usr{_S}bin/env python3, {_S}proc/self/status",
    f"{W}ing{_S}dir, {T}fs, {R}s",  # other names that start the same
    "network/workers and home/tmp as relative folder names",
]


@pytest.mark.parametrize("line", FLAGGED)
def test_rule_flags_machine_paths(line: str) -> None:
    assert machine_paths(line, roots=[]) != [], line


@pytest.mark.parametrize("line", LEFT_ALONE)
def test_rule_leaves_other_text_alone(line: str) -> None:
    assert machine_paths(line, roots=[]) == [], line


def test_rule_flags_this_machines_own_folders() -> None:
    checkout = "/srv/ci-runner/builds/onert-checkpoint"
    roots = [checkout, os.path.dirname(checkout)]
    assert checkout in machine_paths(f"cp {checkout}/tests/data/x .", roots)
    assert machine_paths(f"ls {os.path.dirname(checkout)}/other", roots) != []
    assert machine_paths("ls builds/onert-checkpoint/tests", roots) == []
    assert all(r != "/" for r in _machine_roots())


# No citation of an issue tracker ------------------------------------------------------------

#: Where the code, the tests and the documents live (the corpus's fuzz inputs excepted above).
CITING_PATHS = ("src/", "tests/", "docs/", "spec/", "README.md")
_ISSUE = "[Ii]ss" + "ues?"  # spelt in pieces so that this file passes its own rule
_TRACKER = re.compile(
    r"\b" + _ISSUE + r"\s+#?\d+"  # a numbered issue, "#" or not
    + r"|#\d+\s+" + "it" + r"ems?\b"  # an entry of a numbered list of one
    + r"|\btest_i\d+_"  # a test named after the issue it came from
)


def tracker_references(text: str) -> list[str]:
    """The citations of a numbered tracker entry in ``text``."""
    return [m.group(0) for m in _TRACKER.finditer(text)]


def test_no_tracked_file_cites_an_issue_tracker() -> None:
    offenders = []
    for name in _tracked_files():
        if not name.startswith(CITING_PATHS) or name.startswith(EXEMPT_PREFIXES):
            continue
        path = ROOT / name
        if not path.is_file():  # deleted in the working tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:  # a binary file (vectors, real checkpoints, models)
            continue
        for lineno, line in enumerate(data.decode("latin-1").splitlines(), 1):
            for hit in tracker_references(line):
                offenders.append(f"{name}:{lineno}: {hit!r} in {line.strip()[:100]!r}")
    assert offenders == [], "citations of an issue tracker:\n" + "\n".join(offenders)


_I = "Iss" + "ue"
CITING = [
    f"(i{_I[1:]} 11 item 14): the entry keeps its size",
    f"{_I} 13's goal: 100,000 tensors",
    f"(i{_I[1:]}s 12 and 17)",
    f"see i{_I[1:]} #21",
    "the rule of #11 " + "it" + "em 3",
    "def test_i" + "14_names_are_unique():",
]
NOT_CITING = [
    "an issue with the header is reported as bad_magic",
    "section 9.3, rule 14, SPEC 7.4",
    "tensors[3].model_index, entries 0 to 7",
    "def test_invalid_header(): test_io_error",
]


@pytest.mark.parametrize("line", CITING)
def test_rule_flags_tracker_citations(line: str) -> None:
    assert tracker_references(line) != [], line


@pytest.mark.parametrize("line", NOT_CITING)
def test_rule_leaves_other_numbers_alone(line: str) -> None:
    assert tracker_references(line) == [], line
