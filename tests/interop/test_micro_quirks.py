"""The quirks of spec/SPEC.md appendices B.2 and B.7, produced by the real onert-micro runtime.

* B.2: with a non-float32 FC weight (int8, float16; float32 input, so the float kernel imports
  it), the runtime saves 4 bytes per element: the tensor's bytes followed by the bytes that
  follow its buffer in the circle file. ``load`` given the model reports the
  ``micro_element_size`` quirk and keeps the entry as raw bytes; the file saves back byte for
  byte, and the runtime loads its own file without changing the model. A float32 FC with a
  non-float32 bias is refused at import (FailedCheckCondition), so only weights show it.
* B.7: two FC layers sharing one weight tensor: the runtime saves the weight twice and its entry
  keeps the second copy. When the first copy opens the block, ``load`` refuses the file
  (``unreferenced_bytes``); when it follows another entry, that entry's derived size absorbs it:
  the file is valid alone and ``model_mismatch`` given the model.
"""

from __future__ import annotations

import numpy as np
import pytest
from circle_builder import OpSpec, TensorSpec, build_model

import onert_checkpoint as oc
from onert_checkpoint.format.errors import CheckpointError


def _code(raw: bytes, model: object = None) -> str:
    try:
        oc.load(raw, model=model)
    except CheckpointError as err:
        return err.code
    return "ok"


def _entries(raw: bytes) -> list[int]:
    n = int.from_bytes(raw[16:20], "little")
    return [int.from_bytes(raw[20 + 4 * i: 24 + 4 * i], "little") for i in range(n)]


@pytest.mark.parametrize("dtype", ["int8", "float16"])
def test_element_size_is_4_bytes_whatever_the_type(micro, dtype: str) -> None:
    rng = np.random.default_rng(5)
    weights = (rng.standard_normal((3, 4)) * 20).astype(dtype)
    bias = rng.standard_normal(3).astype(np.float32)
    raw_model = build_model(
        [TensorSpec("input", (1, 4)), TensorSpec("w", (3, 4), dtype=dtype, data=weights),
         TensorSpec("b", (3,), data=bias), TensorSpec("out", (1, 3))],
        [OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))], [0], [3])
    model = micro.file("m.circle", raw_model)
    ckpt_path = micro.folder / "c.ckpt"
    micro.run(model=model, opt="sgd", save=ckpt_path)
    raw = ckpt_path.read_bytes()
    at = _entries(raw)[1]
    assert _entries(raw)[2] - at == 4 * weights.size  # 4 bytes per element, not 1 or 2
    start = raw_model.find(weights.tobytes())
    assert start > 0
    # the tensor, then whatever follows its buffer in the model file
    assert raw[at: at + 4 * weights.size] == raw_model[start: start + 4 * weights.size]

    ckpt = oc.load(raw, model=model)
    assert "micro_element_size" in ckpt.layout.quirks
    entry = ckpt.get(1)
    assert entry.dtype == dtype and entry.nbytes == 4 * weights.size
    assert entry.data.tobytes()[: weights.nbytes] == weights.tobytes()
    assert oc.to_bytes(ckpt) == raw and oc.to_bytes(oc.load(raw)) == raw
    # the runtime loads its own file back: the model comes out as it went in
    again = micro.folder / "again.circle"
    micro.run(model=model, opt="sgd", load=ckpt_path, save_model=again)
    assert again.read_bytes() == raw_model


def test_non_float32_bias_is_refused_at_import(micro) -> None:
    raw_model = build_model(
        [TensorSpec("input", (1, 4)), TensorSpec("w", (3, 4), data=np.ones((3, 4), np.float32)),
         TensorSpec("b", (3,), dtype="int32", data=np.ones(3, np.int32)),
         TensorSpec("out", (1, 3))],
        [OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))], [0], [3])
    result = micro.run(model=micro.file("m.circle", raw_model), opt="sgd", check=False)
    assert result.returncode == 3 and result.value("import", "status") == 7


def _shared_model(layers: int) -> bytes:
    """``layers`` FC layers of width 4; the first two share the weight tensor ``w0``."""
    rng = np.random.default_rng(layers)
    tensors = [TensorSpec("input", (1, 4))]
    ops = []
    src = 0
    for k in range(layers):
        if k != 1:
            data = (rng.standard_normal((4, 4)) * 0.3).astype(np.float32)
            tensors.append(TensorSpec(f"w{k}", (4, 4), data=data))
        w = 1 if k == 1 else len(tensors) - 1
        bias = (rng.standard_normal(4) * 0.1).astype(np.float32)
        tensors += [TensorSpec(f"b{k}", (4,), data=bias), TensorSpec(f"out{k}", (1, 4))]
        ops.append(OpSpec("FULLY_CONNECTED", (src, w, len(tensors) - 2), (len(tensors) - 1,)))
        src = len(tensors) - 1
    return build_model(tensors, ops, [0], [src])


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize(("layers", "alone", "with_model"), [
    (2, "unreferenced_bytes", "unreferenced_bytes"),  # the first copy opens the block
    (3, "ok", "model_mismatch"),  # the first copy follows the third layer's bias
])
def test_shared_weight_is_saved_twice(micro, kind: str, layers: int, alone: str,
                                      with_model: str) -> None:
    model = micro.file("m.circle", _shared_model(layers))
    rng = np.random.default_rng(0)
    data = (micro.file("x.f32", rng.standard_normal((2, 4)).astype(np.float32)),
            micro.file("y.f32", rng.standard_normal((2, 4)).astype(np.float32)))
    ckpt_path = micro.folder / "c.ckpt"
    micro.run(model=model, opt=kind, data=data, steps=2, save=ckpt_path)
    raw = ckpt_path.read_bytes()
    entries = _entries(raw)
    present = sorted(o for o in entries if o)
    assert len(present) == (layers - 1) + layers  # one entry per tensor: the weight once
    first_data = 20 + 4 * len(entries)
    end = int.from_bytes(raw[4:8], "little") or int.from_bytes(raw[12:16], "little")
    # the weights block holds one 64-byte weight more than the model has
    assert end - first_data == 64 * layers + 16 * layers
    # saved last layer first: with 2 layers the first copy (layer 1's) opens the block, and no
    # entry points there; with 3, layer 2's weight and bias come first
    assert present[0] == first_data + (0 if layers == 3 else 64)
    assert (_code(raw), _code(raw, model)) == (alone, with_model)
    # the runtime reads its own file (the entry names the second copy)
    assert micro.run(model=model, opt=kind, load=ckpt_path).value("load", "status") == 0
