"""The micro profile's reader (spec/c/micro) against the full reading of the library.

tests/ckit/micro_harness.c runs the micro reader as a device harness would and prints the
profile's line format; ``onert_checkpoint.tools.micro_profile.judge`` compares it with the
library on every conformance vector and every corpus case: a valid file read with the same
content (index, model index, bytes of every tensor and slot range, state), or refused with
limit_exceeded
only where it is beyond the reader's buffer; an invalid one refused with a profile code, or
accepted only where the first failing rule is one the profile leaves to a full reader.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from onert_checkpoint.format.container.constants import crc as crc32c
from onert_checkpoint.tools.micro_profile import judge, parse
from tests.fuzz.structure import reseal_v2

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


def run(exe: Path, path: Path, buffer: int = 4096, timeout: float = 60) -> str:
    done = subprocess.run([str(exe), "--buffer", str(buffer), str(path)], capture_output=True,
                          text=True, timeout=timeout)
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


#: Mutants of the micro reader, each a rule dropped or broken: (what it breaks, old, new).
MUTANTS = [
    ("B6: a block is copied out whatever its CRC-32C",
     "if (got != le(c, 4)) return fail(", "if (got == ~le(c, 4)) return fail("),
    ("C9: a repeated order value is not noticed",
     "if (v >= n || m->buf[v >> 3] >> (v & 7u) & 1u)", "if (v >= n)"),
    ("P3: bytes after the last range are not refused",
     "if (m->at != m->d_len) return fail(m, R(GAP, F_DATA)",
     "if (0) return fail(m, R(GAP, F_DATA)"),
    ("P2: a range of 64 bytes or more aligned to its size",
     "a < len && a < OCKPT_V3_MAX_RANGE_ALIGNMENT;", "a < len;"),
    ("T3: the section table's CRC is not compared", "if (c != b) {", "if (0) {"),
]


def crafted(out: Path) -> list[Path]:
    """Files no vector is: an order column that repeats a record of the same size as the one
    it leaves out (the ranges still tile the data), and a section table whose CRC alone is
    wrong (the header resealed)."""
    data = bytearray((ROOT / "spec" / "vectors" / "v3-column-order.ckpt").read_bytes())
    order = bytes(data).index(bytes([1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]))
    data[order + 8] = 2  # order [1, 2, 2]: records 2 and 0 both hold 4 bytes
    (out / "order-repeat.ckpt").write_bytes(reseal_v2(bytes(data)))
    data = bytearray((ROOT / "spec" / "vectors" / "v3-adam.ckpt").read_bytes())
    data[28] ^= 1
    data[4:8] = bytes(4)
    data[4:8] = crc32c(bytes(data[:64])).to_bytes(4, "little")
    (out / "table-crc.ckpt").write_bytes(bytes(data))
    return [out / "order-repeat.ckpt", out / "table-crc.ckpt"]


def test_the_crafted_files_are_refused_for_their_rule(harness, tmp_path):
    repeat, table = crafted(tmp_path)
    assert parse(run(harness, repeat))["refuse"][:2] == ("bad_data_order", "tensors[].order")
    assert parse(run(harness, table))["refuse"][0] == "section_table_checksum"


@pytest.mark.parametrize("what,old,new", MUTANTS, ids=[m[0].split(":")[0] for m in MUTANTS])
def test_the_judgment_catches_the_mutant(tmp_path, what, old, new):
    source = (MICRO / "ockpt_micro.c").read_text()
    assert source.count(old) == 1, what
    mutant = tmp_path / "ockpt_micro.c"
    mutant.write_text(source.replace(old, new))
    exe = build_harness(tmp_path, source=mutant)
    files = crafted(tmp_path) + [p for p in VECTORS if "v3-" in p.name]
    wrong = []
    for p in files:
        try:
            wrong += [p.name] if judge(p, run(exe, p, timeout=5)) is not None else []
        except (subprocess.TimeoutExpired, AssertionError):  # a hang or a crash
            wrong.append(p.name)
    assert wrong, f"no vector or crafted file catches: {what}"


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed (.ci/run installs it)")
def test_the_goal_rows_hold_on_cortex_m4():
    done = subprocess.run([sys.executable, str(MICRO / "measure.py")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| library calls linked (`nm -u`) | none |" in done.stdout


def conformance(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", "conformance", "--jobs",
                           "2", *argv], capture_output=True, text=True, timeout=600)


def test_the_micro_reader_passes_conformance_profile_micro(harness):
    res = conformance("--profile", "micro", "--", str(harness), "{file}")
    assert res.returncode == 0, res.stdout[-3000:]
    assert " 0 disagree" in res.stdout


def test_a_mutant_of_the_micro_reader_fails_conformance_profile_micro(tmp_path):
    _, old, new = MUTANTS[0]  # B6: a block copied out whatever its CRC
    mutant = tmp_path / "ockpt_micro.c"
    mutant.write_text((MICRO / "ockpt_micro.c").read_text().replace(old, new))
    exe = build_harness(tmp_path, source=mutant)
    res = conformance("--profile", "micro", "--no-corpus", "--", str(exe), "{file}")
    assert res.returncode == 1, res.stdout[-2000:]
    assert "DISAGREE vector invalid-v3-b6-" in res.stdout
    assert "accepted a file the full reader refuses with block_checksum" in res.stdout


@pytest.mark.parametrize("output", ["micro 1 x\nend\n", "micro 1 64\n", "micro 1 64\nrefuse\n",
                                    "micro 1 64\naccept 1\nbogus 3\nend\n",
                                    "micro 1 64\nrefuse made_up f 0\n"])
def test_a_malformed_micro_output_disagrees(tmp_path, output):
    script = tmp_path / "reader.py"
    script.write_text(f"import sys\nsys.stdout.write({output!r})\n")
    res = conformance("--profile", "micro", "--select", "v3-adam", "--no-corpus", "--",
                      sys.executable, str(script), "{file}")
    assert res.returncode == 1 and "DISAGREE vector v3-adam" in res.stdout, res.stdout
    assert "Traceback" not in res.stderr, res.stderr


FUZZ_SECONDS = 60
FULL_READER = [ROOT / "spec" / "c" / n for n in
               ("ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c")]


def build_fuzzer(out: Path, micro_source: Path) -> Path:
    exe = out / "fuzz_micro"
    subprocess.run(["clang", "-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-O1",
                    "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
                    f"-I{MICRO}", "-o",
                    str(exe), str(ROOT / "tests" / "ckit" / "fuzz_micro.c"), str(micro_source),
                    *map(str, FULL_READER)], check=True)
    return exe


@pytest.mark.skipif(shutil.which("clang") is None, reason="clang not installed (.ci/run does)")
def test_the_differential_fuzzer_finds_no_disagreement_with_the_full_reader(tmp_path):
    """tests/ckit/fuzz_micro.c for FUZZ_SECONDS, seeded from the vectors and the corpus: the
    micro reader either refuses (with a profile code) or reads exactly what the full C reader
    reads; the B6 mutant makes the same seeds fail at once."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for path in VECTORS + CASES:
        (seeds / path.name).write_bytes(path.read_bytes())
    exe = build_fuzzer(tmp_path, MICRO / "ockpt_micro.c")
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([str(exe), f"-max_total_time={FUZZ_SECONDS}", "-max_len=4096",
                           f"-artifact_prefix={tmp_path}/", str(work), str(seeds)],
                          capture_output=True, text=True, timeout=FUZZ_SECONDS + 120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"Done (\d+) runs", done.stderr), done.stderr[-500:]
    _, old, new = MUTANTS[0]
    mutant = tmp_path / "mutant" / "ockpt_micro.c"
    mutant.parent.mkdir()
    mutant.write_text((MICRO / "ockpt_micro.c").read_text().replace(old, new))
    bad = build_fuzzer(mutant.parent, mutant)
    caught = subprocess.run([str(bad), "-runs=0", f"-artifact_prefix={tmp_path}/", str(seeds)],
                            capture_output=True, text=True, timeout=120)
    assert caught.returncode != 0 and "deadly signal" in caught.stderr


def test_a_state_key_is_escaped_with_uppercase_hex_and_percent_too(harness, tmp_path):
    """SPEC 11: key bytes 0x21..0x7E but ``%`` as themselves, every other byte (``%`` and the
    space too) as ``%`` and two uppercase hex digits; an int's two's-complement bits."""
    import onert_checkpoint as oc

    ckpt = oc.load(ROOT / "spec" / "vectors" / "v3-adam.ckpt")
    ckpt.state["a%b c\u00e9"] = -3
    path = tmp_path / "keys.ckpt"
    oc.save(ckpt, path)
    out = run(harness, path)
    assert "state a%25b%20c%C3%A9 int 18446744073709551613\n" in out
    assert judge(path, out) is None
    for wrong in ("a%b%20c%C3%A9", "a%25b%20c%c3%a9", "a%25b c%C3%A9"):
        assert judge(path, out.replace("a%25b%20c%C3%A9", wrong)) is not None, wrong


def test_a_valid_file_beyond_a_limit_is_judged_by_the_limits_field_and_offset(harness):
    """SPEC 11's limits: without data_blocks a data section larger than b is refused
    limit_exceeded, field ``data``, the data section body's offset; another field or offset
    disagrees."""
    path = ROOT / "spec" / "vectors" / "v3-range-index.ckpt"
    out = run(harness, path)
    code, field, offset = parse(out)["refuse"]
    assert (code, field) == ("limit_exceeded", "data") and judge(path, out) is None
    line = f"refuse {code} {field} {offset}"
    for wrong in (f"refuse {code} sections[].len_body {offset}", f"refuse {code} data 0",
                  f"refuse overlap {field} {offset}"):
        assert judge(path, out.replace(line, wrong)) is not None, wrong


@pytest.mark.parametrize("name", ["v3-adam", "invalid-v3-data-crc"])
def test_the_exit_status_is_judged_0_after_end_and_1_after_refuse(harness, tmp_path, name):
    path = ROOT / "spec" / "vectors" / f"{name}.ckpt"
    out = run(harness, path)
    right = 1 if parse(out)["refuse"] else 0
    assert judge(path, out, right) is None and judge(path, out, 1 - right) is not None
    script = tmp_path / "inverted.py"  # the harness's lines with the other exit status
    script.write_text("import subprocess, sys\n"
                      "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
                      "sys.stdout.write(done.stdout)\nsys.exit(1 - done.returncode)\n")
    res = conformance("--profile", "micro", "--select", name, "--no-corpus", "--",
                      sys.executable, str(script), str(harness), "{file}")
    assert res.returncode == 1 and f"DISAGREE vector {name}" in res.stdout, res.stdout
    assert "exit status" in res.stdout


def test_a_kind_repeated_after_another_kind_is_refused_not_left_to_a_full_reader(harness):
    """SPEC 11 checks a kind 1 to 4 or 0x100008 repeated anywhere in the table: the full
    reader's first failure on this vector is T4 i's section_order (left), yet accepting the
    file disagrees."""
    path = ROOT / "spec" / "vectors" / "invalid-v3-section-order.ckpt"  # tensors, ..., tensors
    out = run(harness, path)
    assert parse(out)["refuse"][:2] == ("duplicate_section", "sections[].kind")
    assert judge(path, out) is None
    assert judge(path, "micro 1 4096\naccept 1 0 -\nend\n") is not None
