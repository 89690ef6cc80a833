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


def _run(tmp_path: Path, name: str, **env: str) -> tuple[list[int], str]:
    module = tmp_path / "test_draw.py"
    module.write_text(DRAWING_TEST)
    draws = tmp_path / f"{name}.txt"
    environ = {k: v for k, v in os.environ.items() if k != "OCKPT_HYPOTHESIS_SEED"}
    environ.update(CI="true", DRAWS=str(draws), **env)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "--rootdir", str(tmp_path), "-c", os.devnull, str(module)],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [int(line) for line in draws.read_text().split()], done.stdout


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

