"""Models and data shared by the onert-micro interop tests (tests/interop/test_micro_*.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from circle_builder import build_fc_model

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

    @property
    def layers(self) -> int:
        return len(self.widths) - 1

    def model(self) -> bytes:
        return build_fc_model(self.widths, seed=self.seed, layout=self.layout, scale=0.3)

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


#: 1 to 6 layers; tensors in chain order, constants first, or shuffled; batches of 1, 2 and 3.
MODELS = {
    "fc1": Scenario((5, 3), 21, "chain", 1),
    "fc2": Scenario((4, 8, 3), 22, "chain", 2),
    "fc3": Scenario((6, 7, 5, 2), 23, "consts_first", 3),
    "fc4": Scenario((3, 9, 4, 6, 2), 24, "shuffled", 1),
    "fc5": Scenario((4, 5, 6, 5, 4, 3), 25, "chain", 2),
    "fc6": Scenario((2, 6, 3, 7, 4, 5, 3), 26, "shuffled", 3),
}


def scenario(name: str) -> Scenario:
    return MODELS[name]
