"""What handing out one array of an opened file costs: ``ckpt[name].data``,
``np.asarray(ckpt[name])`` and ``ckpt.slot("m", name).data``, against the physical floor and
safetensors, measured in the same run.

    python tests/bench/bench_handout.py                 # seconds: 10,000 tensors x 3 arrays
    python tests/bench/bench_handout.py --mib 1024      # the read-all row on a 1 GiB file

Rows (microseconds per array handed out; ratios against baselines measured in this process):

* hand-out: a schema-3 file of ``--tensors`` float32 tensors of ``--bytes`` bytes with names,
  dtypes, shapes and Adam's m and v (3 arrays per tensor). Each pass hands out every array once
  in a fresh checkpoint (``load``, then its data checks run by ``verify()``, untimed), so every
  entry object and typed view is made in the pass; "again" is a second pass over the same
  checkpoint. The floor: ``np.frombuffer(mm, float32, count, offset)`` of the same ranges of
  the mapped file (offsets from a Python list). safetensors: ``get_tensor`` of the same arrays
  from one ``safe_open`` (a copy each).
* read all: a schema-3 file of about ``--mib`` MiB of 35,000-byte tensors with m and v (the
  default 64 MiB: about 1,900 arrays; ``--mib 1024``: about 30,000). Each repetition loads
  the file and hands out every array's data, verification on (the default: the blocks each
  array lies in are checked before it is handed out) and off, against safetensors'
  ``safe_open`` and ``get_tensor`` of every array (page cache warm for both).

The variants of a row run interleaved (each repetition runs each once, in turn) and each row
reports the minimum over ``--repeat`` repetitions: the run least disturbed on a shared
machine. Both rows time their passes in slices of ``SLICE`` tensors (3 arrays each: about a
millisecond of hand-outs, or 21 MB of 35,000-byte arrays; the ``load`` or ``safe_open`` in
a pass's first slice): each slice's minimum over the repetitions, summed. A whole pass lasts
longer than the scheduler's time slice, so on a loaded 2-core machine every pass is
interrupted by other processes and its minimum measures the load; a slice is short enough
for some repetition to run it alone. Every variant (the floor and safetensors too) is timed
alike, and each slice of each repetition is still a first access (a fresh ``load`` per
repetition). Nothing is asserted here; the unit tests count work.
"""

from __future__ import annotations

import argparse
import gc
import json
import mmap
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import onert_checkpoint as oc

SLOTS = ("m", "v")
#: tensors per timed slice of a hand-out pass (module doc)
SLICE = 200
PATTERN = np.random.default_rng(24).standard_normal(1 << 20).astype(np.float32)


def _values(i: int, slot: int, count: int) -> np.ndarray:
    """A different view of one random pattern per array: large files without their memory."""
    start = ((i * 3 + slot) * 4099) % (PATTERN.size - count)
    return PATTERN[start : start + count]


def adam_checkpoint(n: int, nbytes: int) -> oc.Checkpoint:
    """``n`` float32 tensors of ``nbytes`` (names ``t{i}``, dtypes, shapes) with Adam's m and
    v, every array a view of one random pattern (in memory, as after training)."""
    count = nbytes // 4
    tensors = [
        oc.Tensor(i, _values(i, 0, count), name=f"t{i}", dtype="float32", shape=(count,))
        for i in range(n)
    ]
    opt = oc.Optimizer("adam")
    for s, slot in enumerate(SLOTS, start=1):
        opt.slots[slot] = {i: oc.Buffer(i, _values(i, s, count)) for i in range(n)}
    return oc.Checkpoint(tensors, opt, oc.TrainingState(step=1, epoch=0))


def write_pair(folder: Path, stem: str, n: int, nbytes: int) -> tuple[Path, Path]:
    """``n`` tensors of ``nbytes`` with Adam's m and v as schema 3 (the writer's defaults: per
    block checksums) and the same arrays as safetensors (names ``t{i}``, ``t{i}.m``,
    ``t{i}.v``, in that order of data); returns both paths."""
    count = nbytes // 4
    ours = folder / f"{stem}.ckpt"
    oc.save(adam_checkpoint(n, nbytes), ours, revision="v3")

    st = folder / f"{stem}.safetensors"
    header: dict[str, object] = {}
    order = [(f"t{i}{suffix}", i, s) for s, suffix in enumerate(("", ".m", ".v")) for i in range(n)]
    for k, (name, _, _) in enumerate(order):
        header[name] = {"dtype": "F32", "shape": [count], "data_offsets": [k * nbytes,
                                                                            (k + 1) * nbytes]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(st, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for _, i, s in order:
            f.write(_values(i, s, count).tobytes())
    for p in (ours, st):
        p.read_bytes()  # page cache warm
    return ours, st


def interleaved(
    cases: dict[str, Callable[[], float | list[float]]], repeat: int
) -> dict[str, float]:
    """The minimum over ``repeat`` rounds of each case's seconds (each case times itself, so
    that untimed preparation is left out); one untimed round first. A case that times itself
    in slices returns a list: each slice's minimum, summed."""
    for run in cases.values():
        run()
    best: dict[str, list[float]] = {}
    for _ in range(repeat):
        for key, run in cases.items():
            gc.collect()
            got = run()
            parts = got if isinstance(got, list) else [got]
            mins = best.get(key)
            best[key] = parts if mins is None else [min(a, b) for a, b in zip(mins, parts)]
    return {key: sum(parts) for key, parts in best.items()}


def _slices(items: list, size: int) -> list[list]:
    return [items[k : k + size] for k in range(0, len(items), size)]


def handout_cases(
    ours: Path, st: Path, n: int
) -> dict[str, Callable[[], float | list[float]]]:
    """The hand-out row's variants, each timed in slices of :data:`SLICE` tensors."""
    from safetensors import safe_open

    names = [f"t{i}" for i in range(n)]
    parts = _slices(names, SLICE)
    clock = time.perf_counter
    probe = oc.load(ours)
    # the floor's ranges: where each array lies in the mapped file, as Python ints
    ranges = []
    for name in names:
        ranges.append((probe[name].offset, probe[name].nbytes))
        for slot in SLOTS:
            entry = probe.slot(slot, name)
            ranges.append((entry.offset, entry.nbytes))
    del probe
    with open(ours, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    f32 = np.dtype(np.float32)

    def fresh() -> oc.Checkpoint:
        ckpt = oc.load(ours)
        ckpt.verify()  # the first access's checks: not the hand-out's cost
        return ckpt

    def data() -> list[float]:
        ckpt = fresh()
        slot = ckpt.slot
        out = []
        for part in parts:
            t = clock()
            for name in part:
                _ = ckpt[name].data
                _ = slot("m", name).data
                _ = slot("v", name).data
            out.append(clock() - t)
        return out

    def asarray() -> list[float]:
        ckpt = fresh()
        slot = ckpt.slot
        asarray = np.asarray
        out = []
        for part in parts:
            t = clock()
            for name in part:
                asarray(ckpt[name])
                asarray(slot("m", name))
                asarray(slot("v", name))
            out.append(clock() - t)
        return out

    def again() -> list[float]:
        ckpt = fresh()
        slot = ckpt.slot
        for name in names:
            ckpt[name].data, slot("m", name).data, slot("v", name).data
        out = []
        for part in parts:
            t = clock()
            for name in part:
                _ = ckpt[name].data
                _ = slot("m", name).data
                _ = slot("v", name).data
            out.append(clock() - t)
        return out

    def floor() -> list[float]:
        frombuffer = np.frombuffer
        out = []
        for part in _slices(ranges, 3 * SLICE):
            t = clock()
            for offset, nbytes in part:
                frombuffer(mm, f32, nbytes >> 2, offset)
            out.append(clock() - t)
        return out

    def safetensors() -> list[float]:
        with safe_open(str(st), framework="np") as f:
            get = f.get_tensor
            out = []
            for part in parts:
                t = clock()
                for name in part:
                    get(name)
                    get(name + ".m")
                    get(name + ".v")
                out.append(clock() - t)
            return out

    return {"ckpt[name].data + slot(...).data": data, "np.asarray(entry)": asarray,
            "again (entries made)": again, "floor: np.frombuffer": floor,
            "safetensors get_tensor": safetensors}


def read_all_cases(
    ours: Path, st: Path, n: int
) -> dict[str, Callable[[], float | list[float]]]:
    """The read-all row's variants, each timed in slices of :data:`SLICE` tensors (the
    ``load`` or ``safe_open`` in the first slice)."""
    from safetensors import safe_open

    names = [f"t{i}" for i in range(n)]
    parts = _slices(names, SLICE)
    clock = time.perf_counter

    def ours_read(verify: bool) -> Callable[[], list[float]]:
        def run() -> list[float]:
            out = []
            t = clock()
            ckpt = oc.load(ours, verify_data=verify)
            slot = ckpt.slot
            for part in parts:
                for name in part:
                    _ = ckpt[name].data
                    _ = slot("m", name).data
                    _ = slot("v", name).data
                now = clock()
                out.append(now - t)
                t = now
            return out

        return run

    def safetensors() -> list[float]:
        out = []
        t = clock()
        with safe_open(str(st), framework="np") as f:
            for part in parts:
                for name in part:
                    f.get_tensor(name)
                    f.get_tensor(name + ".m")
                    f.get_tensor(name + ".v")
                now = clock()
                out.append(now - t)
                t = now
        return out

    return {"ours, verified": ours_read(True), "ours, verify_data=False": ours_read(False),
            "safetensors": safetensors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tensors", type=int, default=10_000, help="hand-out file's tensors")
    parser.add_argument("--bytes", type=int, default=256, help="bytes per hand-out array")
    parser.add_argument("--mib", type=int, default=64, help="read-all file's size")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--skip-read-all", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} (before); minimum of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        n = args.tensors
        ours, st = write_pair(folder, "handout", n, args.bytes)
        times = interleaved(handout_cases(ours, st, n), args.repeat)
        arrays = 3 * n
        floor, stt = times["floor: np.frombuffer"], times["safetensors get_tensor"]
        print(f"\nhand-out: {arrays:,} arrays of {args.bytes} B (us per array)")
        print("| case | us | x floor | x safetensors |")
        print("|---|---:|---:|---:|")
        for key, sec in times.items():
            print(f"| {key} | {sec / arrays * 1e6:.2f} | {sec / floor:.1f} | {sec / stt:.2f} |")

        if not args.skip_read_all:
            nbytes = 35_000
            n = args.mib * 2**20 // (3 * nbytes)
            ours.unlink()
            st.unlink()
            ours, st = write_pair(folder, "big", n, nbytes)
            times = interleaved(read_all_cases(ours, st, n), args.repeat)
            base = times["safetensors"]
            print(f"\nread all: {3 * n:,} arrays of {nbytes:,} B "
                  f"({ours.stat().st_size / 2**20:.0f} MiB), load included")
            print("| case | ms | us per array | x safetensors |")
            print("|---|---:|---:|---:|")
            for key, sec in times.items():
                print(f"| {key} | {sec * 1e3:.1f} | {sec / (3 * n) * 1e6:.2f} | "
                      f"{sec / base:.2f} |")
    print(f"\nload average {os.getloadavg()[0]:.1f} (after)")


if __name__ == "__main__":
    main()
