"""Test programs built against spec/c's reader: one compile line for the probes of tests/ckit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

C_DIR = Path(__file__).resolve().parents[2] / "spec" / "c"
READER = ("ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c")
STRICT = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic")
SANITIZED = ("-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")


def build_probe(folder: Path, name: str, source: str, flags: tuple[str, ...] = ()) -> Path:
    """``source`` compiled with the C reader into ``folder/name`` by gcc, strict C99 plus
    ``flags``; skips where gcc is missing, fails with the compiler's words where it refuses."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed (.ci/run installs it)")
    (folder / f"{name}.c").write_text(source)
    exe = folder / name
    done = subprocess.run(
        ["gcc", *STRICT, *flags, f"-I{C_DIR}", "-o", str(exe), str(folder / f"{name}.c"),
         *(str(C_DIR / f) for f in READER)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return exe
