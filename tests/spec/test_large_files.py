"""Schema 1 and WOF files past 4 GiB (SPEC 4.7 rule 1, SPEC 5): their offsets are u32, so a
file of more than 2^32 - 1 bytes is refused with ``limit_exceeded`` at offset 2^32 - 1, not read
with sizes taken mod 2^32. Such a vector cannot be committed; these tests build it as a sparse
file (a few KiB on disk), for the Python library and the C reader alike."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint import FormatError

LIMIT = 2**32 - 1
EXPECTED = {"code": "limit_exceeded", "field": "file", "offset": LIMIT}


def sparse(path: Path, head: bytes, size: int) -> Path:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def wof(path: Path, size: int) -> Path:
    """One tensor whose data run from 12 to the end of the file."""
    return sparse(path, struct.pack("<HBBII", 429, 1, 0, 1, 12), size)


def footerless_v1(path: Path, size: int) -> Path:
    """onert's footer-less SGD layout (ofs_opt1 = ofs_opt2 = ofs_other = 0), one weight."""
    return sparse(path, struct.pack("<HBBIIIII", 429, 1, 0, 0, 0, 0, 1, 24), size)


LAYOUTS = {"wof": wof, "v1": footerless_v1}


def python_error(path: Path) -> dict:
    with pytest.raises(FormatError) as caught:
        oc.load(path)
    e = caught.value
    return {"code": e.code, "field": e.field, "offset": e.offset}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("size", [2**32, 2**32 + 100])
def test_file_over_4_gib_limit_exceeded(tmp_path: Path, layout: str, size: int) -> None:
    path = LAYOUTS[layout](tmp_path / f"big.{layout}", size)
    assert python_error(path) == EXPECTED


def test_largest_wof_file_is_read_whole(tmp_path: Path) -> None:
    """The limit is the last size allowed: 2^32 - 1 bytes still read, the entry to the end."""
    path = wof(tmp_path / "edge.wof", LIMIT)
    ckpt = oc.load(path)
    assert ckpt.revision == "wof"
    assert [t.nbytes for t in ckpt.tensors] == [LIMIT - 12]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_c_reader_file_over_4_gib_limit_exceeded(
    ockpt_info: Path, tmp_path: Path, layout: str
) -> None:
    path = LAYOUTS[layout](tmp_path / f"big.{layout}", 2**32 + 100)
    for mode in (["--stream"], ["--stream", "--no-scratch"]):
        done = subprocess.run(
            [str(ockpt_info), *mode, str(path)], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 1, done.stderr
        got = json.loads(done.stdout)["error"]
        got.pop("message")
        assert got == EXPECTED, mode
