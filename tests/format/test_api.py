"""The Python API, as a user of ``import onert_checkpoint as oc`` meets it."""

from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.tools.layout_map import layout_map

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "real-onert"
ADAM = REAL / "fc2-adam-step8.ckpt"
SGD = REAL / "fc2-sgd-step8.ckpt"
MODEL = REAL / "fc2.circle"
REAL_FILES = [ADAM, SGD]


@pytest.fixture(params=REAL_FILES, ids=["adam", "sgd"])
def real(request: pytest.FixtureRequest) -> Path:
    return request.param


def test_public_names() -> None:
    for name in ("load", "save", "open", "Checkpoint", "upgrade", "downgrade", "convert",
                 "to_safetensors", "from_safetensors", "to_numpy_dict", "from_numpy_dict",
                 "from_torch", "to_torch", "diff", "new_checkpoint", "bind"):
        assert name in oc.__all__ and callable(getattr(oc, name)), name


def test_open_closes_the_mapping() -> None:
    with oc.open(ADAM) as ckpt:
        view = ckpt.source
        mapped = view.obj
        assert isinstance(mapped, mmap.mmap)
        first = np.array(ckpt[0].data)
    assert mapped.closed
    assert ckpt.source is None
    with pytest.raises(oc.CheckpointError) as info:  # gone, not empty: never 0 bytes
        ckpt[0].nbytes  # noqa: B018
    assert info.value.code == "released"
    assert first.nbytes == 128


def test_open_leaves_kept_views_valid() -> None:
    with oc.open(ADAM) as ckpt:
        kept = ckpt[0].data
    # The mapping stays alive while a view on it does: no dangling memory.
    assert kept.nbytes == 128 and int(kept.sum()) >= 0


def test_mapping_by_index_and_name() -> None:
    ckpt = oc.bind(oc.load(ADAM), MODEL)
    assert ckpt["w1"] is ckpt[2]
    assert ckpt["w1"].shape == (3, 8)
    assert list(ckpt) == ["w0", "b0", "w1", "b1"]  # names once bound, in entry order
    with pytest.raises(KeyError):
        ckpt["nope"]


def test_numpy_dict_round_trip_is_lossless(real: Path) -> None:
    ckpt = oc.load(real)
    arrays, meta = oc.to_numpy_dict(ckpt, metadata=True)
    assert all(isinstance(v, str) for v in meta.values())
    assert oc.to_bytes(oc.from_numpy_dict(arrays, meta)) == real.read_bytes()


def test_numpy_dict_with_model_is_typed(real: Path) -> None:
    ckpt = oc.bind(oc.load(real), MODEL)
    arrays = oc.to_numpy_dict(ckpt)
    assert arrays["w0"].shape == (8, 4) and arrays["w0"].dtype == np.float32
    if ckpt.optimizer.kind == "adam":
        assert arrays["w0.m"].shape == (8, 4)


def test_numpy_dict_without_metadata() -> None:
    ckpt = oc.load(ADAM)
    arrays = oc.to_numpy_dict(ckpt)
    rebuilt = oc.from_numpy_dict(arrays)
    assert rebuilt.optimizer.kind == "adam"
    assert rebuilt.content_equal(oc.load(ADAM)) is False  # no state without metadata
    rebuilt.state.update(step=8, epoch=0)
    assert rebuilt.content_equal(ckpt)


def test_numpy_dict_rejects_unknown_names() -> None:
    with pytest.raises(oc.NotRepresentableError):
        oc.from_numpy_dict({"w0": np.zeros(4, np.float32)})


@pytest.mark.parametrize("revision", ["v1", "v2"])
def test_safetensors_round_trip(tmp_path: Path, real: Path, revision: str) -> None:
    ckpt = oc.load(real) if revision == "v1" else oc.convert(oc.load(real), "v2", model=MODEL)
    original = oc.to_bytes(ckpt)
    out = tmp_path / "x.safetensors"
    oc.to_safetensors(ckpt, out)
    assert oc.to_bytes(oc.from_safetensors(out)) == original


def test_npz_round_trip(tmp_path: Path, real: Path) -> None:
    out = tmp_path / "x.npz"
    oc.to_npz(oc.load(real), out)
    with np.load(out) as npz:
        assert json.loads(str(npz["__metadata__.state"])) == {"step": 8, "epoch": 0}
    assert oc.to_bytes(oc.from_npz(out)) == real.read_bytes()


def test_upgrade_downgrade_reexported(real: Path) -> None:
    for to in ("v3", "v2"):
        upgraded = oc.upgrade(oc.load(real), to=to)
        assert upgraded.revision == to
        assert oc.to_bytes(oc.downgrade(oc.load(oc.to_bytes(upgraded)))) == real.read_bytes()


def test_schema_3_is_the_recommended_default(real: Path) -> None:
    """upgrade and convert choose schema 3 when no revision is named; convert(to=None) keeps
    the input's revision, schema 2 included, and schema 2 stays readable and convertible."""
    assert oc.upgrade(oc.load(real)).revision == "v3"
    assert oc.convert(oc.load(real)).revision == "v3"
    v2 = oc.load(oc.to_bytes(oc.upgrade(oc.load(real), to="v2")))
    assert oc.convert(v2, to=None).revision == "v2"
    assert oc.convert(v2).revision == "v3"
    assert oc.to_bytes(oc.convert(v2, to="v1")) == real.read_bytes()


def test_diff_api(tmp_path: Path) -> None:
    a = oc.load(ADAM)
    assert oc.diff(a, oc.load(ADAM)).equal
    d = oc.diff(a, oc.load(SGD))
    assert not d.equal and d.state == {"optimizer": ("adam", "sgd")}


@pytest.mark.parametrize("dialect", ["onert", "onert-micro"])
def test_new_checkpoint(dialect: str) -> None:
    model = CircleModel.load(MODEL)
    ckpt = oc.load(oc.to_bytes(oc.new_checkpoint(model, optimizer="adam", dialect=dialect)))
    oc.bind(ckpt, MODEL)
    for t in ckpt.tensors:
        np.testing.assert_array_equal(
            np.asarray(t.data).reshape(-1), model.initial_data(t.model_index).reshape(-1)
        )
    assert ckpt.step == 0


def test_new_checkpoint_micro_keeps_the_savers_order() -> None:
    """onert-micro's saver writes the last operator's tensors first (OMCheckpointSaver.cpp)."""
    model = CircleModel.load(MODEL)
    ckpt = oc.load(oc.to_bytes(oc.new_checkpoint(model, dialect="onert-micro")))
    by_offset = [t.index for t in sorted(ckpt.tensors, key=lambda t: t.offset)]
    assert by_offset == model.micro_saved_indices() == [4, 5, 1, 2]


def test_layout_map_of_truncated_file() -> None:
    lmap = layout_map(ADAM.read_bytes()[:10])
    assert lmap.error is not None and lmap.error.code == "truncated_header"
    assert [f.name for f in lmap.fields][:3] == ["magic", "version", "reserved"]
    assert lmap.fields[-1].note == "truncated"


def test_layout_map_of_wof(tmp_path: Path) -> None:
    wof = oc.to_bytes(oc.load(ADAM), revision="wof", allow_lossy=True)
    lmap = layout_map(wof)
    assert lmap.revision == "wof" and lmap.error is None
    assert [f.name for f in lmap.fields][:4] == ["magic", "version", "reserved", "num_entries"]
