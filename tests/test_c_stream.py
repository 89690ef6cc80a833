"""The streaming C reader (ockpt_read_stream, spec/c/ockpt_stream.c) against the buffer reader.

``ockpt-info --stream`` reads a file through a read-at-offset callback (fseek/fread) with the
reader's fixed-size state, instead of a whole-file buffer; on every conformance vector and every
corpus case (tests/corpus/manifest.json) it prints exactly what the buffer reader prints, with
and without scratch memory. A callback that fails (a file shorter than the size the caller
claims) gives ``truncated_file`` at field "stream", never a wrong description. The state size
spec/c/README.md states is the compiled one. The fuzz harness (tests/fuzz, spec/c/fuzz_ockpt.c)
checks the same agreement, and the bounds of every callback read, on every input it makes. The
library files (reader and writer) call nothing outside themselves: no allocation, no libc.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
C_DIR = ROOT / "spec" / "c"
VECTORS = sorted((ROOT / "spec" / "vectors").glob("*.ckpt"))
CORPUS = ROOT / "tests" / "corpus"
CASES = [CORPUS / "files" / c["file"]
         for c in json.loads((CORPUS / "manifest.json").read_text())["cases"]]
FILES = VECTORS + CASES


def _run(exe: Path, *args: str) -> tuple[int, str]:
    res = subprocess.run([str(exe), *args], capture_output=True, text=True)
    assert "runtime error" not in res.stderr and "Sanitizer" not in res.stderr, res.stderr
    return res.returncode, res.stdout


def test_every_file_reads_the_same_through_a_stream(ockpt_info):
    """... and without scratch (SPEC 6.1's pairwise method) as with it."""
    assert len(VECTORS) > 200 and len(CASES) > 50
    assert any(p.name.startswith("v3-") for p in VECTORS)
    differ = []
    for path in FILES:
        want = _run(ockpt_info, str(path))
        assert want[0] in (0, 1), path
        for mode in (["--no-scratch"], ["--stream"], ["--stream", "--no-scratch"]):
            got = _run(ockpt_info, *mode, str(path))
            if got != want:
                differ.append(f"{path.name} {' '.join(mode)}:\n  {want}\n  {got}")
    assert not differ, "\n".join(differ[:10])


@pytest.mark.parametrize("name", ["v2-full", "v3-full", "v1-micro-adam", "v1-onert-adam"])
def test_a_failing_read_is_reported_not_misread(ockpt_info, tmp_path, name):
    """Cut the file short but claim its full size: the first read past the cut fails and the
    reader reports it (truncated_file, field "stream", the failed read's offset)."""
    data = (ROOT / "spec" / "vectors" / f"{name}.ckpt").read_bytes()
    cut = tmp_path / "cut.ckpt"
    for keep in (len(data) // 3, len(data) - 1):
        cut.write_bytes(data[:keep])
        code, out = _run(ockpt_info, f"--stream-size={len(data)}", str(cut))
        err = json.loads(out)["error"]
        assert code == 1 and (err["code"], err["field"]) == ("truncated_file", "stream"), out
        assert keep - 64 < err["offset"] <= keep
    cut.write_bytes(data)
    assert _run(ockpt_info, f"--stream-size={len(data)}", str(cut)) == _run(ockpt_info, str(cut))


def test_the_documented_state_size_is_the_compiled_one(tmp_path):
    """spec/c/README.md states sizeof(ockpt_stream) and sizeof(ockpt_file) on this target."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed")
    src = tmp_path / "sizes.c"
    src.write_text('#include <stdio.h>\n#include "ockpt.h"\n'
                   'int main(void) { printf("%zu %zu", sizeof(ockpt_stream), sizeof(ockpt_file));'
                   " return 0; }\n")
    exe = tmp_path / "sizes"
    subprocess.run(["gcc", "-std=c99", "-I", str(C_DIR), "-o", str(exe), str(src)], check=True)
    stream, file = map(int, subprocess.run([str(exe)], capture_output=True, text=True,
                                           check=True).stdout.split())
    readme = (C_DIR / "README.md").read_text()
    m = re.search(r"`sizeof\(ockpt_stream\)` is (\d+) bytes and `sizeof\(ockpt_file\)` (\d+)",
                  readme)
    assert m is not None, "spec/c/README.md does not state the stream reader's state size"
    assert (int(m.group(1)), int(m.group(2))) == (stream, file)


#: What a compiler may emit on its own (struct copies, position-independent code).
COMPILER_SYMBOLS = {"memcpy", "memset", "memmove", "_GLOBAL_OFFSET_TABLE_"}
LIBRARY = ["ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c",
           "ockpt_write.c"]


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_the_library_calls_nothing_outside_itself(tmp_path, opt):
    """No allocation, no I/O, no libc: every symbol the reader and writer files leave undefined
    is defined by another file of the library (or emitted by the compiler itself)."""
    if shutil.which("gcc") is None or shutil.which("nm") is None:
        pytest.skip("gcc and nm (binutils) are needed")
    defined: set[str] = set()
    undefined: dict[str, set[str]] = {}
    for name in LIBRARY:
        obj = tmp_path / f"{name}.o"
        subprocess.run(["gcc", "-std=c99", opt, "-c", str(C_DIR / name), "-o", str(obj)],
                       check=True)
        table = subprocess.run(["nm", str(obj)], capture_output=True, text=True, check=True)
        for line in table.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                undefined.setdefault(parts[1], set()).add(name)
            elif len(parts) == 3 and parts[1] in "TDBR":
                defined.add(parts[2])
    outside = {sym: files for sym, files in undefined.items()
               if sym not in defined and sym not in COMPILER_SYMBOLS}
    assert not outside, f"the library calls outside itself: {outside}"
    assert {"ockpt_read", "ockpt_read_stream", "ockpt_write"} <= defined
