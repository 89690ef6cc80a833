"""Peak memory of a schema-3 file of many empty tensors, before and after a change, in one run:
``save``, iterating the tensors and their keys, ``upgrade`` (the copy ``convert`` makes) and
``onert-ckpt convert --to v2``, each in a fresh child over the same operation on a 4-tensor
file (tests/invariants/test_bounded_cost.py's measurement: ``VmHWM``, reset between the two).

    python tests/bench/bench_many_empty.py --before OLD/src            # 2,000,000 tensors
    python tests/bench/bench_many_empty.py --before OLD/src --tensors 400000

Prints, per operation, MiB over the 4-tensor run for each tree, after/before, and after as a
fraction of the bound (64 MiB + 8x the file). Nothing is asserted here (the test asserts it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.invariants.test_bounded_cost import (  # noqa: E402
    MANY_EMPTY,
    MANY_EMPTY_CASES,
    MIB,
    bound,
    cli,
    peaks_of,
)
from tests.large_files import v3_many_entries  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the other tree's src folder")
    parser.add_argument("--after", default=str(ROOT / "src"))
    parser.add_argument("--tensors", type=int, default=MANY_EMPTY)
    args = parser.parse_args()
    cases = {**MANY_EMPTY_CASES,
             "convert --to v2": lambda p, out: cli("convert", p, out, "--to", "v2")}
    with tempfile.TemporaryDirectory(prefix="ockpt-empty-") as tmp:
        big, tiny = Path(tmp, "big.ckpt"), Path(tmp, "tiny.ckpt")
        big.write_bytes(v3_many_entries(args.tensors))
        tiny.write_bytes(v3_many_entries(4))
        limit = bound(big.stat().st_size)
        print(f"{args.tensors} empty tensors, {big.stat().st_size} bytes; bound "
              f"{limit / MIB:.0f} MiB")
        print(f"{'operation':<22} {'before':>8} {'after':>8} {'after/before':>13} {'/bound':>7}")
        generated = str(ROOT / "generated" / "python")
        for name, make in cases.items():
            over = []
            for src in (args.before, args.after):
                os.environ["PYTHONPATH"] = os.pathsep.join([src, generated])
                (base, _, _), (peak, status, err) = peaks_of(
                    make(tiny, Path(tmp, "tiny-out.ckpt")), make(big, Path(tmp, "out.ckpt"))
                )
                if status:
                    print(f"  {name}: exit {status}: {err.strip()[-300:]}")
                over.append(peak - base)
            print(f"{name:<22} {over[0] / MIB:>8.0f} {over[1] / MIB:>8.0f} "
                  f"{over[1] / over[0]:>13.2f} {over[1] / limit:>7.2f}")


if __name__ == "__main__":
    main()
