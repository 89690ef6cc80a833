"""The README is a front page that claims nothing it does not check: its
command outputs are what the commands print, its Python example runs, it stays short, and
every local link resolves."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TEXT_BLOCK = re.compile(r"^```text\n(.*?)^```", re.MULTILINE | re.DOTALL)
PY_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def sessions() -> list[tuple[str, str]]:
    """(command, expected output) of every ``$ onert-ckpt ...`` in the README's text blocks."""
    out = []
    for block in TEXT_BLOCK.findall(README.read_text()):
        parts = re.split(r"^\$ ", block, flags=re.MULTILINE)
        for part in parts[1:]:
            command, _, output = part.partition("\n")
            out.append((command, output))
    return out


def test_front_page_is_short() -> None:
    assert len(README.read_text().splitlines()) <= 200


@pytest.mark.parametrize("command,expected", sessions(), ids=lambda v: v[:60])
def test_command_output_is_real(command: str, expected: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == "onert-ckpt"
    res = subprocess.run([sys.executable, "-m", "onert_checkpoint", *argv[1:]], cwd=ROOT,
                         capture_output=True, text=True)
    want_status = 0
    m = re.search(r"^\(exit (\d+)\)\n\Z", expected, re.MULTILINE)
    if m:
        want_status = int(m.group(1))
        expected = expected[: m.start()]
    assert res.returncode == want_status, res.stderr
    assert res.stdout + res.stderr == expected


def test_python_example_runs(tmp_path: Path, monkeypatch) -> None:
    blocks = PY_BLOCK.findall(README.read_text())
    assert blocks
    (tmp_path / "tests").mkdir()
    os.symlink(ROOT / "tests" / "data", tmp_path / "tests" / "data")
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_local_links_resolve() -> None:
    for target in LINK.findall(README.read_text()):
        if "://" in target:
            continue
        assert (ROOT / target).exists(), f"README links to a missing {target}"
