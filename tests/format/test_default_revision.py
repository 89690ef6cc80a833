"""The revision the package picks when the caller names none.

Schema 3 is the recommended revision (spec/SPEC.md 10): a checkpoint built by hand is schema 3.
What builds a checkpoint for the runtimes (``new``, ``checkpoint_from_arrays``, ``import`` of
arrays that are no export of ours) writes schema 1 when it holds the content, and schema 3,
never schema 2 and never a write that drops content, when it does not: a state key besides
step and epoch, a step beyond 32 bits, an optimizer other than SGD and Adam, arrays with names,
dtypes and shapes of their own. An export keeps its own revision. Through the API and the
command line (a real subprocess).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.initial import checkpoint_from_arrays, trainable_tensors
from onert_checkpoint.circle.model import CircleModel

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests/data/real-onert/fc2.circle"
ADAM = ROOT / "tests/data/real-onert/fc2-adam-step8.ckpt"


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", COLUMNS="100")
    return subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", *map(str, args)],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )


def initial_weights() -> tuple[CircleModel, dict[int, np.ndarray]]:
    model = CircleModel.load(MODEL)
    _, saved = trainable_tensors(model)
    weights = {}
    for t in saved:
        data = model.initial_data(t)
        assert data is not None
        weights[t] = data
    return model, weights


# A checkpoint built by hand ------------------------------------------------------------------


def test_a_checkpoint_built_by_hand_is_schema_3() -> None:
    ckpt = oc.Checkpoint([oc.Tensor(0, np.arange(4, dtype=np.float32), name="w")])
    assert ckpt.revision == "v3"
    data = oc.to_bytes(ckpt)
    assert data[:3] == b"\xad\x01\x03"  # magic, then version byte 3
    back = oc.load(data)
    assert back.revision == "v3" and back[0].name == "w"


def test_a_checkpoint_built_by_hand_still_writes_schema_2_when_asked() -> None:
    data = oc.to_bytes(oc.Checkpoint(revision="v2"))
    assert data[:3] == b"\xad\x01\x02" and oc.load(data).revision == "v2"


# new and checkpoint_from_arrays --------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("dialect", ["onert", "onert-micro"])
def test_new_is_schema_1_which_holds_a_fresh_checkpoint(optimizer: str, dialect: str) -> None:
    ckpt = oc.new_checkpoint(MODEL, optimizer=optimizer, dialect=dialect)
    assert ckpt.revision == "v1" and ckpt.dialect == dialect
    oc.to_bytes(ckpt)  # nothing to drop: the write rule lets it through


def test_arrays_that_fit_schema_1_are_schema_1() -> None:
    model, weights = initial_weights()
    ckpt = checkpoint_from_arrays(model, weights, state={"step": 7, "epoch": 2})
    assert ckpt.revision == "v1"
    assert oc.load(oc.to_bytes(ckpt)).state == {"step": 7, "epoch": 2}


@pytest.mark.parametrize(
    "state",
    [
        {"step": 7, "epoch": 2, "learning_rate": 0.5},  # a key schema 1 has no place for
        {"step": 1 << 33, "epoch": 0},  # a step beyond schema 1's u32
    ],
    ids=["state-key", "big-step"],
)
def test_arrays_that_do_not_fit_schema_1_are_schema_3(state: dict[str, object]) -> None:
    model, weights = initial_weights()
    ckpt = checkpoint_from_arrays(model, weights, state=state)
    assert ckpt.revision == "v3"
    back = oc.load(oc.to_bytes(ckpt))
    assert back.revision == "v3" and dict(back.state) == state
    assert [t.name for t in back.tensors] == ["w0", "b0", "w1", "b1"]  # the model's names kept


def test_an_asked_revision_is_kept() -> None:
    model, weights = initial_weights()
    assert checkpoint_from_arrays(model, weights, revision="v2").revision == "v2"
    with pytest.raises(oc.CheckpointError) as err:  # asked for v1: refuses, naming the loss
        oc.to_bytes(checkpoint_from_arrays(
            model, weights, state={"step": 1, "epoch": 0, "lr": 0.5}, revision="v1"
        ))
    assert err.value.code == "not_representable" and "'lr'" in err.value.message


def test_cli_new_writes_schema_1_by_default_and_schema_3_when_asked(tmp_path: Path) -> None:
    plain, v3 = tmp_path / "start.ckpt", tmp_path / "start-v3.ckpt"
    assert cli("new", "--model", MODEL, plain).returncode == 0
    assert oc.load(plain).revision == "v1"
    result = cli("new", "--model", MODEL, "--revision", "v3", v3)
    assert result.returncode == 0, result.stderr
    assert v3.read_bytes()[:3] == b"\xad\x01\x03"
    assert [t.name for t in oc.load(v3).tensors] == ["w0", "b0", "w1", "b1"]
    assert "v3 (the recommended revision)" in " ".join(cli("new", "--help").stdout.split())


# import --------------------------------------------------------------------------------------


def write(path: Path, arrays: dict[str, np.ndarray], metadata: dict[str, str] | None = None,
          ) -> Path:
    if path.suffix == ".npz":
        from onert_checkpoint.interchange.tensor_dict import NPZ_META_PREFIX

        members: dict[str, np.ndarray] = dict(arrays)
        for key, value in (metadata or {}).items():
            members[NPZ_META_PREFIX + key] = np.array(value)
        np.savez(path, **members)  # type: ignore[arg-type]
    else:
        from safetensors.numpy import save_file

        save_file(arrays, str(path), metadata=metadata)
    return path


READERS = {".safetensors": oc.from_safetensors, ".npz": oc.from_npz}


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_import_of_raw_entries_is_schema_1(tmp_path: Path, suffix: str) -> None:
    src = write(tmp_path / f"raw{suffix}", {"0": np.arange(8, dtype=np.uint8)})
    assert READERS[suffix](src).revision == "v1"


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_import_of_typed_arrays_is_schema_3_and_keeps_them(tmp_path: Path, suffix: str) -> None:
    """Arrays with dtypes and shapes of their own: schema 1 would drop both."""
    src = write(tmp_path / f"typed{suffix}", {
        "0": np.arange(6, dtype=np.float32).reshape(2, 3),
        "1": np.arange(4, dtype=np.int16),
    })
    ckpt = READERS[suffix](src)
    assert ckpt.revision == "v3"
    back = oc.load(oc.to_bytes(ckpt))
    assert back.revision == "v3"
    assert [(t.dtype, t.shape) for t in back.tensors] == [("float32", (2, 3)), ("int16", (4,))]


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_import_of_another_optimizer_is_schema_3(tmp_path: Path, suffix: str) -> None:
    """Metadata naming an optimizer schema 1 has no layout for, and no revision."""
    meta = {"optimizer": "optimizer_9", "slots": json.dumps(["sq"])}  # self-described
    src = write(tmp_path / f"opt{suffix}", {
        "0": np.arange(8, dtype=np.uint8), "0.sq": np.ones(8, np.uint8),
    }, meta)
    ckpt = READERS[suffix](src)
    assert ckpt.revision == "v3"
    back = oc.load(oc.to_bytes(ckpt))
    assert back.optimizer is not None and back.optimizer.kind == "optimizer_9"
    assert bytes(back.optimizer.slots["sq"][0].raw) == bytes(8 * [1])


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_import_of_unknown_sections_is_schema_3_and_keeps_them(tmp_path: Path, suffix: str) -> None:
    """Raw entries schema 1 would hold, with an unknown optional section (metadata, no
    revision): schema 1 has no place for the section, so the import is schema 3 and a write
    keeps its bytes."""
    body = b"opaque section bytes"
    sections = [{"kind": 0x100042, "required": False, "data": base64.b64encode(body).decode()}]
    src = write(tmp_path / f"sections{suffix}", {"0": np.arange(8, dtype=np.uint8)},
                {"sections": json.dumps(sections)})
    ckpt = READERS[suffix](src)
    assert ckpt.revision == "v3"
    back = oc.load(oc.to_bytes(ckpt))
    assert [(s.kind, bytes(s.data)) for s in back.layout.sections] == [(0x100042, body)]


def test_import_of_arrays_named_by_the_models_tensors_is_schema_1(tmp_path: Path) -> None:
    """Names given by the caller's ``entries`` (a model's tensor names) are the model's: the
    schema-1 file bound to it has them back."""
    ckpt = oc.load(ADAM)
    oc.bind(ckpt, MODEL)
    src = write(tmp_path / "w.safetensors", {t.name: np.array(t.data) for t in ckpt.tensors})
    entries = {t.name: t.index for t in ckpt.tensors}
    assert oc.from_safetensors(src, entries=entries).revision == "v1"
    out = tmp_path / "w.ckpt"
    result = cli("import", "--model", MODEL, src, out)
    assert result.returncode == 0, result.stderr
    assert oc.load(out).revision == "v1"


def test_an_export_keeps_its_own_revision(tmp_path: Path) -> None:
    v2 = oc.upgrade(oc.load(ADAM), to="v2")
    src = tmp_path / "v2.safetensors"
    oc.to_safetensors(v2, src)
    assert oc.from_safetensors(src).revision == "v2"


def test_cli_import_of_typed_arrays_writes_schema_3(tmp_path: Path) -> None:
    src = write(tmp_path / "typed.safetensors", {"0": np.arange(6, dtype=np.float32)})
    out = tmp_path / "typed.ckpt"
    result = cli("import", src, out)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "v3" in result.stdout and out.read_bytes()[:3] == b"\xad\x01\x03"
    back = oc.load(out)
    assert (back[0].dtype, back[0].shape) == ("float32", (6,))
    raw = write(tmp_path / "raw.safetensors", {"0": np.arange(8, dtype=np.uint8)})
    assert cli("import", raw, tmp_path / "raw.ckpt").returncode == 0
    assert oc.load(tmp_path / "raw.ckpt").revision == "v1"
