"""Field maps of valid files, a raw file builder, and the property every reader result must have.

This module knows the byte layout of schema 1 and WOF on its own (from spec/SPEC.md), without
the library, so mutations land on field boundaries and crafted files need no library writer.
It is shared by the hypothesis properties (tests/fuzz/test_fuzz_properties.py), the corpus builder
(tests/corpus/build_seeds.py) and the atheris harness (tests/fuzz/fuzz_load.py).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

__all__ = [
    "Field",
    "boundaries",
    "check_load",
    "field_map",
    "raw_v1",
    "raw_wof",
    "u32_at",
]

U32_MAX = 0xFFFFFFFF


def u32_at(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 4], "little")


@dataclass(frozen=True)
class Field:
    """A u32 (or u8) field of a file: what it is, where it is, what it holds."""

    name: str
    at: int
    size: int
    kind: str  # "magic", "version", "reserved", "count", "offset", "entry", "state"


def _table(name: str, start: int, n: int, size: int) -> list[Field]:
    out = []
    for i in range(n):
        at = start + 4 * i
        if at + 4 > size:
            break
        out.append(Field(f"{name}[{i}]", at, 4, "entry"))
    return out


def guess_revision(data: bytes) -> str:
    """"wof" when the bytes look like WOF rather than schema 1 (used only to map fields)."""
    if len(data) < 8:
        return "v1"
    if len(data) < 20:
        return "wof"
    n = u32_at(data, 4)
    # A schema-1 file has ofs_other + 8 == size (or 0); WOF's u32@12 is a table entry.
    other = u32_at(data, 12)
    if other + 8 == len(data) or other == 0:
        return "v1"
    return "wof" if 8 + 4 * n <= len(data) else "v1"


V2_HEADER, V2_SECTION, V2_RECORD = 64, 32, 72
V2_TENSORS = 1


def u64_at(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 8], "little")


def _v2_fields(data: bytes) -> list[Field]:
    """Schema 2 (spec/SPEC.md, section 6): header, section table, section counts, tensor records."""
    size = len(data)
    fields = [Field("magic", 0, 2, "magic"), Field("version", 2, 1, "version"),
              Field("reserved0", 3, 1, "reserved")]
    if size < V2_HEADER:
        return fields
    fields += [Field("header_crc", 4, 4, "crc"), Field("len_file", 8, 8, "offset"),
               Field("ofs_section_table", 16, 8, "offset"), Field("num_sections", 24, 4, "count"),
               Field("section_table_crc", 28, 4, "crc")]
    table = u64_at(data, 16)
    for i in range(min(u32_at(data, 24), 64)):
        e = table + V2_SECTION * i
        if e + V2_SECTION > size:
            break
        fields += [Field(f"sections[{i}].kind", e, 4, "count"),
                   Field(f"sections[{i}].flags", e + 4, 4, "count"),
                   Field(f"sections[{i}].ofs_body", e + 8, 8, "offset"),
                   Field(f"sections[{i}].len_body", e + 16, 8, "offset")]
        body = u64_at(data, e + 8)
        if body + 8 > size:
            continue
        fields.append(Field(f"sections[{i}].count", body, 4, "count"))
        if u32_at(data, e) != V2_TENSORS:
            continue
        if data[2] == 3:  # schema 3 (SPEC 7.1): the columns bits, then the len_data column
            fields.append(Field("tensors.columns", body + 4, 4, "count"))
            fields += [Field(f"tensors[{k}].len_data", body + 8 + 8 * k, 8, "offset")
                       for k in range(min(u32_at(data, body), 64, (size - body - 8) // 8))]
            continue
        for k in range(min(u32_at(data, body), 64)):
            r = body + 8 + V2_RECORD * k
            if r + V2_RECORD > size:
                break
            fields += [Field(f"tensors[{k}].index", r, 4, "entry"),
                       Field(f"tensors[{k}].len_name", r + 12, 4, "count"),
                       Field(f"tensors[{k}].ofs_name", r + 16, 8, "offset"),
                       Field(f"tensors[{k}].ofs_data", r + 24, 8, "offset"),
                       Field(f"tensors[{k}].len_data", r + 32, 8, "offset"),
                       Field(f"tensors[{k}].rank", r + 11, 1, "count")]
    return fields


def reseal_v2(data: bytes) -> bytes:
    """Recompute every CRC-32C of a (mutated) schema-2 file that its own fields let us find,
    so mutations reach the rules behind the checksums."""
    import crc32c

    size = len(data)
    if size < V2_HEADER or data[2] not in (2, 3):
        return data
    buf = bytearray(data)
    table, n = u64_at(buf, 16), u32_at(buf, 24)
    if n <= 4096 and table + V2_SECTION * n <= size:
        for i in range(n):
            e = table + V2_SECTION * i
            body, length = u64_at(buf, e + 8), u64_at(buf, e + 16)
            if body + length <= size:
                buf[e + 24 : e + 28] = crc32c.crc32c(bytes(buf[body : body + length])).to_bytes(
                    4, "little")
        buf[28:32] = crc32c.crc32c(bytes(buf[table : table + V2_SECTION * n])).to_bytes(
            4, "little")
    buf[4:8] = b"\0\0\0\0"
    buf[4:8] = crc32c.crc32c(bytes(buf[:V2_HEADER])).to_bytes(4, "little")
    return bytes(buf)


def field_map(data: bytes, revision: str | None = None) -> list[Field]:
    """Every header field and table entry of ``data`` (a valid or nearly valid file)."""
    size = len(data)
    if revision in ("v2", "v3") or (revision is None and len(data) >= 3 and data[2] in (2, 3)):
        return _v2_fields(data)
    revision = revision or guess_revision(data)
    fields = [Field("magic", 0, 2, "magic"), Field("version", 2, 1, "version"),
              Field("reserved", 3, 1, "reserved")]
    if revision == "wof":
        if size >= 8:
            fields.append(Field("num_entries", 4, 4, "count"))
            fields += _table("tensors", 8, min(u32_at(data, 4), (size - 8) // 4), size)
        return fields
    if size < 20:
        return fields
    opt1, opt2, other, n = (u32_at(data, k) for k in (4, 8, 12, 16))
    fields += [Field("ofs_opt1", 4, 4, "offset"), Field("ofs_opt2", 8, 4, "offset"),
               Field("ofs_other", 12, 4, "offset"), Field("num_entries", 16, 4, "count")]
    n = min(n, (size - 20) // 4)
    fields += _table("weights", 20, n, size)
    if opt2:
        fields += _table("m", opt1, n, size)
        fields += _table("v", opt2, n, size)
    if other and other + 8 <= size:
        fields += [Field("step", other, 4, "state"), Field("epoch", other + 4, 4, "state")]
    return fields


def boundaries(data: bytes, revision: str | None = None) -> list[int]:
    """Every structural boundary of ``data``: field starts and ends, and where entries point."""
    size = len(data)
    points = {0, 1, 2, 3, size}
    for f in field_map(data, revision):
        points.update((f.at, f.at + f.size))
        if f.kind in ("entry", "offset") and f.size in (4, 8):
            value = int.from_bytes(data[f.at : f.at + f.size], "little")
            if 0 < value <= size:
                points.add(value)
    return sorted(p for p in points if 0 <= p <= size)


def _u32s(values: list[int]) -> bytes:
    return b"".join(struct.pack("<I", v & U32_MAX) for v in values)


def raw_v1(
    *,
    opt1: int = 0,
    opt2: int = 0,
    other: int | None = None,
    n: int | None = None,
    tables: list[list[int]] | None = None,
    data: bytes = b"",
    step: int = 0,
    epoch: int = 0,
    footer: bool = True,
    reserved: int = 0,
    version: int = 1,
    magic: int = 429,
) -> bytes:
    """A schema-1 file from raw values: header, the given tables back to back, ``data``, footer.

    ``other`` defaults to where the footer lands; tables are written in the order given, so an
    Adam file passes ``tables=[w, m, v]`` and lays the m/v data inside ``data`` itself.
    """
    tables = tables or []
    if n is None:
        n = len(tables[0]) if tables else 0
    body = b"".join(_u32s(t) for t in tables) + data
    size_wo_footer = 20 + len(body)
    if other is None:
        other = size_wo_footer if footer else 0
    head = struct.pack("<HBBIIII", magic, version, reserved, opt1, opt2, other, n & U32_MAX)
    tail = struct.pack("<II", step & U32_MAX, epoch & U32_MAX) if footer else b""
    return head + body + tail


def raw_wof(
    entries: list[int], data: bytes = b"", *, n: int | None = None, reserved: int = 0
) -> bytes:
    n = len(entries) if n is None else n
    return struct.pack("<HBBI", 429, 1, reserved, n & U32_MAX) + _u32s(entries) + data


def check_load(data: bytes, *, roundtrip: bool = True, model: object = None) -> dict:
    """Load ``data`` and check the fuzz properties; return the outcome as a manifest dict.

    * A refused file raises a CheckpointError whose code is in the spec's table, whose class
      is the one its category names, whose field is a non-empty string and whose offset lies in
      ``[0, len(data)]`` (None only for a model error: it is not located in the file). Any
      other exception propagates (the caller's test fails).
    * An accepted file saves back to the same bytes, loads again to the same content, and its
      description is JSON; every entry lies inside the file.
    """
    import onert_checkpoint as oc
    from onert_checkpoint.format.errors import ERROR_CODES, error_for

    try:
        ckpt = oc.load(data) if model is None else oc.load(data, model=model)
        ckpt.verify()  # the data checks load leaves to the first data access
    except oc.CheckpointError as err:
        assert err.code in ERROR_CODES, err.code
        assert type(err) is type(error_for(err.code, None, None, "")), (type(err), err.code)
        assert isinstance(err.field, str) and err.field, err.field
        if err.offset is None:
            assert ERROR_CODES[err.code]["category"] == "model", err
        else:
            assert isinstance(err.offset, int) and 0 <= err.offset <= len(data), err.offset
        assert isinstance(err.message, str)
        return {"error": err.code, "field": err.field, "offset": err.offset}
    size = len(data)
    entries = list(ckpt.tensors)
    if ckpt.optimizer is not None:
        for slot in ckpt.optimizer.slots.values():
            entries += slot.values()
    for e in entries:
        assert e.offset is not None and 0 <= e.offset and e.offset + e.nbytes <= size, e
        assert bytes(e.raw) == data[e.offset : e.offset + e.nbytes]
    json.dumps(oc.describe(ckpt))
    if roundtrip:
        out = oc.to_bytes(ckpt)
        assert out == data, f"to_bytes(load(b)) differs from b ({len(out)} vs {len(data)} bytes)"
        again = oc.load(out) if model is None else oc.load(out, model=model)
        assert again.content_equal(ckpt)
        assert (again.revision, again.dialect) == (ckpt.revision, ckpt.dialect)
    return {"valid": True, "revision": ckpt.revision, "dialect": ckpt.dialect}
