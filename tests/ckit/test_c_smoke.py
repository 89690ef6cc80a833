"""The C reader in the inner loop (``-m "not slow"``): spec/c's ``ockpt-info`` built once with
plain gcc (no sanitizers: about a second) reads a few conformance vectors of every revision,
valid and refused, in each of its read paths, and prints each vector's expectation.

The whole vector set, under the sanitizers, is tests/spec/test_vectors.py's ``test_c_reader``
(slow: the ``ockpt_info`` fixture); this is what a change to spec/c meets first.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "spec" / "c"
VECTORS = ROOT / "spec" / "vectors"

#: one or two vectors per revision and dialect, valid ones and refusals by rules of the
#: header, the tables, the records and the data (a damaged data byte found by its block)
SMOKE_VECTORS = (
    "v1-onert-adam",
    "v1-micro-sgd",
    "v1-onert-footerless-sgd",
    "wof-shuffled",
    "v2-full",
    "v3-full",
    "v3-data-blocks",
    "v3-range-index",
    "invalid-empty",
    "invalid-bad-magic-swapped",
    "invalid-v2-data-gap",
    "invalid-v3-c12-duplicate-name",
    "invalid-v3-b6-data-byte",
)

#: the read paths of ockpt-info (spec/c/README.md): each prints the same description
MODES = ((), ("--no-scratch",), ("--stream",), ("--deferred",))


def reader_sources() -> list[str]:
    """The reader's C files as the Makefile lists them (``LIB``), then ``ockpt_info.c``."""
    found = re.search(r"^LIB\s*=\s*(.+)$", (C_DIR / "Makefile").read_text(), re.MULTILINE)
    assert found is not None, "spec/c/Makefile has no LIB line"
    return [*found.group(1).split(), "ockpt_info.c"]


@pytest.fixture(scope="module")
def plain_ockpt_info(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is needed to build the C reader (.ci/run installs it)")
    exe = tmp_path_factory.mktemp("c-smoke") / "ockpt-info"
    done = subprocess.run(
        [gcc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O0", "-o", str(exe),
         *reader_sources()],
        cwd=C_DIR, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, f"the C reader does not build:\n{done.stderr}"
    return exe


def c_description(exe: Path, name: str, mode: tuple[str, ...]) -> tuple[int, dict]:
    done = subprocess.run(
        [str(exe), *mode, str(VECTORS / f"{name}.ckpt")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    got = json.loads(done.stdout)
    if "error" in got:
        got["error"].pop("message", None)
    return done.returncode, got


def test_the_smoke_vectors_cover_every_revision_valid_and_refused() -> None:
    wanted = {name: json.loads((VECTORS / f"{name}.json").read_text()) for name in SMOKE_VECTORS}
    revisions = {want["revision"] for want in wanted.values() if "error" not in want}
    assert revisions == {"v1", "wof", "v2", "v3"}
    codes = {want["error"]["code"] for want in wanted.values() if "error" in want}
    assert "block_checksum" in codes and len(codes) >= 4


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m[0][2:] if m else "default")
@pytest.mark.parametrize("name", SMOKE_VECTORS)
def test_c_reader_prints_the_vectors_expectation(
    plain_ockpt_info: Path, name: str, mode: tuple[str, ...]
) -> None:
    want = json.loads((VECTORS / f"{name}.json").read_text())
    status, got = c_description(plain_ockpt_info, name, mode)
    assert got == want
    assert status == (1 if "error" in want else 0)
