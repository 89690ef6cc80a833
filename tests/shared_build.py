"""A build the test processes of one run share: under pytest-xdist (``-n 2``, pyproject.toml)
each worker runs the session fixtures, and a C or C++ build done twice costs the run its time."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(
    config: pytest.Config,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], Path],
) -> Path:
    """``build(folder)``, which builds into ``folder`` and returns what it built, done once per
    run. Under pytest-xdist the workers share the run's temporary root: the first to get here
    builds under a file lock there, the others wait for it and take its result (a build that
    skips or fails leaves no result: the next worker tries again and says so itself). Without
    xdist, a folder of this session's temporary root."""
    # A worker's config has xdist's workerinput (PYTEST_XDIST_WORKER in the environment is not
    # enough: a child pytest that a test starts inherits it).
    if not hasattr(config, "workerinput"):
        return build(tmp_path_factory.mktemp(name))
    root = tmp_path_factory.getbasetemp().parent
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = root / f"{name}.built"
        if result.exists():
            return Path(result.read_text())
        built = build(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root)))
        result.write_text(str(built))
        return built
