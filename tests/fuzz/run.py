#!/usr/bin/env python3
"""Run the coverage-guided fuzzers for a fixed time, seeded from the regression corpus.

    python tests/fuzz/run.py                          # python, $ONERT_CKPT_FUZZ_SECONDS or 60 s
    python tests/fuzz/run.py --seconds 3600 --jobs 4  # an hour on 4 cores
    python tests/fuzz/run.py --target c --seconds 600 # the C reader (spec/c/fuzz_ockpt.c, clang)
    python tests/fuzz/run.py --work ~/ockpt-fuzz      # keep the grown corpus between runs
    python tests/fuzz/run.py --add                    # crashes go into tests/corpus (pending)

Targets: ``python`` is tests/fuzz/fuzz_load.py (atheris); ``c`` is the libFuzzer harness of the
reference C reader, built here with clang and ASan/UBSan from spec/c/*.c. The seed corpus is
tests/corpus/files (read only); new coverage goes to the work folder (a temporary one unless
``--work`` is given). Exit status 0 when no input crashed, 1 when one did (its path is printed;
with ``--add`` it is also copied into tests/corpus/files with a manifest entry marked
``"pending": true``, which the replay test checks for the properties only, until someone writes
the expected outcome in).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = ROOT / "tests" / "corpus"
SEEDS = CORPUS / "files"
C_DIR = ROOT / "spec" / "c"

DEFAULT_SECONDS = int(os.environ.get("ONERT_CKPT_FUZZ_SECONDS", "60"))


def build_c(out_dir: Path) -> Path | None:
    """Build the C reader's libFuzzer harness with clang; None when that is not possible."""
    clang = shutil.which("clang")
    harness = C_DIR / "fuzz_ockpt.c"
    if clang is None or not harness.exists():
        return None
    sources = [str(C_DIR / n) for n in ("ockpt.c", "ockpt_crc32.c")] + [str(harness)]
    exe = out_dir / "fuzz_ockpt"
    cmd = [clang, "-std=c99", "-g", "-O1", "-fsanitize=fuzzer,address,undefined",
           "-fno-sanitize-recover=all", "-I", str(C_DIR), "-o", str(exe), *sources]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        print(f"cannot build the C harness:\n{res.stderr}", file=sys.stderr)
        return None
    return exe


def fuzz_command(target: str, exe: Path | None, work: Path, seconds: int, jobs: int,
                 extra: list[str]) -> list[str]:
    if target == "python":
        cmd = [sys.executable, str(HERE / "fuzz_load.py")]
    else:
        assert exe is not None
        cmd = [str(exe)]
    cmd += [str(work / "corpus"), str(SEEDS), f"-max_total_time={seconds}", "-max_len=4096",
            "-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1",
            f"-artifact_prefix={work / 'artifacts'}/"]
    if jobs > 1:
        cmd += [f"-fork={jobs}", "-ignore_crashes=0"]
    return cmd + extra


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
        if target == "python" else "libfuzzer-c",
    })
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return name


def run(target: str, seconds: int, jobs: int, work: Path, add: bool, extra: list[str]) -> int:
    (work / "corpus").mkdir(parents=True, exist_ok=True)
    (work / "artifacts").mkdir(parents=True, exist_ok=True)
    exe = None
    if target == "c":
        exe = build_c(work)
        if exe is None:
            print("the C target needs clang and spec/c/fuzz_ockpt.c; skipped")
            return 0
    cmd = fuzz_command(target, exe, work, seconds, jobs, extra)
    print("$", " ".join(cmd), flush=True)
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:allocator_may_return_null=1")
    res = subprocess.run(cmd, cwd=work, env=env)
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
    ap.add_argument("--target", choices=["python", "c", "all"], default="python")
    ap.add_argument("--seconds", type=int, default=DEFAULT_SECONDS)
    ap.add_argument("--jobs", type=int, default=1, help="libFuzzer -fork=N worker processes")
    ap.add_argument("--work", type=Path, help="keep the grown corpus and artifacts here")
    ap.add_argument("--add", action="store_true", help="copy crashes into tests/corpus")
    ap.add_argument("extra", nargs="*", help="more libFuzzer flags (after --)")
    args = ap.parse_args(argv)
    targets = ["python", "c"] if args.target == "all" else [args.target]
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
