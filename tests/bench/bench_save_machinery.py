"""What the output primitive's optional machinery buys (docs/saving.md, "What the machinery
costs and saves"): a save of a 256 MiB schema-3 checkpoint over the previous output, with and
without the release of the replaced file's cached pages (``POSIX_FADV_DONTNEED``) and the
writeback started behind each batch (``sync_file_range``).

    python tests/bench/bench_save_machinery.py OUT.ckpt                      # all of it
    python tests/bench/bench_save_machinery.py OUT.ckpt --without release,writeback

Each run builds the checkpoint (85 float32 tensors of 1 MiB with Adam's m and v, the default
64 KiB data blocks) in memory, then saves it ``--saves`` times over ``OUT.ckpt`` (fsync
included), after ``--settle`` idle seconds each, and prints each save's seconds. Time whole
runs against each other (``/usr/bin/time``, or any tool that alternates two commands): the
process's work beside the saves is the same in every variant.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench import MIB, adam_checkpoint  # noqa: E402

import onert_checkpoint as oc  # noqa: E402
from onert_checkpoint import atomic_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--without", default="", help="release, writeback (comma-separated)")
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--settle", type=float, default=0.0)
    args = parser.parse_args()
    off = {w for w in args.without.split(",") if w}
    if off - {"release", "writeback"}:
        parser.error(f"unknown machinery: {sorted(off - {'release', 'writeback'})}")
    if "release" in off:
        atomic_file._open_replaced = lambda dfd, base: None  # type: ignore[assignment]
    if "writeback" in off:
        atomic_file._writeback_starter = lambda: None  # type: ignore[assignment]
    ckpt = adam_checkpoint(85, MIB, copy=True)
    ckpt.layout.data_block_size = None  # the default blocks
    times = []
    for _ in range(args.saves):
        time.sleep(args.settle)
        start = time.perf_counter()
        oc.save(ckpt, args.out, revision="v3")
        times.append(time.perf_counter() - start)
    print(f"without {sorted(off) or 'nothing'}: saves {' '.join(f'{t:.3f}' for t in times)} s")


if __name__ == "__main__":
    main()
