"""Saving: choosing the revision's writer, and replacing the target file atomically.

A save writes a temporary file in the target's folder, fsyncs it, renames it over the target and
fsyncs the folder, so the target is always either the complete old file or the complete new one;
on any failure the temporary is removed and the error names the caller's path. On Linux the
temporary is an unnamed file (O_TMPFILE), given a name (``.NAME.<12 hex>.tmp``) only for the
rename. A writer killed in the instant between that naming and the rename leaves that name
behind; the next save to the same target in that folder removes it (the writer holds an
exclusive ``flock`` on its temporary while it lives, so only a dead writer's is removed; and
only a file of this process's user whose name carries the library's tag, so never another
user's file). Elsewhere the temporary is such a named file from the start, with the same
cleaning.

The target must be a regular file or absent: a directory, FIFO, socket or device is refused and
left untouched. A symbolic link is followed: the file it names is replaced, the link kept. A new
file gets mode 0666 less the umask (the kernel applies it when the temporary is created; the
process umask is never changed), a replaced file keeps its mode but never the set-user-ID or
set-group-ID bit, and its owner where the process may keep it (root; or the same user, who
keeps the group if a member). A hard link to the replaced file is split: the other names keep
the old content. See docs/saving.md.

Storage that only appends gets the same bytes in one forward pass: ``save(...,
forward_only=True)`` and :func:`save_stream` (a pipe or any file object) compute every checksum
in a read pass over the data first, then write each byte once, in order, never at an offset.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import io
import itertools
import mmap
import os
import re
import secrets
import stat
import sys
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, BinaryIO

from .entries import DataStore, SlotEntries, must_verify, stores_of
from .loss import check_lossless
from .model import Checkpoint
from .revisions.registry import REVISIONS
from .source import not_regular

__all__ = ["KEEP", "chunks", "save", "save_stream", "to_bytes", "verify_sources", "write_atomic"]


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: Default of ``dialect``: keep the checkpoint's own dialect.
KEEP: Any = _Keep()

#: A stream of chunks; its return value lists ``(offset, bytes)`` to write over what was
#: streamed (schema 2's header, once the data CRC computed on the way is known).
Stream = Generator["bytes | memoryview", None, "list[tuple[int, bytes]]"]

#: Each revision's writer: revision -> (checkpoint, dialect, options) -> chunks (from the one
#: table of revisions, revisions/registry.py).
WRITERS: dict[str, Any] = {r.name: r.write_chunks for r in REVISIONS}
#: Writers that stream with patches (see ``Stream``); ``save`` prefers them.
STREAMERS: dict[str, Any] = {r.name: r.write_stream for r in REVISIONS if r.streams}


def _writer(
    table: dict[str, Any], revision: str | None, dialect: Any, ckpt: Checkpoint,
    allow_lossy: bool = False,
):
    revision = revision or ckpt.revision
    if dialect is KEEP:
        dialect = ckpt.dialect if revision == ckpt.revision else None
    if revision not in WRITERS:
        raise ValueError(f"unknown revision {revision!r}; choose from {', '.join(sorted(WRITERS))}")
    ckpt._check_live()
    if revision == "wof" or (revision == "v1" and dialect is not None):
        from .convert import content_dialect  # entries are never re-labelled to a dialect
        from .errors import error_for

        have = content_dialect(ckpt)
        if revision == "wof" and have == "onert":  # WOF entries are circle tensor indices
            raise error_for(
                "not_representable", "dialect", None,
                "the entries are indexed as onert entries; WOF indexes them by circle tensor, "
                "which needs the circle model: convert(ckpt, 'wof', model=...)",
            )
        if revision == "v1" and have is not None and have != dialect:
            raise error_for(
                "not_representable", "dialect", None,
                f"the entries are indexed as {have} entries; writing them as {dialect} "
                "re-indexes them, which needs the circle model: "
                "convert(ckpt, 'v1', dialect=..., model=...)",
            )
    # The one rule of every write (format/loss.py): keep the content or refuse naming the loss;
    # and never a fresh checksum over bytes whose own checks have not passed (or may be stale).
    check_lossless(ckpt, revision, dialect=dialect, allow_lossy=allow_lossy)
    verify_sources(ckpt)
    return table.get(revision), dialect


def verify_sources(ckpt: Checkpoint) -> None:
    """Before any file is written from ``ckpt`` (a checkpoint, an export): the data checks of
    the loaded files it copies from must pass, now if they have not run (``verify_data=False``)
    or again if the bytes may have changed (:func:`~.entries.must_verify`)."""
    must_verify(_sources(ckpt))


def _sources(ckpt: Checkpoint) -> list[DataStore]:
    """The loaded files whose bytes a write of ``ckpt`` copies: its own, and those that the
    arrays of its entries view (content made by ``upgrade`` or ``convert`` of a loaded file)."""
    arrays = [t._data for t in ckpt.tensors.made()]
    if ckpt.optimizer is not None:
        for entries in ckpt.optimizer.slots.values():
            made = entries.made() if isinstance(entries, SlotEntries) else entries.values()
            arrays += [b._data for b in made]
    own = [] if ckpt._store is None else [ckpt._store]
    return own + stores_of(arrays)


def chunks(
    ckpt: Checkpoint, *, revision: str | None = None, dialect: Any = KEEP, **options: Any
) -> Iterator[bytes | memoryview]:
    """The bytes of ``ckpt`` in file order, computed lazily (every offset is planned first)."""
    writer, dialect = _writer(
        WRITERS, revision, dialect, ckpt, bool(options.get("allow_lossy"))
    )
    return writer(ckpt, dialect, **options)


def _stream(
    ckpt: Checkpoint, *, revision: str | None = None, dialect: Any = KEEP, **options: Any
) -> Stream:
    """What ``save`` writes: the revision's patching stream if it has one, else its chunks."""
    writer, dialect = _writer(
        STREAMERS, revision, dialect, ckpt, bool(options.get("allow_lossy"))
    )
    if writer is not None:
        return writer(ckpt, dialect, **options)
    # the same writer chunks() would pick, without checking the content a second time
    writer = WRITERS[revision or ckpt.revision]
    return _no_patches(writer(ckpt, dialect, **options))


def _no_patches(data: Iterable[bytes | memoryview]) -> Stream:
    yield from data
    return []


def to_bytes(ckpt: Checkpoint, **kwargs: Any) -> bytes:
    """The file ``save`` would write, as bytes (for small checkpoints and tests)."""
    out = io.BytesIO()
    for chunk in chunks(ckpt, **kwargs):
        out.write(chunk)
    return out.getvalue()


# --- writing ---------------------------------------------------------------------------------

#: Chunks are handed to the kernel in batches of up to this many bytes and IOV_MAX pieces with
#: one writev, without copying them: a file of 100,000 tiny entries, or 30,000 ranges and their
#: padding, costs a few hundred system calls, not one per chunk.
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


def _write_stream(
    fd: int, data: Stream, progress: Callable[[int], object] | None, replaced: int | None = None
) -> None:
    """Write ``data`` to ``fd``; ``replaced`` (a descriptor of the file being replaced, or None)
    has its cached pages released behind the write position (see :func:`_release`). On any
    error the stream is closed at once (a schema-2 stream then stops its CRC thread)."""
    try:
        patches = _write_chunks(fd, data, progress, replaced)
    except BaseException:
        data.close()
        raise
    for offset, raw in patches:
        view = memoryview(raw)
        while view:
            n = os.pwrite(fd, view, offset)
            view, offset = view[n:], offset + n


def _write_chunks(
    fd: int, data: Stream, progress: Callable[[int], object] | None, replaced: int | None
) -> list[tuple[int, bytes]]:
    batch: list[memoryview] = []
    size = 0
    written = released = flushed = 0
    writeback: Callable[..., int] | bool | None = False  # False: not looked up yet
    while True:
        try:
            chunk = next(data)
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
            written += size
            batch, size = [], 0
            if replaced is not None:
                replaced, released = _release(replaced, released, written)
            if writeback is False:
                # Only past 8 MiB: a small file has nothing to overlap its writeback with.
                writeback = _writeback_starter() if written > _BATCH_BYTES else False
            if callable(writeback):
                if writeback(fd, flushed, written - flushed, _SYNC_FILE_RANGE_WRITE) != 0:
                    writeback = None  # refused (ENOSYS, a file system without it): stop asking
                flushed = written
        if progress is not None:
            progress(len(view))
    if batch:
        _writev_all(fd, batch)
        if replaced is not None:
            _release(replaced, released, written + size)
    return patches


#: sync_file_range(2)'s flag that starts the writeback of a range without waiting for it.
_SYNC_FILE_RANGE_WRITE = 2
_WRITEBACK: Any = None  # sync_file_range from the C library, looked up on first use


def _writeback_starter() -> Callable[..., int] | None:
    """Linux's ``sync_file_range`` (which ``os`` does not offer), or None.

    ``save`` starts the writeback of each batch as soon as it is written, so the disk writes
    while the next batches are copied and the final fsync has little left to wait for (1 GiB:
    fsync 0.30 s -> 0.002 s, the whole save 1.19 s -> 0.61 s here, docs/performance-notes.md).
    It only starts writing; durability still comes from the fsync before the rename."""
    global _WRITEBACK
    if _WRITEBACK is None:
        _WRITEBACK = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                func = ctypes.CDLL(None, use_errno=True).sync_file_range
                func.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
                func.restype = ctypes.c_int
                _WRITEBACK = func
            except (ImportError, OSError, AttributeError):
                pass
    return _WRITEBACK or None


_PAGE = mmap.PAGESIZE


def _release(replaced: int, start: int, end: int) -> tuple[int | None, int]:
    """Drop the replaced file's cached pages in ``start..end`` (the part of it that the new file
    has already overtaken); returns (the descriptor, or None to stop, the next start).

    Why: until the rename the old file must stay intact, so the new file's pages would come on
    top of the old file's cached ones. The kernel would then find a second file's worth of
    memory, evicting other files' cache (or, in a virtual machine that hands free memory back
    to its host, faulting it back in: 3x slower here, docs/performance-notes.md). The old
    file's pages are garbage after the rename; dropping them as the new file overtakes them
    recycles them at once, as a truncating write does, without touching the old file's data.
    Only unmapped, clean pages go (POSIX_FADV_DONTNEED): a reader that has the old file mapped
    keeps what it mapped, and a save whose source is the file it replaces has read each part
    before it is dropped (its layout keeps the data in file order). Advice only: any error
    stops it, never the save."""
    if end <= start:  # a length of 0 would mean "to the end of the file"
        return replaced, start
    try:
        os.posix_fadvise(replaced, start, end - start, os.POSIX_FADV_DONTNEED)
    except OSError:
        return None, start
    # The kernel drops whole pages only: the page holding ``end`` goes in the next call.
    return replaced, end - end % _PAGE


# --- the target ------------------------------------------------------------------------------


def _user_path(path: str | os.PathLike) -> str:
    user = os.fspath(path)
    if isinstance(user, bytes):
        user = os.fsdecode(user)
    if not user:
        raise ValueError("the output path is empty")
    return user


def _resolve_target(user: str) -> tuple[str, os.stat_result | None]:
    """(the file to replace, its status or None if it does not exist).

    A symbolic link is followed to the file it names (which may not exist yet); anything but a
    regular file is refused before the file system is touched."""
    if user.endswith(os.sep) or (os.altsep and user.endswith(os.altsep)):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file: refusing to replace it", user)
    real = os.path.realpath(user)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real, None
    bad = not_regular(st.st_mode, user, "replace")
    if bad is not None:
        raise bad
    return real, st


def _as_users(exc: OSError, user: str) -> OSError:
    """``exc`` naming the caller's path instead of the temporary's or the folder's."""
    if exc.filename == user and exc.filename2 is None:
        return exc
    new = OSError(exc.errno, exc.strerror or str(exc), user)  # same subclass, by errno
    new.__cause__ = exc
    return new


def save(
    ckpt: Checkpoint,
    path: str | os.PathLike,
    *,
    progress: Callable[[int], object] | None = None,
    forward_only: bool = False,
    **kwargs: Any,
) -> None:
    """Write ``ckpt`` to ``path`` atomically.

    With no options it writes the revision and dialect the checkpoint was loaded from, so
    ``save(load(p), q)`` reproduces ``p`` byte for byte. ``revision`` ("v1", "wof") and
    ``dialect`` ("onert", "onert-micro", or None to pick one that holds the content) choose
    another layout; ``allow_lossy=True`` permits dropping what the target cannot hold.
    ``progress``, if given, is called with the byte count of every chunk as it is written
    (the command line feeds a progress bar with it).

    Schema 2 and 3 are written in one pass with the data section's checksums summed on the
    way, then the header and section table (and schema 3's per-block checksums) written over
    their placeholders. ``forward_only=True`` computes every checksum first, in a read pass
    over the data, and then writes each byte once, in order, never at an offset: the same
    bytes, for storage that only appends (docs/saving.md, "Writing in one forward pass";
    :func:`save_stream` writes to a pipe or any other file object that way).

    ``path`` must be a regular file or not exist (a directory, FIFO, socket or device is
    refused with an ``OSError``; an empty path with a ``ValueError``); a symbolic link is
    followed and kept. Every ``OSError`` names ``path``.
    """
    user = _user_path(path)
    # plans the layout (and, forward only, every checksum): errors come before any file is
    # touched
    data = _no_patches(_forward(ckpt, **kwargs)) if forward_only else _stream(ckpt, **kwargs)
    _write_target(user, data, progress)


def _forward(ckpt: Checkpoint, **kwargs: Any) -> Iterator[bytes | memoryview]:
    """The file's bytes in order with every checksum already computed: :func:`chunks`, with
    its plan (and the data read pass of schema 2 and 3) made before the first chunk is
    asked for."""
    data = chunks(ckpt, **kwargs)
    first = next(data, None)  # a generator plans on its first step: before any byte goes out
    return data if first is None else itertools.chain((first,), data)


def save_stream(
    ckpt: Checkpoint,
    file: BinaryIO,
    *,
    progress: Callable[[int], object] | None = None,
    **kwargs: Any,
) -> int:
    """Write ``ckpt`` to the binary file object ``file`` in one forward pass; returns the
    number of bytes written.

    For targets that cannot seek or only append: a pipe (``os.fdopen(w, "wb")``), standard
    output (``sys.stdout.buffer``), a socket's file, an object store's upload stream, an
    append-only file. Every offset and every checksum is computed first (schema 2 and 3
    read the data once for their checksums), then each byte is written once, in order,
    through ``file.write`` at the file's own position: ``seek``, ``tell`` and ``fileno``
    are never called. The bytes are those :func:`save` and :func:`to_bytes` write; the
    options are theirs (``revision``, ``dialect``, ``allow_lossy``). ``file`` is flushed,
    not closed.

    Content errors (``not_representable``, a failed data check of the source) are raised
    before the first byte is written. A write error or an interruption afterwards leaves
    the receiver with a prefix of the file: nothing here can take back what a pipe has sent,
    so unlike :func:`save` there is no old file to keep (docs/saving.md, "Writing in one
    forward pass", says what a reader makes of a prefix).
    """
    write = file.write
    written = 0
    for chunk in _forward(ckpt, **kwargs):
        view = memoryview(chunk).cast("B")
        if not view:
            continue
        rest = view
        while rest:
            n = write(rest)
            if n is None:
                if isinstance(file, io.RawIOBase):  # a non-blocking raw file that took nothing
                    raise BlockingIOError(errno.EAGAIN, "the file would block: nothing written")
                break  # a file-like that returns nothing took it all
            if n >= len(rest):
                break
            if n <= 0:  # never a loop without end
                raise OSError(errno.EIO, "the file's write took no bytes")
            rest = rest[n:]  # a raw file may take part of it
        written += len(view)
        if progress is not None:
            progress(len(view))
    flush = getattr(file, "flush", None)
    if flush is not None:
        flush()
    return written


def write_atomic(
    path: str | os.PathLike,
    data: bytes | memoryview | Iterable[bytes | memoryview],
    *,
    progress: Callable[[int], object] | None = None,
) -> None:
    """Replace ``path`` by ``data`` (bytes, or chunks in file order) the way :func:`save`
    replaces a checkpoint: atomically, a symbolic link followed and kept, a directory, FIFO,
    socket or device refused untouched, every ``OSError`` naming ``path`` (never a temporary),
    an empty path a ``ValueError``. For the other files this package writes (baked models)."""
    user = _user_path(path)
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = [data]
    _write_target(user, _no_patches(data), progress)


def _write_target(user: str, data: Stream, progress: Callable[[int], object] | None) -> None:
    try:
        real, old = _resolve_target(user)
        _replace(real, old, data, progress)
    except OSError as exc:
        named = _as_users(exc, user)
        if named is exc:
            raise
        raise named from exc


def _replace(
    target: str, old: os.stat_result | None, data: Stream, progress: Callable[[int], object] | None
) -> None:
    folder, base = os.path.split(target)
    started = time.time_ns()
    dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        # Linux: an unnamed file (O_TMPFILE) that vanishes by itself if the writer dies; it gets
        # a name only to be renamed over the target. Elsewhere: a hidden named temporary file.
        # Both are created with mode 0666, which the kernel reduces by the umask (and a default
        # ACL) as for any new file: the process umask is never read or changed.
        fd = _open_unnamed(dfd)
        tmp: str | None = None
        if fd is None:
            fd, tmp = _open_named(dfd, base)
        replaced: int | None = None
        try:
            if old is not None:
                _keep_owner_and_mode(fd, old)
                replaced = _open_replaced(dfd, base)
            _write_stream(fd, data, progress, replaced)
            if replaced is not None:
                fd_old, replaced = replaced, None
                os.close(fd_old)
            os.fsync(fd)  # the data are on disk before a name points at them
            if tmp is None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # held until closed: a live writer's temporary
                tmp = _name_unnamed(fd, dfd, base)
            os.replace(tmp, base, src_dir_fd=dfd, dst_dir_fd=dfd)
            tmp = None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp, dir_fd=dfd)
                except OSError:
                    pass
            if replaced is not None:
                with contextlib.suppress(OSError):
                    os.close(replaced)
            os.close(fd)
        _fsync_folder(dfd)
        _clean_stale(dfd, base, started)
    finally:
        os.close(dfd)


#: Why opening the replaced file may fail without failing the save: it may not be read
#: (permissions, a lease held by another process), or is no longer a regular file at that name.
_NOT_RELEASABLE = frozenset(
    getattr(errno, name) for name in (
        "EACCES", "EPERM", "ENOENT", "ELOOP", "EAGAIN", "EWOULDBLOCK", "ENXIO", "ENODEV",
        "EISDIR", "ETXTBSY", "EOPNOTSUPP",
    ) if hasattr(errno, name)
)


def _open_replaced(dfd: int, base: str) -> int | None:
    """The file about to be replaced, open for reading so that its cached pages can be released
    while the new file is written (:func:`_release`); None where that cannot be done.

    Any other error (out of descriptors or memory, an I/O error) is raised like the error of
    every other step before the rename: the save's next step would meet it too."""
    if not hasattr(os, "posix_fadvise"):
        return None
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        old = os.open(base, flags, dir_fd=dfd)
    except OSError as exc:
        if exc.errno in _NOT_RELEASABLE:
            return None
        raise
    try:
        if stat.S_ISREG(os.fstat(old).st_mode):
            return old
    except OSError:
        pass
    os.close(old)  # replaced by something else since it was checked: the rename will say so
    return None


def _keep_owner_and_mode(fd: int, old: os.stat_result) -> None:
    """Give the new file the replaced file's owner where this process may, and its mode
    without the set-user-ID and set-group-ID bits (docs/saving.md, "Owner, mode, links").

    The new file is created by this process, so it is this process's own: copying a setuid
    bit onto it would make a program that runs as this user (root, say) out of someone
    else's file. The owner is kept when the process may give it away (root) or keep it (the
    same user, whose group is kept if the user is in it); otherwise the file becomes the
    saving user's, as with any editor that saves by rename."""
    uid, gid = old.st_uid, old.st_gid
    me = os.geteuid()
    try:
        if me == 0:
            os.fchown(fd, uid, gid)  # before fchmod: a chown clears the set-ID bits anyway
        elif me == uid and gid != os.getegid():
            os.fchown(fd, -1, gid)
    except OSError as exc:
        # not a member of that group; an ID unmapped in this user namespace (EINVAL); a file
        # system that keeps no owners: the file stays the process's own, the save goes on
        if exc.errno not in _OWNER_NOT_KEPT:
            raise
    os.fchmod(fd, stat.S_IMODE(old.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))


_OWNER_NOT_KEPT = frozenset(
    getattr(errno, name) for name in ("EPERM", "EACCES", "EINVAL", "EOPNOTSUPP", "ENOTSUP")
    if hasattr(errno, name)
)


#: Keys the tag that ends a temporary's name (:func:`_temp_name`): the cleaner removes only
#: names that carry it, so a file that merely looks like a temporary is never taken for one.
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
    prefix = f".{base}."
    if not (name.startswith(prefix) and name.endswith(".tmp")):
        return False
    token = name[len(prefix) : -4]
    return (
        len(token) == 12
        and all(c in "0123456789abcdef" for c in token)
        and _name_tag(base, token[:8]) == token[8:]
    )


def _open_unnamed(dfd: int) -> int | None:
    """An unnamed writable file in the folder open as ``dfd`` (Linux O_TMPFILE), or None where
    there is none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(".", flag | os.O_WRONLY | os.O_CLOEXEC, 0o666, dir_fd=dfd)
    except OSError as exc:
        # File systems without O_TMPFILE support say so in one of these ways.
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None
        raise


def _open_named(dfd: int, base: str) -> tuple[int, str]:
    """A new hidden file beside the target, locked: (descriptor, its name in the folder)."""
    for _ in range(100):
        name = _temp_name(base)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666,
                         dir_fd=dfd)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # Another save's cleaner may have removed it before the lock was taken.
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
    """Give the unnamed file a hidden name beside the target (in the folder open as ``dfd``),
    for the atomic rename."""
    # linkat(AT_SYMLINK_FOLLOW) on /proc/self/fd/N links the file itself; os.link uses linkat
    # (not link, which would link the /proc symlink) only when given a directory descriptor.
    for _ in range(100):
        name = _temp_name(base)
        try:
            os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)
        except FileExistsError:
            continue
        return name
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def _clean_stale(dfd: int, base: str, started: int) -> None:
    """Remove the temporaries of dead writers of ``base`` (best effort: the save is done).

    A temporary is stale when it has this library's name for ``base`` (with its tag,
    :func:`_temp_name`), belongs to this process's user, is a regular file with no other
    name, is older than this save and nobody holds its lock: its writer died between naming
    it and the rename. Another user's file is never removed, whatever its name."""
    pattern = re.compile(re.escape(f".{base}.") + r"[0-9a-f]{12}\.tmp")
    try:
        with os.scandir(dfd) as entries:
            names = [
                e.name for e in entries
                if pattern.fullmatch(e.name) and _is_our_temporary(e.name, base)
            ]
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
            if (
                not stat.S_ISREG(st.st_mode)
                or st.st_uid != os.geteuid()
                or st.st_nlink != 1
                or st.st_mtime_ns >= started
            ):
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while its writer lives
            if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == st.st_ino:
                os.unlink(name, dir_fd=dfd)
        except OSError:
            pass
        finally:
            os.close(fd)


def _fsync_folder(dfd: int) -> None:
    """Make the rename durable. Best effort: by now the new file is complete and in place, so a
    folder that cannot be synced (some file systems refuse) is no reason to report a failure."""
    try:
        os.fsync(dfd)
    except OSError:
        pass
