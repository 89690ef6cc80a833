"""Shared hypothesis strategies for checkpoints, their files, and mutations of those files.

Import from any test (tests/ is on ``sys.path`` under pytest)::

    from tests.strategies import checkpoints, checkpoint_files, mutated_files

* :func:`checkpoints` builds in-memory :class:`onert_checkpoint.Checkpoint` objects in either
  dialect of schema 1: 0..many entries including zero-length ones, SGD or Adam, onert-micro's
  absent entries and shuffled storage order, step/epoch anywhere in 0..2**32-1 (the edges
  included), and onert's footer-less files. Every drawn checkpoint is *canonical*: writing it
  and loading the file back gives a checkpoint with ``content_equal`` content.
* :func:`wof_checkpoints` does the same for the weight-only format.
* :func:`rich_checkpoints` builds what only schema 2 and 3 hold: names, dtypes, shapes, model
  indices, self-described optimizers with tensors without state, typed state, unknown sections,
  an origin, and (for schema 3) a drawn storage order with 0-byte tensors sharing offsets.
* :func:`checkpoint_files` draws a :class:`SampleFile`: the bytes of a drawn checkpoint written
  by the library's writer, or one of the real files exported by onert (tests/data/real-onert).
* :func:`mutated_files` mutates such files at field boundaries (see :data:`MUTATIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from hypothesis import strategies as st

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format import saving
from onert_checkpoint.format.layout import Schema1Layout, WofLayout
from onert_checkpoint.format.model import Section
from onert_checkpoint.format.revisions.registry import layout_for
from tests.fuzz.structure import U32_MAX, boundaries, field_map, reseal_v2

__all__ = [
    "HAS_V2",
    "HAS_V3",
    "MUTATIONS",
    "REAL_FILES",
    "SampleFile",
    "checkpoint_files",
    "checkpoints",
    "counters",
    "entry_data",
    "interesting_u32",
    "mutated_files",
    "rich_checkpoints",
    "wof_checkpoints",
]

REAL_FILES = sorted((Path(__file__).parent / "data" / "real-onert").glob("*.ckpt"))

DIALECTS = ("onert", "onert-micro")
OPTIMIZERS = ("sgd", "adam")

#: u32 values at the edges: 0, 1, 2**31 and 2**32-1, more often than uniform draws would give.
counters = st.one_of(st.sampled_from([0, 1, 2**31 - 1, 2**31, U32_MAX - 1, U32_MAX]),
                     st.integers(0, U32_MAX))


def entry_data(max_bytes: int = 48) -> st.SearchStrategy[np.ndarray]:
    """An entry's data: zero-length often, else raw bytes, sometimes viewed as float32."""

    @st.composite
    def build(draw: st.DrawFn) -> np.ndarray:
        raw = draw(st.one_of(st.just(b""), st.binary(min_size=1, max_size=max_bytes)))
        arr = np.frombuffer(raw, dtype=np.uint8).copy()
        if raw and len(raw) % 4 == 0 and draw(st.booleans()):
            return arr.view(np.float32)
        return arr

    return build()


_Entry = TypeVar("_Entry", bound=Buffer)


def _as_bytes(entry: _Entry) -> _Entry:
    """A schema-1 or WOF entry: its data may be a typed view, but no dtype or shape is
    recorded (a built Tensor takes its array's)."""
    if isinstance(entry, Tensor):
        entry.dtype = entry.shape = None
    return entry


def _same_size(draw: st.DrawFn, nbytes: int) -> np.ndarray:
    return np.frombuffer(draw(st.binary(min_size=nbytes, max_size=nbytes)), dtype=np.uint8).copy()


@st.composite
def checkpoints(
    draw: st.DrawFn,
    *,
    dialect: str | None = None,
    optimizer: str | None = None,
    min_entries: int = 0,
    max_entries: int = 8,
    max_bytes: int = 48,
    footerless: bool | None = None,
) -> Checkpoint:
    """A schema-1 checkpoint that the library's writer holds in ``dialect`` (drawn if None).

    onert: entries 0..N-1 all present, data in table order; with Adam each slot entry is either
    as long as its weight or empty (m and v alike); optionally footer-less (no state).
    onert-micro: N table entries of which any subset is present, data stored in a shuffled
    order (expressed through the entries' ``offset``, which the writer's storage order follows);
    with Adam m and v exist for every present entry, each block in its own shuffled order.
    """
    dialect = dialect or draw(st.sampled_from(DIALECTS))
    kind = optimizer or draw(st.sampled_from(OPTIMIZERS))
    n = draw(st.integers(min_entries, max_entries))
    data = entry_data(max_bytes)
    if dialect == "onert":
        present = list(range(n))
    else:
        mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        present = [i for i in range(n) if mask[i]]

    def placed(cls: type[Buffer], items: dict[int, np.ndarray]) -> list[Buffer]:
        # onert stores in table order; onert-micro in a drawn order, recorded as fake offsets.
        order = list(items)
        if dialect == "onert-micro":
            order = draw(st.permutations(order))
        rank = {index: k for k, index in enumerate(order)}
        offset = (lambda i: rank[i]) if dialect == "onert-micro" else (lambda i: None)
        return [_as_bytes(cls(index=i, data=arr, offset=offset(i))) for i, arr in items.items()]

    weights = {i: draw(data) for i in present}
    tensors = placed(Tensor, weights)
    opt = Optimizer(kind)
    if kind == "adam":
        filled = {i: (dialect == "onert-micro" or draw(st.booleans())) for i in present}
        for slot in ("m", "v"):
            items = {i: _same_size(draw, weights[i].nbytes if filled[i] else 0) for i in present}
            opt.slots[slot] = {b.index: b for b in placed(Buffer, items)}
    no_footer = dialect == "onert" and (
        footerless if footerless is not None else draw(st.integers(0, 7)) == 0
    )
    state = TrainingState()
    if not no_footer:
        state = TrainingState(step=draw(counters), epoch=draw(counters))
    return Checkpoint(
        tensors=tensors,
        optimizer=opt,
        state=state,
        layout=Schema1Layout("v1", dialect=dialect, num_entries=n,
                             quirks=("footerless",) if no_footer else ()),
    )


@st.composite
def wof_checkpoints(draw: st.DrawFn, *, max_entries: int = 8, max_bytes: int = 48) -> Checkpoint:
    """A weight-only (WOF) checkpoint: N entries, any subset present, shuffled storage order."""
    n = draw(st.integers(0, max_entries))
    mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    present = [i for i in range(n) if mask[i]]
    order = draw(st.permutations(present))
    rank = {index: k for k, index in enumerate(order)}
    data = entry_data(max_bytes)
    tensors = [_as_bytes(Tensor(index=i, data=draw(data), offset=rank[i])) for i in present]
    return Checkpoint(tensors=tensors, optimizer=None, layout=WofLayout("wof", num_entries=n))


#: Names, slot names and state strings: any code point but surrogates, at most 48 UTF-8 bytes.
rich_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                     max_size=12).filter(lambda s: len(s.encode("utf-8")) <= 48)
_TYPED = {"float32": 4, "float16": 2, "int32": 4, "uint8": 1, "int64": 8, "int8": 1, "bool": 1,
          "complex128": 16, "float64": 8}


@st.composite
def rich_checkpoints(draw: st.DrawFn, *, revision: str = "v3", max_tensors: int = 6,
                     max_bytes: int = 70) -> Checkpoint:
    """Schema-2/3 content: each tensor raw bytes (0 bytes often) or typed and maybe shaped, a
    name, a model index (below 2**32-1, schema 3's "none"); no optimizer, SGD, Adam (some
    tensors without state) or a self-described one with state entries of any size; typed
    state; unknown sections; an origin. The data's storage order is drawn as the tensors'
    ``offset`` (ties included, so 0-byte tensors share offsets) plus, sometimes,
    ``data_order`` to order the ties: what a loaded schema-3 file carries."""
    indices = sorted(draw(st.sets(st.one_of(st.integers(0, 12), st.just(U32_MAX)),
                                  max_size=max_tensors)))
    tensor_names = draw(st.lists(rich_names, unique=True, min_size=len(indices),
                                 max_size=len(indices)))
    model_indices = draw(st.lists(st.one_of(st.integers(0, 50), st.just(U32_MAX - 1)),
                                  unique=True, min_size=len(indices), max_size=len(indices)))
    tensors = []
    for k, i in enumerate(indices):
        dtype = draw(st.sampled_from([None, *_TYPED]))
        if dtype is None:
            raw = draw(st.one_of(st.just(b""), st.binary(max_size=max_bytes)))
            t = Tensor(index=i, data=np.frombuffer(raw, np.uint8).copy())
        else:
            shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
            size = int(np.prod(shape, dtype=np.int64)) * _TYPED[dtype]
            raw = draw(st.binary(min_size=size, max_size=size))
            arr = np.frombuffer(raw, np.uint8).copy().view(dtype).reshape(shape)
            t = Tensor(index=i, data=arr, dtype=dtype,
                       shape=shape if draw(st.booleans()) else None)
        if draw(st.booleans()):
            t.name = tensor_names[k]
        if draw(st.booleans()):
            t.model_index = model_indices[k]
        t.offset = draw(st.one_of(st.none(), st.integers(0, 3)))
        tensors.append(t)
    if tensors and draw(st.booleans()):
        order = draw(st.permutations([t.index for t in tensors]))
        data_order: list[int] | None = order
    else:
        data_order = None
    kind = draw(st.sampled_from(["none", "sgd", "adam", "self"]))
    optimizer = None
    if kind in ("sgd", "adam"):
        optimizer = Optimizer(kind)
        for slot in optimizer.slots:
            optimizer.slots[slot] = {t.index: Buffer(t.index, t.raw.copy()) for t in tensors
                                     if draw(st.booleans())}
    elif kind == "self":
        code = draw(st.integers(3, U32_MAX))
        slot_names = draw(st.lists(rich_names, max_size=3, unique=True))
        optimizer = Optimizer(f"optimizer_{code}", {})
        for slot in slot_names:
            optimizer.slots[slot] = {
                t.index: Buffer(t.index, np.frombuffer(draw(st.binary(max_size=80)),
                                                      np.uint8).copy())
                for t in tensors if draw(st.booleans())
            }
    state = TrainingState()
    for key in draw(st.lists(rich_names.map(lambda s: "k" + s), max_size=3, unique=True)):
        state[key] = draw(st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats(),
                                    rich_names, st.binary(max_size=20)))
    if draw(st.booleans()):
        state["step"] = draw(st.integers(0, 2**63 - 1))
    kinds = sorted(draw(st.sets(st.one_of(st.integers(6, 40), st.just(U32_MAX)), max_size=2)))
    sections = [Section(k, draw(st.binary(max_size=40))) for k in kinds]  # optional kinds
    origin = None
    if draw(st.booleans()):
        origin = {"revision": draw(st.sampled_from(["v1", "wof"])),
                  "dialect": draw(st.sampled_from([None, "onert", "onert-micro"])),
                  "num_entries": draw(st.integers(0, 2**64 - 1)),
                  "footerless": draw(st.booleans())}
    return Checkpoint(tensors=tensors, optimizer=optimizer, state=state,
                      layout=layout_for(revision, origin=origin, sections=sections,
                                        data_order=data_order))


@dataclass(frozen=True)
class SampleFile:
    """A valid file and where it came from (``ckpt`` is None for real files)."""

    data: bytes
    revision: str
    dialect: str | None
    origin: str
    ckpt: Checkpoint | None = None

    def __repr__(self) -> str:  # hypothesis prints this on failure: keep it reproducible
        return f"SampleFile({self.origin}, {self.revision}/{self.dialect}, data={self.data!r})"


def _written(ckpt: Checkpoint) -> SampleFile:
    return SampleFile(oc.to_bytes(ckpt), ckpt.revision, ckpt.dialect, "writer", ckpt)


#: True once the library reads and writes schema 2 (version byte 2).
HAS_V2 = 2 in oc.SUPPORTED_VERSIONS and "v2" in saving.WRITERS


def _written_v2(ckpt: Checkpoint) -> SampleFile:
    return SampleFile(oc.to_bytes(ckpt, revision="v2"), "v2", None, "writer-v2", ckpt)


#: True once the library reads and writes schema 3 (version byte 3).
HAS_V3 = 3 in oc.SUPPORTED_VERSIONS and "v3" in saving.WRITERS


def _written_v3(ckpt: Checkpoint) -> SampleFile:
    return SampleFile(oc.to_bytes(ckpt, revision="v3"), "v3", None, "writer-v3", ckpt)


def _real(path: Path) -> SampleFile:
    data = path.read_bytes()
    ckpt = oc.load(data)
    return SampleFile(data, ckpt.revision, ckpt.dialect, f"real:{path.name}")


def checkpoint_files(*, max_entries: int = 8, max_bytes: int = 48,
                     real: bool = True) -> st.SearchStrategy[SampleFile]:
    """A valid file of every revision and dialect: written by the library (schema 1 in both
    dialects, WOF, and schema 2 and 3 once the library has them, schema 3 also from
    :func:`rich_checkpoints`), or a real export."""
    content = st.one_of(
        checkpoints(max_entries=max_entries, max_bytes=max_bytes),
        wof_checkpoints(max_entries=max_entries, max_bytes=max_bytes),
    )
    options = [content.map(_written)]
    if HAS_V2:
        options.append(content.map(_written_v2))
    if HAS_V3:
        options.append(content.map(_written_v3))
        options.append(rich_checkpoints(max_tensors=max_entries).map(_written_v3))
    if real and REAL_FILES:
        options.insert(0, st.sampled_from(REAL_FILES).map(_real))
    return st.one_of(*options)


def interesting_u32(data: bytes, at: int, width: int = 4) -> list[int]:
    """Values a u32 (or u64) field at ``at`` is set to: edges, around the file size, and
    self-pointing."""
    size = len(data)
    values = {0, 1, 4, 8, 19, 20, 21, 64, max(size - 8, 0), max(size - 1, 0), size, size + 1,
              size + 8, 2**31 - 1, 2**31, U32_MAX - 3, U32_MAX, at, at + 4}
    if width == 8:
        values |= {2**32, 2**63 - 1, 2**63, 2**64 - 64, 2**64 - 1}
    return sorted(values)


#: The mutation operators of :func:`mutated_files`.
MUTATIONS = ("set", "nudge", "copy", "swap", "reverse", "truncate", "append", "insert",
             "delete", "flip", "byte")


@st.composite
def _mutate_once(draw: st.DrawFn, data: bytes, revision: str) -> tuple[bytes, str]:
    op = draw(st.sampled_from(MUTATIONS))
    size = len(data)
    u32_fields = [f for f in field_map(data, revision) if f.size in (4, 8)]
    if op in ("set", "nudge", "copy", "swap") and not u32_fields:
        op = "truncate"
    if op == "set":
        f = draw(st.sampled_from(u32_fields))
        value = draw(st.sampled_from(interesting_u32(data, f.at, f.size)))
        return _put(data, f.at, value, f.size), f"set {f.name}={value}"
    if op == "nudge":
        f = draw(st.sampled_from(u32_fields))
        delta = draw(st.sampled_from([-8, -4, -1, 1, 4, 8]))
        value = _get(data, f.at, f.size) + delta
        return _put(data, f.at, value, f.size), f"nudge {f.name}{delta:+d}"
    if op == "copy":  # overlapping entries: one field takes another's value
        f, g = draw(st.sampled_from(u32_fields)), draw(st.sampled_from(u32_fields))
        return _put(data, f.at, _get(data, g.at, g.size), f.size), f"copy {g.name}->{f.name}"
    if op == "swap":  # descending order: exchange two fields' values
        f, g = draw(st.sampled_from(u32_fields)), draw(st.sampled_from(u32_fields))
        a, b = _get(data, f.at, f.size), _get(data, g.at, g.size)
        return _put(_put(data, f.at, b, f.size), g.at, a, g.size), f"swap {f.name}<->{g.name}"
    if op == "reverse":  # a whole table in descending order
        tables: dict[str, list[int]] = {}
        for f in u32_fields:
            if f.kind == "entry":
                tables.setdefault(f.name.split("[")[0], []).append(f.at)
        if not tables:
            return data + b"\0", "append 00"
        name = draw(st.sampled_from(sorted(tables)))
        ats = tables[name]
        values = [_get(data, at, 4) for at in ats][::-1]
        out = data
        for at, v in zip(ats, values):
            out = _put(out, at, v)
        return out, f"reverse {name}"
    if op == "truncate":
        cut = draw(st.sampled_from(boundaries(data, revision)))
        cut = max(0, min(size, cut + draw(st.sampled_from([-1, 0, 0, 1]))))
        return data[:cut], f"truncate {cut}"
    if op == "append":
        junk = draw(st.one_of(st.binary(min_size=1, max_size=32),
                              st.sampled_from([b"\0" * 8, b"\xff" * 4, data[:20]])))
        return data + junk, f"append {len(junk)}"
    if op in ("insert", "delete"):
        at = draw(st.sampled_from(boundaries(data, revision)))
        k = draw(st.sampled_from([1, 4, 8]))
        if op == "insert":
            return data[:at] + b"\0" * k + data[at:], f"insert {k}@{at}"
        return data[:at] + data[at + k :], f"delete {k}@{at}"
    if not data:
        return b"\xad", "byte"
    if op == "flip":
        at = draw(st.integers(0, size - 1))
        bit = draw(st.integers(0, 7))
        return data[:at] + bytes([data[at] ^ (1 << bit)]) + data[at + 1 :], f"flip {at}.{bit}"
    at = draw(st.integers(0, size - 1))
    value = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF]))
    return data[:at] + bytes([value]) + data[at + 1 :], f"byte {at}={value}"


def _get(data: bytes, at: int, width: int) -> int:
    return int.from_bytes(data[at : at + width], "little")


def _put(data: bytes, at: int, value: int, width: int = 4) -> bytes:
    if at + width > len(data):
        return data
    value &= (1 << (8 * width)) - 1
    return data[:at] + value.to_bytes(width, "little") + data[at + width :]


@st.composite
def mutated_files(
    draw: st.DrawFn, base: st.SearchStrategy[SampleFile] | None = None, max_ops: int = 3
) -> tuple[bytes, tuple[str, ...]]:
    """A valid file mutated 1..``max_ops`` times; returns the bytes and what was done.

    Schema-2 files are usually resealed after each mutation (every CRC-32C recomputed), so the
    mutations reach the rules behind the checksums; sometimes they are left broken."""
    sample = draw(base if base is not None else checkpoint_files())
    data, ops = sample.data, []
    for _ in range(draw(st.integers(1, max_ops))):
        data, what = draw(_mutate_once(data, sample.revision))
        if sample.revision in ("v2", "v3") and draw(st.integers(0, 3)) > 0:
            data, what = reseal_v2(data), what + " (resealed)"
        ops.append(what)
    return data, tuple(ops)
