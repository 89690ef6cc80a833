"""Atomic file output: the one way this package writes a file.

:func:`write_atomic` writes a temporary in the target's folder, fsyncs it, renames it over the
target and fsyncs the folder: the target is always the complete old file or the complete new
one. Its contract, what a killed writer leaves and what the machinery costs: docs/saving.md.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from .file_kinds import not_regular

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str],
                 data: bytes | memoryview | Iterable[bytes | memoryview], *,
                 progress: Callable[[int], object] | None = None) -> None:
    """Replace ``path`` by ``data`` atomically (docs/saving.md); ``progress`` is called with
    each chunk's byte count. An exception raised by ``data`` passes through unchanged, the
    target untouched."""
    user = os.fsdecode(os.fspath(path))
    if not user:
        raise ValueError("the output path is empty")
    chunks = iter([data] if isinstance(data, (bytes, bytearray, memoryview)) else data)
    try:
        _replace(*_resolve(user), chunks, progress)
    except OSError as exc:
        if exc.filename == user and exc.filename2 is None:
            raise
        named = OSError(exc.errno, exc.strerror or str(exc), user)  # same subclass, by errno
        raise named from exc
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # a writer's generator stops its helper thread


def _resolve(user: str) -> tuple[str, str, os.stat_result | None]:
    """(folder, name, status or None) of the regular file ``user`` names, links followed one
    by one as the kernel's ``protected_symlinks`` checks them (``realpath`` would not)."""
    if user.endswith(os.sep) or (os.altsep and user.endswith(os.altsep)):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file: refusing to replace it", user)
    path = user
    for _ in range(40):  # the kernel's limit of links in one lookup
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is None or not stat.S_ISLNK(st.st_mode):
            bad = None if st is None else not_regular(st.st_mode, user, "replace")
            if bad is not None:
                raise bad
            folder, base = os.path.split(path)
            return folder or os.curdir, base, st
        _may_follow(os.path.dirname(path) or os.curdir, st, user)
        # relative to the link's folder, as the kernel reads it (never normalised: "a/../b"
        # is the kernel's to walk when a is itself a link)
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise OSError(errno.ELOOP, "too many levels of symbolic links", user)


def _may_follow(folder: str, link: os.stat_result, user: str) -> None:
    """Refuse a link in a sticky world-writable folder owned by neither this user nor the
    folder's owner (fs.protected_symlinks: another user's link must not make root replace
    /etc/passwd)."""
    where = os.stat(folder)
    sticky_shared = where.st_mode & stat.S_ISVTX and where.st_mode & stat.S_IWOTH
    if sticky_shared and link.st_uid not in (os.geteuid(), where.st_uid):
        raise PermissionError(errno.EACCES, "a symbolic link of another user in a sticky "
                              "world-writable folder: refusing to follow it", user)


def _replace(folder: str, base: str, old: os.stat_result | None, chunks: Any,
             progress: Callable[[int], object] | None) -> None:
    started = time.time_ns()
    dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        # created no more open than the mode it ends with (docs/saving.md, "Owner, mode, links")
        mode = 0o666 if old is None else stat.S_IMODE(old.st_mode) & 0o777
        fd = _open_unnamed(dfd, mode)
        tmp = None
        if fd is None:
            fd, tmp = _open_named(dfd, base, mode)
        replaced: int | None = None
        try:
            if old is not None:
                _keep_owner_and_mode(fd, old)
                replaced = _open_replaced(dfd, base)
            for offset, raw in _write_chunks(fd, chunks, progress, replaced):  # then patches
                view = memoryview(raw)
                while view:
                    n = os.pwrite(fd, view, offset)
                    view, offset = view[n:], offset + n
            os.fsync(fd)  # the data are on disk before a name points at them
            if tmp is None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # held until closed: a live writer's temporary
                tmp = _name_unnamed(fd, dfd, base)
            os.replace(tmp, base, src_dir_fd=dfd, dst_dir_fd=dfd)
            tmp = None
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=dfd)
            if replaced is not None:
                os.close(replaced)
            os.close(fd)
        with contextlib.suppress(OSError):  # the new file is in place: best effort from here
            os.fsync(dfd)
        _clean_stale(dfd, base, started)
    finally:
        os.close(dfd)


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """The replaced file's owner where this process may, and its mode without the set-ID bits
    (a file made by root must never become someone else's setuid program)."""
    uid, gid = old.st_uid, old.st_gid
    try:
        if os.geteuid() == 0:
            os.fchown(fd, uid, gid)  # before fchmod: a chown clears the set-ID bits anyway
        elif os.geteuid() == uid and gid != os.getegid():
            os.fchown(fd, -1, gid)
    except OSError as exc:
        # not a member of that group; an ID unmapped in this user namespace; a file system
        # that keeps no owners: the file stays the process's own, the save goes on
        if exc.errno not in (errno.EPERM, errno.EACCES, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    os.fchmod(fd, stat.S_IMODE(old.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))


#: Chunks go to the kernel in batches of up to 8 MiB and IOV_MAX pieces with one writev,
#: uncopied: 100,000 tiny entries cost a few hundred system calls, not one per chunk.
_BATCH_BYTES = 8 << 20
_BATCH_PIECES = min(1024, os.sysconf("SC_IOV_MAX") if hasattr(os, "sysconf") else 1024)


def _writev_all(fd: int, pieces: list[memoryview]) -> None:
    """Write ``pieces`` in order, whatever the kernel takes per call."""
    k = 0  # the first piece not yet written in full
    while k < len(pieces):
        written = os.writev(fd, pieces[k:] if k else pieces)
        while k < len(pieces) and written >= len(pieces[k]):
            written -= len(pieces[k])
            k += 1
        if written:
            pieces[k] = pieces[k][written:]


def _write_chunks(fd: int, chunks: Any, progress: Callable[[int], object] | None,
                  replaced: int | None) -> list[tuple[int, bytes]]:
    """Write ``chunks`` in batches (then :func:`_release`, :func:`_writeback_starter`); returns
    the generator's patches."""
    batch: list[memoryview] = []
    size = written = released = 0
    writeback: Any = False  # False: not looked up yet
    while True:
        try:
            chunk = next(chunks)
        except StopIteration as stop:
            patches = stop.value or []
            break
        view = memoryview(chunk).cast("B")
        if not view:
            continue
        batch.append(view)
        size += len(view)
        if size >= _BATCH_BYTES or len(batch) >= _BATCH_PIECES:
            _writev_all(fd, batch)
            if writeback is False:  # a small file has nothing to overlap its writeback with
                writeback = _writeback_starter() if written + size > _BATCH_BYTES else False
            if callable(writeback) and writeback(fd, written, size, _SYNC_FILE_RANGE_WRITE):
                writeback = None  # refused (ENOSYS, a file system without it): stop asking
            written += size
            batch, size = [], 0
            if replaced is not None:
                replaced, released = _release(replaced, released, written)
        if progress is not None:
            progress(len(view))
    if batch:
        _writev_all(fd, batch)
        if replaced is not None:
            _release(replaced, released, written + size)
    return patches


#: sync_file_range(2)'s flag that starts the writeback of a range without waiting for it.
_SYNC_FILE_RANGE_WRITE = 2


@functools.cache
def _writeback_starter() -> Callable[..., int] | None:
    """Linux's ``sync_file_range`` (``os`` has none), or None: the disk writes each batch while
    the next ones are copied, so the fsync has little left (measured in docs/saving.md)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        func = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (ImportError, OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]  # returns int
    return func


def _open_replaced(dfd: int, base: str) -> int | None:
    """The file about to be replaced, open for :func:`_release`; None where it cannot be read
    (permissions, a lease) or is no longer a regular file; other errors are raised."""
    if not hasattr(os, "posix_fadvise"):
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        old = os.open(base, flags, dir_fd=dfd)
    except (PermissionError, FileNotFoundError, BlockingIOError, IsADirectoryError):
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.ENODEV, errno.ETXTBSY, errno.EOPNOTSUPP):
            return None
        raise
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.fstat(old).st_mode):
            return old
    os.close(old)  # replaced by something else since it was checked: the rename will say so
    return None


def _release(replaced: int, start: int, end: int) -> tuple[int | None, int]:
    """Drop the replaced file's clean, unmapped cached pages in ``start..end``, else a second
    file's worth of memory (docs/saving.md); returns (the descriptor, or None to stop, the next
    start). Advice only: an error stops the advice, never the save."""
    if end <= start:  # a length of 0 would mean "to the end of the file"
        return replaced, start
    try:
        os.posix_fadvise(replaced, start, end - start, os.POSIX_FADV_DONTNEED)
    except OSError:
        return None, start
    return replaced, end - end % _PAGE  # whole pages only: the one holding ``end`` goes next


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


#: Keys the tag ending a temporary's name: the cleaner removes only names that carry it.
_TAG_KEY = b"onert-checkpoint temporary"


def _name_tag(base: str, nonce: str) -> str:
    return hashlib.blake2b(f"{nonce}/{base}".encode(errors="surrogateescape"), digest_size=2,
                           key=_TAG_KEY).hexdigest()


def _temp_name(base: str) -> str:
    """``.BASE.<12 hex>.tmp``: 8 random hex digits and a 4-digit tag of them and ``base``."""
    nonce = secrets.token_hex(4)
    return f".{base}.{nonce}{_name_tag(base, nonce)}.tmp"


def _is_our_temporary(name: str, base: str) -> bool:
    """True when ``name`` is a temporary name this library made for ``base``."""
    found = re.fullmatch(re.escape(f".{base}.") + r"([0-9a-f]{8})([0-9a-f]{4})\.tmp", name)
    return found is not None and _name_tag(base, found[1]) == found[2]


def _open_unnamed(dfd: int, mode: int) -> int | None:
    """An unnamed writable file in the folder open as ``dfd`` (Linux O_TMPFILE), or None."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(".", flag | os.O_WRONLY | os.O_CLOEXEC, mode, dir_fd=dfd)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):  # no O_TMPFILE here
            return None
        raise


def _open_named(dfd: int, base: str, mode: int) -> tuple[int, str]:
    """A new hidden file beside the target, locked: (descriptor, its name in the folder)."""
    for _ in range(100):
        name = _temp_name(base)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode,
                         dir_fd=dfd)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # another save's cleaner may have removed it before the lock was taken
            if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return fd, name
        except FileNotFoundError:
            pass
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dfd)
            os.close(fd)
            raise
        os.close(fd)
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def _name_unnamed(fd: int, dfd: int, base: str) -> str:
    """Give the unnamed file a hidden name beside the target, for the atomic rename."""
    # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N links the file itself; os.link uses linkat
    # (not link, which would link the /proc symlink) only when given a directory descriptor.
    for _ in range(100):
        name = _temp_name(base)
        with contextlib.suppress(FileExistsError):
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)
            return name
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def _clean_stale(dfd: int, base: str, started: int) -> None:
    """Remove dead writers' temporaries of ``base`` (best effort: the save is done): a tagged
    name, this user's regular file with one link, older than this save, its lock free."""
    try:
        with os.scandir(dfd) as entries:
            names = [e.name for e in entries if _is_our_temporary(e.name, base)]
    except OSError:
        return
    for name in names:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=dfd)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_nlink == 1
                    and st.st_mtime_ns < started):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while its writer lives
                if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == st.st_ino:
                    os.unlink(name, dir_fd=dfd)
        except OSError:
            pass
        finally:
            os.close(fd)
