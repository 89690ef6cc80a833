"""tests/shared_build.py: under pytest-xdist a session fixture's build runs once for the run,
not once per worker, and every worker gets the one result.

The case runs pytest with two workers in a subprocess on a two-test module whose session fixture
builds through ``built_once``; each build appends a line to a file, each test the path it got."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''
import os
import time
from pathlib import Path

import pytest

from tests.shared_build import built_once


def _build(folder):
    with open(os.environ["BUILDS"], "a") as f:
        f.write(f"{folder}\\n")
    time.sleep(1)  # both workers are in their fixture by now
    (folder / "exe").write_text("built")
    return folder / "exe"


@pytest.fixture(scope="session")
def exe(pytestconfig, tmp_path_factory):
    return built_once(pytestconfig, tmp_path_factory, "thing", _build)


def _record(exe):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.environ["USES"], "a") as f:
        f.write(f"{worker} {exe} {exe.read_text()}\\n")


def test_a(exe):
    _record(exe)


def test_b(exe):
    _record(exe)
'''


def _pytest(tmp_path: Path, *args: str, **env: str) -> tuple[list[list[str]], list[str]]:
    """Run MODULE: (worker, result, its text) per test, and the folders built."""
    module = tmp_path / "test_build.py"
    module.write_text(MODULE)
    builds, uses = tmp_path / "builds.txt", tmp_path / "uses.txt"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    environ.update(BUILDS=str(builds), USES=str(uses), PYTHONPATH=str(ROOT), **env)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args,
         "--rootdir", str(tmp_path), "-c", os.devnull, "--basetemp", str(tmp_path / "base"),
         str(module)],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in uses.read_text().splitlines()]
    return rows, builds.read_text().splitlines()


def test_without_xdist_the_build_is_the_sessions_own(tmp_path: Path) -> None:
    """Outside a worker (a child pytest inherits PYTEST_XDIST_WORKER from the worker that
    starts it) the build goes into the session's own temporary folder, never a shared root."""
    rows, builds = _pytest(tmp_path, "-p", "no:xdist", PYTEST_XDIST_WORKER="gw0")
    assert [w for w, _, _ in rows] == ["gw0", "gw0"] and len(builds) == 1
    assert Path(builds[0]).parent == tmp_path / "base", builds


def test_two_workers_build_once_and_share_the_result(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    rows, builds = _pytest(tmp_path, "-n", "2")
    assert sorted(worker for worker, _, _ in rows) == ["gw0", "gw1"], rows
    assert len({exe for _, exe, _ in rows}) == 1 and {text for _, _, text in rows} == {"built"}
    assert len(builds) == 1
