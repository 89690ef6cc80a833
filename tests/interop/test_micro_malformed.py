"""onert-micro's checkpoint loader on malformed files, next to what ``load`` says of each.

Each variant is made from a file the runtime wrote itself (real-files/ckpt_{sgd,adam}.bin of
../shared/reference/onert-micro: the 2-layer model fc2.circle, N = 7 = every tensor, weight
entries W2 @48 (64 B), b2 @112 (8 B), W1 @120 (128 B), b1 @248 (32 B); SGD file 288 bytes with
the footer at 280; Adam file 808 bytes, m table at 280, v table at 540, footer at 800). It is
loaded by ``loadCheckpoint`` into a fresh interpreter of the model, in a child process under a
512 MiB address-space limit, a 10 s CPU limit and a 30 s timeout (tests/interop/micro/peer.py),
and read by ``onert_checkpoint.load`` given the model. The runtime is built with ``NDEBUG``, as
a device build is: its checks then return ``FailReadCheckpointFile`` instead of stopping at the
``assert`` in front of each (with asserts on, every refusal below is an abort, SIGABRT).

=========================  ============================================  ======================
variant (base)             onert-micro (built from the public source)    load(file, model)
=========================  ============================================  ======================
intact (both)              accepts                                       ok
step_epoch_rewritten       accepts (restores both)                       ok
bad_magic                  refuses                                       bad_magic
schema_2                   refuses                                       header_checksum (v2)
count_6, count_0           refuses (N must be the model's tensor count)  unreferenced_bytes
count_8                    refuses                                       entry_out_of_block
count_max (2**32-1)        refuses                                       count_exceeds_file
other_offset_0             refuses                                       dialect_conflict (sgd),
                                                                         slot_size_mismatch
weight_entry_0 (W1)        refuses (an FC weight entry must be present)  model_mismatch (sgd),
                                                                         slot_without_weight
sgd_m_offset_set           refuses (SGD with a non-zero m or v offset)   dialect_conflict
adam_m_entry_0             refuses (m entry 0 where the weight is)       slot_size_mismatch
session_kind adam in sgd   refuses (m, v offsets non-zero in SGD)        ok (reports adam)
session_kind sgd in adam   ACCEPTS (weights loaded, Adam starts afresh)  ok (reports sgd)
reserved_nonzero           ACCEPTS                                       reserved_nonzero
trailing_byte              ACCEPTS                                       trailing_bytes
truncated_by_1             ACCEPTS (reads a byte past its buffer)        truncated_file
weight_into_header         ACCEPTS (imports header bytes as weights)     entry_out_of_block
weight_past_end (+64)      ACCEPTS (imports heap memory as weights)      offset_out_of_bounds
weight_far_past_end        CRASHES (SIGSEGV)                             offset_out_of_bounds
other_offset_far           CRASHES (SIGSEGV)                             truncated_file
input_entry_set            ACCEPTS (entries of non-weights not read)     model_mismatch (sgd),
                                                                         dialect_conflict
adam_v_offset_0            ACCEPTS (m, v skipped: Adam starts afresh)    optimizer_layout
adam_m_table_far           CRASHES (SIGSEGV)                             offset_out_of_bounds
adam_m_entry_far           CRASHES (SIGSEGV)                             offset_out_of_bounds
=========================  ============================================  ======================

Rows in capitals are the findings: the runtime imports whatever its offsets point at (the
header, memory past its buffer), ignores the reserved byte, trailing bytes and a short file, and
is killed by SIGSEGV where an offset points far away. The fuzz regression corpus
(tests/corpus, 68 cases when this was written), loaded into an SGD and an Adam run of fc2: it
refuses every case but the empty file, which crashes it (SIGSEGV: the magic is read through the
empty vector's null ``data()``).

WOF files given as ``wof_ptr`` (test_wof_validation_result_is_ignored): the runtime's WOF reader
checks the magic, the version and the count, but the importer ignores what it says, so a WOF
file with a wrong magic, version 2 or a wrong count is used as the weights; an absent weight
entry falls back to the model's buffer, an entry 64 bytes past the end imports heap memory, one
far past the end is a SIGSEGV at inference.

The test asserts the runtime's column per variant (``VARIANTS``), that every file the runtime
refuses or crashes on is refused by ``load`` given the model (with the session rows: a valid
file for the other optimizer, whose kind ``load`` reports), and the same for every case of the
fuzz regression corpus (tests/corpus) loaded into both an SGD and an Adam session.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.errors import CheckpointError
from onert_checkpoint.tools.cli import main as cli_main

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
N = 7  # fc2.circle's tensor count
W1 = 1  # circle index of the first layer's weights (offset 120)
FAR = 0x7FFF0000  # an offset ~2 GiB past any buffer: unmapped


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


def _entry(index: int) -> int:
    return 20 + 4 * index


@dataclass(frozen=True)
class Variant:
    name: str
    base: str  # the runtime's own file it is made from: "sgd" or "adam"
    mutate: Callable[[bytes], bytes]
    micro: str  # "accepts", "refuses" or "crashes"
    ours: str  # error code of load(file, model=fc2.circle), or "ok"
    session: str | None = None  # the run's optimizer when it is not the base's

    @property
    def id(self) -> str:
        return f"{self.base}-{self.name}"

    @property
    def session_kind(self) -> str:
        return self.session or self.base


def _both(name: str, mutate: Callable[[bytes], bytes], micro: str,
          ours: str | dict[str, str]) -> list[Variant]:
    """The variant of both base files; ``ours`` per base kind when the codes differ."""
    return [
        Variant(name, kind, mutate, micro, ours if isinstance(ours, str) else ours[kind])
        for kind in ("sgd", "adam")
    ]


VARIANTS: list[Variant] = [
    *_both("intact", lambda r: r, "accepts", "ok"),
    *_both("step_epoch_rewritten", lambda r: r[:-8] + struct.pack("<II", 7, 3), "accepts", "ok"),
    *_both("bad_magic", lambda r: _byte(r, 0, 0x52), "refuses", "bad_magic"),
    *_both("schema_2", lambda r: _byte(r, 2, 2), "refuses", "header_checksum"),
    *_both("count_6", lambda r: _put(r, 16, N - 1), "refuses", "unreferenced_bytes"),
    *_both("count_8", lambda r: _put(r, 16, N + 1), "refuses", "entry_out_of_block"),
    *_both("count_0", lambda r: _put(r, 16, 0), "refuses", "unreferenced_bytes"),
    *_both("count_max", lambda r: _put(r, 16, 0xFFFFFFFF), "refuses", "count_exceeds_file"),
    *_both("other_offset_0", lambda r: _put(r, 12, 0), "refuses",
           {"sgd": "dialect_conflict", "adam": "slot_size_mismatch"}),
    *_both("weight_entry_0", lambda r: _put(r, _entry(W1), 0), "refuses",
           {"sgd": "model_mismatch", "adam": "slot_without_weight"}),
    Variant("sgd_m_offset_set", "sgd", lambda r: _put(r, 4, _u32(r, 12)), "refuses",
            "dialect_conflict"),
    Variant("adam_m_entry_0", "adam", lambda r: _put(r, _u32(r, 4) + 4 * W1, 0), "refuses",
            "slot_size_mismatch"),
    Variant("session_kind", "adam", lambda r: r, "refuses", "ok", session="sgd"),
    Variant("session_kind", "sgd", lambda r: r, "accepts", "ok", session="adam"),
    *_both("reserved_nonzero", lambda r: _byte(r, 3, 1), "accepts", "reserved_nonzero"),
    *_both("trailing_byte", lambda r: r + b"\0", "accepts", "trailing_bytes"),
    *_both("truncated_by_1", lambda r: r[:-1], "accepts", "truncated_file"),
    *_both("weight_into_header", lambda r: _put(r, _entry(W1), 4), "accepts",
           "entry_out_of_block"),
    *_both("weight_past_end", lambda r: _put(r, _entry(W1), len(r) + 64), "accepts",
           "offset_out_of_bounds"),
    *_both("weight_far_past_end", lambda r: _put(r, _entry(W1), FAR), "crashes",
           "offset_out_of_bounds"),
    *_both("other_offset_far", lambda r: _put(r, 12, FAR), "crashes", "truncated_file"),
    *_both("input_entry_set", lambda r: _put(r, _entry(0), 48), "accepts",
           {"sgd": "model_mismatch", "adam": "dialect_conflict"}),
    Variant("adam_v_offset_0", "adam", lambda r: _put(r, 8, 0), "accepts", "optimizer_layout"),
    Variant("adam_m_table_far", "adam", lambda r: _put(r, 4, FAR), "crashes",
            "offset_out_of_bounds"),
    Variant("adam_m_entry_far", "adam", lambda r: _put(r, _u32(r, 4) + 4 * W1, FAR), "crashes",
            "offset_out_of_bounds"),
]

IDS = [v.id for v in VARIANTS]
assert len(set(IDS)) == len(IDS)


def _our_code(raw: bytes, model: Path) -> str:
    try:
        oc.load(raw, model=model)
    except CheckpointError as err:
        return err.code
    return "ok"


@pytest.fixture(scope="module")
def real(micro_sources: Path) -> Path:
    return micro_sources / "real-files"


def _file(real: Path, variant: Variant) -> bytes:
    return variant.mutate((real / f"ckpt_{variant.base}.bin").read_bytes())


@pytest.fixture(scope="module")
def outcomes(micro_driver: Path, real: Path, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, object]:
    from micro.peer import MicroPeer

    peer = MicroPeer(micro_driver, tmp_path_factory.mktemp("micro-malformed"))
    model = peer.file("fc2.circle", (real / "fc2.circle").read_bytes())
    cases = [(v.id, v.session_kind, _file(real, v)) for v in VARIANTS]
    return dict(zip(IDS, peer.load_outcomes(model, cases)))


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_what_onert_micro_does(variant: Variant, outcomes: dict[str, object]) -> None:
    outcome = outcomes[variant.id]
    assert outcome.status == variant.micro, outcome  # type: ignore[attr-defined]


def test_every_file_onert_micro_refuses_is_refused_by_us(
    outcomes: dict[str, object], real: Path
) -> None:
    model = real / "fc2.circle"
    missed = []
    for v in VARIANTS:
        if outcomes[v.id].status == "accepts":  # type: ignore[attr-defined]
            continue
        raw = _file(real, v)
        if v.session is not None:  # valid, for the other optimizer: we report its kind
            if oc.load(raw, model=model).optimizer.kind == v.session_kind:
                missed.append(v.id)
        elif _our_code(raw, model) == "ok":
            missed.append(v.id)
    assert missed == []


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_what_load_says(variant: Variant, real: Path) -> None:
    """Our column: the intact files and the session rows read; every other variant is refused
    given the model (onert-micro accepting one is no proof of validity)."""
    assert _our_code(_file(real, variant), real / "fc2.circle") == variant.ours


def _corpus_cases() -> list[tuple[str, bytes]]:
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    return [(case["name"], (CORPUS / "files" / case["file"]).read_bytes())
            for case in manifest["cases"]]


def test_corpus_refusals_are_ours(micro_driver: Path, real: Path,
                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every corpus file onert-micro refuses or crashes on (in an SGD or an Adam run of fc2),
    ``load`` refuses given fc2.circle, or reads as the other optimizer's file."""
    from micro.peer import MicroPeer

    peer = MicroPeer(micro_driver, tmp_path_factory.mktemp("micro-corpus"))
    model = peer.file("fc2.circle", (real / "fc2.circle").read_bytes())
    cases = _corpus_cases()
    assert len(cases) > 50
    jobs = [(f"{kind}-{k}", kind, raw) for k, (_, raw) in enumerate(cases)
            for kind in ("sgd", "adam")]
    results = peer.load_outcomes(model, jobs)
    missed, tally = [], {}
    for (job, kind, raw), outcome in zip(jobs, results):
        tally[outcome.status] = tally.get(outcome.status, 0) + 1
        if outcome.status == "accepts":
            continue
        try:
            ckpt = oc.load(raw, model=model)
        except CheckpointError:
            continue
        if ckpt.revision != "v1":
            continue  # a valid schema-2 file: not onert-micro's format (it checks version 1)
        if ckpt.optimizer is None or ckpt.optimizer.kind == kind:
            missed.append((cases[int(job.split("-")[1])][0], kind, outcome))
    assert missed == []
    assert tally.get("refuses", 0) > 0
    # the empty file: loadCheckpoint reads the magic through the empty vector's null data()
    empty = [o for (job, _, raw), o in zip(jobs, results) if raw == b""]
    assert [o.status for o in empty] == ["crashes", "crashes"]


# the weight-only format, given as wof_ptr -------------------------------------------------------

#: (name, mutation of a WOF file written by this library for fc2 (N = 7; W1's entry at 12),
#: what inference used: "wof" = the file's weights, "mixed" = anything else that ran,
#: "crashes" = killed by a signal; and what ``load(file, model=fc2)`` says)
WOF_VARIANTS: list[tuple[str, Callable[[bytes], bytes], str, str]] = [
    ("intact", lambda r: r, "wof", "ok"),
    ("bad_magic", lambda r: _byte(r, 0, 0x52), "wof", "bad_magic"),
    ("version_2", lambda r: _byte(r, 2, 2), "wof", "header_checksum"),
    ("reserved_nonzero", lambda r: _byte(r, 3, 1), "wof", "reserved_nonzero"),
    ("count_8", lambda r: _put(r, 4, N + 1), "wof", "entry_out_of_block"),
    ("w1_entry_0", lambda r: _put(r, 8 + 4 * W1, 0), "mixed", "model_mismatch"),
    ("w1_past_end", lambda r: _put(r, 8 + 4 * W1, len(r) + 64), "mixed",
     "offset_out_of_bounds"),
    ("w1_far_past_end", lambda r: _put(r, 8 + 4 * W1, FAR), "crashes", "offset_out_of_bounds"),
]


def test_wof_validation_result_is_ignored(micro, real: Path) -> None:
    """onert-micro's WOF reader checks the magic, the version and the count
    (OMWeightOnlyFormatReader::validate), but the importer drops the status it returns
    (OMRuntimeModule::importModel calls setWofFile without looking at it): with asserts
    compiled out, a WOF file with a wrong magic, version or count is used as the weights. An
    absent weight entry falls back to the model's own buffer for that tensor (valid alone,
    SPEC section 5 allows absent entries; given the model, ``load`` reports the weight
    missing)."""
    model = micro.file("fc2.circle", (real / "fc2.circle").read_bytes())
    ckpt = micro.file("c.ckpt", (real / "ckpt_sgd.bin").read_bytes())
    wof = micro.folder / "c.wof"
    assert cli_main(["convert", str(ckpt), str(wof), "--to", "wof", "--allow-lossy"]) == 0
    base = wof.read_bytes()
    probe = micro.file("p.f32", (np.arange(12, dtype=np.float32) / 7 - 0.8).reshape(3, 4))

    def infer(extra: dict[str, Path]) -> tuple[int, bytes | None]:
        out = micro.folder / "o.f32"
        out.unlink(missing_ok=True)
        done = micro.run(model=model, opt="sgd", infer=probe, out=out, check=False,
                         memory=512 << 20, cpu_seconds=10, **extra)
        return done.returncode, out.read_bytes() if out.exists() else None

    _, with_file = infer({"wof": wof})
    _, with_model = infer({})
    assert with_file != with_model
    seen, ours = {}, {}
    for name, mutate, _, _ in WOF_VARIANTS:
        raw = mutate(base)
        status, out = infer({"wof": micro.file(f"{name}.wof", raw)})
        seen[name] = ("crashes" if status < 0 else "wof" if out == with_file else "mixed")
        ours[name] = _our_code(raw, model)
    assert seen == {name: runtime for name, _, runtime, _ in WOF_VARIANTS}
    assert ours == {name: code for name, _, _, code in WOF_VARIANTS}
