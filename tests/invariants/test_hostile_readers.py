"""``onert-ckpt conformance`` runs a program the user names: its promises hold whatever that
program does. Each reader of tests/public_surface.py's HOSTILE_READERS (real shell scripts)
attacks the runner on one vector and answers the other rightly; the runner, a real process:

* reports the attack as that case's disagreement (or, for a reader whose answer is right,
  agreement), keeps the other case's result, and exits 0 or 1 with no traceback;
* ends each case within its ``--timeout``, and a case whose reader exits does not wait for a
  child still holding its stdout;
* keeps its peak memory (its own resident set, the readers' apart) within 64 MiB + 32x the
  output kept per reader and job, however much a reader prints (parsed JSON of empty arrays
  takes about 28x its text);
* leaves no process the reader started behind (found by a mark in their environment: a child
  left behind by the old runner had left the reader's process group, being in the runner's).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.public_surface import HOSTILE_READERS, HostileReader

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 5
JOBS = 2
KEPT = 1 << 20  # the runner's default --max-output
MIB = 1 << 20

#: The runner in a process of its own, its stdin a pipe that never ends (as a terminal's does
#: not), printing its own peak resident set on its last stderr line.
RUNNER = textwrap.dedent("""
    import os, resource, sys
    from onert_checkpoint.tools.cli import main
    r, w = os.pipe()
    os.dup2(r, 0)
    status = main(sys.argv[1:])
    # this image's own peak: VmHWM (kB); ru_maxrss keeps the forking test process's peak
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
    peak = hwm[0].split()[1] if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("maxrss", peak, file=sys.stderr)
    sys.exit(status)
""")


def hostile_script(folder: Path, reader: HostileReader) -> Path:
    script = folder / f"{reader.name}.sh"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in */v3-minimal.ckpt) ;; *) exec cat -- "${1%.ckpt}.json";; esac\n'
        f"{reader.attack}\n"
    )
    script.chmod(0o755)
    return script


def marked(mark: str) -> list[int]:
    """The live processes (not zombies) whose environment holds ``READER_MARK=<mark>``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if f"READER_MARK={mark}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry.name))
        except (OSError, IndexError):
            continue  # not a process, or one that ended while listed
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process groups from /proc")
@pytest.mark.parametrize("reader", HOSTILE_READERS, ids=lambda r: r.name)
def test_the_runner_keeps_its_promises_against_a_hostile_reader(
    reader: HostileReader, tmp_path: Path
) -> None:
    mark = str(tmp_path)
    argv = [sys.executable, "-c", RUNNER, "conformance", "--no-corpus", "--select", "v3-minimal",
            "--select", "v3-adam", "--timeout", str(TIMEOUT), "--jobs", str(JOBS), "--",
            str(hostile_script(tmp_path, reader)), "{file}"]
    start = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "READER_MARK": mark})
    elapsed = time.monotonic() - start
    assert "Traceback" not in res.stderr and "internal_error" not in res.stderr, res.stderr
    lines = res.stdout.splitlines()
    if reader.says is None:
        assert (res.returncode, lines[-1]) == (0, "2 cases: 2 agree, 0 disagree"), res.stdout
    else:
        assert res.returncode == 1 and lines[-1] == "2 cases: 1 agree, 1 disagree", res.stdout
        (said,) = [line for line in lines if line.startswith("DISAGREE vector v3-minimal: ")]
        assert re.search(reader.says, said), said
    # the reader ended its case (or the timeout did), not a child holding its output
    timed_out = "did not finish" in res.stdout
    assert elapsed < (TIMEOUT + 10 if timed_out else TIMEOUT), f"{elapsed:.1f} s"
    peak = int(res.stderr.split()[-1]) * (1 if sys.platform == "darwin" else 1024)
    assert peak <= 64 * MIB + 32 * KEPT * JOBS, f"the runner's peak resident set: {peak} bytes"
    deadline = time.monotonic() + 5  # killed: gone once the kernel has delivered SIGKILL
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked(mark) == [], "a reader's child outlived its case"


def test_the_runner_s_memory_does_not_grow_with_the_number_of_cases(tmp_path: Path) -> None:
    """17 schema-3 vectors answered with 1 MiB of JSON each (349,000 empty arrays, 27 MiB
    parsed): the runner keeps no reader's parsed output past its case (it kept every one,
    1.35 GB for 52 cases)."""
    (arrays,) = [r for r in HOSTILE_READERS if r.name == "prints-349000-empty-arrays"]
    script = tmp_path / "arrays.sh"
    script.write_text(f"#!/bin/sh\n{arrays.attack}\n")
    script.chmod(0o755)
    argv = [sys.executable, "-c", RUNNER, "conformance", "--no-corpus", "--select", "v3-[a-d]*",
            "--jobs", str(JOBS), "--", str(script)]
    res = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)
    cases = int(res.stdout.splitlines()[-1].split()[0])
    assert res.returncode == 1 and cases >= 17, res.stdout[-2000:]
    peak = int(res.stderr.split()[-1]) * (1 if sys.platform == "darwin" else 1024)
    assert peak <= 64 * MIB + 32 * KEPT * JOBS, f"{cases} cases: a peak of {peak} bytes"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="processes from /proc")
def test_ctrl_c_stops_the_running_readers_and_runs_no_other(tmp_path: Path) -> None:
    """SIGINT while readers that never end run, with more cases queued: the runner stops
    within seconds (exit 130, ``interrupted``) and no reader is left (it waited for every
    queued case to time out in turn)."""
    script = tmp_path / "sleeper.sh"
    script.write_text("#!/bin/sh\nexec sleep 1000\n")
    script.chmod(0o755)
    mark = str(tmp_path)
    runner = subprocess.Popen(
        [sys.executable, "-m", "onert_checkpoint", "conformance", "--no-corpus", "--select",
         "v3-*", "--timeout", "60", "--jobs", str(JOBS), "--", str(script)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "READER_MARK": mark})
    def readers() -> list[int]:
        return [p for p in marked(mark) if p != runner.pid]

    deadline = time.monotonic() + 30
    while len(readers()) < JOBS and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(readers()) == JOBS, "the readers did not start"
    runner.send_signal(signal.SIGINT)
    start = time.monotonic()
    try:
        _, err = runner.communicate(timeout=30)
    finally:
        runner.kill()
    assert time.monotonic() - start < 5 and runner.returncode == 130, err
    assert err.startswith("onert-ckpt: error: interrupted: ") and "Traceback" not in err
    deadline = time.monotonic() + 5
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marked(mark) == []
