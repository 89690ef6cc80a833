"""Comparing two checkpoints value by value, across revisions and dialects.

Entries are paired by name when both checkpoints have named entries (a model was bound) and by
entry index otherwise. Values are compared as the tensor's dtype when known, else as float32
when the size allows it, else byte for byte; "equal within tolerance" is NumPy's ``isclose``
(``|a - b| <= atol + rtol * |b|``, NaN equal to NaN). Identical bytes are always equal, so a
file equals itself whatever it holds (NaN weights included). Where exactly one side is NaN the
difference is infinite. Training-state values are equal when they have the same type and the
same encoding (a float compares bit for bit, so a NaN learning rate equals itself);
``ignore_state=True`` reports them without letting them make the files different.

How much an entry moved, from A to B: ``changed`` (how many of its ``elements`` differ), the
relative L2 change ``rel_l2`` = ||B - A|| / ||A|| (0 where both are zero, infinite where only
A is; NaN values of A are left out of ||A||), the mean absolute change ``mean_abs``, and the
largest absolute and relative differences. Values are compared a chunk at a time
(`onert_checkpoint.tools.stats`), each file's tensors made and dropped in one pass: linear in
the entry count, a comparison holds a few MiB and its rows as columns (`EntryDiffs`).
"""

from __future__ import annotations

import struct
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from ..format.model import Buffer, Checkpoint, Tensor
from .jsonout import json_pieces, json_value
from .stats import CHUNK, entry_values

__all__ = ["CheckpointDiff", "EntryDiff", "EntryDiffs", "diff"]


@dataclass(frozen=True)
class EntryDiff:
    """One weight or slot entry: ``status`` is ``equal``, ``close``, ``differs``, ``size``
    (different sizes), ``dtype`` or ``shape`` (the tensor's dtype or shape differs: values
    not compared), ``only_a`` or ``only_b``."""

    key: str
    slot: str  # "weights", "m", "v", ...
    status: str
    nbytes_a: int | None
    nbytes_b: int | None
    max_abs: float | None = None
    max_rel: float | None = None
    elements: int | None = None
    changed: int | None = None
    rel_l2: float | None = None
    mean_abs: float | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("equal", "close")

    def __repr__(self) -> str:
        shown = [f"{f}={v!r}" for f, v in vars(self).items()
                 if v is not None and f not in ("key", "slot", "status")]
        head = [repr(self.key), repr(self.slot), repr(self.status)]
        return f"EntryDiff({', '.join(head + shown)})"


#: every status, in the order of their codes (equal and close first: the rows that are ``ok``)
_STATUSES = ("equal", "close", "differs", "size", "dtype", "shape", "only_a", "only_b")


class EntryDiffs(Sequence[EntryDiff]):
    """The rows of a comparison, kept as columns (about 80 bytes a row, no object per entry
    however many the files hold); an `EntryDiff` is made when a row is read."""

    def __init__(self) -> None:
        #: each row's entry index, or (as soon as a row has one) its tensor name
        self._keys: array[int] | list[object] = array("q")
        self._slots: dict[str, int] = {}
        self._slot, self._status = array("I"), array("B")
        self._ints, self._floats = array("q"), array("d")  # 4 a row each; -1: None

    def append(self, key: object, e: EntryDiff) -> None:
        if isinstance(self._keys, array) and type(key) is not int:
            self._keys = list(self._keys)
        self._keys.append(key)  # type: ignore[arg-type]
        self._slot.append(self._slots.setdefault(e.slot, len(self._slots)))
        self._status.append(_STATUSES.index(e.status))
        self._ints.extend(-1 if v is None else v
                          for v in (e.nbytes_a, e.nbytes_b, e.elements, e.changed))
        self._floats.extend(v or 0.0 for v in (e.max_abs, e.max_rel, e.rel_l2, e.mean_abs))

    @overload
    def __getitem__(self, i: int) -> EntryDiff: ...
    @overload
    def __getitem__(self, i: slice) -> list[EntryDiff]: ...
    def __getitem__(self, i: int | slice) -> EntryDiff | list[EntryDiff]:
        at = range(len(self))[i]
        if isinstance(at, range):
            return [self[k] for k in at]
        a, b, n, changed = (None if v < 0 else v for v in self._ints[4 * at : 4 * at + 4])
        figures = self._floats[4 * at : 4 * at + 4] if n is not None else (None,) * 4
        return EntryDiff(str(self._keys[at]), list(self._slots)[self._slot[at]],
                         _STATUSES[self._status[at]], a, b, figures[0], figures[1], n, changed,
                         figures[2], figures[3])

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[EntryDiff]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:  # as the list of rows it stands for
        if isinstance(other, (list, EntryDiffs)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EntryDiffs({len(self)} rows: {self.counts()})"

    def ok(self) -> bool:
        """Every row equal or close."""
        return max(self._status, default=0) <= 1

    def counts(self) -> dict[str, int]:
        """Rows by status, in the order each status first occurs."""
        return {_STATUSES[code]: n for code, n in Counter(self._status).items()}


@dataclass
class CheckpointDiff:
    """The result of [`diff`][onert_checkpoint.diff]: per-entry rows, and what else differs (state,
    facts)."""

    entries: EntryDiffs = field(default_factory=EntryDiffs)
    #: key -> (value in a, value in b), for training state and optimizer kind
    state: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: informational: revision, dialect, table length (files may differ here and still be equal)
    facts: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    paired_by: str = "index"
    #: the training state is reported, but does not make the files different
    ignore_state: bool = False

    @property
    def equal(self) -> bool:
        return (self.ignore_state or not self.state) and self.entries.ok()

    def __repr__(self) -> str:
        """One line: the verdict, the entries counted by status (each row is in
        ``entries``), what else differs."""
        by_status = ", ".join(f"{n} {status}" for status, n in self.entries.counts().items())
        parts = [f"equal={self.equal}", f"entries={len(self.entries)} ({by_status or 'none'})"]
        parts += [f"{k}={v[0]!r}->{v[1]!r}" for k, v in {**self.state, **self.facts}.items()]
        return f"CheckpointDiff({', '.join(parts)})"

    def _fields(self, entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
        return {"equal": self.equal, "paired_by": self.paired_by, "entries": entries,
                "state": {k: list(v) for k, v in self.state.items()},
                "facts": {k: list(v) for k, v in self.facts.items()},
                "ignore_state": self.ignore_state}

    def to_dict(self) -> dict[str, Any]:
        """The comparison as strict JSON values (non-finite floats and bytes written as in
        spec/TOOLKIT.md section 1, see `onert_checkpoint.tools.jsonout`)."""
        return json_value(self._fields([e.__dict__ for e in self.entries]))

    def json_pieces(self, **extra: object) -> Iterator[str]:
        """The JSON text of ``to_dict()`` (and ``extra`` keys after it) in pieces, a row at
        a time: written without being held whole."""
        return json_pieces({**self._fields(e.__dict__ for e in self.entries), **extra})


class _SumSq:
    """A sum of squares kept as ``scale`` and the sum of (|x| / scale)**2, so that it neither
    overflows nor underflows whatever the float64 values (the way LAPACK's dnrm2 does it);
    NaN values are left out, an infinite one makes the norm infinite."""

    def __init__(self) -> None:
        self.scale = self.sum = 0.0
        self.inf = False

    def add(self, x: np.ndarray) -> None:
        x = np.abs(x[~np.isnan(x)])
        top = float(x.max()) if x.size else 0.0
        if top == np.inf:
            self.inf = True
        elif top > 0:
            if top > self.scale:
                self.sum *= (self.scale / top) ** 2
                self.scale = top
            y = x / self.scale
            self.sum += float(np.dot(y, y))


class _Distance:
    """The running figures of one comparison, fed a chunk of both sides at a time."""

    def __init__(self) -> None:
        self.max_abs = self.max_rel = self.mean_abs = 0.0
        self.sq_delta, self.sq_a = _SumSq(), _SumSq()
        self.changed = self.elements = 0
        self.close = True

    def add(self, va: np.ndarray, vb: np.ndarray, atol: float, rtol: float) -> None:
        wide = np.complex128 if va.dtype.kind == "c" else np.float64
        xa, xb = va.astype(wide), vb.astype(wide)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            same = (xa == xb) | (np.isnan(xa) & np.isnan(xb))
            delta = np.where(same, 0.0, np.abs(xa - xb))
            # One side NaN (or inf - inf of one sign against the other): infinitely apart.
            delta = np.where(np.isnan(delta), np.inf, delta)
            rel = np.where(delta == 0, 0.0, delta / np.maximum(np.abs(xb), np.finfo(float).tiny))
            rel = np.where(np.isnan(rel), np.inf, rel)
            self.close &= bool(np.all(np.isclose(xa, xb, rtol=rtol, atol=atol, equal_nan=True)))
        self.sq_delta.add(delta)
        self.sq_a.add(xa)
        self.changed += int(delta.size - np.count_nonzero(same))
        self.elements += int(delta.size)
        if delta.size:
            top = float(delta.max())
            # the chunk's mean, by a power of two that no sum of its values overflows at
            shift = 2.0 ** max(0, int(np.frexp(top)[1]) - 500) if top < np.inf else 1.0
            part = float(np.mean(delta / shift)) * shift
            self.mean_abs += (part - self.mean_abs) * (delta.size / self.elements)
            self.max_abs = max(self.max_abs, top)
            self.max_rel = max(self.max_rel, float(rel.max()))

    def rel_l2(self) -> float:
        d, a = self.sq_delta, self.sq_a
        if a.inf:
            return float("inf") if d.inf else 0.0
        if not (d.scale or d.inf):
            return 0.0
        if d.inf or not a.scale:
            return float("inf")
        with np.errstate(over="ignore"):
            return float(d.scale / a.scale * np.sqrt(d.sum / a.sum))


def _same_bytes(ra: np.ndarray, rb: np.ndarray) -> bool:
    # Small entries (most of a many-entry file): one bytes compare beats array_equal's setup;
    # large ones a MiB at a time (array_equal of a whole entry makes an entry-sized mask).
    if ra.nbytes <= 4096:
        return ra.tobytes() == rb.tobytes()
    step = 1 << 20
    return all(np.array_equal(ra[i : i + step], rb[i : i + step])
               for i in range(0, ra.nbytes, step))


def _compare(key: str, slot: str, a: Buffer | None, b: Buffer | None, dtype: str | None,
             atol: float, rtol: float, unlike: str | None = None) -> EntryDiff:
    if a is None or b is None:
        return EntryDiff(key, slot, "only_b" if a is None else "only_a",
                         None if a is None else a.nbytes, None if b is None else b.nbytes)
    if a.nbytes != b.nbytes or unlike is not None:
        return EntryDiff(key, slot, "size" if a.nbytes != b.nbytes else str(unlike),
                         a.nbytes, b.nbytes)
    if a.data is b.data or _same_bytes(a.raw, b.raw):
        va = entry_values(a, dtype)
        return EntryDiff(key, slot, "equal", a.nbytes, b.nbytes, 0.0, 0.0, va.size, 0, 0.0, 0.0)
    va, vb = entry_values(a, dtype), entry_values(b, dtype)
    if va.dtype.kind in "fciu":
        d = _Distance()
        for start in range(0, va.size, CHUNK):
            d.add(va[start : start + CHUNK], vb[start : start + CHUNK], atol, rtol)
        return EntryDiff(key, slot, "close" if d.close else "differs", a.nbytes, b.nbytes,
                         d.max_abs, d.max_rel, d.elements, d.changed, d.rel_l2(),
                         d.mean_abs)
    return EntryDiff(key, slot, "differs", a.nbytes, b.nbytes)


def _encoding(value: object) -> tuple[str, object]:
    """A state value as (type, exact encoding): floats by their IEEE-754 bits."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes", bytes(value)
    if isinstance(value, float):
        return "float", struct.pack("<d", value)
    for kind, name in ((bool, "bool"), (int, "int"), (str, "string")):
        if isinstance(value, kind):
            return name, value
    return type(value).__name__, repr(value)


def _unlike(a: Tensor | None, b: Tensor | None) -> str | None:
    """``dtype`` or ``shape`` when both tensors state it and they differ: the same bytes read
    as two dtypes are not the same values, nor the same values in two shapes the same tensor."""
    for fact in ("dtype", "shape"):
        fa, fb = (getattr(t, fact) if t is not None else None for t in (a, b))
        if fa is not None and fb is not None and str(fa) != str(fb):
            return fact
    return None


def _uniquely_named(ckpt: Checkpoint) -> bool:
    names = ckpt.tensors.names()
    return all(names) and len(set(names)) == len(names)


class _Cursor:
    """One side's entries, in one pass of its own order: (number, entry) pairs that ascend in a
    loaded file (tensors by position, slot entries by entry index). An entry asked for in that
    order is taken from the pass (made, compared and dropped: no object per entry is kept),
    any other is looked up (the lookup keeps what it makes, as ``ckpt[key]`` does)."""

    def __init__(self, pairs: Iterable[tuple[int, Any]], lookup: Callable[[int], Any]) -> None:
        self._pairs, self._lookup = iter(pairs), lookup
        self._at = next(self._pairs, None)

    def take(self, number: int) -> Any:
        while self._at is not None and self._at[0] < number:
            self._at = next(self._pairs, None)
        if self._at is not None and self._at[0] == number:
            return self._at[1]
        return self._lookup(number)


def diff(a: Checkpoint, b: Checkpoint, *, atol: float = 0.0, rtol: float = 0.0,
         ignore_state: bool = False, progress: Callable[[int], object] | None = None
         ) -> CheckpointDiff:
    """Compare ``a`` and ``b`` entry by entry and slot by slot (``ignore_state``: a training
    state that differs, a step or an epoch, is reported but leaves the files equal;
    ``progress``, if given, is called with the bytes of A and B each comparison read).

    The rows come in A's order, then those only B has in B's; with an entry index held by two
    tensors of one side, its first tensor is compared.

    For example, the Adam and the SGD checkpoint of the same model:

        >>> import onert_checkpoint as oc
        >>> a = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> b = oc.load("tests/data/real-onert/fc2-sgd-step8.ckpt")
        >>> d = oc.diff(a, b)
        >>> d.equal, d.state
        (False, {'optimizer': ('adam', 'sgd')})
        >>> [(e.key, e.slot, e.status) for e in d.entries][:3]
        [('0', 'weights', 'differs'), ('0', 'm', 'only_a'), ('0', 'v', 'only_a')]
    """
    named = _uniquely_named(a) and _uniquely_named(b)
    out = CheckpointDiff(paired_by="name" if named else "index", ignore_state=ignore_state)
    slots_a, slots_b = (c.optimizer.slots if c.optimizer is not None else {} for c in (a, b))
    slot_names = list(slots_a) + [s for s in slots_b if s not in slots_a]

    def position(ckpt: Checkpoint, key: Any) -> int | None:
        return (ckpt.tensors.position_of_name if named else ckpt.tensors.position_of_index)(key)

    def cursors(slots: dict[str, Any]) -> dict[str, _Cursor]:
        return {s: _Cursor(entries.items(), entries.get) for s, entries in slots.items()}

    def compare(key: Any, ta: Tensor | None, tb: Tensor | None) -> None:
        dtype = (ta.dtype if ta is not None else None) or (tb.dtype if tb is not None else None)
        unlike = _unlike(ta, tb)
        pairs: list[tuple[str, Buffer | None, Buffer | None]] = [("weights", ta, tb)]
        for slot in slot_names:
            ea = on_a[slot].take(ta.index) if ta is not None and slot in on_a else None
            eb = on_b[slot].take(tb.index) if tb is not None and slot in on_b else None
            if ea is not None or eb is not None:
                pairs.append((slot, ea, eb))
        for slot, ea, eb in pairs:
            out.entries.append(key, _compare(str(key), slot, ea, eb, dtype, atol, rtol, unlike))
            if progress is not None:
                progress(sum(buf.nbytes for buf in (ea, eb) if buf is not None))

    # A's tensors in one pass, B's followed in step (the same order when the files list the
    # same tensors), then B's own in a second pass
    on_a, on_b = cursors(slots_a), cursors(slots_b)
    b_tensors = _Cursor(enumerate(b.tensors), b.tensors.__getitem__)
    for pos, ta in enumerate(a.tensors):
        key = ta.name if named else ta.index
        if position(a, key) == pos:
            at_b = position(b, key)
            compare(key, ta, None if at_b is None else b_tensors.take(at_b))
    on_b = cursors(slots_b)
    for pos, tb in enumerate(b.tensors):
        key = tb.name if named else tb.index
        if position(a, key) is None and position(b, key) == pos:
            compare(key, None, tb)
    kind_a, kind_b = (c.optimizer.kind if c.optimizer is not None else None for c in (a, b))
    if kind_a != kind_b:
        out.state["optimizer"] = (kind_a, kind_b)
    for key in list(a.state) + [k for k in b.state if k not in a.state]:
        va, vb = a.state.get(key), b.state.get(key)
        if key not in a.state or key not in b.state or _encoding(va) != _encoding(vb):
            out.state[key] = (va, vb)
    for fact in ("revision", "dialect", "table_length"):
        fa, fb = getattr(a, fact), getattr(b, fact)
        if fa != fb:
            out.facts[fact] = (fa, fb)
    return out
