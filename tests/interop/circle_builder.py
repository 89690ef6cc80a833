"""Build small circle models in memory, for interop tests with the onert runtimes.

Models are written with the flatbuffers object API of the ``circle-schema`` package (schema
0.9): one subgraph, buffer 0 empty by convention (as the circle exporters write it), one buffer
per constant tensor, file identifier ``CIR0``. Nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import flatbuffers
import numpy as np
from circle_schema.v0_9.circle import (
    ActivationFunctionType,
    Buffer,
    BuiltinOperator,
    BuiltinOptions,
    FullyConnectedOptions,
    Model,
    Operator,
    OperatorCode,
    ReshapeOptions,
    SubGraph,
    Tensor,
    TensorType,
)

__all__ = [
    "FILE_IDENTIFIER",
    "OpSpec",
    "TensorSpec",
    "build_conv_chain_model",
    "build_fc_model",
    "build_model",
    "build_shared_fc_model",
    "fc_layout",
    "operator_options",
]

FILE_IDENTIFIER = b"CIR0"

_TENSOR_TYPES = {
    "float32": TensorType.TensorType.FLOAT32,
    "float16": TensorType.TensorType.FLOAT16,
    "int32": TensorType.TensorType.INT32,
    "int8": TensorType.TensorType.INT8,
    "uint8": TensorType.TensorType.UINT8,
    "int64": TensorType.TensorType.INT64,
}


@dataclass
class TensorSpec:
    """One tensor: ``data`` given makes it a constant with its own buffer."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    data: np.ndarray | None = None


@dataclass
class OpSpec:
    """One operator: ``opcode`` is a BuiltinOperator name such as ``"FULLY_CONNECTED"``."""

    opcode: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    new_shape: tuple[int, ...] | None = None  # RESHAPE only
    #: builtin options of other operators: ``(BuiltinOptions type code, options T object)``
    #: (see :func:`operator_options`)
    options: tuple[int, object] | None = None


def build_model(
    tensors: Sequence[TensorSpec],
    operators: Sequence[OpSpec],
    inputs: Sequence[int],
    outputs: Sequence[int],
) -> bytes:
    """Serialize one subgraph of ``tensors`` and ``operators`` as a circle model."""
    buffers = [Buffer.BufferT()]  # buffer 0: the conventional empty buffer
    tensor_objs = []
    for spec in tensors:
        t = Tensor.TensorT()
        t.name = spec.name
        t.shape = np.asarray(spec.shape, dtype=np.int32)
        t.type = _TENSOR_TYPES[spec.dtype]
        t.buffer = 0
        if spec.data is not None:
            data = np.ascontiguousarray(spec.data, dtype=spec.dtype)
            if data.shape != tuple(spec.shape):
                raise ValueError(f"{spec.name}: data shape {data.shape} != {spec.shape}")
            buf = Buffer.BufferT()
            buf.data = data.reshape(-1).view(np.uint8)
            t.buffer = len(buffers)
            buffers.append(buf)
        tensor_objs.append(t)

    opcode_names: list[str] = []
    op_objs = []
    for spec in operators:
        if spec.opcode not in opcode_names:
            opcode_names.append(spec.opcode)
        op = Operator.OperatorT()
        op.opcodeIndex = opcode_names.index(spec.opcode)
        op.inputs = np.asarray(spec.inputs, dtype=np.int32)
        op.outputs = np.asarray(spec.outputs, dtype=np.int32)
        if spec.opcode == "FULLY_CONNECTED":
            opts = FullyConnectedOptions.FullyConnectedOptionsT()
            opts.fusedActivationFunction = ActivationFunctionType.ActivationFunctionType.NONE
            op.builtinOptionsType = BuiltinOptions.BuiltinOptions.FullyConnectedOptions
            op.builtinOptions = opts
        elif spec.options is not None:
            op.builtinOptionsType, op.builtinOptions = spec.options
        elif spec.opcode == "RESHAPE":
            opts = ReshapeOptions.ReshapeOptionsT()
            opts.newShape = np.asarray(spec.new_shape or (), dtype=np.int32)
            op.builtinOptionsType = BuiltinOptions.BuiltinOptions.ReshapeOptions
            op.builtinOptions = opts
        op_objs.append(op)

    codes = []
    for name in opcode_names:
        code = OperatorCode.OperatorCodeT()
        value = getattr(BuiltinOperator.BuiltinOperator, name)
        code.builtinCode = value
        code.deprecatedBuiltinCode = min(value, 127)
        code.version = 1
        codes.append(code)

    subgraph = SubGraph.SubGraphT()
    subgraph.tensors = tensor_objs
    subgraph.operators = op_objs
    subgraph.inputs = np.asarray(inputs, dtype=np.int32)
    subgraph.outputs = np.asarray(outputs, dtype=np.int32)
    subgraph.name = "main"

    model = Model.ModelT()
    model.version = 0
    model.operatorCodes = codes
    model.subgraphs = [subgraph]
    model.buffers = buffers
    model.description = "onert-checkpoint test model"

    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def fc_layout(num_layers: int, layout: str, rng: np.random.Generator) -> list[int]:
    """Circle index of each tensor of an FC chain, given in chain order.

    Chain order is: input, then per layer weights, bias, output. ``"chain"`` keeps that order
    (constants at 1,2, 4,5, ...); ``"consts_first"`` puts every constant before the activations;
    ``"shuffled"`` draws a random permutation.
    """
    count = 1 + 3 * num_layers
    if layout == "chain":
        return list(range(count))
    if layout == "consts_first":
        consts = [c for layer in range(num_layers) for c in (1 + 3 * layer, 2 + 3 * layer)]
        acts = [0] + [3 + 3 * layer for layer in range(num_layers)]
        order = consts + acts
        return [order.index(i) for i in range(count)]
    if layout == "shuffled":
        return [int(i) for i in rng.permutation(count)]
    raise ValueError(f"unknown layout {layout!r}")


def build_fc_model(
    widths: Sequence[int],
    seed: int = 0,
    *,
    layout: str = "chain",
    scale: float = 0.1,
) -> bytes:
    """A chain of ``len(widths) - 1`` float32 FULLY_CONNECTED layers with bias.

    Layer k maps ``widths[k]`` to ``widths[k + 1]`` features (batch 1); its weights are
    ``[widths[k + 1], widths[k]]`` and its bias ``[widths[k + 1]]``, drawn from ``seed``.
    Tensor names are ``input``, ``w{k}``, ``b{k}``, ``out{k}``; ``layout`` places them (see
    :func:`fc_layout`).
    """
    if len(widths) < 2:
        raise ValueError("need at least an input and an output width")
    rng = np.random.default_rng(seed)
    num_layers = len(widths) - 1
    chain: list[TensorSpec] = [TensorSpec("input", (1, widths[0]))]
    for k in range(num_layers):
        n_in, n_out = widths[k], widths[k + 1]
        w = (rng.standard_normal((n_out, n_in)) * scale).astype(np.float32)
        b = (rng.standard_normal((n_out,)) * scale).astype(np.float32)
        chain += [
            TensorSpec(f"w{k}", (n_out, n_in), data=w),
            TensorSpec(f"b{k}", (n_out,), data=b),
            TensorSpec(f"out{k}", (1, n_out)),
        ]
    where = fc_layout(num_layers, layout, rng)
    tensors: list[TensorSpec | None] = [None] * len(chain)
    for pos, spec in enumerate(chain):
        tensors[where[pos]] = spec
    ops = []
    for k in range(num_layers):
        src = where[3 * k]  # the input, or the previous layer's output
        ops.append(
            OpSpec(
                "FULLY_CONNECTED",
                (src, where[3 * k + 1], where[3 * k + 2]),
                (where[3 * k + 3],),
            )
        )
    return build_model(
        [t for t in tensors if t is not None], ops, [where[0]], [where[3 * num_layers]]
    )


def build_shared_fc_model(
    width: int, sources: Sequence[tuple[int, int]], seed: int = 0, *, scale: float = 0.3
) -> bytes:
    """A chain of ``width -> width`` FULLY_CONNECTED layers that may share constants.

    Layer k reads the weights of layer ``sources[k][0]`` and the bias of layer
    ``sources[k][1]`` (each at most k; k means its own). Tensors are ``input``, then per layer
    its own ``w{k}`` and ``b{k}`` when it has them and ``out{k}``, in that order.
    """
    rng = np.random.default_rng(seed)
    tensors = [TensorSpec("input", (1, width))]
    own_w: dict[int, int] = {}
    own_b: dict[int, int] = {}
    ops = []
    prev = 0
    for k, (ws, bs) in enumerate(sources):
        if not (0 <= ws <= k and 0 <= bs <= k):
            raise ValueError(f"layer {k} can only read its own or an earlier layer's constants")
        if ws == k:
            w = (rng.standard_normal((width, width)) * scale).astype(np.float32)
            tensors.append(TensorSpec(f"w{k}", (width, width), data=w))
            own_w[k] = len(tensors) - 1
        if bs == k:
            b = (rng.standard_normal((width,)) * scale).astype(np.float32)
            tensors.append(TensorSpec(f"b{k}", (width,), data=b))
            own_b[k] = len(tensors) - 1
        if ws not in own_w or bs not in own_b:
            raise ValueError(f"layer {k} reads a layer that shares rather than owns")
        tensors.append(TensorSpec(f"out{k}", (1, width)))
        ops.append(OpSpec("FULLY_CONNECTED", (prev, own_w[ws], own_b[bs]), (len(tensors) - 1,)))
        prev = len(tensors) - 1
    return build_model(tensors, ops, [0], [prev])


def operator_options(opcode: str, **fields: object) -> tuple[int, object]:
    """Builtin options for ``opcode`` (CONV_2D, DEPTHWISE_CONV_2D, pools, ADD, ...), defaults
    as the circle exporters write them (stride 1, filter 1x1, VALID padding) unless ``fields``
    say."""
    from circle_schema.v0_9.circle import (
        AddOptions,
        Conv2DOptions,
        DepthwiseConv2DOptions,
        MulOptions,
        Padding,
        Pool2DOptions,
        SubOptions,
    )

    kinds = {
        "CONV_2D": (BuiltinOptions.BuiltinOptions.Conv2DOptions, Conv2DOptions.Conv2DOptionsT),
        "DEPTHWISE_CONV_2D": (
            BuiltinOptions.BuiltinOptions.DepthwiseConv2DOptions,
            DepthwiseConv2DOptions.DepthwiseConv2DOptionsT,
        ),
        "MAX_POOL_2D": (BuiltinOptions.BuiltinOptions.Pool2DOptions, Pool2DOptions.Pool2DOptionsT),
        "AVERAGE_POOL_2D": (
            BuiltinOptions.BuiltinOptions.Pool2DOptions,
            Pool2DOptions.Pool2DOptionsT,
        ),
        "ADD": (BuiltinOptions.BuiltinOptions.AddOptions, AddOptions.AddOptionsT),
        "SUB": (BuiltinOptions.BuiltinOptions.SubOptions, SubOptions.SubOptionsT),
        "MUL": (BuiltinOptions.BuiltinOptions.MulOptions, MulOptions.MulOptionsT),
    }
    code, cls = kinds[opcode]
    obj = cls()
    if hasattr(obj, "padding"):
        obj.padding = Padding.Padding.VALID  # the schema's default, 0, is SAME
    for name in ("strideW", "strideH", "depthMultiplier", "filterWidth", "filterHeight"):
        if hasattr(obj, name):
            setattr(obj, name, 1)
    for name, value in fields.items():
        if not hasattr(obj, name):
            raise ValueError(f"{opcode} options have no field {name!r}")
        setattr(obj, name, value)
    return code, obj


def build_conv_chain_model(layers: Sequence[str], seed: int = 0, shuffle: bool = False) -> bytes:
    """A chain on a [1, 1, 1, 2] activation: "conv" (kernel [2,1,1,2], bias [2]), "dw" (kernel
    [1,1,1,2], bias [2]), "fc" (after a RESHAPE to [1, 2]: weights [2, 2], bias [2]); every
    constant is 16 or 8 bytes, RESHAPE's int32 shape too, so sizes cannot tell them apart."""
    rng = np.random.default_rng(seed)

    def const(name: str, shape: tuple[int, ...]) -> TensorSpec:
        return TensorSpec(name, shape, data=(rng.standard_normal(shape) * 0.5).astype(np.float32))

    tensors: list[TensorSpec] = [TensorSpec("x", (1, 1, 1, 2))]
    ops: list[tuple[str, list[int], int]] = []
    prev, flat = 0, False
    for k, kind in enumerate(layers):
        def add(spec: TensorSpec) -> int:
            tensors.append(spec)
            return len(tensors) - 1
        if kind == "fc":
            if not flat:
                s = add(TensorSpec(f"shape{k}", (2,), "int32", data=np.array([1, 2], np.int32)))
                out = add(TensorSpec(f"flat{k}", (1, 2)))
                ops.append(("RESHAPE", [prev, s], out))
                prev, flat = out, True
            w = add(const(f"w{k}", (2, 2)))
            b = add(const(f"b{k}", (2,)))
            out = add(TensorSpec(f"out{k}", (1, 2)))
            ops.append(("FULLY_CONNECTED", [prev, w, b], out))
        else:
            if flat:
                raise ValueError("conv layers come before fc layers")
            shape = (2, 1, 1, 2) if kind == "conv" else (1, 1, 1, 2)
            w = add(const(f"k{k}", shape))
            b = add(const(f"b{k}", (2,)))
            out = add(TensorSpec(f"out{k}", (1, 1, 1, 2)))
            ops.append(("CONV_2D" if kind == "conv" else "DEPTHWISE_CONV_2D", [prev, w, b], out))
        prev = out
    perm = list(range(len(tensors)))
    if shuffle:
        np.random.default_rng(seed + 1).shuffle(perm)
    where = {old: new for new, old in enumerate(perm)}
    placed = [tensors[old] for old in perm]
    specs = []
    for opcode, ins, out in ops:
        options = None if opcode in ("RESHAPE", "FULLY_CONNECTED") else operator_options(opcode)
        specs.append(OpSpec(opcode, tuple(where[i] for i in ins), (where[out],),
                            new_shape=(1, 2) if opcode == "RESHAPE" else None, options=options))
    return build_model(placed, specs, [where[0]], [where[prev]])
