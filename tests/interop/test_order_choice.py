"""Which source names an onert file's entries by default: the prediction, at file speed; the
runtime probe only when asked (``--order probe``) or where the prediction does not fit the file,
and its answer kept on disk by the model's hash.

Every command runs ``python -m onert_checkpoint`` in a subprocess on the real onert exports of
tests/data/real-onert, with the real onert wheel; ``XDG_CACHE_HOME`` is the test's own folder
(tests/conftest.py), so what the cache holds is what the commands of this test left there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import (
    predict_onert_order,
    probe_cache_path,
    probe_onert_order,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
REAL = [("fc2", "fc2-adam-step8"), ("fc3", "fc3-adam-step12"), ("fc3sq", "fc3sq-adam-step12")]


@pytest.fixture(scope="module")
def onert_runtime() -> object:
    return pytest.importorskip("onert", reason="the onert wheel (pip install onert) is missing")


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


def names(done: subprocess.CompletedProcess) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [t["name"] for t in json.loads(done.stdout)["tensors"]]


def cache_dir() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "onert-checkpoint"


def test_default_order_names_entries_without_the_runtime(onert_runtime: object) -> None:
    """``info --model`` with onert installed: the prediction names the entries, no probe runs
    (it would leave its answer in the cache)."""
    done = run("info", "--json", "--model", DATA / "fc3.circle", DATA / "fc3-adam-step12.ckpt")
    assert names(done) == names(run("info", "--json", "--order", "predict", "--model",
                                    DATA / "fc3.circle", DATA / "fc3-adam-step12.ckpt"))
    assert not cache_dir().exists()


@pytest.mark.parametrize(("model", "ckpt"), REAL, ids=[m for m, _ in REAL])
def test_prediction_and_probe_agree_on_the_real_exports(
    onert_runtime: object, model: str, ckpt: str
) -> None:
    """fc3sq's entries all share two sizes: only an order, predicted or probed, names them."""
    raw = (DATA / f"{model}.circle").read_bytes()
    assert probe_onert_order(raw) == predict_onert_order(CircleModel.load(raw))
    given = ("--model", DATA / f"{model}.circle", DATA / f"{ckpt}.ckpt")
    probed = names(run("info", "--json", "--order", "probe", *given))
    assert probed == names(run("info", "--json", "--order", "predict", *given))
    assert len(set(probed)) == len(probed) and all(probed)


def test_probe_answer_is_kept_by_model_hash_and_read_back(onert_runtime: object) -> None:
    """The first ``--order probe`` leaves the answer under $XDG_CACHE_HOME, keyed by the
    model's SHA-256; the next reads it instead of running the runtime (a doctored answer is
    what it then reports)."""
    model = DATA / "fc3.circle"
    given = ("info", "--json", "--order", "probe", "--model", model,
             DATA / "fc3-adam-step12.ckpt")
    first = names(run(*given))
    path = Path(probe_cache_path(model.read_bytes()))
    assert path.is_relative_to(cache_dir()) and path.parent.name == "probe"
    predicted = predict_onert_order(CircleModel.load(model.read_bytes()))
    assert json.loads(path.read_text()) == predicted
    path.write_text(json.dumps(list(reversed(json.loads(path.read_text())))))
    done = run(*given)
    assert done.returncode == 1 and "probe (sizes disagree)" in done.stdout, done.stdout
    path.write_text("not json")  # a damaged answer is asked again, never believed
    assert names(run(*given)) == first
    assert json.loads(path.read_text()) == predicted


def test_cache_is_under_the_home_cache_without_xdg(
    onert_runtime: object, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    path = Path(probe_cache_path(b"model"))
    assert path.parent == tmp_path / ".cache" / "onert-checkpoint" / "probe"


def test_default_order_asks_the_runtime_where_the_prediction_does_not_fit(
    onert_runtime: object, tmp_path: Path
) -> None:
    """fc3's entries written in reverse: the predicted order's sizes disagree with the file, so
    ``auto`` probes (its answer lands in the cache), then matches the distinct sizes."""
    src = oc.load(DATA / "fc3-sgd-step12.ckpt")
    tensors = [oc.Tensor(i, np.array(t.raw)) for i, t in enumerate(reversed(src.tensors))]
    reversed_file = tmp_path / "reversed.ckpt"
    oc.save(oc.Checkpoint(tensors, state=dict(src.state), dialect="onert"), reversed_file,
            revision="v1")
    done = run("info", "--json", "--model", DATA / "fc3.circle", reversed_file)
    assert names(done) == list(reversed(names(run(
        "info", "--json", "--model", DATA / "fc3.circle", DATA / "fc3-sgd-step12.ckpt"))))
    assert Path(probe_cache_path((DATA / "fc3.circle").read_bytes())).exists()
