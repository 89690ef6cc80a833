"""The readers as committed before a format addition, run over files written now: how the
tests prove that an optional section keeps old readers reading (SPEC.md 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The C reader's ways of reading a file: buffer or stream, with or without scratch memory.
MODES = ([], ["--no-scratch"], ["--stream"], ["--stream", "--no-scratch"])

_SCRIPT = (
    "import json, sys, onert_checkpoint as oc\n"
    "assert oc.__file__.startswith(sys.argv[1]), oc.__file__\n"
    "out = {}\n"
    "for path in sys.argv[2:]:\n"
    "    c = oc.load(path)\n"
    "    c.verify()\n"
    "    out[path] = [oc.describe(c), [t.data.tobytes().hex() for t in c.tensors],\n"
    "                 [s.kind for s in c.sections]]\n"
    "print(json.dumps(out))\n"
)


def old_tree(tmp_path: Path, commit: str, *paths: str) -> Path:
    """``paths`` of the repository as committed at ``commit``, unpacked into tmp_path."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the readers as committed before come from git history")
    res = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, *paths], capture_output=True, timeout=120
    )
    if res.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone: {res.stderr.decode()[:200]}")
    out = tmp_path / f"before-{commit}"
    with tarfile.open(fileobj=BytesIO(res.stdout)) as tar:
        tar.extractall(out, filter="data")
    return out


def read_with_old_library(
    tmp_path: Path, commit: str, files: list[Path]
) -> dict[str, list[object]]:
    """What the Python library as committed at ``commit`` makes of each file, loaded and
    verified: its description, every tensor's bytes (hex) and the kinds it kept as sections
    of other kinds."""
    old = old_tree(tmp_path, commit, "src", "generated/python")
    env = dict(os.environ, PYTHONPATH=f"{old / 'src'}{os.pathsep}{old / 'generated' / 'python'}")
    res = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(old), *map(str, files)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def old_c_reader(tmp_path: Path, commit: str) -> Path:
    """``ockpt-info`` of the C kit as committed at ``commit``, built with the kit's Makefile."""
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc and make are needed to build the C reader (.ci/run installs them)")
    old = old_tree(tmp_path, commit, "spec/c") / "spec" / "c"
    done = subprocess.run(
        ["make", "-s", "-C", str(old), "CC=gcc", "ockpt-info"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return old / "ockpt-info"


def assert_old_c_reader_agrees(old: Path, files: list[Path]) -> None:
    """The old ``ockpt-info`` describes each file as the library does now, in every mode."""
    import onert_checkpoint as oc

    for path in files:
        want = oc.describe(oc.load(path))
        for mode in MODES:
            res = subprocess.run([str(old), *mode, str(path)], capture_output=True, text=True)
            assert res.returncode == 0, (path.name, mode, res.stdout, res.stderr)
            assert json.loads(res.stdout) == want, (path.name, mode)
