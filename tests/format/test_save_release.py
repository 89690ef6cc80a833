"""Saving over an existing file releases the old file's cached pages as the new file overtakes
them (the benchmark's save rows; docs/saving.md "The old file's cached pages").

The old file must stay intact until the rename, so without this the new file's pages come on
top of the old file's: a second file's worth of memory. These tests check that the advice is
given (the old pages leave the page cache), that it never fails a save (a replaced file that
may not be read, advice refused), and that it never changes data (a save whose source is the
very file it replaces, mapped, in the same and in a shifted layout).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import atomic_file

PAGE = os.sysconf("SC_PAGE_SIZE")
_LRU_BATCH = 31  # pages a CPU's LRU batch holds (mm: folio_batch), which advice cannot reach

pytestmark = pytest.mark.skipif(
    not hasattr(os, "posix_fadvise") or not hasattr(os, "RWF_NOWAIT"),
    reason="needs posix_fadvise and preadv(RWF_NOWAIT) (Linux)",
)


def make_ckpt(seed: int, n: int, nbytes: int) -> oc.Checkpoint:
    rng = np.random.default_rng(seed)

    def arr() -> np.ndarray:
        return rng.integers(0, 256, nbytes, dtype=np.uint8)

    opt = oc.Optimizer("adam")
    opt.slots["m"] = {i: oc.Buffer(index=i, data=arr()) for i in range(n)}
    opt.slots["v"] = {i: oc.Buffer(index=i, data=arr()) for i in range(n)}
    tensors = [oc.Tensor(index=i, data=arr()) for i in range(n)]
    return oc.Checkpoint(tensors=tensors, optimizer=opt,
                         state=oc.TrainingState(step=seed, epoch=0), dialect="onert")


def cached_pages(fd: int, size: int) -> list[int]:
    """The page numbers of ``fd``'s first ``size`` bytes that are in the page cache (a read
    with RWF_NOWAIT fails instead of reading from the disk; readahead is off for the probe)."""
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    buf = bytearray(1)
    found = []
    for page in reversed(range(size // PAGE)):
        try:
            os.preadv(fd, [buf], page * PAGE, os.RWF_NOWAIT)
        except BlockingIOError:
            continue
        found.append(page)
    return sorted(found)


def drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@pytest.fixture
def droppable(tmp_path: Path) -> Path:
    """``tmp_path``, if its file system drops clean pages on advice (tmpfs cannot: its pages are
    the only copy) and answers RWF_NOWAIT reads."""
    probe = tmp_path / "probe"
    probe.write_bytes(bytes(4 * PAGE))
    drop_cache(probe)
    fd = os.open(probe, os.O_RDONLY)
    try:
        left = cached_pages(fd, 4 * PAGE)
    except OSError as exc:
        pytest.skip(f"no RWF_NOWAIT reads here: {exc}")
    finally:
        os.close(fd)
        probe.unlink()
    if left:
        pytest.skip("this file system keeps clean pages cached on POSIX_FADV_DONTNEED")
    return tmp_path


def _old_file_held(target: Path, old: oc.Checkpoint) -> tuple[int, int]:
    """Write ``old`` to ``target``, read it into the page cache, and keep a descriptor on it so
    that its pages can still be probed after it has been replaced."""
    oc.save(old, target)
    target.read_bytes()
    fd = os.open(target, os.O_RDONLY)
    return fd, target.stat().st_size


def test_the_replaced_files_pages_leave_the_cache(droppable):
    # Two tries: on a loaded machine the kernel once kept every page of one try (the pages
    # not yet on an LRU list, which advice cannot reach); the control below keeps them in all.
    for attempt in range(2):
        target = droppable / f"t{attempt}.ckpt"
        fd, size = _old_file_held(target, make_ckpt(1, n=40, nbytes=3000))
        try:
            assert len(cached_pages(fd, size)) == size // PAGE, "the probe does not see the cache"
            new = make_ckpt(2, n=40, nbytes=3000)  # the same size: every old page is overtaken
            oc.save(new, target)
            assert target.read_bytes() == oc.to_bytes(new)
            kept = cached_pages(fd, size)
        finally:
            os.close(fd)
        # The kernel drops pages only from the LRU lists: pages still in another CPU's LRU batch
        # (the test moved between cores while it read them) are skipped, at most one batch
        # (15 or 31 pages by kernel version; seen here: the 16 last pages once, in a loaded
        # two-worker run).
        if len(kept) <= _LRU_BATCH < size // PAGE:
            return
    raise AssertionError(f"the old file's pages were kept, twice: {kept}")


def test_without_the_release_the_old_pages_stay(droppable, monkeypatch):
    """The control: the probe of the test above does see pages that nobody releases."""
    monkeypatch.setattr(atomic_file, "_open_replaced", lambda dfd, base: None)
    target = droppable / "t.ckpt"
    fd, size = _old_file_held(target, make_ckpt(1, n=40, nbytes=3000))
    try:
        oc.save(make_ckpt(2, n=40, nbytes=3000), target)
        assert len(cached_pages(fd, size)) == size // PAGE
    finally:
        os.close(fd)


def test_pages_are_released_batch_by_batch(tmp_path, monkeypatch):
    """Released behind the write position, one range per batch, in order and without gaps (a
    save whose source is the replaced file has read each part before it is dropped)."""
    calls: list[tuple[int, int]] = []
    real = os.posix_fadvise

    def record(fd, offset, length, advice):
        if advice == os.POSIX_FADV_DONTNEED:
            calls.append((offset, length))
        return real(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", record)
    target = tmp_path / "t.ckpt"
    oc.save(make_ckpt(1, n=1500, nbytes=40), target, revision="v1")
    calls.clear()
    # 4,506 pieces (header, 3 tables, 4,500 ranges, footer): 5 batches of up to 1,024
    oc.save(make_ckpt(2, n=1500, nbytes=40), target, revision="v1")
    assert len(calls) == 5, calls
    ends = [o + n for o, n in calls]
    assert calls[0][0] == 0 and ends[-1] == target.stat().st_size
    for (offset, _), end in zip(calls[1:], ends):
        assert offset == end - end % PAGE  # the next range starts at the page it left


def test_a_replaced_file_that_cannot_be_read_is_still_replaced(tmp_path, monkeypatch):
    """No read permission (as root the real chmod would not stop the open): the save goes on
    without the release, and the file keeps its mode."""
    target = tmp_path / "t.ckpt"
    oc.save(make_ckpt(1, n=4, nbytes=500), target)
    target.chmod(0o200)
    real_open = os.open
    refused = []

    class NoRead:
        def __getattr__(self, name):
            return getattr(os, name)

        @staticmethod
        def open(path, flags, mode=0o777, *, dir_fd=None):
            if path == target.name and not flags & (os.O_WRONLY | os.O_RDWR):
                refused.append(path)
                raise PermissionError(errno.EACCES, "Permission denied", path)
            return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(atomic_file, "os", NoRead())
    new = make_ckpt(2, n=4, nbytes=500)
    oc.save(new, target)
    monkeypatch.setattr(atomic_file, "os", os)
    assert refused == [target.name]
    assert target.stat().st_mode & 0o777 == 0o200
    target.chmod(0o600)
    assert target.read_bytes() == oc.to_bytes(new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.ckpt"]


def test_refused_advice_never_fails_the_save(tmp_path, monkeypatch):
    """A file system that refuses the advice: the save completes, asking once."""
    asked = []

    def refuse(fd, offset, length, advice):
        asked.append(advice)
        raise OSError(errno.EINVAL, "Invalid argument")

    target = tmp_path / "t.ckpt"
    oc.save(make_ckpt(1, n=1500, nbytes=40), target)
    monkeypatch.setattr(os, "posix_fadvise", refuse)
    new = make_ckpt(2, n=1500, nbytes=40)
    oc.save(new, target)
    assert asked == [os.POSIX_FADV_DONTNEED]
    assert target.read_bytes() == oc.to_bytes(new)


@pytest.mark.parametrize("revision", ["v1", "v2"])
def test_a_save_whose_source_is_the_file_it_replaces(tmp_path, revision):
    """``save(load(p), p)``: the data come from the mapping of the file being replaced, whose
    pages are released while it is read (same layout: v1; shifted by schema 2's header and
    padding: v2). Uncached before the save, so each part is read from the disk."""
    target = tmp_path / "t.ckpt"
    oc.save(make_ckpt(3, n=2000, nbytes=1000), target)  # 6 MB, 6 batches
    loaded = oc.load(target)
    expect = oc.to_bytes(oc.load(target.read_bytes()), revision=revision)
    drop_cache(target)
    oc.save(loaded, target, revision=revision)
    assert target.read_bytes() == expect
    assert oc.load(target).content_equal(loaded)


# --- writeback started batch by batch (sync_file_range) --------------------------------------

def _big_ckpt(seed: int) -> oc.Checkpoint:
    """20 MiB: three 8 MiB batches."""
    rng = np.random.default_rng(seed)
    tensors = [oc.Tensor(index=i, data=rng.integers(0, 256, 1 << 20, dtype=np.uint8))
               for i in range(20)]
    return oc.Checkpoint(tensors=tensors, dialect="onert")


def test_writeback_is_started_behind_each_batch(tmp_path, monkeypatch):
    """After the first batch, each batch's writeback is started as soon as it is written (the
    ranges follow each other from 0); the last batch and the fsync are left to fsync."""
    started: list[tuple[int, int, int]] = []

    def record(fd, offset, length, flags):
        started.append((offset, length, flags))
        return 0

    monkeypatch.setattr(atomic_file, "_writeback_starter", lambda: record)
    ckpt = _big_ckpt(1)
    oc.save(ckpt, tmp_path / "t.ckpt", revision="v1")
    size = (tmp_path / "t.ckpt").stat().st_size
    assert len(started) == 2, started
    assert started[0][0] == 0 and started[1][0] == sum(started[0][:2])
    assert all(flags == 2 for _, _, flags in started)  # SYNC_FILE_RANGE_WRITE: no waiting
    assert sum(started[1][:2]) < size
    assert (tmp_path / "t.ckpt").read_bytes() == oc.to_bytes(ckpt, revision="v1")


def test_a_small_file_never_looks_writeback_up(tmp_path, monkeypatch):
    """Under 8 MiB (here 5 batches of 1,024 small pieces): nothing to overlap with, and no
    ctypes import for the small files the command line writes."""
    looked = []
    monkeypatch.setattr(atomic_file, "_writeback_starter", lambda: looked.append(1))
    oc.save(make_ckpt(1, n=1500, nbytes=40), tmp_path / "t.ckpt", revision="v1")
    assert looked == []


def test_refused_writeback_never_fails_the_save(tmp_path, monkeypatch):
    asked = []

    def refuse(fd, offset, length, flags):
        asked.append(offset)
        return -1

    monkeypatch.setattr(atomic_file, "_writeback_starter", lambda: refuse)
    ckpt = _big_ckpt(2)
    oc.save(ckpt, tmp_path / "t.ckpt", revision="v1")
    assert asked == [0]
    assert (tmp_path / "t.ckpt").read_bytes() == oc.to_bytes(ckpt, revision="v1")


@pytest.mark.skipif(not os.uname().sysname == "Linux", reason="sync_file_range is Linux's")
def test_the_c_librarys_sync_file_range_is_found_and_works(tmp_path):
    func = atomic_file._writeback_starter()
    assert func is not None
    path = tmp_path / "f"
    path.write_bytes(bytes(1 << 16))
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"x" * 4096, 0)
        assert func(fd, 0, 1 << 16, 2) == 0
        assert func(-1, 0, 1 << 16, 2) == -1  # a bad descriptor: refused, not a crash
    finally:
        os.close(fd)
