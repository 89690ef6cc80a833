"""Models and data shared by the onert-micro interop tests (tests/interop/test_micro_*.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import flatbuffers
import numpy as np
from circle_builder import FILE_IDENTIFIER, OpSpec, TensorSpec, build_fc_model, build_model
from circle_schema.v0_9.circle import ActivationFunctionType, Model

from .peer import MicroPeer

__all__ = ["MODELS", "Scenario", "scenario"]


@dataclass(frozen=True)
class Scenario:
    """A float32 FC chain (``widths``), its tensor layout in the circle file, and a batch size."""

    widths: tuple[int, ...]
    seed: int
    layout: str
    batch: int
    batches: int = 3  # the data set holds this many batches
    #: layers with a fused RELU, and layers without a bias (input -1); both empty: a plain chain
    #: from circle_builder.build_fc_model
    relu: tuple[int, ...] = ()
    no_bias: tuple[int, ...] = ()

    @property
    def layers(self) -> int:
        return len(self.widths) - 1

    def model(self) -> bytes:
        if not self.relu and not self.no_bias:
            return build_fc_model(self.widths, seed=self.seed, layout=self.layout, scale=0.3)
        return _mixed_chain(self)

    def data(self, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
        """``batches * batch`` samples: inputs and targets, float32."""
        rng = np.random.default_rng(self.seed * 100 + seed)
        count = self.batch * self.batches
        xs = rng.standard_normal((count, self.widths[0])).astype(np.float32)
        ys = rng.standard_normal((count, self.widths[-1])).astype(np.float32)
        return xs, ys

    def files(self, micro: MicroPeer) -> tuple[Path, tuple[Path, Path]]:
        """The model and the data written into the peer's folder."""
        xs, ys = self.data()
        return micro.file("m.circle", self.model()), (micro.file("x.f32", xs),
                                                      micro.file("y.f32", ys))


def _mixed_chain(sc: Scenario) -> bytes:
    """An FC chain in chain order with fused RELUs and bias-less layers as ``sc`` says."""
    rng = np.random.default_rng(sc.seed)
    tensors = [TensorSpec("input", (1, sc.widths[0]))]
    ops = []
    src = 0
    for k in range(sc.layers):
        n_in, n_out = sc.widths[k], sc.widths[k + 1]
        w = (rng.standard_normal((n_out, n_in)) * 0.3).astype(np.float32)
        tensors.append(TensorSpec(f"w{k}", (n_out, n_in), data=w))
        inputs = (src, len(tensors) - 1)
        if k in sc.no_bias:
            inputs += (-1,)
        else:
            b = (rng.standard_normal(n_out) * 0.3).astype(np.float32)
            tensors.append(TensorSpec(f"b{k}", (n_out,), data=b))
            inputs += (len(tensors) - 1,)
        tensors.append(TensorSpec(f"out{k}", (1, n_out)))
        src = len(tensors) - 1
        ops.append(OpSpec("FULLY_CONNECTED", inputs, (src,)))
    model = Model.ModelT.InitFromObj(Model.Model.GetRootAs(build_model(tensors, ops, [0], [src])))
    for k, op in enumerate(model.subgraphs[0].operators):
        if k in sc.relu:
            op.builtinOptions.fusedActivationFunction = (
                ActivationFunctionType.ActivationFunctionType.RELU)
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


#: 1 to 6 layers; tensors in chain order, constants first, or shuffled; batches of 1, 2 and 3;
#: and a 3-layer chain with RELUs and a layer without bias.
MODELS = {
    "fc1": Scenario((5, 3), 21, "chain", 1),
    "fc2": Scenario((4, 8, 3), 22, "chain", 2),
    "fc3": Scenario((6, 7, 5, 2), 23, "consts_first", 3),
    "fc4": Scenario((3, 9, 4, 6, 2), 24, "shuffled", 1),
    "fc5": Scenario((4, 5, 6, 5, 4, 3), 25, "chain", 2),
    "fc6": Scenario((2, 6, 3, 7, 4, 5, 3), 26, "shuffled", 3),
    "fc3r": Scenario((4, 6, 5, 3), 27, "chain", 2, relu=(0, 1), no_bias=(1,)),
}


def scenario(name: str) -> Scenario:
    return MODELS[name]
