"""Rebuilding a circle model with new buffers, for `bake` and the onert probe's marked model.

Rebuilt with circle-schema's object API (``ModelT``), which unpacks a table once per reference
(`unpack_cost` bounds it first). Large vectors stay where they lie and the output is written
around them in pieces (`_Builder`): a rebuild costs the tables, not the weights.
"""

from __future__ import annotations

import copy
import mmap
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import flatbuffers
import numpy as np

from .model import FILE_IDENTIFIER, CircleModel, not_representable

__all__ = ["rebuild", "unpack_budget", "unpack_cost"]


#: Estimated bytes the object API makes per table, vector element and buffer byte, generous so
#: as to stay above the real cost (measured: a 2,000-dimension shape named 2,000 times peaked
#: at 3x its elements' 4 bytes each over the unpacked arrays).
_TABLE_COST = 1024
_ELEMENT_COST = 24
_DATA_COST = 4


def unpack_budget(model_size: int) -> int:
    """The most `unpack_cost` may estimate for a model of ``model_size`` bytes: the
    bound every command keeps, 64 MiB plus 8 times the input's size."""
    return 64 * 1024 * 1024 + 8 * model_size


def unpack_cost(raw: bytes | memoryview) -> int:
    """The bytes the object API would make from ``raw``, each reference counted as often as it
    occurs (each distinct table read once: linear in the size). Raises ``not_representable``
    when two operators share one options table (whose size this estimate cannot see)."""
    from circle_schema.v0_9.circle.Model import Model

    model = Model.GetRootAs(raw, 0)
    memo: dict[tuple[str, int], int] = {}
    options_seen: set[int] = set()

    def once(kind: str, table: Any, cost: Callable[[Any], int]) -> int:
        key = (kind, table._tab.Pos)
        if key not in memo:
            memo[key] = cost(table)
        return memo[key]

    def vector(table: Any, *names: str) -> int:
        return sum(_ELEMENT_COST * int(getattr(table, f"{n}Length")()) for n in names)

    def each(table: Any, name: str, cost: Callable[[Any], int]) -> int:
        """The tables of the vector ``name``: each distinct one costed once, counted each time."""
        return sum(once(name, getattr(table, name)(i), cost)
                   for i in range(getattr(table, f"{name}Length")()))

    def quantization(q: Any) -> int:
        return _TABLE_COST + vector(q, "Min", "Max", "Scale", "ZeroPoint")

    def tensor(t: Any) -> int:
        q = t.Quantization()
        return (_TABLE_COST + vector(t, "Shape", "ShapeSignature") + len(t.Name() or b"")
                + (0 if q is None else once("quantization", q, quantization))
                + (0 if t.Sparsity() is None else _TABLE_COST))

    def operator(op: Any) -> int:
        options = op.BuiltinOptions()
        if options is not None:
            if options.Pos in options_seen:
                raise not_representable("model", "two operators share one options table (no "
                                        "circle writer does that); baking would unpack it once "
                                        "per operator")
            options_seen.add(options.Pos)
        return 2 * _TABLE_COST + vector(op, "Inputs", "Outputs", "Intermediates",
                                        "MutatingVariableInputs", "CustomOptions")

    def subgraph(sg: Any) -> int:
        return (_TABLE_COST + vector(sg, "Inputs", "Outputs") + len(sg.Name() or b"")
                + each(sg, "Tensors", tensor) + each(sg, "Operators", operator))

    return (_TABLE_COST + len(model.Description() or b"") + each(model, "Subgraphs", subgraph)
            + each(model, "Buffers", lambda b: _TABLE_COST + _DATA_COST * int(b.DataLength()))
            + _TABLE_COST * (model.OperatorCodesLength() + model.MetadataLength()
                             + 4 * model.SignatureDefsLength()))


#: Byte vectors from this size on are left where they lie (`_Builder`); smaller ones are copied.
_IN_PLACE = 4096


class _Builder(flatbuffers.Builder):
    """A Builder writing the tables into an anonymous mapping and leaving each large byte vector
    where it lies (its pages never touched); `pieces` gives the buffer with the vectors in place."""

    def __init__(self, size: int) -> None:
        super().__init__(0)
        self.Bytes: Any = mmap.mmap(-1, max(size, 1))
        self.head = len(self.Bytes)
        self._vectors: list[tuple[int, np.ndarray]] = []  # (offset from the end, bytes)

    def CreateNumpyVector(self, x: np.ndarray) -> int:
        if x.dtype != np.uint8 or x.ndim != 1 or x.size < _IN_PLACE or not x.flags.c_contiguous:
            return int(super().CreateNumpyVector(x))
        self.StartVector(1, x.size, 1)
        self.head -= x.size
        self._vectors.append((self.Offset(), x))
        return int(self.EndVector())

    def GrowByteBuffer(self) -> None:
        old = self.Bytes
        if len(old) >= self.MAX_BUFFER_SIZE:
            super().GrowByteBuffer()  # raises flatbuffers' own error
        self.Bytes = mmap.mmap(-1, min(2 * len(old), self.MAX_BUFFER_SIZE))
        shift = len(self.Bytes) - len(old)
        for start, end in self._written(len(old), self.head):
            self.Bytes[start + shift : end + shift] = old[start:end]
        self.head += shift  # Prep moves its own copy of head by as much
        old.close()

    def _written(self, size: int, head: int) -> Iterator[tuple[int, int]]:
        """The ranges of ``[head, size)`` the builder wrote, between the vectors left out."""
        for at, x in reversed(self._vectors):  # built back to front: the first is last
            yield head, size - at
            head = size - at + x.size
        yield head, size

    def pieces(self) -> Iterator[memoryview]:
        view = memoryview(self.Bytes)
        vectors = [x for _, x in reversed(self._vectors)]
        for k, (start, end) in enumerate(self._written(len(self.Bytes), self.head)):
            yield view[start:end]
            if k < len(vectors):
                yield vectors[k].data


def rebuild(model: CircleModel, kept: dict[int, np.ndarray],
            untie: dict[int, dict[int, np.ndarray]] | None = None) -> _Builder:
    """The model rebuilt with ``kept[tensor index]`` as each tensor's buffer (a buffer other
    tensors read too is split) and, for ``untie[tensor][reader]``, a new tensor for that reader."""
    from circle_schema.v0_9.circle.Model import ModelT

    cost, budget = unpack_cost(model.source), unpack_budget(len(model.source))
    if cost > budget:
        raise not_representable(
            "model", f"the model's flatbuffer names its tables from many places: unpacking it "
            f"to rebuild would make about {cost} bytes of objects from {len(model.source)} "
            f"bytes, over the limit of {budget} (64 MiB + 8x the model's size)")
    obj = ModelT.InitFromPackedBuf(model.source, 0)
    if any(b is not None and (b.offset or 0) > 1 for b in obj.buffers or []):
        raise not_representable("model", "the model keeps its buffers after the flatbuffer "
                                "(files over 2 GiB); baking rebuilds the flatbuffer only")
    subgraph = obj.subgraphs[0]
    buffer_type = type(obj.buffers[0])
    # how many tensors (of every subgraph) read each buffer: a shared buffer is split
    readers = Counter(t.buffer for sg in obj.subgraphs for t in sg.tensors or [])
    num_buffers = len(obj.buffers)

    def new_buffer(data: np.ndarray) -> int:
        buf = buffer_type()
        buf.data = data
        obj.buffers.append(buf)
        return len(obj.buffers) - 1

    for index, data in kept.items():
        tensor = subgraph.tensors[index]
        current = obj.buffers[tensor.buffer].data
        if current is not None and current.data == data.data:  # memoryviews: no temporary
            continue
        if readers[tensor.buffer] == 1:
            obj.buffers[tensor.buffer].data = data
        else:
            readers[tensor.buffer] -= 1
            tensor.buffer = new_buffer(data)
    for index, by_reader in (untie or {}).items():
        for reader, data in by_reader.items():
            if data.data == kept[index].data:
                continue  # this reader reads the kept entry: the tensor itself
            clone = copy.deepcopy(subgraph.tensors[index])
            clone.name = (clone.name or b"") + f"@op{reader}".encode()
            clone.buffer = new_buffer(data)
            subgraph.tensors.append(clone)
            op = subgraph.operators[reader]
            op.inputs = np.where(op.inputs == index, len(subgraph.tensors) - 1, op.inputs)
    added = sum(b.data.nbytes for b in obj.buffers[num_buffers:])
    builder = _Builder(len(model.source) + added + 1024)
    builder.Finish(obj.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return builder
