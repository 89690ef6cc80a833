"""The model objects: what a checkpoint holds, free of any file I/O.

A :class:`Checkpoint` holds the weight :class:`Tensor` entries, the :class:`Optimizer` with its
per-slot :class:`Buffer` entries, the :class:`TrainingState`, and what the reader detected about
the file it came from (revision, dialect, table length). Data are NumPy arrays; when loaded from a
file they are read-only views on the mapped file, never copies.
"""

from __future__ import annotations

import math
import operator
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "OPTIMIZER_SLOTS",
    "Buffer",
    "Checkpoint",
    "Optimizer",
    "Section",
    "Tensor",
    "TrainingState",
    "as_bytes_array",
]

#: The state slots of each optimizer kind, in file order (schema 1: opt1 = m, opt2 = v).
OPTIMIZER_SLOTS: dict[str, tuple[str, ...]] = {
    "sgd": (),
    "sgd_momentum": ("momentum",),
    "adam": ("m", "v"),
}


_BY_INDEX = operator.attrgetter("index")


def as_bytes_array(data: object) -> np.ndarray:
    """A flat uint8 view of ``data`` (an array, bytes or any buffer), without copying."""
    if isinstance(data, np.ndarray):
        arr = data if data.flags.c_contiguous else np.ascontiguousarray(data)
        return arr.reshape(-1).view(np.uint8)
    return np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)


@dataclass(eq=False)
class Buffer:
    """The bytes of one offset-table entry in one block (a weight or an optimizer slot).

    ``index`` is the entry's position in its offset table. ``offset`` is where the data was read
    from (None for content built in memory).
    """

    index: int
    data: np.ndarray
    offset: int | None = None

    @property
    def raw(self) -> np.ndarray:
        """The entry's bytes as a flat uint8 array (a view, never a copy)."""
        return as_bytes_array(self.data)

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)

    def crc32(self) -> int:
        """zlib's CRC-32 of the entry's bytes."""
        return zlib.crc32(self.raw) & 0xFFFFFFFF


@dataclass(eq=False, init=False)
class Tensor(Buffer):
    """A weight entry, with what the circle model says of it when a model was given."""

    name: str | None = None
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    model_index: int | None = None

    def __init__(
        self,
        index: int,
        data: np.ndarray,
        offset: int | None = None,
        name: str | None = None,
        dtype: str | None = None,
        shape: tuple[int, ...] | None = None,
        model_index: int | None = None,
    ) -> None:
        # Loaders make one per entry (100,000 for large files): fields left at their default
        # are read from the class, not stored per instance.
        self.index = index
        self.data = data
        self.offset = offset
        if name is not None:
            self.name = name
        if dtype is not None:
            self.dtype = dtype
        if shape is not None:
            self.shape = shape
        if model_index is not None:
            self.model_index = model_index


@dataclass(eq=False)
class Optimizer:
    """The optimizer kind and its state: ``slots[slot_name][entry_index]``."""

    kind: str
    slots: dict[str, dict[int, Buffer]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = OPTIMIZER_SLOTS.get(self.kind)
        if names is not None:
            for name in names:
                self.slots.setdefault(name, {})

    @property
    def slot_names(self) -> tuple[str, ...]:
        return tuple(self.slots)


@dataclass(eq=False)
class Section:
    """A schema-2 section this library does not interpret, kept as it was (spec/SPEC.md, section 6).

    ``required`` is the must-understand flag; ``offset`` is where it was read from.
    """

    kind: int
    data: bytes
    required: bool = False
    offset: int | None = None


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


@dataclass(eq=False)
class Checkpoint(Mapping[object, Tensor]):
    """A training checkpoint: weights, optimizer state and training position.

    It is a read-only mapping from entry index (``ckpt[0]``) or tensor name (``ckpt["fc1/w"]``)
    to :class:`Tensor`; iteration yields the entry indices in table order.

    ``revision`` and ``dialect`` say what the file was (or what :func:`save` writes by default);
    ``num_entries`` is the length of the file's offset tables, which for onert-micro files
    counts every tensor of the model, present or not.
    """

    tensors: list[Tensor] = field(default_factory=list)
    optimizer: Optimizer | None = None
    state: TrainingState = field(default_factory=TrainingState)
    revision: str = "v2"
    dialect: str | None = None
    num_entries: int | None = None
    quirks: tuple[str, ...] = ()
    file_size: int | None = None
    source: object = field(default=None, repr=False)
    #: schema 2: where upgraded content came from (``{"revision", "dialect", "num_entries",
    #: "footerless"}``), so that a downgrade writes the original file back; None otherwise
    origin: dict[str, object] | None = None
    #: schema 2: sections of kinds this library does not interpret, kept for writing back
    sections: list[Section] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.tensors.sort(key=_BY_INDEX)
        if not isinstance(self.state, TrainingState):
            self.state = TrainingState(self.state)

    # Mapping protocol -------------------------------------------------------------------
    def __getitem__(self, key: object) -> Tensor:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            for tensor in self.tensors:
                if tensor.index == key:
                    return tensor
        elif isinstance(key, str):
            for tensor in self.tensors:
                if tensor.name == key:
                    return tensor
        raise KeyError(key)

    def __iter__(self) -> Iterator[object]:
        return iter([t.index for t in self.tensors])

    def __len__(self) -> int:
        return len(self.tensors)

    # Convenience ------------------------------------------------------------------------
    @property
    def table_length(self) -> int:
        """N: ``num_entries`` when known, else one past the highest entry index."""
        if self.num_entries is not None:
            return self.num_entries
        return max((t.index for t in self.tensors), default=-1) + 1

    @property
    def step(self) -> int | None:
        return self.state.step

    @property
    def epoch(self) -> int | None:
        return self.state.epoch

    def slot(self, name: str, key: object) -> Buffer | None:
        """The ``name`` slot entry (``"m"``, ``"v"``) of the tensor at ``key``, if any."""
        if self.optimizer is None:
            return None
        return self.optimizer.slots.get(name, {}).get(self[key].index)

    def content_equal(self, other: Checkpoint) -> bool:
        """True when both hold the same entries, bytes, optimizer state and training state."""
        if [t.index for t in self.tensors] != [t.index for t in other.tensors]:
            return False
        if any(not _same_bytes(a, b) for a, b in zip(self.tensors, other.tensors)):
            return False
        if (self.optimizer is None) != (other.optimizer is None):
            return False
        if self.optimizer is not None and other.optimizer is not None:
            if self.optimizer.kind != other.optimizer.kind:
                return False
            if set(self.optimizer.slots) != set(other.optimizer.slots):
                return False
            for name, entries in self.optimizer.slots.items():
                theirs = other.optimizer.slots[name]
                if set(entries) != set(theirs):
                    return False
                if any(not _same_bytes(entries[i], theirs[i]) for i in entries):
                    return False
        mine, theirs_state = dict(self.state), dict(other.state)
        return mine.keys() == theirs_state.keys() and all(
            _same_value(v, theirs_state[k]) for k, v in mine.items()
        )


def _same_value(a: object, b: object) -> bool:
    """State values are equal when ``==`` says so, and two NaNs are equal (a NaN is a value a
    checkpoint can hold, e.g. a diverged loss)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _same_bytes(a: Buffer, b: Buffer) -> bool:
    return a.nbytes == b.nbytes and bool(np.array_equal(a.raw, b.raw))
