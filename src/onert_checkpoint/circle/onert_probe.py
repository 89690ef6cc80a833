"""The child process of :func:`~onert_checkpoint.circle.onert_order.probe_onert_order`.

``python -m onert_checkpoint.circle.onert_probe`` runs in a scratch folder that holds the
marked model (``m.circle``) and the shapes and dtypes of its inputs and outputs (``io.json``):
it trains one step with the onert runtime (SGD, learning rate 1e-30, zero inputs and targets)
and exports the checkpoint as ``c.ckpt``. Exit status 0 when it did.

A process of its own, because the runtime, given a model it cannot train, raises or aborts
the whole process (a STRING constant fed to its SGD ends in "double free or corruption"): the
caller's process must survive any model. Short relative names in the scratch folder, because
onert 0.1.0 mangles checkpoint paths of 16 or more characters.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

import numpy as np


def main() -> int:
    from onert.experimental.train import DataLoader, optimizer, session

    with open("io.json", encoding="utf-8") as f:
        spec = json.load(f)

    def batch(items: list[list]) -> list[np.ndarray]:
        return [np.zeros((1, *shape), dtype=dtype) for shape, dtype in items]

    with contextlib.redirect_stdout(io.StringIO()):
        s = session("m.circle")
        s.compile(optimizer=optimizer.SGD(learning_rate=1e-30), loss="mean_squared_error",
                  batch_size=1)
        s.train(DataLoader(batch(spec["inputs"]), batch(spec["outputs"]), batch_size=1),
                epochs=1, checkpoint_path="c.ckpt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
