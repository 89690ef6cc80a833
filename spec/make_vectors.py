"""Produce the conformance vectors of spec/vectors/: the one command behind that folder.

    python spec/make_vectors.py                 # rewrite spec/vectors/
    python spec/make_vectors.py --out DIR       # write them into DIR instead (tests use this)
    python spec/make_vectors.py --hexdump FILE  # the annotated hex dump of SPEC.md's worked example

Every vector is a file ``<name>.ckpt`` beside ``<name>.json``:

* a valid vector's JSON is the description of ``onert-ckpt info --json`` (spec/SPEC.md, "The JSON
  description"); the script asserts the revision and dialect it was built to have;
* an invalid vector's JSON is ``{"error": {"code", "field", "offset"}}``: the first rule of
  spec/SPEC.md the file breaks, written down here from the specification, not copied from any
  reader. The script then runs the Python library on every vector and prints each disagreement
  (the library is a reader under test like any other; tests/spec/test_vectors.py lists the known
  ones).

Valid files come from the library's own writer (``onert_checkpoint.to_bytes``) or are the real
onert exports of tests/data/real-onert/; invalid ones are valid files with deliberate corruption
(a patched u32, a cut, an appended byte). Every one is a row of a table (``CASE_TABLES``): a
``Case`` (spec/vector_cases.py) is a base file, a patch of named places (``tensors[2].rank``,
``tensors[1].order``, ``tensors[1].range.end``, ``range_index.start[1]``, at the offsets of the
generated layout) and the expected error; ``apply_table`` builds them and
tests/spec/test_vector_cases.py checks each row's field and offset.
Nothing depends on time, randomness or the machine, so a second run writes identical bytes
(tests/spec/test_vectors.py checks it).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onert_checkpoint_generated.layout import (
    MAX_KEY_LEN,
    MAX_NAME_LEN,
    MAX_RANK,
    MAX_SECTIONS,
    MAX_SLOTS,
    MAX_STATE_ENTRIES,
    MAX_TENSORS,
    MAX_VALUE_LEN,
    OptimizerHead,
    OptimizerKind,
    Origin,
    SectionKind,
    V1Header,
    V3DataBlocksHead,
    V3RangeIndexHead,
    V3TensorsHead,
    ValueType,
    WofHeader,
)
from onert_checkpoint_generated.layout import V3_DATA_BLOCKS_KIND as DATA_BLOCKS_KIND
from onert_checkpoint_generated.layout import V3_MAX_BLOCK_SHIFT as MAX_BLOCK_SHIFT
from onert_checkpoint_generated.layout import V3_MAX_GROUP_SHIFT as MAX_GROUP_SHIFT
from onert_checkpoint_generated.layout import V3_MIN_BLOCK_SHIFT as MIN_BLOCK_SHIFT
from onert_checkpoint_generated.layout import V3_MIN_GROUP_SHIFT as MIN_GROUP_SHIFT
from onert_checkpoint_generated.layout import V3_NO_DTYPE as NO_DTYPE
from onert_checkpoint_generated.layout import V3_NO_MODEL_INDEX as NO_MODEL_INDEX
from onert_checkpoint_generated.layout import V3_NO_SHAPE as NO_SHAPE
from onert_checkpoint_generated.layout import V3_RANGE_INDEX_KIND as RANGE_INDEX_KIND

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.layout import Schema1Layout, Schema2Layout, WofLayout

sys.path.insert(0, str(Path(__file__).resolve().parent))  # spec/vector_cases.py, beside this
from vector_cases import (
    NO_STATE,
    V1,
    V2,
    Add,
    Append,
    At,
    Case,
    Copy,
    Cut,
    Places,
    V1Places,
    V2Places,
    V3Places,
    WofPlaces,
    Xor,
    expected_offset,
    patched,
    put,
    u32,
    u64,
)

SPEC = Path(__file__).resolve().parent
ROOT = SPEC.parent
VECTORS = SPEC / "vectors"
REAL = ROOT / "tests" / "data" / "real-onert"
U32_MAX = 0xFFFFFFFF


# ------------------------------------------------------------------------------------------------
# The vector list


@dataclass(frozen=True)
class Vector:
    name: str
    data: bytes
    rule: str  # what the vector shows, for the README index
    revision: str | None = None  # valid vectors: the revision and dialect they must read as
    dialect: str | None = None
    error: tuple[str, str, int] | None = None  # invalid vectors: (code, field, offset)
    #: a valid vector whose description is written here from the spec, because the library
    #: cannot produce it (a known library bug, listed in tests/spec/test_vectors.py)
    description: dict | None = None

    @property
    def valid(self) -> bool:
        return self.error is None


ALL: list[Vector] = []


def valid(name: str, data: bytes, rule: str, revision: str, dialect: str | None) -> None:
    ALL.append(Vector(name, bytes(data), rule, revision=revision, dialect=dialect))


def invalid(name: str, data: bytes, rule: str, code: str, field: str, offset: int) -> None:
    ALL.append(Vector(f"invalid-{name}", bytes(data), rule, error=(code, field, offset)))


# ------------------------------------------------------------------------------------------------
# Building content with the library's writer


def values(count: int, seed: int) -> np.ndarray:
    """``count`` float32 values that differ per seed (so every entry has its own CRC-32)."""
    return (
        (np.arange(count, dtype=np.float32) + 1.0) * np.float32(0.125) + np.float32(seed)
    ).astype("<f4")


def typed(index: int, data: np.ndarray, **kw) -> Tensor:
    """A tensor whose record says exactly the ``dtype`` and ``shape`` given (a Tensor built
    from a typed array takes the array's where none is given)."""
    t = Tensor(index=index, data=data, **kw)
    t.dtype, t.shape = kw.get("dtype"), kw.get("shape")
    return t


def tensors(counts: dict[int, int], order: list[int] | None = None) -> list[Tensor]:
    """Weight tensors ``index -> element count``; ``order`` fixes the storage order (onert-micro's
    saver appends in reverse operator order), through the ``offset`` the writer sorts by."""
    rank = {i: k for k, i in enumerate(order)} if order else {}
    return [typed(index=i, data=values(n, i), offset=rank.get(i)) for i, n in counts.items()]


def adam(
    ts: list[Tensor],
    *,
    empty: tuple[int, ...] = (),
    empty_m: tuple[int, ...] = (),
    empty_v: tuple[int, ...] = (),
) -> Optimizer:
    """Adam state for every tensor of ``ts``, stored in the same order; ``empty`` indices get
    zero-length m and v entries (a tensor without optimizer variables, as onert writes it),
    ``empty_m`` / ``empty_v`` a zero-length entry in one slot only."""
    slots: dict[str, dict[int, Buffer]] = {"m": {}, "v": {}}
    for base, slot, only in ((100, "m", empty_m), (200, "v", empty_v)):
        for t in ts:
            n = 0 if t.index in empty or t.index in only else t.data.size
            slots[slot][t.index] = Buffer(t.index, values(n, base + t.index), offset=t.offset)
    return Optimizer("adam", slots=slots)


def write(
    ts: list[Tensor],
    optimizer: Optimizer | None = None,
    *,
    dialect: str | None,
    step: int = 0,
    epoch: int = 0,
    num_entries: int | None = None,
    footerless: bool = False,
) -> bytes:
    ckpt = Checkpoint(
        tensors=ts,
        optimizer=optimizer or Optimizer("sgd"),
        state=TrainingState() if footerless else TrainingState(step=step, epoch=epoch),
        layout=Schema1Layout("v1", num_entries=num_entries,
                             quirks=("footerless",) if footerless else ()),
    )
    return oc.to_bytes(ckpt, revision="v1", dialect=dialect)


def write_wof(ts: list[Tensor], num_entries: int | None = None) -> bytes:
    ckpt = Checkpoint(tensors=ts, optimizer=None, state=TrainingState(),
                      layout=WofLayout("wof", num_entries=num_entries))
    return oc.to_bytes(ckpt, revision="wof", dialect=None)


# ------------------------------------------------------------------------------------------------
# Invalid vectors as data (spec/vector_cases.py): the tables are applied here


def apply_table(table: str) -> None:
    """An invalid vector ``invalid-<prefix><name>`` per case of CASE_TABLES[table]."""
    prefix, places, cases = CASE_TABLES[table]
    for case in cases():
        data = patched(case, places)
        offset = expected_offset(case, places)
        invalid(f"{prefix}{case.name}", data, case.note, case.code, case.field, offset)


# ------------------------------------------------------------------------------------------------
# The base files every corruption starts from

# onert: three trainable tensors of 4, 2 and 3 float32 (16, 8 and 12 bytes).
ONERT_COUNTS = {0: 4, 1: 2, 2: 3}
ONERT_SGD = write(tensors(ONERT_COUNTS), dialect="onert", step=7)
ONERT_ADAM = write(tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS)), dialect="onert", step=7)
# onert-micro: a model of 6 tensors of which 1, 3 and 4 are saved, stored in the saver's order
# 4, 3, 1 (last operator first).
MICRO_COUNTS = {1: 4, 3: 2, 4: 3}
MICRO_ORDER = [4, 3, 1]
MICRO_SGD = write(
    tensors(MICRO_COUNTS, MICRO_ORDER), dialect="onert-micro", step=5, epoch=2, num_entries=6
)
MICRO_ADAM = write(
    tensors(MICRO_COUNTS, MICRO_ORDER),
    adam(tensors(MICRO_COUNTS, MICRO_ORDER)),
    dialect="onert-micro",
    step=5,
    epoch=2,
    num_entries=6,
)
# WOF: a model of 5 tensors of which 0, 2 and 3 have weights here.
WOF_COUNTS = {0: 4, 2: 2, 3: 3}
WOF = write_wof(tensors(WOF_COUNTS), num_entries=5)


def real(name: str) -> bytes:
    return (REAL / name).read_bytes()


# ------------------------------------------------------------------------------------------------
# Valid vectors


def make_valid() -> None:
    on, mi = "onert", "onert-micro"
    valid(
        "v1-real-onert-sgd",
        real("fc2-sgd-step8.ckpt"),
        "real onert 0.1.0 export, SGD (opt1 == other), 2 epochs of 4 steps",
        "v1",
        on,
    )
    valid(
        "v1-real-onert-adam",
        real("fc2-adam-step8.ckpt"),
        "real onert 0.1.0 export, Adam; fits both dialects",
        "v1",
        None,
    )

    for path in sorted(REAL.glob("*.ckpt")):
        if path.name in ("fc2-sgd-step8.ckpt", "fc2-adam-step8.ckpt"):
            continue
        sgd = "-sgd-" in path.name  # onert writes its data in table order: Adam fits both
        valid(
            f"v1-real-onert-{path.stem}",
            path.read_bytes(),
            f"real onert 0.1.0 export {path.name} (tests/data/real-onert/)",
            "v1",
            "onert" if sgd else None,
        )
    valid(
        "v1-onert-sgd", ONERT_SGD, "onert SGD: every entry present, ofs_opt1 == ofs_other", "v1", on
    )
    valid(
        "v1-onert-adam",
        ONERT_ADAM,
        "onert Adam, data in table order: fits both dialects",
        "v1",
        None,
    )
    valid(
        "v1-onert-sgd-one-tensor",
        write(tensors({0: 5}), dialect=on, step=1),
        "onert SGD, N = 1",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-n0",
        write([], dialect=on),
        "onert SGD, N = 0: header and footer only, ofs_opt1 == ofs_other == 20",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-empty-first",
        write(tensors({0: 0, 1: 2, 2: 3}), dialect=on),
        "zero-length first entry (its offset equals the next one)",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-empty-middle",
        write(tensors({0: 4, 1: 0, 2: 3}), dialect=on),
        "zero-length entry in the middle",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-empty-last",
        write(tensors({0: 4, 1: 2, 2: 0}), dialect=on),
        "zero-length last entry (its offset equals the block end)",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-all-empty",
        write(tensors({0: 0, 1: 0}), dialect=on),
        "every entry zero-length: all offsets equal the block end",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-same-sizes",
        write(tensors({0: 3, 1: 3, 2: 3, 3: 3}), dialect=on),
        "equal sizes (an onert file whose entries cannot be told apart without the runtime's "
        "order)",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-step-max",
        write(tensors(ONERT_COUNTS), dialect=on, step=U32_MAX),
        "step = 2**32-1",
        "v1",
        on,
    )
    valid(
        "v1-onert-sgd-opt1-zero",
        put(ONERT_SGD, 4, 0),
        "an onert SGD file with ofs_opt1 set to 0 (onert accepts it): onert-micro's convention",
        "v1",
        mi,
    )
    valid(
        "v1-onert-adam-empty-slots",
        write(tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS), empty=(1,)), dialect=on),
        "onert Adam with zero-length m and v entries for tensor 1 (no optimizer variables)",
        "v1",
        on,
    )
    valid(
        "v1-onert-adam-all-slots-empty",
        write(tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS), empty=(0, 1, 2)), dialect=on),
        "onert Adam whose m and v entries are all zero-length",
        "v1",
        on,
    )
    valid(
        "v1-adam-n0",
        write([], Optimizer("adam"), dialect=on),
        "Adam, N = 0: ofs_opt1 == ofs_opt2 == ofs_other == 20; fits both dialects",
        "v1",
        None,
    )
    valid(
        "v1-onert-footerless-sgd",
        write(tensors(ONERT_COUNTS), dialect=on, footerless=True),
        "earlier onert exporter: ofs_other == 0, no footer, SGD ofs_opt1 == end of file",
        "v1",
        on,
    )
    valid(
        "v1-onert-footerless-adam",
        write(tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS)), dialect=on, footerless=True),
        "earlier onert exporter, Adam: the v block ends at the end of the file",
        "v1",
        on,
    )
    valid(
        "v1-onert-footerless-n0",
        write([], dialect=on, footerless=True),
        "earlier onert exporter, N = 0: a 20-byte file",
        "v1",
        on,
    )

    valid(
        "v1-micro-sgd",
        MICRO_SGD,
        "onert-micro SGD: absent entries (0), storage order 4, 3, 1, ofs_opt1 == ofs_opt2 == 0",
        "v1",
        mi,
    )
    valid(
        "v1-micro-adam",
        MICRO_ADAM,
        "onert-micro Adam: absent entries, m and v stored in the same shuffled order",
        "v1",
        mi,
    )
    valid(
        "v1-micro-sgd-table-order",
        write(tensors(MICRO_COUNTS), dialect=mi, step=3, epoch=1, num_entries=6),
        "onert-micro SGD with data in table order",
        "v1",
        mi,
    )
    valid(
        "v1-micro-adam-all-present",
        write(
            tensors(ONERT_COUNTS, [2, 1, 0]),
            adam(tensors(ONERT_COUNTS, [2, 1, 0])),
            dialect=mi,
            step=9,
            epoch=3,
        ),
        "onert-micro Adam, every tensor saved, reverse storage order",
        "v1",
        mi,
    )
    valid(
        "v1-null-adam",
        write(tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS)), dialect=mi, step=9, epoch=3),
        "Adam, all present, table order, epoch 3: fits both dialects (dialect null)",
        "v1",
        None,
    )
    valid(
        "v1-micro-sgd-n0",
        write([], dialect=mi, step=1, epoch=1),
        "onert-micro SGD, N = 0",
        "v1",
        mi,
    )
    valid(
        "v1-micro-sgd-all-absent",
        write([], dialect=mi, num_entries=4, step=2),
        "onert-micro SGD, N = 4, no tensor saved: a table of zeros",
        "v1",
        mi,
    )
    valid(
        "v1-micro-adam-all-absent",
        write([], Optimizer("adam"), dialect=mi, num_entries=3, step=2),
        "Adam, N = 3, no tensor saved: three tables of zeros; fits only onert-micro",
        "v1",
        mi,
    )
    valid(
        "v1-micro-step-epoch-max",
        write(
            tensors(MICRO_COUNTS, MICRO_ORDER),
            dialect=mi,
            step=U32_MAX,
            epoch=U32_MAX,
            num_entries=6,
        ),
        "step = epoch = 2**32-1",
        "v1",
        mi,
    )
    valid(
        "v1-micro-sparse-large-n",
        write(tensors({7: 2, 63: 1}, [63, 7]), dialect=mi, num_entries=64),
        "onert-micro, N = 64 with two tensors saved",
        "v1",
        mi,
    )
    valid(
        "v1-micro-empty-entry",
        write(tensors({1: 4, 2: 0, 3: 2}, [3, 2, 1]), dialect=mi, num_entries=5),
        "onert-micro with a zero-length present entry (shares its offset with the next one)",
        "v1",
        mi,
    )
    # onert-micro saves a weight shared by two trainable operators twice; its table entry keeps
    # the second copy, so the first copy is counted into the entry stored just before it.
    # onert-micro saves a weight shared by two trainable operators twice; its table entry keeps
    # the second copy, and the first copy is counted into the entry stored just before it.
    shared = double_save(
        write(tensors({1: 4, 3: 2}, [1, 3]), dialect=mi, step=4, epoch=1, num_entries=5), 3
    )
    valid(
        "v1-micro-shared-weight-absorbed",
        shared,
        "onert-micro's double save of a shared weight: tensor 1's size silently includes the "
        "first copy of tensor 3 (only a model check can tell)",
        "v1",
        mi,
    )

    valid("wof", WOF, "WOF: N = 5, tensors 0, 2, 3", "wof", None)
    valid(
        "wof-shuffled",
        write_wof(tensors(WOF_COUNTS, [3, 0, 2]), num_entries=5),
        "WOF, data out of table order",
        "wof",
        None,
    )
    valid("wof-n0", write_wof([]), "WOF, N = 0: the 8-byte header alone", "wof", None)
    valid(
        "wof-all-absent",
        write_wof([], num_entries=3),
        "WOF, N = 3, every entry absent",
        "wof",
        None,
    )
    valid(
        "wof-empty-entries",
        write_wof(tensors({0: 0, 1: 2, 2: 0}), num_entries=4),
        "WOF with zero-length entries",
        "wof",
        None,
    )
    valid("wof-one-tensor", write_wof(tensors({0: 7})), "WOF, N = 1", "wof", None)


# ------------------------------------------------------------------------------------------------
# Invalid vectors: one or more per rule of spec/SPEC.md


def make_invalid() -> None:
    for table in ("v1-header", "v1-entries", "wof", "v1-order"):
        apply_table(table)


def v1_header_cases() -> list[Case]:
    """Detection steps 1 to 4 and schema 1's rules 1 to 7: cuts, appended bytes and header
    fields (onert_checkpoint_v1.ksy's, at the generated layout's offsets)."""
    sgd, adam_, micro = ONERT_SGD, ONERT_ADAM, MICRO_SGD
    fsgd = write(tensors(ONERT_COUNTS), dialect="onert", footerless=True)
    # A small ofs_opt1 makes a large file WOF-shaped (detection 5.4), so rule 7's first is small.
    tiny = {0: 1, 1: 1, 2: 1}
    tiny_adam = write(tensors(tiny), adam(tensors(tiny)), dialect="onert")
    fl_adam = write(
        tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS)), dialect="onert", footerless=True
    )
    entries = (len(sgd) - V1Header.SIZE) // V1Places.ENTRY  # as many as the file holds
    # fmt: off
    return [
        # Reading a file, steps 1-4
        Case("empty", b"", {}, "truncated_header", "header", "header", "detection 1: S < 2"),
        Case("one-byte", b"\xad", {},
             "truncated_header", "header", "header", "detection 1: S < 2"),
        Case("magic-only", b"\xad\x01", {}, "truncated_header", "header", "header",
             "detection 3: the version byte is missing"),
        Case("bad-magic-zero", bytes(20), {},
             "bad_magic", "magic", "magic", "detection 2: magic 0"),
        Case("bad-magic-swapped", sgd, {"magic": 0xAD01}, "bad_magic", "magic", "magic",
             "detection 2: magic byte-swapped (big-endian writer)"),
        Case("bad-magic-two-bytes", b"PK", {}, "bad_magic", "magic", "magic",
             "detection 2: two bytes, not the magic"),
        Case("version-0", sgd, {"version": 0}, "unsupported_version", "version", "version",
             "detection 4: version byte 0"),
        Case("version-4", sgd, {"version": 4}, "unsupported_version", "version", "version",
             "detection 4: version byte 4 (3 is schema 3: vector invalid-v3-v1-bytes-version-3)"),
        Case("version-255", sgd, {"version": 255}, "unsupported_version", "version", "version",
             "detection 4: version byte 255"),
        # Schema 1, rule 1
        Case("v1-header-19", sgd, (Cut(19),), "truncated_header", "header", "header",
             "rule 1: a 19-byte file (not WOF-shaped)"),
        Case("v1-header-3", sgd, (Cut(3),), "truncated_header", "header", "header",
             "rule 1 (and WOF): a 3-byte file"),
        Case("v1-header-7", sgd, (Cut(7),), "truncated_header", "header", "header",
             "rule 1 (and WOF): a 7-byte file"),
        # rule 2
        Case("v1-reserved", sgd, {"reserved": 1}, "reserved_nonzero", "reserved", "reserved",
             "rule 2: reserved byte 1"),
        Case("v1-micro-reserved", micro, {"reserved": 0xFF},
             "reserved_nonzero", "reserved", "reserved", "rule 2: reserved byte 0xff"),
        # rule 3
        Case("v1-count-max", sgd, {"num_entries": U32_MAX},
             "count_exceeds_file", "num_entries", "num_entries",
             "rule 3: N = 2**32-1 (checked before any allocation)"),
        Case("v1-count-one-too-many", sgd, {"num_entries": entries + 1},
             "count_exceeds_file", "num_entries", "num_entries",
             "rule 3: the table would end 4 bytes past the file"),
        Case("v1-count-overflow-32", sgd, {"num_entries": 0x40000000},
             "count_exceeds_file", "num_entries", "num_entries",
             "rule 3: 4N wraps to 0 in 32-bit arithmetic"),
        # rule 4
        Case("v1-footer-cut", sgd, (Cut(-1),), "truncated_file", "ofs_other", "ofs_other",
             "rule 4: the last footer byte is missing"),
        Case("v1-micro-footer-cut", micro, (Cut(-4),),
             "truncated_file", "ofs_other", "ofs_other", "rule 4: the epoch is missing"),
        Case("v1-other-past-end", adam_, {"ofs_other": len(adam_)},
             "truncated_file", "ofs_other", "ofs_other", "rule 4: ofs_other == S"),
        Case("v1-other-max", adam_, {"ofs_other": U32_MAX},
             "truncated_file", "ofs_other", "ofs_other",
             "rule 4: ofs_other = 2**32-1 (no overflow in other + 8)"),
        Case("v1-trailing-byte", sgd, (Append(b"\0"),), "trailing_bytes", "footer", "end",
             "rule 4: one byte after the footer"),
        Case("v1-micro-trailing-8", micro, (Append(bytes(8)),),
             "trailing_bytes", "footer", "end", "rule 4: a second footer"),
        Case("v1-adam-appended-zeros", adam_, (Append(bytes(1000)),),
             "trailing_bytes", "footer", "end",
             "section 3 step 5.3: a valid Adam checkpoint with 1000 zero bytes appended is "
             "WOF-shaped (n = ofs_opt1 fits), yet reports its own trailing_bytes, not a WOF "
             "error"),
        Case("v1-sgd-appended-zeros", sgd, (Append(bytes(4 * len(sgd))),),
             "trailing_bytes", "footer", "end",
             "section 3 step 5.3: the same for onert's SGD (ofs_opt1 = ofs_other)"),
        Case("v1-other-early", adam_, {"ofs_other": Add(-4)},
             "trailing_bytes", "footer", ("*ofs_other", 4), "rule 4: ofs_other 4 bytes early"),
        # rule 5
        Case("v1-adam-opt1-zero", adam_, {"ofs_opt1": 0},
             "optimizer_layout", "ofs_opt1", "ofs_opt1", "rule 5: a v block without an m block"),
        Case("v1-sgd-opt1-random", sgd, {"ofs_opt1": 36},
             "optimizer_layout", "ofs_opt1", "ofs_opt1",
             "rule 5: SGD ofs_opt1 neither 0 nor ofs_other"),
        Case("v1-micro-sgd-opt1-past", micro, {"ofs_opt1": len(micro) + 100},
             "optimizer_layout", "ofs_opt1", "ofs_opt1", "rule 5: SGD ofs_opt1 past the end"),
        Case("v1-footerless-sgd-opt1", fsgd, {"ofs_opt1": 32},
             "optimizer_layout", "ofs_opt1", "ofs_opt1",
             "rule 5: footer-less SGD whose ofs_opt1 is not the end of the file"),
        Case("v1-footerless-sgd-opt1-s-minus-8", fsgd, {"ofs_opt1": len(fsgd) - 8},
             "optimizer_layout", "ofs_opt1", "ofs_opt1",
             "rule 5: footer-less SGD: end is S (there is no footer offset), so S - 8 is "
             "refused"),
        # rule 6
        Case("v1-opt1-past-end", adam_, {"ofs_opt1": len(adam_) + 1},
             "offset_out_of_bounds", "ofs_opt1", "ofs_opt1", "rule 6: ofs_opt1 > S"),
        Case("v1-opt2-max", adam_, {"ofs_opt2": U32_MAX},
             "offset_out_of_bounds", "ofs_opt2", "ofs_opt2", "rule 6: ofs_opt2 = 2**32-1"),
        Case("v1-opt1-opt2-past-end", adam_,
             {"ofs_opt1": len(adam_) + 4, "ofs_opt2": len(adam_) + 8},
             "offset_out_of_bounds", "ofs_opt1", "ofs_opt1",
             "rule 6: both past the end: ofs_opt1 is reported"),
        # rule 7
        Case("v1-opt1-in-weight-table", tiny_adam, {"ofs_opt1": 28},
             "block_order", "ofs_opt1", "ofs_opt1",
             "rule 7: the m block starts inside the weight table (a file too small to be "
             "WOF-shaped)"),
        Case("v1-opt1-in-header-wof-shaped", adam_, {"ofs_opt1": 8},
             "entry_out_of_block", "tensors[2]", "tensors[2]",
             "detection 5.4: ofs_opt1 = 8 makes the file WOF-shaped, so WOF's rule 8 is "
             "reported: its entry 2 is the checkpoint's num_entries, 3", error_as=WofPlaces),
        Case("v1-opt2-in-m-table", adam_, {"ofs_opt2": At("m[1]")},
             "block_order", "ofs_opt2", "ofs_opt2",
             "rule 7: the v block starts inside the m table"),
        Case("v1-opt1-opt2-swapped", adam_,
             {"ofs_opt1": Copy("ofs_opt2"), "ofs_opt2": Copy("ofs_opt1")},
             "block_order", "ofs_opt2", "ofs_opt2", "rule 7: v before m"),
        Case("v1-opt2-near-footer", adam_, {"ofs_opt2": At(("footer", -4))},
             "block_order", "ofs_other", "ofs_other",
             "rule 7: the v table would overlap the footer"),
        Case("v1-sgd-table-over-footer", sgd,
             {"num_entries": (V1(sgd).other - V1Header.SIZE) // V1Places.ENTRY + 1},
             "block_order", "ofs_other", "ofs_other",
             "rule 7: the weight table runs into the footer"),
        Case("v1-footerless-opt2-near-end", fl_adam, {"ofs_opt2": len(fl_adam) - 4},
             "block_order", "header", "header",
             "rule 7, footer-less: the v table would run past the end of the file"),
    ]
    # fmt: on


def v1_entry_cases() -> list[Case]:
    """Schema 1's rules 8 to 11: the offset tables' entries, and the dialect they fit."""
    sgd, adam_, micro, madam = ONERT_SGD, ONERT_ADAM, MICRO_SGD, MICRO_ADAM
    # onert-micro's double save of a shared weight, when the first copy is stored first
    shared = double_save(
        write(tensors({1: 4, 3: 2}, [3, 1]), dialect="onert-micro", step=4, epoch=1, num_entries=5),
        3,
    )
    m_empty_v_full = remove_bytes(adam_, V1(adam_).entry("m", 2), 12)  # m[2] now zero-length
    v_absent = remove_bytes(adam_, V1(adam_).entry("v", 2), 12)  # v[2] now zero-length
    fl = write(tensors(MICRO_COUNTS, MICRO_ORDER), dialect="onert-micro", num_entries=6)
    shuffled_sgd = write(tensors(ONERT_COUNTS, [2, 1, 0]), dialect="onert-micro")
    same = {0: 2, 1: 2, 2: 3}
    empty_slot_shuffled = swap_first_two_weights(
        write(tensors(same), adam(tensors(same), empty=(1,)), dialect="onert")
    )
    # fmt: off
    return [
        # rule 8
        Case("v1-weight-into-header", sgd, {"weights[0]": 4},
             "entry_out_of_block", "weights[0]", "weights[0]",
             "rule 8: a weight entry points into the header"),
        Case("v1-weight-into-table", sgd, {"weights[1]": At("weights[1]")},
             "entry_out_of_block", "weights[1]", "weights[1]",
             "rule 8: a weight entry points into its own table"),
        Case("v1-weight-into-footer", sgd, {"weights[2]": At(("footer", 4))},
             "entry_out_of_block", "weights[2]", "weights[2]",
             "rule 8: a weight entry points into the footer"),
        Case("v1-weight-into-m", adam_, {"weights[2]": At(("m", 4))},
             "entry_out_of_block", "weights[2]", "weights[2]",
             "rule 8: a weight entry points into the m block"),
        Case("v1-m-into-weights", adam_, {"m[0]": 40},
             "entry_out_of_block", "m[0]", "m[0]",
             "rule 8: an m entry points into the weight data"),
        Case("v1-v-into-footer", adam_, {"v[1]": At(("footer", 4))},
             "entry_out_of_block", "v[1]", "v[1]", "rule 8: a v entry points into the footer"),
        Case("v1-micro-m-into-v", madam, {"m[3]": At("v")},
             "entry_out_of_block", "m[3]", "m[3]", "rule 8: an m entry points into the v block"),
        Case("v1-weight-past-end", sgd, {"weights[1]": len(sgd) + 1},
             "offset_out_of_bounds", "weights[1]", "weights[1]",
             "rule 8: a weight entry past the end of the file"),
        Case("v1-weight-max", sgd, {"weights[0]": U32_MAX},
             "offset_out_of_bounds", "weights[0]", "weights[0]",
             "rule 8: a weight entry 2**32-1"),
        Case("v1-m-past-end", adam_, {"m[2]": len(adam_) + 1},
             "offset_out_of_bounds", "m[2]", "m[2]", "rule 8: an m entry past the end"),
        Case("v1-micro-v-past-end", madam, {"v[4]": 0x80000000},
             "offset_out_of_bounds", "v[4]", "v[4]", "rule 8: a v entry 2**31"),
        Case("v1-micro-absent-then-outside", madam, {"weights[0]": 4},
             "entry_out_of_block", "weights[0]", "weights[0]",
             "rule 8: a (formerly absent) entry 0 of an onert-micro table points into the "
             "header"),
        # rule 9
        Case("v1-weight-hole", sgd, {"weights[0]": At(("weights", 4))},
             "unreferenced_bytes", "weights", "weights",
             "rule 9: 4 bytes between the weight table and the first entry"),
        Case("v1-m-hole", adam_, {"m[0]": At(("m", 4))},
             "unreferenced_bytes", "m", "m", "rule 9: a hole at the start of the m data"),
        Case("v1-v-hole", adam_, {"v[0]": At(("v", 16))},
             "unreferenced_bytes", "v", "v", "rule 9: the first v entry skipped"),
        Case("v1-micro-all-absent-with-data", micro,
             {f"weights[{i}]": 0 for i in range(V1(micro).n)},
             "unreferenced_bytes", "weights", "weights",
             "rule 9: every entry absent but the data area is not empty"),
        # the entry stored first; dropping it leaves its bytes to no entry
        Case("v1-micro-first-stored-absent", micro, {f"weights[{MICRO_ORDER[0]}]": 0},
             "unreferenced_bytes", "weights", "weights",
             "rule 9: the entry stored first is marked absent"),
        Case("v1-micro-shared-weight-first", shared, {},
             "unreferenced_bytes", "weights", "weights",
             "rule 9: onert-micro's double save of a shared weight stored first: its first "
             "copy belongs to no entry"),
        # rule 10
        Case("v1-m-without-weight", madam, {"weights[1]": 0},
             "slot_without_weight", "m[1]", "m[1]",
             "rule 10: m[1] present, weights[1] absent (tensor 3 absorbs tensor 1's bytes)"),
        Case("v1-v-without-weight", madam, {"weights[1]": 0, "m[1]": 0},
             "slot_without_weight", "v[1]", "v[1]",
             "rule 10: v[1] present, weights[1] and m[1] absent"),
        Case("v1-m-size", adam_, {"m[1]": Add(-4)},
             "slot_size_mismatch", "m[0]", "m[0]",
             "rule 10: m[0] 4 bytes shorter than weights[0]"),
        Case("v1-v-size", adam_, {"v[2]": Add(4)},
             "slot_size_mismatch", "v[1]", "v[1]",
             "rule 10: v[1] 4 bytes longer than weights[1]"),
        Case("v1-micro-m-size", madam, {"m[3]": Add(4)},
             "slot_size_mismatch", "m[3]", "m[3]",
             "rule 10: onert-micro m[3] 4 bytes short (m[4], stored before it, 4 bytes too "
             "long)"),
        Case("v1-m-empty-v-full", m_empty_v_full, {},
             "slot_size_mismatch", "v[2]", "v[2]",
             "rule 10: m[2] zero-length but v[2] as long as the weight: m and v differ"),
        # rule 11
        Case("v1-absent-with-onert-sgd", micro, {"ofs_opt1": Copy("ofs_other")},
             "dialect_conflict", "header", "header",
             "rule 11: absent entries with onert's SGD ofs_opt1 == ofs_other"),
        Case("v1-footerless-absent", fl, (Cut(-8), ("ofs_other", 0)),
             "dialect_conflict", "header", "header",
             "rule 11: no footer (onert) with absent entries (onert-micro)"),
        Case("v1-footerless-shuffled", shuffled_sgd,
             (Cut(-8), ("ofs_other", 0), ("ofs_opt1", len(shuffled_sgd) - 8)),
             "dialect_conflict", "header", "header",
             "rule 11: no footer (onert) with data out of table order (onert-micro)"),
        Case("v1-shuffled-with-onert-sgd", shuffled_sgd, {"ofs_opt1": Copy("ofs_other")},
             "dialect_conflict", "header", "header",
             "rule 11: data out of table order with onert's SGD ofs_opt1"),
        Case("v1-adam-empty-slot-shuffled", empty_slot_shuffled, {},
             "dialect_conflict", "header", "header",
             "rule 11: a zero-length slot entry (onert) with weights out of table order "
             "(onert-micro)"),
        Case("v1-m-full-v-absent", v_absent, {"v[2]": 0},
             "dialect_conflict", "header", "header",
             "rules 10 and 11: m[2] full and v[2] absent; rule 10 compares m and v only when "
             "both are present, and the absent entry fits no dialect"),
    ]
    # fmt: on


def v1_order_cases() -> list[Case]:
    """Readers must apply the rules in the order of spec/SPEC.md (the first failing rule wins)."""
    sgd, adam_ = ONERT_SGD, ONERT_ADAM
    # fmt: off
    return [
        Case("order-out-of-block-before-out-of-bounds", sgd,
             {"weights[0]": 4, "weights[1]": len(sgd) + 1},
             "entry_out_of_block", "weights[0]", "weights[0]",
             "rule 8 runs entry by entry: weights[0] (into the header) is reported before "
             "weights[1] (past the end)"),
        Case("order-entries-before-sizes", adam_, {"weights[0]": 36, "m[1]": len(adam_) + 4},
             "offset_out_of_bounds", "m[1]", "m[1]",
             "rule 8 is applied to every block before rule 9: m[1] past the end is reported "
             "before the hole in the weights"),
        # index 1: weight and m absent, v present; index 3: m 4 bytes short. Index order decides.
        Case("order-slots-by-index", MICRO_ADAM, {"weights[1]": 0, "m[1]": 0, "m[3]": Add(4)},
             "slot_without_weight", "v[1]", "v[1]",
             "rule 10 runs index by index: v[1] without a weight is reported before m[3]'s "
             "size"),
        Case("order-version-before-size", b"\xad\x01\x07", {},
             "unsupported_version", "version", "version",
             "detection 4 comes before any size rule: a 3-byte file with version 7"),
    ]
    # fmt: on


def wof_cases() -> list[Case]:
    """WOF: a version-1 file that is no valid checkpoint and no valid WOF is reported as WOF when
    it is WOF-shaped (detection 5.4). WOF holds tensors 0, 2 and 3 of 5."""
    n = u32(WOF, WofHeader.num_entries.offset)
    entries = [u32(WOF, WofPlaces(WOF).find(f"tensors[{i}]").pos) for i in range(n)]
    stored_first = min((at, i) for i, at in enumerate(entries) if at)[1]
    short_wof = write_wof(tensors({0: 1}))  # 16 bytes: shorter than a checkpoint header
    # fmt: off
    return [
        Case("wof-reserved", WOF, {"reserved": 1},
             "reserved_nonzero", "reserved", "reserved", "WOF: reserved byte 1"),
        Case("wof-entry-past-end", WOF, {"tensors[4]": len(WOF) + 1},
             "offset_out_of_bounds", "tensors[4]", "tensors[4]",
             "WOF rule 8: an entry past the end of the file"),
        Case("wof-entry-into-table", WOF, {"tensors[2]": At("tensors[1]")},
             "entry_out_of_block", "tensors[2]", "tensors[2]",
             "WOF rule 8: an entry into the offset table"),
        Case("wof-entry-into-header", WOF, {"tensors[1]": 2},
             "entry_out_of_block", "tensors[1]", "tensors[1]",
             "WOF rule 8: a (formerly absent) entry into the header"),
        Case("wof-hole", WOF, {f"tensors[{stored_first}]": At(("tensors.data", 4))},
             "unreferenced_bytes", "tensors", "tensors.data",
             "WOF rule 9: a hole before the first entry"),
        Case("wof-all-absent-with-data", WOF, {f"tensors[{i}]": 0 for i in range(n)},
             "unreferenced_bytes", "tensors", "tensors.data",
             "WOF rule 9: every entry absent but data follows the table"),
        # Not WOF-shaped (the count does not fit): the checkpoint's error is reported. Read as a
        # checkpoint, WOF's entries 1..3 are ofs_opt2, ofs_other and num_entries.
        Case("wof-count-exceeds", WOF, {"num_entries": len(WOF)},
             "count_exceeds_file", "num_entries", "num_entries",
             "detection 5.4: a WOF count too large is not WOF-shaped: the checkpoint error "
             "(rule 3, its num_entries is WOF's entry 2)", error_as=V1Places),
        Case("wof-short-entry-into-header", short_wof, {"tensors[0]": 4},
             "entry_out_of_block", "tensors[0]", "tensors[0]",
             "a 16-byte WOF whose entry points into the header: WOF-shaped, so WOF rule 8"),
    ]
    # fmt: on


# ------------------------------------------------------------------------------------------------
# Schema 2 (spec/SPEC.md section 6)

import crc32c  # noqa: E402  (the library's own dependency)

from onert_checkpoint.format.dtypes import DTYPES  # noqa: E402
from onert_checkpoint.format.model import Section  # noqa: E402


def write_v2(
    ts: list[Tensor],
    optimizer: Optimizer | None = None,
    state: dict | None = None,
    sections: list[Section] | None = None,
) -> bytes:
    ckpt = Checkpoint(
        tensors=ts,
        optimizer=optimizer,
        state=TrainingState(state or {}),
        layout=Schema2Layout("v2", sections=sections or []),
    )
    return oc.to_bytes(ckpt)


def f32(count: int, seed: int) -> np.ndarray:
    return values(count, seed)


# Base files for the corruptions: every section kind, named and unnamed records.
V2_TENSORS = [
    typed(1, f32(4, 1).reshape(2, 2), name="fc1/w", dtype="float32", shape=(2, 2), model_index=3),
    typed(2, f32(2, 2), name="fc1/b", dtype="float32", shape=(2,), model_index=4),
    typed(4, np.arange(25, dtype="<f4"), dtype="float32", shape=(25,)),  # 100 bytes
    typed(6, np.arange(3, dtype="u1")),  # raw bytes, no flag
]
V2_ADAM = Optimizer(
    "adam",
    slots={
        "m": {1: Buffer(1, f32(4, 101)), 2: Buffer(2, f32(2, 102)), 4: Buffer(4, f32(0, 0))},
        "v": {1: Buffer(1, f32(4, 201)), 2: Buffer(2, f32(2, 202)), 6: Buffer(6, f32(1, 206))},
    },
)
V2_STATE = {"step": 12, "epoch": 3, "learning_rate": 0.001, "k1": 7, "k2": "text", "kb": b"\x01"}
V2_FULL = write_v2(V2_TENSORS, V2_ADAM, V2_STATE, [Section(kind=0x80000001, data=b"private")])
V2_CUSTOM = write_v2(
    V2_TENSORS[:2],
    Optimizer("optimizer_9", slots={"aa": {1: Buffer(1, f32(3, 9))}, "ab": {}}),
    {"step": 1},
)
V2_MOMENTUM = write_v2(
    V2_TENSORS[:2],
    Optimizer("sgd_momentum", slots={"momentum": {1: Buffer(1, f32(4, 50))}}),
    {"step": 2},
)


def upgraded(data: bytes) -> bytes:
    return oc.to_bytes(oc.upgrade(oc.load(data), to="v2"))


def make_valid_v2() -> None:
    def v(name: str, data: bytes, rule: str) -> None:
        valid(f"v2-{name}", data, rule, "v2", None)

    v("empty", write_v2([]), "empty checkpoint: the 64-byte header, no section")
    v(
        "state-only",
        write_v2([], state={"step": 0}),
        "no tensors: a state section alone (no tensors, optimizer or data section)",
    )
    v(
        "sgd",
        write_v2(tensors({0: 4, 1: 2}), Optimizer("sgd"), {"step": 7, "epoch": 1}),
        "SGD: an optimizer section with K = 0, unnamed raw tensors",
    )
    v("sgd-momentum", V2_MOMENTUM, "sgd_momentum: one slot, NO_STATE for the second tensor")
    v(
        "adam",
        write_v2(tensors({0: 4, 1: 2, 2: 3}), adam(tensors({0: 4, 1: 2, 2: 3})), {"step": 9}),
        "Adam: slots m and v with an entry for every tensor",
    )
    v(
        "full",
        V2_FULL,
        "every section kind: names, dtypes, shapes, model indices, raw bytes, Adam with NO_STATE "
        "and 0-byte slot entries and slot sizes unlike the tensor's, typed state, a private "
        "optional section kept",
    )
    v("custom-optimizer", V2_CUSTOM, "optimizer_9, a self-described kind with slots aa, ab")
    v(
        "adam-no-tensors",
        write_v2([], Optimizer("adam")),
        "Adam with no tensor: an optimizer section with K = 2, T = 0, no data section",
    )
    v(
        "dtypes",
        write_v2(
            [
                typed(0, np.zeros(3, "<f2"), dtype="float16", shape=(3,)),
                typed(1, np.zeros((2, 1, 2), "<i8"), dtype="int64", shape=(2, 1, 2)),
                typed(2, np.array(5, "<i4"), dtype="int32", shape=()),
                typed(3, np.zeros(3, "u1"), dtype="int4", shape=(5,)),
                typed(4, np.zeros(2, "u1"), dtype="bool"),
                typed(5, np.zeros(4, "<f8"), shape=(2, 2)),
                typed(6, np.zeros(1, "u1"), dtype="uint8", shape=(1, 1, 1, 1, 1, 1, 1, 1)),
            ]
        ),
        "dtypes with and without shapes: float16, int64, a rank-0 int32, int4 (no whole-byte "
        "size, its shape is not checked), bool without shape, a shape without dtype, rank 8",
    )
    huge = write_v2(
        [typed(0, np.zeros(0, "<f4"), dtype="float32", shape=(2**32 - 1, 2**32 - 1, 0))]
    )
    # Written from SPEC.md 6.4 and TOOLKIT 1: the one record at 64 + 32 + 64 (table, then the
    # tensors section at 128: 8 + 72 bytes, no name), data section at align(208) = 256, 0 bytes.
    ALL.append(
        Vector(
            "v2-huge-dims-zero",
            huge,
            "dims 2**32-1 x 2**32-1 x 0 with 0 bytes: R11's product is 0 (a reader that stops as "
            "soon as the running product exceeds len_data must look for a 0 dim first)",
            revision="v2",
            description={
                "revision": "v2",
                "dialect": None,
                "file_size": 256,
                "tensors": [
                    {
                        "index": 0,
                        "offset": 256,
                        "nbytes": 0,
                        "crc32": 0,
                        "name": None,
                        "dtype": "float32",
                        "shape": [2**32 - 1, 2**32 - 1, 0],
                        "model_index": None,
                    }
                ],
                "optimizer": None,
                "state": {},
                "origin": None,
            },
        )
    )
    assert len(huge) == 256 and u64(huge, 128 + 8 + 24) == 256
    v(
        "model-index-only",
        write_v2([typed(0, f32(2, 0), model_index=5), typed(1, f32(1, 1))]),
        "a record with HAS_MODEL_INDEX alone: no name, dtype or shape in the description",
    )
    v(
        "zero-length-tensors",
        write_v2([typed(0, f32(0, 0)), typed(3, f32(0, 0), name="e")]),
        "0-byte tensors: every range at the data section's start, a 0-byte data section",
    )
    v(
        "every-dtype",
        write_v2(
            [
                typed(
                    i,
                    np.arange(2 * (size or 1), dtype="u1"),
                    dtype=name,
                    shape=(2,) if size else None,
                )
                for i, (_, (name, size)) in enumerate(sorted(DTYPES.items()))
            ]
        ),
        "one record per dtype code, -5 to 17: every dtype name of SPEC.md 6.6 and TOOLKIT.md 1",
    )
    v(
        "state-number-edges",
        write_v2(
            [],
            state={
                "sum": 0.1 + 0.2,
                "tiny": 5e-324,
                "negzero": -0.0,
                "e16": 1e16,
                "big": 1.7976931348623157e308,
                "e-5": 1e-05,
                "third": 1 / 3,
                "exact": 123456789.125,
                "one": -1.0,
                "imin": -(2**63),
                "imax": 2**63 - 1,
            },
        ),
        "floats needing 17 digits, subnormal, -0.0, exponent forms; i64 extremes (TOOLKIT.md 1.3)",
    )
    v(
        "utf8-edges",
        write_v2(
            [
                typed(0, f32(1, 0), name="\x00"),
                typed(1, f32(1, 1), name="\uffff\U0010ffff"),
                typed(2, f32(1, 2), model_index=0),
            ]
        ),
        "names RFC 3629 accepts: U+0000, the noncharacter U+FFFF, U+10FFFF; a record with only "
        "a model index",
    )
    v(
        "zero-length-last",
        write_v2([typed(0, f32(3, 0)), typed(1, f32(0, 0))]),
        "a 0-byte range at the end: the data section ends in padding",
    )
    v(
        "storage-order",
        write_v2(
            [
                typed(index=i, data=f32(n, i), offset=o)
                for i, n, o in ((0, 2, 3), (1, 5, 1), (2, 1, 2))
            ]
        ),
        "data ranges in another order than the records (a writer chooses it)",
    )
    v(
        "unknown-sections",
        write_v2(
            tensors({0: 1}),
            sections=[Section(kind=6, data=b"future"), Section(kind=0xFFFFFFFF, data=b"")],
        ),
        "two optional sections of unknown kinds (6, 0xffffffff), kept and skipped",
    )
    v(
        "state-types",
        write_v2(
            [],
            state={
                "step": 0,
                "epoch": 2**63 - 1,
                "iteration": 5,
                "batch_size": 32,
                "learning_rate": 1e-05,
                "best_metric": -0.0,
                "loss_type": "categorical_crossentropy",
                "log_dir": "",
                "neg": -(2**63),
                "f1": 0.1,
                "f2": 1e16,
                "f3": 123456789.125,
                "f4": 5e-324,
                "f5": 1.7976931348623157e308,
                "nan": float("nan"),
                "inf": float("inf"),
                "-inf": float("-inf"),
                "str": 'quote " backslash \\ tab \t nl \n del \x7f é € 😀',
                "bytes": bytes(range(0, 256, 17)),
                "nobytes": b"",
                "ключ": "значение",
            },
        ),
        "every state type: ints at the i64 limits, floats (shortest repr, exponents, -0.0, NaN, "
        "infinities), strings with escapes and non-ASCII, bytes, empty values, a non-ASCII key",
    )
    v(
        "unicode-names",
        write_v2(
            [
                typed(0, f32(1, 0), name="é/ü"),
                typed(1, f32(1, 1), name='😀"\\'),
                typed(2, f32(1, 2), name="x" * 1024),
            ],
            Optimizer("optimizer_4", slots={"ß": {}}),
        ),
        "non-ASCII tensor and slot names (2-, 4-byte UTF-8), quotes, a 1024-byte name",
    )
    v("upgraded-onert-sgd", upgraded(ONERT_SGD), "schema-1 onert SGD upgraded: origin v1/onert")
    v("upgraded-onert-adam", upgraded(ONERT_ADAM), "schema-1 Adam (dialect null) upgraded")
    v(
        "upgraded-micro-adam",
        upgraded(MICRO_ADAM),
        "onert-micro Adam upgraded: N = 6 in origin, storage order 4, 3, 1 kept",
    )
    v(
        "upgraded-micro-sgd",
        upgraded(MICRO_SGD),
        "onert-micro SGD upgraded: origin dialect onert-micro, step and epoch",
    )
    v(
        "upgraded-onert-footerless",
        upgraded(write(tensors(ONERT_COUNTS), dialect="onert", footerless=True)),
        "footer-less onert file upgraded: origin FOOTERLESS, no state section",
    )
    v(
        "upgraded-onert-empty-slots",
        upgraded(
            write(tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS), empty=(1,)), dialect="onert")
        ),
        "onert Adam with zero-length m and v entries upgraded: 0-byte slot ranges",
    )
    v("upgraded-wof", upgraded(WOF), "WOF upgraded: origin wof, N = 5, no optimizer, no state")
    v(
        "upgraded-real-onert-adam",
        upgraded(real("fc2-adam-step8.ckpt")),
        "real onert 0.1.0 Adam export upgraded",
    )
    v(
        "upgraded-v1-n0",
        upgraded(write([], dialect="onert-micro", step=1, epoch=1)),
        "onert-micro N = 0 upgraded: origin with num_entries 0, state, no tensors",
    )


def make_invalid_v2() -> None:
    for table in ("header", "tensors", "optimizer", "state", "origin", "data", "spec-fixes",
                  "spec-fixes-7"):
        apply_table(f"v2-{table}")


def v2_header_cases() -> list[Case]:
    """Schema 2's detection, header (H1 to H5) and section table (T1 to T5)."""
    full, f = V2_FULL, V2(V2_FULL)
    di = f.index_of(SectionKind.DATA)
    up = upgraded(MICRO_ADAM)
    ui = V2(up).index_of(SectionKind.ORIGIN)
    unknown = write_v2(tensors({0: 1}), sections=[Section(kind=7, data=b"x", required=True)])
    # fmt: off
    return [
        Case("magic", full, {"magic": 0x01AE},
             "bad_magic", "magic", "magic", "detection 2 on a schema-2 file", seal="none"),
        Case("header-63", full, (Cut(63),),
             "truncated_header", "header", "header", "H1: 63 bytes", seal="none"),
        Case("header-crc", full, {"reserved1[8]": 1},
             "header_checksum", "header_crc", "header_crc",
             "H2: a reserved1 byte changed, CRC not resealed", seal="none"),
        Case("reserved0", full, {"reserved0": 1},
             "reserved_nonzero", "reserved0", "reserved0", "H3: reserved0"),
        Case("reserved1", full, {"reserved1[31]": 9},
             "reserved_nonzero", "reserved1", "reserved1[31]", "H3: last reserved1 byte"),
        Case("len-file-cut", full, (Cut(-1),),
             "truncated_file", "len_file", "len_file", "H4: the last byte missing (S < len_file)",
             seal="none"),
        Case("trailing-byte", full, (Append(b"\0"),),
             "trailing_bytes", "file", "end", "H4: one byte after len_file", seal="none"),
        Case("table-at-32", full, {"ofs_section_table": 32},
             "overlap", "ofs_section_table", "ofs_section_table", "H5: ofs_section_table < 64"),
        Case("table-at-128", full, {"ofs_section_table": 128},
             "gap", "ofs_section_table", "ofs_section_table", "H5: ofs_section_table > 64"),
        # Section table
        Case("sections-65", full, {"num_sections": 65},
             "limit_exceeded", "num_sections", "num_sections", "T1: num_sections > 64"),
        Case("sections-past-end", write_v2([]), {"num_sections": 1},
             "count_exceeds_file", "num_sections", "num_sections",
             "T2: a 1-entry table in a 64-byte file"),
        Case("table-crc", full, {("sections[0].len_body", 0): 0xFF},
             "section_table_checksum", "section_table_crc", "section_table_crc",
             "T3: a section-table byte changed, header resealed", seal="header"),
        Case("section-flag-bit", full, {"sections[1].flags": 3},
             "reserved_nonzero", "sections[1].flags", "sections[1].flags", "T4a: flag bit 1"),
        Case("section-reserved", full, {"sections[1].reserved": 1},
             "reserved_nonzero", "sections[1].reserved", "sections[1].reserved",
             "T4a: entry reserved"),
        Case("section-misaligned", full, {"sections[1].ofs_body": Add(8)},
             "misaligned", "sections[1].ofs_body", "sections[1].ofs_body",
             "T4b: ofs_body % 64 == 8"),
        Case("section-past-end", full, {"sections[1].ofs_body": (len(full) + 64) // 64 * 64},
             "offset_out_of_bounds", "sections[1].ofs_body", "sections[1].ofs_body",
             "T4c: ofs_body > S"),
        Case("section-len-max", full, {"sections[1].len_body": 2**64 - 1},
             "offset_out_of_bounds", "sections[1].len_body", "sections[1].len_body",
             "T4c: len_body = 2**64-1 (no overflow in ofs + len)"),
        Case("section-overlap", full, {"sections[1].ofs_body": Copy("sections[0].ofs_body")},
             "overlap", "sections[1].ofs_body", "sections[1].ofs_body",
             "T4d: section 1 at section 0's start"),
        Case("data-section-gap", full,
             {f"sections[{di}].ofs_body": Add(64), f"sections[{di}].len_body": Add(-64)},
             "gap", f"sections[{di}].ofs_body", f"sections[{di}].ofs_body",
             "T4d: the data section 64 bytes after the padding"),
        Case("table-padding", full, {("sections.end", 1): 1},
             "nonzero_padding", "padding", ("sections.end", 1),
             "T4e: a padding byte after the table"),
        Case("section-crc", full, {("data", 0): Xor(1)},
             "section_checksum", f"sections[{di}].crc", f"sections[{di}].crc",
             "T4f: a data byte changed", seal="none"),
        Case("unknown-required", unknown, {},
             "unknown_required_section", "sections[1].kind", "sections[1].kind",
             "T4g: an unknown kind with REQUIRED", seal="none"),
        Case("tensors-not-required", full, {"sections[0].flags": 0},
             "bad_section_flags", "sections[0].flags", "sections[0].flags",
             "T4h: tensors without REQUIRED"),
        Case("origin-required", up, {f"sections[{ui}].flags": 1},
             "bad_section_flags", f"sections[{ui}].flags", f"sections[{ui}].flags",
             "T4h: origin with REQUIRED"),
        Case("section-order", full,
             {"sections[0].kind": SectionKind.OPTIMIZER, "sections[1].kind": SectionKind.TENSORS},
             "section_order", "sections[1].kind", "sections[1].kind",
             "T4i: optimizer listed before tensors"),
        Case("duplicate-section", full, {"sections[2].kind": SectionKind.OPTIMIZER},
             "duplicate_section", "sections[2].kind", "sections[2].kind",
             "T4i: state relabelled optimizer"),
        Case("trailing-after-sections", full, (Append(bytes(64)), ("len_file", Add(64))),
             "trailing_bytes", "file", "end",
             "T5: len_file covers 64 bytes after the last section"),
    ]
    # fmt: on


def v2_tensor_cases() -> list[Case]:
    """Schema 2's tensors section (R0 to R11): records 0 and 1 named fc1/w and fc1/b (model
    indices 3 and 4), record 2 25 float32 of shape (25,), record 3 3 raw bytes."""
    full = V2_FULL
    # fmt: off
    return [
        Case("tensors-reserved", full, {"tensors.reserved": 1},
             "reserved_nonzero", "tensors.reserved", "tensors.reserved", "R0"),
        Case("tensors-empty", full, {"tensors.num_tensors": 0},
             "empty_section", "tensors.num_tensors", "tensors.num_tensors",
             "R1: a tensors section with no record"),
        Case("tensors-limit", full, {"tensors.num_tensors": MAX_TENSORS + 1},
             "limit_exceeded", "tensors.num_tensors", "tensors.num_tensors",
             "R1: num_tensors > 2**24"),
        Case("tensors-count", full, {"tensors.num_tensors": 5},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors",
             "R1: 5 records do not fit the section"),
        Case("tensor-flag-bit", full, {"tensors[3].flags": 0x10},
             "reserved_nonzero", "tensors[3].flags", "tensors[3].flags", "R2: flag bit 4"),
        Case("tensor-model-index-without-flag", full, {"tensors[2].model_index": 1},
             "reserved_nonzero", "tensors[2].model_index", "tensors[2].model_index",
             "R3: model_index set"),
        Case("tensor-dtype-without-flag", full, {"tensors[3].dtype": 3},
             "reserved_nonzero", "tensors[3].dtype", "tensors[3].dtype", "R3: dtype set"),
        Case("tensor-rank", full, {"tensors[2].rank": MAX_RANK + 1},
             "limit_exceeded", "tensors[2].rank", "tensors[2].rank", "R4: rank 9"),
        Case("tensor-dim-beyond-rank", full, {"tensors[1].dims[3]": 1},
             "reserved_nonzero", "tensors[1].dims[3]", "tensors[1].dims[3]",
             "R5: dims[3] of rank 1"),
        Case("tensor-dtype-18", full, {"tensors[2].dtype": 18},
             "bad_dtype", "tensors[2].dtype", "tensors[2].dtype", "R6: dtype 18"),
        Case("tensor-dtype--6", full, {"tensors[2].dtype": -6},
             "bad_dtype", "tensors[2].dtype", "tensors[2].dtype", "R6: dtype -6"),
        Case("tensor-name-len-0", full, {"tensors[0].len_name": 0},
             "limit_exceeded", "tensors[0].len_name", "tensors[0].len_name",
             "R7: HAS_NAME with len_name 0"),
        Case("tensor-name-gap", full, {"tensors[1].ofs_name": Add(1)},
             "gap", "tensors[1].ofs_name", "tensors[1].ofs_name",
             "R8: the second name one byte late"),
        Case("tensor-name-overlap", full, {"tensors[1].ofs_name": Copy("tensors[0].ofs_name")},
             "overlap", "tensors[1].ofs_name", "tensors[1].ofs_name",
             "R8: the second name at the first's place"),
        Case("tensor-name-past-section", full, {"tensors[1].len_name": 200},
             "offset_out_of_bounds", "tensors[1].ofs_name", "tensors[1].ofs_name",
             "R8: the last name ends past its section"),
        Case("tensor-name-short", full, {"tensors[1].len_name": 4},
             "gap", "tensors.names", ("tensors.end", -1),
             "R8: the names end a byte before the section"),
        Case("tensor-index-equal", full, {"tensors[2].index": 2},
             "duplicate_tensor_index", "tensors[2].index", "tensors[2].index",
             "R9: record 2 repeats index 2"),
        Case("tensor-index-order", full, {"tensors[1].index": 0},
             "tensor_order", "tensors[1].index", "tensors[1].index",
             "R9: record 1's index below record 0's"),
        Case("tensor-model-index-repeat", full, {"tensors[1].model_index": 3},
             "duplicate_tensor_index", "tensors[1].model_index", "tensors[1].model_index",
             "R9: model index 3 twice"),
        Case("tensor-name-utf8", full, {("*tensors[1].ofs_name", 2): 0xC0},
             "bad_utf8", "tensors[1].name", "*tensors[1].ofs_name",
             "R10: an overlong UTF-8 lead byte"),
        Case("tensor-name-surrogate", full, {"*tensors[1].ofs_name": b"\xed\xa0\x80"},
             "bad_utf8", "tensors[1].name", "*tensors[1].ofs_name", "R10: an encoded surrogate"),
        Case("tensor-name-repeat", full, {"*tensors[1].ofs_name": b"fc1/w"},
             "duplicate_tensor_name", "tensors[1].name", "*tensors[1].ofs_name",
             "R10: two records fc1/w"),
        Case("tensor-shape", full, {"tensors[2].dims[0]": 24},
             "shape_mismatch", "tensors[2].len_data", "tensors[2].len_data",
             "R11: 25 floats declared as 24"),
        Case("tensor-shape-overflow", full,
             {"tensors[2].rank": 3, "tensors[2].dims[1]": U32_MAX, "tensors[2].dims[2]": U32_MAX},
             "shape_mismatch", "tensors[2].len_data", "tensors[2].len_data",
             "R11: dims 25 x 2**32-1 x 2**32-1 (product beyond 64 bits)"),
    ]
    # fmt: on


def v2_optimizer_cases() -> list[Case]:
    """Schema 2's optimizer section (O1 to O10): Adam's m and v over the four tensors of V2_FULL,
    sgd_momentum's one slot (V2_MOMENTUM), a custom optimizer's slots aa, ab (V2_CUSTOM)."""
    full, f = V2_FULL, V2(V2_FULL)
    nos = next(t for t in range(4) if u64(full, f.slot_entry(0, t)) == NO_STATE)
    # fmt: off
    return [
        Case("optimizer-reserved", full, {"optimizer.reserved": 1},
             "reserved_nonzero", "optimizer.reserved", "optimizer.reserved", "O1"),
        Case("optimizer-slots-17", full, {"optimizer.num_slots": MAX_SLOTS + 1},
             "limit_exceeded", "optimizer.num_slots", "optimizer.num_slots", "O2: K = 17"),
        Case("optimizer-tensors", full, {"optimizer.num_tensors": 3},
             "bad_optimizer", "optimizer.num_tensors", "optimizer.num_tensors",
             "O3: T differs from num_tensors"),
        Case("optimizer-count", full, {"optimizer.num_slots": MAX_SLOTS},
             "count_exceeds_file", "optimizer.num_slots", "optimizer.num_slots",
             "O4: 16 slots do not fit"),
        Case("optimizer-known-k", V2_MOMENTUM, {"optimizer.kind": OptimizerKind.ADAM},
             "bad_optimizer", "optimizer.num_slots", "optimizer.num_slots",
             "O5: sgd_momentum's one slot as adam"),
        Case("slot-reserved", full, {"optimizer.slots[1].reserved": 1},
             "reserved_nonzero", "optimizer.slots[1].reserved", "optimizer.slots[1].reserved",
             "O6"),
        Case("slot-name-len", full, {"optimizer.slots[0].len_name": MAX_NAME_LEN + 1},
             "limit_exceeded", "optimizer.slots[0].len_name", "optimizer.slots[0].len_name",
             "O6: len_name 1025"),
        Case("slot-name-gap", full, {"optimizer.slots[1].ofs_name": Add(1)},
             "gap", "optimizer.slots[1].ofs_name", "optimizer.slots[1].ofs_name",
             "O7: slot name v a byte late"),
        Case("slot-name-repeat", V2_CUSTOM, {"*optimizer.slots[1].ofs_name": b"aa"},
             "duplicate_slot_name", "optimizer.slots[1].name", "*optimizer.slots[1].ofs_name",
             "O8: slots aa, aa"),
        Case("slot-name-utf8", V2_CUSTOM, {"*optimizer.slots[1].ofs_name": 0x80},
             "bad_utf8", "optimizer.slots[1].name", "*optimizer.slots[1].ofs_name",
             "O8: a continuation byte first"),
        Case("optimizer-adam-names", full, {"*optimizer.slots[0].ofs_name": b"x"},
             "bad_optimizer", "optimizer.slots", "optimizer.slots", "O9: adam with slots x, v"),
        Case("slot-no-state-size", full, {f"optimizer.slots[0][{nos}].len_data": 4},
             "bad_slot_entry", f"optimizer.slots[0][{nos}].len_data",
             f"optimizer.slots[0][{nos}].len_data", "O10: a NO_STATE entry of 4 bytes"),
    ]
    # fmt: on


def v2_state_cases() -> list[Case]:
    """Schema 2's state section (V1 to V9): step, epoch, learning_rate, k1 (int), k2 (string),
    kb (bytes), in that order."""
    full = V2_FULL
    # fmt: off
    return [
        Case("state-reserved", full, {"state.reserved": 1},
             "reserved_nonzero", "state.reserved", "state.reserved", "V1"),
        Case("state-empty", full, {"state.num_entries": 0},
             "empty_section", "state.num_entries", "state.num_entries",
             "V2: a state section with no entry"),
        Case("state-limit", full, {"state.num_entries": MAX_STATE_ENTRIES + 1},
             "limit_exceeded", "state.num_entries", "state.num_entries", "V2: 1025 entries"),
        Case("state-entry-reserved", full, {"state[1].reserved[2]": 1},
             "reserved_nonzero", "state[1].reserved", "state[1].reserved[2]", "V3"),
        Case("state-type-4", full, {"state[3].value_type": 4},
             "bad_state_type", "state[3].value_type", "state[3].value_type", "V4: value_type 4"),
        Case("state-key-len", full, {"state[0].len_key": MAX_KEY_LEN + 1},
             "limit_exceeded", "state[0].len_key", "state[0].len_key", "V5: len_key 256"),
        Case("state-int-len", full, {"state[3].len_value": 8},
             "bad_state_type", "state[3].len_value", "state[3].len_value",
             "V6: an int with len_value 8"),
        Case("state-value-len", full, {"state[4].len_value": MAX_VALUE_LEN + 1},
             "limit_exceeded", "state[4].len_value", "state[4].len_value",
             "V7: a 1 MiB + 1 string"),
        Case("state-key-gap", full, {"state[1].ofs_key": Add(1)},
             "gap", "state[1].ofs_key", "state[1].ofs_key", "V8: key 1 a byte late"),
        Case("state-value-overlap", full, {"state[4].value": Copy("state[4].ofs_key")},
             "overlap", "state[4].value", "state[4].value",
             "V8: a string value at its key's place"),
        Case("state-key-repeat", full, {"*state[4].ofs_key": b"k1"},
             "duplicate_state_key", "state[4].key", "*state[4].ofs_key", "V9: keys k1, k1"),
        Case("state-key-utf8", full, {"*state[4].ofs_key": 0xFF},
             "bad_utf8", "state[4].key", "*state[4].ofs_key", "V9: byte 0xff in a key"),
        Case("state-string-utf8", full, {"*state[4].value": 0xF5},
             "bad_utf8", "state[4].value", "*state[4].value", "V9: lead byte 0xf5 in a string"),
        Case("state-step-negative", full, {"state[0].value": 2**64 - 1},
             "bad_state_type", "state[0].value_type", "state[0].value_type", "V9: step = -1"),
        Case("state-lr-int", full, {"state[2].value_type": ValueType.INT},
             "bad_state_type", "state[2].value_type", "state[2].value_type",
             "V9: learning_rate as an int"),
    ]
    # fmt: on


def v2_origin_cases() -> list[Case]:
    """Schema 2's origin section (G1 to G3), in onert-micro's Adam export upgraded."""
    up = upgraded(MICRO_ADAM)
    ui = V2(up).index_of(SectionKind.ORIGIN)
    # fmt: off
    return [
        Case("origin-reserved", up, {"origin.reserved": 1},
             "reserved_nonzero", "origin.reserved", "origin.reserved", "G2"),
        Case("origin-flags", up, {"origin.flags": 2},
             "reserved_nonzero", "origin.flags", "origin.flags", "G2: flag bit 1"),
        Case("origin-revision", up, {"origin.revision": 3},
             "bad_origin", "origin.revision", "origin.revision", "G3: revision 3"),
        Case("origin-dialect", up, {"origin.dialect": 3},
             "bad_origin", "origin.dialect", "origin.dialect", "G3: dialect 3"),
        Case("origin-short", up, {"origin.num_entries": 0, f"sections[{ui}].len_body": 16},
             "count_exceeds_file", "origin", "origin",
             "G1: a 16-byte origin section (its num_entries, zeroed, becomes padding)"),
        Case("origin-long", up, {f"sections[{ui}].len_body": 32},
             "gap", "origin", ("origin", Origin.SIZE),
             "G1: a 32-byte origin section (8 bytes of its padding counted in)"),
    ]
    # fmt: on


def v2_data_cases() -> list[Case]:
    """Schema 2's data ranges (D0 to D4)."""
    full, f = V2_FULL, V2(V2_FULL)
    di = f.index_of(SectionKind.DATA)
    _, lj, lt = max(  # the range stored last: a slot entry
        (u64(full, f.slot_entry(j, t)), j, t)
        for j in range(2)
        for t in range(4)
        if u64(full, f.slot_entry(j, t)) != NO_STATE
    )
    # fmt: off
    return [
        Case("data-without-ranges", write_v2(tensors({0: 1})),
             {"sections[0].kind": 0x80000000, "sections[0].flags": 0},
             "empty_section", "data", "data",
             "D0: the tensors section relabelled a private kind: a data section, no range"),
        Case("data-misaligned", full, {"tensors[0].ofs_data": Add(4)},
             "misaligned", "tensors[0].ofs_data", "tensors[0].ofs_data",
             "D1: ofs_data % 64 == 4"),
        Case("data-outside", full, {"tensors[3].ofs_data": 0},
             "offset_out_of_bounds", "tensors[3].ofs_data", "tensors[3].ofs_data",
             "D1: ofs_data 0, before the data section"),
        Case("data-slot-too-long", full,
             {"optimizer.slots[1][3].len_data": Copy(f"sections[{di}].len_body")},
             "offset_out_of_bounds", "optimizer.slots[1][3].ofs_data",
             "optimizer.slots[1][3].ofs_data",
             "D1: a slot entry longer than what remains of the data section"),
        Case("data-overlap", full, {"tensors[3].ofs_data": Copy("tensors[0].ofs_data")},
             "overlap", "tensors[3].ofs_data", "tensors[3].ofs_data",
             "D2: tensor 3's range at tensor 0's"),
        # tensor 2, 100 bytes, is followed by 28 bytes of padding
        Case("data-gap", full, {"tensors[2].ofs_data": Add(64)},
             "gap", "tensors[2].ofs_data", "tensors[2].ofs_data",
             "D2: the 100-byte range moved 64 bytes later, into its own padding"),
        Case("data-padding", full, {("data", 16 + 5): 1},
             "nonzero_padding", "padding", ("data", 16 + 5),
             "D3: a padding byte after the first 16-byte range"),
        Case("data-end-gap", full, {f"optimizer.slots[{lj}][{lt}].len_data": Add(-4)},
             "gap", "data", ("data.end", -4), "D4: the last range 4 bytes shorter"),
    ]
    # fmt: on


def v2_spec_fix_cases() -> list[Case]:
    """The cases named by the spec fixes of document revision 3 (SPEC.md A.2)."""
    full = V2_FULL
    sgd = write_v2([], Optimizer("sgd"), {"step": 1})
    gi = V2(sgd).index_of(SectionKind.OPTIMIZER)
    two = write_v2(
        tensors({0: 1}), sections=[Section(kind=6, data=b"first"), Section(kind=7, data=b"next")]
    )
    i7 = V2(two).index_of(7)
    name1 = ("*tensors[1].ofs_name", len("fc1/b"))  # the end of tensor 1's name
    # fmt: off
    return [
        # O1: a 16-byte SGD head cut to 12 bytes (the 4 bytes after it are then zero padding)
        Case("optimizer-short", sgd, {f"sections[{gi}].len_body": 12},
             "count_exceeds_file", "optimizer.num_slots", "optimizer.num_slots",
             "O1: a 12-byte optimizer section; the field is num_slots, at s + 4"),
        Case("duplicate-unknown-section", two, {f"sections[{i7}].kind": 6},
             "duplicate_section", f"sections[{i7}].kind", f"sections[{i7}].kind",
             "T4i: kind 6 twice (an unknown kind repeated is a duplicate too)"),
        # O7 / V8: the final gap of a pool names the pool
        Case("slot-names-short", V2_CUSTOM, {"optimizer.slots[1].len_name": 1},
             "gap", "optimizer.names", ("*optimizer.slots[1].ofs_name", 1),
             "O7: the slot names end a byte before the section"),
        Case("state-pool-short", full, {"state[5].len_value": 0},
             "gap", "state.pool", "*state[5].value",
             "V8: the last value 1 byte shorter, so the pool ends a byte before the section"),
        # V3: the offset of the first non-zero reserved byte (SPEC 1.3, error offsets)
        Case("state-entry-reserved-middle", full,
             {"state[1].reserved[2]": 1, "state[1].reserved[1]": 2},
             "reserved_nonzero", "state[1].reserved", "state[1].reserved[1]",
             "V3: reserved bytes 14 and 15 set: the offset is the first non-zero byte's"),
    ] + [
        # R10: what RFC 3629 rejects, one vector per kind not covered above
        Case(f"tensor-name-utf8-{label}", full, {(name1[0], name1[1] - len(raw)): raw},
             "bad_utf8", "tensors[1].name", "*tensors[1].ofs_name", f"R10: {why}")
        for label, raw, why in [
            ("overlong-3", b"\xe0\x80\xaf", "an overlong 3-byte form (E0 followed by 80..9F)"),
            ("overlong-4", b"\xf0\x8f\xbf\xbf", "an overlong 4-byte form (F0 followed by 80..8F)"),
            ("above-10ffff", b"\xf4\x90\x80\x80", "U+110000 (F4 followed by 90..BF)"),
            ("lead-c1", b"\xc1\xbf", "lead byte C1 (always overlong)"),
            ("cut-at-end", b"fc1\xe2\x82", "a 3-byte sequence cut by the end of the name"),
        ]
    ]
    # fmt: on


#: Every table of invalid vectors: name -> (the prefix of its vector names, the places of its
#: files, its cases). tests/spec/test_vector_cases.py checks every case's field and offset.
def three_named(names: tuple[bytes, bytes, bytes] = (b"a", b"b", b"c")) -> bytes:
    """Three one-byte raw tensors named ``names`` (schema 2)."""
    return write_v2(
        [typed(k, np.arange(1, dtype="u1"), name=n.decode()) for k, n in enumerate(names)]
    )


def v2_spec_fix_7_cases() -> list[Case]:
    """The cases named by the spec fixes of document revision 7 (SPEC.md A.2): the order of
    the checks within R9, R10 and V9, each read the other way giving another error."""
    full = V2_FULL
    three = three_named()
    # fmt: off
    return [
        Case("r9-index-pass-first", full, {"tensors[1].model_index": 3, "tensors[3].index": 3},
             "tensor_order", "tensors[3].index", "tensors[3].index",
             "R9: the index check runs over every record before the model-index check: "
             "record 3's index below record 2's, not record 1's repeated model index"),
        Case("r10-record-by-record", three,
             {"*tensors[1].ofs_name": b"a", "*tensors[2].ofs_name": b"\xff"},
             "duplicate_tensor_name", "tensors[1].name", "*tensors[1].ofs_name",
             "R10: UTF-8 then uniqueness on one record before the next: record 1 repeats "
             "record 0's name, before record 2's name (not UTF-8) is looked at"),
        Case("v9-record-by-record", full,
             {"*state[4].ofs_key": b"k1", "*state[5].ofs_key": b"\xffb"},
             "duplicate_state_key", "state[4].key", "*state[4].ofs_key",
             "V9: its checks on one entry before the next: entry 4's key repeats entry 3's, "
             "before entry 5's key (not UTF-8) is looked at"),
    ]
    # fmt: on


CASE_TABLES: dict[str, tuple[str, type[Places], Callable[[], list[Case]]]] = {
    "v1-header": ("", V1Places, v1_header_cases),
    "v1-entries": ("", V1Places, v1_entry_cases),
    "wof": ("", WofPlaces, wof_cases),
    "v1-order": ("", V1Places, v1_order_cases),
    "v2-header": ("v2-", V2Places, v2_header_cases),
    "v2-tensors": ("v2-", V2Places, v2_tensor_cases),
    "v2-optimizer": ("v2-", V2Places, v2_optimizer_cases),
    "v2-state": ("v2-", V2Places, v2_state_cases),
    "v2-origin": ("v2-", V2Places, v2_origin_cases),
    "v2-data": ("v2-", V2Places, v2_data_cases),
    "v2-spec-fixes": ("v2-", V2Places, v2_spec_fix_cases),
    "v2-spec-fixes-7": ("v2-", V2Places, v2_spec_fix_7_cases),
}


def remove_bytes(data: bytes, at: int, size: int) -> bytes:
    """A schema-1 file with ``size`` bytes at ``at`` cut out and every header offset and table
    entry beyond ``at`` moved down (an entry at ``at`` stays, and becomes zero-length when the
    cut bytes were all of it)."""
    f = V1(data)
    out = data[:at] + data[at + size :]

    def moved(o: int) -> int:
        return o - size if o > at else o

    tables = [20] + ([f.opt1, f.opt2] if f.opt2 else [])
    for t in tables:
        for i in range(f.n):
            pos = moved(t + 4 * i)
            out = put(out, pos, moved(u32(data, t + 4 * i)))
    for field in (4, 8, 12):
        out = put(out, field, moved(u32(data, field)))
    return out


def double_save(data: bytes, index: int) -> bytes:
    """onert-micro's saver meeting a shared weight twice: a second copy of entry ``index`` is
    appended after the weight data and the table entry points at it (the first copy stays)."""
    f = V1(data)
    at = f.entry("weights", index)
    size = sorted(o for o in (f.entry("weights", i) for i in range(f.n)) if o > at)[:1] or [f.other]
    copy = data[at : size[0]]
    out = data[: f.other] + copy + data[f.other :]
    out = put(out, 12, f.other + len(copy))
    return put(out, f.entry_at("weights", index), f.other)


def swap_first_two_weights(data: bytes) -> bytes:
    """Swap the data of weight entries 0 and 1 (equal sizes) and their table entries, so the data
    is out of table order while every size stays right."""
    f = V1(data)
    a, b = f.entry("weights", 0), f.entry("weights", 1)
    size = b - a
    out = bytearray(data)
    out[a : a + size], out[b : b + size] = data[b : b + size], data[a : a + size]
    out = bytearray(put(bytes(out), 20, b))
    return put(bytes(out), 24, a)


# ------------------------------------------------------------------------------------------------
# Schema 3 (spec/SPEC.md section 7)

ORACLES = SPEC / "oracles"  # encoders written from SPEC.md alone (spec/oracles/README.md)
if str(ORACLES) not in sys.path:
    sys.path.insert(0, str(ORACLES))
import v3_encoder as m3  # noqa: E402  (spec/oracles/v3_encoder.py)

REAL_MICRO = ROOT / "tests" / "data" / "real-onert-micro"


def v3_of(v2_bytes: bytes) -> tuple[bytes, dict]:
    """The schema-3 encoding of a valid schema-2 file's content and its description, both from
    spec/oracles/v3_encoder.py (SPEC.md 7 alone); the library's writer must give the same bytes
    (schema 3 is canonical given the data order, SPEC.md 6.1)."""
    content = m3.from_v2(v2_bytes)
    enc = m3.encode(content)
    loaded = oc.load(v2_bytes)
    loaded.revision = "v3"
    loaded.layout.data_block_size = 0  # these vectors predate the data_blocks section (SPEC 7.4)
    written = oc.to_bytes(loaded)
    if written != enc.data:
        raise SystemExit("the library's schema-3 writer and spec/oracles/v3_encoder.py disagree")
    return enc.data, m3.describe(content, enc)


def v3_valid(name: str, v2_bytes: bytes, rule: str) -> None:
    data, description = v3_of(v2_bytes)
    ALL.append(Vector(f"v3-{name}", data, rule, revision="v3", description=description))


def v3_valid_content(name: str, content: m3.Content, rule: str) -> None:
    """A valid schema-3 vector encoded from ``content`` directly, for a data order that no
    schema-2 file records (two 0-byte ranges at one offset: schema 2 keeps record order on a
    tie); the library must read it and write the same bytes back."""
    enc = m3.encode(content)
    if oc.to_bytes(oc.load(enc.data)) != enc.data:
        raise SystemExit(f"v3-{name}: the library does not write its own read back byte for byte")
    ALL.append(
        Vector(f"v3-{name}", enc.data, rule, revision="v3", description=m3.describe(content, enc))
    )


def v3_invalid(name: str, data: bytes, rule: str, code: str, field: str, offset: int) -> None:
    invalid(f"v3-{name}", data, rule, code, field, offset)


def raw_tensors(*sizes: int, **kw) -> list[Tensor]:
    return [typed(k, np.arange(n, dtype="u1") + k, **kw) for k, n in enumerate(sizes)]


def make_valid_v3() -> None:
    converted = [v for v in ALL if v.name.startswith("v2-") and v.valid]
    for v in converted:
        v3_valid(v.name[3:], v.data, f"{v.name} in schema 3: {v.rule}")
    v3_valid("minimal", write_v2(raw_tensors(4)), "one 4-byte tensor: no optional column")
    v3_valid(
        "column-index",
        write_v2([typed(0, f32(1, 0)), typed(2, f32(1, 2))]),
        "the index column alone (record 1 has index 2)",
    )
    # One record: C4's neighbour comparisons have nothing to compare, so only index[0] itself
    # decides whether the column is needed (a reader that judges the identity from k >= 1
    # alone calls these redundant).
    v3_valid(
        "one-record-index",
        write_v2(
            [typed(5, f32(1, 5))],
            Optimizer("sgd_momentum", slots={"momentum": {5: Buffer(5, f32(1, 50))}}),
        ),
        "one record with index 5: an index column of one value, needed because index[0] is "
        "not 0; its slot entry carries index 5 too",
    )
    v3_valid(
        "one-record-index-max",
        write_v2([typed(2**32 - 1, f32(1, 7))]),
        "one record at the largest legal index, 2**32-1 (an index is any u32)",
    )
    v3_valid(
        "column-model-index",
        write_v2([typed(0, f32(1, 0)), typed(1, f32(1, 1), model_index=0)]),
        "the model_index column alone: NO_MODEL_INDEX, then model index 0",
    )
    v3_valid(
        "column-name",
        write_v2([typed(0, f32(1, 0), name="w"), typed(1, f32(1, 1))]),
        "the len_name and names columns alone: one named record, one with len_name 0",
    )
    v3_valid(
        "column-dtype",
        write_v2([typed(0, np.zeros(3, "u1"), dtype="bool"), typed(1, f32(1, 1))]),
        "the dtype column alone: bool without a shape, then NO_DTYPE",
    )
    v3_valid(
        "column-shape",
        write_v2(
            [
                typed(0, np.zeros(1, "u1"), shape=()),
                typed(1, np.zeros(6, "u1"), shape=(2, 3)),
                typed(2, np.zeros(2, "u1")),
            ]
        ),
        "the rank and dims columns alone: rank 0, rank 2, NO_SHAPE; dims [2, 3]",
    )
    v3_valid(
        "column-shape-rank-zero",
        write_v2([typed(0, np.array(1.5, "<f4"), dtype="float32", shape=())]),
        "every rank 0: a 0-byte dims column, still at its multiple of 8 (the section ends there)",
    )
    v3_valid(
        "column-order",
        write_v2(
            [
                typed(index=i, data=f32(n, i), offset=o)
                for i, n, o in ((0, 1, 2), (1, 2, 0), (2, 1, 1))
            ]
        ),
        "the order column alone: data order records 1, 2, 0",
    )
    v3_valid(
        "order-two-records-swapped",
        write_v2([typed(index=i, data=f32(1, i), offset=o) for i, o in ((0, 1), (1, 0))]),
        "two records stored in reverse: order [1, 0], the only two-record order column that is "
        "not the identity",
    )
    v3_valid(
        "all-columns",
        write_v2(
            [
                typed(
                    index=2,
                    data=f32(2, 2),
                    name="a",
                    dtype="float32",
                    shape=(2,),
                    model_index=7,
                    offset=2,
                ),
                typed(index=5, data=np.zeros(3, "u1"), offset=0),
                typed(index=9, data=f32(1, 9), name="bc", dtype="float32", shape=(1, 1), offset=1),
            ],
            Optimizer("sgd_momentum", slots={"momentum": {2: Buffer(2, f32(2, 70))}}),
            {"step": 3},
        ),
        "all six optional columns (odd n: padding before every u32 column after the first), "
        "sgd_momentum in the same data order",
    )
    swapped = m3.from_v2(write_v2(raw_tensors(0, 0, 4)))
    swapped.order = [1, 0, 2]
    v3_valid_content(
        "order-zero-length-swapped",
        swapped,
        "records 0 and 1 of 0 bytes, record 2 of 4: order [1, 0, 2] swaps only the 0-byte "
        "ranges, which land at one offset; the column is not redundant (the data order is part "
        "of the content, SPEC.md 6.1) and the description equals that of the identity order",
    )
    sizes = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 1]
    v3_valid(
        "alignment-classes",
        write_v2(raw_tensors(*sizes)),
        "ranges of " + ", ".join(map(str, sizes)) + " bytes: every alignment class a(len) of "
        "7.3 (1, 2, 4, 8, 16, 32, 64) after a range that leaves it padding to skip",
    )
    v3_valid(
        "alignment-descending",
        write_v2(raw_tensors(*reversed(sizes))),
        "the same ranges in descending size: large ranges first, little padding",
    )
    odd = [1, 1, 3, 2, 1, 4, 1, 8, 1, 16, 1, 32, 1, 64, 1, 0, 1, 5, 1, 17]
    v3_valid(
        "alignment-odd-ends",
        write_v2(raw_tensors(*odd)),
        "ranges of " + ", ".join(map(str, odd)) + " bytes: each alignment class after a range "
        "that ends at an odd offset, 1-byte ranges back to back (a(1) = 1)",
    )
    v3_valid(
        "zero-byte-slots",
        write_v2(
            raw_tensors(0, 4, 0),
            Optimizer(
                "adam",
                slots={
                    "m": {0: Buffer(0, f32(0, 0)), 1: Buffer(1, f32(1, 1))},
                    "v": {1: Buffer(1, f32(0, 0)), 2: Buffer(2, f32(0, 0))},
                },
            ),
        ),
        "0-byte tensors and 0-byte slot entries beside NO_STATE ones: no range takes room",
    )
    v3_valid(
        "upgraded-real-micro-adam",
        upgraded((REAL_MICRO / "ckpt_adam.bin").read_bytes()),
        "real onert-micro Adam export (tests/data/real-onert-micro/ckpt_adam.bin) upgraded: "
        "its storage order kept in the order column",
    )


def make_data_blocks_v3() -> None:
    """Schema 3's optional data_blocks section (SPEC.md 7.4, rules B1 to B6), encoded by
    spec/oracles/v3_encoder.py: the valid vectors, which the library must write byte for byte,
    then the invalid ones, the rows of v3_data_blocks_cases."""
    content = m3.from_v2(V2_FULL)  # its private section (0x80000001) sorts after data_blocks
    for name, shift, rule in (
        (
            "data-blocks",
            6,
            "7.4: 64-byte blocks, the last one shorter; the section sits "
            "among the other kinds by ascending kind, before the data section",
        ),
        ("data-blocks-64k", 16, "7.4: the writer's default, 64 KiB blocks: one block here"),
    ):
        enc = m3.encode(content, block_shift=shift)
        ck = oc.load(V2_FULL)
        ck.revision = "v3"
        ck.layout.data_block_size = 1 << shift
        if oc.to_bytes(ck) != enc.data or oc.to_bytes(oc.load(enc.data)) != enc.data:
            raise SystemExit(f"v3-{name}: the library's writer and v3_encoder.py disagree")
        ALL.append(
            Vector(
                f"v3-{name}", enc.data, rule, revision="v3", description=m3.describe(content, enc)
            )
        )
    apply_table("v3-data-blocks")


def v3_data_blocks_cases() -> list[Case]:
    """Schema 3's data_blocks section, B1 to B6 and where B6 stands among the rules (SPEC.md
    7.4): v3-data-blocks (V3_FULL's content, its data section in 64-byte blocks, the last one
    shorter), files whose data_blocks section is built for the rule (cut, grown, alone) and
    v3-data-blocks with its data_blocks entry moved after the data section's."""
    kind = DATA_BLOCKS_KIND
    content = m3.from_v2(V2_FULL)  # its private section (0x80000001) sorts after data_blocks
    good = m3.encode(content, block_shift=6).data
    where = V3Places(good)
    body = good[where.find("data_blocks").pos : where.end("data_blocks")]
    dlen = where.end("data") - where.find("data").pos
    nblocks = where.value("data_blocks.num_blocks")
    last = nblocks - 1
    bi, di = V2(good).index_of(kind), V2(good).index_of(SectionKind.DATA)
    one_crc = bytes(where.find("data_blocks.crc[0]").width)

    def with_body(raw: bytes) -> bytes:
        c = m3.from_v2(V2_FULL)
        c.others = [*c.others, (kind, 0, raw)]
        return m3.encode(c).data

    def entry(i: int) -> tuple[int, int, bytes]:
        ofs, length = (where.value(f"sections[{i}].{f}") for f in ("ofs_body", "len_body"))
        return (
            where.value(f"sections[{i}].kind"),
            where.value(f"sections[{i}].flags"),
            good[ofs : ofs + length],
        )

    # a data_blocks entry after the data section's: the data section's CRC waits for B6 (the
    # table lists the section), so T4 i's section_order on the later entry comes first
    entries = [entry(i) for i in range(where.value("num_sections"))]
    late = m3.assemble([e for e in entries if e[0] != kind] + [e for e in entries if e[0] == kind])
    late_di, late_bi = V2(late).index_of(SectionKind.DATA), V2(late).index_of(kind)
    # fmt: off
    return [
        Case("b1-short", with_body(body[: V3DataBlocksHead.SIZE - 4]), {},
             "bad_data_blocks", "data_blocks", "data_blocks",
             "B1: a 12-byte data_blocks section (its head is 16 bytes)"),
        Case("b2-reserved", good, {"data_blocks.reserved": 1},
             "reserved_nonzero", "data_blocks.reserved", "data_blocks.reserved",
             "B2: the data_blocks head's reserved word is 1"),
        *(
            Case(f"b3-block-shift-{shift}", good, {"data_blocks.block_shift": shift},
                 "bad_data_blocks", "data_blocks.block_shift", "data_blocks.block_shift",
                 f"B3: block_shift {shift}, outside {MIN_BLOCK_SHIFT}..{MAX_BLOCK_SHIFT} "
                 "(64 B to 16 MiB)")
            for shift in (MIN_BLOCK_SHIFT - 1, MAX_BLOCK_SHIFT + 1)
        ),
        Case("b4-no-data", m3.encode(m3.Content(others=[(kind, 0, body)])).data, {},
             "empty_section", "data_blocks", "data_blocks",
             "B4: a data_blocks section in a file without data"),
        Case("b5-num-blocks", with_body(body + one_crc), {"data_blocks.num_blocks": Add(1)},
             "bad_data_blocks", "data_blocks.num_blocks", "data_blocks.num_blocks",
             f"B5: num_blocks {nblocks + 1}; {dlen} data bytes in 64-byte blocks make "
             f"{nblocks}"),
        Case("b5-length", with_body(body + one_crc), {},
             "bad_data_blocks", "data_blocks.crc", "data_blocks.crc",
             "B5: the section holds one CRC more than its num_blocks"),
        Case("b5-length-short", with_body(body[: -len(one_crc)]), {},
             "bad_data_blocks", "data_blocks.crc", "data_blocks.crc",
             "B5: the section holds one CRC less than its num_blocks"),
        # B6's offset is the failing block's first byte (SPEC.md 1.3), not its crc field's
        Case("b6-block-crc", good, {"data_blocks.crc[1]": Xor(1)},
             "block_checksum", "data_blocks.crc[1]", "data.block[1]",
             "B6: block 1's recorded CRC-32C is wrong (the data are intact)"),
        Case("b6-data-byte", good, {("data.end", -1): Xor(0x80)},
             "block_checksum", f"data_blocks.crc[{last}]", f"data.block[{last}]",
             "B6: the last data byte changed: its (shorter) last block fails before the "
             "data section's own CRC-32C", seal="none"),
        Case("b6-data-byte-resealed", good, {("data.end", -1): Xor(0x80)},
             "block_checksum", f"data_blocks.crc[{last}]", f"data.block[{last}]",
             "B6: the last data byte changed and every section CRC recomputed: only the "
             "block's CRC tells"),
        Case("b6-data-section-crc", good, {f"sections[{di}].crc": Xor(1)},
             "section_checksum", f"sections[{di}].crc", f"sections[{di}].crc",
             "B6: every block intact, the data section's own CRC-32C wrong (table and header "
             "CRCs resealed): reported after the blocks, as T4 f's section_checksum",
             seal="table"),
        Case("b6-required", good, {f"sections[{bi}].flags": 1},
             "unknown_required_section", f"sections[{bi}].kind", f"sections[{bi}].kind",
             "7.4: the data_blocks section's REQUIRED flag MUST be clear; set, it is "
             "refused as an unknown required kind is (T4g), by old and new readers alike"),
        # the rule order of 7.4: B6 right after B5, before the tensors section's rules
        Case("b6-before-c12", good, {"tensors[0].name": b"\xff", ("data", 0): Xor(1)},
             "block_checksum", "data_blocks.crc[0]", "data.block[0]",
             "7.4: a damaged data byte in block 0 (every section CRC recomputed) and a "
             "name that is not UTF-8 (C12): B6 runs right after B5, before the tensors "
             "section's rules"),
        Case("b6-after-data-bad-data-crc", late, {f"sections[{late_di}].crc": Xor(1)},
             "section_order", f"sections[{late_bi}].kind", f"sections[{late_bi}].kind",
             "7.4: the data_blocks entry after the data section's, whose CRC-32C is wrong: "
             "a table that lists data_blocks in any entry defers the data section's CRC to "
             "B6, so T4 i's section_order on the later entry is reported (a reader that "
             "skips the kind reports the data section's section_checksum)", seal="table"),
        # a damaged data byte behind a T4 g or T5 failure: a reader that knows the kind checks
        # the data section's CRC in B6, after them; one that skips the kind in T4 f, before them
        Case("b6-required-after-data-bad-data", late,
             {f"sections[{late_bi}].flags": 1, ("data", 0): Xor(1)},
             "unknown_required_section", f"sections[{late_bi}].kind", f"sections[{late_bi}].kind",
             "7.4: a data_blocks entry with REQUIRED after the data section's, and a damaged "
             "data byte: the data section's CRC waits for B6, so T4 g on the later entry is "
             "reported (a reader that skips the kind reports the data section's "
             "section_checksum)", seal="table"),
        Case("b6-trailing-bad-data", good,
             ((("data", 0), Xor(1)), Append(bytes(64)), ("len_file", Add(64))),
             "trailing_bytes", "file", "end",
             "7.4: 64 bytes after the last section (T5) and a damaged data byte: the data "
             "section's CRC waits for B6, so T5 is reported (a reader that skips the kind "
             "reports the data section's section_checksum)", seal="table"),
    ]
    # fmt: on


#: The optional section kinds a reader may skip as unknown kinds (SPEC.md 2 and 10, TOOLKIT.md
#: 4), each with an unassigned kind that sorts at the same place among the others (rule T4 i).
OPTIONAL_KINDS = {m3.KIND_DATA_BLOCKS: 0x100007, m3.KIND_RANGE_INDEX: 0x10000A}


def skipping(data: bytes, kinds: tuple[int, ...]) -> bytes | None:
    """``data`` as a schema-3 reader that skips ``kinds`` sees it (TOOLKIT.md 4): every
    section-table entry of those kinds given an unassigned kind that sorts at the same place,
    so that a reader that knows them reads it as an unknown optional (or required) kind; the
    table's and the header's CRC-32C recomputed where they were right. None when the file is
    not schema 3, its table is not inside it, or it lists none of ``kinds``."""
    if len(data) < 64 or data[:3] != b"\xad\x01\x03":
        return None
    n = u32(data, 24)
    if n > MAX_SECTIONS or 64 + 32 * n > len(data):
        return None
    found = [u32(data, 64 + 32 * i) for i in range(n)]
    if not set(kinds) & set(found):
        return None
    if any(OPTIONAL_KINDS[k] in found for k in kinds):
        raise SystemExit("a vector lists the kind that stands in for a skipped one")
    table_ok = crc32c.crc32c(data[64 : 64 + 32 * n]) == u32(data, 28)
    header_ok = crc32c.crc32c(put(data, 4, 0)[:64]) == u32(data, 4)
    out = data
    for i, k in enumerate(found):
        if k in kinds:
            out = put(out, 64 + 32 * i, OPTIONAL_KINDS[k])
    if table_ok:
        out = put(out, 28, crc32c.crc32c(out[64 : 64 + 32 * n]))
    if header_ok:
        out = put(put(out, 4, 0), 4, crc32c.crc32c(put(out, 4, 0)[:64]))
    return out


def skipping_table(vectors: list[Vector]) -> str:
    """spec/vectors/optional-kinds.ndjson: one JSON line per vector and set of optional kinds
    a reader skips, where that reader's result differs from the vector's JSON: ``vector``,
    ``skips`` (the kinds, in hex) and ``expect``, what the library reads in the file as
    :func:`skipping` shows it (tests/tools/test_conformance_runner.py checks these against the
    readers committed before each kind existed)."""
    lines = []
    kinds = sorted(OPTIONAL_KINDS)
    subsets = [
        tuple(k for j, k in enumerate(kinds) if bit >> j & 1) for bit in range(1, 1 << len(kinds))
    ]
    for v in vectors:
        for subset in subsets:
            seen = skipping(v.data, subset)
            if seen is None:
                continue
            got = python_output(seen)
            if got != expected(v):
                skips = [f"0x{k:X}" for k in subset]
                lines.append(json.dumps({"vector": v.name, "skips": skips, "expect": got}))
    return "\n".join(lines) + "\n"


def _range_index_content(order: bool) -> m3.Content:
    """40 records of 0 to 89 bytes (every alignment of 7.3), an Adam optimizer whose slots
    skip every fifth record (NO_STATE: a position that places nothing), and, with ``order``, a
    data order that is not the identity (record 17k mod 40 at position k)."""
    n = 40
    records = [m3.Record(bytes((k + i) % 251 for i in range(k * 7 % 90)), k) for k in range(n)]
    slots = [
        (name, [None if k % 5 == 2 else bytes([seed]) * len(r.data) for k, r in enumerate(records)])
        for name, seed in ((b"m", 1), (b"v", 2))
    ]
    return m3.Content(
        records=records,
        order=[17 * k % n for k in range(n)] if order else None,
        optimizer_kind=2,
        slots=slots,
    )


def make_range_index_v3() -> None:
    """Schema 3's optional range_index section (SPEC.md 7.5, rules I1 to I7), encoded by
    spec/oracles/v3_encoder.py: the valid vectors, for which the library's writer must compute
    the same section from the same content without one (its ``range_index_group``) and which it
    must write back, then the invalid ones, the rows of v3_range_index_cases."""
    tiny = m3.Content(records=[m3.Record(bytes([k]) * 4, k) for k in range(70)])
    for name, content, blocks, shift, rule in (
        (
            "range-index",
            _range_index_content(True),
            None,
            4,
            "7.5: groups of 16 positions, "
            "an order column (the section ends with each record's position), Adam slots with "
            "NO_STATE entries, ranges of every alignment",
        ),
        (
            "range-index-record-order",
            _range_index_content(False),
            None,
            4,
            "7.5: the same content in record order: no position column",
        ),
        (
            "range-index-default",
            tiny,
            16,
            6,
            "7.5: the writer's default for more than 64 "
            "tensors, groups of 64 (two groups for 70 tensors), after the default data_blocks "
            "section (kinds ascending)",
        ),
    ):
        enc = m3.encode(content, block_shift=blocks, group_shift=shift)
        ck = oc.load(m3.encode(content).data)
        ck.layout.range_index_group = (1 << shift) if blocks is None else None
        ck.layout.data_block_size = 0 if blocks is None else None
        if oc.to_bytes(ck) != enc.data or oc.to_bytes(oc.load(enc.data)) != enc.data:
            raise SystemExit(f"v3-{name}: the library's writer and v3_encoder.py disagree")
        ALL.append(
            Vector(
                f"v3-{name}", enc.data, rule, revision="v3", description=m3.describe(content, enc)
            )
        )
    apply_table("v3-range-index")


def v3_range_index_cases() -> list[Case]:
    """Schema 3's range_index section, its REQUIRED flag, I1 to I7 and where they stand among
    the rules (SPEC.md 7.5): v3-range-index (40 records in data order 17k mod 40, Adam slots m
    and v: 3 passes of 3 groups of 16, then 40 positions), files whose range_index section is
    built for the rule (cut, grown, alone, with positions in record order)."""
    kind = RANGE_INDEX_KIND
    content = _range_index_content(True)
    good = m3.encode(content, group_shift=4).data
    where = V3Places(good)
    body = good[where.find("range_index").pos : where.end("range_index")]
    n = where.value("tensors.num_tensors")
    groups = where.value("range_index.num_groups")
    passes = where.find("range_index.start").elements // groups
    one_start = bytes(where.find("range_index.start[0]").width)
    one_position = where.find("range_index.position[0]").width
    ri = V2(good).index_of(kind)
    old = "7.5, for a reader that knows kind 0x100009 (one that does not skips the section)"

    def with_body(raw: bytes, c: m3.Content = content) -> bytes:
        return m3.encode(
            m3.Content(
                records=c.records,
                order=c.order,
                optimizer_kind=2,
                slots=c.slots,
                others=[(kind, 0, raw)],
            )
        ).data

    plain = _range_index_content(False)
    position_without_order = with_body(
        m3.range_index_body(plain, 4) + bytes(one_position * n), c=plain
    )
    a_, b_ = content.order[3], content.order[30]  # records at sequence positions 3 and 30
    last = content.order[n - 1]
    # fmt: off
    return [
        Case("i0-required", good, {f"sections[{ri}].flags": 1},
             "unknown_required_section", f"sections[{ri}].kind", f"sections[{ri}].kind",
             "7.5: the range_index section's REQUIRED flag MUST be clear; set, it is "
             "refused as an unknown required kind is (T4g), by old and new readers alike"),
        Case("i1-short", with_body(body[: V3RangeIndexHead.SIZE - 4]), {},
             "bad_range_index", "range_index", "range_index",
             f"I1: a 12-byte range_index section (its head is 16 bytes); {old}"),
        Case("i2-reserved", good, {"range_index.reserved": 1},
             "reserved_nonzero", "range_index.reserved", "range_index.reserved",
             f"I2: the range_index head's reserved word is 1; {old}"),
        *(
            Case(f"i3-group-shift-{shift}", good, {"range_index.group_shift": shift},
                 "bad_range_index", "range_index.group_shift", "range_index.group_shift",
                 f"I3: group_shift {shift}, outside {MIN_GROUP_SHIFT}..{MAX_GROUP_SHIFT}; {old}")
            for shift in (MIN_GROUP_SHIFT - 1, MAX_GROUP_SHIFT + 1)
        ),
        Case("i4-no-tensors", m3.encode(m3.Content(others=[(kind, 0, body)])).data, {},
             "empty_section", "range_index", "range_index",
             f"I4: a range_index section in a file without tensors; {old}"),
        Case("i5-num-groups", with_body(body + one_start * passes),
             {"range_index.num_groups": Add(1)},
             "bad_range_index", "range_index.num_groups", "range_index.num_groups",
             f"I5: num_groups {groups + 1} (its starts present too); {n} records in groups "
             f"of 16 make {groups}; {old}"),
        Case("i5-length", with_body(body + one_start), {},
             "bad_range_index", "range_index.start", "range_index.start",
             f"I5: the section holds 8 bytes more than its starts and positions; {old}"),
        Case("i5-length-short", with_body(body[:-one_position]), {},
             "bad_range_index", "range_index.start", "range_index.start",
             f"I5: the section lacks the last record's position; {old}"),
        Case("i5-position-without-order", position_without_order, {},
             "bad_range_index", "range_index.start", "range_index.start",
             f"I5: positions in a file whose data are in record order (no order column); {old}"),
        *(
            Case(name, good, {f"range_index.start[{i}]": Add(1)},
                 "bad_range_index", f"range_index.start[{i}]", f"range_index.start[{i}]",
                 f"I6: {why}; {old}")
            for name, i, why in (
                ("i6-first-start", 0, "start[0], where the tensor pass begins, is 1, not 0"),
                ("i6-slot-start", groups + 1,
                 "the slot-m pass's second group's start is one too far"),
                ("i6-last-start", passes * groups - 1, "the last group's start is one too far"),
            )
        ),
        Case("i7-positions-swapped", good,
             {f"range_index.position[{a_}]": Copy(f"range_index.position[{b_}]"),
              f"range_index.position[{b_}]": Copy(f"range_index.position[{a_}]")},
             "bad_range_index", f"range_index.position[{a_}]", f"range_index.position[{a_}]",
             f"I7: records {a_} and {b_} have each other's position; the first sequence "
             f"position whose record points elsewhere is 3, record {a_}; {old}"),
        Case("i7-position-out-of-range", good, {f"range_index.position[{last}]": n},
             "bad_range_index", f"range_index.position[{last}]",
             f"range_index.position[{last}]",
             f"I7: the last record in data order has position {n}; {old}"),
        # the rule order: I1 to I7 after P3, before P4
        Case("p3-gap-before-range-index", good,
             (("range_index.start[1]", Add(1)), *longer(good)),
             "gap", "data", "data.end",
             "7.5: a byte after the last range (P3) and a wrong start (I6): P3 runs first"),
        # the data's first padding byte: after record 17's 29-byte range, second in data order
        # (record 0's range, the first, has 0 bytes)
        Case("i6-before-p4", good,
             {"range_index.start[1]": Add(1), ("tensors[17].range.end", 0): 1},
             "bad_range_index", "range_index.start[1]", "range_index.start[1]",
             "7.5: a non-zero padding byte (P4) and a wrong start (I6): I6 runs first"),
    ]
    # fmt: on


def make_invalid_v3() -> None:
    for table in V3_TABLES:
        apply_table(table)


def v3_full() -> bytes:
    """V2_FULL's content in schema 3 (spec/oracles/v3_encoder.py): records fc1/w, fc1/b, a
    float32 [25] and 3 raw bytes with every column but order, Adam slots m and v, the state,
    the private section 0x80000001 (sections[3]) and the data section (sections[4])."""
    return m3.encode(m3.from_v2(V2_FULL)).data


def v3_detection_cases() -> list[Case]:
    """Detection: version byte 3 is schema 3 (SPEC.md 3, step 4), whatever the bytes after it."""
    full = v3_full()
    sgd2 = write_v2(tensors({0: 4, 1: 2}), Optimizer("sgd"), {"step": 7, "epoch": 1})
    # fmt: off
    return [
        Case("header-3-bytes", b"\xad\x01\x03", {},
             "truncated_header", "header", "header", "H1: a 3-byte schema-3 file", seal="none"),
        Case("header-63-bytes", full, (Cut(63),),
             "truncated_header", "header", "header", "H1: 63 bytes", seal="none"),
        Case("v1-bytes-version-3", ONERT_SGD, {"version": 3},
             "header_checksum", "header_crc", "header_crc",
             "a schema-1 file whose version byte says 3: read as schema 3, its first 64 bytes "
             "fail H2", seal="none"),
        # the v2 record's first 16 bytes are the len_data column of n = 2, columns 0
        Case("v2-bytes-version-3", sgd2, {"version": 3},
             "gap", "tensors", "tensors.len_data.end",
             "v2-sgd with version byte 3 (CRCs resealed): record 0's first 16 bytes read as the "
             "len_data column (0, 0), and the rest of the 72-byte records belongs to nothing "
             "(C10)"),
    ]
    # fmt: on


def v2_reads_v3_cases() -> list[Case]:
    """Schema-3 files of the oracle's encoding with version byte 2: read as schema 2 (their
    error named with schema 2's places)."""
    minimal = m3.encode(m3.from_v2(write_v2(raw_tensors(4)))).data
    # fmt: off
    return [
        Case("v3-bytes-version-2", minimal, {"version": 2},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors",
             "v3-minimal with version byte 2: a 16-byte tensors section holds no 72-byte record "
             "(R1)", error_as=V2Places),
        Case("v3-columns-version-2", v3_full(), {"version": 2},
             "reserved_nonzero", "tensors.reserved", "tensors.reserved",
             "v3-full with version byte 2: the columns word is schema 2's reserved field (R0)",
             error_as=V2Places),
    ]
    # fmt: on


def v3_container_cases() -> list[Case]:
    """The container is schema 2's (H1 to H5, T1 to T5)."""
    full = v3_full()
    # fmt: off
    return [
        Case("header-crc", full, {"header_crc": Xor(1)},
             "header_checksum", "header_crc", "header_crc", "H2", seal="none"),
        Case("reserved1", full, {"reserved1[8]": 1},
             "reserved_nonzero", "reserved1", "reserved1[8]", "H3: reserved1"),
        Case("cut", full, (Cut(-1),),
             "truncated_file", "len_file", "len_file", "H4: one byte short", seal="none"),
        Case("appended", full, (Append(b"\0"),),
             "trailing_bytes", "file", "end", "H4: one byte appended", seal="none"),
        Case("table-crc", full, {"sections[0].kind": 9},
             "section_table_checksum", "section_table_crc", "section_table_crc",
             "T3: a table byte changed, the table CRC kept", seal="none"),
        Case("data-crc", full, {("data", 0): Xor(1)},
             "section_checksum", "sections[4].crc", "sections[4].crc",
             "T4f: a tensor byte changed, the data section's CRC kept (a reader may defer this "
             "check but reports it)", seal="none"),
        Case("misaligned-section", full, {"sections[1].ofs_body": Add(8)},
             "misaligned", "sections[1].ofs_body", "sections[1].ofs_body",
             "T4b: the optimizer section 8 bytes later"),
        Case("unknown-required", full, {"sections[3].flags": 1},
             "unknown_required_section", "sections[3].kind", "sections[3].kind",
             "T4g: the private section marked REQUIRED"),
        Case("tensors-not-required", full, {"sections[0].flags": 0},
             "bad_section_flags", "sections[0].flags", "sections[0].flags",
             "T4h: the tensors section without REQUIRED"),
        Case("duplicate-state-section", full,
             {"sections[3].kind": SectionKind.STATE, "sections[3].flags": 1},
             "duplicate_section", "sections[3].kind", "sections[3].kind",
             "T4i: the private section relabelled state (REQUIRED): a second state section"),
        Case("section-order", full,
             {"sections[3].kind": SectionKind.TENSORS, "sections[3].flags": 1},
             "section_order", "sections[3].kind", "sections[3].kind",
             "T4i: the private section relabelled tensors, after the state section"),
    ]
    # fmt: on


def built(name: str) -> bytes:
    """The bytes of vector ``name``, every vector built first when ALL does not hold it (a
    table called alone, as tests/spec/test_vector_cases.py calls them)."""
    if not any(v.name == name for v in ALL):
        build()
    return ALL_BY_NAME(name)


def tensors_only(body: bytes) -> bytes:
    """A schema-3 file of one section, the tensors section ``body`` (every CRC-32C right)."""
    return m3.assemble([(SectionKind.TENSORS, 1, body)])


def tensors_head(n: int, columns: int) -> bytes:
    return struct.pack(V3TensorsHead.FORMAT, n, columns)


def v3_tensor_cases() -> list[Case]:
    """Schema 3's tensors section, C0 to C13 (SPEC.md 7.1): V3_FULL's columns (index 1, 2,
    4, 6; model_index 3, 4, none, none; names fc1/w, fc1/b; dtype float32 but record 3's;
    rank 2, 1, 1, NO_SHAPE), v2-storage-order's order column [1, 2, 0] and files whose
    tensors section is built for the rule."""
    full = v3_full()
    head = tensors_head
    ordered = m3.encode(m3.from_v2(built("v2-storage-order"))).data
    single = m3.encode(m3.from_v2(write_v2(raw_tensors(4))), extra_columns=m3.ORDER).data
    allc = built("v3-all-columns")
    grown = V3Places(full)
    grown = tensors_only(full[grown.find("tensors").pos : grown.end("tensors")] + b"\0")
    first_three = range(3)  # the records with a dtype and a shape
    # fmt: off
    return [
        Case("c0-short", tensors_only(head(1, 0)[:4]), {},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors", "C0: L = 4 < 8"),
        Case("c0-empty-body", tensors_only(b""), {},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors", "C0: L = 0"),
        Case("c1-zero", tensors_only(head(0, 0)), {},
             "empty_section", "tensors.num_tensors", "tensors.num_tensors", "C1: n = 0"),
        Case("c1-max", tensors_only(head(MAX_TENSORS + 1, 0)), {},
             "limit_exceeded", "tensors.num_tensors", "tensors.num_tensors",
             "C1: n = MAX_TENSORS + 1 (before C3)"),
        Case("c2-bit6", full, {"tensors.columns": Xor(1 << 6)},
             "reserved_nonzero", "tensors.columns", "tensors.columns", "C2: columns bit 6"),
        Case("c2-bit31", full, {"tensors.columns": Xor(1 << 31)},
             "reserved_nonzero", "tensors.columns", "tensors.columns", "C2: columns bit 31"),
        Case("c3-len-data", tensors_only(head(2, 0) + bytes(8)), {},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors",
             "C3: n = 2, one u64 of len_data"),
        Case("c3-column", tensors_only(head(2, m3.INDEX) + bytes(16) + struct.pack("<I", 3)), {},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors",
             "C3: the index column cut (4 of 8 bytes)"),
        Case("c3-padded-column",
             tensors_only(head(1, m3.INDEX | m3.MODEL_INDEX) + bytes(8) + struct.pack("<I", 3)
                          + bytes(4)), {},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors",
             "C3: the model_index column starts at the next multiple of 8, so the 8 bytes after "
             "index do not hold it (without the padding they would)"),
        Case("c3-max-n", tensors_only(head(MAX_TENSORS, 0)), {},
             "count_exceeds_file", "tensors.num_tensors", "tensors.num_tensors",
             "C3: n = MAX_TENSORS, an 8-byte section"),
        Case("c4-duplicate-index", full, {"tensors[1].index": Copy("tensors[0].index")},
             "duplicate_tensor_index", "tensors[1].index", "tensors[1].index",
             "C4: index[1] = index[0]"),
        Case("c4-index-order", full, {"tensors[2].index": 1},
             "tensor_order", "tensors[2].index", "tensors[2].index", "C4: index[2] < index[1]"),
        Case("c4-redundant-index", full, {f"tensors[{k}].index": k for k in range(4)},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C4: index[k] = k for every k"),
        # one record: index[0] alone decides C4's identity (no neighbour to compare with)
        Case("c4-one-record-redundant-index", built("v3-one-record-index"),
             {"tensors[0].index": 0},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C4 with n = 1: index [0] is the identity, so the one-value index column is "
             "redundant"),
        Case("c5-redundant-model-index", full,
             {"tensors[0].model_index": NO_MODEL_INDEX, "tensors[1].model_index": NO_MODEL_INDEX},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C5: every model_index NO_MODEL_INDEX"),
        Case("c5-duplicate-model-index", full,
             {"tensors[3].model_index": Copy("tensors[0].model_index")},
             "duplicate_tensor_index", "tensors[3].model_index", "tensors[3].model_index",
             "C5: record 3's model index equals record 0's (NO_MODEL_INDEX between them repeats "
             "without being a duplicate)"),
        Case("c6-redundant-names", full, {"tensors[0].len_name": 0, "tensors[1].len_name": 0},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C6: every len_name 0 (before the names column's size is checked)"),
        Case("c6-long-name", full, {"tensors[1].len_name": MAX_NAME_LEN + 1},
             "limit_exceeded", "tensors[1].len_name", "tensors[1].len_name", "C6: len_name 1025"),
        Case("c7-redundant-dtype", full, {f"tensors[{k}].dtype": NO_DTYPE for k in first_three},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C7: every dtype NO_DTYPE"),
        Case("c7-dtype-18", full, {"tensors[1].dtype": 18},
             "bad_dtype", "tensors[1].dtype", "tensors[1].dtype", "C7: dtype 18"),
        Case("c7-dtype-minus-6", full, {"tensors[3].dtype": -6},
             "bad_dtype", "tensors[3].dtype", "tensors[3].dtype",
             "C7: dtype -6 on a record that had NO_DTYPE"),
        Case("c7-dtype-minus-127", full, {"tensors[0].dtype": -127},
             "bad_dtype", "tensors[0].dtype", "tensors[0].dtype",
             "C7: dtype -127 (NO_DTYPE is -128 only)"),
        Case("c8-redundant-shape", full, {f"tensors[{k}].rank": NO_SHAPE for k in first_three},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C8: every rank NO_SHAPE (before the dims column's size is checked)"),
        Case("c8-rank-9", full, {"tensors[2].rank": MAX_RANK + 1},
             "limit_exceeded", "tensors[2].rank", "tensors[2].rank", "C8: rank 9"),
        Case("c8-rank-254", full, {"tensors[0].rank": NO_SHAPE - 1},
             "limit_exceeded", "tensors[0].rank", "tensors[0].rank",
             "C8: rank 254 (NO_SHAPE is 255 only)"),
        Case("c9-order-out-of-range", ordered, {"tensors[1].order": 3},
             "bad_data_order", "tensors[1].order", "tensors[1].order", "C9: order[1] = n"),
        Case("c9-order-repeated", ordered, {"tensors[1].order": Copy("tensors[0].order")},
             "bad_data_order", "tensors[1].order", "tensors[1].order", "C9: order[1] = order[0]"),
        Case("c9-range-before-repeat", ordered,
             {"tensors[1].order": Copy("tensors[0].order"), "tensors[2].order": U32_MAX},
             "bad_data_order", "tensors[2].order", "tensors[2].order",
             "C9: a repeat at k = 1 and an out-of-range value at k = 2: the range check runs "
             "over all values first"),
        Case("c9-redundant-order", ordered, {f"tensors[{k}].order": k for k in range(3)},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C9: order[k] = k for every k"),
        Case("c9-order-first-out-of-range", ordered, {"tensors[0].order": 3},
             "bad_data_order", "tensors[0].order", "tensors[0].order",
             "C9: order[0] = n (the range check starts at record 0)"),
        # one and two records: the smallest order columns, identity or not
        Case("c9-one-record-identity-order", single, {},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C9 with n = 1: order [0] (one record's only permutation) is the identity: "
             "redundant"),
        Case("c9-one-record-order-out-of-range", single, {"tensors[0].order": 1},
             "bad_data_order", "tensors[0].order", "tensors[0].order",
             "C9 with n = 1: order [1] names no record"),
        Case("c9-two-record-identity-order", built("v3-order-two-records-swapped"),
             {"tensors[0].order": 0, "tensors[1].order": 1},
             "redundant_column", "tensors.columns", "tensors.columns",
             "C9 with n = 2: order [0, 1] is the identity: redundant"),
        Case("c10-dims", full, {"tensors[2].rank": MAX_RANK},
             "count_exceeds_file", "tensors.dims", "tensors.dims",
             "C10: rank 8 for a record: the dims column (11 u32) ends past the section"),
        Case("c10-names", full, {"tensors[1].len_name": 6},
             "count_exceeds_file", "tensors.names", "tensors.names",
             "C10: len_name 6 for 'fc1/b': the names column ends past the section"),
        Case("c10-gap-names", full, {"tensors[1].len_name": 4},
             "gap", "tensors", ("tensors.end", -1),
             "C10: len_name 4 for 'fc1/b': the last byte of the section belongs to nothing"),
        Case("c10-gap-end", grown, {},
             "gap", "tensors", "tensors.names.end", "C10: a zero byte after the names column"),
        Case("c11-padding-dtype", full, {("tensors.dtype.end", 1): 1},
             "nonzero_padding", "padding", ("tensors.dtype.end", 1),
             "C11: a non-zero byte in the padding after the dtype column"),
        Case("c11-padding-first", full,
             {("tensors.rank.end", 2): 2, ("tensors.dtype.end", 3): 1},
             "nonzero_padding", "padding", ("tensors.dtype.end", 3),
             "C11: two non-zero padding bytes: the one before the earlier column is reported"),
        Case("c11-padding-names", allc, {("tensors.names", -1): 1},
             "nonzero_padding", "padding", ("tensors.names", -1),
             "C11: a non-zero byte just before the names column"),
        Case("c11-padding-before-utf8", allc,
             {"tensors[0].name": b"\xff", ("tensors.model_index", -1): 1},
             "nonzero_padding", "padding", ("tensors.model_index", -1),
             "C11 before C12: bad padding before model_index and a name that is not UTF-8"),
        Case("c12-utf8", full, {("tensors[1].name", 4): 0xC0},
             "bad_utf8", "tensors[1].name", "tensors[1].name", "C12: record 1's name not UTF-8"),
        Case("c12-duplicate-name", full, {"tensors[1].name": b"fc1/w"},
             "duplicate_tensor_name", "tensors[1].name", "tensors[1].name",
             "C12: record 1's name equals record 0's"),
        Case("c13-shape", full, {"tensors[2].len_data": 96},
             "shape_mismatch", "tensors[2].len_data", "tensors[2].len_data",
             "C13: len_data 96 for float32 [25]"),
        Case("order-c7-before-p4", full, {"tensors[1].dtype": 18, ("tensors[1].range.end", 6): 1},
             "bad_dtype", "tensors[1].dtype", "tensors[1].dtype",
             "rules in order: a bad dtype (C7) and non-zero data padding (P4)"),
    ]
    # fmt: on


def v3_optimizer_cases() -> list[Case]:
    """Schema 3's optimizer section (SPEC.md 7.2): V3_FULL's Adam slots m and v (K = 2, T =
    4, their names after 16 + 16K + 8KT bytes), V2_ADAM_SMALL's cut one byte short and
    V2_CUSTOM's slot names aa and ab."""
    full = v3_full()
    c = m3.from_v2(V2_ADAM_SMALL)
    opt = m3.optimizer_body(c, 0)
    k, t = len(c.slots), len(c.records)
    cut = m3.assemble(
        [
            (SectionKind.TENSORS, 1, m3.tensors_body(c, m3.needed_columns(c))),
            (SectionKind.OPTIMIZER, 1, opt[: OptimizerHead.SIZE + 16 * k + 8 * k * t - 1]),
        ]
    )
    custom = m3.encode(m3.from_v2(V2_CUSTOM)).data
    # fmt: off
    return [
        Case("o3-count", full, {"optimizer.num_tensors": 5},
             "bad_optimizer", "optimizer.num_tensors", "optimizer.num_tensors",
             "O3: T = 5 for 4 tensor records"),
        Case("o4-slots", full, {"optimizer.num_slots": 3},
             "count_exceeds_file", "optimizer.num_slots", "optimizer.num_slots",
             "O4 of 7.2: K = 3 needs 16 + 48 + 8*3*4 = 160 bytes, the section has 114"),
        Case("o4-one-byte-short", cut, {},
             "count_exceeds_file", "optimizer.num_slots", "optimizer.num_slots",
             "O4 of 7.2: the section one byte shorter than 16 + 16K + 8KT (a schema-2 reader's "
             "16KT would fail for more)"),
        Case("o7-overlap", full, {"optimizer.slots[0].ofs_name": Add(-1)},
             "overlap", "optimizer.slots[0].ofs_name", "optimizer.slots[0].ofs_name",
             "O7 of 7.2: slot 0's name one byte before s + 16 + 16K + 8KT"),
        Case("o7-gap", full, {"optimizer.slots[0].ofs_name": Add(1)},
             "gap", "optimizer.slots[0].ofs_name", "optimizer.slots[0].ofs_name",
             "O7 of 7.2: slot 0's name one byte after s + 16 + 16K + 8KT"),
        Case("o8-duplicate-slot", custom, {"*optimizer.slots[1].ofs_name": b"aa"},
             "duplicate_slot_name", "optimizer.slots[1].name", "*optimizer.slots[1].ofs_name",
             "O8: slot names aa, aa"),
    ]
    # fmt: on


def v3_state_origin_cases() -> list[Case]:
    """Schema 3's state and origin sections, schema 2's (V9, G3): V3_FULL's state (step, epoch,
    learning_rate, k1, k2, kb) and onert-micro's Adam export upgraded (an origin section)."""
    full = v3_full()
    upg = m3.encode(m3.from_v2(upgraded(MICRO_ADAM))).data
    # fmt: off
    return [
        Case("v9-duplicate-key", full, {"*state[4].ofs_key": b"k1"},
             "duplicate_state_key", "state[4].key", "*state[4].ofs_key", "V9: keys k1, k1"),
        Case("v9-step-float", full, {"state[0].value_type": ValueType.FLOAT},
             "bad_state_type", "state[0].value_type", "state[0].value_type",
             "V9: step as a float"),
        Case("g3-origin", upg, {"origin.revision": 3},
             "bad_origin", "origin.revision", "origin.revision", "G3: origin revision 3"),
    ]
    # fmt: on


def longer(data: bytes) -> tuple:
    """A patch: a zero byte appended to the data section of schema-3 ``data``, the last
    section: its len_body and len_file one more."""
    di = V2(data).index_of(SectionKind.DATA)
    return (Append(b"\0"), (f"sections[{di}].len_body", Add(1)), ("len_file", Add(1)))


def v3_placement_cases() -> list[Case]:
    """Schema 3's data section and the placement of its ranges, P0 to P4 (SPEC.md 7.3):
    V3_FULL's ranges (tensors of 16, 8, 100 and 3 bytes at 0, 16, 64 and 164, then the slots'),
    files of two 4-byte tensors, of a 1-byte tensor before an 8-byte one (a 7-byte padding run),
    of a 3-byte one before a 4-byte one (a 1-byte run), of a 1-byte tensor before an 8-byte
    momentum entry, v2-storage-order's and v2-zero-length-last's content, and files built
    without a data section or without tensors."""
    full = v3_full()

    def v3_of_v2(data: bytes) -> bytes:
        return m3.encode(m3.from_v2(data)).data

    state = m3.Content(state=[m3.StateEntry(b"step", ValueType.INT, 1)])
    two = v3_of_v2(write_v2(raw_tensors(4, 4)))
    ordered = v3_of_v2(built("v2-storage-order"))
    zero_last = v3_of_v2(built("v2-zero-length-last"))
    run = v3_of_v2(write_v2(raw_tensors(1, 8)))
    short = v3_of_v2(write_v2(raw_tensors(3, 4)))
    momentum = Optimizer("sgd_momentum", slots={"momentum": {0: Buffer(0, f32(2, 60))}})
    to_slot = v3_of_v2(write_v2(raw_tensors(1), momentum))

    # fmt: off
    return [
        Case("p0-data-only", m3.assemble([(SectionKind.DATA, 1, b"")]), {},
             "empty_section", "data", "data", "P0: a data section and no tensors section"),
        Case("p0-data-with-state",
             m3.assemble([(SectionKind.STATE, 1, lambda at: m3.state_body(state, at)),
                          (SectionKind.DATA, 1, bytes(8))]), {},
             "empty_section", "data", "data", "P0: a state section and an 8-byte data section"),
        Case("p1-no-data", tensors_only(tensors_head(1, 0) + struct.pack("<Q", 0)), {},
             "offset_out_of_bounds", "tensors[0].len_data", "tensors[0].len_data",
             "P1: a tensors section (one 0-byte tensor) and no data section"),
        Case("p1-no-data-order",
             tensors_only(tensors_head(2, m3.ORDER) + struct.pack("<QQII", 0, 0, 1, 0)), {},
             "offset_out_of_bounds", "tensors[0].len_data", "tensors[0].len_data",
             "P1 names record 0 whatever the order column says: two 0-byte tensors in data "
             "order [1, 0] and no data section"),
        Case("p2-last-tensor", two, {"tensors[1].len_data": 5},
             "offset_out_of_bounds", "tensors[1].len_data", "tensors[1].len_data",
             "P2: the second 4-byte tensor said to be 5 bytes: a(5) = 8 puts it at the "
             "section's end"),
        Case("p2-alignment-only", two, {"tensors[1].len_data": 3},
             "gap", "data", ("data.end", -1),
             "P2 passes, P3 fails: a 3-byte range at 4 ends one byte before the section's end"),
        Case("p2-data-order", ordered, {"tensors[0].len_data": 9},
             "offset_out_of_bounds", "tensors[0].len_data", "tensors[0].len_data",
             "P2 in data order: record 0, last in the order column, grown to 9 bytes "
             "(a(9) = 16)"),
        Case("p2-slot-entry", full, {"optimizer.slots[1][3].len_data": 5},
             "offset_out_of_bounds", "optimizer.slots[1][3].len_data",
             "optimizer.slots[1][3].len_data",
             "P2: v's last range (record 3) grown from 4 to 5 bytes: past the data section"),
        Case("p2-huge-slot-entry", full, {"optimizer.slots[1][3].len_data": NO_STATE - 1},
             "offset_out_of_bounds", "optimizer.slots[1][3].len_data",
             "optimizer.slots[1][3].len_data",
             "P2: a slot entry of 2**64 - 2 bytes (not NO_STATE): no overflow, out of bounds"),
        Case("p2-huge-tensor", two, {"tensors[0].len_data": NO_STATE},
             "offset_out_of_bounds", "tensors[0].len_data", "tensors[0].len_data",
             "P2: a tensor of 2**64 - 1 bytes (NO_STATE's value means nothing in len_data)"),
        Case("p3-gap", full, longer(full),
             "gap", "data", "data.end", "P3: a zero byte after the last range"),
        Case("p3-zero-length-last", zero_last, longer(zero_last),
             "gap", "data", "data.end",
             "P3: a 0-byte last range takes no padding (a(0) = 1): a byte after it is a gap"),
        Case("p4-padding", full, {("tensors[1].range.end", 6): 1},
             "nonzero_padding", "padding", ("tensors[1].range.end", 6),
             "P4: a non-zero byte in the padding after tensor 1 (8 bytes at 16, padding to 64)"),
        Case("p4-first-padding", full,
             {("tensors[3].range.end", 3): 1, ("tensors[1].range.end", 0): 2},
             "nonzero_padding", "padding", ("tensors[1].range.end", 0),
             "P4: two non-zero padding bytes: the first in data order is reported"),
        # one padding run, each of its bytes: a(8) = 8 puts tensor 1 at 8 after a 1-byte tensor
        # 0, so bytes 1..7 of the section are padding (first, middle, last); a run of one byte
        # (a 3-byte tensor, then a 4-byte one at 4) is its own first and last byte; and the run
        # before slot 0's first range, where the tensors' ranges end and the slots' begin
        *(
            Case(f"p4-padding-run-{where}-byte", run, {("tensors[0].range.end", at): 0x80},
                 "nonzero_padding", "padding", ("tensors[0].range.end", at),
                 f"P4: the {where} byte of a 7-byte padding run (section bytes 1..7, between a "
                 "1-byte range and an 8-byte one) is non-zero")
            for where, at in (("first", 0), ("middle", 3), ("last", 6))
        ),
        Case("p4-padding-run-of-one-byte", short, {("tensors[0].range.end", 0): 1},
             "nonzero_padding", "padding", ("tensors[0].range.end", 0),
             "P4: a 1-byte padding run (a 3-byte range, then a 4-byte one at 4) that is non-zero"),
        Case("p4-padding-last-byte-before-slot", to_slot,
             {("optimizer.slots[0][0].range", -1): 1},
             "nonzero_padding", "padding", ("optimizer.slots[0][0].range", -1),
             "P4: the last padding byte before slot 0's first range (the 1-byte tensor's range "
             "ends at 1, the 8-byte momentum entry starts at 8)"),
        Case("order-p3-before-p4", full, (*longer(full), (("tensors[1].range.end", 6), 1)),
             "gap", "data", "data.end", "P3 before P4: a trailing byte and non-zero padding"),
    ]
    # fmt: on


def v3_spec_fix_7_cases() -> list[Case]:
    """The cases named by the spec fixes of document revision 7 (SPEC.md A.2) in schema 3: the
    order of C12's checks."""
    three = m3.encode(m3.from_v2(three_named())).data
    # fmt: off
    return [
        Case("c12-record-by-record", three,
             {"tensors[1].name": b"a", "tensors[2].name": b"\xff"},
             "duplicate_tensor_name", "tensors[1].name", "tensors[1].name",
             "C12: UTF-8 then uniqueness on one record before the next: record 1 repeats "
             "record 0's name, before record 2's name (not UTF-8) is looked at"),
    ]
    # fmt: on


#: Schema 3's tables (SPEC.md 7), applied by make_invalid_v3 in this order.
CASE_TABLES.update(
    {
        "v3-detection": ("v3-", V3Places, v3_detection_cases),
        "v3-v2-reads-v3": ("v2-", V3Places, v2_reads_v3_cases),
        "v3-container": ("v3-", V3Places, v3_container_cases),
        "v3-tensors": ("v3-", V3Places, v3_tensor_cases),
        "v3-optimizer": ("v3-", V3Places, v3_optimizer_cases),
        "v3-state-origin": ("v3-", V3Places, v3_state_origin_cases),
        "v3-placement": ("v3-", V3Places, v3_placement_cases),
        "v3-spec-fixes-7": ("v3-", V3Places, v3_spec_fix_7_cases),
    }
)
#: Schema 3's tables but those of its optional sections, in the order make_invalid_v3 applies
#: them (the order of spec/vectors/README.md)
V3_TABLES = [name for name in CASE_TABLES if name.startswith("v3-")]
#: Schema 3's optional sections (7.4, 7.5): each table applied by its section's function
#: (make_data_blocks_v3, make_range_index_v3) after that section's valid vectors
CASE_TABLES.update(
    {
        "v3-data-blocks": ("v3-", V3Places, v3_data_blocks_cases),
        "v3-range-index": ("v3-", V3Places, v3_range_index_cases),
    }
)


def ALL_BY_NAME(name: str) -> bytes:
    return next(v.data for v in ALL if v.name == name)


V2_ADAM_SMALL = write_v2(
    tensors({0: 4, 1: 2}),
    adam(tensors({0: 4, 1: 2})),
)


# ------------------------------------------------------------------------------------------------
# Expected outputs, checking, writing


def expected(v: Vector) -> dict:
    if v.error is not None:
        code, field, offset = v.error
        return {"error": {"code": code, "field": field, "offset": offset}}
    if v.description is not None:
        return v.description
    desc = oc.describe(oc.load(v.data))
    if (desc["revision"], desc["dialect"]) != (v.revision, v.dialect):
        raise SystemExit(
            f"{v.name}: built as {v.revision}/{v.dialect} but reads as "
            f"{desc['revision']}/{desc['dialect']}"
        )
    return desc


def python_output(data: bytes) -> dict:
    """What the Python library says of ``data``, in the vectors' JSON shape."""
    try:
        return json.loads(json.dumps(oc.describe(oc.load(data))))
    except oc.CheckpointError as err:
        return {"error": {"code": err.code, "field": err.field, "offset": err.offset}}
    except Exception as exc:  # a reader bug: reported as a disagreement, not a crash here
        return {"exception": f"{type(exc).__name__}: {exc}"}


def dumps(obj: object) -> str:
    return json.dumps(obj, indent=1, sort_keys=False) + "\n"


def build() -> list[Vector]:
    ALL.clear()
    make_valid()
    make_valid_v2()
    make_invalid()
    make_invalid_v2()
    make_valid_v3()
    make_invalid_v3()
    make_data_blocks_v3()
    make_range_index_v3()
    names = [v.name for v in ALL]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate vector name")
    return list(ALL)


def readme(vectors: list[Vector]) -> str:
    lines = [
        "# Conformance vectors",
        "",
        "Generated by `python spec/make_vectors.py` (do not edit by hand). Each `<name>.ckpt` sits",
        "beside `<name>.json`: for a valid file the JSON description of `onert-ckpt info --json`",
        '(spec/SPEC.md, "The JSON description"); for an invalid one',
        '`{"error": {"code", "field", "offset"}}`, the first rule of spec/SPEC.md it breaks.',
        "A conforming reader produces exactly these objects (compare after `json.loads`; the",
        "`message` of an error is free text and not compared). tests/spec/test_vectors.py runs the",
        "Python library and, when it builds, the reference C reader of spec/c/ on every vector.",
        "",
        "Schema-2 vectors (`v2-*`, `invalid-v2-*`, spec/SPEC.md section 6) are written by the",
        "library's writer; the invalid ones are corrupted with every CRC-32C recomputed afterwards",
        "(`reseal`) unless the checksum itself is the rule tested. Their error field and offset",
        "follow the rule of SPEC.md 6 and 8 named in the last column.",
        "",
        "Schema-3 vectors (`v3-*`, `invalid-v3-*`, spec/SPEC.md section 7) are encoded by",
        "spec/oracles/v3_encoder.py, a second encoder written from SPEC.md 7 alone, and",
        'make_vectors.py requires the library\'s writer (`to_bytes(..., revision="v3")`) to',
        "produce the same bytes; each valid one's JSON is derived from that encoder's content",
        '(TOOLKIT.md 1 with `revision` `"v3"` and the offsets placed by 7.3), not from the',
        "library. `v3-<name>` for a `v2-<name>` holds the same content. Invalid ones are resealed",
        "like schema 2's; their field and offset follow the rules of SPEC.md 6 and 7.",
        "",
        "A schema-3 reader MAY skip the optional kinds data_blocks (0x100008) and range_index",
        "(0x100009) as unknown kinds (spec/TOOLKIT.md 4, spec/SPEC.md 10).",
        "`optional-kinds.ndjson` has one JSON line per vector and set of skipped kinds for",
        "which such a reader gives another result:",
        "`vector`, `skips` (the kinds, in hex) and `expect`, the result it gives instead.",
        "",
    ]
    valid_v = [v for v in vectors if v.valid]
    invalid_v = [v for v in vectors if not v.valid]
    lines += [f"{len(valid_v)} valid and {len(invalid_v)} invalid vectors.", "", "## Valid", ""]
    lines += ["| vector | revision | dialect | bytes | what it shows |", "|---|---|---|---|---|"]
    for v in valid_v:
        lines.append(
            f"| `{v.name}` | {v.revision} | {v.dialect or 'null'} | {len(v.data)} | {v.rule} |"
        )
    lines += ["", "## Invalid", ""]
    lines += ["| vector | code | field | offset | rule it tests |", "|---|---|---|---|---|"]
    for v in invalid_v:
        assert v.error is not None
        code, field, offset = v.error
        lines.append(f"| `{v.name}` | `{code}` | `{field}` | {offset} | {v.rule} |")
    return "\n".join(lines) + "\n"


def write_all(out: Path) -> list[Vector]:
    vectors = build()
    if out.exists():
        for p in out.iterdir():
            if p.suffix in (".ckpt", ".json") or p.name == "README.md":
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    for v in vectors:
        (out / f"{v.name}.ckpt").write_bytes(v.data)
        (out / f"{v.name}.json").write_text(dumps(expected(v)))
    (out / "README.md").write_text(readme(vectors))
    (out / "optional-kinds.ndjson").write_text(skipping_table(vectors))
    return vectors


def disagreements(vectors: list[Vector]) -> list[tuple[str, dict, dict]]:
    out = []
    for v in vectors:
        want, got = expected(v), python_output(v.data)
        if want != got:
            out.append((v.name, want, got))
    return out


# ------------------------------------------------------------------------------------------------
# The annotated hex dump of SPEC.md's worked example


def hexdump(data: bytes) -> str:
    """An annotated dump of a schema-1 file: every header byte, each table entry, the first 16
    bytes of every data entry and the footer; a line is ``offset (decimal, hex), bytes, meaning``.
    """
    f = V1(data)
    lines = [f"{'at':>5} {'hex':>4}  {'bytes':<47}  meaning"]

    def row(at: int, size: int, text: str) -> None:
        lines.append(f"{at:5d} {at:04x}  {data[at : at + size].hex(' '):<47}  {text}")

    row(0, 2, "magic = 429 (u16 little-endian)")
    row(2, 1, f"version = {data[2]}")
    row(3, 1, f"reserved = {data[3]}")
    sgd_onert = f.opt1 == f.other and f.opt2 == 0
    row(
        4,
        4,
        f"ofs_opt1 = {f.opt1}" + (" = ofs_other: onert's SGD, no m block" if sgd_onert else ""),
    )
    row(8, 4, f"ofs_opt2 = {f.opt2}" + (": no v block, so SGD" if f.opt2 == 0 else ""))
    row(12, 4, f"ofs_other = {f.other} = S - 8: the footer")
    row(16, 4, f"num_entries = N = {f.n}")
    desc = oc.describe(oc.load(data))
    blocks = [("weights", 20, {t["index"]: t for t in desc["tensors"]})]
    if desc["optimizer"] and desc["optimizer"]["slots"]:
        for (name, entries), start in zip(desc["optimizer"]["slots"].items(), (f.opt1, f.opt2)):
            blocks.append((name, start, {e["index"]: e for e in entries}))
    for name, start, entries in blocks:
        for i in range(f.n):
            e = entries[i]
            last = e["offset"] + e["nbytes"] - 1
            row(
                start + 4 * i,
                4,
                f"{name}[{i}] = {e['offset']}: {e['nbytes']} bytes, {e['offset']}..{last}",
            )
        for i in sorted(entries, key=lambda k: entries[k]["offset"]):
            e = entries[i]
            shown = min(16, e["nbytes"])
            floats = struct.unpack_from(f"<{shown // 4}f", data, e["offset"])
            row(
                e["offset"],
                shown,
                f"{name}[{i}] data: "
                + ", ".join(f"{x:.4g}" for x in floats)
                + ("" if shown == e["nbytes"] else ", ..."),
            )
            if e["nbytes"] > shown:
                lines.append(
                    f"{'':10}  {'...':<47}  {e['nbytes'] - shown} more bytes of {name}[{i}], "
                    f"to {e['offset'] + e['nbytes'] - 1}"
                )
    row(f.other, 4, f"step = {u32(data, f.other)}")
    row(f.other + 4, 4, f"epoch = {u32(data, f.other + 4)} (onert always writes 0)")
    lines.append(f"{len(data):5d} {len(data):04x}  {'':<47}  end of file: S = {len(data)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--out", type=Path, default=VECTORS, help="folder to write (default spec/vectors)"
    )
    parser.add_argument(
        "--hexdump", type=Path, metavar="FILE", help="print the annotated dump of FILE"
    )
    args = parser.parse_args(argv)
    if args.hexdump:
        sys.stdout.write(hexdump(args.hexdump.read_bytes()))
        return 0
    vectors = write_all(args.out)
    n_valid = sum(v.valid for v in vectors)
    print(f"{args.out}: {n_valid} valid, {len(vectors) - n_valid} invalid vectors")
    for name, want, got in disagreements(vectors):
        print(f"DISAGREEMENT {name}: spec {json.dumps(want)}; Python library {json.dumps(got)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
