"""The generated Kaitai parser, the generated Construct structs and the library's NumPy table
reading agree.

The parsers generated from spec/*.ksy define the structure, but read an offset table one Python
call per entry; the library reads the tables with NumPy (revisions/blocks.read_table, used by
v1.read_layout and wof.read_layout) and writes its headers and footer through the generated
Construct structs (tests/spec/whole_files.py reads whole files with them: spec/regenerate.py's
own generator, not the Kaitai compiler, from the same .ksy, so two generators from one source).
Here all three read every header field, every entry of every offset table and the footer of: the
real exports, every file of spec/vectors/ and tests/corpus/, files written from hypothesis-drawn
checkpoints, and mutations of those. Where the Kaitai parser can read the structure at all, the
other two read exactly the same values; where it cannot (a short file, a bad magic), neither can
the Construct structs.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated.onert_checkpoint_v1 import OnertCheckpointV1
from onert_checkpoint_generated.onert_wof import OnertWof

from onert_checkpoint import CheckpointError
from onert_checkpoint.format.revisions.blocks import read_table
from onert_checkpoint.format.revisions.v1 import reader as v1
from onert_checkpoint.format.revisions.wof import reader as wof
from tests.spec import whole_files
from tests.strategies import checkpoint_files, mutated_files

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    [
        *(ROOT / "tests" / "data").rglob("*.ckpt"),
        *(ROOT / "spec" / "vectors").glob("*.ckpt"),
        *(p for p in (ROOT / "tests" / "corpus").rglob("*") if p.is_file() and p.suffix not in
          (".json", ".md", ".py")),
    ]
)
HEADER_FIELDS_V1 = ("magic", "version", "reserved", "ofs_opt1", "ofs_opt2", "ofs_other",
                    "num_entries")
HEADER_FIELDS_WOF = ("magic", "version", "reserved", "num_entries")
VERSION_1 = (429).to_bytes(2, "little") + b"\x01"  # magic and version byte


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# -- the structure as each reader sees it: a dict, or None when it cannot read it --------------
def kaitai_v1(data: bytes) -> dict[str, Any] | None:
    try:
        k = OnertCheckpointV1(KaitaiStream(io.BytesIO(data)))
        out: dict[str, Any] = {"header": {f: getattr(k, f) for f in HEADER_FIELDS_V1}}
        out["weights"] = list(k.weights.ofs_entries)
        if k.has_opt1:
            out["m"] = list(k.opt1.ofs_entries)
        if k.opt2 is not None:
            out["v"] = list(k.opt2.ofs_entries)
        if k.has_footer:
            out["footer"] = {"step": k.footer.step, "epoch": k.footer.epoch}
        return out
    except Exception:  # the generated code raises EOFError, struct.error and its own errors
        return None


def construct_v1(data: bytes) -> dict[str, Any] | None:
    try:
        c = whole_files.read_v1(data)
    except Exception:
        return None
    out: dict[str, Any] = {"header": {f: c.header[f] for f in HEADER_FIELDS_V1}}
    out["weights"] = c.weights.tolist()
    for name in ("m", "v"):
        if c[name] is not None:
            out[name] = c[name].tolist()
    if c.footer is not None:
        out["footer"] = {"step": c.footer.step, "epoch": c.footer.epoch}
    return out


def numpy_v1(data: bytes, header: dict[str, int]) -> dict[str, Any]:
    """The library's table reading, at the places the header gives (the tables fit the file)."""
    view = memoryview(data)
    n = header["num_entries"]
    starts = {"weights": v1.HEADER_SIZE}
    if header["ofs_opt2"] != 0:
        starts.update(m=header["ofs_opt1"], v=header["ofs_opt2"])
    # read_table's precondition, which validation establishes before the library calls it
    return {name: read_table(view, start, n).tolist() for name, start in starts.items()
            if start + 4 * n <= len(data)}


def kaitai_wof(data: bytes) -> dict[str, Any] | None:
    try:
        k = OnertWof(KaitaiStream(io.BytesIO(data)))
        return {"header": {f: getattr(k, f) for f in HEADER_FIELDS_WOF},
                "tensors": list(k.ofs_entries)}
    except Exception:
        return None


def construct_wof(data: bytes) -> dict[str, Any] | None:
    try:
        c = whole_files.read_wof(data)
    except Exception:
        return None
    return {"header": {f: c.header[f] for f in HEADER_FIELDS_WOF},
            "tensors": c.ofs_entries.tolist()}


# -- the bytes themselves: struct.unpack at the places spec/SPEC.md gives (sections 4.2, 4.3, 5).
# The library reads its headers with the generated parser itself, so its header objects are
# compared with these, not with another parse by the same generated code.
def raw_header_v1(data: bytes) -> dict[str, int]:
    return dict(zip(HEADER_FIELDS_V1, struct.unpack_from("<HBBIIII", data, 0)))


def raw_footer_v1(data: bytes) -> dict[str, int]:
    ofs_other = struct.unpack_from("<I", data, 12)[0]
    return dict(zip(("step", "epoch"), struct.unpack_from("<II", data, ofs_other)))


def raw_header_wof(data: bytes) -> dict[str, int]:
    return dict(zip(HEADER_FIELDS_WOF, struct.unpack_from("<HBBI", data, 0)))


# -- the comparisons ----------------------------------------------------------------------------
def check_v1(data: bytes) -> bool:
    """Compare the three readings of ``data`` as a schema-1 checkpoint; True when it validates."""
    k = kaitai_v1(data)
    c = construct_v1(data)
    assert (k is None) == (c is None), f"generated parser read {k!r}, Construct read {c!r}"
    if k is not None:
        assert c == k
        for name, table in numpy_v1(data, k["header"]).items():
            assert table == k[name], name
    if not data.startswith(VERSION_1):
        return False  # the library's readers start after the dispatcher's magic and version checks
    try:
        layout = v1.read_layout(memoryview(data))
    except CheckpointError:
        return False
    assert k is not None, "the library validated a file the generated parser cannot read"
    assert {f: getattr(layout.header, f) for f in HEADER_FIELDS_V1} == raw_header_v1(data)
    assert {name: b.offsets.tolist() for name, b in layout.blocks.items()} == {
        name: k[name] for name in ("weights", "m", "v") if name in k
    }
    assert layout.has_footer == ("footer" in k)
    if layout.has_footer:
        footer = layout.header.footer
        assert {"step": footer.step, "epoch": footer.epoch} == raw_footer_v1(data)
    for block in layout.blocks.values():
        assert block.offsets.dtype == np.int64
    return True


def check_wof(data: bytes) -> bool:
    k = kaitai_wof(data)
    c = construct_wof(data)
    assert (k is None) == (c is None), f"generated parser read {k!r}, Construct read {c!r}"
    if k is not None:
        assert c == k
        view = memoryview(data)
        table = read_table(view, wof.HEADER_SIZE, k["header"]["num_entries"])
        assert table.tolist() == k["tensors"]
    if not data.startswith(VERSION_1):
        return False
    try:
        hdr, block = wof.read_layout(memoryview(data))
    except CheckpointError:
        return False
    assert k is not None, "the library validated a file the generated parser cannot read"
    assert {f: getattr(hdr, f) for f in HEADER_FIELDS_WOF} == raw_header_wof(data)
    assert block.offsets.tolist() == k["tensors"]
    return True


def check(data: bytes) -> bool:
    """Both version-1 structures (a file is told apart by validation, spec/SPEC.md); True when
    the library validates it as either."""
    if len(data) >= 3 and data[:2] == VERSION_1[:2] and data[2] != 1:
        return False  # another revision: its own structure, not these tables
    valid_v1 = check_v1(data)
    valid_wof = check_wof(data)
    return valid_v1 or valid_wof


# -- the files ----------------------------------------------------------------------------------
def test_the_files_exist():
    names = [p.name for p in FILES]
    assert "fc2-adam-step8.ckpt" in names and "fc2-sgd-step8.ckpt" in names


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_every_file_reads_the_same(path: Path):
    check(path.read_bytes())


def test_the_valid_files_are_compared_in_full():
    """Guard against a vacuous pass: the real exports and the valid vectors validate."""
    valid = {_rel(p) for p in FILES if check(p.read_bytes())}
    assert "tests/data/real-onert/fc2-adam-step8.ckpt" in valid
    assert "tests/data/real-onert/fc2-sgd-step8.ckpt" in valid
    vectors = ROOT / "spec" / "vectors"
    for p in vectors.glob("v1-*.ckpt"):
        assert _rel(p) in valid
    for p in vectors.glob("wof-*.ckpt"):
        assert _rel(p) in valid


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(checkpoint_files(max_entries=12).filter(lambda s: s.revision in ("v1", "wof")))
def test_written_files_read_the_same(sample):
    assert check(sample.data), "a file the library wrote does not validate"


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_files())
def test_mutated_files_read_the_same(mutated):
    check(mutated[0])
