"""The package's type hints are checked: `python -m mypy` (configured by pyproject's
[tool.mypy], over src/onert_checkpoint) reports no error.

The package ships ``py.typed`` (PEP 561), so users' type checkers read these hints; a wrong
hint is a bug they see in their own code.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (pip install -e '.[test]')",
)


def test_package_ships_py_typed() -> None:
    assert (ROOT / "src" / "onert_checkpoint" / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'onert_checkpoint = ["py.typed"]' in pyproject


@needs_mypy
def test_mypy_reports_no_error() -> None:
    # mypy keeps its incremental cache in .mypy_cache (it writes its own .gitignore there).
    proc = subprocess.run(
        [sys.executable, "-m", "mypy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout
