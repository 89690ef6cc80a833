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
  (the library is a reader under test like any other; tests/test_vectors.py lists the known
  ones).

Valid files come from the library's own writer (``onert_checkpoint.to_bytes``) or are the real
onert exports of tests/data/real-onert/; invalid ones are valid files with deliberate corruption
(a patched u32, a cut, an appended byte). Nothing depends on time, randomness or the machine, so
a second run writes identical bytes (tests/test_vectors.py checks it).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState

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


def tensors(counts: dict[int, int], order: list[int] | None = None) -> list[Tensor]:
    """Weight tensors ``index -> element count``; ``order`` fixes the storage order (onert-micro's
    saver appends in reverse operator order), through the ``offset`` the writer sorts by."""
    rank = {i: k for k, i in enumerate(order)} if order else {}
    return [Tensor(index=i, data=values(n, i), offset=rank.get(i)) for i, n in counts.items()]


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
        num_entries=num_entries,
        quirks=("footerless",) if footerless else (),
    )
    return oc.to_bytes(ckpt, revision="v1", dialect=dialect)


def write_wof(ts: list[Tensor], num_entries: int | None = None) -> bytes:
    ckpt = Checkpoint(tensors=ts, optimizer=None, state=TrainingState(), num_entries=num_entries)
    return oc.to_bytes(ckpt, revision="wof", dialect=None)


# ------------------------------------------------------------------------------------------------
# Corruption


def u32(data: bytes, at: int) -> int:
    return struct.unpack_from("<I", data, at)[0]


def put(data: bytes, at: int, value: int) -> bytes:
    """``data`` with the u32 at ``at`` replaced by ``value``."""
    out = bytearray(data)
    struct.pack_into("<I", out, at, value)
    return bytes(out)


def put8(data: bytes, at: int, value: int) -> bytes:
    out = bytearray(data)
    out[at] = value
    return bytes(out)


@dataclass(frozen=True)
class V1:
    """Where things are in a schema-1 file (read straight from the header, for patching)."""

    data: bytes

    @property
    def opt1(self) -> int:
        return u32(self.data, 4)

    @property
    def opt2(self) -> int:
        return u32(self.data, 8)

    @property
    def other(self) -> int:
        return u32(self.data, 12)

    @property
    def n(self) -> int:
        return u32(self.data, 16)

    @property
    def size(self) -> int:
        return len(self.data)

    def table(self, block: str) -> int:
        return {"weights": 20, "m": self.opt1, "v": self.opt2}[block]

    def entry_at(self, block: str, i: int) -> int:
        """The table position of entry ``i`` of ``block``."""
        return self.table(block) + 4 * i

    def entry(self, block: str, i: int) -> int:
        return u32(self.data, self.entry_at(block, i))

    def data_start(self, block: str) -> int:
        return self.table(block) + 4 * self.n

    def set_entry(self, block: str, i: int, value: int) -> bytes:
        return put(self.data, self.entry_at(block, i), value)


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
    osgd, oadam, msgd, madam = V1(ONERT_SGD), V1(ONERT_ADAM), V1(MICRO_SGD), V1(MICRO_ADAM)

    # Reading a file, steps 1-4
    invalid("empty", b"", "detection 1: S < 2", "truncated_header", "header", 0)
    invalid("one-byte", b"\xad", "detection 1: S < 2", "truncated_header", "header", 0)
    invalid(
        "magic-only",
        b"\xad\x01",
        "detection 3: the version byte is missing",
        "truncated_header",
        "header",
        0,
    )
    invalid("bad-magic-zero", bytes(20), "detection 2: magic 0", "bad_magic", "magic", 0)
    invalid(
        "bad-magic-swapped",
        b"\x01\xad" + ONERT_SGD[2:],
        "detection 2: magic byte-swapped (big-endian writer)",
        "bad_magic",
        "magic",
        0,
    )
    invalid(
        "bad-magic-two-bytes",
        b"PK",
        "detection 2: two bytes, not the magic",
        "bad_magic",
        "magic",
        0,
    )
    invalid(
        "version-0",
        put8(ONERT_SGD, 2, 0),
        "detection 4: version byte 0",
        "unsupported_version",
        "version",
        2,
    )
    invalid(
        "version-3",
        put8(ONERT_SGD, 2, 3),
        "detection 4: version byte 3",
        "unsupported_version",
        "version",
        2,
    )
    invalid(
        "version-255",
        put8(ONERT_SGD, 2, 255),
        "detection 4: version byte 255",
        "unsupported_version",
        "version",
        2,
    )

    # Schema 1, rule 1
    invalid(
        "v1-header-19",
        ONERT_SGD[:19],
        "rule 1: a 19-byte file (not WOF-shaped)",
        "truncated_header",
        "header",
        0,
    )
    invalid(
        "v1-header-3",
        ONERT_SGD[:3],
        "rule 1 (and WOF): a 3-byte file",
        "truncated_header",
        "header",
        0,
    )
    invalid(
        "v1-header-7",
        ONERT_SGD[:7],
        "rule 1 (and WOF): a 7-byte file",
        "truncated_header",
        "header",
        0,
    )
    # rule 2
    invalid(
        "v1-reserved",
        put8(ONERT_SGD, 3, 1),
        "rule 2: reserved byte 1",
        "reserved_nonzero",
        "reserved",
        3,
    )
    invalid(
        "v1-micro-reserved",
        put8(MICRO_SGD, 3, 0xFF),
        "rule 2: reserved byte 0xff",
        "reserved_nonzero",
        "reserved",
        3,
    )
    # rule 3
    invalid(
        "v1-count-max",
        put(ONERT_SGD, 16, U32_MAX),
        "rule 3: N = 2**32-1 (checked before any allocation)",
        "count_exceeds_file",
        "num_entries",
        16,
    )
    invalid(
        "v1-count-one-too-many",
        put(ONERT_SGD, 16, (osgd.size - 20) // 4 + 1),
        "rule 3: the table would end 4 bytes past the file",
        "count_exceeds_file",
        "num_entries",
        16,
    )
    invalid(
        "v1-count-overflow-32",
        put(ONERT_SGD, 16, 0x40000000),
        "rule 3: 4N wraps to 0 in 32-bit arithmetic",
        "count_exceeds_file",
        "num_entries",
        16,
    )
    # rule 4
    invalid(
        "v1-footer-cut",
        ONERT_SGD[:-1],
        "rule 4: the last footer byte is missing",
        "truncated_file",
        "ofs_other",
        12,
    )
    invalid(
        "v1-micro-footer-cut",
        MICRO_SGD[:-4],
        "rule 4: the epoch is missing",
        "truncated_file",
        "ofs_other",
        12,
    )
    invalid(
        "v1-other-past-end",
        put(ONERT_ADAM, 12, oadam.size),
        "rule 4: ofs_other == S",
        "truncated_file",
        "ofs_other",
        12,
    )
    invalid(
        "v1-other-max",
        put(ONERT_ADAM, 12, U32_MAX),
        "rule 4: ofs_other = 2**32-1 (no overflow in other + 8)",
        "truncated_file",
        "ofs_other",
        12,
    )
    invalid(
        "v1-trailing-byte",
        ONERT_SGD + b"\x00",
        "rule 4: one byte after the footer",
        "trailing_bytes",
        "footer",
        osgd.size,
    )
    invalid(
        "v1-micro-trailing-8",
        MICRO_SGD + bytes(8),
        "rule 4: a second footer",
        "trailing_bytes",
        "footer",
        msgd.size,
    )
    invalid(
        "v1-other-early",
        put(ONERT_ADAM, 12, oadam.other - 4),
        "rule 4: ofs_other 4 bytes early",
        "trailing_bytes",
        "footer",
        oadam.other + 4,
    )
    # rule 5
    invalid(
        "v1-adam-opt1-zero",
        put(ONERT_ADAM, 4, 0),
        "rule 5: a v block without an m block",
        "optimizer_layout",
        "ofs_opt1",
        4,
    )
    invalid(
        "v1-sgd-opt1-random",
        put(ONERT_SGD, 4, 36),
        "rule 5: SGD ofs_opt1 neither 0 nor ofs_other",
        "optimizer_layout",
        "ofs_opt1",
        4,
    )
    invalid(
        "v1-micro-sgd-opt1-past",
        put(MICRO_SGD, 4, msgd.size + 100),
        "rule 5: SGD ofs_opt1 past the end",
        "optimizer_layout",
        "ofs_opt1",
        4,
    )
    invalid(
        "v1-footerless-sgd-opt1",
        put(write(tensors(ONERT_COUNTS), dialect="onert", footerless=True), 4, 32),
        "rule 5: footer-less SGD whose ofs_opt1 is not the end of the file",
        "optimizer_layout",
        "ofs_opt1",
        4,
    )
    # rule 6
    invalid(
        "v1-opt1-past-end",
        put(ONERT_ADAM, 4, oadam.size + 1),
        "rule 6: ofs_opt1 > S",
        "offset_out_of_bounds",
        "ofs_opt1",
        4,
    )
    invalid(
        "v1-opt2-max",
        put(ONERT_ADAM, 8, U32_MAX),
        "rule 6: ofs_opt2 = 2**32-1",
        "offset_out_of_bounds",
        "ofs_opt2",
        8,
    )
    invalid(
        "v1-opt1-opt2-past-end",
        put(put(ONERT_ADAM, 4, oadam.size + 4), 8, oadam.size + 8),
        "rule 6: both past the end: ofs_opt1 is reported",
        "offset_out_of_bounds",
        "ofs_opt1",
        4,
    )
    # rule 7
    # A small ofs_opt1 makes a large file WOF-shaped (detection 5.3), so this one is small.
    tiny = {0: 1, 1: 1, 2: 1}
    tiny_adam = write(tensors(tiny), adam(tensors(tiny)), dialect="onert")
    invalid(
        "v1-opt1-in-weight-table",
        put(tiny_adam, 4, 28),
        "rule 7: the m block starts inside the weight table (a file too small to be WOF-shaped)",
        "block_order",
        "ofs_opt1",
        4,
    )
    invalid(
        "v1-opt1-in-header-wof-shaped",
        put(ONERT_ADAM, 4, 8),
        "detection 5.3: ofs_opt1 = 8 makes the file WOF-shaped, so WOF's rule 8 is reported: "
        "its entry 2 is the checkpoint's num_entries, 3",
        "entry_out_of_block",
        "tensors[2]",
        16,
    )
    invalid(
        "v1-opt2-in-m-table",
        put(ONERT_ADAM, 8, oadam.opt1 + 4),
        "rule 7: the v block starts inside the m table",
        "block_order",
        "ofs_opt2",
        8,
    )
    invalid(
        "v1-opt1-opt2-swapped",
        put(put(ONERT_ADAM, 4, oadam.opt2), 8, oadam.opt1),
        "rule 7: v before m",
        "block_order",
        "ofs_opt2",
        8,
    )
    invalid(
        "v1-opt2-near-footer",
        put(ONERT_ADAM, 8, oadam.other - 4),
        "rule 7: the v table would overlap the footer",
        "block_order",
        "ofs_other",
        12,
    )
    invalid(
        "v1-sgd-table-over-footer",
        put(ONERT_SGD, 16, (osgd.other - 20) // 4 + 1),
        "rule 7: the weight table runs into the footer",
        "block_order",
        "ofs_other",
        12,
    )
    fl_adam = write(
        tensors(ONERT_COUNTS), adam(tensors(ONERT_COUNTS)), dialect="onert", footerless=True
    )
    invalid(
        "v1-footerless-opt2-near-end",
        put(fl_adam, 8, len(fl_adam) - 4),
        "rule 7, footer-less: the v table would run past the end of the file",
        "block_order",
        "header",
        0,
    )
    # rule 8
    invalid(
        "v1-weight-into-header",
        osgd.set_entry("weights", 0, 4),
        "rule 8: a weight entry points into the header",
        "entry_out_of_block",
        "weights[0]",
        20,
    )
    invalid(
        "v1-weight-into-table",
        osgd.set_entry("weights", 1, 24),
        "rule 8: a weight entry points into its own table",
        "entry_out_of_block",
        "weights[1]",
        24,
    )
    invalid(
        "v1-weight-into-footer",
        osgd.set_entry("weights", 2, osgd.other + 4),
        "rule 8: a weight entry points into the footer",
        "entry_out_of_block",
        "weights[2]",
        28,
    )
    invalid(
        "v1-weight-into-m",
        oadam.set_entry("weights", 2, oadam.data_start("m") + 4),
        "rule 8: a weight entry points into the m block",
        "entry_out_of_block",
        "weights[2]",
        28,
    )
    invalid(
        "v1-m-into-weights",
        oadam.set_entry("m", 0, 40),
        "rule 8: an m entry points into the weight data",
        "entry_out_of_block",
        "m[0]",
        oadam.entry_at("m", 0),
    )
    invalid(
        "v1-v-into-footer",
        oadam.set_entry("v", 1, oadam.other + 4),
        "rule 8: a v entry points into the footer",
        "entry_out_of_block",
        "v[1]",
        oadam.entry_at("v", 1),
    )
    invalid(
        "v1-micro-m-into-v",
        madam.set_entry("m", 3, madam.data_start("v")),
        "rule 8: an m entry points into the v block",
        "entry_out_of_block",
        "m[3]",
        madam.entry_at("m", 3),
    )
    invalid(
        "v1-weight-past-end",
        osgd.set_entry("weights", 1, osgd.size + 1),
        "rule 8: a weight entry past the end of the file",
        "offset_out_of_bounds",
        "weights[1]",
        24,
    )
    invalid(
        "v1-weight-max",
        osgd.set_entry("weights", 0, U32_MAX),
        "rule 8: a weight entry 2**32-1",
        "offset_out_of_bounds",
        "weights[0]",
        20,
    )
    invalid(
        "v1-m-past-end",
        oadam.set_entry("m", 2, oadam.size + 1),
        "rule 8: an m entry past the end",
        "offset_out_of_bounds",
        "m[2]",
        oadam.entry_at("m", 2),
    )
    invalid(
        "v1-micro-v-past-end",
        madam.set_entry("v", 4, 0x80000000),
        "rule 8: a v entry 2**31",
        "offset_out_of_bounds",
        "v[4]",
        madam.entry_at("v", 4),
    )
    invalid(
        "v1-micro-absent-then-outside",
        madam.set_entry("weights", 0, 4),
        "rule 8: a (formerly absent) entry 0 of an onert-micro table points into the header",
        "entry_out_of_block",
        "weights[0]",
        20,
    )
    # rule 9
    invalid(
        "v1-weight-hole",
        osgd.set_entry("weights", 0, 36),
        "rule 9: 4 bytes between the weight table and the first entry",
        "unreferenced_bytes",
        "weights",
        32,
    )
    invalid(
        "v1-m-hole",
        oadam.set_entry("m", 0, oadam.data_start("m") + 4),
        "rule 9: a hole at the start of the m data",
        "unreferenced_bytes",
        "m",
        oadam.data_start("m"),
    )
    invalid(
        "v1-v-hole",
        oadam.set_entry("v", 0, oadam.data_start("v") + 16),
        "rule 9: the first v entry skipped",
        "unreferenced_bytes",
        "v",
        oadam.data_start("v"),
    )
    zeroed = MICRO_SGD
    for i in range(msgd.n):
        zeroed = V1(zeroed).set_entry("weights", i, 0)
    invalid(
        "v1-micro-all-absent-with-data",
        zeroed,
        "rule 9: every entry absent but the data area is not empty",
        "unreferenced_bytes",
        "weights",
        msgd.data_start("weights"),
    )
    first = MICRO_ORDER[0]  # the entry stored first; dropping it leaves its bytes to no entry
    invalid(
        "v1-micro-first-stored-absent",
        msgd.set_entry("weights", first, 0),
        "rule 9: the entry stored first is marked absent",
        "unreferenced_bytes",
        "weights",
        msgd.data_start("weights"),
    )
    # onert-micro's double save of a shared weight, when the first copy is stored first
    invalid(
        "v1-micro-shared-weight-first",
        double_save(
            write(
                tensors({1: 4, 3: 2}, [3, 1]), dialect="onert-micro", step=4, epoch=1, num_entries=5
            ),
            3,
        ),
        "rule 9: onert-micro's double save of a shared weight stored first: its first copy "
        "belongs to no entry",
        "unreferenced_bytes",
        "weights",
        20 + 4 * 5,
    )
    # rule 10
    invalid(
        "v1-m-without-weight",
        madam.set_entry("weights", 1, 0),
        "rule 10: m[1] present, weights[1] absent (tensor 3 absorbs tensor 1's bytes)",
        "slot_without_weight",
        "m[1]",
        madam.entry_at("m", 1),
    )
    invalid(
        "v1-v-without-weight",
        V1(madam.set_entry("weights", 1, 0)).set_entry("m", 1, 0),
        "rule 10: v[1] present, weights[1] and m[1] absent",
        "slot_without_weight",
        "v[1]",
        madam.entry_at("v", 1),
    )
    invalid(
        "v1-m-size",
        oadam.set_entry("m", 1, oadam.entry("m", 1) - 4),
        "rule 10: m[0] 4 bytes shorter than weights[0]",
        "slot_size_mismatch",
        "m[0]",
        oadam.entry_at("m", 0),
    )
    invalid(
        "v1-v-size",
        oadam.set_entry("v", 2, oadam.entry("v", 2) + 4),
        "rule 10: v[1] 4 bytes longer than weights[1]",
        "slot_size_mismatch",
        "v[1]",
        oadam.entry_at("v", 1),
    )
    invalid(
        "v1-micro-m-size",
        madam.set_entry("m", 3, madam.entry("m", 3) + 4),
        "rule 10: onert-micro m[3] 4 bytes short (m[4], stored before it, 4 bytes too long)",
        "slot_size_mismatch",
        "m[3]",
        madam.entry_at("m", 3),
    )
    m_empty_v_full = remove_bytes(ONERT_ADAM, oadam.entry("m", 2), 12)  # m[2] now zero-length
    invalid(
        "v1-m-empty-v-full",
        m_empty_v_full,
        "rule 10: m[2] zero-length but v[2] as long as the weight: m and v differ",
        "slot_size_mismatch",
        "v[2]",
        V1(m_empty_v_full).entry_at("v", 2),
    )
    # rule 11
    invalid(
        "v1-absent-with-onert-sgd",
        put(MICRO_SGD, 4, msgd.other),
        "rule 11: absent entries with onert's SGD ofs_opt1 == ofs_other",
        "dialect_conflict",
        "header",
        0,
    )
    fl = write(tensors(MICRO_COUNTS, MICRO_ORDER), dialect="onert-micro", num_entries=6)
    invalid(
        "v1-footerless-absent",
        put(fl[:-8], 12, 0),
        "rule 11: no footer (onert) with absent entries (onert-micro)",
        "dialect_conflict",
        "header",
        0,
    )
    shuffled_sgd = write(tensors(ONERT_COUNTS, [2, 1, 0]), dialect="onert-micro")
    invalid(
        "v1-footerless-shuffled",
        put(put(shuffled_sgd[:-8], 12, 0), 4, len(shuffled_sgd) - 8),
        "rule 11: no footer (onert) with data out of table order (onert-micro)",
        "dialect_conflict",
        "header",
        0,
    )
    invalid(
        "v1-shuffled-with-onert-sgd",
        put(shuffled_sgd, 4, V1(shuffled_sgd).other),
        "rule 11: data out of table order with onert's SGD ofs_opt1",
        "dialect_conflict",
        "header",
        0,
    )
    same = {0: 2, 1: 2, 2: 3}
    invalid(
        "v1-adam-empty-slot-shuffled",
        swap_first_two_weights(
            write(tensors(same), adam(tensors(same), empty=(1,)), dialect="onert")
        ),
        "rule 11: a zero-length slot entry (onert) with weights out of table order (onert-micro)",
        "dialect_conflict",
        "header",
        0,
    )
    v_absent = remove_bytes(ONERT_ADAM, oadam.entry("v", 2), 12)  # v[2] now zero-length
    invalid(
        "v1-m-full-v-absent",
        V1(v_absent).set_entry("v", 2, 0),
        "rules 10 and 11: m[2] full and v[2] absent; rule 10 compares m and v only when both "
        "are present, and the absent entry fits no dialect",
        "dialect_conflict",
        "header",
        0,
    )

    # WOF: a version-1 file that is no valid checkpoint and no valid WOF is reported as WOF when
    # it is WOF-shaped (detection 5.3)
    wv = WOF
    wtab, wn = 8, u32(WOF, 4)
    wdata = wtab + 4 * wn
    invalid(
        "wof-reserved", put8(wv, 3, 1), "WOF: reserved byte 1", "reserved_nonzero", "reserved", 3
    )
    invalid(
        "wof-entry-past-end",
        put(wv, wtab + 4 * 4, len(wv) + 1),
        "WOF rule 8: an entry past the end of the file",
        "offset_out_of_bounds",
        "tensors[4]",
        wtab + 16,
    )
    invalid(
        "wof-entry-into-table",
        put(wv, wtab + 4 * 2, wtab + 4),
        "WOF rule 8: an entry into the offset table",
        "entry_out_of_block",
        "tensors[2]",
        wtab + 8,
    )
    invalid(
        "wof-entry-into-header",
        put(wv, wtab + 4 * 1, 2),
        "WOF rule 8: a (formerly absent) entry into the header",
        "entry_out_of_block",
        "tensors[1]",
        wtab + 4,
    )
    stored_first = min((u32(wv, wtab + 4 * i), i) for i in range(wn) if u32(wv, wtab + 4 * i))[1]
    invalid(
        "wof-hole",
        put(wv, wtab + 4 * stored_first, wdata + 4),
        "WOF rule 9: a hole before the first entry",
        "unreferenced_bytes",
        "tensors",
        wdata,
    )
    zero = wv
    for i in range(wn):
        zero = put(zero, wtab + 4 * i, 0)
    invalid(
        "wof-all-absent-with-data",
        zero,
        "WOF rule 9: every entry absent but data follows the table",
        "unreferenced_bytes",
        "tensors",
        wdata,
    )
    # Not WOF-shaped (the count does not fit): the checkpoint's error is reported. Read as a
    # checkpoint, WOF's entries 1..3 are ofs_opt2, ofs_other and num_entries.
    invalid(
        "wof-count-exceeds",
        put(wv, 4, len(wv)),
        "detection 5.3: a WOF count too large is not WOF-shaped: the checkpoint error (rule 3, "
        "its num_entries is WOF's entry 2)",
        "count_exceeds_file",
        "num_entries",
        16,
    )
    short_wof = write_wof(tensors({0: 1}))  # 16 bytes: shorter than a checkpoint header
    invalid(
        "wof-short-entry-into-header",
        put(short_wof, 8, 4),
        "a 16-byte WOF whose entry points into the header: WOF-shaped, so WOF rule 8",
        "entry_out_of_block",
        "tensors[0]",
        8,
    )

    # Readers must apply the rules in the order of spec/SPEC.md (the first failing rule wins).
    both = V1(osgd.set_entry("weights", 0, 4)).set_entry("weights", 1, osgd.size + 1)
    invalid(
        "order-out-of-block-before-out-of-bounds",
        both,
        "rule 8 runs entry by entry: weights[0] (into the header) is reported before "
        "weights[1] (past the end)",
        "entry_out_of_block",
        "weights[0]",
        20,
    )
    hole_then_bad_m = V1(oadam.set_entry("weights", 0, 36)).set_entry("m", 1, oadam.size + 4)
    invalid(
        "order-entries-before-sizes",
        hole_then_bad_m,
        "rule 8 is applied to every block before rule 9: m[1] past the end is reported before "
        "the hole in the weights",
        "offset_out_of_bounds",
        "m[1]",
        oadam.entry_at("m", 1),
    )
    # index 1: weight and m absent, v present; index 3: m 4 bytes short. Index order decides.
    tmp = V1(V1(madam.set_entry("weights", 1, 0)).set_entry("m", 1, 0))
    invalid(
        "order-slots-by-index",
        tmp.set_entry("m", 3, tmp.entry("m", 3) + 4),
        "rule 10 runs index by index: v[1] without a weight is reported before m[3]'s size",
        "slot_without_weight",
        "v[1]",
        madam.entry_at("v", 1),
    )
    invalid(
        "order-version-before-size",
        b"\xad\x01\x07",
        "detection 4 comes before any size rule: a 3-byte file with version 7",
        "unsupported_version",
        "version",
        2,
    )


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
# Expected outputs, checking, writing


def expected(v: Vector) -> dict:
    if v.error is not None:
        code, field, offset = v.error
        return {"error": {"code": code, "field": field, "offset": offset}}
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
        return oc.describe(oc.load(data))
    except oc.CheckpointError as err:
        return {"error": {"code": err.code, "field": err.field, "offset": err.offset}}


def dumps(obj: object) -> str:
    return json.dumps(obj, indent=1, sort_keys=False) + "\n"


def build() -> list[Vector]:
    ALL.clear()
    make_valid()
    make_invalid()
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
        "`message` of an error is free text and not compared). tests/test_vectors.py runs the",
        "Python library and, when it builds, the reference C reader of spec/c/ on every vector.",
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
