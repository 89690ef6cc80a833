"""The hypothesis seed of a run (tests/conftest.py): under CI=true every run
draws new examples, prints its seed, and a run given that seed draws the same examples again.

Each case runs pytest in a subprocess on a one-test module with this suite's conftest loaded as
a plugin, the way .ci/run runs the suite (CI=true)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DRAWING_TEST = '''
import os
from hypothesis import given, settings, strategies as st

@settings(max_examples=10)
@given(st.integers(0, 2**64))
def test_draw(x):
    with open(os.environ["DRAWS"], "a") as f:
        f.write(f"{x}\\n")
'''


#: Two tests drawing alike: under a fixed seed both draw the same examples, whichever process
#: runs them (each line says which: the pytest-xdist worker, or "main").
TWO_DRAWING_TESTS = '''
import os
from hypothesis import given, settings, strategies as st

def _record(name, x):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.environ["DRAWS"], "a") as f:
        f.write(f"{name} {worker} {x}\\n")

@settings(max_examples=10)
@given(st.integers(0, 2**64))
def test_a(x):
    _record("a", x)

@settings(max_examples=10)
@given(st.integers(0, 2**64))
def test_b(x):
    _record("b", x)
'''


def _pytest(tmp_path: Path, name: str, source: str, *args: str, **env: str) -> tuple[str, str]:
    """Run ``source`` as a test module: (what its tests appended to DRAWS, pytest's stdout)."""
    module = tmp_path / "test_draw.py"
    module.write_text(source)
    draws = tmp_path / f"{name}.txt"
    # not the seed of this run, nor the xdist worker this test may run in
    environ = {k: v for k, v in os.environ.items()
               if k != "OCKPT_HYPOTHESIS_SEED" and not k.startswith("PYTEST_XDIST")}
    environ.update(CI="true", DRAWS=str(draws), **env)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "--rootdir", str(tmp_path), "-c", os.devnull, *args, str(module)],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return draws.read_text(), done.stdout


def _run(tmp_path: Path, name: str, **env: str) -> tuple[list[int], str]:
    drawn, stdout = _pytest(tmp_path, name, DRAWING_TEST, **env)
    return [int(line) for line in drawn.split()], stdout


def _printed_seed(output: str) -> int:
    line = r"hypothesis seed: (\d+) \(reproduce with OCKPT_HYPOTHESIS_SEED=\1\)"
    seeds = re.findall(line, output)
    assert seeds, output
    return int(seeds[-1])


def test_ci_runs_vary_and_a_printed_seed_reproduces(tmp_path: Path) -> None:
    first, out1 = _run(tmp_path, "first")
    second, out2 = _run(tmp_path, "second")
    assert len(first) >= 10 and first != second  # CI=true no longer derandomizes
    seed = _printed_seed(out1)
    assert seed != _printed_seed(out2)
    again, out3 = _run(tmp_path, "again", OCKPT_HYPOTHESIS_SEED=str(seed))
    assert again == first and _printed_seed(out3) == seed



def test_xdist_workers_draw_from_the_printed_seed(tmp_path: Path) -> None:
    """Under pytest-xdist (``-n 2``, as pyproject.toml runs the suite) every worker seeds its
    tests with the seed the run prints, so a serial re-run with it draws the same examples."""
    pytest.importorskip("xdist")
    drawn, out = _pytest(tmp_path, "workers", TWO_DRAWING_TESTS, "-n", "2")
    rows = [line.split() for line in drawn.splitlines()]
    workers = {name: {w for n, w, _ in rows if n == name} for name in ("a", "b")}
    assert len(workers["a"]) == len(workers["b"]) == 1 and workers["a"] != workers["b"], rows
    by_test = {name: [int(x) for n, _, x in rows if n == name] for name in ("a", "b")}
    assert len(by_test["a"]) >= 10 and by_test["a"] == by_test["b"]
    seed = _printed_seed(out)
    again, _ = _pytest(tmp_path, "serial", TWO_DRAWING_TESTS, "-p", "no:xdist",
                       OCKPT_HYPOTHESIS_SEED=str(seed))
    serial = [line.split() for line in again.splitlines()]
    assert {w for _, w, _ in serial} == {"main"}
    assert [int(x) for n, _, x in serial if n == "a"] == by_test["a"]
