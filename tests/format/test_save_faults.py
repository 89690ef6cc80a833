"""Saving under faults: ``save`` never leaves a damaged file where a good one was.

* an OSError injected at every step of a save (the unnamed O_TMPFILE file, or mkstemp's file
  where there is none, fchmod, every write, fsync, the link that names it, close, replace, the
  folder's fsync): afterwards the target is the complete old checkpoint (or,
  past the rename, the complete new one), it loads, and no temporary file is left;
* short writes (the kernel taking a few bytes per call) still give the exact file;
* EFBIG for real: a child process under RLIMIT_FSIZE (SIGXFSZ ignored); ENOSPC for real on a
  tiny tmpfs when this machine lets us mount one;
* a writer process SIGKILLed at random points of large saves: the target is the complete old or
  the complete new checkpoint, both load, and no temporary file is left;
* a reader holding the old file (loaded, so memory-mapped) keeps reading the old data while the
  file is replaced, and concurrent loads see one complete version or the other.
"""

from __future__ import annotations

import errno
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import atomic_file
from onert_checkpoint.format import saving

ROOT = Path(__file__).parents[2]


def make_ckpt(seed: int, n: int = 6, nbytes: int = 64, kind: str = "adam") -> oc.Checkpoint:
    rng = np.random.default_rng(seed)
    tensors = [oc.Tensor(index=i, data=rng.integers(0, 256, nbytes + i, dtype=np.uint8))
               for i in range(n)]
    opt = oc.Optimizer(kind)
    if kind == "adam":
        for slot in ("m", "v"):
            opt.slots[slot] = {i: oc.Buffer(index=i, data=rng.integers(0, 256, nbytes + i,
                                                                        dtype=np.uint8))
                               for i in range(n)}
    return oc.Checkpoint(tensors=tensors, optimizer=opt,
                         state=oc.TrainingState(step=seed, epoch=0), dialect="onert")


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


class FaultyOS:
    """Stands in for the ``os`` module inside onert_checkpoint.atomic_file: records each call to
    the I/O steps (name and arguments) and raises OSError at the ``fail_at``-th one (counting
    from 0); ``max_write`` makes every write take at most that many bytes."""

    STEPS = ("write", "writev", "pwrite", "fsync", "close", "replace", "fchmod", "open", "stat",
             "unlink", "link")

    def __init__(self, fail_at: int | None = None, err: int = errno.EIO,
                 max_write: int | None = None) -> None:
        self.calls: list[str] = []
        self.args: list[tuple] = []
        self.fail_at = fail_at
        self.err = err
        self.max_write = max_write

    def __getattr__(self, name: str):
        real = getattr(os, name)
        if name not in self.STEPS:
            return real

        def step(*args, **kwargs):
            k = len(self.calls)
            self.calls.append(name)
            self.args.append(args)
            if k == self.fail_at:
                raise OSError(self.err, f"injected {os.strerror(self.err)} in os.{name}")
            if self.max_write and name == "write":
                fd, view = args
                return real(fd, memoryview(view)[: self.max_write])
            if self.max_write and name == "writev":
                fd, pieces = args
                head = b"".join(bytes(p) for p in pieces)[: self.max_write]
                return os.write(fd, head)
            if self.max_write and name == "pwrite":
                fd, view, offset = args
                return real(fd, memoryview(view)[: self.max_write], offset)
            return real(*args, **kwargs)

        return step


def _steps_of_a_save(ckpt: oc.Checkpoint, tmp_path: Path, monkeypatch,
                     existing: bool = False) -> list[str]:
    """The I/O steps of a save of ``ckpt`` to a new file (or over an ``existing`` one)."""
    if existing:
        (tmp_path / "probe.ckpt").write_bytes(b"old")
    probe = FaultyOS()
    monkeypatch.setattr(atomic_file, "os", probe)
    oc.save(ckpt, tmp_path / "probe.ckpt")
    monkeypatch.setattr(atomic_file, "os", os)
    (tmp_path / "probe.ckpt").unlink()
    return probe.calls


@pytest.mark.parametrize("err", [errno.EIO, errno.ENOSPC, errno.EDQUOT, errno.EFBIG])
@pytest.mark.parametrize("existing", [True, False], ids=["replace", "create"])
def test_oserror_at_every_step(tmp_path, monkeypatch, err, existing):
    old, new = make_ckpt(1), make_ckpt(2, n=9, nbytes=200)
    steps = _steps_of_a_save(new, tmp_path, monkeypatch, existing)
    assert {"writev", "fsync", "replace"} <= set(steps), steps
    old_bytes, new_bytes = oc.to_bytes(old), oc.to_bytes(new)
    replaced_at = steps.index("replace")
    for k, name in enumerate(steps):
        target = tmp_path / f"ckpt-{k}.ckpt"
        if existing:
            target.write_bytes(old_bytes)
        before = listing(tmp_path)
        if not existing:
            before = sorted([*before, target.name]) if k > replaced_at else before
        monkeypatch.setattr(atomic_file, "os", FaultyOS(fail_at=k, err=err))
        raised = False
        try:
            oc.save(new, target)
        except OSError as exc:
            # Past the rename the new file is in place; only closing the file's descriptor
            # can still raise (the folder's fsync and the cleaning are best effort).
            raised = True
            assert exc.errno == err, (k, name, exc)
            assert exc.filename == str(target), f"the error names {exc.filename!r}"
            assert k <= replaced_at or name == "close", f"step {k} (os.{name}) failed the save"
        finally:
            monkeypatch.setattr(atomic_file, "os", os)
        # A save that swallowed a fault before the rename would report success for a file it
        # did not write.
        assert raised or k > replaced_at, f"a fault in step {k} (os.{name}) was not reported"
        assert listing(tmp_path) == before, f"litter after a fault in step {k} (os.{name})"
        if k > replaced_at:
            assert target.read_bytes() == new_bytes, (k, name, steps)
        elif existing:
            assert target.read_bytes() == old_bytes, f"old file damaged by a fault in os.{name}"
            assert oc.load(target).content_equal(old)
        else:
            assert not target.exists()
        if target.exists():
            target.unlink()


def test_a_failing_chunk_source_leaves_the_old_file(tmp_path, monkeypatch):
    """An error while producing the data (not only while writing it) cleans up too."""
    target = tmp_path / "t.ckpt"
    old_bytes = oc.to_bytes(make_ckpt(1))
    target.write_bytes(old_bytes)

    def chunks(*args, **kwargs):
        yield b"\xad\x01\x01\x00"
        raise KeyboardInterrupt

    monkeypatch.setattr(saving, "_stream", chunks)
    with pytest.raises(KeyboardInterrupt):
        oc.save(make_ckpt(2), target)
    assert target.read_bytes() == old_bytes
    assert listing(tmp_path) == ["t.ckpt"]


@pytest.mark.parametrize("max_write", [1, 7, 4096])
def test_short_writes_give_the_exact_file(tmp_path, monkeypatch, max_write):
    ckpt = make_ckpt(3, n=3, nbytes=100)
    monkeypatch.setattr(atomic_file, "os", FaultyOS(max_write=max_write))
    oc.save(ckpt, tmp_path / "t.ckpt")
    monkeypatch.setattr(atomic_file, "os", os)
    assert (tmp_path / "t.ckpt").read_bytes() == oc.to_bytes(ckpt)


def test_mode_of_the_replaced_file_is_kept(tmp_path):
    target = tmp_path / "t.ckpt"
    target.write_bytes(oc.to_bytes(make_ckpt(1)))
    target.chmod(0o640)
    oc.save(make_ckpt(2), target)
    assert target.stat().st_mode & 0o777 == 0o640


# --- real resource exhaustion in a child process -------------------------------------------

CHILD_SAVE = textwrap.dedent("""
    import resource, signal, sys
    sys.path.insert(0, {root!r})
    from tests.format.test_save_faults import make_ckpt
    import onert_checkpoint as oc
    new = make_ckpt(2, n=16, nbytes=1 << 16)
    {limit}
    try:
        oc.save(new, sys.argv[1])
    except OSError as exc:
        print("errno", exc.errno)
    else:
        print("saved")
""")


def test_efbig_for_real_under_rlimit_fsize(tmp_path):
    target = tmp_path / "t.ckpt"
    old_bytes = oc.to_bytes(make_ckpt(1))
    target.write_bytes(old_bytes)
    limit = ("signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
             "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))")
    script = CHILD_SAVE.format(root=str(ROOT), limit=limit)
    res = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["errno", str(errno.EFBIG)], res.stdout + res.stderr
    assert target.read_bytes() == old_bytes
    assert oc.load(target).content_equal(make_ckpt(1))
    assert listing(tmp_path) == ["t.ckpt"]


@pytest.fixture
def tiny_tmpfs(tmp_path):
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_enospc_for_real_on_a_full_filesystem(tiny_tmpfs):
    target = tiny_tmpfs / "t.ckpt"
    old_bytes = oc.to_bytes(make_ckpt(1))
    target.write_bytes(old_bytes)
    script = CHILD_SAVE.format(root=str(ROOT), limit="")
    res = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True,
                         text=True, timeout=120)
    assert res.stdout.split() == ["errno", str(errno.ENOSPC)], res.stdout + res.stderr
    assert target.read_bytes() == old_bytes
    assert listing(tiny_tmpfs) == ["t.ckpt"]


# --- SIGKILL during large saves -------------------------------------------------------------

CHILD_LOOP = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from tests.format.test_save_faults import make_ckpt
    import onert_checkpoint as oc
    a, b = make_ckpt(10, n=24, nbytes={nbytes}), make_ckpt(11, n=24, nbytes={nbytes})
    oc.save(a, sys.argv[1])
    print("ready", flush=True)
    while True:
        oc.save(b, sys.argv[1])
        oc.save(a, sys.argv[1])
""")

KILL_NBYTES = 1 << 17  # 24 entries x 3 blocks x 128 KiB: a 9 MiB file


def test_sigkill_during_saves_leaves_old_or_new(tmp_path):
    target = tmp_path / "t.ckpt"
    versions = {oc.to_bytes(make_ckpt(s, n=24, nbytes=KILL_NBYTES)): s for s in (10, 11)}
    rng = random.Random(5)  # fixed points, the same in every run
    script = CHILD_LOOP.format(root=str(ROOT), nbytes=KILL_NBYTES)
    seen = set()
    for _ in range(6):
        child = subprocess.Popen([sys.executable, "-c", script, str(target)],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.4))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
        data = target.read_bytes()
        assert data in versions, f"damaged target after SIGKILL ({len(data)} bytes)"
        seen.add(versions[data])
        assert oc.load(target).content_equal(make_ckpt(versions[data], n=24, nbytes=KILL_NBYTES))
        # The writer's temporary is an unnamed file (O_TMPFILE) until the instant before the
        # rename; a kill in that instant leaves its name, which the next save removes.
        left = [n for n in listing(tmp_path) if n != "t.ckpt"]
        assert all(TEMP_NAME.fullmatch(n) for n in left) and len(left) <= 1, left
        oc.save(oc.load(data), target)
        assert listing(tmp_path) == ["t.ckpt"] and target.read_bytes() == data
    assert seen, "no save finished"


TEMP_NAME = re.compile(r"\.t\.ckpt\.[0-9a-f]{12}\.tmp")

CHILD_IN_THE_WINDOW = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from tests.format.test_save_faults import make_ckpt
    import onert_checkpoint as oc
    from onert_checkpoint import atomic_file

    class InTheWindow:
        # os for saving: at the rename (the temporary is named by now) die or wait
        def __getattr__(self, name):
            if name != "replace":
                return getattr(os, name)
            def replace(*args, **kwargs):
                if sys.argv[2] == "die":
                    os.kill(os.getpid(), signal.SIGKILL)
                print("named", flush=True)
                sys.stdin.readline()
                return os.replace(*args, **kwargs)
            return replace

    if sys.argv[3] == "named":
        atomic_file._open_unnamed = lambda dfd, mode: None
    atomic_file.os = InTheWindow()
    oc.save(make_ckpt(3), sys.argv[1])
    print("saved", flush=True)
""")


@pytest.mark.parametrize("temporary", ["unnamed", "named"])
def test_a_writer_killed_in_the_window_leaves_one_name_the_next_save_removes(tmp_path,
                                                                              temporary):
    """Deterministic: the writer dies between naming its temporary and the rename. What remains
    is exactly one ``.t.ckpt.<12 hex>.tmp`` beside the intact old file; the next save to the same
    target removes it."""
    target = tmp_path / "t.ckpt"
    old = oc.to_bytes(make_ckpt(1))
    target.write_bytes(old)
    script = CHILD_IN_THE_WINDOW.format(root=str(ROOT))
    res = subprocess.run([sys.executable, "-c", script, str(target), "die", temporary],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == -signal.SIGKILL, res.stderr
    left = [n for n in listing(tmp_path) if n != "t.ckpt"]
    assert len(left) == 1 and TEMP_NAME.fullmatch(left[0]), listing(tmp_path)
    assert target.read_bytes() == old
    (tmp_path / "other.ckpt.tmp").write_bytes(b"not ours")  # not of our naming: kept
    oc.save(make_ckpt(2), target)
    assert listing(tmp_path) == ["other.ckpt.tmp", "t.ckpt"]
    assert target.read_bytes() == oc.to_bytes(make_ckpt(2))


@pytest.mark.parametrize("temporary", ["unnamed", "named"])
def test_a_live_writers_temporary_is_not_removed(tmp_path, temporary):
    """A save that runs while another process is between naming and renaming leaves that
    process's temporary alone (it holds a lock on it), and the other save then completes."""
    target = tmp_path / "t.ckpt"
    target.write_bytes(oc.to_bytes(make_ckpt(1)))
    script = CHILD_IN_THE_WINDOW.format(root=str(ROOT))
    child = subprocess.Popen([sys.executable, "-c", script, str(target), "wait", temporary],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "named"
        time.sleep(0.05)  # the other writer's temporary is older than this save
        oc.save(make_ckpt(2), target)
        assert len(listing(tmp_path)) == 2, listing(tmp_path)
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "saved"
    finally:
        child.stdin.close()
        assert child.wait(timeout=60) == 0
        child.stdout.close()
    assert listing(tmp_path) == ["t.ckpt"]
    assert target.read_bytes() == oc.to_bytes(make_ckpt(3))


@pytest.mark.parametrize("existing", [True, False], ids=["replace", "create"])
def test_the_data_file_is_synced_before_the_rename(tmp_path, monkeypatch, existing):
    """The folder's fsync after the rename does not make the data durable: the file's own
    descriptor is fsynced after its last write and before the rename."""
    target = tmp_path / "t.ckpt"
    if existing:
        target.write_bytes(b"old")
    probe = FaultyOS()
    monkeypatch.setattr(atomic_file, "os", probe)
    oc.save(make_ckpt(2), target)
    monkeypatch.setattr(atomic_file, "os", os)
    calls = list(zip(probe.calls, probe.args))
    writes = [k for k, (name, _) in enumerate(calls) if name in ("write", "writev", "pwrite")]
    fd = calls[writes[0]][1][0]
    assert all(calls[k][1][0] == fd for k in writes)
    renamed = probe.calls.index("replace")
    synced = [k for k, (name, args) in enumerate(calls) if name == "fsync" and args[0] == fd]
    assert any(writes[-1] < k < renamed for k in synced), calls


# --- readers during a replace ---------------------------------------------------------------

def test_reader_of_the_old_file_keeps_old_data(tmp_path):
    target = tmp_path / "t.ckpt"
    old, new = make_ckpt(1, nbytes=4096), make_ckpt(2, nbytes=4096)
    oc.save(old, target)
    held = oc.load(target)  # memory-mapped
    with open(target, "rb") as f:
        expect = oc.describe(held)
        oc.save(new, target)
        assert oc.describe(held) == expect
        assert held.content_equal(old)
        assert f.read() == oc.to_bytes(old)
    assert oc.load(target).content_equal(new)


def test_concurrent_loads_see_one_complete_version(tmp_path):
    target = tmp_path / "t.ckpt"
    a, b = make_ckpt(1, nbytes=20_000), make_ckpt(2, nbytes=20_000)
    oc.save(a, target)
    stop = threading.Event()
    bad: list[str] = []
    loads = [0]

    def reader():
        while not stop.is_set():
            try:
                got = oc.load(target)
            except Exception as exc:  # any error at all is a failure here
                bad.append(repr(exc))
                return
            if not (got.content_equal(a) or got.content_equal(b)):
                bad.append("a mixed or partial checkpoint")
                return
            loads[0] += 1

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for k in range(40):
            oc.save(b if k % 2 == 0 else a, target)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not bad, bad[:3]
    assert loads[0] > 0


@pytest.mark.parametrize("err", [errno.EIO, errno.ENOSPC])
def test_named_temporary_where_there_is_no_unnamed_file(tmp_path, monkeypatch, err):
    """Without O_TMPFILE (other systems, some file systems) the temporary is a hidden named
    file: the same guarantees at every step, except that a killed writer may leave it."""
    monkeypatch.setattr(atomic_file, "_open_unnamed", lambda dfd, mode: None)
    old, new = make_ckpt(1), make_ckpt(2, n=9, nbytes=200)
    target = tmp_path / "t.ckpt"
    oc.save(old, target)
    steps = _steps_of_a_save(new, tmp_path, monkeypatch, existing=True)
    assert "link" not in steps and "replace" in steps
    for k in range(steps.index("replace") + 1):
        oc.save(old, target)
        monkeypatch.setattr(atomic_file, "os", FaultyOS(fail_at=k, err=err))
        with pytest.raises(OSError):
            oc.save(new, target)
        monkeypatch.setattr(atomic_file, "os", os)
        assert listing(tmp_path) == ["t.ckpt"]
        assert target.read_bytes() == oc.to_bytes(old)
    oc.save(new, target)
    assert listing(tmp_path) == ["t.ckpt"] and target.read_bytes() == oc.to_bytes(new)
