"""The micro reader's goal rows (spec/c/README.md, "The micro reader"), measured in one run.

    python spec/c/micro/measure.py          # prints the rows as Markdown; exit 1 if a goal fails

* ``.text`` and ``.rodata`` of every ``.c`` in this folder, compiled for a Cortex-M4 (Thumb-2)
  at -Os by ``arm-none-eabi-gcc`` (C99, -Wall -Wextra -Werror -pedantic), from ``size -A``;
* the largest stack frame (``-fstack-usage``) and the undefined symbols of those objects
  (``nm -u``: none may be a library call);
* ``sizeof(ockpt_micro)``, the reader's whole state, on that target and on the host;
* the bytes the reader asks its callback for, per byte of the file, loading every range of a
  3-layer FC model (26,122 float32 weights, Adam and SGD) written by the library as schema 3
  with 256-byte blocks, through tests/ckit/micro_harness.c (built with the host's gcc).

Needs gcc, binutils, arm-none-eabi-gcc and the library (``onert_checkpoint``, numpy).
Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb"]
WARN = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
#: the goals of the micro profile (issue's table): .text, stack frame, state, bytes read
GOALS = {"text": 4096, "frame": 256, "state": 256, "ratio": 1.05}
BLOCK = 256
LAYERS = [(128, 64), (128, 128), (10, 128)]


def run(argv: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return done.stdout + done.stderr


def sections(obj: Path, tool: str = "arm-none-eabi-size") -> dict[str, int]:
    """Bytes of .text* and .rodata* (size -A)."""
    out = {"text": 0, "rodata": 0}
    for line in run([tool, "-A", str(obj)]).splitlines():
        words = line.split()
        if len(words) >= 2 and words[1].isdigit():
            for part in out:
                if words[0].startswith("." + part):
                    out[part] += int(words[1])
    return out


def state_size(out: Path, compiler: list[str], nm: str) -> int:
    probe = out / "probe.c"
    probe.write_text('#include "ockpt_micro.h"\n'
                     "const unsigned char micro_state[sizeof(ockpt_micro)] = {0};\n")
    obj = out / f"probe-{compiler[0]}.o"
    run([*compiler, *WARN, f"-I{HERE}", "-c", str(probe), "-o", str(obj)])
    for line in run([nm, "-S", str(obj)]).splitlines():
        if line.endswith(" micro_state"):
            return int(line.split()[1], 16)
    raise SystemExit("probe symbol not found")


def model_file(path: Path, adam: bool) -> int:
    import numpy as np

    import onert_checkpoint as oc

    rng = np.random.default_rng(1)
    arrays = {}
    for i, (rows, cols) in enumerate(LAYERS):
        for j, shape in enumerate([(rows, cols), (rows,)]):
            name = str(2 * i + j)
            arrays[name] = rng.standard_normal(shape).astype(np.float32)
            if adam:
                arrays[name + ".m"] = rng.standard_normal(shape).astype(np.float32)
                arrays[name + ".v"] = np.square(rng.standard_normal(shape)).astype(np.float32)
    ckpt = oc.from_numpy_dict(arrays)
    ckpt.step = 2
    ckpt.revision = "v3"
    ckpt.layout.data_block_size = BLOCK
    oc.save(ckpt, path)
    return path.stat().st_size


def main() -> int:
    rows: list[tuple[str, str]] = []
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        text = rodata = frame = 0
        undefined: set[str] = set()
        version = run([ARM[0], "--version"]).splitlines()[0]
        for c in sorted(HERE.glob("*.c")):
            obj = out / (c.stem + ".o")
            run([*ARM, *WARN, "-Os", "-fstack-usage", "-c", str(c), "-o", str(obj)], cwd=out)
            size = sections(obj)
            text += size["text"]
            rodata += size["rodata"]
            for line in (out / (c.stem + ".su")).read_text().splitlines():
                frame = max(frame, int(line.split("\t")[1]))
            undefined |= set(run(["arm-none-eabi-nm", "-u", str(obj)]).split()) - {"U"}
        arm_state = state_size(out, ARM, "arm-none-eabi-nm")
        host_state = state_size(out, ["gcc"], "nm")
        rows += [(f"`.text`, every `.c` of spec/c/micro, Cortex-M4 Thumb-2 -Os ({version})",
                  f"{text:,} B (`.rodata` {rodata:,} B)"),
                 ("largest stack frame (`-fstack-usage`)", f"{frame} B"),
                 ("library calls linked (`nm -u`)", ", ".join(sorted(undefined)) or "none"),
                 ("reader state `sizeof(ockpt_micro)`, Cortex-M4 / x86-64",
                  f"{arm_state} B / {host_state} B, + one block buffer")]
        ok &= text <= GOALS["text"] and frame <= GOALS["frame"] and not undefined
        ok &= arm_state <= GOALS["state"]
        exe = out / "micro_harness"
        run(["gcc", *WARN, "-O1", f"-I{HERE}", "-o", str(exe),
             str(ROOT / "tests" / "ckit" / "micro_harness.c"), *map(str, HERE.glob("*.c")),
             str(ROOT / "spec" / "c" / "ockpt_crc32.c")])
        for adam in (True, False):
            path = out / f"model-{'adam' if adam else 'sgd'}.ckpt"
            size = model_file(path, adam)
            text_out = run([str(exe), "--buffer", str(BLOCK), str(path)])
            if "\nend\n" not in text_out:
                raise SystemExit(f"the micro reader refused {path.name}:\n{text_out[-400:]}")
            read = int(re.search(r"bytes-read (\d+)", text_out)[1])
            ratio = read / size
            ok &= ratio <= GOALS["ratio"]
            rows.append((f"bytes read per byte of file, load + verified copies, "
                         f"{'Adam' if adam else 'SGD'} ({size:,} B, {BLOCK}-byte blocks)",
                         f"{read:,} B, {ratio:.4f}x"))
    print("| measure | micro reader |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
