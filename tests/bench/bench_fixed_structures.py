"""The fixed structures of schemas 2 and 3 read through the generated Kaitai parser against the
generated NumPy record type (onert_checkpoint_generated.layout), in the same process.

    python tests/bench/bench_fixed_structures.py          # prints the table of
                                                          # docs/performance-notes.md

The readers read every header through the revision's generated parser (after rules H1 to H5),
and the section table and each section's fixed head through the generated dtype. This measures
why: for each structure, the time of one read each way (the best of 7 timeit runs), their
ratio, and the same read as a share of ``load`` of a realistic file, on

* the section table of a schema-3 file with 64 sections (MAX_SECTIONS, the largest table);
* the tensors section's head of a schema-3 file of 100,000 tensors: the generated
  ``TensorsSection`` reads the whole section (its seq holds the columns), the dtype its 8 bytes;
* the state section's head of a file with 1,024 state entries (MAX_STATE_ENTRIES): the
  generated ``StateSection`` reads every entry;
* the optimizer section's 16-byte head (a fixed record in both).

The load average before and after is printed with the table (timings are of this machine).
"""

from __future__ import annotations

import os
import timeit

import numpy as np
from kaitaistruct import KaitaiStream
from onert_checkpoint_generated import layout
from onert_checkpoint_generated.onert_checkpoint_common import OnertCheckpointCommon as Common
from onert_checkpoint_generated.onert_checkpoint_v3 import OnertCheckpointV3

import onert_checkpoint as oc
from onert_checkpoint.format.layout import Schema3Layout
from onert_checkpoint.format.model import Optimizer, Section, TrainingState
from onert_checkpoint.format.source import BufferReader


def _best(fn, number: int) -> float:
    """Seconds per call, the best of 7 runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=7)) / number


def _stream(data: bytes, start: int = 0, length: int | None = None) -> KaitaiStream:
    view = memoryview(data)[start : None if length is None else start + length]
    return KaitaiStream(BufferReader(view))


def _sections(data: bytes) -> list[tuple[int, int, int]]:
    n = int(np.frombuffer(data, layout.Header.DTYPE, 1)[0]["num_sections"])
    table = np.frombuffer(data, layout.SectionEntry.DTYPE, n, layout.Header.SIZE)
    return [(int(e["kind"]), int(e["ofs_body"]), int(e["len_body"])) for e in table]


def _file_with_64_sections() -> bytes:
    extra = [Section(kind=0x200 + i, data=b"x") for i in range(61)]
    ck = oc.Checkpoint(
        tensors=[oc.Tensor(0, np.zeros(4, np.float32))],
        state=TrainingState(step=1),
        layout=Schema3Layout("v3", sections=extra),
    )
    ck.layout.data_block_size = 0
    data = oc.to_bytes(ck, revision="v3")
    return data


def _file_with_tensors(n: int) -> bytes:
    rng = np.random.default_rng(0)
    tensors = [
        oc.Tensor(k, rng.random(4, dtype=np.float32), name=f"t{k}", model_index=k) for k in range(n)
    ]
    return oc.to_bytes(oc.Checkpoint(tensors=tensors), revision="v3")


def _file_with_state(n: int) -> bytes:
    state = TrainingState(step=1)
    for k in range(n - 1):
        state[f"key{k}"] = k
    ck = oc.Checkpoint(tensors=[oc.Tensor(0, np.zeros(4, np.float32))], state=state)
    return oc.to_bytes(ck, revision="v3")


def _optimizer_file() -> bytes:
    tensors = [oc.Tensor(k, np.zeros(4, np.float32)) for k in range(4)]
    slots = {name: {k: oc.Buffer(k, np.zeros(4, np.float32)) for k in range(4)} for name in "mv"}
    ck = oc.Checkpoint(tensors=tensors, optimizer=Optimizer("adam", slots))
    return oc.to_bytes(ck, revision="v3")


def measure() -> list[tuple[str, float, float, float]]:
    """(structure, Kaitai seconds, dtype seconds, load seconds of the file) per row."""
    rows = []

    data = _file_with_64_sections()
    n = len(_sections(data))

    def table_kaitai() -> list:
        io = _stream(data, layout.Header.SIZE)
        return [Common.SectionEntry(io) for _ in range(n)]

    def table_dtype() -> list:
        return np.frombuffer(data, layout.SectionEntry.DTYPE, n, layout.Header.SIZE).tolist()

    rows.append(
        (
            f"section table, {n} entries",
            _best(table_kaitai, 200),
            _best(table_dtype, 200),
            _best(lambda: oc.load(data), 20),
        )
    )

    data = _file_with_tensors(100_000)
    _, s, length = _sections(data)[0]

    def tensors_kaitai() -> object:
        return OnertCheckpointV3.TensorsSection(_stream(data, s, length)).num_tensors

    def tensors_dtype() -> object:
        return np.frombuffer(data, layout.V3TensorsHead.DTYPE, 1, s)[0]

    rows.append(
        (
            "schema-3 tensors head, 100,000 tensors",
            _best(tensors_kaitai, 1),
            _best(tensors_dtype, 200),
            _best(lambda: oc.load(data), 1),
        )
    )

    data = _file_with_state(layout.MAX_STATE_ENTRIES)
    kind_of = {k: (s, length) for k, s, length in _sections(data)}
    s, length = kind_of[layout.SectionKind.STATE]
    whole = _stream(data)

    def state_kaitai() -> object:
        return Common.StateSection(whole, _stream(data, s, length)).num_entries

    def state_dtype() -> object:
        return np.frombuffer(data, layout.StateHead.DTYPE, 1, s)[0]

    rows.append(
        (
            f"state head, {layout.MAX_STATE_ENTRIES} entries",
            _best(state_kaitai, 5),
            _best(state_dtype, 200),
            _best(lambda: oc.load(data), 5),
        )
    )

    data = _optimizer_file()
    kind_of = {k: (s, length) for k, s, length in _sections(data)}
    s, _ = kind_of[layout.SectionKind.OPTIMIZER]

    def opt_kaitai() -> object:
        return Common.OptimizerHead(_stream(data, s, layout.OptimizerHead.SIZE)).num_slots

    def opt_dtype() -> object:
        return np.frombuffer(data, layout.OptimizerHead.DTYPE, 1, s)[0]

    rows.append(
        (
            "optimizer head (16 bytes)",
            _best(opt_kaitai, 200),
            _best(opt_dtype, 200),
            _best(lambda: oc.load(data), 50),
        )
    )
    return rows


def main() -> None:
    before = os.getloadavg()
    rows = measure()
    after = os.getloadavg()
    print(f"load average before {before[0]:.2f}, after {after[0]:.2f}")
    print("| structure | Kaitai | dtype | ratio | Kaitai / load of the file |")
    print("|---|---|---|---|---|")
    for name, k, d, load in rows:
        print(
            f"| {name} | {k * 1e6:,.1f} us | {d * 1e6:,.1f} us | {k / d:,.0f}x | {k / load:.0%} |"
        )


if __name__ == "__main__":
    main()
