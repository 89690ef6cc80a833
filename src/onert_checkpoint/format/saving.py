"""Saving: choosing the revision's writer, and replacing the target file atomically.

A save writes a temporary file in the target's folder, fsyncs it, renames it over the target and
fsyncs the folder, so the target is always either the complete old file or the complete new one;
on any failure the temporary is removed. On Linux the temporary is an unnamed file (O_TMPFILE),
named only for the rename, so even a writer killed mid-save leaves nothing behind.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .model import Checkpoint
from .revisions import v1_write, v2_write, wof_write

__all__ = ["KEEP", "chunks", "save", "to_bytes"]


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: Default of ``dialect``: keep the checkpoint's own dialect.
KEEP: Any = _Keep()

#: Writers of other revisions register here: revision -> (checkpoint, dialect, options) -> chunks.
WRITERS: dict[str, Any] = {}


def _v1_chunks(
    ckpt: Checkpoint, dialect: str | None, **options: Any
) -> Iterator[bytes | memoryview]:
    return v1_write.chunks(v1_write.plan(ckpt, dialect))


def _wof_chunks(
    ckpt: Checkpoint, dialect: str | None, **options: Any
) -> Iterator[bytes | memoryview]:
    return wof_write.chunks(wof_write.plan(ckpt, allow_lossy=bool(options.get("allow_lossy"))))


def _v2_chunks(
    ckpt: Checkpoint, dialect: str | None, **options: Any
) -> Iterator[bytes | memoryview]:
    return v2_write.chunks(v2_write.plan(ckpt))


WRITERS["v1"] = _v1_chunks
WRITERS["v2"] = _v2_chunks
WRITERS["wof"] = _wof_chunks


def chunks(
    ckpt: Checkpoint, *, revision: str | None = None, dialect: Any = KEEP, **options: Any
) -> Iterator[bytes | memoryview]:
    """The bytes of ``ckpt`` in file order, computed lazily (every offset is planned first)."""
    revision = revision or ckpt.revision
    if dialect is KEEP:
        dialect = ckpt.dialect if revision == ckpt.revision else None
    writer = WRITERS.get(revision)
    if writer is None:
        raise ValueError(f"unknown revision {revision!r}; choose from {', '.join(sorted(WRITERS))}")
    return writer(ckpt, dialect, **options)


def to_bytes(ckpt: Checkpoint, **kwargs: Any) -> bytes:
    """The file ``save`` would write, as bytes (for small checkpoints and tests)."""
    out = io.BytesIO()
    for chunk in chunks(ckpt, **kwargs):
        out.write(chunk)
    return out.getvalue()


#: Chunks smaller than this are gathered into one buffer of up to ``_GATHER`` bytes before a
#: write: a file of 100,000 tiny entries costs a few hundred system calls, not 100,000.
_SMALL = 16 << 10
_GATHER = 1 << 20


def _write_view(fd: int, view: memoryview) -> None:
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_all(fd: int, data: Iterable[bytes | memoryview]) -> None:
    pending = bytearray()
    for chunk in data:
        view = memoryview(chunk).cast("B")
        if len(view) < _SMALL:
            pending += view
            if len(pending) >= _GATHER:
                _write_view(fd, memoryview(pending))
                pending = bytearray()
            continue
        if pending:
            _write_view(fd, memoryview(pending))
            pending = bytearray()
        _write_view(fd, view)
    if pending:
        _write_view(fd, memoryview(pending))


def _reporting(
    data: Iterable[bytes | memoryview], progress: Callable[[int], object]
) -> Iterator[bytes | memoryview]:
    for chunk in data:
        yield chunk
        progress(memoryview(chunk).nbytes)


def save(
    ckpt: Checkpoint,
    path: str | os.PathLike,
    *,
    progress: Callable[[int], object] | None = None,
    **kwargs: Any,
) -> None:
    """Write ``ckpt`` to ``path`` atomically.

    With no options it writes the revision and dialect the checkpoint was loaded from, so
    ``save(load(p), q)`` reproduces ``p`` byte for byte. ``revision`` ("v1", "wof") and
    ``dialect`` ("onert", "onert-micro", or None to pick one that holds the content) choose
    another layout; ``allow_lossy=True`` permits dropping what the target cannot hold.
    ``progress``, if given, is called with the byte count of every chunk as it is written
    (the command line feeds a progress bar with it).
    """
    data = chunks(ckpt, **kwargs)  # plans the layout: errors come before any file is touched
    if progress is not None:
        data = _reporting(data, progress)
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    # Linux: an unnamed file (O_TMPFILE) that vanishes by itself if the writer dies; it gets a
    # name only to be renamed over the target. Elsewhere: a hidden named temporary file.
    fd = _open_unnamed(folder)
    tmp: str | None = None
    dfd = -1
    if fd is None:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=folder
        )
    try:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        _write_all(fd, data)
        os.fsync(fd)
        if tmp is None:
            dfd = os.open(folder, os.O_RDONLY)
            tmp = _name_unnamed(fd, dfd, folder, target)
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
        tmp = None
        _fsync_folder(folder, dfd)
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if dfd >= 0:
            os.close(dfd)


def _open_unnamed(folder: str) -> int | None:
    """An unnamed writable file in ``folder`` (Linux O_TMPFILE), or None where there is none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, 0o600)
    except OSError as exc:
        # File systems without O_TMPFILE support say so in one of these ways.
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def _name_unnamed(fd: int, dfd: int, folder: str, target: str) -> str:
    """Give the unnamed file a hidden name beside the target (in the folder open as ``dfd``),
    for the atomic rename."""
    # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N links the file itself; os.link uses linkat
    # (not link, which would link the /proc symlink) only when given a directory descriptor.
    for _ in range(100):
        name = f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp"
        try:
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)
        except FileExistsError:
            continue
        return os.path.join(folder, name)
    raise FileExistsError(errno.EEXIST, "no free temporary name", folder)


def _fsync_folder(folder: str, dfd: int = -1) -> None:
    """Make the rename durable, through ``dfd`` when the folder is already open. Best effort: by
    now the new file is complete and in place, so a folder that cannot be synced (some file
    systems refuse) is no reason to report a failure."""
    own = dfd < 0
    if own:
        try:
            dfd = os.open(folder, os.O_RDONLY)
        except OSError:
            return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        if own:
            try:
                os.close(dfd)
            except OSError:
                pass
