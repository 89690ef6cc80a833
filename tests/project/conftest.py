"""The documentation site, built once per run for the tests that read it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_build import built_once

ROOT = Path(__file__).resolve().parents[2]


def build_site(folder: Path) -> Path:
    """``mkdocs build --strict`` of the repository into ``folder``/site: broken links, missing
    pages and unresolved API cross-references fail the build."""
    site = folder / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return site


@pytest.fixture(scope="session")
def docs_site(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site (tests/conftest.py marks every test that uses it slow)."""
    if any(importlib.util.find_spec(m) is None for m in ("mkdocs", "mkdocstrings")):
        pytest.skip("mkdocs and mkdocstrings-python are not installed (the [docs] extra)")
    return built_once(pytestconfig, tmp_path_factory, "docs-site", build_site)
