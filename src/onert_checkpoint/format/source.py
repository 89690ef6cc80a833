"""Turning what the caller passes (a path, bytes, any buffer) into one read-only byte buffer.

Paths are memory-mapped by default (the hazards: docs/saving.md), or read into private memory
(``copy=True``, or a file that cannot be mapped). Only regular files are read, checked before a
byte is (``stat``, then ``fstat`` of a descriptor opened with O_NONBLOCK).
"""

from __future__ import annotations

import errno
import io
import mmap
import os
import weakref

from ..file_kinds import not_regular

__all__ = ["COPY_BELOW", "BufferReader", "PrivateBytes", "Source", "open_source"]

Source = str | os.PathLike | bytes | bytearray | memoryview | mmap.mmap | object

#: ``copy="auto"`` reads files smaller than this into memory and maps larger ones.
COPY_BELOW = 64 << 20

#: What a file that reports size 0 (files under /proc) is read up to.
_PSEUDO_FILE_LIMIT = 1 << 20


def _open_regular(path: str) -> int:
    """A read-only descriptor of the regular file ``path``; never blocks."""
    if (bad := not_regular(os.stat(path).st_mode, path, "read")) is not None:
        raise bad
    # O_NONBLOCK: if the path was replaced by a FIFO since the stat, open returns at once.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if (bad := not_regular(os.fstat(fd).st_mode, path, "read")) is not None:
            raise bad
    except BaseException:
        os.close(fd)
        raise
    return fd


class PrivateBytes(bytearray):
    """A file's bytes read into private memory: nobody else holds them, so they cannot change
    after they were checked (a save need not check them again; a mapping may change)."""


def _read_all(fd: int, size: int) -> memoryview:
    """The file's bytes (at most ``size``; for a file that reports size 0, up to 1 MiB)."""
    limit = size if size else _PSEUDO_FILE_LIMIT
    buf = PrivateBytes(limit)
    view = memoryview(buf)
    got = 0
    while got < limit:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            break
        got += n
    view.release()
    del buf[got:]
    return memoryview(buf).toreadonly()


#: A mapped file -> (its path, its fingerprint when mapped or last checked): a save checks
#: mapped bytes again only when the fingerprint says they may have changed.
_MAPPED: weakref.WeakKeyDictionary[mmap.mmap, tuple[str, tuple[int, ...]]]
_MAPPED = weakref.WeakKeyDictionary()


def _fingerprint(st: os.stat_result) -> tuple[int, ...]:
    # ctime: any write or metadata change moves it, and no user can set it back (utime cannot)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def mapped_file_unchanged(mapped: object) -> bool:
    """True when ``mapped`` is a mapping by :func:`open_source` whose file has not been written
    since it was mapped (or since :func:`note_checked`)."""
    now = file_fingerprint(mapped)
    return now is not None and now == _MAPPED[mapped][1]  # type: ignore[index]


def file_fingerprint(mapped: object) -> tuple[int, ...] | None:
    """The current fingerprint of the file behind ``mapped`` (taken before a check)."""
    entry = _MAPPED.get(mapped) if isinstance(mapped, mmap.mmap) else None
    if entry is None:
        return None
    try:
        return _fingerprint(os.stat(entry[0]))
    except OSError:
        return None


def note_checked(mapped: object, fingerprint: tuple[int, ...] | None) -> None:
    """The bytes of ``mapped`` passed their checks while its file had ``fingerprint``."""
    if not isinstance(mapped, mmap.mmap) or fingerprint is None:
        return
    entry = _MAPPED.get(mapped)
    if entry is not None:
        _MAPPED[mapped] = (entry[0], fingerprint)


def open_source(source: Source, *, copy: bool | str = False) -> memoryview:
    """A read-only, byte-addressed view of ``source``: a path mapped, or read into memory
    (``copy=True``; ``"auto"``: files under ``COPY_BELOW`` bytes); a buffer as it is."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fsdecode(source)
        fd = _open_regular(path)
        try:
            size = os.fstat(fd).st_size
            if copy == "auto":
                copy = size < COPY_BELOW
            if copy or size == 0:
                return _read_all(fd, size)
            try:
                mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            except OSError as exc:
                # ENODEV (/sys), EINVAL, EACCES: file systems that do not map; read instead.
                if exc.errno not in (errno.ENODEV, errno.EINVAL, errno.EACCES, errno.ENOTSUP):
                    raise
                return _read_all(fd, size)
            _MAPPED[mapped] = (os.path.abspath(path), _fingerprint(os.fstat(fd)))
        finally:
            os.close(fd)
        return memoryview(mapped)
    view = memoryview(source)  # type: ignore[arg-type]
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return view.toreadonly()


class BufferReader(io.RawIOBase):
    """A seekable read-only stream over a buffer, without copying it (for generated parsers)."""

    def __init__(self, view: memoryview) -> None:
        super().__init__()
        self._view = view
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def close(self) -> None:
        # generated parsers refer to themselves (``_root``): the mapping goes with the checkpoint,
        # not at the next cyclic collection
        self._view = memoryview(b"")
        super().close()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        chunk = self._view[self._pos : self._pos + len(buffer)]
        n = len(chunk)
        memoryview(buffer).cast("B")[:n] = chunk
        self._pos += n
        return n
