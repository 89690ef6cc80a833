"""Performance benchmark of onert-checkpoint against the hardware floor, the generated parser and
safetensors (issue 6). Not part of the test run; one command:

    python tests/bench/bench.py            # 1 GiB files, 5 repeats (about 10-15 minutes)
    python tests/bench/bench.py --quick    # 64 MiB files, 3 repeats (about 2 minutes)

It writes its own data into a temporary folder (streamed through ``save``: nothing of the size of
a file is built in memory), runs every case in a fresh interpreter, round-robin over the cases so
that compared cases run side by side, and prints the median time of each case, its ratio to the
baselines of its group, its peak RSS above the interpreter's baseline, and the targets.

Peak RSS: after the imports and the case's setup the worker resets the kernel's high-water mark
(``/proc/self/clear_refs``), so ``VmHWM - VmRSS(before)`` is what the case itself added. It counts
pages of the mapped file that the case touched (page cache, not allocated memory); for the cases
that stream, a sampler also reports the peak of anonymous memory (``RssAnon``).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import itertools
import json
import mmap
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 1 << 20
PATTERN_BYTES = 4 * MIB
HAS_V2 = importlib.util.find_spec("onert_checkpoint.format.convert") is not None


# --------------------------------------------------------------------------------------------
# Data sets
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataSet:
    """``n`` weight entries of ``nbytes`` each (and as many m and v entries with Adam)."""

    name: str
    kind: str
    n: int
    nbytes: int

    @property
    def slots(self) -> tuple[str, ...]:
        return ("m", "v") if self.kind == "adam" else ()

    @property
    def data_bytes(self) -> int:
        return self.n * self.nbytes * (1 + len(self.slots))

    def path(self, folder: str, fmt: str) -> str:
        ext = {"v1": "ckpt", "v2": "v2.ckpt", "st": "safetensors"}[fmt]
        return os.path.join(folder, f"{self.name}.{ext}")


def data_sets(quick: bool) -> dict[str, DataSet]:
    # "big": 1 GiB of data in 10,000 tensors (Adam: weights, m and v are a third each);
    # "small": the same tensor counts with 1 MiB of data; "tiny": 100,000 tensors of 16 bytes.
    big = 64 * MIB if quick else 1024 * MIB
    small = MIB
    out = {}
    for kind, blocks in (("adam", 3), ("sgd", 1)):
        n = 10_000
        for label, total in (("big", big), ("small", small)):
            per = max(4, total // (blocks * n) // 4 * 4)
            out[f"{kind}-{label}"] = DataSet(f"{kind}-{label}", kind, n, per)
        out[f"{kind}-tiny"] = DataSet(f"{kind}-tiny", kind, 100_000, 16)
    return out


def _pattern() -> np.ndarray:
    return np.random.default_rng(6).integers(0, 256, PATTERN_BYTES, dtype=np.uint8)


def _entry_data(pattern: np.ndarray, ds: DataSet, index: int, slot: int) -> np.ndarray:
    # A view on a 4 MiB random pattern, at a different place for each entry: 1 GiB of content
    # without 1 GiB of memory.
    span = PATTERN_BYTES - ds.nbytes
    start = ((index * 3 + slot) * 4099) % span
    return pattern[start : start + ds.nbytes]


def _entries(ds: DataSet, pattern: np.ndarray):
    """(name, block, index, data) in file order."""
    for b, block in enumerate(("weights", *ds.slots)):
        for i in range(ds.n):
            yield f"{block}.{i}", block, i, _entry_data(pattern, ds, i, b)


def write_v1(ds: DataSet, path: str, pattern: np.ndarray) -> None:
    import onert_checkpoint as oc

    tensors = [oc.Tensor(i, _entry_data(pattern, ds, i, 0)) for i in range(ds.n)]
    optimizer = oc.Optimizer(ds.kind)
    for s, slot in enumerate(ds.slots, start=1):
        optimizer.slots[slot] = {
            i: oc.Buffer(i, _entry_data(pattern, ds, i, s)) for i in range(ds.n)
        }
    ckpt = oc.Checkpoint(
        tensors, optimizer, oc.TrainingState(step=100, epoch=1), revision="v1", dialect="onert",
        num_entries=ds.n,
    )
    oc.save(ckpt, path, revision="v1", dialect="onert")


def write_safetensors(ds: DataSet, path: str, pattern: np.ndarray) -> None:
    """The same tensors (as U8 arrays) in a safetensors file, streamed: the format is an 8-byte
    header length, a JSON header padded with spaces to 8 bytes, then the data."""
    header: dict[str, Any] = {}
    pos = 0
    for name, _, _, data in _entries(ds, pattern):
        header[name] = {
            "dtype": "U8", "shape": [data.nbytes], "data_offsets": [pos, pos + data.nbytes]
        }
        pos += data.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, _, _, data in _entries(ds, pattern):
            f.write(data)


def write_v2(ds: DataSet, folder: str) -> None:
    import onert_checkpoint as oc
    from onert_checkpoint.format.convert import upgrade

    oc.save(upgrade(oc.load(ds.path(folder, "v1"))), ds.path(folder, "v2"))


def generate(folder: str, sets: dict[str, DataSet]) -> None:
    pattern = _pattern()
    for ds in sets.values():
        for fmt, make in (("v1", write_v1), ("st", write_safetensors)):
            path = ds.path(folder, fmt)
            if not os.path.exists(path):
                t = time.perf_counter()
                make(ds, path, pattern)
                print(f"  made {os.path.basename(path)} ({os.path.getsize(path) / MIB:.1f} MiB) "
                      f"in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        if HAS_V2 and not os.path.exists(ds.path(folder, "v2")):
            write_v2(ds, folder)


# --------------------------------------------------------------------------------------------
# Cases: setup(ctx) -> state (not timed), run(state) (timed)
# --------------------------------------------------------------------------------------------
@dataclass
class Case:
    group: str
    label: str  # "ours", "floor", "kaitai", "safetensors", "raw", ...
    data: str  # data-set name
    setup: Callable[[dict], Any]
    run: Callable[[Any], object]
    light: bool = True  # repeat inside the worker (cheap cases) after one warm-up
    sample_anon: bool = False
    moved_bytes: Callable[[DataSet], int] = field(default=lambda ds: 0)

    @property
    def key(self) -> str:
        return f"{self.group}|{self.data}|{self.label}"


def _map(path: str) -> memoryview:
    with open(path, "rb") as f:
        return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))


# -- the library ------------------------------------------------------------------------------
def ours_open(ctx):
    import onert_checkpoint as oc

    return lambda: len(oc.load(ctx["path"]))


def ours_read_one(ctx):
    import onert_checkpoint as oc

    scratch, i = ctx["scratch"], ctx["ds"].n // 2

    def run():
        data = oc.load(ctx["path"])[i].data
        np.copyto(scratch[: data.nbytes], data)

    return run


def ours_read_all(ctx):
    import onert_checkpoint as oc

    scratch = ctx["scratch"]

    def run():
        ckpt = oc.load(ctx["path"])
        entries = list(ckpt.tensors)
        if ckpt.optimizer is not None:
            for slot in ckpt.optimizer.slots.values():
                entries.extend(slot.values())
        for e in entries:
            np.copyto(scratch[: e.data.nbytes], e.data)

    return run


def ours_save(ctx, fsync: bool = True):
    import onert_checkpoint as oc

    if not fsync:
        os.fsync = lambda fd: None  # this worker only: the same save without its two fsyncs
    ckpt = oc.load(ctx["path"])
    out = ctx["out"]

    def run():
        oc.save(ckpt, out)
        os.unlink(out)

    return run


def ours_convert(ctx, revision: str):
    """load + convert + save: schema 1 to 2 (upgrade) or 2 to 1 (downgrade), streamed."""
    import onert_checkpoint as oc
    from onert_checkpoint.format.convert import convert

    src, out = ctx["path"], ctx["out"]

    def run():
        oc.save(convert(oc.load(src), revision), out)
        os.unlink(out)

    return run


def ours_open_v2(ctx):
    """Schema 2 opened to read a few tensors: every structural rule and the metadata
    checksums, not the data section's CRC (``verify_data=False``)."""
    import onert_checkpoint as oc

    return lambda: len(oc.load(ctx["path"], verify_data=False))


def ours_verify(ctx):
    """Schema 2's load checks the CRC-32C of the header, the section table and every section
    (the data section included) before it returns."""
    import onert_checkpoint as oc

    return lambda: len(oc.load(ctx["path"]))


def crc_floor(ctx):
    """One crc32c call over the whole mapped file: the speed of the checksum itself."""
    import crc32c

    def run():
        view = _map(ctx["path"])
        return crc32c.crc32c(view)

    return run


# -- (a) the floor: numpy over the mapped file, no validation --------------------------------
def _floor_tables(view: memoryview, ds: DataSet):
    head = np.frombuffer(view, dtype="<u4", count=5)
    n, ofs_opt1, ofs_opt2, ofs_other = int(head[4]), int(head[1]), int(head[2]), int(head[3])
    starts = [20, ofs_opt1, ofs_opt2, ofs_other] if ds.kind == "adam" else [20, ofs_other]
    tables = []
    for start, end in itertools.pairwise(starts):
        offsets = np.frombuffer(view, dtype="<u4", count=n, offset=start).astype(np.int64)
        sizes = np.diff(offsets, append=end)
        tables.append((offsets, sizes))
    return tables


def floor_tables(ctx):
    """Tables and sizes only: no per-entry object (a lower bound no index can reach)."""
    return lambda: _floor_tables(_map(ctx["path"]), ctx["ds"])


def floor_open(ctx):
    """Tables, sizes and one array view per entry in a dict per block: the cheapest index."""

    def run():
        view = _map(ctx["path"])
        whole = np.frombuffer(view, dtype=np.uint8)
        return [
            {i: whole[o : o + s] for i, (o, s) in enumerate(zip(offs.tolist(), sizes.tolist()))}
            for offs, sizes in _floor_tables(view, ctx["ds"])
        ]

    return run


def floor_read_one(ctx):
    scratch, i = ctx["scratch"], ctx["ds"].n // 2

    def run():
        view = _map(ctx["path"])
        offs, sizes = _floor_tables(view, ctx["ds"])[0]
        o, s = int(offs[i]), int(sizes[i])
        np.copyto(scratch[:s], np.frombuffer(view, dtype=np.uint8, count=s, offset=o))

    return run


def floor_read_all(ctx):
    scratch = ctx["scratch"]

    def run():
        view = _map(ctx["path"])
        whole = np.frombuffer(view, dtype=np.uint8)
        for offs, sizes in _floor_tables(view, ctx["ds"]):
            for o, s in zip(offs.tolist(), sizes.tolist()):
                np.copyto(scratch[:s], whole[o : o + s])

    return run


# -- (b) the generated Kaitai parser, used naively ---------------------------------------------
def _kaitai_tables(k, ds: DataSet):
    tables = [k.weights.ofs_entries]
    ends = [k.ofs_opt1 if ds.kind == "adam" else k.ofs_other]
    if ds.kind == "adam":
        tables += [k.opt1.ofs_entries, k.opt2.ofs_entries]
        ends += [k.ofs_opt2, k.ofs_other]
    return tables, ends


def kaitai_open(ctx):
    from onert_checkpoint_generated.onert_checkpoint_v1 import OnertCheckpointV1

    def run():
        k = OnertCheckpointV1.from_file(ctx["path"])
        tables, _ = _kaitai_tables(k, ctx["ds"])
        k.close()
        return tables

    return run


def _kaitai_entries(k, ds: DataSet):
    tables, ends = _kaitai_tables(k, ds)
    for offsets, end in zip(tables, ends):
        for j, o in enumerate(offsets):
            yield o, (offsets[j + 1] if j + 1 < len(offsets) else end) - o


def kaitai_read_one(ctx):
    from onert_checkpoint_generated.onert_checkpoint_v1 import OnertCheckpointV1

    i, scratch = ctx["ds"].n // 2, ctx["scratch"]

    def run():
        k = OnertCheckpointV1.from_file(ctx["path"])
        offsets = k.weights.ofs_entries
        end = offsets[i + 1] if i + 1 < len(offsets) else _kaitai_tables(k, ctx["ds"])[1][0]
        k._io.seek(offsets[i])
        data = k._io.read_bytes(end - offsets[i])
        scratch[: len(data)] = np.frombuffer(data, dtype=np.uint8)
        k.close()

    return run


def kaitai_read_all(ctx):
    from onert_checkpoint_generated.onert_checkpoint_v1 import OnertCheckpointV1

    scratch = ctx["scratch"]

    def run():
        k = OnertCheckpointV1.from_file(ctx["path"])
        for o, s in list(_kaitai_entries(k, ctx["ds"])):
            k._io.seek(o)
            scratch[:s] = np.frombuffer(k._io.read_bytes(s), dtype=np.uint8)
        k.close()

    return run


# -- (c) safetensors ------------------------------------------------------------------------
def st_open(ctx):
    from safetensors import safe_open

    def run():
        with safe_open(ctx["st"], framework="np") as f:
            return len(f.keys())

    return run


def st_read_one(ctx):
    from safetensors import safe_open

    name, scratch = f"weights.{ctx['ds'].n // 2}", ctx["scratch"]

    def run():
        with safe_open(ctx["st"], framework="np") as f:
            data = f.get_tensor(name)
        np.copyto(scratch[: data.nbytes], data)

    return run


def st_read_all(ctx):
    from safetensors import safe_open

    scratch = ctx["scratch"]

    def run():
        with safe_open(ctx["st"], framework="np") as f:
            for name in f.keys():
                data = f.get_tensor(name)
                np.copyto(scratch[: data.nbytes], data)

    return run


def st_save(ctx, fsync: bool = False):
    from safetensors.numpy import save_file

    import onert_checkpoint as oc

    ckpt = oc.load(ctx["path"])
    tensors = {f"weights.{t.index}": t.data for t in ckpt.tensors}
    if ckpt.optimizer is not None:
        for slot, entries in ckpt.optimizer.slots.items():
            tensors.update({f"{slot}.{i}": b.data for i, b in entries.items()})
    out = ctx["out"]

    def run():
        save_file(tensors, out)
        if fsync:
            fd = os.open(out, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
        os.unlink(out)

    return run


# -- (d) raw sequential write of the same bytes, one write call --------------------------------
def raw_write(ctx, fsync: bool = True):
    source = _map(ctx["path"])
    out = ctx["out"]

    def run():
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        n = os.write(fd, source)
        assert n == len(source)
        if fsync:
            os.fsync(fd)
        os.close(fd)
        os.unlink(out)

    return run


def build_cases(sets: dict[str, DataSet]) -> list[Case]:
    cases: list[Case] = []

    def add(group, label, data, setup, **kw):
        cases.append(Case(group, label, data, setup, None, **kw))  # type: ignore[arg-type]

    whole = lambda ds: ds.data_bytes  # noqa: E731
    for kind in ("adam", "sgd"):
        big, small, tiny = f"{kind}-big", f"{kind}-small", f"{kind}-tiny"
        for data in (big, small, tiny):
            add("open", "ours", data, ours_open)
            add("open", "floor", data, floor_open)
            add("open", "floor-tables", data, floor_tables)
            if data != small:
                add("open", "kaitai", data, kaitai_open)
                add("open", "safetensors", data, st_open)
        for label, setup in (("ours", ours_read_one), ("floor", floor_read_one),
                             ("kaitai", kaitai_read_one), ("safetensors", st_read_one)):
            add("read one", label, big, setup)
        for data in (big, tiny):
            for label, setup in (("ours", ours_read_all), ("floor", floor_read_all),
                                 ("kaitai", kaitai_read_all), ("safetensors", st_read_all)):
                add("read all", label, data, setup, light=data == tiny, moved_bytes=whole)
        for data in (big, tiny):
            heavy = dict(light=False, sample_anon=True, moved_bytes=whole)
            add("write (fsync)", "ours", data, ours_save, **heavy)
            add("write (fsync)", "raw", data, raw_write, **heavy)
            add("write (fsync)", "safetensors", data, lambda c: st_save(c, fsync=True), **heavy)
            add("write (no fsync)", "ours", data, lambda c: ours_save(c, fsync=False), **heavy)
            add("write (no fsync)", "raw", data, lambda c: raw_write(c, fsync=False), **heavy)
            add("write (no fsync)", "safetensors", data, st_save, **heavy)
            if HAS_V2:
                add("convert", "v1->v2", data, lambda c: ours_convert(c, "v2"), **heavy)
                cases.append(Case("convert", "v2->v1", data, lambda c: ours_convert(c, "v1"),
                                  None, **heavy))  # type: ignore[arg-type]
        if HAS_V2:
            add("verify (v2)", "ours", big, ours_verify, light=False, moved_bytes=whole)
            add("verify (v2)", "crc32c", big, crc_floor, light=False, moved_bytes=whole)
            for data in (big, small, tiny):
                add("open (v2)", "ours", data, ours_open_v2)
                if data != small:
                    add("open (v2)", "safetensors", data, st_open)
    return [c for c in cases if c.data in sets]


# --------------------------------------------------------------------------------------------
# The worker: one case in a fresh interpreter
# --------------------------------------------------------------------------------------------
def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


class _AnonSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = _status("RssAnon")
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.002):
            self.peak = max(self.peak, _status("RssAnon"))


def worker(case: Case, folder: str, ds: DataSet, inner: int) -> dict:
    ctx = {
        "ds": ds,
        "path": ds.path(folder, "v2" if "v2" in case.group or case.label == "v2->v1" else "v1"),
        "st": ds.path(folder, "st"),
        "out": os.path.join(folder, f"out-{os.getpid()}.tmp"),
        "scratch": np.zeros(ds.nbytes + 4096, dtype=np.uint8),
    }
    run = case.setup(ctx)
    if case.light:
        run()  # warm-up: first-call costs of the interpreter, not of the case
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
    except OSError:
        pass
    base_rss, base_anon = _status("VmRSS"), _status("RssAnon")
    sampler = _AnonSampler() if case.sample_anon else None
    if sampler:
        sampler.start()
    times = []
    for _ in range(inner if case.light else 1):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    hwm = _status("VmHWM")
    anon = None
    if sampler:
        sampler.stop.set()
        sampler.join()
        anon = max(sampler.peak, _status("RssAnon")) - base_anon
    return {"time": statistics.median(times), "rss": hwm - base_rss, "anon": anon}


# --------------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------------
def _fmt_time(s: float) -> str:
    return f"{s * 1e3:9.2f} ms" if s < 10 else f"{s:9.2f} s "


def _fmt_mib(b: int | None) -> str:
    return "" if b is None else f"{b / MIB:.1f}"


BASELINES = {
    "open": ("floor", "floor-tables", "kaitai", "safetensors"),
    "read one": ("floor", "kaitai", "safetensors"),
    "read all": ("floor", "kaitai", "safetensors"),
    "write (fsync)": ("raw", "safetensors"),
    "write (no fsync)": ("raw", "safetensors"),
    "open (v2)": ("safetensors",),
    "verify (v2)": ("crc32c",),
}


def report(cases: list[Case], results: dict[str, list[dict]], sets: dict[str, DataSet]) -> str:
    med = {k: statistics.median(r["time"] for r in v) for k, v in results.items()}
    rss = {k: max(r["rss"] for r in v) for k, v in results.items()}
    anon = {k: (max(r["anon"] for r in v) if v[0]["anon"] is not None else None)
            for k, v in results.items()}
    lines = [
        "| case | data | impl | median | ratio ours/impl | throughput | peak RSS Δ MiB "
        "| peak anon Δ MiB |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for c in cases:
        if c.key not in med:
            continue
        ds = sets[c.data]
        ours = med.get(f"{c.group}|{c.data}|ours")
        ratio = f"{ours / med[c.key]:.2f}" if ours and c.label != "ours" else ""
        moved = c.moved_bytes(ds)
        thr = f"{moved / med[c.key] / 1e9:.2f} GB/s" if moved else ""
        desc = f"{c.data} ({ds.n:,}x{ds.nbytes:,} B x{1 + len(ds.slots)})"
        lines.append(
            f"| {c.group} | {desc} | {c.label} | {_fmt_time(med[c.key]).strip()} | {ratio} "
            f"| {thr} | {_fmt_mib(rss[c.key])} | {_fmt_mib(anon[c.key])} |"
        )
    lines.append("")
    lines.extend(targets(med, rss, anon, sets))
    return "\n".join(lines)


def targets(med: dict, rss: dict, anon: dict, sets: dict[str, DataSet]) -> list[str]:
    out = ["| target | measured | met |", "|---|---|---|"]

    def row(name: str, value: float | None, limit: float, fmt: str, higher_is_better=False):
        if value is None:
            return
        ok = value >= limit if higher_is_better else value <= limit
        out.append(f"| {name} | {fmt.format(value)} | {'yes' if ok else 'NO'} |")

    def ratio(a: str, b: str) -> float | None:
        return med[a] / med[b] if a in med and b in med else None

    for kind in ("adam", "sgd"):
        big, small, tiny = f"{kind}-big", f"{kind}-small", f"{kind}-tiny"
        size = f"{sets[big].data_bytes / MIB:.0f} MiB" if big in sets else ""
        row(f"{kind}: open {size} / open 1 MiB, same N (≤ 1.2)",
            ratio(f"open|{big}|ours", f"open|{small}|ours"), 1.2, "{:.2f}")
        row(f"{kind}: open / numpy floor (≤ 2.0)",
            ratio(f"open|{big}|ours", f"open|{big}|floor"), 2.0, "{:.2f}")
        row(f"{kind}: open / safetensors safe_open+keys (≤ 1.0)",
            ratio(f"open|{big}|ours", f"open|{big}|safetensors"), 1.0, "{:.2f}")
        key = f"open|{big}|ours"
        row(f"{kind}: peak RSS Δ of open {size} (≤ 32 MiB)",
            rss[key] / MIB if key in rss else None, 32, "{:.1f} MiB")
        for g in ("write (fsync)", "write (no fsync)"):
            row(f"{kind}: {g} save / raw write (≤ 1.1)",
                ratio(f"{g}|{big}|ours", f"{g}|{big}|raw"), 1.1, "{:.2f}")
            row(f"{kind}: {g} save / safetensors save_file (≤ 1.0)",
                ratio(f"{g}|{big}|ours", f"{g}|{big}|safetensors"), 1.0, "{:.2f}")
        for label in ("v1->v2", "v2->v1"):
            key = f"convert|{big}|{label}"
            if key in rss:
                row(f"{kind}: convert {label} peak RSS Δ (≤ 64 MiB)", rss[key] / MIB, 64,
                    "{:.1f} MiB")
                row(f"{kind}: convert {label} peak anon Δ (≤ 64 MiB)",
                    anon[key] / MIB if anon[key] is not None else None, 64, "{:.1f} MiB")
        row(f"{kind}: v2 open {size} / open 1 MiB, same N (≤ 1.2)",
            ratio(f"open (v2)|{big}|ours", f"open (v2)|{small}|ours"), 1.2, "{:.2f}")
        key = f"open (v2)|{big}|ours"
        row(f"{kind}: v2 peak RSS Δ of open {size} (≤ 32 MiB)",
            rss[key] / MIB if key in rss else None, 32, "{:.1f} MiB")
        row(f"{kind}: v2 open / safetensors safe_open+keys (≤ 1.0)",
            ratio(f"open (v2)|{big}|ours", f"open (v2)|{big}|safetensors"), 1.0, "{:.2f}")
        key = f"verify (v2)|{big}|ours"
        if key in med:
            row(f"{kind}: checksum verification (≥ 2 GB/s)",
                sets[big].data_bytes / med[key] / 1e9, 2.0, "{:.2f} GB/s", higher_is_better=True)
        row(f"{kind}: open of 100,000 tensors / numpy floor (≤ 5.0)",
            ratio(f"open|{tiny}|ours", f"open|{tiny}|floor"), 5.0, "{:.2f}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="64 MiB instead of 1 GiB, 3 repeats")
    ap.add_argument("--repeat", type=int, help="fresh-interpreter runs per case (default 5)")
    ap.add_argument("--inner", type=int, default=5, help="timed runs inside a worker, cheap cases")
    ap.add_argument("--dir", help="keep the data in DIR (reused when present)")
    ap.add_argument("--cases", default="", help="regular expression over 'group|data|impl'")
    ap.add_argument("--json", help="also write the raw results to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    sets = data_sets(args.quick)
    if args.worker:
        cases = {c.key: c for c in build_cases(sets)}
        case = cases[args.worker]
        print(json.dumps(worker(case, args.dir, sets[case.data], args.inner)))
        return 0

    repeat = args.repeat or (3 if args.quick else 5)
    tmp = None if args.dir else tempfile.TemporaryDirectory(prefix="onert-ckpt-bench-")
    folder = os.path.abspath(args.dir or tmp.name)  # type: ignore[union-attr]
    os.makedirs(folder, exist_ok=True)
    try:
        print(f"generating data in {folder} ...", file=sys.stderr)
        generate(folder, sets)
        cases = [c for c in build_cases(sets) if re.search(args.cases, c.key)]
        results: dict[str, list[dict]] = {}
        for r in range(repeat):
            for c in cases:  # round-robin: the cases of a group run side by side
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", c.key,
                       "--dir", folder, "--inner", str(args.inner)]
                cmd += ["--quick"] if args.quick else []
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"FAILED {c.key}:\n{done.stderr}", file=sys.stderr)
                    continue
                last = done.stdout.strip().splitlines()[-1]
                results.setdefault(c.key, []).append(json.loads(last))
            print(f"  repeat {r + 1}/{repeat} done", file=sys.stderr)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        v2 = "yes" if HAS_V2 else "no (onert_checkpoint.format.convert not present)"
        print(f"schema 2 cases: {v2}; "
              f"medians of {repeat} fresh-interpreter runs"
              f" (cheap cases: median of {args.inner} runs each, after a warm-up)\n")
        print(report(cases, results, sets))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
