"""A checkpoint as a dict of tensors, as a user reaches for it:
``ckpt[name] = array`` takes and refuses what ``ckpt[name].data = array`` does, a mistyped
name's ``KeyError`` names the nearest tensors, ``dir(onert_checkpoint)`` lists the public
names only, and the reprs of a checkpoint's parts and of a diff stay short whatever their
size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from tests.large_files import v3_many_entries

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
MODEL = DATA / "fc2.circle"
FC3, FC3_MODEL = DATA / "fc3-adam-step12.ckpt", DATA / "fc3.circle"

VALUES = [
    np.array([1.5, 2.0, 3.0]),  # float64 that float32 holds exactly
    np.array([0.1, 2.0, 3.0]),  # float64 that float32 would round
    np.array([1, 2, 3], np.int64),  # int to float: same_kind, exact
    np.array([1, 2, 3], ">f4"),  # the other byte order
    np.array([1, 2, 3], np.complex64),  # complex to float: not same_kind
    np.array([1.0, 2.0]),  # another shape
    [1, 2, 3],  # Python numbers
    np.arange(12, dtype=np.uint8),  # the entry's 12 bytes
]


def _outcome(assign: object) -> str:
    """"taken", or the error's code and message."""
    try:
        assign()  # type: ignore[operator]
    except oc.CheckpointError as err:
        return f"{err.code}: {err.message}"
    return "taken"


@pytest.mark.parametrize("values", VALUES, ids=lambda v: str(getattr(v, "dtype", "list")))
def test_item_assignment_takes_and_refuses_what_data_assignment_does(values: object) -> None:
    by_attribute, by_item = oc.load(ADAM, model=MODEL), oc.load(ADAM, model=MODEL)
    got_attribute = _outcome(lambda: setattr(by_attribute["b1"], "data", values))
    got_item = _outcome(lambda: by_item.__setitem__("b1", values))
    assert got_item == got_attribute
    assert bytes(by_item["b1"].raw) == bytes(by_attribute["b1"].raw)
    assert by_item["b1"].data.dtype == np.float32


def test_item_assignment_by_index_saves_and_never_adds_a_tensor(tmp_path: Path) -> None:
    ckpt = oc.load(ADAM, model=MODEL)
    ckpt[3] = np.array([0.5, 0.25, 2.0])  # entry 3, b1
    with pytest.raises(KeyError):
        ckpt["fc9.weight"] = np.zeros(3, np.float32)
    with pytest.raises(KeyError):
        ckpt[4] = np.zeros(3, np.float32)
    assert len(ckpt) == 4
    oc.save(ckpt, tmp_path / "out.ckpt")
    back = oc.load(tmp_path / "out.ckpt", model=MODEL)
    assert back["b1"].data.tolist() == [0.5, 0.25, 2.0]


def test_a_mistyped_name_s_key_error_names_the_nearest_tensors() -> None:
    ckpt = oc.load(FC3, model=FC3_MODEL)  # w0, b0, w1, b1, w2, b2
    with pytest.raises(KeyError) as err:
        ckpt["w21"]
    assert err.value.args == ("w21",)  # the key, as a plain KeyError's
    assert str(err.value) == "'w21': no such tensor; did you mean 'w2' or 'w1'?"
    with pytest.raises(KeyError, match="none of the 6 names is close"):
        ckpt["zzzz"]
    with pytest.raises(KeyError, match="did you mean 'w1'"):
        ckpt.slot("m", "w1_")


def test_a_name_without_names_or_a_missing_index_says_what_there_is() -> None:
    ckpt = oc.load(ADAM)
    with pytest.raises(KeyError, match="the tensors have no names: give the circle model"):
        ckpt["w0"]
    with pytest.raises(KeyError, match="4 entries, indices 0 to 3"):
        ckpt[7]


def test_a_suggestion_among_100k_names_compares_a_shortlist(monkeypatch) -> None:
    """difflib's cost grows with every name's length: among 100,000 names it sees only the
    shortlist that shares the most of the word's beginning and end (10 to 24 s before), and
    still finds the typo's tensor."""
    import difflib

    from onert_checkpoint import suggestions

    seen: list[int] = []
    real = difflib.get_close_matches

    def counted(word: str, possibilities: list[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
        seen.append(len(possibilities))
        return real(word, possibilities, n=n, cutoff=cutoff)

    monkeypatch.setattr(difflib, "get_close_matches", counted)
    names = [f"model.layers.{i}.self_attn.q_proj.weight" for i in range(100_000)]
    found = suggestions.nearest("model.layers.7.self_atn.q_proj.weight", names, 2)
    assert found[0] == "model.layers.7.self_attn.q_proj.weight"
    assert seen == [suggestions.SHORTLIST]
    assert suggestions.nearest("fc0.wieght", ["fc0.weight", "fc0.bias"]) == ["fc0.weight"]


def test_a_miss_in_a_membership_test_or_get_builds_no_message(monkeypatch) -> None:
    """``in`` and ``get`` answer a miss without the suggestion's search over every name."""
    import onert_checkpoint.suggestions as suggestions

    def refuse(*args: object, **kwargs: object) -> list[str]:
        raise AssertionError("a suggestion was computed")

    monkeypatch.setattr(suggestions, "nearest", refuse)
    ckpt = oc.load(FC3, model=FC3_MODEL)
    assert "w21" not in ckpt and ckpt.get("w21") is None and 99 not in ckpt


def test_the_command_line_suggests_through_the_same_helper(monkeypatch) -> None:
    from onert_checkpoint import suggestions
    from onert_checkpoint.tools import cli

    calls: list[str] = []
    real = suggestions.nearest

    def counted(word: str, known: object, n: int = 1) -> list[str]:
        calls.append(word)
        return real(word, known, n)  # type: ignore[arg-type]

    monkeypatch.setattr(suggestions, "nearest", counted)
    with pytest.raises(SystemExit):
        cli.main(["inof", str(ADAM)])
    assert calls == ["inof"]


def test_dir_lists_the_public_names_only() -> None:
    public = [name for name in dir(oc) if not name.startswith("__")]
    assert public == sorted(n for n in oc.__all__ if not n.startswith("__"))
    for private in ("Any", "TYPE_CHECKING", "annotations", "importlib"):
        assert not hasattr(oc, private), private


def test_the_reprs_stay_short_whatever_the_size() -> None:
    a, b = oc.load(ADAM), oc.load(FC3)
    found = oc.diff(a, b)
    assert len(found.entries) == 18
    assert repr(found) == (
        "CheckpointDiff(equal=False, entries=18 (12 size, 6 only_b), step=8->12, "
        "table_length=4->6)"
    )
    assert repr(found.entries[-1]) == "EntryDiff('5', 'v', 'only_b', nbytes_b=168)"
    many = oc.load(v3_many_entries(100_000, 1))
    for part in (many, many.tensors, many.optimizer, many.optimizer.slots["s00"]):
        assert len(repr(part)) < 400, type(part)
    assert repr(many.tensors).endswith("(100000 tensors)")
    assert repr(many.optimizer) == "Optimizer(kind='optimizer_9', slots={'s00': 100000 entries})"
    assert repr(oc.CircleModel.load(MODEL)).startswith("CircleModel(tensors=")
    small = oc.load(FC3, model=FC3_MODEL)
    assert repr(small.tensors) == repr(list(small.tensors))  # six: every one shown
