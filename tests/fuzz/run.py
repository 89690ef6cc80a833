#!/usr/bin/env python3
"""Run the coverage-guided fuzzers for a fixed time, seeded from the regression corpus.

    python tests/fuzz/run.py                          # python, $ONERT_CKPT_FUZZ_SECONDS or 60 s
    python tests/fuzz/run.py --seconds 3600 --jobs 4  # an hour on 4 cores
    python tests/fuzz/run.py --target c --seconds 600 # the C reader (spec/c/fuzz_ockpt.c, clang)
    python tests/fuzz/run.py --work ~/ockpt-fuzz      # keep the grown corpus between runs
    python tests/fuzz/run.py --add                    # crashes go into tests/corpus (pending)

Targets: ``python`` is tests/fuzz/fuzz_load.py (atheris), ``tools`` is tests/fuzz/fuzz_tools.py
(atheris: every public path after a successful load); ``c`` is the libFuzzer harness of the
reference C reader, built here with clang and ASan/UBSan from the sources spec/c/Makefile lists
(``make -C spec/c print-fuzz-sources``). Each run prints one line ``TARGET: executions N,
coverage C`` from libFuzzer's final statistics. The seed corpus is
tests/corpus/files (read only); new coverage goes to the work folder (a temporary one unless
``--work`` is given). Exit status 0 when no input crashed, 1 when one did (its path is printed;
with ``--add`` it is also copied into tests/corpus/files with a manifest entry marked
``"pending": true``, which the replay test checks for the properties only, until someone writes
the expected outcome in), 2 when the C harness does not build. The C target is skipped (status
0, "skipped" printed) only where clang or make is not installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

from onert_checkpoint.format.layout import Schema3Layout

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = ROOT / "tests" / "corpus"
SEEDS = CORPUS / "files"
C_DIR = ROOT / "spec" / "c"

#: atheris targets: ``load`` itself, and every public path after a successful load.
PYTHON_TARGETS = {"python": "fuzz_load.py", "tools": "fuzz_tools.py"}

DEFAULT_SECONDS = int(os.environ.get("ONERT_CKPT_FUZZ_SECONDS", "60"))


class BuildError(RuntimeError):
    """The C harness could not be built although clang and make are installed."""


def c_sources() -> list[Path]:
    """The harness's sources, as spec/c/Makefile lists them (`make print-fuzz-sources`), so the
    runner links exactly what `make fuzz` links and the two lists cannot drift apart."""
    res = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(C_DIR),
                          "print-fuzz-sources"], capture_output=True, text=True)
    if res.returncode != 0 or not res.stdout.split():
        raise BuildError(f"make print-fuzz-sources failed:\n{res.stdout}{res.stderr}")
    return [C_DIR / name for name in res.stdout.split()]


def c_missing_tools() -> str | None:
    """Why the C target cannot run here (None when it can)."""
    missing = [tool for tool in ("clang", "make") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not installed" if missing else None


def build_c(out_dir: Path) -> Path:
    """Build the C reader's libFuzzer harness with clang, ASan and UBSan; BuildError if the
    compiler refuses (a harness that does not link must fail the run, not skip it)."""
    exe = out_dir / "fuzz_ockpt"
    cmd = ["clang", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1",
           "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
           "-I", str(C_DIR), "-o", str(exe), *map(str, c_sources())]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BuildError(f"cannot build the C harness:\n$ {' '.join(cmd)}\n{res.stderr}")
    return exe


def fuzz_stats(log: str) -> tuple[int | None, int | None]:
    """(executions, coverage) from libFuzzer's output: `stat::number_of_executed_units` of the
    final stats (or the last `#N` status line) and the last `cov:` figure."""
    execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    if not execs:
        execs = re.findall(r"^#(\d+)\s", log, re.MULTILINE)
    cov = re.findall(r"\bcov: (\d+)", log)
    return (int(execs[-1]) if execs else None, int(cov[-1]) if cov else None)


def fuzz_command(target: str, exe: Path | None, work: Path, seconds: int, jobs: int,
                 extra: list[str]) -> list[str]:
    if target in PYTHON_TARGETS:
        cmd = [sys.executable, str(HERE / PYTHON_TARGETS[target])]
    else:
        assert exe is not None
        cmd = [str(exe)]
    # -timeout is wall-clock time per input: 60 s, not 10, so that a loaded machine (the
    # suite's runs share 2 cores with other work) does not report a slow input as a hang; an
    # input of at most 4 KiB that runs a minute is still caught.
    cmd += [str(work / "corpus"), str(SEEDS), f"-max_total_time={seconds}", "-max_len=4096",
            "-timeout=60", "-rss_limit_mb=2048", "-print_final_stats=1",
            f"-artifact_prefix={work / 'artifacts'}/"]
    if jobs > 1:
        cmd += [f"-fork={jobs}", "-ignore_crashes=0"]
    return cmd + extra


def write_v3_seeds(folder: Path) -> int:
    """The corpus's valid files rewritten as schema 3 (spec/SPEC.md 7), next to the grown
    corpus: the read-only seed corpus predates schema 3, and its files are what the fuzzers
    mutate. Returns how many were written (0 while the library has no schema-3 writer)."""
    import onert_checkpoint as oc

    if 3 not in oc.SUPPORTED_VERSIONS:
        return 0
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    count = 0
    for case in manifest["cases"]:
        if not case["expect"].get("valid") or "model" in case:
            continue
        try:
            data = oc.to_bytes(oc.load(SEEDS / case["file"]), revision="v3")
        except (oc.CheckpointError, ValueError):
            continue  # not representable in schema 3 (a quirk of the original file)
        (folder / f"v3-{case['name']}.bin").write_bytes(data)
        count += 1
    (folder / "v3-range-index.bin").write_bytes(_range_index_seed(oc))
    return count + 1


def _range_index_seed(oc: types.ModuleType) -> bytes:
    """A schema-3 file under the fuzzers' 4 KiB with a range_index section (spec/SPEC.md
    7.5): 80 tensors of 0 to 4 bytes in a data order other than record order, SGD, groups
    of 16 (five groups and a position per record for the fuzzers to break)."""
    import numpy as np

    tensors = [oc.Tensor(i, np.full(i % 5, i, np.uint8)) for i in range(80)]
    order = [(3 * i) % 80 for i in range(80)]
    ckpt = oc.Checkpoint(tensors, oc.Optimizer("sgd"), layout=Schema3Layout("v3", data_order=order))
    ckpt.layout.range_index_group = 16
    ckpt.layout.data_block_size = 0
    return oc.to_bytes(ckpt, revision="v3")


def add_pending(path: Path, target: str) -> str:
    """Copy a crashing input into the corpus with a pending manifest entry."""
    data = path.read_bytes()
    name = f"{target}-{hashlib.sha1(data).hexdigest()[:12]}"
    (SEEDS / f"{name}.bin").write_bytes(data)
    manifest_path = CORPUS / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["cases"] = [c for c in manifest["cases"] if c["name"] != name]
    manifest["cases"].append({
        "name": name, "file": f"{name}.bin", "expect": {"pending": True},
        "why": f"found by the {target} fuzzer; fill in the expected outcome", "origin": "atheris"
        if target in PYTHON_TARGETS else "libfuzzer-c",
    })
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return name


def run(target: str, seconds: int, jobs: int, work: Path, add: bool, extra: list[str]) -> int:
    (work / "corpus").mkdir(parents=True, exist_ok=True)
    (work / "artifacts").mkdir(parents=True, exist_ok=True)
    exe = None
    if target == "c":
        why = c_missing_tools()
        if why is not None:
            print(f"the C target needs clang and make ({why}); skipped")
            return 0
        try:
            exe = build_c(work)
        except BuildError as err:
            print(err, file=sys.stderr)
            return 2
    print(f"{write_v3_seeds(work / 'corpus')} schema-3 seeds written", flush=True)
    cmd = fuzz_command(target, exe, work, seconds, jobs, extra)
    print("$", " ".join(cmd), flush=True)
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:allocator_may_return_null=1")
    # libFuzzer reports on stderr: keep it in a log to read the figures back, and pass it on.
    log_path = work / "fuzz.log"
    with log_path.open("w") as log:
        res = subprocess.run(cmd, cwd=work, env=env, stderr=log)
    log_text = log_path.read_text(errors="replace")
    sys.stderr.write(log_text[-8000:])
    execs, cov = fuzz_stats(log_text)
    print(f"{target}: executions {execs if execs is not None else 'unknown'}, "
          f"coverage {cov if cov is not None else 'unknown'} (cov: edges), {seconds} s", flush=True)
    crashes = sorted(p for p in (work / "artifacts").iterdir()
                     if p.name.startswith(("crash-", "leak-", "timeout-", "oom-")))
    for p in crashes:
        print(f"CRASH: {p} ({p.stat().st_size} bytes): {p.read_bytes()[:64].hex(' ')}")
        if add:
            print(f"  added to the corpus as {add_pending(p, target)} (pending)")
    if res.returncode != 0 and not crashes:
        print(f"the fuzzer exited with status {res.returncode}")
        return 1
    return 1 if crashes else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--target", choices=[*PYTHON_TARGETS, "c", "all"], default="python")
    ap.add_argument("--seconds", type=int, default=DEFAULT_SECONDS)
    ap.add_argument("--jobs", type=int, default=1, help="libFuzzer -fork=N worker processes")
    ap.add_argument("--work", type=Path, help="keep the grown corpus and artifacts here")
    ap.add_argument("--add", action="store_true", help="copy crashes into tests/corpus")
    ap.add_argument("extra", nargs="*", help="more libFuzzer flags (after --)")
    args = ap.parse_args(argv)
    targets = [*PYTHON_TARGETS, "c"] if args.target == "all" else [args.target]
    status = 0
    for target in targets:
        if args.work:
            status |= run(target, args.seconds, args.jobs, args.work / target, args.add,
                          args.extra)
        else:
            with tempfile.TemporaryDirectory(prefix=f"ockpt-fuzz-{target}-") as tmp:
                status |= run(target, args.seconds, args.jobs, Path(tmp), args.add, args.extra)
    return status


if __name__ == "__main__":
    sys.exit(main())
