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
(`onert_checkpoint.tools.stats`), so a comparison holds a few MiB whatever the files.

Every step is linear in the entry count (dictionaries, never a search of the tensor list).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..format.model import Buffer, Checkpoint, Tensor
from .jsonout import json_value
from .stats import CHUNK, entry_values

__all__ = ["CheckpointDiff", "EntryDiff", "diff"]


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


@dataclass
class CheckpointDiff:
    """The result of [`diff`][onert_checkpoint.diff]: per-entry rows, and what else differs (state,
    facts)."""

    entries: list[EntryDiff] = field(default_factory=list)
    #: key -> (value in a, value in b), for training state and optimizer kind
    state: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: informational: revision, dialect, table length (files may differ here and still be equal)
    facts: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    paired_by: str = "index"
    #: the training state is reported, but does not make the files different
    ignore_state: bool = False

    @property
    def equal(self) -> bool:
        return (self.ignore_state or not self.state) and all(e.ok for e in self.entries)

    def __repr__(self) -> str:
        """One line: the verdict, the entries counted by status (each row is in
        ``entries``), what else differs."""
        counts: dict[str, int] = {}
        for e in self.entries:
            counts[e.status] = counts.get(e.status, 0) + 1
        by_status = ", ".join(f"{n} {status}" for status, n in counts.items())
        parts = [f"equal={self.equal}", f"entries={len(self.entries)} ({by_status or 'none'})"]
        parts += [f"{k}={v[0]!r}->{v[1]!r}" for k, v in {**self.state, **self.facts}.items()]
        return f"CheckpointDiff({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """The comparison as strict JSON values (non-finite floats and bytes written as in
        spec/TOOLKIT.md section 1, see `onert_checkpoint.tools.jsonout`)."""
        return json_value({
            "equal": self.equal,
            "paired_by": self.paired_by,
            "entries": [e.__dict__ for e in self.entries],
            "state": {k: list(v) for k, v in self.state.items()},
            "facts": {k: list(v) for k, v in self.facts.items()},
            "ignore_state": self.ignore_state,
        })


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

    def ratio(self, other: _SumSq) -> float:
        """sqrt(self / other)."""
        if self.inf or not other.scale:
            return float("inf")
        if not self.scale:
            return 0.0
        with np.errstate(over="ignore"):
            return float(self.scale / other.scale * np.sqrt(self.sum / other.sum))


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
        if not (self.sq_a.scale or self.sq_a.inf):
            return 0.0 if not (self.sq_delta.scale or self.sq_delta.inf) else float("inf")
        if self.sq_a.inf:
            return float("inf") if self.sq_delta.inf else 0.0
        return self.sq_delta.ratio(self.sq_a)


def _same_bytes(ra: np.ndarray, rb: np.ndarray) -> bool:
    # Small entries (most of a many-entry file): one bytes compare beats array_equal's setup;
    # large ones a MiB at a time (array_equal of a whole entry makes an entry-sized mask).
    if ra.nbytes <= 4096:
        return ra.tobytes() == rb.tobytes()
    step = 1 << 20
    return all(np.array_equal(ra[i : i + step], rb[i : i + step])
               for i in range(0, ra.nbytes, step))


def _compare(
    key: str, slot: str, a: Buffer | None, b: Buffer | None, dtype: str | None,
    atol: float, rtol: float, unlike: str | None = None,
) -> EntryDiff:
    if a is None or b is None:
        status = "only_b" if a is None else "only_a"
        return EntryDiff(
            key, slot, status, None if a is None else a.nbytes, None if b is None else b.nbytes
        )
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
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return "int", value
    if isinstance(value, str):
        return "string", value
    return type(value).__name__, repr(value)


def same_state_value(a: object, b: object) -> bool:
    """True when two training-state values have the same type and encoding (NaN included)."""
    return _encoding(a) == _encoding(b)


def _unlike(a: Tensor | None, b: Tensor | None) -> str | None:
    """``dtype`` or ``shape`` when both tensors state it and they differ: the same bytes read
    as two dtypes are not the same values, nor the same values in two shapes the same tensor."""
    for fact in ("dtype", "shape"):
        fa, fb = (getattr(t, fact) if t is not None else None for t in (a, b))
        if fa is not None and fb is not None and str(fa) != str(fb):
            return fact
    return None


def _uniquely_named(ckpt: Checkpoint) -> bool:
    names = [t.name for t in ckpt.tensors]
    return all(names) and len(set(names)) == len(names)


def diff(
    a: Checkpoint, b: Checkpoint, *, atol: float = 0.0, rtol: float = 0.0,
    ignore_state: bool = False, progress: Callable[[int], object] | None = None,
) -> CheckpointDiff:
    """Compare ``a`` and ``b`` entry by entry and slot by slot (``ignore_state``: a training
    state that differs, a step or an epoch, is reported but leaves the files equal;
    ``progress``, if given, is called with the bytes of A and B each comparison read).

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

    def keyed(ckpt: Checkpoint) -> dict[str, Tensor]:
        return {(str(t.name) if named else str(t.index)): t for t in ckpt.tensors}

    ka, kb = keyed(a), keyed(b)
    order = list(ka) + [k for k in kb if k not in ka]
    slots_a = a.optimizer.slots if a.optimizer is not None else {}
    slots_b = b.optimizer.slots if b.optimizer is not None else {}
    slot_names = list(slots_a) + [s for s in slots_b if s not in slots_a]
    for key in order:
        ta, tb = ka.get(key), kb.get(key)
        dtype = (ta.dtype if ta is not None else None) or (tb.dtype if tb is not None else None)
        unlike = _unlike(ta, tb)
        pairs: list[tuple[str, Buffer | None, Buffer | None]] = [("weights", ta, tb)]
        for slot in slot_names:
            ea = slots_a.get(slot, {}).get(ta.index) if ta is not None else None
            eb = slots_b.get(slot, {}).get(tb.index) if tb is not None else None
            if ea is not None or eb is not None:
                pairs.append((slot, ea, eb))
        for slot, ea, eb in pairs:
            out.entries.append(_compare(key, slot, ea, eb, dtype, atol, rtol, unlike))
            if progress is not None:
                progress(sum(buf.nbytes for buf in (ea, eb) if buf is not None))
    kind_a = a.optimizer.kind if a.optimizer is not None else None
    kind_b = b.optimizer.kind if b.optimizer is not None else None
    if kind_a != kind_b:
        out.state["optimizer"] = (kind_a, kind_b)
    for key in list(a.state) + [k for k in b.state if k not in a.state]:
        va, vb = a.state.get(key), b.state.get(key)
        if key not in a.state or key not in b.state or not same_state_value(va, vb):
            out.state[key] = (va, vb)
    for fact in ("revision", "dialect", "table_length"):
        fa, fb = getattr(a, fact), getattr(b, fact)
        if fa != fb:
            out.facts[fact] = (fa, fb)
    return out
