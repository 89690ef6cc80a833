"""The fixed-size layout of each revision, read from its .ksy: what spec/regenerate.py turns into
the library's layout module, the C layout header and the field tables of spec/SPEC.md.

A record is a type whose `seq` is all fixed-size fields (integers, `size: N` bytes, or an
integer with a literal `repeat-expr`); a type whose `seq` starts with fixed-size fields and goes
on with variable ones contributes that fixed head, named by the type's `-ockpt-head` key. The
`-ockpt-record` key renames a record (the top-level type of schema 1 is its header), and the
top-level `-ockpt-limits` and `-ockpt-constants` keys (which Kaitai ignores) give the limits and
the marker values.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SPEC = Path(__file__).resolve().parent

#: Schema file stem -> the prefix of its names in the layout module and in the SPEC's generated
#: regions (the common records are schema 2's there, which schema 3 shares).
SCHEMAS = {
    "onert_checkpoint_common": ("", "v2"),
    "onert_checkpoint_v1": ("v1", "v1"),
    "onert_wof": ("wof", "wof"),
    "onert_checkpoint_v2": ("v2", "v2"),
    "onert_checkpoint_v3": ("v3", "v3"),
}

#: The C header names the container's records (the header, the section table, the shared
#: sections of schemas 2 and 3) as such: OCKPT_CONTAINER_HEADER_SIZE, ockpt_container_*_layout.
C_PREFIX = {stem: names[1] for stem, names in SCHEMAS.items()} | {
    "onert_checkpoint_common": "container"
}

#: Kaitai integer type -> (size, NumPy format, struct format, C type).
INTS = {
    "u1": (1, "u1", "B", "uint8_t"),
    "s1": (1, "i1", "b", "int8_t"),
    "u2": (2, "<u2", "H", "uint16_t"),
    "s2": (2, "<i2", "h", "int16_t"),
    "u4": (4, "<u4", "I", "uint32_t"),
    "s4": (4, "<i4", "i", "int32_t"),
    "u8": (8, "<u8", "Q", "uint64_t"),
    "s8": (8, "<i8", "q", "int64_t"),
}


@dataclass(frozen=True)
class Field:
    name: str
    offset: int
    size: int  # bytes in all
    kind: str  # Kaitai type (u4, ...) or "bytes"
    count: int  # elements (1 for a scalar, N for `repeat-expr: N` or `size: N`)
    valid: int | None
    enum: str | None
    doc: str

    @property
    def elem(self) -> str:
        return "u1" if self.kind == "bytes" else self.kind


@dataclass(frozen=True)
class Column:
    """One column of a columnar section (schema 3's tensors section), in file order: present
    always (bit 0) or when its bit of the head's flags word is set; `elem` elements (a Kaitai
    integer type, u1 for bytes), as many as the head's field `count` says (`sum_of` empty) or
    the sum over those records of column `sum_of`'s values, a value equal to `skip` counting 0;
    starting at the next multiple of `align` from the section's start (zero bytes before it)."""

    name: str
    bit: int
    elem: str
    count: str
    sum_of: str
    skip: int
    align: int


@dataclass
class Record:
    schema: str  # file stem
    type_name: str  # the .ksy type (or the file id for the top level)
    name: str  # layout name (snake_case)
    doc: str
    head: bool  # a fixed head of a longer type
    fields: list[Field] = field(default_factory=list)
    #: After a head: the arrays of integers that follow it, (name, element type, the bit of the
    #: flags word that says the array is present, 0 for an array always there).
    arrays: list[tuple[str, str, int]] = field(default_factory=list)
    #: After the head of a columnar section (every array counted by one of the head's fields or
    #: by the values of another column): every column, in file order.
    columns: list[Column] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(f.size for f in self.fields)

    @property
    def prefix(self) -> str:
        return SCHEMAS[self.schema][0]

    @property
    def py_name(self) -> str:
        return camel(f"{self.prefix}_{self.name}" if self.prefix else self.name)

    @property
    def c_name(self) -> str:
        """The macros' stem (OCKPT_V2_TENSOR_RECORD_SIZE); the struct adds `_layout` (the C
        kit's API already has functions named like records, ockpt_sec_slot_entry)."""
        return f"ockpt_{C_PREFIX[self.schema]}_{self.name}"

    @property
    def ref(self) -> str:
        """The type's place in its .ksy."""
        where = "" if self.type_name == self.schema else f" `{self.type_name}`"
        return f"{self.schema}.ksy{where}"


@dataclass(frozen=True)
class Array:
    """An integer array whose length the file gives (`repeat-expr` an expression): a column of
    schema 3, a table of slot entries, an offset table."""

    schema: str  # file stem
    type_name: str  # the .ksy type holding it (the file id for the top level)
    name: str
    kind: str  # Kaitai integer type
    bit: int  # the bit of the type's flags word that says it is present (0: always)
    #: The .ksy type whose flags word holds ``bit`` when it is not this array's own (schema 3's
    #: range_index.position: present with the tensors section's order column).
    bit_of: str = ""

    @property
    def const(self) -> str:
        """Its name in the layout module and (with OCKPT_ and _ELEM_SIZE) in the C header."""
        prefix = SCHEMAS[self.schema][1] if self.schema != "onert_checkpoint_common" else "v2"
        where = "" if self.type_name == self.schema else f"_{self.type_name}"
        return f"{prefix}{where}_{self.name}".upper()


@dataclass
class Schema:
    stem: str
    spec: dict
    records: list[Record]
    enums: dict[str, dict[int, str]]
    limits: dict[str, int]
    constants: dict[str, int]
    #: enum -> {value: bytes per element} from the values' `-ockpt-element-size` keys
    element_sizes: dict[str, dict[int, int]] = field(default_factory=dict)
    arrays: list[Array] = field(default_factory=list)


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


def first_line(doc: object) -> str:
    return " ".join(str(doc or "").split())


def fixed_field(spec: dict, offset: int) -> Field | None:
    """The field at ``offset`` when its size is fixed, else None."""
    if "if" in spec or "pos" in spec:
        return None
    kind = spec.get("type")
    valid = spec.get("valid")
    valid = valid if isinstance(valid, int) and not isinstance(valid, bool) else None
    doc = first_line(spec.get("doc"))
    enum = spec.get("enum")
    if kind is None and isinstance(spec.get("size"), int):
        return Field(spec["id"], offset, spec["size"], "bytes", spec["size"], valid, None, doc)
    if kind not in INTS:
        return None
    count = 1
    if "repeat" in spec:
        if spec["repeat"] != "expr" or not isinstance(spec.get("repeat-expr"), int):
            return None
        count = spec["repeat-expr"]
    size = INTS[kind][0] * count
    return Field(spec["id"], offset, size, kind, count, valid, enum, doc)


def presence_bit(spec: dict, f: dict) -> int | None:
    """The bit of the flags word whose `if:` instance (``(word & bit) != 0``) makes field ``f``
    of type ``spec`` present: 0 without `if:`, None for another condition."""
    if "if" not in f:
        return 0
    value = str((spec.get("instances") or {}).get(f["if"], {}).get("value", ""))
    m = re.fullmatch(r"\(\w+ & (\d+)\) != 0", value)
    return None if m is None else int(m.group(1))


def foreign_presence(root: dict, f: dict) -> tuple[str, int] | None:
    """The (type, bit) of another section's flags word that makes field ``f`` present, from an
    `if:` of the form ``_root.has_X and _root.X.has_Y`` (or ``_root.X.has_Y``): the top-level
    instance X is a section's body cast to a type (``.as<T>``) whose instance has_Y is
    ``(word & bit) != 0``. None for any other condition."""
    terms = [t.strip() for t in str(f.get("if", "")).split(" and ")]
    instances = root.get("instances") or {}
    got = None
    for term in terms:
        guard = re.fullmatch(r"_root\.has_(\w+)", term)
        if guard and guard[1] in instances:
            continue
        m = re.fullmatch(r"_root\.(\w+)\.(\w+)", term)
        if m is None or got is not None:
            return None
        cast = re.search(r"\.as<(\w+)>$", str(instances.get(m[1], {}).get("value", "")))
        if cast is None or cast[1] not in (root.get("types") or {}):
            return None
        bit = presence_bit(root["types"][cast[1]], {"if": m[2]})
        if not bit:
            return None
        got = (cast[1], bit)
    return got


def is_array(f: dict) -> bool:
    """An integer field repeated a number of times the file gives."""
    return (
        isinstance(f.get("type"), str)
        and f["type"] in INTS
        and f.get("repeat") == "expr"
        and not isinstance(f.get("repeat-expr"), int)
    )


def arrays_after(spec: dict, start: int) -> list[tuple[str, str, int]]:
    """The integer arrays of ``spec``'s seq from field ``start`` on, each with the bit of its
    `if:` condition (an instance ``(word & bit) != 0``)."""
    out = []
    for f in spec["seq"][start:]:
        if f.get("type") not in INTS or f.get("repeat") != "expr":
            continue
        bit = presence_bit(spec, f)
        if bit is not None:
            out.append((f["id"], INTS[f["type"]][1], bit))
    return out


def arrays_of(stem: str, name: str, spec: dict, out: list[Array], root: dict) -> None:
    """The integer arrays of type ``spec`` (and its subtypes): present always, by a bit of the
    type's own flags word, or by a bit of another section's (``root``: the whole .ksy)."""
    for f in spec.get("seq") or []:
        if not is_array(f):
            continue
        bit = presence_bit(spec, f)
        if bit is not None:
            out.append(Array(stem, name, f["id"], f["type"], bit))
        elif (other := foreign_presence(root, f)) is not None:
            out.append(Array(stem, name, f["id"], f["type"], other[1], other[0]))
    for inst, f in (spec.get("instances") or {}).items():
        if "pos" in f and "if" not in f and is_array(f):  # a table at a fixed place (WOF's)
            out.append(Array(stem, name, inst, f["type"], 0))
    for sub, sub_spec in (spec.get("types") or {}).items():
        arrays_of(stem, sub, sub_spec, out, root)


PAD = re.compile(r"\((\d+) - _io\.pos % \1\) % \1")
SUM_OF = re.compile(r"(\w+)\((\w+)\[_index\]\)")
SKIP = re.compile(r"'?(\w+) == (\d+) \? 0 : \1'?")


def columns_after(spec: dict, start: int, head: list[Field], types: dict) -> list[Column]:
    """The columns of ``spec``'s seq from field ``start`` on, when it is a columnar section:
    each an integer array counted by a head field, or one of a type (``t(col[_index])``) whose
    elements are counted by the values of column ``col``; ``pad_*`` fields give the alignment of
    the column after them. Empty when anything else follows the head."""
    counts = {f.name for f in head}
    out: list[Column] = []
    align = 1
    for f in spec["seq"][start:]:
        bit = presence_bit(spec, f)
        pad = PAD.fullmatch(str(f.get("size", "")))
        if bit is None:
            return []
        if f["id"].startswith("pad_") and pad:
            align = int(pad[1])
            continue
        if f.get("repeat") != "expr" or f.get("repeat-expr") not in counts:
            return []
        count = f["repeat-expr"]
        if f.get("type") in INTS:
            out.append(Column(f["id"], bit, f["type"], count, "", 0, align))
        elif (m := SUM_OF.fullmatch(str(f.get("type", "")))) and m[1] in types:
            (elem,) = types[m[1]]["seq"]
            kind = elem.get("type") if elem.get("type") in INTS else "u1"
            skip = SKIP.fullmatch(str(elem.get("repeat-expr", "")))
            out.append(Column(f["id"], bit, kind, count, m[2], int(skip[2]) if skip else 0, align))
        else:
            return []
        align = 1
    return out


def records_of(stem: str, name: str, spec: dict, records: list[Record], types: dict) -> None:
    seq = spec.get("seq") or []
    if seq:
        fields: list[Field] = []
        offset = 0
        for f in seq:
            got = fixed_field(f, offset)
            if got is None:
                break
            fields.append(got)
            offset += got.size
        whole = len(fields) == len(seq)
        record_name = spec.get("-ockpt-record", name) if whole else spec.get("-ockpt-head")
        if fields and record_name:
            doc = first_line(spec.get("doc")) if name != stem else "The fixed start of the file."
            arrays = [] if whole else arrays_after(spec, len(fields))
            columns = [] if whole else columns_after(spec, len(fields), fields, types)
            records.append(
                Record(stem, name, record_name, doc, not whole, fields, arrays, columns)
            )
    for sub, sub_spec in (spec.get("types") or {}).items():
        records_of(stem, sub, sub_spec, records, types)


def load(stem: str, spec_dir: Path = SPEC) -> Schema:
    spec = yaml.safe_load((spec_dir / f"{stem}.ksy").read_text())
    records: list[Record] = []
    top = {k: v for k, v in spec.items() if k != "types"}
    types = spec.get("types") or {}
    records_of(stem, stem, top, records, types)
    arrays: list[Array] = []
    arrays_of(stem, stem, top, arrays, spec)
    for name, sub in types.items():
        records_of(stem, name, sub, records, types)
        arrays_of(stem, name, sub, arrays, spec)
    enums = {
        name: {int(k): (v["id"] if isinstance(v, dict) else str(v)) for k, v in values.items()}
        for name, values in (spec.get("enums") or {}).items()
    }
    sizes = {
        name: {
            int(k): v["-ockpt-element-size"]
            for k, v in values.items()
            if isinstance(v, dict) and "-ockpt-element-size" in v
        }
        for name, values in (spec.get("enums") or {}).items()
    }
    return Schema(
        stem,
        spec,
        records,
        enums,
        dict(spec.get("-ockpt-limits") or {}),
        dict(spec.get("-ockpt-constants") or {}),
        {name: table for name, table in sizes.items() if table},
        arrays,
    )


def load_all(spec_dir: Path = SPEC) -> list[Schema]:
    return [load(stem, spec_dir) for stem in SCHEMAS]


# The Python layout module --------------------------------------------------------------------
def is_flags(enum: str) -> bool:
    return enum.endswith("_flags") or enum.endswith("_bits")


def python_module(schemas: list[Schema], header: str) -> str:
    out = [
        header.rstrip("\n"),
        '"""The fixed-size layout of every revision, generated from spec/*.ksy: a NumPy structured',
        "dtype, a struct format, the size and each field's offset for every fixed-size record",
        "(and the fixed head of each variable-size section), the enums and flags, the limits and",
        'the marker values. Readers and writers take them from here, never from a copy."""',
        "",
        "from __future__ import annotations",
        "",
        "from enum import IntEnum, IntFlag",
        "from typing import NamedTuple",
        "",
        "import numpy as np",
        "",
        "",
        "class Field(NamedTuple):",
        '    """A field of a record: where it is, how wide, and the value `valid:` requires."""',
        "",
        "    name: str",
        "    offset: int",
        "    size: int",
        "    format: str  # NumPy element format",
        "    count: int  # elements (1 for a scalar)",
        "    valid: int | None",
        "",
        "",
        "class Array(NamedTuple):",
        '    """An integer array whose length the file gives (a column, a table of entries): its',
        "    element's NumPy format and size, and the bit of its type's flags word that says it is",
        '    present (0: always)."""',
        "",
        "    type: str  # the .ksy type holding it",
        "    name: str",
        "    format: str  # NumPy element format",
        "    size: int  # bytes per element",
        "    bit: int",
        "    #: the .ksy type whose flags word holds `bit` when not the array's own (range_index's",
        "    #: position: the tensors section's order column)",
        '    bit_of: str = ""',
        "",
        "",
        "class Column(NamedTuple):",
        '    """A column of a columnar section (schema 3\'s tensors section), in file order:',
        "    present always (bit 0) or when its bit of the head's flags word is set; elements of a",
        "    NumPy format, as many as the head's field `count` says, or (`sum_of`) the sum over",
        "    those records of another column's values, a value equal to `skip` counting 0;",
        '    starting at the next multiple of `align` from the section\'s start (zeros before)."""',
        "",
        "    name: str",
        "    bit: int",
        "    format: str  # NumPy element format",
        "    size: int  # bytes per element",
        "    count: str  # the head's field that counts the records",
        "    sum_of: str  # empty: one element per record",
        "    skip: int",
        "    align: int",
        "",
        "",
    ]
    for s in schemas:
        prefix = SCHEMAS[s.stem][0].upper()
        for name, value in {**s.limits, **s.constants}.items():
            const = f"{prefix}_{name.upper()}" if prefix else name.upper()
            out.append(f"{const} = {value:#x}" if value > 4096 else f"{const} = {value}")
    out += ["", ""]
    for s in schemas:
        prefix = SCHEMAS[s.stem][0]
        for enum, values in s.enums.items():
            cls = camel(f"{prefix}_{enum}" if prefix else enum)
            base = "IntFlag" if is_flags(enum) else "IntEnum"
            out.append(f"class {cls}({base}):")
            out.append(f'    """`{enum}` of {s.stem}.ksy."""')
            out.append("")
            for value, member in sorted(values.items()):
                out.append(f"    {member.upper()} = {value}")
            out += ["", ""]
            if enum in s.element_sizes:
                out.append(f"#: Bytes per element of each `{enum}` whose elements are whole bytes.")
                const = f"{prefix}_{enum}".upper() if prefix else enum.upper()
                out.append(f"{const}_ELEMENT_SIZE = {{")
                out += [f"    {v}: {n}," for v, n in sorted(s.element_sizes[enum].items())]
                out.append("}")
                out += ["", ""]
    for s in schemas:
        for r in s.records:
            out.append(f"class {r.py_name}:")
            what = "the fixed head of " if r.head else ""
            doc = textwrap.wrap(f"{r.size} bytes: {what}{r.ref}. {r.doc}", 92)
            out.append('    """' + "\n    ".join(doc) + '"""')
            out.append("")
            out.append(f"    SIZE = {r.size}")
            fmt = "<" + "".join(
                f"{f.count}s" if f.kind == "bytes" else INTS[f.kind][2] * f.count for f in r.fields
            )
            out.append(f'    FORMAT = "{fmt}"  # the struct module\'s')
            dtype_fields = [
                f'("{f.name}", "{INTS[f.elem][1]}"' + (f", ({f.count},))" if f.count > 1 else ")")
                for f in r.fields
            ]
            out.append("    DTYPE = np.dtype(")
            out.append("        [")
            out += [f"            {d}," for d in dtype_fields]
            out.append("        ]")
            out.append("    )")
            for f in r.fields:
                fmt1 = INTS[f.elem][1]
                out.append(
                    f'    {f.name} = Field("{f.name}", {f.offset}, {f.size}, "{fmt1}", {f.count}, '
                    f"{f.valid})"
                )
            out.append("    FIELDS = (")
            out += [f"        {f.name}," for f in r.fields]
            out.append("    )")
            if r.arrays:
                out.append("    #: The arrays after this head: name, element type, presence bit")
                out.append("    #: (0: always present).")
                out.append("    ARRAYS = (")
                out += [f'        ("{n}", "{t}", {b}),' for n, t, b in r.arrays]
                out.append("    )")
            if r.columns:
                out.append("    #: Every column after this head, in file order.")
                out.append("    COLUMNS = (")
                for c in r.columns:
                    fmt, size = INTS[c.elem][1], INTS[c.elem][0]
                    out.append(
                        f'        Column("{c.name}", {c.bit}, "{fmt}", {size}, "{c.count}", '
                        f'"{c.sum_of}", {c.skip}, {c.align}),'
                    )
                out.append("    )")
            out += ["", ""]
    for s in schemas:
        for a in s.arrays:
            fmt, size = INTS[a.kind][1], INTS[a.kind][0]
            other = f', "{a.bit_of}"' if a.bit_of else ""
            args = f'"{a.type_name}", "{a.name}", "{fmt}", {size}, {a.bit}{other}'
            line = f"{a.const} = Array({args})"
            out += [line] if len(line) <= 100 else [f"{a.const} = Array(", f"    {args}", ")"]
    out += ["", ""]
    out.append("#: Every record, by name.")
    out.append("RECORDS = {")
    for s in schemas:
        for r in s.records:
            out.append(f'    "{r.py_name}": {r.py_name},')
    out.append("}")
    return "\n".join(out) + "\n"


# The Construct structs -----------------------------------------------------------------------
#: Kaitai integer type -> Construct's.
CONSTRUCT_INTS = {
    "u1": "Int8ul",
    "s1": "Int8sl",
    "u2": "Int16ul",
    "s2": "Int16sl",
    "u4": "Int32ul",
    "s4": "Int32sl",
    "u8": "Int64ul",
    "s8": "Int64sl",
}


def construct_field(f: Field) -> str:
    """A field as Construct declares it: reserved bytes are zero padding, a `valid:` value a
    Const, a repeated integer an Array."""
    if f.name.startswith("reserved") and f.count > 1:
        return f"Padding({f.size})"
    kind = CONSTRUCT_INTS[f.elem]
    if f.count > 1:
        kind = f"Array({f.count}, {kind})"
    if f.valid is not None:
        kind = f"Const({f.valid}, {kind})"
    return f'"{f.name}" / {kind}'


def construct_module(schemas: list[Schema], header: str) -> str:
    """Every fixed-size record (and fixed head) of the .ksy files as a Construct Struct, named
    as in the layout module (structs.Header is layout.Header's bytes)."""
    records = [r for s in schemas for r in s.records]
    names = {w for r in records for f in r.fields for w in re.findall(r"\w+", construct_field(f))}
    used = sorted(
        (w for w in names | {"Struct"} if w[0].isupper()),
        key=lambda w: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", w)],
    )
    out = [
        header.rstrip("\n"),
        '"""Construct structs of the fixed-size records of every revision, generated from',
        "spec/*.ksy: one Struct per record (and per fixed head of a variable-size section), named",
        "as the record in the layout module, its fields in order and as wide as there. A field the",
        ".ksy gives a `valid` value is a Const, reserved bytes are zero padding; a field valid for",
        'several values (the container header\'s version byte) is built with the value given."""',
        "",
        "from __future__ import annotations",
        "",
        f"from construct import {', '.join(used)}",
    ]
    for r in records:
        what = "the fixed head of " if r.head else ""
        out += ["", f"#: {r.size} bytes: {what}{r.ref}."]
        out.append(f"{r.py_name} = Struct(")
        out += [f"    {construct_field(f)}," for f in r.fields]
        out.append(")")
    out += ["", "#: Every record's Struct, by name.", "STRUCTS = {"]
    out += [f'    "{r.py_name}": {r.py_name},' for r in records]
    out.append("}")
    return "\n".join(out) + "\n"


# The C header --------------------------------------------------------------------------------
#: The C kit's macro prefix of each enum's members (OCKPT_CONTAINER_KIND_TENSORS, OCKPT_V2_HAS_NAME)
C_ENUM_PREFIX = {
    "section_kind": "KIND_",
    "section_flags": "FLAG_",
    "tensor_flags": "",
    "optimizer_kind": "OPT_",
    "value_type": "VALUE_",
    "origin_flags": "ORIGIN_",
    "column_bits": "COL_",
    "tensor_type": "DTYPE_",
}


def c_int(value: int) -> str:
    """A C literal of ``value``: unsigned, 64-bit when it needs it."""
    if value < 0:
        return f"({value})"
    text = f"{value:#x}" if value > 4096 else str(value)
    return text + ("ull" if value > 0xFFFFFFFF else "u")


def c_columns(r: Record) -> list[str]:
    """The columns after a head as an X-macro: X(name, NAME, bit, element size, count, sum_of,
    skip, align), the column's own name twice (as written and upper case), count the head's
    field (upper case), sum_of the upper-case name of the column whose values count the
    elements, NONE for one element per record."""
    up = r.c_name.upper()
    out = [
        "/* Its columns in file order: X(name, NAME, presence bit (0: always), element size,",
        " * COUNT (the head's field counting the records), SUM_OF (NONE: one element per record;",
        " * else the column whose values, summed over the records, count them, SKIP counting 0),",
        " * SKIP, alignment of the column's start from the section's start). */",
        f"#define {up}_NUM_COLUMNS {len(r.columns)}u",
        f"#define {up}_COLUMNS(X) \\",
    ]
    for i, c in enumerate(r.columns):
        more = " \\" if i + 1 < len(r.columns) else ""
        out.append(
            f"  X({c.name}, {c.name.upper()}, {c.bit}u, {INTS[c.elem][0]}u, {c.count.upper()}, "
            f"{(c.sum_of or 'none').upper()}, {c.skip}u, {c.align}u){more}"
        )
    return out


def c_header(schemas: list[Schema]) -> str:
    out = [
        "/* Generated by spec/regenerate.py from the .ksy files of spec/. Do not edit. */",
        "/*",
        " * ockpt_layout.h - the on-disk structures of the onert checkpoint format family:",
        " * each fixed-size record of the .ksy files as a packed C struct, with its size and",
        " * every field's offset as macros, and the enums, flags and limits. All fields are",
        " * little-endian.",
        " *",
        " * The reference reader and writer read and write every field byte by byte at these",
        " * offsets (portable to any endianness and alignment); the packed structs may be used to",
        " * read a file directly on a little-endian target whose compiler honours #pragma pack.",
        " * Schemas 2 and 3 share the records named container here (onert_checkpoint_common.ksy).",
        " */",
        "#ifndef OCKPT_LAYOUT_H",
        "#define OCKPT_LAYOUT_H",
        "",
        "#include <stdint.h>",
        "",
    ]
    for s in schemas:
        cp = C_PREFIX[s.stem].upper()
        for name, value in {**s.limits, **s.constants}.items():
            out.append(f"#define OCKPT_{cp}_{name.upper()} {c_int(value)}")
        for enum, values in s.enums.items():
            out.append(f"/* {enum} ({s.stem}.ksy) */")
            prefix = f"OCKPT_{cp}_" + C_ENUM_PREFIX.get(enum, enum.upper() + "_")
            for value, member in sorted(values.items()):
                out.append(f"#define {prefix}{member.upper()} {c_int(value)}")
        out.append("")
    out.append("/* Bytes per element of each integer array whose length the file gives. */")
    for s in schemas:
        for a in s.arrays:
            out.append(f"#define OCKPT_{a.const}_ELEM_SIZE {INTS[a.kind][0]}u")
    out += ["", "#pragma pack(push, 1)", ""]
    for s in schemas:
        for r in s.records:
            what = "the fixed head of " if r.head else ""
            out.append(f"/* {r.size} bytes: {what}{r.ref}. */")
            out.append(f"typedef struct {r.c_name}_layout {{")
            for f in r.fields:
                ctype = INTS[f.elem][3]
                arr = f"[{f.count}]" if f.count > 1 else ""
                out.append(f"  {ctype} {f.name}{arr};")
            out.append(f"}} {r.c_name}_layout;")
            up = r.c_name.upper()
            out.append(f"#define {up}_SIZE {r.size}u")
            for f in r.fields:
                out.append(f"#define {up}_AT_{f.name.upper()} {f.offset}u")
            for f in r.fields:  # an array of a fixed count (schema 2's dims): its element
                if f.count > 1 and f.kind != "bytes":
                    out.append(f"#define {up}_{f.name.upper()}_ELEM_SIZE {INTS[f.kind][0]}u")
            if r.columns:
                out += c_columns(r)
            out.append("")
    out += ["#pragma pack(pop)", ""]
    out.append("/* C99 compile-time size checks (a negative array size fails the build). */")
    out.append(
        "#define OCKPT_LAYOUT_SIZE(type, size) "
        "typedef char type##_has_size[(sizeof(type) == (size)) ? 1 : -1]"
    )
    for s in schemas:
        for r in s.records:
            out.append(f"OCKPT_LAYOUT_SIZE({r.c_name}_layout, {r.c_name.upper()}_SIZE);")
    out += ["#undef OCKPT_LAYOUT_SIZE", "", "#endif /* OCKPT_LAYOUT_H */", ""]
    return "\n".join(out)


# The SPEC field tables -----------------------------------------------------------------------
SPEC_TYPES = {
    "u1": "u8",
    "s1": "s8",
    "u2": "u16",
    "s2": "s16",
    "u4": "u32",
    "s4": "s32",
    "u8": "u64",
    "s8": "s64",
}


def field_table(r: Record, enums: dict[str, dict[int, str]]) -> str:
    """The record as spec/SPEC.md writes a layout: offset, size, type, field, meaning (the
    field's `doc` in the .ksy, the value its `valid` requires, the values of a short enum)."""
    rows = ["| at | size | type | field | meaning, allowed values |", "|---|---|---|---|---|"]
    for f in r.fields:
        values = enums.get((f.enum or "").split("::")[-1], {})
        kind = SPEC_TYPES[f.elem] + (f"[{f.count}]" if f.count > 1 else "")
        doc = f.doc.replace("|", "\\|")
        if f.valid is not None and not re.search(rf"\b{f.valid}\b", doc):
            doc = f"{doc} Always {f.valid}."
        if 0 < len(values) <= 6:
            doc += " " + ", ".join(f"{v} `{n}`" for v, n in sorted(values.items())) + "."
        rows.append(f"| {f.offset} | {f.size} | {kind} | `{f.name}` | {doc} |")
    return "\n".join(rows)


class Poly:
    """A size or an offset of a section: a constant plus multiples of the counts the section
    names (n, K, K*T), written as spec/SPEC.md writes them (`16 + 16K + 8KT`)."""

    def __init__(self, terms: dict[str, int] | None = None) -> None:
        self.terms = {k: v for k, v in (terms or {}).items() if v}

    def __add__(self, other: Poly) -> Poly:
        out = dict(self.terms)
        for k, v in other.terms.items():
            out[k] = out.get(k, 0) + v
        return Poly(out)

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = [str(v) if k == "" else f"{'' if v == 1 else v}{k}" for k, v in self.terms.items()]
        return " + ".join(parts)


def section_spec(schemas: list[Schema], prefix: str, type_name: str) -> tuple[Schema, dict]:
    """The .ksy type ``type_name`` of a revision (`v2`: schema 2 and the common types, `v3`)."""
    for s in schemas:
        if SCHEMAS[s.stem][1] == prefix and type_name in (s.spec.get("types") or {}):
            return s, s.spec["types"][type_name]
    raise KeyError(f"{prefix} {type_name}: no such .ksy type")


def type_of(schemas: list[Schema], home: Schema, ref: str) -> tuple[Schema, str, dict]:
    """The type a field's `type:` names (``schema::type(args)``), searched in its own schema
    then the imported common one."""
    name = ref.split("(")[0]
    stem, _, local = name.rpartition("::")
    for s in schemas:
        if s.stem == (stem or home.stem) and local in (s.spec.get("types") or {}):
            return s, local, s.spec["types"][local]
    raise KeyError(ref)


def meaning(f: dict) -> str:
    """A field's meaning in a SPEC table: its `-ockpt-meaning`, else its `doc`."""
    return first_line(f.get("-ockpt-meaning", f.get("doc"))).replace("|", "\\|")


def count_of(expr: object, symbols: dict[str, str]) -> str:
    """A `repeat-expr` (`num_tensors`, `head.num_slots * head.num_tensors`) in symbols (K*T)."""
    names = [part.strip().split(".")[-1] for part in str(expr).split("*")]
    return "*".join(symbols[n] for n in names)


def section_table(schemas: list[Schema], prefix: str, type_name: str) -> str:
    """A variable-size section as spec/SPEC.md lays it out: the fields of its seq up to the
    first optional one, each at its offset in the counts its fixed fields name (their
    `-ockpt-symbol`), a record type embedded at its place with its fields, then the rows of
    its `-ockpt-spec-after` key (the names or pool after the tables)."""
    s, spec = section_spec(schemas, prefix, type_name)
    rows = ["| at | size | type | field | meaning |", "|---|---|---|---|---|"]
    # counts named by instances (`-ockpt-symbols`), then by the fields read before them
    symbols: dict[str, str] = dict(spec.get("-ockpt-symbols") or {})
    at = Poly()
    for f in spec["seq"]:
        if "if" in f:
            break
        kind = f.get("type")
        if "-ockpt-symbol" in f:
            symbols[f["id"]] = f["-ockpt-symbol"]
        if kind in INTS and "repeat" not in f:
            size = INTS[kind][0]
            rows.append(f"| {at} | {size} | {SPEC_TYPES[kind]} | `{f['id']}` | {meaning(f)} |")
            at = at + Poly({"": size})
            continue
        if "repeat" not in f:  # an embedded record: its fields in place
            sub_s, _, sub = type_of(schemas, s, kind)
            for g in sub["seq"]:
                if "-ockpt-symbol" in g:
                    symbols[g["id"]] = g["-ockpt-symbol"]
                size = INTS[g["type"]][0]
                rows.append(
                    f"| {at} | {size} | {SPEC_TYPES[g['type']]} | `{g['id']}` | {meaning(g)} |"
                )
                at = at + Poly({"": size})
            continue
        count = count_of(f["repeat-expr"], symbols)
        if kind in INTS:
            elem, shown = INTS[kind][0], SPEC_TYPES[kind]
        else:
            sub_s, sub_name, _ = type_of(schemas, s, kind)
            elem = next(r.size for r in sub_s.records if r.type_name == sub_name)
            shown = sub_name
        size = Poly({count.replace("*", ""): elem})
        rows.append(f"| {at} | {size} | {shown}[{count}] | `{f['id']}` | {meaning(f)} |")
        at = at + size
    for extra in spec.get("-ockpt-spec-after") or []:
        rows.append(f"| {at} | | {extra['type']} | {extra['id']} | {meaning(extra)} |")
    return "\n".join(rows)


def column_table(schemas: list[Schema], prefix: str, type_name: str) -> str:
    """The optional columns of a columnar section (schema 3's tensors): each field with an
    `if:` on a bit of its flags word, in seq order (zero padding `pad_*` left out), with the
    bit's name, its type and count, its meaning and what a clear bit means (`-ockpt-absent`)."""
    s, spec = section_spec(schemas, prefix, type_name)
    bits = s.enums.get("column_bits", {})
    rows = [
        "| column | bit | type | per record k | when the bit is clear |",
        "|---|---|---|---|---|",
    ]
    symbols = {f["id"]: f["-ockpt-symbol"] for f in spec["seq"] if "-ockpt-symbol" in f}
    for f in spec["seq"]:
        if "if" not in f or f["id"].startswith("pad_"):
            continue
        bit = bits[presence_bit(spec, f)].upper()
        kind = f["type"]
        if kind in INTS:
            shown = f"{SPEC_TYPES[kind]}[{count_of(f['repeat-expr'], symbols)}]"
        else:  # a record of variable size: its elements' type, counted by the field's symbol
            _, _, sub = type_of(schemas, s, kind)
            inner = sub["seq"][0]
            elem = SPEC_TYPES[inner["type"]] if inner.get("type") in INTS else "u8"
            shown = f"{elem}[{f['-ockpt-symbol']}]"
        absent = first_line(f.get("-ockpt-absent"))
        absent = f" {absent} " if absent else " "
        rows.append(f"| `{f['id']}` | `{bit}` | {shown} | {meaning(f)} |{absent}|")
    return "\n".join(rows)


MARKER = re.compile(
    r"<!-- generated: (\S+) (\S+)(?: (section|columns))? -->\n.*?<!-- end generated -->", re.S
)


def spec_tables(text: str, schemas: list[Schema]) -> str:
    """``text`` with every generated region replaced: `<!-- generated: <prefix> <record> -->`
    by the record's field table, `<!-- generated: <prefix> <type> section -->` by the layout of
    a variable-size section, `<!-- generated: <prefix> <type> columns -->` by its optional
    columns; each region ends at `<!-- end generated -->`."""
    by_key = {(SCHEMAS[s.stem][1], r.name): (r, s) for s in schemas for r in s.records}
    common = next(s for s in schemas if s.stem == "onert_checkpoint_common").enums

    def table(m: re.Match) -> str:
        prefix, name, what = m.group(1), m.group(2), m.group(3)
        if what == "section":
            body = section_table(schemas, prefix, name)
        elif what == "columns":
            body = column_table(schemas, prefix, name)
        else:
            r, s = by_key[(prefix, name)]
            body = field_table(r, {**common, **s.enums})
        head = " ".join(x for x in (prefix, name, what) if x)
        return f"<!-- generated: {head} -->\n{body}\n<!-- end generated -->"

    return MARKER.sub(table, text)
