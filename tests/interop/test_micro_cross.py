"""Moving a training run between onert and onert-micro, compared with training on in one runtime.

Same model, same data, same batches in the same order, learning rate 0.01, Adam betas 0.9 and
0.999, epsilon 1e-7 (both runtimes' defaults):

* onert (the 0.1.0 wheel) trains K steps and exports; the export is converted
  (``convert --to v1 --dialect onert-micro --model``) and onert-micro trains K more steps from it;
  compared with onert training the same K more steps itself;
* the reverse: onert-micro trains K steps, the file is converted to the onert dialect, onert
  imports it and trains K more, compared with onert-micro training on itself.

The figure is the largest absolute difference of any weight after the 2K steps, next to the
largest change of any weight over the last K steps (the size of what was learnt there). Run
this file as a script to print the table of docs/onert-micro.md.

What was found: the runtimes' SGD steps agree to float rounding, and so do their Adam steps with
batch 1, so a run moves between them without a trace. With Adam and a batch of B > 1 the state
must be rescaled: onert-micro's Adam accumulates the *sum* of the batch's gradients (Adam.cpp
``handle``: ``grad_data[i] += calculated_data[i]``, never divided by the batch) where onert
averages them, so its m is B times and its v B**2 times onert's for the same run. A checkpoint
does not record the batch size, so ``convert`` takes it (``--batch-size B``, SPEC 9.3): m * B
and v * B**2 towards onert-micro, divided towards onert, and the moved run matches. Converted
with a wrong B (1: the state unchanged) it drifts by 10 to 40 % of what it learns.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from micro.scenarios import MODELS
from onert_peer import ONERT_MISSING, TrainPeer, onert_available

import onert_checkpoint as oc
from onert_checkpoint.tools.cli import main as cli_main

pytestmark = pytest.mark.skipif(not onert_available(), reason=ONERT_MISSING)

K = 6  # steps in each runtime: two passes over the 3 batches of a scenario's data
LR = 0.01


@dataclass(frozen=True)
class Gap:
    """Largest weight differences after 2K steps (float64 of float32 values)."""

    start: float  # onert 2K steps vs onert-micro 2K steps, both from the model
    to_micro: float  # onert K + onert-micro K vs onert 2K
    to_onert: float  # onert-micro K + onert K vs onert-micro 2K
    learnt_onert: float  # largest change over onert's last K steps
    learnt_micro: float  # the same in onert-micro


def _weights(raw: bytes, model: Path) -> dict[int, np.ndarray]:
    ckpt = oc.load(raw, model=model)
    return {t.model_index: t.data.astype(np.float64) for t in ckpt.tensors}


def _gap(a: bytes, b: bytes, model: Path) -> float:
    wa, wb = _weights(a, model), _weights(b, model)
    assert sorted(wa) == sorted(wb)
    return max(float(np.max(np.abs(wa[i] - wb[i]))) for i in wa)


def _convert(src: Path, dst: Path, dialect: str, model: Path, batch: int | None,
             via_v2: bool = False) -> None:
    """``onert-ckpt convert`` to ``dialect`` with ``--batch-size batch`` (none when None); with
    ``via_v2`` first to schema 2 recording the batch size, then from there without the option
    (the recorded ``batch_size`` key gives it)."""
    size = [] if batch is None else ["--batch-size", str(batch)]
    if via_v2:
        v2 = dst.with_suffix(".v2")
        assert cli_main(["convert", str(src), str(v2), "--to", "v2", "--model", str(model),
                         *size]) == 0
        assert oc.load(v2.read_bytes()).state["batch_size"] == batch
        src, size = v2, ["--allow-lossy"]  # names and the batch_size key are not schema 1's
    argv = ["convert", str(src), str(dst), "--to", "v1", "--dialect", dialect, "--model",
            str(model), *size]
    assert cli_main(argv) == 0


def measure(micro, name: str, kind: str, *, batch: int | None = None,
            via_v2: bool = False) -> Gap:
    """Run the four trajectories of ``name`` with ``kind`` (see the module's docstring); the
    conversions are told ``batch`` (the scenario's batch size when None)."""
    sc = MODELS[name]
    batch = sc.batch if batch is None else batch
    model, data = sc.files(micro)
    xs, ys = sc.data()
    epochs = K // sc.batches
    folder = micro.folder

    onert = TrainPeer(folder / "onert", sc.model(), kind, learning_rate=LR, batch_size=sc.batch)
    onert.train([xs], [ys], epochs=epochs)
    onert_k = micro.file("onert_k.ckpt", onert.export())
    onert.train([xs], [ys], epochs=epochs)
    onert_2k = onert.export()

    micro_k, micro_2k = folder / "micro_k.ckpt", folder / "micro_2k.ckpt"
    micro.run(model=model, opt=kind, batch=sc.batch, lr=LR, data=data, steps=K, save=micro_k)
    micro.run(model=model, opt=kind, batch=sc.batch, lr=LR, data=data, steps=2 * K,
              save=micro_2k)

    # onert -> onert-micro
    moved, continued = folder / "moved.ckpt", folder / "continued.ckpt"
    _convert(onert_k, moved, "onert-micro", model, batch, via_v2)
    micro.run(model=model, opt=kind, batch=sc.batch, lr=LR, data=data, steps=K, load=moved,
              save=continued)

    # onert-micro -> onert
    back = folder / "back.ckpt"
    _convert(micro_k, back, "onert", model, batch, via_v2)
    other = TrainPeer(folder / "onert2", sc.model(), kind, learning_rate=LR,
                      batch_size=sc.batch)
    other.import_bytes(back.read_bytes())
    other.train([xs], [ys], epochs=epochs)
    returned = other.export()

    m2k = micro_2k.read_bytes()
    return Gap(
        start=_gap(onert_2k, m2k, model),
        to_micro=_gap(continued.read_bytes(), onert_2k, model),
        to_onert=_gap(returned, m2k, model),
        learnt_onert=_gap(onert_2k, onert_k.read_bytes(), model),
        learnt_micro=_gap(m2k, micro_k.read_bytes(), model),
    )


# SGD, and Adam with batch 1: a run moves between the runtimes without a trace ---------------

ROUNDING = 1e-5  # measured: at most 6e-8 (SGD), 3e-7 (Adam, batch 1); steps learn 1e-2..7e-2


@pytest.mark.parametrize("name", ["fc1", "fc2", "fc3", "fc6", "fc3r"])
def test_sgd_moves_between_runtimes(micro, name: str) -> None:
    gap = measure(micro, name, "sgd")
    assert max(gap.start, gap.to_micro, gap.to_onert) < ROUNDING, gap
    assert min(gap.learnt_onert, gap.learnt_micro) > 1e-3, gap  # the steps did learn


@pytest.mark.parametrize("name", ["fc1", "fc4"])
def test_adam_batch_1_moves_between_runtimes(micro, name: str) -> None:
    """The runtimes' own Adam runs may part (``start``: onert-micro adds epsilon inside the
    square root, onert outside, which matters for weights with tiny gradients: 4e-3 on fc4),
    but a run moved between them continues as it would have in the runtime it left."""
    assert MODELS[name].batch == 1
    gap = measure(micro, name, "adam")
    assert max(gap.to_micro, gap.to_onert) < ROUNDING, gap
    assert min(gap.learnt_onert, gap.learnt_micro) > 1e-3, gap


# Adam with batch > 1: the optimizer state's units differ by the batch size -------------------


@pytest.mark.parametrize("name", ["fc2", "fc6"])
def test_adam_state_is_in_each_runtimes_batch_units(micro, name: str) -> None:
    """Converted with batch size 1 (the state unchanged), the continued run drifts by more than
    10 % of what it learns; with the run's batch size B (m * B, v * B**2 towards onert-micro,
    divided towards onert) it matches to rounding (the two runtimes' own Adam trajectories
    differ by the epsilon's place: inside the square root in onert-micro)."""
    assert MODELS[name].batch > 1
    plain = measure(micro, name, "adam", batch=1)
    assert plain.to_micro > 0.1 * plain.learnt_onert, plain
    assert plain.to_onert > 0.1 * plain.learnt_micro, plain
    rescaled = measure(_fresh(micro), name, "adam")
    assert max(rescaled.to_micro, rescaled.to_onert) < 2 * max(rescaled.start, ROUNDING), rescaled


@pytest.mark.parametrize(("name", "via_v2"), [("fc2", False), ("fc3r", False), ("fc3", True)])
def test_converted_adam_state_continues_like_the_original_runtime(
    micro, name: str, via_v2: bool
) -> None:
    """``convert --batch-size B`` moves an Adam run at batch B > 1 both ways, directly or through
    a schema-2 file that records B (the second conversion takes it from the file)."""
    assert MODELS[name].batch > 1
    gap = measure(micro, name, "adam", via_v2=via_v2)
    assert max(gap.to_micro, gap.to_onert) < 10 * max(gap.start, ROUNDING), gap
    assert max(gap.to_micro, gap.to_onert) < 1e-3 * min(gap.learnt_onert, gap.learnt_micro), gap


def test_adam_at_batch_above_1_without_batch_size_is_refused(micro, tmp_path: Path) -> None:
    """A real onert export trained at batch 2, converted without --batch-size: exit 1 with
    not_representable (field batch_size), nothing written."""
    sc = MODELS["fc2"]
    model, _ = sc.files(micro)
    xs, ys = sc.data()
    peer = TrainPeer(tmp_path / "onert", sc.model(), "adam", learning_rate=LR,
                     batch_size=sc.batch)
    peer.train([xs], [ys], epochs=1)
    src, dst = micro.file("onert.ckpt", peer.export()), tmp_path / "out.ckpt"
    with pytest.raises(oc.CheckpointError) as info:
        oc.convert(oc.load(src), "v1", dialect="onert-micro", model=model)
    assert (info.value.code, info.value.field) == ("not_representable", "batch_size")
    argv = ["convert", str(src), str(dst), "--to", "v1", "--dialect", "onert-micro", "--model",
            str(model)]
    assert cli_main(argv) == 1
    assert not dst.exists()


def _fresh(micro):
    """The same driver in a new sub-folder (a second measurement in one test)."""
    from micro.peer import MicroPeer

    return MicroPeer(micro.exe, micro.folder / "again")


def main() -> None:
    """Print the figures of docs/onert-micro.md (needs ONERT_MICRO_DRIVER: a built driver)."""
    import os

    from micro.peer import MicroPeer

    exe = Path(os.environ["ONERT_MICRO_DRIVER"])
    print("| model | batch | optimizer | onert vs micro from the start | onert K + micro K "
          "| micro K + onert K | learnt in the last K (onert / micro) |")
    print("|---|---|---|---|---|---|---|")
    for name, sc in MODELS.items():
        for kind in ("sgd", "adam"):
            for batch in ((1, sc.batch) if kind == "adam" and sc.batch > 1 else (sc.batch,)):
                with tempfile.TemporaryDirectory() as tmp:
                    gap = measure(MicroPeer(exe, Path(tmp)), name, kind, batch=batch)
                label = kind + (f" (--batch-size {batch})" if kind == "adam" else "")
                what = f"{sc.layers} layer{'s' if sc.layers > 1 else ''}"
                what += ", RELU, a layer without bias" if sc.relu else ""
                print(f"| {name} ({what}) | {sc.batch} | {label} | {gap.start:.1e} | "
                      f"{gap.to_micro:.1e} | {gap.to_onert:.1e} | "
                      f"{gap.learnt_onert:.1e} / {gap.learnt_micro:.1e} |")


if __name__ == "__main__":
    main()
