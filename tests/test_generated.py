"""generated/ is derived from spec/ by one command, and must not drift from it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("dot") is None,
    reason="needs Node.js (kaitai-struct-compiler) and Graphviz dot; .ci/run installs both",
)
def test_regenerating_changes_nothing():
    result = subprocess.run(
        [sys.executable, str(ROOT / "spec" / "regenerate.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_compiler_version_is_pinned_exactly():
    import json

    lock = json.loads((ROOT / "spec" / "ksc" / "package-lock.json").read_text())
    entry = lock["packages"]["node_modules/kaitai-struct-compiler"]
    assert entry["version"] == "0.11.0"
    spec = json.loads((ROOT / "spec" / "ksc" / "package.json").read_text())
    assert spec["dependencies"]["kaitai-struct-compiler"] == "0.11.0"


def test_every_error_code_is_documented_once():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
        import tomli as tomllib

    from onert_checkpoint.format.errors import ERROR_CODES

    with open(ROOT / "spec" / "error-codes.toml", "rb") as f:
        table = tomllib.load(f)["error"]
    assert [e["code"] for e in table] == list(ERROR_CODES)
    header = (ROOT / "spec" / "c" / "ockpt_errors.h").read_text()
    for e in table:
        assert f"OCKPT_E_{e['code'].upper()} = {e['number']}," in header
