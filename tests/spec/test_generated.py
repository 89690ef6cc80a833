"""generated/ is derived from spec/ by one command, and must not drift from it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
        assert f"OCKPT_E_{e['code'].upper()} = -{e['number']}," in header


def test_every_schema_is_compiled_for_every_target():
    """spec/regenerate.py picks up every spec/*.ksy (schema 3 included) for Python, JavaScript
    and the Graphviz diagram."""
    ksys = sorted(p.stem for p in (ROOT / "spec").glob("*.ksy"))
    assert "onert_checkpoint_v3" in ksys
    gen = ROOT / "generated"
    for stem in ksys:
        camel = "".join(part.capitalize() for part in stem.split("_"))
        assert (gen / "python" / "onert_checkpoint_generated" / f"{stem}.py").is_file(), stem
        assert (gen / "javascript" / f"{camel}.js").is_file(), stem
        for ext in ("dot", "svg"):
            assert (gen / "graphviz" / f"{stem}.{ext}").is_file(), stem


def test_schema_3_diagram_is_shown_in_section_7():
    text = (ROOT / "spec" / "SPEC.md").read_text()
    section = text.split("\n## 7. Schema 3")[1].split("\n## 8.")[0]
    assert "](../generated/graphviz/onert_checkpoint_v3.svg)" in section
    assert "(onert_checkpoint_v3.ksy)" in section
