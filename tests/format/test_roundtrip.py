"""Round trips: save then load gives the same content; load then save gives the same bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import onert_checkpoint as oc
from tests.strategies import checkpoints, wof_checkpoints

EXAMPLES = settings(max_examples=150, deadline=None)


@EXAMPLES
@given(checkpoints())
def test_v1_save_then_load_gives_the_same_content(ckpt):
    data = oc.to_bytes(ckpt)
    back = oc.load(data)
    assert back.content_equal(ckpt)
    assert back.revision == "v1"
    assert back.dialect in (ckpt.dialect, None)
    assert back.file_size == len(data)


@EXAMPLES
@given(checkpoints())
def test_v1_load_then_save_gives_the_same_bytes(ckpt):
    data = oc.to_bytes(ckpt)
    assert oc.to_bytes(oc.load(data)) == data


@EXAMPLES
@given(checkpoints(), st.sampled_from(["onert", "onert-micro"]))
def test_v1_converts_between_dialects_without_loss(ckpt, target):
    try:
        data = oc.to_bytes(ckpt, dialect=target)
    except oc.NotRepresentableError as err:
        # Only onert-micro content with absent entries, or onert content with empty optimizer
        # entries, cannot be written in the other dialect.
        assert err.code == "not_representable"
        return
    back = oc.load(data)
    assert back.content_equal(ckpt)
    assert back.dialect in (target, None)


@EXAMPLES
@given(wof_checkpoints())
def test_wof_round_trips(ckpt):
    data = oc.to_bytes(ckpt)
    back = oc.load(data)
    assert back.revision == "wof" and back.optimizer is None
    assert back.content_equal(ckpt)
    assert oc.to_bytes(back) == data


@EXAMPLES
@given(checkpoints(dialect="onert"))
def test_footerless_onert_files_round_trip(ckpt):
    ckpt.layout.quirks = ("footerless",)
    ckpt.state.clear()
    data = oc.to_bytes(ckpt)
    assert data[12:16] == b"\0\0\0\0"
    back = oc.load(data)
    assert back.layout.quirks == ("footerless",) and dict(back.state) == {}
    assert oc.to_bytes(back) == data
