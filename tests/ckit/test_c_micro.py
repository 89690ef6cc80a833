"""The micro profile's reader (spec/c/micro) against the full reading of the library.

tests/ckit/micro_harness.c runs the micro reader as a device harness would and prints the
profile's line format; micro_lines.judge compares it with ``onert_checkpoint`` on every
conformance vector and every corpus case: a valid file read with the same content (index,
model index, bytes of every tensor and slot range, state), or refused with limit_exceeded
only where it is beyond the reader's buffer; an invalid one refused with a profile code, or
accepted only where the first failing rule is one the profile leaves to a full reader.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.ckit.micro_lines import judge, parse

ROOT = Path(__file__).resolve().parents[2]
MICRO = ROOT / "spec" / "c" / "micro"
VECTORS = sorted((ROOT / "spec" / "vectors").glob("*.ckpt"))
CORPUS = ROOT / "tests" / "corpus"
CASES = [CORPUS / "files" / c["file"]
         for c in json.loads((CORPUS / "manifest.json").read_text())["cases"]]
SOURCES = [ROOT / "tests" / "ckit" / "micro_harness.c", MICRO / "ockpt_micro.c",
           ROOT / "spec" / "c" / "ockpt_crc32.c"]


def build_harness(out: Path, *, source: Path | None = None) -> Path:
    """The harness with ASan and UBSan (``source`` replaces the micro reader: a mutant)."""
    exe = out / "micro_harness"
    srcs = [str(s) for s in SOURCES]
    if source is not None:
        srcs[1] = str(source)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    f"-I{MICRO}", "-o", str(exe), *srcs], check=True)
    return exe


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    return build_harness(tmp_path_factory.mktemp("micro"))


def run(exe: Path, path: Path, buffer: int = 4096) -> str:
    done = subprocess.run([str(exe), "--buffer", str(buffer), str(path)], capture_output=True,
                          text=True, timeout=60)
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr
    assert done.returncode == (0 if done.stdout.rstrip().endswith("end") else 1), done
    return done.stdout


def test_valid_schema3_vectors_read_the_library_content(harness):
    accepted = 0
    for path in VECTORS:
        if not path.name.startswith("v3-"):
            continue
        out = run(harness, path)
        assert judge(path, out) is None, (path.name, judge(path, out))
        accepted += parse(out)["refuse"] is None
    assert accepted >= 35  # all but the four whose data exceed a 4 KiB buffer


def test_every_vector_and_corpus_case_keeps_the_promise(harness):
    for path in VECTORS + CASES:
        out = run(harness, path)
        assert judge(path, out) is None, (path.name, judge(path, out))


def test_a_block_larger_than_the_buffer_is_refused_as_beyond_the_limits(harness):
    path = ROOT / "spec" / "vectors" / "v3-data-blocks.ckpt"  # 64-byte blocks
    assert parse(run(harness, path, buffer=64))["refuse"] is None
    small = ROOT / "spec" / "vectors" / "v3-data-blocks-64k.ckpt"
    assert parse(run(harness, small))["refuse"][:2] == ("limit_exceeded",
                                                        "data_blocks.block_shift")
