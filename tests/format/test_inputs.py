"""What ``load`` accepts as a path.

Only regular files are read: a FIFO, socket, device or directory is refused with an ``OSError``
naming the path, without blocking (a FIFO without a writer used to block ``open`` forever). A
regular file that cannot be memory-mapped (under /sys) is read instead. ``mmap=False`` reads
into private memory: the arrays survive the file being truncated or written in place, which a
mapping does not (SIGBUS, changed arrays: the hazards docs/saving.md describes).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]
ADAM = ROOT / "tests" / "data" / "real-onert" / "fc2-adam-step8.ckpt"


def run_cli(*args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def in_child(code: str, *args: object, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (a hang is a TimeoutExpired, a crash a signal)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


LOAD_AND_REPORT = """
    import sys
    import onert_checkpoint as oc
    try:
        oc.load(sys.argv[1])
    except OSError as exc:
        print(type(exc).__name__, exc.errno, exc.filename)
"""


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.ckpt"
    os.mkfifo(path)
    return path


def test_fifo_is_refused_without_blocking(fifo):
    # In a child: before the fix the open blocks forever (the timeout is the failure).
    res = in_child(LOAD_AND_REPORT, fifo)
    assert res.returncode == 0, res.stderr
    kind, code, name = res.stdout.split()
    assert (kind, name) == ("OSError", str(fifo)) and int(code) > 0
    with pytest.raises(OSError, match="FIFO"):
        oc.load(fifo)


def test_fifo_on_the_command_line(fifo):
    res = run_cli("info", fifo, timeout=30)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "FIFO" in res.stderr and str(fifo) in res.stderr


def test_directory_socket_and_device_are_refused(tmp_path):
    with pytest.raises(IsADirectoryError, match="directory") as info:
        oc.load(tmp_path)
    assert info.value.filename == str(tmp_path)
    sock_path = tmp_path / "s.ckpt"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        with pytest.raises(OSError, match="socket") as info:
            oc.load(sock_path)
        assert info.value.filename == str(sock_path)
    finally:
        sock.close()
    if os.path.exists(os.devnull):
        with pytest.raises(OSError, match="character device"):
            oc.load(os.devnull)


SYS_FILE = "/sys/kernel/mm/transparent_hugepage/enabled"


def test_a_file_that_cannot_be_mapped_is_read():
    """Files under /sys are regular but refuse mmap (ENODEV): read them instead, so the
    answer is the checkpoint reader's (bad_magic), not an mmap error."""
    candidates = [p for p in (SYS_FILE, "/sys/kernel/uevent_seqnum") if os.path.exists(p)]
    if not candidates:
        pytest.skip("no readable file under /sys on this machine")
    with pytest.raises(oc.CheckpointError) as info:
        oc.load(candidates[0])
    assert info.value.code in ("bad_magic", "truncated_header")


def test_copying_load_gives_the_same_checkpoint():
    mapped, copied = oc.load(ADAM), oc.load(ADAM, mmap=False)
    assert copied.content_equal(mapped)
    assert not isinstance(copied.source.obj, type(mapped.source.obj))
    assert all(not t.data.flags.writeable for t in copied.tensors)
    assert oc.load(ADAM, mmap="auto").content_equal(mapped)
    with oc.open(ADAM, mmap=False) as ckpt:
        assert ckpt.content_equal(mapped)


def test_copying_load_is_immune_to_writes_in_place(tmp_path):
    path = tmp_path / "t.ckpt"
    path.write_bytes(ADAM.read_bytes())
    mapped, copied = oc.load(path), oc.load(path, mmap=False)
    before = np.array(mapped.tensors[0].data)
    with open(path, "r+b") as f:  # overwrite the first tensor's bytes in place
        f.seek(mapped.tensors[0].offset)
        f.write(bytes(mapped.tensors[0].nbytes))
    assert not mapped.tensors[0].data.any(), "a mapping shows the write (the documented hazard)"
    assert np.array_equal(copied.tensors[0].data, before)


TRUNCATE = """
    import os, sys
    import numpy as np
    import onert_checkpoint as oc
    path, mode = sys.argv[1], sys.argv[2]
    ckpt = oc.load(path, mmap=(mode == "mmap"))
    last = ckpt.optimizer.slots["v"][max(ckpt.optimizer.slots["v"])]
    os.truncate(path, 0)  # as another process would
    print(int(np.asarray(last.data).sum()), flush=True)
"""


def test_truncation_kills_a_mapping_but_not_a_copy(tmp_path):
    path = tmp_path / "t.ckpt"
    # A file of several pages, so that the last entry lies on a page past the new end.
    small = oc.load(ADAM)
    big = oc.Checkpoint(
        [oc.Tensor(t.index, np.tile(t.raw, 2048)) for t in small.tensors],
        oc.Optimizer("adam", {
            slot: {i: oc.Buffer(i, np.tile(b.raw, 2048)) for i, b in entries.items()}
            for slot, entries in small.optimizer.slots.items()
        }),
        small.state, revision="v1", dialect="onert",
    )
    oc.save(big, path)
    data = path.read_bytes()
    res = in_child(TRUNCATE, path, "copy")
    assert res.returncode == 0, res.stderr
    expect = oc.load(data).optimizer.slots["v"]
    assert int(res.stdout) == int(expect[max(expect)].raw.astype(np.int64).sum())
    path.write_bytes(data)
    res = in_child(TRUNCATE, path, "mmap")
    assert res.returncode == -signal.SIGBUS, (res.returncode, res.stderr)
