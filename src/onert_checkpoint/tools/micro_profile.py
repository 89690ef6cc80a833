"""The micro profile's line format and its judgment (SPEC.md section 11).

A device harness prints ``micro 1 <buffer>``, then ``accept``, ``state``, ``tensor`` and
``slot`` lines and ``end``, or at any point ``refuse <code> [<field> [<offset>]]`` as its last
line (tests/ckit/micro_harness.c prints it for spec/c/micro). :func:`judge` compares one
output with the Python library's full reading of the same file, by the profile's promise:
a file the library finds valid is read with the same content (or refused with
``limit_exceeded`` where the file is beyond the reader's buffer); an invalid one is refused
with a code of :data:`MICRO_CODES`, or accepted only when the library's first error is a rule
the profile leaves to a full reader (:func:`left_to_full`).
"""

from __future__ import annotations

import functools
import re
import struct
import urllib.parse
from collections import Counter
from pathlib import Path
from typing import Any

from ..api import load
from ..format.container.constants import crc as crc32c
from ..format.errors import FormatError, UnsupportedFormatError
from ..format.model import Checkpoint

__all__ = ["MICRO_CODES", "judge", "left_to_full", "parse"]

#: The codes a micro reader may refuse a file with (SPEC.md section 11).
MICRO_CODES = frozenset({
    "truncated_header", "bad_magic", "unsupported_version", "header_checksum",
    "truncated_file", "trailing_bytes", "overlap", "gap", "limit_exceeded",
    "count_exceeds_file", "section_table_checksum", "reserved_nonzero", "misaligned",
    "offset_out_of_bounds", "unknown_required_section", "duplicate_section",
    "section_checksum", "bad_data_blocks", "block_checksum", "tensor_order",
    "duplicate_tensor_index", "bad_data_order", "bad_optimizer",
})

#: Codes whose every rule the profile leaves to a full reader.
_LEFT_CODES = frozenset({
    "nonzero_padding", "redundant_column", "bad_dtype", "shape_mismatch", "bad_utf8",
    "duplicate_tensor_name", "duplicate_slot_name", "duplicate_state_key", "bad_state_type",
    "bad_origin", "bad_range_index", "bad_section_flags", "section_order", "empty_section",
})
_KEPT_KINDS = (1, 2, 3, 4, 0x100008)  # the sections a micro reader reads


def _entry_kind(data: bytes, field: str) -> int | None:
    """The kind of section-table entry i named by a field ``sections[i]...``."""
    found = re.match(r"sections\[(\d+)\]", field)
    if not found or 64 + 32 * int(found[1]) + 4 > len(data):
        return None
    return int.from_bytes(data[64 + 32 * int(found[1]):][:4], "little")


def left_to_full(code: str, field: str, data: bytes) -> bool:
    """Whether the first failing rule (code, field) of a full reading of ``data`` is one the
    micro profile leaves to a full reader."""
    if code in _LEFT_CODES:
        return True
    if code == "reserved_nonzero":  # only column bits and section flags are checked
        return field != "tensors.columns" and not (field.startswith("sections[")
                                                   and field.endswith(".flags"))
    if code == "duplicate_tensor_index":
        return field.endswith(".model_index")
    if code == "limit_exceeded":
        pattern = r"tensors\[\d+\]\.(len_name|rank)|state\[\d+\]\.len_value"
        return re.fullmatch(pattern, field) is not None
    if code == "gap":
        return field.startswith("sections[") or field == "origin"
    if code == "count_exceeds_file":
        return field == "origin"
    if code in ("section_checksum", "duplicate_section"):
        kind = _entry_kind(data, field)
        if kind == 4 and code == "section_checksum":  # the data section's own CRC: B6's second
            return _has_blocks(data)  # half, redundant with the block CRCs a micro reader checks
        return kind not in _KEPT_KINDS
    return False


def _entries(data: bytes) -> list[tuple[int, int]]:
    """(kind, len_body) of each section-table entry that lies in the file."""
    count = int.from_bytes(data[24:28], "little") if len(data) >= 28 else 0
    return [struct.unpack_from("<I12xQ", data, 64 + 32 * i) for i in range(min(count, 64))
            if 64 + 32 * i + 32 <= len(data)]


def _has_blocks(data: bytes) -> bool:
    return any(kind == 0x100008 for kind, _ in _entries(data))


def parse(text: str) -> dict[str, Any]:
    """One harness output: ``{"buffer", "refuse": (code, field, offset) | None, "accept",
    "state", "tensors", "slots"}`` (tensors and slots as Counters of their lines' words)."""
    lines = text.splitlines()
    head = lines[0].split() if lines else []
    if len(head) != 3 or head[:2] != ["micro", "1"]:
        raise ValueError(f"not a micro 1 output: {text[:80]!r}")
    out: dict[str, Any] = {"buffer": int(head[2]), "refuse": None, "accept": None, "state": [],
                 "tensors": Counter(), "slots": Counter()}
    last = lines[-1].split()
    if last[0] == "refuse":  # the field and offset are optional ("where it can")
        out["refuse"] = (last[1], *last[2:3], *map(int, last[3:4]))
    elif last != ["end"]:
        raise ValueError(f"output ends in neither end nor refuse: {lines[-1]!r}")
    for line in lines[1:-1]:
        word, *rest = line.split()
        if word == "accept":
            out["accept"] = tuple(rest)
        elif word == "state":  # the key's bytes, %XX in either case
            out["state"].append((urllib.parse.unquote_to_bytes(rest[0]), *rest[1:]))
        elif word in ("tensor", "slot"):  # the CRC's hex digits in either case
            words = (*rest[:-1], rest[-1].lower())
            out[word + "s"][words] += 1
        else:
            raise ValueError(f"unknown line {line!r}")
    return out


_KINDS = {"sgd": 0, "sgd_momentum": 1, "adam": 2}


def expected(ckpt: Checkpoint) -> dict[str, Any]:
    """What a micro reader prints for a valid file, as :func:`parse` returns it."""
    opt = ckpt.optimizer
    kind = "-" if opt is None else str(_KINDS[opt.kind] if opt.kind in _KINDS
                                       else int(opt.kind.rsplit("_", 1)[1]))
    slots = "0" if opt is None else str(len(opt.slots))
    out: dict[str, Any] = {"accept": (str(len(ckpt.tensors)), slots, kind), "state": [],
                           "tensors": Counter(), "slots": Counter()}
    for key, value in ckpt.state.items():
        if isinstance(value, float):
            row = ("float", str(struct.unpack("<Q", struct.pack("<d", value))[0]))
        elif isinstance(value, int):
            row = ("int", str(value & (2**64 - 1)))
        elif isinstance(value, str):
            row = ("string", str(len(value.encode())))
        else:
            row = ("bytes", str(len(bytes(value))))  # type: ignore[call-overload]
        out["state"].append((key.encode(), *row))
    for t in ckpt.tensors:
        model = "-" if t.model_index is None else str(t.model_index)
        out["tensors"][(str(t.index), model, str(t.nbytes),
                        f"{crc32c(t.raw.tobytes()):08x}")] += 1
    for j, entries in enumerate(opt.slots.values() if opt else ()):
        for index, b in entries.items():
            out["slots"][(str(j), str(index), str(b.nbytes), f"{crc32c(b.raw.tobytes()):08x}")] += 1
    return out


def beyond_limits(ckpt: Checkpoint, data: bytes, buffer: int) -> bool:
    """Whether a valid file is beyond a micro reader's limits with this buffer: a block (or a
    data section without data_blocks) larger than it, or an order column of more records
    than 8 per byte of it."""
    size = ckpt.data_block_size or max((n for kind, n in _entries(data) if kind == 4),
                                       default=0)
    order = ckpt.data_order is not None and len(ckpt.data_order) > 8 * buffer
    return size > buffer or order or buffer < 64


@functools.cache
def full_reading(path: Path) -> tuple[str, Any]:
    """The library's full reading of a file: ("valid", checkpoint), ("invalid", (code, field))
    or ("other", revision or None) for a file of another revision or none."""
    try:
        ckpt = load(path)
        ckpt.verify()
    except UnsupportedFormatError:
        return ("other", None)
    except FormatError as e:
        return ("invalid", (e.code, e.field))
    return ("valid", ckpt) if ckpt.revision == "v3" else ("other", ckpt.revision)


def judge(path: Path, text: str) -> str | None:
    """None when the output keeps the profile's promise on this file, else what is wrong."""
    try:
        got = parse(text)
    except (ValueError, IndexError) as err:
        return f"not the micro line format: {err}"
    verdict, what = full_reading(path)
    refused = got["refuse"]
    if verdict == "other":
        if refused and refused[0] in MICRO_CODES and (what is None or refused[0] ==
                                                       "unsupported_version"):
            return None
        return f"a file of revision {what} not refused at detection: {refused}"
    if verdict == "invalid":
        code, field = what
        if refused is None:
            if left_to_full(code, field, path.read_bytes()):
                return None
            return f"accepted a file the full reader refuses with {code} at {field}"
        if refused[0] not in MICRO_CODES:
            return f"refused with {refused[0]}, not a micro profile code"
        return None
    ckpt: Checkpoint = what
    if refused is not None:
        if refused[0] == "limit_exceeded" and beyond_limits(ckpt, path.read_bytes(),
                                                            got["buffer"]):
            return None
        return f"refused a valid file within its limits: {refused}"
    want = expected(ckpt)
    for part in ("accept", "state", "tensors", "slots"):
        if got[part] != want[part]:
            return f"{part} differs: {got[part]} != {want[part]}"
    return None
