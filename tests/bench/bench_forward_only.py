"""Writing in one forward pass (docs/saving.md): what computing every checksum first costs.

    python tests/bench/bench_forward_only.py                 # 256 MiB, median of 7
    python tests/bench/bench_forward_only.py --mib 64 --repeat 3

A schema-3 checkpoint of about ``--mib`` MiB (1 MiB float32 tensors with Adam's m and v, the
default 64 KiB data_blocks section) held as arrays in memory, written over the previous output
with fsync, as a training loop saves:

* ``save``: the normal save, the data section's and the blocks' CRC-32C summed by a second
  thread while the data are written, then the header, the section table and the data_blocks
  section written over their placeholders (``pwrite``): the baseline;
* ``save(forward_only=True)``: every checksum first, in a read pass over the data, then each
  byte written once, in order;
* through a pipe drained by a thread (no file, no fsync): ``save_stream`` against a raw write of
  the same bytes (``to_bytes``' output, held) in 1 MiB pieces through the same kind of pipe.

Each repetition runs every case once, in turn, each after ``SETTLE`` idle seconds (see
bench.py's ``SAVE_SETTLE``); the medians and their ratios are printed with the 1-minute load
average before and after. Nothing is asserted: tests/format/test_save_forward.py counts the passes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench import MIB, adam_checkpoint  # noqa: E402

import onert_checkpoint as oc  # noqa: E402

SETTLE = 3.0


def through_a_pipe(send: Callable[[object], object]) -> int:
    """Run ``send(file)`` with the write end of a pipe whose read end a thread drains; returns
    the bytes received."""
    r, w = os.pipe()
    got = [0]

    def drain() -> None:
        with os.fdopen(r, "rb", buffering=0) as src:
            while piece := src.read(MIB):
                got[0] += len(piece)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        with os.fdopen(w, "wb", buffering=0) as sink:
            send(sink)
    finally:
        reader.join()
    return got[0]


def cases(folder: Path, mib: int) -> tuple[dict[str, Callable[[], object]], int]:
    n = max(1, mib // 3)
    ckpt = adam_checkpoint(n, MIB, copy=True)
    ckpt.layout.data_block_size = None  # the default blocks
    blob = oc.to_bytes(ckpt, revision="v3")
    out = folder / "out.ckpt"

    def raw_pipe(sink: object) -> None:
        view = memoryview(blob)
        for at in range(0, len(view), MIB):
            piece = view[at : at + MIB]
            while piece:
                piece = piece[sink.write(piece) :]  # type: ignore[attr-defined]

    return {
        "save": lambda: oc.save(ckpt, out, revision="v3"),
        "save.forward_only": lambda: oc.save(ckpt, out, revision="v3", forward_only=True),
        "pipe.raw": lambda: through_a_pipe(raw_pipe),
        "pipe.save_stream": lambda: through_a_pipe(
            lambda f: oc.save_stream(ckpt, f, revision="v3")  # type: ignore[arg-type]
        ),
    }, len(blob)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(dir=HERE.parents[1]) as tmp:
        run, size = cases(Path(tmp), args.mib)
        times: dict[str, list[float]] = {k: [] for k in run}
        for f in run.values():  # warm-up
            f()
        for _ in range(args.repeat):
            for key, f in run.items():
                time.sleep(SETTLE)
                t = time.perf_counter()
                f()
                times[key].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    load_after = os.getloadavg()
    print(f"schema-3 file of {size / MIB:.1f} MiB, median of {args.repeat}, "
          f"{os.cpu_count()} cores")
    for key, value in med.items():
        print(f"  {key:<20} {value:7.3f} s  (min {min(times[key]):.3f}, max {max(times[key]):.3f})")
    print(f"  save forward_only / save:      {med['save.forward_only'] / med['save']:.2f}x")
    print(f"  pipe save_stream / pipe raw:   {med['pipe.save_stream'] / med['pipe.raw']:.2f}x")
    print(f"load average (1, 5, 15 min): before {tuple(round(x, 2) for x in load_before)}, "
          f"after {tuple(round(x, 2) for x in load_after)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
