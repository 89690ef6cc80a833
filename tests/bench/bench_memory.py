"""Anonymous memory of the commands on 1 GiB files: what a command holds beyond the page cache.

    python tests/bench/bench_memory.py                  # 1 GiB files, this tree's package
    python tests/bench/bench_memory.py --size-mib 256   # smaller files (a quicker look)
    python tests/bench/bench_memory.py --src OTHER/src  # another tree's package (before/after)

Each command runs as ``python -m onert_checkpoint ...`` in a child process, whose ``RssAnon``
(/proc/<pid>/status: private anonymous pages, the heap and NumPy's buffers, not the mapped
file's pages) is sampled every 5 ms while it runs; the peak is printed per command against the
budget: 64 MiB in all, the interpreter and its imports included (``onert-ckpt --version`` alone
is shown for scale). The mapped files' pages are page cache: the kernel may drop them under
pressure, so they are not counted. Each output is checked: the import of the export is the
original file byte for byte.

The files (in a temporary folder): a schema-1 onert checkpoint of 16 float32 tensors with Adam
state (1/3 of the size in weights, 2/3 in m and v), a copy with every weight moved by a little
(for diff); import reads what export wrote. No circle model is needed (entries by index).
Linux only (/proc).

``--binding`` measures instead reading a checkpoint through a large circle model (an FC chain
of ``--model-mib`` MiB of weights, built by tests/interop/circle_builder.py, and its fresh
checkpoint): ``info`` without the model, with it (the default order), with ``--order
predict``, and with ``--order probe`` twice (the runtime, then its cached answer), each one's
seconds and peak RssAnon, and the default's time as a ratio of predict's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MIB = 1 << 20
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def rss_anon(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def peak_anon(argv: list[str], src: str) -> tuple[int, float, int]:
    """(peak RssAnon in bytes, seconds, exit status) of ``python -m onert_checkpoint argv``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(ROOT / "generated" / "python")])}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "onert_checkpoint", *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, rss_anon(proc.pid) or 0)
        time.sleep(0.005)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 1):
        print(f"  {' '.join(argv)}: exit {proc.returncode}: {err.strip()[-300:]}")
    return peak, time.perf_counter() - start, proc.returncode


def make_files(folder: Path, size: int, src: str) -> dict[str, Path]:
    """The checkpoint and its moved copy, written by this tree (import reads export's file)."""
    sys.path.insert(0, src)
    import onert_checkpoint as oc

    n = 16
    per = size // (3 * n) // 4 * 4
    rng = np.random.default_rng(7)
    pattern = rng.standard_normal(per // 4 + 4096, dtype=np.float32)

    def arr(i: int, slot: int) -> np.ndarray:
        return pattern[(i * 3 + slot) % 4096:][: per // 4]

    def ckpt(moved: float) -> oc.Checkpoint:
        tensors = [oc.Tensor(i, arr(i, 0) + np.float32(moved) if moved else arr(i, 0))
                   for i in range(n)]
        opt = oc.Optimizer("adam")
        for s, slot in enumerate(("m", "v"), start=1):
            opt.slots[slot] = {i: oc.Buffer(i, np.abs(arr(i, s))) for i in range(n)}
        return oc.Checkpoint(tensors, opt, oc.TrainingState(step=100, epoch=1), dialect="onert")

    files = {"a": folder / "a.ckpt", "b": folder / "b.ckpt"}
    oc.save(ckpt(0.0), files["a"], revision="v1")
    oc.save(ckpt(1e-3), files["b"], revision="v1")
    return files


def binding(folder: Path, model_mib: int, src: str) -> None:
    """The rows of ``--binding`` (see the module's text)."""
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    from circle_builder import build_fc_model

    width = int((model_mib * MIB / 4 / 4) ** 0.5)  # four square layers
    model = folder / "big.circle"
    model.write_bytes(build_fc_model([width] * 5, seed=1))
    ckpt = folder / "big.ckpt"
    assert peak_anon(["new", "--model", str(model), "--optimizer", "sgd", str(ckpt)], src)[2] == 0
    print(f"model {model.stat().st_size / MIB:.0f} MiB, checkpoint {ckpt.stat().st_size / MIB:.0f}"
          " MiB")
    env_cache = folder / "cache"
    os.environ["XDG_CACHE_HOME"] = str(env_cache)  # the probe's answers: this run's own
    rows = {
        "info (no model)": ["info", "--no-model", str(ckpt)],
        "info --model": ["info", "--model", str(model), str(ckpt)],
        "--order predict": ["info", "--model", str(model), "--order", "predict", str(ckpt)],
        "--order probe": ["info", "--model", str(model), "--order", "probe", str(ckpt)],
        "probe, cached": ["info", "--model", str(model), "--order", "probe", str(ckpt)],
    }
    seconds = {}
    print(f"{'command':<18} {'peak RssAnon':>13} {'seconds':>8}")
    for name, case in rows.items():
        peak, secs, status = peak_anon(case, src)
        seconds[name] = secs
        print(f"{name:<18} {peak / MIB:>9.1f} MiB {secs:>8.2f}  (exit {status})")
    ratio = seconds["info --model"] / seconds["--order predict"]
    print(f"info --model / --order predict: {ratio:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--src", default=str(ROOT / "src"), help="the package's source tree")
    parser.add_argument("--data", help="a folder to keep the files in (default: a temporary one)")
    parser.add_argument("--binding", action="store_true", help="the large-model rows instead")
    parser.add_argument("--model-mib", type=int, default=320)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ockpt-mem-") as tmp:
        folder = Path(args.data or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.binding:
            binding(folder, args.model_mib, args.src)
            return 0
        files = make_files(folder, args.size_mib * MIB, str(ROOT / "src"))
        size = files["a"].stat().st_size
        base, _, _ = peak_anon(["--version"], args.src)
        print(f"file {size / MIB:.0f} MiB; interpreter + imports {base / MIB:.1f} MiB anonymous")
        out = folder / "out"
        cases = {
            "diff": ["diff", "--atol", "1", str(files["a"]), str(files["b"])],
            "export": ["export", str(files["a"]), f"{out}.safetensors"],
            "import": ["import", f"{out}.safetensors", f"{out}-i.ckpt"],
            "convert --to v3": ["convert", str(files["a"]), f"{out}-3.ckpt", "--to", "v3"],
        }
        print(f"{'command':<16} {'peak RssAnon':>13} {'beyond start':>13} {'seconds':>8}  budget")
        for name, case in cases.items():
            peak, secs, status = peak_anon(case, args.src)
            extra = peak - base
            verdict = "ok" if peak <= 64 * MIB else "OVER"
            print(f"{name:<16} {peak / MIB:>9.1f} MiB {extra / MIB:>9.1f} MiB {secs:>8.1f}  "
                  f"{verdict} (exit {status})")
        same = Path(f"{out}-i.ckpt").read_bytes() == files["a"].read_bytes()
        print(f"import of the export is the original file byte for byte: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
