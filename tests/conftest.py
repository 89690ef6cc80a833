"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

C_DIR = Path(__file__).resolve().parents[1] / "spec" / "c"


@pytest.fixture(scope="session")
def ockpt_info(tmp_path_factory) -> Path:
    """The reference C reader's ``ockpt-info``, built from spec/c/ into a temporary folder with
    ``-fsanitize=address,undefined`` (the Makefile's default); ``OCKPT_INFO`` names another
    implementation that prints the same JSON instead."""
    other = os.environ.get("OCKPT_INFO")
    if other:
        return Path(other)
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc and make are needed to build the C reader (.ci/run installs them)")
    build = tmp_path_factory.mktemp("ockpt")
    for src in C_DIR.iterdir():
        if src.suffix in (".c", ".h") or src.name == "Makefile":
            shutil.copy(src, build / src.name)
    done = subprocess.run(
        ["make", "-s", "-C", str(build), "CC=gcc", "ockpt-info"], capture_output=True, text=True
    )
    exe = build / "ockpt-info"
    if done.returncode != 0 or not exe.exists():
        pytest.fail(f"the C reader does not build:\n{done.stdout}\n{done.stderr}")
    return exe
