"""The documentation site builds in strict mode (broken links, missing pages, unresolved API
references fail), and its CLI reference is the command line's own help."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="mkdocs and mkdocstrings-python are not installed (the [docs] extra)",
)


def test_site_builds_strict(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert res.returncode == 0, res.stderr[-4000:]
    page = (tmp_path / "site" / "cli-reference" / "index.html").read_text()
    from onert_checkpoint.tools.cli import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions:
        for name in action.choices:
            assert f"onert-ckpt {name}" in page, f"CLI reference misses {name}"
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    import onert_checkpoint as oc

    for name in oc.__all__:
        if not name.startswith("_"):
            assert name in api, f"API reference misses {name}"
