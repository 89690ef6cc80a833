"""The real onert-micro runtime reads what this project writes.

Every file below is written by this project's CLI and loaded by onert-micro's
``loadCheckpoint`` (or given as ``wof_ptr``), built from ../shared/reference/onert-micro with
this project's driver (tests/interop/conftest.py). "Resume equivalence" means: the runtime
holds exactly what the file says (it saves the same bytes straight back), and training on from
the file gives byte for byte the checkpoint and trained model of a run that was never
interrupted.

* ``new --dialect onert-micro``: training from it equals training from the model itself.
* Downgraded from schema 2: a micro checkpoint upgraded to v2 and converted back to v1 in the
  onert-micro dialect is the runtime's own file again, and training on from it equals the
  uninterrupted run.
* Converted from a real onert export (``convert --to v1 --dialect onert-micro --model``; the
  onert 0.1.0 wheel trains and exports): the runtime loads it, holds onert's weights (its
  ``saveModel`` output has them per tensor) and Adam's m and v, keeps onert's step, and training
  on from it is the same whether or not it is saved and loaded again on the way.
* WOF (``convert --to wof``) given as ``wof_ptr``: inference equals inference with the
  checkpoint loaded, bit for bit, and a numpy forward pass of the file's weights; SGD training
  from the WOF weights gives the weights of training from the checkpoint.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from micro.scenarios import MODELS
from onert_peer import ONERT_MISSING, TrainPeer, fc_forward, onert_available

import onert_checkpoint as oc
from onert_checkpoint.circle.adam_units import ADAM_POWERS, rescale
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.tools.cli import main as cli_main

KINDS = ("sgd", "adam")
K, J = 3, 3  # steps before and after the file (K is the data set's batch count: see WOF)
SOME = ("fc1", "fc3", "fc6", "fc3r")


def _cli(*argv: str) -> None:
    assert cli_main(list(argv)) == 0, argv


def _strict_ok(path: Path, model: Path) -> None:
    _cli("validate", "--strict", "--model", str(model), str(path))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SOME)
def test_new_checkpoint_trains_like_the_model(micro, name: str, kind: str) -> None:
    sc = MODELS[name]
    model, data = sc.files(micro)
    new = micro.folder / "new.ckpt"
    _cli("new", "--model", str(model), "--optimizer", kind, "--dialect", "onert-micro", str(new))
    _strict_ok(new, model)
    # loaded, and saved straight back: the runtime holds exactly the file
    same = micro.folder / "same.ckpt"
    done = micro.run(model=model, opt=kind, batch=sc.batch, load=new, save=same)
    assert done.value("load", "step") == 0
    assert same.read_bytes() == new.read_bytes()
    # training from it == training from the model
    a, am = micro.folder / "a.ckpt", micro.folder / "a.circle"
    b, bm = micro.folder / "b.ckpt", micro.folder / "b.circle"
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=J, save=a, save_model=am)
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=J, load=new, save=b,
              save_model=bm)
    assert b.read_bytes() == a.read_bytes()
    assert bm.read_bytes() == am.read_bytes()
    assert b.read_bytes() != new.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SOME)
def test_downgraded_from_v2_resumes_exactly(micro, name: str, kind: str) -> None:
    sc = MODELS[name]
    model, data = sc.files(micro)
    first, whole = micro.folder / "k.ckpt", micro.folder / "kj.ckpt"
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=K, save=first)
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=K + J, save=whole)
    v2, back = micro.folder / "k.v2", micro.folder / "back.ckpt"
    _cli("convert", str(first), str(v2), "--to", "v2")
    assert oc.load(v2).revision == "v2"
    _cli("convert", str(v2), str(back), "--to", "v1", "--dialect", "onert-micro")
    assert back.read_bytes() == first.read_bytes()
    resumed = micro.folder / "resumed.ckpt"
    done = micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=J, load=back,
                     save=resumed)
    assert done.value("load", "step") == K
    assert resumed.read_bytes() == whole.read_bytes()


def _onert_export(folder: Path, name: str, kind: str, epochs: int) -> tuple[bytes, TrainPeer]:
    """onert trains ``epochs`` passes over the scenario's data (lr 0.01) and exports."""
    sc = MODELS[name]
    xs, ys = sc.data()
    peer = TrainPeer(folder, sc.model(), kind, learning_rate=0.01, batch_size=sc.batch)
    peer.train([xs], [ys], epochs=epochs)
    return peer.export(), peer


@pytest.mark.skipif(not onert_available(), reason=ONERT_MISSING)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SOME)
def test_converted_onert_export_loads_and_resumes(micro, name: str, kind: str) -> None:
    sc = MODELS[name]
    model, data = sc.files(micro)
    exported, _ = _onert_export(micro.folder / "onert", name, kind, epochs=1)
    onert_file = micro.file("onert.ckpt", exported)
    onert_ckpt = oc.load(exported, model=model)
    assert onert_ckpt.dialect in ("onert", None) and onert_ckpt.step == sc.batches

    converted = micro.folder / "micro.ckpt"
    _cli("convert", str(onert_file), str(converted), "--to", "v1", "--dialect", "onert-micro",
         "--model", str(model), "--batch-size", str(sc.batch))
    _strict_ok(converted, model)

    same, trained = micro.folder / "same.ckpt", micro.folder / "t.circle"
    done = micro.run(model=model, opt=kind, batch=sc.batch, load=converted, save=same,
                     save_model=trained)
    assert done.value("load", "step") == sc.batches
    assert same.read_bytes() == converted.read_bytes()
    # onert's weights, per tensor, now in the runtime's model
    held = CircleModel.load(trained.read_bytes())
    initial = CircleModel.load(model.read_bytes())
    for t in onert_ckpt.tensors:
        assert held.initial_data(t.model_index).tobytes() == t.data.tobytes(), t.name
        assert initial.initial_data(t.model_index).tobytes() != t.data.tobytes(), t.name
    if kind == "adam":
        ours = oc.load(same.read_bytes(), model=model)
        for slot in ("m", "v"):
            for t in onert_ckpt.tensors:
                theirs = onert_ckpt.optimizer.slots[slot][t.index].data
                # in onert-micro's units: x B (m), x B**2 (v) (SPEC 9.3)
                theirs = rescale(theirs, sc.batch, ADAM_POWERS[slot], to_micro=True)
                assert ours.slot(slot, t.model_index).data.tobytes() == theirs.tobytes()

    # training on: the same with and without a save and load on the way
    whole, half, resumed = (micro.folder / f"{n}.ckpt" for n in ("whole", "half", "resumed"))
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=2 * J, load=converted,
              save=whole)
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=J, load=converted,
              save=half)
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=J, load=half, save=resumed)
    assert resumed.read_bytes() == whole.read_bytes()
    assert oc.load(whole.read_bytes()).step == sc.batches + 2 * J


def _weights(ckpt: oc.Checkpoint) -> dict[int, np.ndarray]:
    return {t.model_index if t.model_index is not None else t.index: t.data for t in ckpt.tensors}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", SOME)
def test_wof_loads_as_the_weights(micro, name: str, kind: str) -> None:
    sc = MODELS[name]
    model, data = sc.files(micro)
    ckpt_path = micro.folder / "k.ckpt"
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=K, save=ckpt_path)
    wof = micro.folder / "k.wof"
    _cli("convert", str(ckpt_path), str(wof), "--to", "wof", "--allow-lossy")
    assert oc.load(wof).revision == "wof"
    xs = np.random.default_rng(3).standard_normal((5, sc.widths[0])).astype(np.float32)
    probe = micro.file("probe.f32", xs)
    outs = {}
    for how, extra in (("wof", {"wof": wof}), ("ckpt", {"load": ckpt_path}), ("model", {})):
        out = micro.folder / f"{how}.out"
        micro.run(model=model, opt=kind, infer=probe, out=out, **extra)
        outs[how] = np.fromfile(out, "<f4").reshape(len(xs), sc.widths[-1])
    assert outs["wof"].tobytes() == outs["ckpt"].tobytes()
    assert not np.allclose(outs["wof"], outs["model"], atol=1e-4)
    raw_model = model.read_bytes()
    expected = np.concatenate(
        [fc_forward(raw_model, _weights(oc.load(ckpt_path, model=model)), x[None]) for x in xs]
    )
    np.testing.assert_allclose(outs["wof"], expected, rtol=1e-5, atol=1e-5)

    if kind == "sgd":
        # training in place in the WOF buffer: K steps from the WOF weights at step 0 see the
        # same batches (K batches in the data) as K steps on from the step-K checkpoint
        from_wof, from_ckpt = micro.folder / "w.ckpt", micro.folder / "c.ckpt"
        micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=K, wof=wof,
                  save=from_wof)
        micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=K, load=ckpt_path,
                  save=from_ckpt)
        a, b = from_wof.read_bytes(), from_ckpt.read_bytes()
        assert a[:-8] == b[:-8]  # everything but the footer (step K vs 2K)
        assert oc.load(a).step == K and oc.load(b).step == 2 * K
