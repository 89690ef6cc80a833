"""``import --optimizer adam|sgd``: weights-only arrays into a chosen optimizer, and the real
onert runtime (the 0.1.0 wheel) resuming an Adam session from the result.

The weights-only input is what a user has from elsewhere: a safetensors file of fc2's trained
weights named after the model's tensors, no metadata (written by safetensors' own writer).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onert_peer import ONERT_MISSING, TrainPeer, import_in_subprocess

import onert_checkpoint as oc

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
MODEL = DATA / "fc2.circle"
LR = 0.01


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    from safetensors.numpy import save_file

    trained = oc.load(DATA / "fc2-sgd-step8.ckpt", model=MODEL)
    path = tmp_path / "weights.safetensors"
    save_file({t.name: np.array(t.data) for t in trained.tensors}, str(path))
    return path


def test_import_optimizer_adam_adds_zeroed_m_and_v(weights: Path, tmp_path: Path) -> None:
    out = tmp_path / "adam.ckpt"
    done = run("import", weights, out, "--model", MODEL, "--optimizer", "adam")
    assert done.returncode == 0, done.stderr
    ckpt = oc.load(out, model=MODEL)
    assert ckpt.optimizer.kind == "adam" and ckpt.step == 0
    source = oc.from_safetensors(weights, entries={t.name: t.index for t in ckpt.tensors})
    for t in ckpt.tensors:
        assert np.array_equal(t.raw, source[t.index].raw)
        for slot in ("m", "v"):
            entry = ckpt.optimizer.slots[slot][t.index]
            assert entry.nbytes == t.nbytes and not np.asarray(entry.raw).any()
    api = oc.from_safetensors(weights, entries={t.name: t.index for t in ckpt.tensors},
                              optimizer="adam")
    assert oc.to_bytes(api, revision="v1", dialect="onert") == out.read_bytes()


def test_import_optimizer_keeps_state_of_its_kind_and_refuses_another(tmp_path: Path) -> None:
    export = tmp_path / "e.npz"
    assert run("export", DATA / "fc2-adam-step8.ckpt", export).returncode == 0
    kept = tmp_path / "kept.ckpt"
    assert run("import", export, kept, "--optimizer", "adam").returncode == 0
    assert kept.read_bytes() == (DATA / "fc2-adam-step8.ckpt").read_bytes()
    done = run("import", export, tmp_path / "sgd.ckpt", "--optimizer", "sgd")
    assert done.returncode == 1 and not (tmp_path / "sgd.ckpt").exists()
    assert done.stderr.startswith("onert-ckpt: error: not_representable: the arrays hold adam")
    assert "--drop-optimizer" in done.stderr


def test_onert_resumes_an_adam_session_from_the_import(weights: Path, tmp_path: Path) -> None:
    """Without --optimizer the arrays are SGD, which an Adam session refuses; with
    ``--optimizer adam`` it imports, starts from the imported weights (a forward pass, no
    update, exports them unchanged and the moments zero) and its first Adam step moves each
    weight whose gradient is not zero by the learning rate (m-hat / sqrt(v-hat) = +-1 at
    step 1 from zero moments: other moments would move them otherwise)."""
    pytest.importorskip("onert", reason=ONERT_MISSING)
    sgd, adam = tmp_path / "sgd.ckpt", tmp_path / "adam.ckpt"
    assert run("import", weights, sgd, "--model", MODEL).returncode == 0
    assert run("import", weights, adam, "--model", MODEL, "--optimizer", "adam").returncode == 0
    model = MODEL.read_bytes()
    outcomes = import_in_subprocess(model, [("adam", sgd.read_bytes()),
                                            ("adam", adam.read_bytes())])
    assert [o.status for o in outcomes] == ["refuses", "accepts"], outcomes
    peer = TrainPeer(tmp_path / "resumes", model, "adam", learning_rate=LR)
    peer.import_bytes(adam.read_bytes())
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4)).astype(np.float32)
    y = rng.standard_normal((1, 3)).astype(np.float32)
    peer.eval_loss(x, y)
    start = oc.load(peer.export(), model=MODEL)
    imported = oc.load(adam, model=MODEL)
    for t in start.tensors:
        assert np.array_equal(t.raw, imported[t.name].raw)
        assert not any(np.asarray(start.optimizer.slots[s][t.index].raw).any() for s in "mv")
    peer.train([x], [y], epochs=1)
    stepped = oc.load(peer.export(), model=MODEL)
    assert stepped.step == 1
    for t in stepped.tensors:
        moved = np.abs(np.asarray(t.data, np.float64) - np.asarray(start[t.name].data))
        grad = np.asarray(stepped.optimizer.slots["m"][t.index].data) != 0
        assert grad.any()
        assert np.allclose(moved[grad], LR, rtol=1e-3), t.name


#: Adam moments that onert cannot resume from: each unlike its weight (fc2's w0, float32[8, 4])
#: in shape, in dtype, or in size
UNLIKE = {
    "m-transposed": ("w0.m", np.zeros((4, 8), np.float32), "float32[4, 8]"),
    "m-float64": ("w0.m", np.zeros((8, 4), np.float64), "float64[8, 4]"),
    "v-short": ("w0.v", np.zeros(5, np.float32), "float32[5]"),
}


@pytest.mark.parametrize("case", UNLIKE.values(), ids=UNLIKE.keys())
def test_import_refuses_adam_moments_unlike_their_tensor(tmp_path: Path, case: tuple) -> None:
    from safetensors.numpy import save_file

    member, moment, found = case
    trained = oc.load(DATA / "fc2-sgd-step8.ckpt", model=MODEL)
    arrays = {}
    for t in trained.tensors:
        arrays[t.name] = np.array(t.data)
        arrays[t.name + ".m"] = arrays[t.name + ".v"] = np.zeros_like(arrays[t.name])
    arrays[member] = moment
    src, out = tmp_path / "adam.safetensors", tmp_path / "out.ckpt"
    save_file(arrays, str(src))
    done = run("import", src, out, "--model", MODEL)
    assert done.returncode == 1 and not out.exists(), done.stderr
    assert done.stderr.startswith(f"onert-ckpt: error: not_representable: array '{member}' ")
    assert f"is {found}; 'w0' is float32[8, 4]" in done.stderr
    np.savez(tmp_path / "adam.npz", **arrays)
    for read, path in ((oc.from_safetensors, src), (oc.from_npz, tmp_path / "adam.npz")):
        with pytest.raises(oc.NotRepresentableError) as err:
            read(path, entries={t.name: t.index for t in trained.tensors})
        assert err.value.field == member and found in err.value.message


def test_an_export_keeps_an_adam_slot_of_another_size_that_schema_3_holds(
        tmp_path: Path) -> None:
    ckpt = oc.Checkpoint(
        [oc.Tensor(0, np.ones(4, np.float32), dtype="float32", shape=(2, 2))],
        optimizer=oc.Optimizer("adam", {"m": {0: oc.Buffer(0, np.zeros(3, np.uint8))},
                                        "v": {0: oc.Buffer(0, np.zeros(16, np.uint8))}}),
    )
    oc.save(ckpt, tmp_path / "odd.ckpt", revision="v3")
    for suffix, write, read in ((".safetensors", oc.to_safetensors, oc.from_safetensors),
                                (".npz", oc.to_npz, oc.from_npz)):
        write(oc.load(tmp_path / "odd.ckpt"), tmp_path / f"e{suffix}")
        assert oc.to_bytes(read(tmp_path / f"e{suffix}")) == (tmp_path / "odd.ckpt").read_bytes()
