"""The model objects: what a checkpoint holds, free of any file I/O.

A [`Checkpoint`][onert_checkpoint.Checkpoint] holds the weight [`Tensor`][onert_checkpoint.Tensor]
entries, the [`Optimizer`][onert_checkpoint.Optimizer] with its per-slot
[`Buffer`][onert_checkpoint.Buffer] entries, the [`TrainingState`][onert_checkpoint.TrainingState],
and the layout of the file it came from (format/layout.py: revision, dialect, table length...). Data
are NumPy arrays; when loaded from a file they are read-only views on the mapped file, never copies.
"""

from __future__ import annotations

import math
import operator
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .assignment import check_assignment
from .dtypes import DTYPE_CODES
from .entries import DataStore, EntryTable, SlotEntries, TensorList
from .errors import error_for, released_error
from .layout import Layout, Section
from .revisions.registry import RECOMMENDED, layout_for
from .typed import dtype_name, typed_geometry

if TYPE_CHECKING:
    # PEP 688's buffer protocol (collections.abc.Buffer from Python 3.12), for type checkers
    from typing_extensions import Buffer as BufferLike

__all__ = ["OPTIMIZER_SLOTS", "Buffer", "Checkpoint", "Optimizer", "Section", "Tensor",
           "TrainingState", "as_bytes_array"]

#: The state slots of each optimizer kind, in file order (schema 1: opt1 = m, opt2 = v).
OPTIMIZER_SLOTS: dict[str, tuple[str, ...]] = {"sgd": (), "sgd_momentum": ("momentum",),
                                               "adam": ("m", "v")}


def as_bytes_array(data: np.ndarray | BufferLike) -> np.ndarray:
    """A flat uint8 view of ``data`` (an array, bytes or any buffer), without copying."""
    if isinstance(data, np.ndarray):
        arr = data if data.flags.c_contiguous else np.ascontiguousarray(data)
        return arr.reshape(-1).view(np.uint8)
    return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)


class Buffer:
    """The bytes of one offset-table entry in one block (a weight or an optimizer slot).

    ``index`` is the entry's position in its offset table. ``offset`` is where the data was read
    from (None for content built in memory). ``data`` is a NumPy array; assigning to it is
    checked (`check_assignment`): the entry keeps its size, type and shape.
    """

    __slots__ = ("__weakref__", "_data", "_index", "_row", "_table", "offset")

    def __init__(self, index: int, data: np.ndarray, offset: int | None = None) -> None:
        self._index = index
        self._data: np.ndarray | None = data
        self._table: EntryTable | None = None
        self._row = 0
        self.offset = offset

    @property
    def index(self) -> int:
        return self._index

    @index.setter
    def index(self, value: int) -> None:
        old, self._index = self._index, value
        self._tell_owner("index", old, value)

    def _tell_owner(self, key: str, old: object, value: object) -> None:
        """A tensor's list keeps its index and name maps (a slot entry has none)."""

    @property
    def data(self) -> np.ndarray:
        data = self._data
        if data is None:
            # First access: the file's pending data checks run before any byte is handed out.
            table = self._table
            if table is None:  # neither data nor a file: dropped at the end of an open block
                raise released_error(self._what())
            data = self._data = table.data(self._row)
        return data

    @data.setter
    def data(self, value: object) -> None:
        self._data = check_assignment(self, value)

    @property
    def raw(self) -> np.ndarray:
        """The entry's bytes as a flat uint8 array (a view, never a copy)."""
        return as_bytes_array(self.data)

    @property
    def nbytes(self) -> int:
        if self._data is None and self._table is not None:
            return self._table.nbytes(self._row)  # known without reading (or checking) data
        return int(self.data.nbytes)

    def crc32(self) -> int:
        """zlib's CRC-32 of the entry's bytes."""
        return zlib.crc32(self.raw.data) & 0xFFFFFFFF  # ndarray.data: its memoryview

    # The array protocol: to NumPy (np.asarray, indexing, len, iteration) an entry is its data,
    # as a safetensors or np.load result is. Every path reads through ``data``, so the file's
    # pending data checks run before a byte is handed out; the geometry (shape, dtype, ndim,
    # size, len) is known from the entry's metadata without reading or checking the data.
    def __array__(self, dtype: object = None, copy: bool | None = None) -> np.ndarray:
        data = self._data if self._data is not None else self.data
        # dtype None first: np.asarray(entry), the common call
        if dtype is not None and np.dtype(dtype) != data.dtype:  # type: ignore[call-overload]
            if copy is False:
                # NumPy's protocol: a copy that is forbidden but needed is a ValueError
                raise ValueError(f"{self._what()}: {data.dtype} to {dtype} needs a copy")
            return data.astype(dtype)  # type: ignore[call-overload]
        return data.copy() if copy else data

    def numpy(self) -> np.ndarray:
        """The entry's data as a NumPy array (a read-only view on the file when loaded from
        one, as ``data``; copy it with ``np.array(entry)``)."""
        return self.data

    def __getitem__(self, key: object) -> object:
        return self.data[key]  # type: ignore[call-overload]

    def __iter__(self) -> Iterator[object]:
        return iter(self.data)

    def __len__(self) -> int:
        shape = self._geometry()[1]
        if not shape:
            raise TypeError(f"len() of a 0-d entry ({self._what()})")
        return shape[0]

    def __bool__(self) -> bool:
        # An entry object is always true (``if entry:``), whatever its length: an empty or
        # one-element array deciding truth would be a trap, not NumPy's ambiguity error either.
        return True

    def _geometry(self) -> tuple[np.dtype, tuple[int, ...]]:
        """The dtype and shape of ``data``, without reading (and so checking) the data."""
        table = self._table
        if self._data is None and table is not None:
            return typed_geometry(table.nbytes(self._row), *table.dtype_shape(self._row))
        data = np.asarray(self.data)
        return data.dtype, data.shape

    # Typed wide so that Tensor's metadata attributes of the same names (the model's dtype
    # name and shape, None when unknown) can stand in for them.
    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape of ``data`` (a slot entry has its tensor's)."""
        return self._geometry()[1]

    @property
    def dtype(self) -> np.dtype | str | None:
        """The dtype of ``data`` (a slot entry has its tensor's; bytes are uint8)."""
        return self._geometry()[0]

    @property
    def ndim(self) -> int:
        """The number of dimensions of ``data``."""
        return len(self._geometry()[1])

    @property
    def size(self) -> int:
        """The number of elements of ``data``."""
        return math.prod(self._geometry()[1])

    def _what(self) -> str:
        return f"entry {self._index}"

    def __repr__(self) -> str:
        table = self._table
        if self._data is None and (table is None or table.store.released):
            return f"{type(self).__name__}(index={self._index}, released)"
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        offset = "" if self.offset is None else f", offset={self.offset}"
        data = self._data
        if data is None and self._table is not None:
            return f"index={self._index}, nbytes={self.nbytes}{offset}"
        dtype = getattr(data, "dtype", None)
        shape = list(getattr(data, "shape", ()))
        return f"index={self._index}, {dtype}{shape}, nbytes={self.nbytes}{offset}"


#: The little-endian NumPy dtypes of the format's element types (dtypes.py).
_TYPED = frozenset(np.dtype(n).newbyteorder("<") for n in DTYPE_CODES if n in np.sctypeDict)


class Tensor(Buffer):
    """A weight entry, with what the circle model (or a schema-2 record) says of it. Built from
    a typed array, it takes the array's dtype and shape where none is given (a flat uint8
    array, or a type the format has no name for, is the entry's bytes)."""

    __slots__ = ("_dtype", "_name", "_owner", "model_index", "shape")

    #: what the model or the file's record says (None when neither does; the array is then
    #: the entry's bytes): the shape
    shape: tuple[int, ...] | None

    def __init__(self, index: int, data: np.ndarray, offset: int | None = None,
                 name: str | None = None, dtype: str | None = None,
                 shape: tuple[int, ...] | None = None, model_index: int | None = None) -> None:
        super().__init__(index, data, offset)
        kind: Any = getattr(data, "dtype", None)
        if kind in _TYPED and (kind != np.uint8 or data.ndim != 1):
            dtype, shape = dtype or kind.name, data.shape if shape is None else shape
        self._name = name
        self._dtype = dtype
        self.shape = shape
        self.model_index = model_index
        self._owner: Callable[[], TensorList[Tensor] | None] | None = None  # weak reference

    def _tell_owner(self, key: str, old: object, value: object) -> None:
        owner = self._owner() if self._owner is not None else None
        if owner is not None and old != value:
            owner._changed(self, key, old, value)

    @property
    def dtype(self) -> str | None:
        """The element type's name ("float32") that the model or the file's record says, None
        when neither does (the array is then the entry's bytes). It compares equal to NumPy's
        spellings too (``tensor.dtype == np.float32``), as an array's dtype does."""
        return dtype_name(self._dtype)

    @dtype.setter
    def dtype(self, value: str | None) -> None:
        self._dtype = value

    @property
    def name(self) -> str | None:
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        old, self._name = self._name, value
        self._tell_owner("name", old, value)

    def _what(self) -> str:
        if self._name:
            return f"tensor {self._name!r} (entry {self._index})"
        return f"entry {self._index}"

    def _describe(self) -> str:
        if self.dtype is not None or self.shape is not None:
            shape = "" if self.shape is None else str(list(self.shape))
            name = "" if self._name is None else f", name={self._name!r}"
            offset = "" if self.offset is None else f", offset={self.offset}"
            return (f"index={self._index}{name}, {self.dtype or 'bytes'}{shape}, "
                    f"nbytes={self.nbytes}{offset}")
        return super()._describe()


@dataclass(eq=False)
class Optimizer:
    """The optimizer kind and its state: ``slots[slot_name][entry_index]``."""

    kind: str
    # a loaded file's slots are SlotEntries (made on first access); built ones plain dicts
    slots: dict[str, MutableMapping[int, Buffer]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in OPTIMIZER_SLOTS.get(self.kind, ()):
            self.slots.setdefault(name, {})

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(self.slots)

    def __repr__(self) -> str:
        slots = ", ".join(f"{name!r}: {len(e)} entries" for name, e in self.slots.items())
        return f"Optimizer(kind={self.kind!r}, slots={{{slots}}})"


class NoSuchTensorError(KeyError):
    """``ckpt[key]`` for a key no tensor has. ``args[0]`` is the key, as in a plain
    ``KeyError``; the message, made when it is shown (not at every miss of ``key in ckpt``),
    names the tensors nearest a mistyped name."""

    def __init__(self, key: object, tensors: TensorList) -> None:
        super().__init__(key)
        self._tensors = tensors

    def __str__(self) -> str:
        from ..suggestions import did_you_mean

        key = self.args[0]
        names = [n for n in self._tensors.names() if n is not None]
        if isinstance(key, str) and names:
            hint = did_you_mean(key, names, 3) or f"none of the {len(names)} names is close"
        elif isinstance(key, str):
            hint = ("the tensors have no names: give the circle model (load(..., model=...) "
                    "or bind) or use entry indices")
        else:
            indices = self._tensors.indices()
            hint = (f"{len(indices)} entries, indices {min(indices)} to {max(indices)}"
                    if indices else "the checkpoint has no tensors")
        return f"{key!r}: no such tensor; {hint}"


class TrainingState(dict[str, object]):
    """Training position as key/value pairs (schema 1 holds ``step`` and ``epoch``)."""

    @property
    def step(self) -> int | None:
        value = self.get("step")
        return None if value is None else int(value)  # type: ignore[call-overload]

    @property
    def epoch(self) -> int | None:
        value = self.get("epoch")
        return None if value is None else int(value)  # type: ignore[call-overload]


class Checkpoint(Mapping[object, Tensor]):
    """A training checkpoint: weights, optimizer state and training position.

    It is a mapping from entry index (``ckpt[0]``) or tensor name (``ckpt["fc1/w"]``) to
    [`Tensor`][onert_checkpoint.Tensor]; iteration (``keys()``) yields the tensor names in table
    order when every tensor has a distinct name, else the entry indices. ``ckpt[key] = values``
    replaces a tensor's data by the rule of ``ckpt[key].data = values``; a key no tensor has is a
    ``KeyError`` that names the nearest tensor names.

    ``nbytes``, ``index``, ``name``, ``dtype``, ``shape`` are attributes (metadata, known
    without reading the data); ``crc32()`` is a method because it reads every byte.

    ``layout`` is what the file it came from records besides the content (or what
    [`save`][onert_checkpoint.save] writes by default), an object of its revision's class in
    [`format.layout`][onert_checkpoint.format.layout]: ``revision`` and ``dialect`` read (and
    set) it, and a checkpoint built by hand is in the recommended revision (spec/SPEC.md 10).
    ``ckpt == other`` compares the content only
    ([`content_equal`][onert_checkpoint.Checkpoint.content_equal]).
    """

    _tensors: TensorList[Tensor]
    # The file's bytes and its pending data checks, for a loaded checkpoint.
    _store: DataStore | None = None
    # True after the ``open`` block that held the storage ended (`_release_data`).
    _released = False

    def __init__(self, tensors: Iterable[Tensor] = (), optimizer: Optimizer | None = None,
                 state: Mapping[str, object] | None = None, revision: str | None = None,
                 dialect: str | None = None, *, layout: Layout | None = None,
                 file_size: int | None = None, source: object = None) -> None:
        self.tensors = tensors
        self.optimizer = optimizer
        self.state = state if isinstance(state, TrainingState) else TrainingState(state or {})
        self.layout = layout or layout_for(revision or RECOMMENDED.name, dialect=dialect)
        self.file_size = file_size
        self.source = source

    @property
    def tensors(self) -> TensorList[Tensor]:
        """The tensors in entry-index order, the order files store them in (set from any
        iterable of tensors)."""
        return self._tensors

    @tensors.setter
    def tensors(self, value: Iterable[Tensor]) -> None:
        if not isinstance(value, TensorList):
            value = TensorList(sorted(value, key=operator.attrgetter("index")))
        self._tensors = value

    @property
    def revision(self) -> str:
        """The revision's short name (as `onert-ckpt info` prints it); setting it lays the
        checkpoint out as that revision (what both revisions' files carry is kept)."""
        return self.layout.revision

    @revision.setter
    def revision(self, value: str) -> None:
        self.layout = layout_for(value, **self.layout.values())

    @property
    def dialect(self) -> str | None:
        """The schema-1 entry indexing ("onert", "onert-micro"), None when none is known."""
        return self.layout.dialect

    @dialect.setter
    def dialect(self, value: str | None) -> None:
        self.layout.dialect = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Checkpoint):
            return NotImplemented
        return self.content_equal(other)

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, key: object) -> Tensor:
        tensors: TensorList[Tensor] = self.__dict__["_tensors"]  # self.tensors, no property call
        pos = self._position(tensors, key)
        item = tensors._items[pos]
        return item if item is not None else tensors._at(pos)

    @staticmethod
    def _position(tensors: TensorList[Tensor], key: object) -> int:
        """The list position of the tensor ``ckpt[key]`` names (KeyError when none)."""
        if type(key) is str and (by_name := tensors._by_name) is not None:
            # the common lookup (a name, the list's name map built) in as few calls as it takes
            pos = by_name.get(key)
            if pos is not None:
                return pos
        pos = None
        if isinstance(key, str):  # the common key first: each lookup of a name pays this
            pos = tensors.position_of_name(key)
        elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            pos = tensors.position_of_index(int(key))
        if pos is None:
            raise NoSuchTensorError(key, tensors)
        return pos

    def __setitem__(self, key: object, value: object) -> None:
        """``ckpt[key] = values``: the new data of the tensor ``ckpt[key]``, by the rule of
        ``ckpt[key].data = values`` (`cast_for_entry`: same size, type and shape, values
        converted only when none changes). A key no tensor has is a ``KeyError``: assignment
        never adds a tensor."""
        self[key].data = value

    def __iter__(self) -> Iterator[object]:
        """Tensor names when every tensor has a distinct one (after ``bind``, or a schema-2
        file with names), else entry indices; ``ckpt[key]`` takes either."""
        tensors = self.tensors
        if len(tensors) and tensors._key_of(0, "name") is not None:
            names = tensors.names()
            if None not in names and len(set(names)) == len(names):
                return iter(names)
        return iter(tensors.indices())

    def __len__(self) -> int:
        return len(self.tensors)

    def __repr__(self) -> str:
        opt = None if self.optimizer is None else self.optimizer.kind
        parts = [f"revision={self.revision!r}", f"dialect={self.dialect!r}", f"optimizer={opt!r}",
                 f"entries={len(self.tensors)}"]
        num_entries = self.layout.num_entries
        if num_entries is not None and num_entries != len(self.tensors):
            parts.append(f"num_entries={num_entries}")
        parts += [f"step={self.step}", f"epoch={self.epoch}"]
        if self.file_size is not None:
            parts.append(f"file_size={self.file_size}")
        return f"Checkpoint({', '.join(parts)})"

    def verify(self) -> None:
        """Run the data checks that ``load`` left for the first data access (schema 2's
        data-section CRC-32C and padding) now; raise their
        [`CheckpointError`][onert_checkpoint.CheckpointError]."""
        self._check_live()
        if self._store is not None:
            self._store.verify()

    def _release_data(self) -> None:
        """``open``'s exit: every entry dropped, the file forgotten; from now on reading an
        entry, copying or saving the checkpoint raises ``released`` (spec/error-codes.toml)."""
        self._released = True
        if self._store is not None:
            self._store.release()
        for entry in self._made_entries():
            # every later read of it raises ``released`` (an empty answer would let a save
            # write 0-byte entries)
            entry._data = entry._table = None

    def _made_entries(self) -> Iterator[Buffer]:
        """The entry objects made so far, tensors and slot entries (of a loaded file, those
        looked at)."""
        yield from self.tensors.made()
        for entries in self.optimizer.slots.values() if self.optimizer is not None else ():
            yield from entries.made() if isinstance(entries, SlotEntries) else entries.values()

    def _check_live(self) -> None:
        """Raise ``released`` when the ``open`` block that held this checkpoint's storage has
        ended (every writer calls it before touching its target)."""
        if self._released:
            raise released_error()

    @property
    def table_length(self) -> int:
        """N: ``layout.num_entries`` when known, else one past the highest entry index."""
        if self.layout.num_entries is not None:
            return int(self.layout.num_entries)
        return max(self.tensors.indices(), default=-1) + 1

    @property
    def step(self) -> int | None:
        return self.state.step

    @step.setter
    def step(self, value: int) -> None:
        self.state["step"] = operator.index(value)

    @property
    def epoch(self) -> int | None:
        return self.state.epoch

    @epoch.setter
    def epoch(self, value: int) -> None:
        self.state["epoch"] = operator.index(value)

    def slot(self, name: str, key: object) -> Buffer | None:
        """The ``name`` slot entry (``"m"``, ``"v"``) of the tensor at ``key`` (a name or an entry
        index); None when the slot holds no entry for that tensor. A slot name the optimizer does
        not have is a [`CheckpointError`][onert_checkpoint.CheckpointError] (``unknown_slot``)
        naming the slots there are; a key no tensor has is a ``KeyError``, as ``ckpt[key]``."""
        slots = self.optimizer.slots if self.optimizer is not None else {}
        entries = slots.get(name)
        if entries is None:
            kind = "no optimizer" if self.optimizer is None else f"{self.optimizer.kind}"
            have = ", ".join(repr(s) for s in slots) or "none"
            raise error_for("unknown_slot", "optimizer", None,
                            f"no optimizer slot {name!r} ({kind}; its slots: {have})")
        # the tensor's entry index without making its object (as ``self[key].index``)
        tensors: TensorList[Tensor] = self.__dict__["_tensors"]  # self.tensors, no property call
        pos = self._position(tensors, key)
        item = tensors._items[pos]
        if item is not None:
            return entries.get(item._index)
        return entries.get(tensors._key_of(pos, "index"))

    def content_equal(self, other: Checkpoint) -> bool:
        """True when both hold the same entries, bytes, optimizer state and training state
        (``==``: the layout is not content)."""
        if self.tensors.indices() != other.tensors.indices():
            return False
        if not all(map(_same_bytes, self.tensors, other.tensors)):
            return False
        mine, theirs = self.optimizer, other.optimizer
        if mine is None or theirs is None:
            if mine is not theirs:
                return False
        elif mine.kind != theirs.kind or mine.slots.keys() != theirs.slots.keys():
            return False
        elif not all(_same_entries(entries, theirs.slots[n]) for n, entries in mine.slots.items()):
            return False
        return self.state.keys() == other.state.keys() and all(
            _same_value(v, other.state[k]) for k, v in self.state.items())


def _same_value(a: object, b: object) -> bool:
    """State values are equal when ``==`` says so, and two NaNs are equal (a NaN is a value a
    checkpoint can hold, e.g. a diverged loss)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _same_entries(a: Mapping[int, Buffer], b: Mapping[int, Buffer]) -> bool:
    return a.keys() == b.keys() and all(_same_bytes(entry, b[i]) for i, entry in a.items())


def _same_bytes(a: Buffer, b: Buffer) -> bool:
    return a.nbytes == b.nbytes and bool(np.array_equal(a.raw, b.raw))
