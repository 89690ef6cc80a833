"""Re-export the checkpoints of this folder with the real onert runtime (``onert`` 0.1.0).

    python tests/data/real-onert/regenerate.py            # rewrite the files listed in RECIPES
    python tests/data/real-onert/regenerate.py --check    # exit 1 if a fresh export differs

Every file is deterministic: the model is built by tests/interop/circle_builder.py from a fixed
seed, the training data come from a fixed numpy seed, and the learning rate, batch size and
epoch count are fixed. Each checkpoint sits next to the ``.circle`` model it was trained from.

fc2.circle, fc2-sgd-step8.ckpt and fc2-adam-step8.ckpt come from the shared reference folder
(../shared/reference/ next to the repository; made by hand with the same runtime: 2 epochs of 4
steps); this script does not produce them.

Weights and Adam's m and v are results of float32 arithmetic in the runtime's kernels; another
CPU may round a last bit differently, so ``--check`` compares the layout (header, tables,
footer) exactly and the data to a relative 1e-5.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "interop"))

from circle_builder import build_fc_model  # noqa: E402
from onert_peer import TrainPeer  # noqa: E402


@dataclass(frozen=True)
class Recipe:
    """One exported checkpoint: which model, optimizer and training produce it."""

    model: str  # a key of MODELS
    kind: str  # "sgd" or "adam"
    epochs: int = 3
    samples: int = 4  # batch size 1: one step per sample
    learning_rate: float = 0.01
    data_seed: int = 7

    @property
    def step(self) -> int:
        return self.epochs * self.samples

    @property
    def filename(self) -> str:
        return f"{self.model}-{self.kind}-step{self.step}.ckpt"


#: model name -> (widths, seed) of build_fc_model. fc3 has six distinct sizes and onert's
#: scrambled entry order (tensors 8, 7, 5, 4, 2, 1); fc3sq's three weights share one size and
#: its three biases another, so only the order (not the sizes) says which entry is which.
MODELS: dict[str, tuple[tuple[int, ...], int]] = {
    "fc3": ((6, 7, 5, 2), 3),
    "fc3sq": ((3, 3, 3, 3), 33),
}

RECIPES = (
    Recipe("fc3", "sgd"),
    Recipe("fc3", "adam"),
    Recipe("fc3sq", "adam"),
)


def model_bytes(name: str) -> bytes:
    widths, seed = MODELS[name]
    return build_fc_model(widths, seed=seed)


def training_data(recipe: Recipe) -> tuple[np.ndarray, np.ndarray]:
    widths, _ = MODELS[recipe.model]
    rng = np.random.default_rng(recipe.data_seed)
    xs = rng.standard_normal((recipe.samples, widths[0])).astype(np.float32)
    ys = rng.standard_normal((recipe.samples, widths[-1])).astype(np.float32)
    return xs, ys


def export(recipe: Recipe) -> bytes:
    """Train ``recipe`` with onert in a scratch folder and return the exported checkpoint."""
    with tempfile.TemporaryDirectory(prefix="ockpt-regen-") as tmp:
        peer = TrainPeer(
            tmp, model_bytes(recipe.model), recipe.kind, learning_rate=recipe.learning_rate
        )
        xs, ys = training_data(recipe)
        peer.train([xs], [ys], epochs=recipe.epochs)
        return peer.export()


def generate() -> dict[str, bytes]:
    """Every file this script owns: models and checkpoints, by file name."""
    out = {f"{name}.circle": model_bytes(name) for name in MODELS}
    for recipe in RECIPES:
        out[recipe.filename] = export(recipe)
    return out


def same_export(a: bytes, b: bytes) -> bool:
    """Equal layout, and data equal to a relative 1e-5 (see the module docstring)."""
    if len(a) != len(b) or a[:20] != b[:20] or a[-8:] != b[-8:]:
        return False
    import onert_checkpoint as oc

    ca, cb = oc.load(a), oc.load(b)
    if [t.offset for t in ca.tensors] != [t.offset for t in cb.tensors]:
        return False
    pairs = [(x.raw, y.raw) for x, y in zip(ca.tensors, cb.tensors)]
    if ca.optimizer is not None and cb.optimizer is not None:
        for slot, entries in ca.optimizer.slots.items():
            theirs = cb.optimizer.slots[slot]
            if [e.offset for e in entries.values()] != [e.offset for e in theirs.values()]:
                return False
            pairs += [(entries[i].raw, theirs[i].raw) for i in entries]
    return all(
        np.allclose(x.view("<f4"), y.view("<f4"), rtol=1e-5, atol=1e-7) for x, y in pairs
    )


def main(argv: list[str]) -> int:
    check = "--check" in argv
    status = 0
    for name, data in generate().items():
        path = HERE / name
        if check:
            old = path.read_bytes() if path.exists() else b""
            ok = old == data or (name.endswith(".ckpt") and same_export(old, data))
            print(f"{name}: {'ok' if ok else 'DIFFERS'}")
            status |= not ok
        else:
            path.write_bytes(data)
            print(f"wrote {path} ({len(data)} bytes)")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
