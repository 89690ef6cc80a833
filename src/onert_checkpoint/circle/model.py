"""A small reader of circle models: the tensors and operators a checkpoint entry maps to.

Circle is the flatbuffers model format of Samsung ONE (file identifier ``CIR0``), read here with
the generated bindings of the ``circle-schema`` package. Only the first subgraph is read: both
onert's training compiler and onert-micro's trainer take a single subgraph.

onert's checkpoint entries follow the runtime's own iteration order (see
:mod:`onert_checkpoint.circle.onert_order`); onert-micro's follow the model's tensor indices,
and only some tensors carry data (FORMAT-FACTS section 2, OMCheckpointSaver.cpp).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..format.dtypes import DTYPES
from ..format.errors import error_for
from ..format.source import open_source

__all__ = ["CircleModel", "CircleOperator", "CircleTensor"]


#: Operators whose constant inputs onert-micro trains and saves (OMCheckpointSaver.cpp).
MICRO_TRAINABLE_OPCODES = ("FULLY_CONNECTED", "CONV_2D")

_FILE_IDENTIFIER = b"CIR0"


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class CircleOperator:
    """One operator: its builtin opcode name and tensor indices (-1 marks an omitted input)."""

    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def _mismatch(message: str) -> Exception:
    return error_for("model_mismatch", "model", None, message)


def _opcode_names() -> dict[int, str]:
    from circle_schema.v0_9.circle.BuiltinOperator import BuiltinOperator

    return {v: k for k, v in vars(BuiltinOperator).items() if isinstance(v, int)}


class CircleModel:
    """The tensors and operators of a circle model's first subgraph.

    Build it with :meth:`load`; constant data stay in the source bytes and are returned as
    zero-copy views by :meth:`initial_data`.
    """

    def __init__(
        self,
        tensors: list[CircleTensor],
        operators: list[CircleOperator],
        inputs: tuple[int, ...],
        outputs: tuple[int, ...],
        data: dict[int, memoryview],
        source: bytes,
    ) -> None:
        self.tensors = tensors
        self.operators = operators
        self.inputs = inputs
        self.outputs = outputs
        self._data = data
        self.source = source

    # Loading ------------------------------------------------------------------------------
    @classmethod
    def load(cls, source: str | os.PathLike[str] | bytes | bytearray | memoryview) -> CircleModel:
        """Read a circle model from a path or from its bytes.

        A path is read like a checkpoint's (:func:`~onert_checkpoint.format.source.open_source`):
        only a regular file, checked before a byte is read, so a FIFO or a device raises
        :class:`OSError` naming the path at once instead of blocking or reading forever; a
        missing or unreadable file is an :class:`OSError` too, as for a checkpoint (issue 11,
        items 6 and 12). Raises :class:`~onert_checkpoint.ModelMismatchError` (code
        ``model_mismatch``, field ``model``) when the bytes are not a readable circle model.
        """
        if isinstance(source, (bytes, bytearray, memoryview)):
            raw = bytes(source)
        else:
            view = open_source(source, copy=True)
            raw = bytes(view)
            view.release()
        try:
            return cls._parse(raw)
        except Exception as exc:  # flatbuffers raises anything on garbage
            if getattr(exc, "code", None) == "model_mismatch":
                raise
            raise _mismatch(f"not a readable circle model: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def _parse(cls, raw: bytes) -> CircleModel:
        from circle_schema.v0_9.circle.Model import Model

        if len(raw) < 8 or raw[4:8] != _FILE_IDENTIFIER:
            raise _mismatch("not a circle model (file identifier is not CIR0)")
        model = Model.GetRootAs(raw, 0)
        if model.SubgraphsLength() < 1:
            raise _mismatch("the circle model has no subgraph")
        subgraph = model.Subgraphs(0)
        view = memoryview(raw)
        num_buffers = model.BuffersLength()

        tensors: list[CircleTensor] = []
        data: dict[int, memoryview] = {}
        for i in range(subgraph.TensorsLength()):
            t = subgraph.Tensors(i)
            code = int(t.Type())
            dtype, size = DTYPES.get(code, (f"type{code}", None))
            shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            buf_index = int(t.Buffer())
            if not 0 <= buf_index < num_buffers:
                raise _mismatch(f"tensor {i} names buffer {buf_index} of {num_buffers}")
            blob = cls._buffer_bytes(model.Buffers(buf_index), view, buf_index)
            if blob is not None:
                data[i] = blob
            name = t.Name()
            tensors.append(
                CircleTensor(
                    index=i,
                    name=name.decode("utf-8", "replace") if name else "",
                    dtype=dtype,
                    type_code=code,
                    shape=shape,
                    nbytes=count * size if size is not None and count >= 0 else 0,
                    is_constant=blob is not None,
                )
            )

        names = _opcode_names()
        codes = []
        for k in range(model.OperatorCodesLength()):
            oc = model.OperatorCodes(k)
            # Schema 0.3+: builtin_code; older files only fill deprecated_builtin_code (< 127).
            codes.append(max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode())))
        operators = []
        for k in range(subgraph.OperatorsLength()):
            op = subgraph.Operators(k)
            opcode_index = int(op.OpcodeIndex())
            if not 0 <= opcode_index < len(codes):
                raise _mismatch(f"operator {k} names opcode {opcode_index} of {len(codes)}")
            code = codes[opcode_index]
            inputs = tuple(int(x) for x in op.InputsAsNumpy()) if op.InputsLength() else ()
            outputs = tuple(int(x) for x in op.OutputsAsNumpy()) if op.OutputsLength() else ()
            for x in inputs + outputs:
                if not -1 <= x < len(tensors):
                    raise _mismatch(f"operator {k} names tensor {x} of {len(tensors)}")
            operators.append(CircleOperator(names.get(code, f"BUILTIN_{code}"), inputs, outputs))

        sg_in = tuple(int(x) for x in subgraph.InputsAsNumpy()) if subgraph.InputsLength() else ()
        sg_out = (
            tuple(int(x) for x in subgraph.OutputsAsNumpy()) if subgraph.OutputsLength() else ()
        )
        return cls(tensors, operators, sg_in, sg_out, data, raw)

    @staticmethod
    def _buffer_bytes(buffer: object, view: memoryview, index: int) -> memoryview | None:
        """The bytes of a buffer: inline data, or (files over 2 GiB) an offset/size pair."""
        offset = int(buffer.Offset())  # type: ignore[attr-defined]
        size = int(buffer.Size())  # type: ignore[attr-defined]
        if offset > 1 and size > 0:
            # circle's extended buffers: data after the flatbuffer, offset from file start
            if offset + size > len(view):
                raise _mismatch(f"buffer {index} lies past the end of the model")
            return view[offset : offset + size]
        length = int(buffer.DataLength())  # type: ignore[attr-defined]
        if length == 0:
            return None
        start = buffer._tab.Vector(buffer._tab.Offset(4))  # type: ignore[attr-defined]
        return view[start : start + length]

    # Queries ------------------------------------------------------------------------------
    def initial_data(self, index: int) -> np.ndarray | None:
        """The constant buffer of tensor ``index``, typed and shaped (a read-only view)."""
        tensor = self.tensors[index]
        blob = self._data.get(index)
        if blob is None:
            return None
        try:
            dtype = np.dtype(tensor.dtype)
        except TypeError:
            return np.frombuffer(blob, dtype=np.uint8)
        arr = np.frombuffer(blob, dtype=dtype)
        if tensor.nbytes == len(blob):
            arr = arr.reshape(tensor.shape)
        return arr

    def micro_saved_indices(self, num_train_layers: int = 0) -> list[int]:
        """The tensors onert-micro saves, in the order their data follow each other.

        The saver walks the operators from the last to the first (only the last
        ``num_train_layers`` of them; 0 means all) and appends the constant inputs of
        FULLY_CONNECTED and CONV_2D operators in input order (OMCheckpointSaver.cpp).
        """
        ops = self.operators
        if num_train_layers > 0:
            ops = ops[max(0, len(ops) - num_train_layers) :]
        saved: dict[int, None] = {}  # insertion-ordered, and linear to check (not a list)
        for op in reversed(ops):
            if op.opcode not in MICRO_TRAINABLE_OPCODES:
                continue
            for i in op.inputs:
                if i >= 0 and self.tensors[i].is_constant:
                    saved.setdefault(i)
        return list(saved)


def as_circle_model(model: CircleModel | str | os.PathLike[str] | bytes | bytearray | memoryview
                    ) -> CircleModel:
    """``model`` as a :class:`CircleModel` (read from the path or bytes when it is not one)."""
    return model if isinstance(model, CircleModel) else CircleModel.load(model)
