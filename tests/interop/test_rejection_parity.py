"""Rejection parity with the real onert runtime on malformed checkpoints.

Each variant below is made from a file onert 0.1.0 exported itself
(tests/data/real-onert/fc2-{sgd,adam}-step8.ckpt: a 4->8->3 FC model, N = 4, weight entries
of 128, 32, 96 and 12 bytes; SGD file 312 bytes, footer at 304; Adam file 880 bytes, m at 304,
v at 588, footer at 872). It is imported into a fresh onert train session of the model (in a
child process under a 4 GiB address-space limit: see tests/interop/onert_peer.py), and read by
``onert_checkpoint.load`` without and with the model (``onert-ckpt validate [--model]`` says
the same, one line per file). The test asserts the table, and that every file onert refuses
(or crashes on) is refused by us given the model; the two "session kind" rows are files that
are valid in themselves, refused by onert because the session was compiled for the other
optimizer, and ``load`` reports that kind.

=========================  ==========================================  =====================
variant (base)             onert 0.1.0 (its message)                   load: file / +model
=========================  ==========================================  =====================
intact (both)              accepts                                     ok / ok
step_epoch_rewritten       accepts                                     ok / ok
truncated_by_1             refuses: "Invalid checkpoint file footer"   truncated_file
truncated_to_19            refuses: "Invalid checkpoint file data"     truncated_header
header_only                refuses: "Failed to load tensor data"       count_exceeds_file
trailing_byte              refuses: "... footer data"                  trailing_bytes
bad_magic                  refuses: "Invalid MAGIC NUMBER"             bad_magic
schema_2                   refuses: "Invalid SCHEMA VERSION"           header_checksum (v2)
reserved_nonzero           ACCEPTS                                     reserved_nonzero
count_0                    CRASHES: SIGSEGV                            unreferenced_bytes
count_3                    refuses: "Invalid number of tensors"        unreferenced_bytes
count_5                    refuses: "Invalid number of tensors"        entry_out_of_block
count_max (2**32-1)        refuses: std::bad_alloc (under the 4 GiB    count_exceeds_file
                           limit; killed for memory without one)
fewer_entries_valid        refuses: "Invalid number of tensors"        ok / model_mismatch
other_offset_minus_4       refuses: "... footer data"                  trailing_bytes
weight_past_end            ACCEPTS                                     offset_out_of_bounds
weight_into_header         ACCEPTS                                     unreferenced_bytes
weight_into_table          ACCEPTS                                     entry_out_of_block
weight_into_footer (sgd)   ACCEPTS                                     ok / model_mismatch
weight_into_footer (adam)  ACCEPTS                                     entry_out_of_block
weights_descending (sgd)   ACCEPTS                                     dialect_conflict
weights_descending (adam)  ACCEPTS                                     slot_size_mismatch
weight_sizes_shifted (sgd) ACCEPTS (sizes are only assert()ed)         ok / model_mismatch
weight_sizes_shifted(adam) ACCEPTS                                     slot_size_mismatch
session_kind (both)        refuses: "Not compatible optimizer type"    ok (reports the kind)
opt1_zero (sgd)            accepts (and keeps the step, see            ok / ok
                           test_runtime_roundtrip)
opt1_past_end (sgd)        ACCEPTS                                     optimizer_layout
opt1_inside_weights (sgd)  ACCEPTS                                     optimizer_layout
opt2_set (sgd)             refuses: optimizer type (it reads Adam)     block_order
opt1_zero (adam)           refuses: optimizer type (it reads SGD)      optimizer_layout
opt1_past_end (adam)       ACCEPTS                                     offset_out_of_bounds
opt2_past_end (adam)       ACCEPTS                                     offset_out_of_bounds
opt_blocks_swapped (adam)  ACCEPTS                                     block_order
m_entry_past_end (adam)    ACCEPTS                                     offset_out_of_bounds
m_entry_into_header (adam) ACCEPTS                                     slot_size_mismatch
v_entries_swapped (adam)   ACCEPTS                                     slot_size_mismatch
=========================  ==========================================  =====================

One code alone holds for both ``load(file)`` and ``load(file, model=...)``; the codes are
those of the first rule of spec/SPEC.md the file breaks (``VARIANTS`` below holds them). Rows
in capitals are the findings: onert imports whatever its offsets point at (its per-entry size
checks are ``assert``s, compiled out), does not check the reserved byte, and crashes on a count
of 0 (``calculateSize`` loops to ``size() - 1`` of an empty vector). A file onert accepts is no
proof of validity. Every file onert refuses or crashes on, we refuse.

An onert SGD file whose ``opt1_offset`` was set to 0 reads alone as the onert-micro dialect
(opt1 = 0 is onert-micro's SGD convention); with the model, its N (4) fits onert's
trainable-tensor count rather than the model's tensor count (7), so the binding reads it in
onert's entry order, as onert itself does.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.errors import CheckpointError
from onert_checkpoint.tools.cli import main as cli_main

DATA = Path(__file__).resolve().parent.parent / "data" / "real-onert"
MODEL = DATA / "fc2.circle"
BASE = {"sgd": DATA / "fc2-sgd-step8.ckpt", "adam": DATA / "fc2-adam-step8.ckpt"}
N = 4


def _u32(raw: bytes, at: int) -> int:
    return struct.unpack_from("<I", raw, at)[0]


def _put(raw: bytes, at: int, value: int) -> bytes:
    out = bytearray(raw)
    struct.pack_into("<I", out, at, value)
    return bytes(out)


def _byte(raw: bytes, at: int, value: int) -> bytes:
    out = bytearray(raw)
    out[at] = value
    return bytes(out)


def _swap(raw: bytes, a: int, b: int) -> bytes:
    return _put(_put(raw, a, _u32(raw, b)), b, _u32(raw, a))


def _fewer_entries(raw: bytes) -> bytes:
    """A well-formed file with N - 1 entries (the last weight and its m, v dropped)."""
    ckpt = oc.load(raw)
    last = ckpt.tensors[-1].index
    ckpt.tensors = ckpt.tensors[:-1]
    ckpt.layout.num_entries = None
    if ckpt.optimizer is not None:
        for entries in ckpt.optimizer.slots.values():
            entries.pop(last, None)
    return oc.to_bytes(ckpt, dialect="onert")


@dataclass(frozen=True)
class Variant:
    name: str
    base: str  # which real export it is made from
    mutate: Callable[[bytes], bytes]
    onert: str  # "accepts", "refuses" or "crashes"
    ours: str  # error code of load(file), or "ok"
    ours_with_model: str  # error code of load(file, model=fc2.circle), or "ok"
    session: str | None = None  # the session's optimizer when it is not the base's

    @property
    def id(self) -> str:
        return f"{self.base}-{self.name}"

    @property
    def session_kind(self) -> str:
        return self.session or self.base


Codes = str | dict[str, str]


def _both(name: str, mutate: Callable[[bytes], bytes], onert: str, ours: Codes,
          with_model: Codes | None = None) -> list[Variant]:
    """The variant of both base files; ``ours`` per base kind when the codes differ."""

    def pick(codes: Codes, kind: str) -> str:
        return codes if isinstance(codes, str) else codes[kind]

    with_model = ours if with_model is None else with_model
    return [
        Variant(name, kind, mutate, onert, pick(ours, kind), pick(with_model, kind))
        for kind in BASE
    ]


def _other(raw: bytes) -> int:
    return _u32(raw, 12)


def _m(raw: bytes) -> int:
    return _u32(raw, 4)


def _v(raw: bytes) -> int:
    return _u32(raw, 8)


VARIANTS: list[Variant] = [
    *_both("intact", lambda r: r, "accepts", "ok"),
    *_both("step_epoch_rewritten", lambda r: r[:-8] + struct.pack("<II", 7, 3), "accepts", "ok"),
    *_both("truncated_by_1", lambda r: r[:-1], "refuses", "truncated_file"),
    *_both("truncated_to_19", lambda r: r[:19], "refuses", "truncated_header"),
    *_both("header_only", lambda r: r[:20], "refuses", "count_exceeds_file"),
    *_both("trailing_byte", lambda r: r + b"\0", "refuses", "trailing_bytes"),
    *_both("bad_magic", lambda r: _byte(r, 0, 0x52), "refuses", "bad_magic"),
    *_both("schema_2", lambda r: _byte(r, 2, 2), "refuses", "header_checksum"),
    *_both("reserved_nonzero", lambda r: _byte(r, 3, 1), "accepts", "reserved_nonzero"),
    *_both("count_0", lambda r: _put(r, 16, 0), "crashes", "unreferenced_bytes"),
    *_both("count_3", lambda r: _put(r, 16, N - 1), "refuses", "unreferenced_bytes"),
    *_both("count_5", lambda r: _put(r, 16, N + 1), "refuses", "entry_out_of_block"),
    *_both("count_max", lambda r: _put(r, 16, 0xFFFFFFFF), "refuses", "count_exceeds_file"),
    *_both("fewer_entries_valid", _fewer_entries, "refuses", "ok", "model_mismatch"),
    *_both("other_offset_minus_4", lambda r: _put(r, 12, _other(r) - 4), "refuses",
           "trailing_bytes"),
    *_both("weight_past_end", lambda r: _put(r, 20, len(r) + 64), "accepts",
           "offset_out_of_bounds"),
    *_both("weight_into_header", lambda r: _put(r, 20, 0), "accepts", "unreferenced_bytes"),
    *_both("weight_into_table", lambda r: _put(r, 20, 24), "accepts", "entry_out_of_block"),
    *_both("weight_into_footer", lambda r: _put(r, 32, _other(r)), "accepts",
           {"sgd": "ok", "adam": "entry_out_of_block"},
           {"sgd": "model_mismatch", "adam": "entry_out_of_block"}),
    *_both("weights_descending", lambda r: _swap(r, 24, 28), "accepts",
           {"sgd": "dialect_conflict", "adam": "slot_size_mismatch"}),
    *_both("weight_sizes_shifted", lambda r: _put(r, 32, _u32(r, 32) + 4), "accepts",
           {"sgd": "ok", "adam": "slot_size_mismatch"},
           {"sgd": "model_mismatch", "adam": "slot_size_mismatch"}),
    Variant("session_kind", "sgd", lambda r: r, "refuses", "ok", "ok", session="adam"),
    Variant("session_kind", "adam", lambda r: r, "refuses", "ok", "ok", session="sgd"),
    Variant("opt1_zero", "sgd", lambda r: _put(r, 4, 0), "accepts", "ok", "ok"),
    Variant("opt1_past_end", "sgd", lambda r: _put(r, 4, len(r) + 64), "accepts",
            "optimizer_layout", "optimizer_layout"),
    Variant("opt1_inside_weights", "sgd", lambda r: _put(r, 4, 200), "accepts",
            "optimizer_layout", "optimizer_layout"),
    Variant("opt2_set", "sgd", lambda r: _put(r, 8, _other(r)), "refuses", "block_order",
            "block_order"),
    Variant("opt1_zero", "adam", lambda r: _put(r, 4, 0), "refuses", "optimizer_layout",
            "optimizer_layout"),
    Variant("opt1_past_end", "adam", lambda r: _put(r, 4, len(r) + 64), "accepts",
            "offset_out_of_bounds", "offset_out_of_bounds"),
    Variant("opt2_past_end", "adam", lambda r: _put(r, 8, len(r) + 64), "accepts",
            "offset_out_of_bounds", "offset_out_of_bounds"),
    Variant("opt_blocks_swapped", "adam", lambda r: _swap(r, 4, 8), "accepts", "block_order",
            "block_order"),
    Variant("m_entry_past_end", "adam", lambda r: _put(r, _m(r), len(r) + 64), "accepts",
            "offset_out_of_bounds", "offset_out_of_bounds"),
    Variant("m_entry_into_header", "adam", lambda r: _put(r, _m(r) + 4, 0), "accepts",
            "slot_size_mismatch", "slot_size_mismatch"),
    Variant("v_entries_swapped", "adam", lambda r: _swap(r, _v(r), _v(r) + 4), "accepts",
            "slot_size_mismatch", "slot_size_mismatch"),
]

IDS = [v.id for v in VARIANTS]
assert len(set(IDS)) == len(IDS)


def _file(variant: Variant) -> bytes:
    return variant.mutate(BASE[variant.base].read_bytes())


def _our_code(raw: bytes, model: object = None) -> str:
    try:
        oc.load(raw, model=model, order="predict")
    except CheckpointError as err:
        return err.code
    return "ok"


def table() -> list[tuple[str, str, str, str]]:
    """(variant, onert, ours, ours with model) as measured now (needs onert)."""
    from onert_peer import import_in_subprocess

    files = [(v.session_kind, _file(v)) for v in VARIANTS]
    outcomes = import_in_subprocess(MODEL.read_bytes(), files)
    return [
        (v.id, f"{o.status} {o.detail}", _our_code(raw), _our_code(raw, MODEL))
        for v, (_, raw), o in zip(VARIANTS, files, outcomes)
    ]


#: Files onert 0.1.0 imports that ``load(file, model=...)`` refuses (for spec/SPEC.md).
ACCEPTED_BY_ONERT_REFUSED_BY_US = sorted(
    v.id for v in VARIANTS if v.onert == "accepts" and v.ours_with_model != "ok"
)


# our side: needs no runtime --------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_what_load_says(variant: Variant) -> None:
    raw = _file(variant)
    assert (_our_code(raw), _our_code(raw, MODEL)) == (variant.ours, variant.ours_with_model)


def test_refusals_documented_for_onert_are_ours_too() -> None:
    for v in VARIANTS:
        if v.onert == "accepts":
            continue
        if v.session is not None:  # a valid file, for the other optimizer: we report its kind
            assert v.ours_with_model == "ok"
            assert oc.load(_file(v)).optimizer.kind == v.base != v.session_kind
        else:
            assert v.ours_with_model != "ok", v.id


@pytest.mark.parametrize("with_model", [False, True], ids=["file", "model"])
def test_validate_says_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                with_model: bool) -> None:
    paths = []
    for v in VARIANTS:
        path = tmp_path / f"{v.id}.ckpt"
        path.write_bytes(_file(v))
        paths.append(str(path))
    argv = ["validate", "--json", *(["--model", str(MODEL)] if with_model else []), *paths]
    status = cli_main(argv)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    assert [line["file"] for line in lines] == paths
    said = [line["error"]["code"] if not line["valid"] else "ok" for line in lines]
    expected = [v.ours_with_model if with_model else v.ours for v in VARIANTS]
    assert said == expected
    assert status == (1 if any(code != "ok" for code in expected) else 0)


# the runtime's side ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def onert_outcomes() -> dict[str, object]:
    from onert_peer import ONERT_MISSING, import_in_subprocess

    pytest.importorskip("onert", reason=ONERT_MISSING)

    files = [(v.session_kind, _file(v)) for v in VARIANTS]
    return dict(zip(IDS, import_in_subprocess(MODEL.read_bytes(), files)))


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_what_onert_does(variant: Variant, onert_outcomes: dict[str, object]) -> None:
    outcome = onert_outcomes[variant.id]
    assert outcome.status == variant.onert, outcome  # type: ignore[attr-defined]


def test_every_file_onert_refuses_is_refused_by_us(onert_outcomes: dict[str, object]) -> None:
    missed = []
    for v in VARIANTS:
        if onert_outcomes[v.id].status == "accepts":  # type: ignore[attr-defined]
            continue
        raw = _file(v)
        if v.session is not None:
            if oc.load(raw, model=MODEL).optimizer.kind == v.session_kind:
                missed.append(v.id)
        elif _our_code(raw, MODEL) == "ok":
            missed.append(v.id)
    assert missed == []


def test_files_onert_accepts_and_we_refuse_are_documented(
    onert_outcomes: dict[str, object],
) -> None:
    found = sorted(
        v.id
        for v in VARIANTS
        if onert_outcomes[v.id].status == "accepts"  # type: ignore[attr-defined]
        and _our_code(_file(v), MODEL) != "ok"
    )
    assert found == ACCEPTED_BY_ONERT_REFUSED_BY_US
