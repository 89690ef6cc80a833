"""The sources are ruff-clean (the project's lint settings in pyproject.toml), in CI too."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")
def test_ruff_clean() -> None:
    res = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests", "spec",
                          "docs/hooks"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
