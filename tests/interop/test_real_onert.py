"""The files exported by the real onert 0.1.0 runtime (tests/data/real-onert/, FORMAT-FACTS)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"


@pytest.mark.parametrize("path", [ADAM, SGD], ids=["adam", "sgd"])
def test_entries_and_state(path):
    ckpt = oc.load(path)
    assert ckpt.revision == "v1"
    assert ckpt.layout.num_entries == 4 and len(ckpt) == 4
    assert [t.nbytes for t in ckpt.tensors] == [128, 32, 96, 12]
    assert [t.offset for t in ckpt.tensors] == [36, 164, 196, 292]
    assert (ckpt.step, ckpt.epoch) == (8, 0)
    assert all(t.data.dtype == np.uint8 for t in ckpt.tensors)


def test_adam_offsets_and_slots():
    ckpt = oc.load(ADAM)
    assert ckpt.optimizer.kind == "adam"
    assert ckpt.dialect is None  # every entry present, table order: fits both runtimes
    header = np.frombuffer(ADAM.read_bytes()[4:16], "<u4").tolist()
    assert header == [304, 588, 872]
    assert [b.offset for b in ckpt.optimizer.slots["m"].values()] == [320, 448, 480, 576]
    assert [b.offset for b in ckpt.optimizer.slots["v"].values()] == [604, 732, 764, 860]
    assert [b.nbytes for b in ckpt.optimizer.slots["v"].values()] == [128, 32, 96, 12]


def test_sgd_uses_onerts_convention():
    ckpt = oc.load(SGD)
    assert ckpt.optimizer.kind == "sgd" and ckpt.optimizer.slots == {}
    assert ckpt.dialect == "onert"
    header = np.frombuffer(SGD.read_bytes()[4:16], "<u4").tolist()
    assert header == [304, 0, 304]  # opt1_offset == other_offset, opt2_offset == 0


def test_adam_and_sgd_share_weights_layout_but_not_values():
    adam, sgd = oc.load(ADAM), oc.load(SGD)
    assert [t.offset for t in adam.tensors] == [t.offset for t in sgd.tensors]
    assert any(not np.array_equal(a.raw, s.raw) for a, s in zip(adam.tensors, sgd.tensors))


def test_data_are_views_not_copies():
    ckpt = oc.load(ADAM)
    for t in ckpt.tensors:
        assert not t.data.flags.owndata and not t.data.flags.writeable


@pytest.mark.parametrize("path", [ADAM, SGD], ids=["adam", "sgd"])
def test_save_reproduces_the_file(path, tmp_path):
    out = tmp_path / "copy.ckpt"
    oc.save(oc.load(path), out)
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", [ADAM, SGD], ids=["adam", "sgd"])
def test_load_from_bytes_and_buffers(path):
    data = path.read_bytes()
    expected = oc.describe(oc.load(path))
    for source in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert oc.describe(oc.load(source)) == expected


def test_json_contract_of_the_sgd_export():
    desc = oc.describe(oc.load(SGD))
    assert desc["revision"] == "v1" and desc["dialect"] == "onert" and desc["file_size"] == 312
    assert desc["tensors"][0] == {"index": 0, "offset": 36, "nbytes": 128, "crc32": 3157563924}
    assert desc["optimizer"] == {"kind": "sgd", "slots": {}}
    assert desc["state"] == {"step": 8, "epoch": 0}


def test_adam_rewritten_for_onert_micro_is_identical():
    # An Adam file with every entry present in table order is the same in both dialects.
    ckpt = oc.load(ADAM)
    assert oc.to_bytes(ckpt, dialect="onert-micro") == ADAM.read_bytes()


def test_sgd_rewritten_for_onert_micro_needs_the_model_and_zeroes_the_optimizer_offsets():
    # Without the model, onert's entry order would be written where onert-micro reads circle
    # tensor indices: refused (not_representable), as convert refuses it.
    with pytest.raises(oc.NotRepresentableError, match="needs the circle model"):
        oc.to_bytes(oc.load(SGD), dialect="onert-micro")
    micro = oc.convert(oc.load(SGD), "v1", dialect="onert-micro", model=DATA / "fc2.circle")
    data = oc.to_bytes(micro)
    # the model's 7 tensors, SGD: no optimizer ranges (ofs_opt1 = ofs_opt2 = 0)
    assert np.frombuffer(data[4:20], "<u4").tolist() == [0, 0, len(data) - 8, 7]
    assert oc.load(data).dialect == "onert-micro"


def test_the_mapping_goes_with_the_checkpoint():
    # The generated parser is cyclic; the file must not stay mapped until the cyclic collector
    # happens to run (a 1 GiB checkpoint loaded in a loop would pile up mappings).
    import gc
    import weakref

    gc.collect()
    gc.disable()
    try:
        ckpt = oc.load(ADAM)
        mapping = weakref.ref(ckpt.source.obj)
        del ckpt
        assert mapping() is None
    finally:
        gc.enable()
