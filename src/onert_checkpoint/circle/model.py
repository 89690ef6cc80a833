"""A small reader of circle models: the tensors and operators a checkpoint entry maps to.

Read with the ``circle-schema`` bindings; only the first subgraph (both runtimes train one).
Each distinct table, shape, name and operand vector is read once and shared, so a flatbuffer
naming one table from many places costs no more than its size.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..format.dtypes import DTYPES
from ..format.errors import error_for
from ..format.source import open_source
from ..format.typed import little_endian_dtype

__all__ = ["CircleModel", "CircleOperator", "CircleTensor"]


#: Operators whose constant inputs onert-micro trains and saves (OMCheckpointSaver.cpp).
MICRO_TRAINABLE_OPCODES = ("FULLY_CONNECTED", "CONV_2D")

#: The flatbuffer file identifier of a circle model.
FILE_IDENTIFIER = b"CIR0"

#: The most dimensions an ndarray may have (32 before NumPy 2, 64 since).
_MAX_NUMPY_RANK = 64 if int(np.__version__.split(".")[0]) >= 2 else 32


@dataclass(frozen=True, slots=True)
class CircleTensor:
    """One tensor of the model's first subgraph."""

    index: int
    name: str
    #: numpy dtype name ("float32", "int8", ...); circle's TensorType name lowercased when numpy
    #: has no equivalent ("int4", "string", ...)
    dtype: str
    #: circle TensorType code
    type_code: int
    shape: tuple[int, ...]
    #: element count times element size (0 for element types without a whole-byte size)
    nbytes: int
    #: True when the tensor has a non-empty buffer in the model
    is_constant: bool

    @property
    def count(self) -> int:
        """The element count its shape gives (1 for a scalar)."""
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def wrong_size(self, entry: int, nbytes: int) -> Exception:
        """The ``model_mismatch`` of entry ``entry``, whose ``nbytes`` bytes do not fit."""
        return model_mismatch(f"entry {entry} has {nbytes} bytes; tensor {self.index} "
                              f"({self.name!r}, {self.dtype}{list(self.shape)}) needs "
                              f"{self.nbytes}", f"weights[{entry}]")


@dataclass(frozen=True, slots=True)
class CircleOperator:
    """One operator: its builtin opcode name and tensor indices (-1 marks an omitted input)."""

    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def model_mismatch(message: str, field: str | None = "model") -> Exception:
    return error_for("model_mismatch", field, None, message)


def not_representable(field: str | None, message: str) -> Exception:
    return error_for("not_representable", field, None, message)


def has_numpy_dtype(name: str) -> bool:
    return little_endian_dtype(name) is not None


@dataclass(eq=False, repr=False)
class CircleModel:
    """The tensors and operators of a circle model's first subgraph.

    Build it with [`load`][onert_checkpoint.CircleModel.load]; constant data stay in the source
    bytes and are returned as zero-copy views by
    [`initial_data`][onert_checkpoint.CircleModel.initial_data].
    """

    tensors: list[CircleTensor]
    operators: list[CircleOperator]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    _data: dict[int, memoryview]
    source: bytes | memoryview

    def __repr__(self) -> str:
        return (f"CircleModel(tensors={len(self.tensors)}, operators={len(self.operators)}, "
                f"inputs={list(self.inputs)}, outputs={list(self.outputs)}, "
                f"bytes={len(self.source)})")

    @classmethod
    def load(cls, source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> CircleModel:
        """Read a circle model from a path or from its bytes.

        A path is opened like a checkpoint's (`open_source`: anything but a regular file is an
        `OSError` naming it; 64 MiB or more is mapped, as is a view of a mapped file). Raises
        [`ModelMismatchError`][onert_checkpoint.ModelMismatchError] (field ``model``) when the
        bytes are not a readable circle model.
        """
        if not isinstance(source, (bytes, bytearray, memoryview)):
            raw: bytes | memoryview = open_source(source, copy="auto")
        elif isinstance(source, memoryview) and isinstance(source.obj, mmap.mmap):
            raw = source.toreadonly()
        else:
            raw = bytes(source)
        try:
            return cls._parse(raw)
        except Exception as exc:  # flatbuffers raises anything on garbage
            if getattr(exc, "code", None) == "model_mismatch":
                raise
            raise model_mismatch(
                f"not a readable circle model: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def _parse(cls, raw: bytes | memoryview) -> CircleModel:
        from circle_schema.v0_9.circle.BuiltinOperator import BuiltinOperator
        from circle_schema.v0_9.circle.Model import Model

        if len(raw) < 8 or raw[4:8] != FILE_IDENTIFIER:
            raise model_mismatch("not a circle model (file identifier is not CIR0)")
        model = Model.GetRootAs(raw, 0)
        if model.SubgraphsLength() < 1:
            raise model_mismatch("the circle model has no subgraph")
        subgraph = model.Subgraphs(0)
        view = memoryview(raw)
        num_buffers, num_tensors = model.BuffersLength(), subgraph.TensorsLength()
        # read once per distinct position (module doc)
        memo: dict[tuple[str, int], Any] = {}

        def once(kind: str, at: int, make: Callable[..., Any], *args: Any) -> Any:
            if (kind, at) not in memo:
                memo[kind, at] = make(*args)
            return memo[kind, at]

        def vector(table: Any, slot: int, kind: str, make: Callable[[int, int], Any]) -> Any:
            """``make(start, length)`` of the vector (or string) in vtable ``slot``, once per
            position; None when the field is absent."""
            o = table._tab.Offset(slot)
            return None if o == 0 else once(kind, table._tab.Vector(o), make,
                                            table._tab.Vector(o), table._tab.VectorLen(o))

        def ints(at: int, n: int) -> tuple[int, ...]:
            return tuple(np.frombuffer(view, "<i4", n, at).tolist())

        def tensor_fields(t: Any, i: int) -> tuple[str, str, int, tuple[int, ...], int, Any]:
            code = int(t.Type())
            dtype, size = DTYPES.get(code, (f"type{code}", None))
            shape = vector(t, 4, "shape", ints) or ()  # Tensor.shape
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            b = int(t.Buffer())
            if not 0 <= b < num_buffers:
                raise model_mismatch(f"tensor {i} names buffer {b} of {num_buffers}")
            blob = once("buffer", b, cls._buffer_bytes, model.Buffers(b), view, b)
            name = vector(t, 10, "name", lambda at, n: str(view[at : at + n], "utf-8", "replace"))
            nbytes = count * size if size is not None and count >= 0 else 0
            return name or "", dtype, code, shape, nbytes, blob

        def operands(op: Any, slot: int, k: int) -> tuple[int, ...]:
            """An operator's inputs (vtable slot 6) or outputs (8), each vector checked once."""

            def checked(at: int, n: int) -> tuple[int, ...]:
                found = ints(at, n)
                for x in found:
                    if not -1 <= x < num_tensors:
                        raise model_mismatch(f"operator {k} names tensor {x} of {num_tensors}")
                return found

            return vector(op, slot, "operands", checked) or ()

        tensors: list[CircleTensor] = []
        data: dict[int, memoryview] = {}
        for i in range(num_tensors):
            t = subgraph.Tensors(i)
            name, dtype, code, shape, nbytes, blob = once("tensor", t._tab.Pos, tensor_fields, t, i)
            if blob is not None:
                data[i] = blob
            tensors.append(CircleTensor(i, name, dtype, code, shape, nbytes, blob is not None))

        opcode_names = {v: k for k, v in vars(BuiltinOperator).items() if isinstance(v, int)}
        # Schema 0.3+: builtin_code; older files only fill deprecated_builtin_code (< 127).
        codes = [max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
                 for oc in map(model.OperatorCodes, range(model.OperatorCodesLength()))]

        def operator(op: Any, k: int) -> CircleOperator:
            opcode_index = int(op.OpcodeIndex())
            if not 0 <= opcode_index < len(codes):
                raise model_mismatch(f"operator {k} names opcode {opcode_index} of {len(codes)}")
            code = codes[opcode_index]
            return CircleOperator(opcode_names.get(code, f"BUILTIN_{code}"), operands(op, 6, k),
                                  operands(op, 8, k))

        ops = map(subgraph.Operators, range(subgraph.OperatorsLength()))
        operators = [once("operator", op._tab.Pos, operator, op, k) for k, op in enumerate(ops)]
        sg_in = vector(subgraph, 6, "io", ints) or ()  # SubGraph.inputs
        sg_out = vector(subgraph, 8, "io", ints) or ()  # SubGraph.outputs
        return cls(tensors, operators, sg_in, sg_out, data, raw)

    @staticmethod
    def _buffer_bytes(buffer: object, view: memoryview, index: int) -> memoryview | None:
        """The bytes of a buffer: inline data, or (files over 2 GiB) an offset/size pair."""
        offset = int(buffer.Offset())  # type: ignore[attr-defined]
        size = int(buffer.Size())  # type: ignore[attr-defined]
        if offset > 1 and size > 0:
            # circle's extended buffers: data after the flatbuffer, offset from file start
            if offset + size > len(view):
                raise model_mismatch(f"buffer {index} lies past the end of the model")
            return view[offset : offset + size]
        length = int(buffer.DataLength())  # type: ignore[attr-defined]
        if length == 0:
            return None
        start = buffer._tab.Vector(buffer._tab.Offset(4))  # type: ignore[attr-defined]
        return view[start : start + length]

    def initial_data(self, index: int) -> np.ndarray | None:
        """The constant buffer of tensor ``index``, typed and shaped (a read-only view); flat
        when its size disagrees with the shape or NumPy cannot hold that many dimensions."""
        tensor = self.tensors[index]
        blob = self._data.get(index)
        if blob is None:
            return None
        dtype = little_endian_dtype(tensor.dtype)
        if dtype is None:
            return np.frombuffer(blob, dtype=np.uint8)
        arr = np.frombuffer(blob, dtype=dtype)
        if tensor.nbytes == len(blob) and len(tensor.shape) <= _MAX_NUMPY_RANK:
            arr = arr.reshape(tensor.shape)
        return arr

    def micro_saved_indices(self, num_train_layers: int = 0) -> list[int]:
        """The tensors onert-micro saves, in data order: the FULLY_CONNECTED and CONV_2D
        constant inputs of the last ``num_train_layers`` operators (0: all), last operator first
        (OMCheckpointSaver.cpp)."""
        ops = self.operators[-num_train_layers:] if num_train_layers > 0 else self.operators
        return self.trainable_inputs(reversed(ops))

    def trainable_inputs(self, ops: Iterable[CircleOperator] | None = None) -> list[int]:
        """The constant inputs of the FULLY_CONNECTED and CONV_2D operators among ``ops`` (by
        default all, first to last), each once, in the order met."""
        saved: dict[int, None] = {}  # insertion-ordered, and linear to check (not a list)
        for op in self.operators if ops is None else ops:
            if op.opcode in MICRO_TRAINABLE_OPCODES:
                for i in op.inputs:
                    if i >= 0 and self.tensors[i].is_constant:
                        saved.setdefault(i)
        return list(saved)


def as_circle_model(model: CircleModel | str | os.PathLike[str] | bytes | bytearray | memoryview
                    ) -> CircleModel:
    """``model`` as a [`CircleModel`][onert_checkpoint.CircleModel] (read from the path or bytes
    when it is not one)."""
    return model if isinstance(model, CircleModel) else CircleModel.load(model)
