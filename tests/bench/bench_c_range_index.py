"""The C reader without scratch on hostile schema-3 files, before and after the range_index section.

    python tests/bench/bench_c_range_index.py                  # 1,000,000 tensors, 300 s timeout
    python tests/bench/bench_c_range_index.py --tensors 20000 --model-index --timeout 300
    python tests/bench/bench_c_range_index.py --lookups-only   # per-lookup times only

Prints the rows of spec/c/README.md's range_index table: ``ockpt-info-release`` (``make
release``) of the reader as committed at ``--before`` (default ea50896, the commit before the
section) and at HEAD, on files the library writes (``to_bytes(..., revision="v3")``): 4-byte
tensors, Adam with both slots full, data in reverse record order (an ``order`` column), with and
without names (``--model-index`` adds a distinct model index to every record). Each run reports
CPU seconds (user + sys of the child) and wall seconds, or that it did not finish within
``--timeout`` seconds of wall time, with the load average: the machine is shared.

Per lookup: a small C program (LOOKUP below, built against HEAD's kit at -O2) reads each file
with scratch (so that the quadratic rules of the scratch-free method are skipped), drops the
offsets kept in scratch, and times ``ockpt_v3_range`` of one record in each of the 3 passes
through the range_index section, then with ``range_index`` set to 0: the walk the reader
before the section makes (CPU time, ``clock()``).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

import numpy as np

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]
KIT = ("ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c")

LOOKUP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "ockpt.h"
int main(int argc, char **argv) {
  FILE *fp = fopen(argv[1], "rb");
  long size, rep = atol(argv[3]), i;
  unsigned char *buf;
  size_t count;
  uint64_t *scratch;
  ockpt_file f;
  ockpt_result r;
  uint32_t k = (uint32_t)atol(argv[2]), p;
  int mode;
  if (argc != 4 || fp == NULL) return 3;
  fseek(fp, 0, SEEK_END);
  size = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  buf = malloc((size_t)size);
  if (fread(buf, 1, (size_t)size, fp) != (size_t)size) return 3;
  count = ockpt_scratch_count(buf, (size_t)size);
  scratch = malloc(count * 8);
  r = ockpt_read_scratch(buf, (size_t)size, &f, scratch, count);
  if (r.code != OCKPT_OK) return 1;
  for (mode = 0; mode < 2; mode++) {
    ockpt_file g = f;
    uint64_t want[3], got, n;
    long reps = mode == 0 ? rep * 10000 : rep;
    clock_t t;
    for (p = 0; p < 3; p++) ockpt_v3_range(&f, p, k, &want[p], &n);
    g.container.offsets = NULL;
    if (mode == 1) g.container.range_index = 0;
    t = clock();
    for (i = 0; i < reps; i++)
      for (p = 0; p < 3; p++) {
        ockpt_v3_range(&g, p, k, &got, &n);
        if (got != want[p]) return 2;
      }
    printf("%s record %u: %.3f us per lookup (%ld x 3 lookups)\n",
           mode == 0 ? "with range_index" : "without (walk)", k,
           (double)(clock() - t) / CLOCKS_PER_SEC * 1e6 / (3.0 * reps), reps);
  }
  return 0;
}
"""


def hostile(path: Path, n: int, *, names: bool, model_index: bool) -> Path:
    """n tensors of 4 bytes, Adam with both slots full, data in reverse record order."""
    if path.exists():
        return path
    z = np.zeros(1, np.float32)
    tensors = [
        oc.Tensor(i, z, name=f"t{i:07d}" if names else None, dtype="float32", shape=(1,),
                  model_index=i if model_index else None)
        for i in range(n)
    ]  # fmt: skip
    opt = oc.Optimizer("adam", {s: {i: oc.Buffer(i, z) for i in range(n)} for s in ("m", "v")})
    ckpt = oc.Checkpoint(tensors, opt, oc.TrainingState(step=1, epoch=0))
    ckpt.layout.data_order = np.arange(n - 1, -1, -1)
    path.write_bytes(oc.to_bytes(ckpt, revision="v3"))
    return path


def kit_at(commit: str, folder: Path) -> Path:
    """spec/c as committed at ``commit``, built with ``make release``."""
    tar = subprocess.run(["git", "archive", commit, "spec/c"], cwd=ROOT, capture_output=True,
                         check=True).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(tar)) as t:
        t.extractall(folder, filter="data")
    kit = folder / "spec" / "c"
    subprocess.run(["make", "-s", "-C", str(kit), "release"], check=True)
    return kit


def timed(cmd: list[str], timeout: float) -> str:
    """CPU (user + sys of the child) and wall seconds of ``cmd``, or that it did not finish."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=timeout)
        finished = proc.returncode == 0
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        finished = False
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    if not finished:
        return f"not finished in {timeout:.0f} s wall ({cpu:.1f} s CPU used; load {load})"
    return f"{cpu:.2f} s ({wall:.1f} s; load {load})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tensors", type=int, default=1_000_000)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--before", default="ea50896", help="the reader before the section")
    ap.add_argument("--model-index", action="store_true", help="a model index on every record")
    ap.add_argument("--lookups-only", action="store_true")
    ap.add_argument("--cache", type=Path, help="keep the generated files here")
    args = ap.parse_args()
    n = args.tensors
    with tempfile.TemporaryDirectory(prefix="bench-range-index-") as tmp:
        folder = Path(tmp)
        cache = args.cache or folder
        cache.mkdir(parents=True, exist_ok=True)
        suffix = "-model" if args.model_index else ""
        files = {
            label: hostile(cache / f"hostile-{n}-{label}{suffix}.ckpt", n, names=named,
                           model_index=args.model_index)
            for label, named in (("no names", False), ("named", True))
        }  # fmt: skip
        after = kit_at("HEAD", folder / "after")
        lookup = folder / "lookup"
        (folder / "lookup.c").write_text(LOOKUP)
        subprocess.run(["gcc", "-std=c99", "-O2", f"-I{after}", "-o", str(lookup),
                        str(folder / "lookup.c"), *(str(after / f) for f in KIT)],
                       check=True)  # fmt: skip
        for label, path in files.items():
            for record in (0, n - 1):
                out = subprocess.run([str(lookup), str(path), str(record), "10"],
                                     capture_output=True, text=True, check=True).stdout  # fmt: skip
                for line in out.splitlines():
                    print(f"{n:,} tensors, {label}: {line}")
        if args.lookups_only:
            return 0
        before = kit_at(args.before, folder / "before")
        print("| file | reader | buffer, scratch | buffer, no scratch | stream, scratch | "
              "stream, no scratch |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        for label, path in files.items():
            size = path.stat().st_size / 1e6
            for name, kit in ((f"before ({args.before})", before), ("after (HEAD)", after)):
                exe = str(kit / "ockpt-info-release")
                cells = [timed([exe, *mode, str(path)], args.timeout)
                         for mode in ([], ["--no-scratch"], ["--stream"],
                                      ["--stream", "--no-scratch"])]  # fmt: skip
                print(f"| {n:,} tensors, {label} ({size:.1f} MB) | {name} | " + " | ".join(cells)
                      + " |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
