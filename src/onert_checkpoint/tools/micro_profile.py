"""The micro profile's line format and its judgment (SPEC.md section 11).

A device harness prints ``micro 1 <buffer>``, then ``accept``, ``state``, ``tensor`` and
``slot`` lines and ``end`` (exit status 0), or at any point ``refuse <code> <field> <offset>``
as its last line (exit status 1); tests/ckit/micro_harness.c prints it for spec/c/micro.
:func:`judge` compares one output with the Python library's full reading of the same file, by
the profile's promise: a file the library finds valid is read with the same content (or refused
with the ``limit_exceeded`` field and offset of a limit it is beyond); an invalid one is refused
with a code of :data:`MICRO_CODES`, or accepted only when the library's first error is a rule
the profile leaves to a full reader (:func:`left_to_full`).
"""

from __future__ import annotations

import functools
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Any

from onert_checkpoint_generated.layout import V3_DATA_BLOCKS_KIND, SectionKind

from ..api import load
from ..format.container.constants import OPTIMIZER_CODES
from ..format.container.constants import crc as crc32c
from ..format.errors import FormatError, UnsupportedFormatError
from ..format.model import Checkpoint
from ..format.revisions.registry import RECOMMENDED
from .layout_map import layout_map, section_entries

__all__ = ["MICRO_CODES", "judge", "left_to_full", "parse"]

#: The codes a micro reader may refuse a file with (SPEC.md section 11).
MICRO_CODES = frozenset({
    "truncated_header", "bad_magic", "unsupported_version", "header_checksum",
    "truncated_file", "trailing_bytes", "overlap", "gap", "limit_exceeded",
    "count_exceeds_file", "section_table_checksum", "reserved_nonzero", "misaligned",
    "offset_out_of_bounds", "unknown_required_section", "duplicate_section",
    "section_checksum", "bad_data_blocks", "block_checksum", "tensor_order",
    "duplicate_tensor_index", "bad_data_order", "bad_optimizer"})

#: Codes whose every rule the profile leaves to a full reader.
_LEFT_CODES = frozenset({
    "nonzero_padding", "redundant_column", "bad_dtype", "shape_mismatch", "bad_utf8",
    "duplicate_tensor_name", "duplicate_slot_name", "duplicate_state_key", "bad_state_type",
    "bad_origin", "bad_range_index", "bad_section_flags", "empty_section"})
#: the sections a micro reader reads
_KEPT_KINDS = (SectionKind.TENSORS, SectionKind.OPTIMIZER, SectionKind.STATE, SectionKind.DATA,
               V3_DATA_BLOCKS_KIND)


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
    kinds = [kind for kind, _, _ in section_entries(data)]
    if code == "section_order":  # a micro reader refuses a kept kind repeated anywhere
        kept = [kind for kind in kinds if kind in _KEPT_KINDS]
        return len(kept) == len(set(kept))
    if code in ("section_checksum", "duplicate_section"):
        entry = re.match(r"sections\[(\d+)\]", field)  # the entry the field names
        kind = kinds[int(entry[1])] if entry and int(entry[1]) < len(kinds) else None
        if kind == SectionKind.DATA and code == "section_checksum":  # the data section's own
            return V3_DATA_BLOCKS_KIND in kinds  # CRC, redundant with the block CRCs
        return kind not in _KEPT_KINDS
    return False


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
    if last[0] == "refuse":
        out["refuse"] = (last[1], last[2], int(last[3]))
    elif last != ["end"]:
        raise ValueError(f"output ends in neither end nor refuse: {lines[-1]!r}")
    for line in lines[1:-1]:
        word, *rest = line.split()
        if word == "accept":
            out["accept"] = tuple(rest)
        elif word == "state":
            out["state"].append(tuple(rest))
        elif word in ("tensor", "slot"):
            out[word + "s"][tuple(rest)] += 1
        else:
            raise ValueError(f"unknown line {line!r}")
    return out


def _key(key: str) -> str:
    return "".join(c if 0x20 < ord(c) < 0x7F and c != "%" else
                   "".join(f"%{b:02X}" for b in c.encode()) for c in key)


def expected(ckpt: Checkpoint) -> dict[str, Any]:
    """What a micro reader prints for a valid file, as :func:`parse` returns it."""
    opt = ckpt.optimizer
    kind = "-" if opt is None else str(OPTIMIZER_CODES[opt.kind] if opt.kind in OPTIMIZER_CODES
                                       else int(opt.kind.rsplit("_", 1)[1]))  # optimizer_<code>
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
        out["state"].append((_key(key), *row))
    for t in ckpt.tensors:
        model = "-" if t.model_index is None else str(t.model_index)
        out["tensors"][(str(t.index), model, str(t.nbytes), f"{crc32c(t.raw.tobytes()):08x}")] += 1
    for j, entries in enumerate(opt.slots.values() if opt else ()):
        for index, b in entries.items():
            out["slots"][(str(j), str(index), str(b.nbytes), f"{crc32c(b.raw.tobytes()):08x}")] += 1
    return out


def limit_refusals(ckpt: Checkpoint, data: bytes, buffer: int) -> set[tuple[str, int]]:
    """The (field, offset) of each limit of SPEC.md 11 a valid file is beyond with ``buffer``."""
    body = {kind: (ofs, n) for kind, ofs, n in section_entries(data)}
    blocks, data_kind = body.get(V3_DATA_BLOCKS_KIND), SectionKind.DATA
    out = {("file", 0)} if len(data) >= 2**31 else set()
    if buffer < 64:
        out.add(("block_buffer", 0))
    if blocks is not None and (ckpt.layout.data_block_size or 0) > buffer:
        out.add(("data_blocks.block_shift", blocks[0]))
    elif blocks is None and body.get(data_kind, (0, 0))[1] > buffer:
        out.add(("data", body[data_kind][0]))
    if ckpt.layout.data_order is not None and len(ckpt.layout.data_order) > 8 * buffer:
        out |= {("tensors[].order", f.offset) for f in layout_map(data).fields
                if f.name == "tensors.order"}
    return out


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
    return ("valid", ckpt) if ckpt.revision == RECOMMENDED.name else ("other", ckpt.revision)


def judge(path: Path, text: str, status: int | None = None) -> str | None:
    """None when the output (and the exit ``status``, unless None) keeps the profile's promise
    on this file, else what is wrong."""
    try:
        got = parse(text)
    except (ValueError, IndexError) as err:
        return f"not the micro line format: {err}"
    if status is not None and status != (got["refuse"] is not None):
        return f"exit status {status} after {text.splitlines()[-1]!r} (0 after end, 1 after refuse)"
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
            return None if left_to_full(code, field, path.read_bytes()) else (
                f"accepted a file the full reader refuses with {code} at {field}")
        return None if refused[0] in MICRO_CODES else (
            f"refused with {refused[0]}, not a micro profile code")
    ckpt: Checkpoint = what
    if refused is not None:
        limits = limit_refusals(ckpt, path.read_bytes(), got["buffer"])
        if refused[0] == "limit_exceeded" and refused[1:] in limits:
            return None
        return f"refused a valid file: {refused}, not limit_exceeded at one of {sorted(limits)}"
    want = expected(ckpt)
    return next((f"{part} differs: {got[part]} != {want[part]}" for part in
                 ("accept", "state", "tensors", "slots") if got[part] != want[part]), None)
