"""Entries as columns: what a reader found, kept as NumPy arrays until an entry is looked at.

One object per entry of a 1M-entry file would cost hundreds of MiB and most of its open time
(tests/invariants/test_memory_bounds.py), so the readers hand over an :class:`EntryTable` per
block (weights, each optimizer slot); :class:`TensorList` and :class:`SlotEntries` make a
:class:`~.model.Tensor` or :class:`~.model.Buffer` the first time it is asked for and keep it.

A pass over every entry keeps none: an entry not made yet is made *floating*, held only through
a weak reference (a few thousand at a time, not 2M). It stays the one object for its entry
while anyone holds it, and the first assignment to a public attribute settles it (held for
good, so no edit is lost).

The bytes are a :class:`DataStore`: the file and its data checks still to run (SPEC 6.5),
run before the first byte is handed out; a failure is raised then and on every later access.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import (
    Callable,
    ItemsView,
    Iterable,
    Iterator,
    MutableMapping,
    MutableSequence,
    ValuesView,
)
from itertools import islice
from typing import Any, Generic, TypeVar, cast, overload

import numpy as np

from .dtypes import DTYPES
from .errors import released_error
from .source import PrivateBytes, file_fingerprint, mapped_file_unchanged, note_checked
from .typed import little_endian_dtype, shaped

#: An entry: model.Buffer or model.Tensor (model.py, which imports this module, says which).
E = TypeVar("E", bound=Any)

__all__ = ["DataStore", "EntryTable", "SlotEntries", "TensorList", "must_verify", "stores_of"]


class DataStore:
    """The file's bytes as one uint8 array, and the checks of them still to run.

    ``verify_data=False`` clears ``enforce``: data are handed out unchecked, but a save still
    runs the checks before it checksums these bytes (:func:`must_verify`).
    """

    __slots__ = ("__weakref__", "_checks", "_enforce", "_error", "_pending", "_ranged", "_typed",
                 "ready", "released", "whole")

    def __init__(self, whole: np.ndarray, pending: Callable[[], None] | None = None,
                 ranged: Callable[[int, int], bool | None] | None = None) -> None:
        self.whole = whole
        #: checks of the bytes [start, end) alone (schema 3's per-block CRCs), so a read costs
        #: what it hands out, not the file's size; True back: nothing is pending any more
        self._ranged = ranged
        self._checks = pending  # kept after they pass: a mapped file may change later
        self._pending = pending
        self._error: Exception | None = None
        self.released = False
        self._enforce = True
        #: not released, no check pending or enforced: what each hand-out tests first
        self.ready = pending is None
        #: ``whole`` seen as one element type from one byte phase (:meth:`typed_whole`)
        self._typed: dict[int, np.ndarray] = {}
        if pending is not None:
            _CHECKED_STORES[id(whole)] = self

    @property
    def verified(self) -> bool:
        """True once nothing is left to check (or nothing was to be checked)."""
        return self._pending is None and self._error is None

    @property
    def enforce(self) -> bool:
        """Whether the pending checks run before a byte is handed out (``verify_data``)."""
        return self._enforce

    @enforce.setter
    def enforce(self, value: bool) -> None:
        self._enforce = value
        self._settle()

    def _settle(self) -> None:
        self.ready = not self.released and (
            not self._enforce or (self._pending is None and self._error is None)
        )

    def checked(self, start: int | None = None, end: int | None = None) -> np.ndarray:
        """``whole``, after the pending checks have passed; with a range and ranged checks,
        after those of [start, end) only, so a failed block condemns itself alone (SPEC 7.4)."""
        if self.released:
            raise released_error()
        if self._enforce and (self._pending is not None or self._error is not None):
            if self._ranged is not None and start is not None:
                if self._ranged(start, start if end is None else end):
                    self._pending = None  # the ranges read have run every check
                    self._settle()
            else:
                self.verify()
        return self.whole

    def typed_whole(self, code: int, dt: np.dtype, phase: int) -> np.ndarray:
        """``whole`` from byte ``phase`` on as elements of ``dt`` (circle type ``code``), once per
        type and phase: an entry's typed array is one slice of it (a fifth of the time of a
        byte slice viewed as ``dt``). Only for bytes :meth:`checked` has handed out."""
        key = code << 8 | phase
        found = self._typed.get(key)
        if found is None:
            whole = self.whole
            count = (whole.size - phase) // dt.itemsize
            found = self._typed[key] = whole[phase : phase + count * dt.itemsize].view(dt)
        return found

    def verify(self, *, again: bool = False) -> None:
        """Run the pending checks now; raise their error (every time, once it has failed).
        ``again=True`` runs the passed checks once more (the bytes may have changed since)."""
        if self.released:
            raise released_error()
        if self._error is not None:
            raise self._error
        pending = self._checks if again else self._pending
        if pending is not None:
            with self._condemned_by_failure():
                pending()
            self._pending = None
            self._settle()

    @contextlib.contextmanager
    def _condemned_by_failure(self) -> Iterator[None]:
        """A check runs in it; its failure condemns the store."""
        try:
            yield
        except Exception as exc:
            self._error = exc
            self.ready = False
            raise

    def release(self) -> None:
        """Forget the file (``open``'s exit): every later access raises ``released``."""
        _CHECKED_STORES.pop(id(self.whole), None)
        self.whole = np.zeros(0, np.uint8)
        self._typed = {}  # they view the file too
        self._pending = self._checks = self._ranged = None
        self._error = None
        self.released = True
        self.ready = False


#: circle type code -> its little-endian NumPy dtype, for NumPy's whole-byte types
_TYPE_OF_CODE: dict[int, np.dtype] = {
    code: dt
    for code, (name, _) in DTYPES.items()
    if (dt := little_endian_dtype(name)) is not None and dt.itemsize > 0
}

#: circle type code -> the element size of its NumPy dtype (0 for the types handed out as bytes)
_SIZE_OF_CODE = [_TYPE_OF_CODE[c].itemsize if c in _TYPE_OF_CODE else 0
                 for c in range(max(_TYPE_OF_CODE) + 1)]

#: id of a store's ``whole`` array -> the store, for the stores with data checks: what bytes
#: copied out of a loaded file still owe a save (:func:`must_verify`).
_CHECKED_STORES: weakref.WeakValueDictionary[int, DataStore] = weakref.WeakValueDictionary()


def stores_of(arrays: Iterable[np.ndarray | None]) -> list[DataStore]:
    """The stores with data checks whose bytes any of ``arrays`` views."""
    if not _CHECKED_STORES:
        return []
    found: dict[int, DataStore] = {}
    last: object = None
    for arr in arrays:
        if arr is None:
            continue
        base = arr.base
        if base is last and base is not None:
            continue  # views of one file share their base: looked up once per run of them
        last = base
        root = arr  # the array that owns the memory: the end of the ``base`` chain
        while isinstance(root.base, np.ndarray):
            root = root.base
        store = _CHECKED_STORES.get(id(root))
        if store is not None and store.whole is root:
            found[id(store)] = store
    return list(found.values())


def must_verify(stores: Iterable[DataStore], read: Callable[[Any], Any]) -> None:
    """Before a write checksums data read from ``stores``: run the checks not run yet
    (``verify_data=False``), and again for bytes that may have changed since (a mapped file
    written since, a writable buffer). Raises the check's error or ``released``. ``read`` reads
    a file's bytes afresh (dispatch.read_view, which this layer does not import)."""
    for store in stores:
        if store.released:
            raise released_error()
        view = store.whole.base
        owner = view.obj if isinstance(view, memoryview) else view
        # unchanged since checked: bytes, a file read into private memory, or a mapped file
        # not written since (its fingerprint)
        stable = isinstance(owner, (bytes, PrivateBytes)) or mapped_file_unchanged(owner)
        if stable and store.verified:
            continue
        seen = file_fingerprint(owner)  # before the check: a later write will differ
        if stable:
            store.verify()
        elif store._checks is not None:  # every check once more, on the bytes as they are now
            with store._condemned_by_failure():
                read(store.whole.data).verify()
        note_checked(owner, seen)


class EntryTable:
    """One block of present entries as columns, rows in ascending entry index.

    ``meta`` (schema 2 tensor records): the ``flags``, ``dtype``, ``rank``, ``dims``,
    ``model_index`` and ``names`` columns. A schema-2 slot table's ``owner`` (the tensor table)
    and ``owner_rows`` type its data like the owner's when the sizes agree.
    """

    __slots__ = ("_cols", "_first_key", "_kinds", "_name_strs", "_tensors", "cls", "home", "keys",
                 "lengths", "meta", "offsets", "owner", "owner_rows", "store")

    def __init__(self, store: DataStore, keys: np.ndarray, offsets: np.ndarray,
                 lengths: np.ndarray, cls: Any, meta: dict[str, Any] | None = None,
                 owner: EntryTable | None = None, owner_rows: np.ndarray | None = None) -> None:
        self.store = store
        self.keys = keys
        self.offsets = offsets
        self.lengths = lengths
        self.cls = cls
        self.meta = meta
        self.owner = owner
        self.owner_rows = owner_rows
        #: the list or mapping whose floating entries this table makes (weak: no cycle)
        self.home: Callable[[], Any] | None = None
        #: keys[0] when the keys are consecutive (row = key - keys[0], no search), -1 when
        #: they are not, None until the first lookup asks
        self._first_key: int | None = None
        self._tensors = hasattr(cls, "model_index")  # a Tensor's table (model.py imports us)
        self._kinds: np.ndarray | None = None  # how each row is typed: :meth:`_typing`
        #: every row's name as text, once the list's name map has decoded them all
        self._name_strs: list[str | None] | None = None
        #: the record columns :meth:`make` reads, taken out of ``meta`` once
        self._cols: tuple[Any, ...] | None = None

    def __len__(self) -> int:
        return int(self.keys.size)

    def clone(self) -> EntryTable:
        """A table of the same columns and bytes for another list (a copy's): its entries are
        new objects, and it keeps the bytes when this table's file is released."""
        return EntryTable(DataStore(self.store.whole), self.keys, self.offsets, self.lengths,
                          self.cls, self.meta, self.owner, self.owner_rows)

    def row_of(self, key: int) -> int | None:
        """The row of entry index ``key`` (arithmetic when the keys are consecutive, else a
        binary search), or None."""
        keys = self.keys
        first = self._first_key
        if first is None:
            consecutive = keys.size > 0 and bool((np.diff(keys) == 1).all())
            first = self._first_key = keys.item(0) if consecutive else -1
        if first >= 0:
            r = key - first
            return r if 0 <= r < keys.size else None
        r = int(np.searchsorted(keys, key))
        return r if r < keys.size and int(keys[r]) == key else None

    def dtype_shape(self, row: int) -> tuple[str | None, tuple[int, ...] | None]:
        meta = self.meta
        if meta is None:  # a slot entry: its tensor's, when the sizes agree
            owner, rows = self.owner, self.owner_rows
            if owner is None or rows is None:
                return None, None
            orow = rows.item(row)
            same = owner.lengths.item(orow) == self.lengths.item(row)
            return owner.dtype_shape(orow) if same else (None, None)
        flags = meta["flags"].item(row)
        dtype = DTYPES[meta["dtype"].item(row)][0] if flags & 1 else None
        if not flags & 2:
            return dtype, None
        rank = meta["rank"].item(row)
        if rank == 1:
            return dtype, (meta["dims"].item(row, 0),)
        return dtype, tuple(meta["dims"][row, :rank].tolist())

    def name(self, row: int) -> str | None:
        names = self.meta["names"] if self.meta is not None else None
        raw = None if names is None else names[row]
        return None if raw is None else raw.decode("utf-8")

    def data(self, row: int) -> np.ndarray:
        """The entry's bytes after the data checks, typed as :func:`~.typed.typed_view` types
        them, by a shorter path (:meth:`DataStore.typed_whole`)."""
        start = self.offsets.item(row)
        end = start + self.lengths.item(row)
        store = self.store
        whole = store.whole if store.ready else store.checked(start, end)
        kinds = self._kinds
        if kinds is None:
            kinds = self._kinds = self._typing()
        kind = kinds.item(row)
        if not kind:
            return whole[start:end]
        code = (kind if kind > 0 else -kind) - 1
        size = _SIZE_OF_CODE[code]
        phase = start % size
        typed = store._typed.get(code << 8 | phase)
        if typed is None:
            typed = store.typed_whole(code, _TYPE_OF_CODE[code], phase)
        arr = typed[(start - phase) // size : (end - phase) // size]
        return arr if kind > 0 else self._shaped(arr, row)

    def _typing(self) -> np.ndarray:
        """Per row, how :meth:`data` types the entry's bytes: 0 as bytes, code + 1 as the
        circle type ``code`` (1-d), -(code + 1) as that type in the record's shape when the
        element count allows (:meth:`_shaped`). One pass over the columns, 2 bytes a row."""
        n = len(self)
        kinds = np.zeros(n, np.int16)
        meta = self.meta
        if meta is None:  # a slot: typed like its tensor when the sizes agree
            owner, rows = self.owner, self.owner_rows
            if owner is not None and rows is not None and n:
                same = owner.lengths[rows] == self.lengths
                if owner._kinds is None:
                    owner._kinds = owner._typing()
                kinds[same] = owner._kinds[rows[same]]
            return kinds
        if not n:
            return kinds
        flags = np.asarray(meta["flags"])
        typed = (flags & 1) != 0
        codes = np.asarray(meta["dtype"])  # int8: compared as they are, no wider copy
        present = np.unique(codes[typed]) if typed.any() else codes[:0]
        for code in present.tolist():
            dt = _TYPE_OF_CODE.get(code)
            if dt is None:  # a circle type NumPy lacks (int4, ...): bytes
                continue
            kinds[typed & (codes == code) & (self.lengths % dt.itemsize == 0)] = code + 1
        shaped = ((flags & 2) != 0) & (np.asarray(meta["rank"]) != 1)
        kinds[shaped] *= -1  # a 1-d view has its one dim already (or keeps flat if it differs)
        return kinds

    def _shaped(self, arr: np.ndarray, row: int) -> np.ndarray:
        """``arr`` in the record's shape, as :func:`~.typed.typed_view` shapes it."""
        meta, trow = self.meta, row
        if meta is None:  # a slot typed like its tensor
            meta, trow = self.owner.meta, self.owner_rows.item(row)  # type: ignore[union-attr]
        assert meta is not None
        return shaped(arr, tuple(meta["dims"][trow, : meta["rank"].item(trow)].tolist()))

    def nbytes(self, row: int) -> int:
        if self.store.released:
            raise released_error(f"entry {int(self.keys[row])}")
        return int(self.lengths[row])

    def make(self, row: int) -> Any:
        """The model object of one row, a tensor held by the list this table serves (``home``),
        made in one frame: this runs once per entry handed out."""
        cls = self.cls
        obj: Any = cls.__new__(cls)
        obj._index = self.keys.item(row)
        obj._data = None
        obj._table = self
        obj._row = row
        obj.offset = self.offsets.item(row)
        if self._tensors:
            obj._owner = self.home
            meta = self.meta
            if meta is None:
                obj._name = obj._dtype = obj.shape = obj.model_index = None
                return obj
            cols = self._cols
            if cols is None:
                cols = self._cols = (
                    meta["names"], meta["flags"], meta["dtype"], meta["rank"], meta["dims"],
                    meta["model_index"],
                )
            names, flags_col, dtype_col, rank_col, dims, model_index = cols
            strs = self._name_strs
            if strs is not None:
                obj._name = strs[row]
            else:
                raw = None if names is None else names[row]
                obj._name = None if raw is None else raw.decode("utf-8")
            flags = flags_col.item(row)
            obj._dtype = DTYPES[dtype_col.item(row)][0] if flags & 1 else None
            if not flags & 2:
                obj.shape = None
            elif (rank := rank_col.item(row)) == 1:
                obj.shape = (dims.item(row, 0),)
            else:
                obj.shape = tuple(dims[row, :rank].tolist())
            obj.model_index = model_index.item(row) if flags & 8 else None
        return obj


#: Rows made per step of a pass over every entry.
_CHUNK = 4096

@functools.cache
def _floating_class(cls: type) -> type:
    """``cls`` whose first public assignment settles the object (:func:`_settle`), back to a
    plain ``cls``; no slot added, so that an object's class can change between the two."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if not name.startswith("_"):
            _settle(self)
        object.__setattr__(self, name, value)

    sub = type(cls.__name__, (cls,), {"__slots__": (), "__setattr__": __setattr__})
    sub.__module__ = cls.__module__
    sub.__qualname__ = cls.__qualname__
    return sub


def _settle(obj: Any) -> None:
    """Make the floating ``obj`` an entry its list or mapping holds (before it is changed)."""
    base = type(obj).__mro__[1]
    table = obj._table
    home = table.home() if table is not None and table.home is not None else None
    if home is not None:
        home._settle(obj)
    object.__setattr__(obj, "__class__", base)


class _Entries(Generic[E]):
    """What :class:`TensorList` and :class:`SlotEntries` share: the entries made (``_items``),
    the table that makes the others, and the floating entries by table row (module doc)."""

    __slots__ = ("__weakref__", "_floating", "_items", "_table")

    _items: list[E | None] | dict[int, E]

    def __init__(self, table: EntryTable | None) -> None:
        self._table = table
        self._floating: weakref.WeakValueDictionary[int, E] = weakref.WeakValueDictionary()
        if table is not None:
            # weak: no cycle, so a dropped checkpoint releases its mapping at once
            table.home = weakref.ref(self)

    def _put(self, row: int, obj: E) -> None:
        """Hold ``obj``, the entry of table row ``row``, from now on."""

    def _held_rows(self, table: EntryTable, start: int, end: int) -> list[E | None]:
        """The entries held of the table's rows ``start..end`` (None: not made, or floating)."""
        raise NotImplementedError

    def _held_floating(self, row: int) -> E | None:
        """The floating entry of ``row`` a caller holds (held here from now on), or None."""
        # no lookup when there is none: each miss of a WeakValueDictionary raises a KeyError
        obj = self._floating.get(row) if self._floating.data else None  # type: ignore[attr-defined]
        if obj is not None:
            _settle(obj)
        return obj

    def _settle(self, obj: E) -> None:
        """A floating entry is about to change: held here from now on."""
        row = obj._row
        if self._table is not None and self._floating.get(row) is obj:
            del self._floating[row]
            self._put(row, obj)

    def _unfloat(self, table: EntryTable) -> None:
        """Before every entry is made: the floating ones still held elsewhere held here."""
        for row, obj in list(self._floating.items()):
            object.__setattr__(obj, "__class__", table.cls)
            self._put(row, obj)
        self._floating.clear()

    def _chunks(self) -> Iterator[tuple[int, list[E] | None]]:
        """(first row, its chunk's entries, those not made yet made floating) in row order;
        ``(row, None)`` and the end if a change of structure drops the table meanwhile."""
        table = self._table
        assert table is not None
        floating = self._floating
        cls = _floating_class(table.cls)
        for start in range(0, len(table), _CHUNK):
            if self._table is not table:
                yield start, None
                return
            chunk = self._held_rows(table, start, start + _CHUNK)
            for j, obj in enumerate(chunk):
                if obj is None:
                    obj = chunk[j] = floating.get(start + j)  # held here for this chunk
                if obj is None:
                    obj = chunk[j] = table.make(start + j)
                    object.__setattr__(obj, "__class__", cls)
                    floating[start + j] = obj
            yield start, cast(list[E], chunk)

    def made(self) -> list[E]:
        """The entries made so far, floating ones still held elsewhere included."""
        items = self._items.values() if isinstance(self._items, dict) else self._items
        return [t for t in items if t is not None] + list(self._floating.values())


class TensorList(_Entries[E], MutableSequence[E]):
    """The weight entries of a checkpoint, in entry-index order: a list whose items are made
    on first access (from an :class:`EntryTable`) and which finds an entry by index or by name
    without a scan. Any change of its structure first makes every item (a plain list after
    that); renaming or re-indexing a tensor keeps its lookups current.
    """

    __slots__ = ("_by_index", "_by_name", "_dups", "_ref", "_renumbered")

    _items: list[E | None]

    def __init__(self, items: Iterable[E] | None = None, table: EntryTable | None = None):
        super().__init__(table)
        self._ref = weakref.ref(self)  # what each tensor holds (``_owner``), as table.home
        if table is not None:
            self._items = [None] * len(table)
        else:
            self._items = list(items) if items is not None else []
            for t in self._items:
                t._owner = self._ref  # type: ignore[union-attr]
        self._by_index: dict[int, int] | None = None
        self._by_name: dict[str, int] | None = None
        self._dups: frozenset[str] = frozenset()
        self._renumbered = False

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> E: ...
    @overload
    def __getitem__(self, i: slice) -> list[E]: ...
    def __getitem__(self, i: int | slice) -> E | list[E]:
        if isinstance(i, slice):
            return [self._at(k) for k in range(*i.indices(len(self._items)))]
        item = self._items[i]
        if item is None:
            return self._at(i if i >= 0 else i + len(self._items))
        return item

    def _at(self, k: int) -> E:
        item = self._items[k]
        if item is None:
            assert self._table is not None
            # the hot path of ``ckpt[name]``: no call while there is no floating entry at all
            item = self._held_floating(k) if self._floating.data else None  # type: ignore[attr-defined]
            if item is None:  # a TensorList's table makes Tensors, owned by it
                item = self._items[k] = self._table.make(k)
        return item

    def _put(self, row: int, obj: E) -> None:
        self._items[row] = obj

    def _held_rows(self, table: EntryTable, start: int, end: int) -> list[E | None]:
        return self._items[start:end]

    def __iter__(self) -> Iterator[E]:
        if self._table is not None and None in self._items:
            return self._iter_floating()
        return iter(self._items)  # type: ignore[arg-type]

    def _iter_floating(self) -> Iterator[E]:
        for start, chunk in self._chunks():
            if chunk is None:  # a change of structure meanwhile: plain items from here on
                yield from islice(self._items, start, None)
            else:
                yield from chunk

    def materialize(self) -> list[E]:
        """Make every item; return them as a list."""
        table = self._table
        if table is not None:
            self._unfloat(table)
            items = self._items
            for k, t in enumerate(items):
                if t is None:
                    items[k] = table.make(k)
        return self._items  # type: ignore[return-value]

    def copied(self, copy: Callable[[E], E]) -> TensorList[E]:
        """A list of ``copy`` of each item, the empty untouched ones made from the same columns
        when first asked for; the pending data checks run as a copy of each would run them."""
        table = self._table
        if table is None or self._renumbered:
            return TensorList([copy(t) for t in self])
        items = self._items
        made = np.fromiter((t is not None for t in items), bool, len(items))
        eager = np.flatnonzero(made | (table.lengths > 0)).tolist()
        out: TensorList[E] = TensorList(table=table.clone())
        # no lookup when there is none: each miss of a WeakValueDictionary raises a KeyError
        floating: MutableMapping[int, E] = self._floating if self._floating.data else {}  # type: ignore[attr-defined]
        for k in eager:
            held = items[k] or floating.get(k)
            out._items[k] = t = copy(held if held is not None else table.make(k))
            t._owner = out._ref
        lazy = np.flatnonzero(~made & (table.lengths == 0)) if not table.store.ready else ()
        for k in lazy:  # what a copy of each reads: the checks it would run, until none is left
            if table.store.ready:
                break
            table.data(int(k))
        return out

    def indices(self) -> list[int]:
        """Every item's entry index, in list order, without making the items."""
        table = self._table
        if table is not None and not self._renumbered:
            return table.keys.tolist()
        return [self._key_of(pos, "index") for pos in range(len(self._items))]

    def names(self) -> list[str | None]:
        """Every item's name, in list order, without making the items."""
        items, table = self._items, self._table
        raw = None if table is None or table.meta is None else table.meta["names"]
        if raw is None:
            return [None if t is None else t.name for t in items]
        return [
            (None if b is None else b.decode("utf-8")) if t is None else t.name
            for t, b in zip(items, raw)
        ]

    def _structural(self) -> None:
        """Before a change of structure: every item made, the columns and lookups dropped."""
        self.materialize()
        self._table = None
        self._by_index = self._by_name = None
        self._renumbered = True

    def __setitem__(self, i: Any, value: Any) -> None:
        self._structural()
        self._items[i] = value
        for t in value if isinstance(i, slice) else (value,):
            t._owner = self._ref

    def __delitem__(self, i: int | slice) -> None:
        self._structural()
        del self._items[i]

    def insert(self, i: int, value: E) -> None:
        at_end = i >= len(self._items)
        by_index, by_name = self._by_index, self._by_name
        self._structural()
        self._items.insert(i, value)
        value._owner = self._ref
        if at_end:  # appending keeps the lookups (building a list one by one stays linear)
            pos = len(self._items) - 1
            for attr, table in (("index", by_index), ("name", by_name)):
                if table is None:
                    continue
                key = getattr(value, attr)
                if key in table:
                    self._dups = self._dups | {attr}
                elif key is not None:
                    table[key] = pos
            self._by_index, self._by_name = by_index, by_name

    def sort(self, *, key: Callable[[E], Any] | None = None, reverse: bool = False) -> None:
        self._structural()
        self._items.sort(key=key, reverse=reverse)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, TensorList)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        n = len(self)
        shown = [repr(self[k]) for k in (range(n) if n <= _SHOWN else (0, 1, 2, n - 1))]
        return _summary("[", shown, "]", n, "tensors")

    def copy(self) -> list[E]:
        return list(self)

    __copy__ = copy

    # By index: the table's sorted keys until a tensor is re-indexed, then a dict. By name: a
    # dict built on the first lookup. Kept current on a rename or re-index, rebuilt after a
    # structural change.
    def _key_of(self, pos: int, attr: str) -> Any:
        t = self._items[pos]
        if t is not None:
            return getattr(t, attr)
        table = self._table
        assert table is not None
        return table.keys.item(pos) if attr == "index" else table.name(pos)

    def _build(self, attr: str) -> dict[Any, int]:
        out: dict[Any, int] = {}
        dups = False
        # every key at once (the columns read in one pass, not one lookup per position)
        keys: list[Any] = self.names() if attr == "name" else self.indices()
        if attr == "name" and self._table is not None:
            self._table._name_strs = keys  # a row's position is its row while the table holds
        for pos, key in enumerate(keys):
            if key is None:
                continue
            if key in out:
                dups = True
            else:
                out[key] = pos
        self._dups = self._dups | {attr} if dups else self._dups - {attr}
        return out

    def position_of_index(self, key: int) -> int | None:
        """The position of the tensor whose entry index is ``key`` (O(log n) or O(1))."""
        if self._by_index is None:
            if self._table is not None and not self._renumbered:
                return self._table.row_of(key)
            self._by_index = self._build("index")
        return self._by_index.get(key)

    def position_of_name(self, name: str) -> int | None:
        """The position of the first tensor named ``name`` (O(1) after one linear pass)."""
        if self._by_name is None:
            self._by_name = self._build("name")
        return self._by_name.get(name)

    def _changed(self, tensor: E, attr: str, old: Any, new: Any) -> None:
        """``tensor`` (held here) changed its index or name from ``old`` to ``new``."""
        if attr == "index" and self._by_index is None and self._table is not None:
            self._renumbered = True  # the columns no longer say where every index is
            return
        table = self._by_index if attr == "index" else self._by_name
        if table is None:
            return
        pos = table.get(old) if old is not None else None
        if pos is None or self._items[pos] is not tensor or attr in self._dups:
            # duplicate keys, or a tensor also held elsewhere: rebuilt when next asked
            if attr == "index":
                self._by_index = None
                self._renumbered = True
            else:
                self._by_name = None
            return
        del table[old]
        if new is not None:
            if new in table:
                self._dups = self._dups | {attr}
                table[new] = min(table[new], pos)
            else:
                table[new] = pos


#: a repr lists up to this many entries; a longer one its first three, "...", and its last
_SHOWN = 6


def _summary(opening: str, shown: list[str], closing: str, count: int, what: str) -> str:
    if count <= _SHOWN:
        return opening + ", ".join(shown) + closing
    return f"{opening}{', '.join(shown[:3])}, ..., {shown[-1]}{closing} ({count} {what})"


class SlotEntries(_Entries[E], MutableMapping[int, E]):
    """One optimizer slot's entries by entry index, made on first access from an
    :class:`EntryTable`; any change first makes every entry (a plain dict after that)."""

    __slots__ = ()

    _items: dict[int, E]

    def __init__(self, table: EntryTable) -> None:
        super().__init__(table)
        self._items = {}

    def __len__(self) -> int:
        return len(self._table) if self._table is not None else len(self._items)

    def get(self, key: int, default: Any = None) -> Any:
        # Mapping.get without its extra calls (Checkpoint.slot's hot path)
        item = self._items.get(key)
        if item is not None:
            return item
        table = self._table
        if table is not None and type(key) is int and not self._floating.data:  # type: ignore[attr-defined]
            first = table._first_key  # row_of's arithmetic, when the keys are consecutive
            if first is not None and first >= 0 and 0 <= key - first < table.keys.size:
                row: int | None = key - first
            else:
                row = table.row_of(key)
            if row is None:
                return default
            item = self._items[key] = table.make(row)
            return item
        try:
            return self[key]
        except KeyError:
            return default

    def _row(self, key: object) -> int | None:
        """The table row of entry index ``key``, or None (no table, or no such entry)."""
        table = self._table
        if table is None or isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            return None
        return table.row_of(int(key))

    def __getitem__(self, key: int) -> E:
        item = self._items.get(key)
        if item is not None:
            return item
        row = self._row(key)
        if row is None:
            raise KeyError(key)
        item = self._held_floating(row)
        if item is None:
            item = self._items[int(key)] = self._table.make(row)  # type: ignore[union-attr]
        return item

    def _put(self, row: int, obj: E) -> None:
        assert self._table is not None
        self._items[self._table.keys.item(row)] = obj

    def _held_rows(self, table: EntryTable, start: int, end: int) -> list[E | None]:
        return [self._items.get(k) for k in table.keys[start:end].tolist()]

    def _items_floating(self) -> Iterator[tuple[int, E]]:
        """(entry index, entry) of every entry in table order, those not made yet floating."""
        table = self._table
        if table is None:
            yield from self._items.items()
            return
        for start, chunk in self._chunks():
            keys = table.keys[start : None if chunk is None else start + len(chunk)].tolist()
            if chunk is None:  # changed meanwhile: a plain dict from here on
                yield from ((k, self._items[k]) for k in keys if k in self._items)
            else:
                yield from zip(keys, chunk)

    def __contains__(self, key: object) -> bool:
        return key in self._items or self._row(key) is not None

    def __iter__(self) -> Iterator[int]:
        if self._table is not None:
            return iter(self._table.keys.tolist())
        return iter(self._items)

    def materialize(self) -> dict[int, E]:
        table = self._table
        if table is not None:
            self._unfloat(table)
            made = self._items
            keys = table.keys.tolist()
            self._items = {k: made[k] if k in made else table.make(r) for r, k in enumerate(keys)}
            self._table = None
        return self._items

    def values(self) -> ValuesView[E]:
        return self._items.values() if self._table is None else _FloatingValues(self)

    def items(self) -> ItemsView[int, E]:
        return self._items.items() if self._table is None else _FloatingItems(self)

    def __setitem__(self, key: int, value: E) -> None:
        self.materialize()[key] = value

    def __delitem__(self, key: int) -> None:
        del self.materialize()[key]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, SlotEntries)):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        keys = list(self.keys())
        if len(keys) > _SHOWN:
            keys = [*keys[:3], keys[-1]]
        shown = [f"{k}: {self[k]!r}" for k in keys]
        return _summary("{", shown, "}", len(self), "entries")


class _FloatingValues(ValuesView[E]):
    """``SlotEntries.values()`` of a loaded slot: a pass that keeps no entry (module doc)."""

    _mapping: SlotEntries

    def __iter__(self) -> Iterator[E]:
        return (v for _, v in self._mapping._items_floating())


class _FloatingItems(ItemsView[int, E]):
    """``SlotEntries.items()`` of a loaded slot: a pass that keeps no entry (module doc)."""

    _mapping: SlotEntries

    def __iter__(self) -> Iterator[tuple[int, E]]:
        return self._mapping._items_floating()
