"""Schema 3's per-block data checksums (spec/SPEC.md 7.4): what they cost and what they save.

    python tests/bench/bench_data_blocks.py                  # 64 and 256 MiB files, best of 5
    python tests/bench/bench_data_blocks.py --mib 64 --repeat 3

Rows, each measured in this process, with the page cache warm (every file is read once first):

* the first byte of one 35,000-byte tensor (the middle one) of a schema-3 file of 35,000-byte
  float32 tensors with names, dtypes and shapes, from ``load`` to the first element summed:
  verification off (``verify_data=False``), verified per block (the default file, 64 KiB
  blocks), and verified as before, by the whole data section's CRC (the same content written
  with ``data_block_size = 0``); ratios against verification off;
* the same read at block sizes from 4 KiB to 1 MiB (the default's choice), with the section's
  size;
* the size of 100,000 tensors of 16 bytes with Adam's m and v (no names; step and epoch) as
  schema 3 with the default blocks, against schema 1 (onert), computed by the writers' plans.

Timings are wall-clock minima over ``--repeat`` fresh loads (the minimum is the run least
disturbed by a shared machine). Nothing is asserted: the unit tests count the work
(tests/format/test_data_blocks.py); this script gives the figures.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

import onert_checkpoint as oc
from onert_checkpoint.format.revisions.v1 import write as v1_write
from onert_checkpoint.format.revisions.v3 import write as v3_write

TENSOR_BYTES = 35_000


def write_file(path: Path, mib: int, block_size: int | None) -> int:
    """A schema-3 file of about ``mib`` MiB of 35,000-byte tensors; returns the tensor count."""
    n = mib * 2**20 // TENSOR_BYTES
    values = np.random.default_rng(0).standard_normal(TENSOR_BYTES // 4).astype(np.float32)
    ckpt = oc.Checkpoint(
        [
            oc.Tensor(i, values, name=f"t{i}", dtype="float32", shape=(values.size,))
            for i in range(n)
        ]
    )
    ckpt.layout.data_block_size = block_size
    oc.save(ckpt, path, revision="v3")
    return n


def first_tensor(path: Path, k: int, verify: bool) -> float:
    t0 = time.perf_counter()
    ck = oc.load(path, verify_data=verify)
    float(np.asarray(ck.tensors[k].data)[:8].sum())
    return time.perf_counter() - t0


def best(path: Path, k: int, verify: bool, repeat: int) -> float:
    return min(first_tensor(path, k, verify) for _ in range(repeat))


def tiny_adam(n: int) -> oc.Checkpoint:
    tensors = [oc.Tensor(i, np.zeros(4, np.float32).view(np.uint8)) for i in range(n)]
    opt = oc.Optimizer("adam", {})
    for slot in ("m", "v"):
        opt.slots[slot] = {i: oc.Buffer(i, np.zeros(4, np.float32)) for i in range(n)}
    return oc.Checkpoint(tensors, opt, oc.TrainingState(step=100, epoch=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("\nfirst byte of one 35,000-byte tensor (ms; ratio to verification off)")
        print("| file | tensors | off | per block (64 KiB) | ratio | whole section | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for mib in args.mib:
            blocks, whole = folder / f"b{mib}.ckpt", folder / f"w{mib}.ckpt"
            n = write_file(blocks, mib, None)
            write_file(whole, mib, 0)
            for p in (blocks, whole):
                p.read_bytes()  # page cache warm
            k = n // 2
            off = best(blocks, k, False, args.repeat)
            per_block = best(blocks, k, True, args.repeat)
            whole_crc = best(whole, k, True, args.repeat)
            print(
                f"| {mib} MiB | {n:,} | {off * 1e3:.2f} | {per_block * 1e3:.2f} | "
                f"{per_block / off:.2f}x | {whole_crc * 1e3:.2f} | {whole_crc / off:.2f}x |"
            )
            blocks.unlink()
            whole.unlink()

        mib = min(args.mib)
        print(f"\nblock size ({mib} MiB file): first tensor verified, and the section's size")
        print("| block | verified (ms) | ratio to off | section bytes |")
        print("|---:|---:|---:|---:|")
        for size in (4096, 16384, 65536, 262144, 1 << 20):
            path = folder / f"s{size}.ckpt"
            n = write_file(path, mib, size)
            path.read_bytes()
            off = best(path, n // 2, False, args.repeat)
            on = best(path, n // 2, True, args.repeat)
            section = 16 + 4 * -(-(path.stat().st_size) // size)
            print(f"| {size:,} | {on * 1e3:.2f} | {on / off:.2f}x | ~{section:,} |")
            path.unlink()

    print("\n100,000 tensors of 16 bytes with Adam (m, v): file size")
    ckpt = tiny_adam(100_000)
    v1 = v1_write.plan(ckpt, "onert").file_size
    v3 = v3_write.plan(ckpt, data_crc=False).file_size
    ckpt.layout.data_block_size = 0
    v3_none = v3_write.plan(ckpt, data_crc=False).file_size
    print(f"schema 1: {v1:,} B; schema 3 with 64 KiB blocks: {v3:,} B ({v3 / v1:.4f}x); "
          f"without: {v3_none:,} B ({v3_none / v1:.4f}x)")


if __name__ == "__main__":
    main()
