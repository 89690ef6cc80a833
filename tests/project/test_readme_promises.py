"""Promises of the README that no other test checked (docs/claims.md lists every promise and
the test that proves it).

* The reference C reader allocates nothing: its library objects reference no allocator.
* ``onert-ckpt completion`` writes a script for each of the three shells it names.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "spec" / "c"

#: Functions that allocate memory (the C library's, POSIX's, and mmap for good measure).
ALLOCATORS = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign",
    "memalign", "valloc", "strdup", "strndup", "mmap", "alloca", "__builtin_alloca",
}


def _library_sources() -> list[str]:
    """The reader library's C files: the Makefile's ``LIB`` (what ockpt-info links)."""
    text = (C_DIR / "Makefile").read_text()
    match = re.search(r"^LIB\s*[:?]?=\s*(.+)$", text, re.MULTILINE)
    assert match, "spec/c/Makefile has no LIB line"
    sources = match.group(1).split()
    assert sources and all(s.endswith(".c") for s in sources), sources
    return sources


def allocator_calls(folder: Path, sources: list[str], build: Path) -> dict[str, set[str]]:
    """For each source, the allocator symbols its object file leaves undefined (``nm -u``)."""
    found = {}
    for name in sources:
        obj = build / (Path(name).stem + ".o")
        done = subprocess.run(
            ["gcc", "-std=c99", "-O1", "-c", str(folder / name), "-I", str(folder), "-o", str(obj)],
            capture_output=True, text=True,
        )
        assert done.returncode == 0, done.stderr
        undefined = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                                   check=True).stdout.split()
        found[name] = {s.lstrip("_") for s in undefined} & {a.lstrip("_") for a in ALLOCATORS}
    return found


def _need_toolchain() -> None:
    if shutil.which("gcc") is None or shutil.which("nm") is None:
        pytest.skip("gcc and nm are needed to inspect the C reader's objects")


def test_the_c_reader_allocates_nothing(tmp_path: Path) -> None:
    """README, "For C implementers": "a C99 reader with no allocation"."""
    _need_toolchain()
    sources = _library_sources()
    assert "ockpt.c" in sources
    assert allocator_calls(C_DIR, sources, tmp_path) == {name: set() for name in sources}


def test_the_c_writer_allocates_nothing(tmp_path: Path) -> None:
    """README, "C/C++ implementers": the C kit's writer allocates nothing either (the
    Makefile's ``WRITER``, what ockpt-write links)."""
    _need_toolchain()
    match = re.search(r"^WRITER\s*[:?]?=\s*(.+)$", (C_DIR / "Makefile").read_text(), re.MULTILINE)
    assert match, "spec/c/Makefile has no WRITER line"
    sources = match.group(1).split()
    assert "ockpt_write.c" in sources
    assert allocator_calls(C_DIR, sources, tmp_path) == {name: set() for name in sources}


def test_the_allocation_check_can_fail(tmp_path: Path) -> None:
    _need_toolchain()
    (tmp_path / "leaky.c").write_text(
        "#include <stdlib.h>\nint *grab(unsigned n) { return calloc(n, sizeof(int)); }\n"
        "void drop(int *p) { free(p); }\n"
    )
    assert allocator_calls(tmp_path, ["leaky.c"], tmp_path) == {"leaky.c": {"calloc", "free"}}


MARKERS = {
    "bash": ("complete", "_shtab_onert_ckpt"),
    "zsh": ("#compdef onert-ckpt", "_arguments"),
    "tcsh": ("complete onert-ckpt", "'p/1/("),
}


@pytest.mark.parametrize("shell", sorted(MARKERS))
def test_completion_for_each_shell(shell: str) -> None:
    """README, command table: ``completion bash|zsh|tcsh`` writes a completion script."""
    pytest.importorskip("shtab", reason="shtab (shell completion) is not installed")
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", "completion", shell],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for marker in MARKERS[shell]:
        assert marker in done.stdout, (shell, marker)
    for command in ("info", "validate", "dump", "diff", "convert", "export", "import", "new"):
        assert command in done.stdout, (shell, command)


def _ci_test_command() -> str:
    """The line of .ci/run after its "The test command from README.md, verbatim" comment."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    marks = [i for i, line in enumerate(lines) if "test command from README.md" in line]
    assert len(marks) == 1, "the test command of .ci/run is no longer marked"
    return lines[marks[0] + 1].strip()


def test_ci_runs_the_readme_test_command() -> None:
    """README: the test command "is what CI runs, in .ci/run"."""
    command = _ci_test_command()
    assert "python -m pytest" in command
    readme = (ROOT / "README.md").read_text().splitlines()
    assert command in (line.strip() for line in readme), (
        f"README.md has no line {command!r}: the README and .ci/run disagree on the test command")


#: A test file named in the docs (``tests/...py``) and a test in it (``file.py::test_name``;
#: a path without ``tests/`` is read from ``tests/``, as docs/claims.md writes them).
TEST_PATH = re.compile(r"(?<![\w/.-])tests/[\w/.-]+\.py\b")
TEST_REF = re.compile(r"(?<![\w/.-])((?:tests/)?[\w/.-]+\.py)::(\w+)")
#: The pages whose promises point at tests (README.md and the list of its promises).
PROMISE_PAGES = ("README.md", "docs/claims.md")


def broken_test_references(text: str, root: Path = ROOT) -> list[str]:
    """The test files and test functions ``text`` names that do not exist under ``root``."""
    broken = []
    for path in TEST_PATH.findall(text):
        if not (root / path).is_file():
            broken.append(path)
    for path, name in TEST_REF.findall(text):
        file = root / (path if path.startswith("tests/") else f"tests/{path}")
        if not file.is_file():
            broken.append(f"{path}::{name}")
        elif not re.search(rf"^\s*(?:async\s+)?def {name}\(|^class {name}\b", file.read_text(),
                           re.MULTILINE):
            broken.append(f"{path}::{name}")
    return sorted(set(broken))


@pytest.mark.parametrize("page", PROMISE_PAGES)
def test_every_test_a_promise_names_exists(page: str) -> None:
    """A renamed or removed test cannot leave a promise of README.md or docs/claims.md pointing
    at nothing: every ``tests/...py`` file and ``file.py::test`` they name is there."""
    text = (ROOT / page).read_text()
    assert TEST_PATH.search(text) or TEST_REF.search(text), f"{page} names no test"
    assert broken_test_references(text) == [], f"{page} names tests that do not exist"


def test_the_reference_check_can_fail() -> None:
    text = ("`tests/tools/test_cli.py::test_version`, `tools/test_cli.py::test_no_such_thing`, "
            "`tests/no_such_file.py`, `interop/test_gone.py::test_x`, "
            "`format/test_api.py::test_public_names`")
    assert broken_test_references(text) == [
        "interop/test_gone.py::test_x", "tests/no_such_file.py",
        "tools/test_cli.py::test_no_such_thing"]
