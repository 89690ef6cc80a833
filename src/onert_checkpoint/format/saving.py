"""Saving: choosing the revision's writer, checking what it may write, and handing its bytes
to the one output primitive (`onert_checkpoint.atomic_file`: atomic replacement, special
files refused, symbolic links followed and kept, owner and mode kept, errors naming the
caller's path; docs/saving.md).
"""

from __future__ import annotations

import errno
import io
import itertools
import os
from collections.abc import Callable, Generator, Iterator
from typing import Any, BinaryIO

from ..atomic_file import write_atomic
from .entries import must_verify, stores_of
from .errors import error_for
from .loss import check_lossless
from .model import Checkpoint
from .revisions import registry

__all__ = ["KEEP", "chunks", "save", "save_stream", "to_bytes", "verify_sources"]


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: Default of ``dialect``: keep the checkpoint's own dialect.
KEEP: Any = _Keep()

#: A stream of chunks; its return value lists ``(offset, bytes)`` to write over what was
#: streamed (schema 2's header, once the data CRC computed on the way is known).
Stream = Generator["bytes | memoryview", None, "list[tuple[int, bytes]]"]

#: Every revision by name, each with its writer (the one table of revisions,
#: revisions/registry.py; ``write_stream``, which patches, for those that ``stream``).
WRITERS = registry.BY_NAME


def _write(ckpt: Checkpoint, revision: str | None, dialect: Any, options: dict[str, Any],
           patching: bool = False) -> Stream:
    """The bytes of the revision's writer once the write is allowed: its patching stream
    (``patching``: what ``save`` writes) if it has one, else its chunks."""
    revision = revision or ckpt.revision
    if dialect is KEEP:
        dialect = ckpt.dialect if revision == ckpt.revision else None
    rev = registry.revision(revision)
    ckpt._check_live()
    by_index = rev.keyed_by == registry.BY_CIRCLE_INDEX
    if by_index or (rev.dialects and dialect is not None):
        from .convert import content_dialect  # entries are never re-labelled to a dialect

        have = content_dialect(ckpt)
        if by_index and have == "onert":  # WOF entries are circle tensor indices
            raise error_for("not_representable", "dialect", None,
                            f"the entries are indexed as onert entries; {rev.title} indexes them "
                            "by circle tensor, which needs the circle model: "
                            f"convert(ckpt, {rev.name!r}, model=...)")
        if not by_index and have is not None and have != dialect:
            raise error_for("not_representable", "dialect", None,
                            f"the entries are indexed as {have} entries; writing them as {dialect} "
                            "re-indexes them, which needs the circle model: "
                            f"convert(ckpt, {rev.name!r}, dialect=..., model=...)")
    # The one rule of every write (format/loss.py): keep the content or refuse naming the loss;
    # and never a fresh checksum over bytes whose own checks have not passed (or may be stale).
    check_lossless(ckpt, revision, dialect=dialect, allow_lossy=bool(options.get("allow_lossy")))
    verify_sources(ckpt)
    write = rev.write_stream if patching and rev.streams else rev.write_chunks
    return write(ckpt, dialect, **options)  # type: ignore[return-value]


def verify_sources(ckpt: Checkpoint) -> None:
    """Before any file is written from ``ckpt`` (a checkpoint, an export): the data checks of
    the loaded files it copies from must pass, now if they have not run (``verify_data=False``)
    or again if the bytes may have changed (`must_verify`): its own, and those that the arrays
    of its entries view (content made by ``upgrade`` or ``convert`` of a loaded file)."""
    from .dispatch import read_view

    own = [] if ckpt._store is None else [ckpt._store]
    must_verify(own + stores_of([entry._data for entry in ckpt._made_entries()]), read_view)


def chunks(ckpt: Checkpoint, *, revision: str | None = None, dialect: Any = KEEP,
           **options: Any) -> Iterator[bytes | memoryview]:
    """The bytes of ``ckpt`` in file order, computed lazily (every offset is planned first)."""
    return _write(ckpt, revision, dialect, options)


def _stream(ckpt: Checkpoint, *, revision: str | None = None, dialect: Any = KEEP,
            **options: Any) -> Stream:
    return _write(ckpt, revision, dialect, options, patching=True)


def to_bytes(ckpt: Checkpoint, **kwargs: Any) -> bytes:
    """The file ``save`` would write, as bytes (for small checkpoints and tests)."""
    return b"".join(chunks(ckpt, **kwargs))


def save(ckpt: Checkpoint, path: str | os.PathLike, *,
         progress: Callable[[int], object] | None = None, forward_only: bool = False,
         **kwargs: Any) -> None:
    """Write ``ckpt`` to ``path`` atomically.

    With no options it writes the checkpoint's own layout (``ckpt.layout``), so
    ``save(load(p), q)`` reproduces ``p`` byte for byte. ``revision`` (a name of `names`) and
    ``dialect`` (one of the revision's ``dialects``, or None to pick one that holds the content)
    choose another layout; ``allow_lossy=True`` permits dropping what the target cannot hold.
    ``progress``, if given, is called with the byte count of every chunk as it is written (the
    command line's bar).

    Schema 2 and 3 are written in one pass with the data section's checksums summed on the way,
    then the header and section table (and schema 3's per-block checksums) written over their
    placeholders. ``forward_only=True`` computes every checksum first, in a read pass over the
    data, then writes each byte once, in order, never at an offset: the same bytes, for storage
    that only appends (docs/saving.md, "Writing in one forward pass";
    [`save_stream`][onert_checkpoint.save_stream] writes to a pipe or any file object so).

    ``path`` must be a regular file or not exist (a directory, FIFO, socket or device is
    refused with an ``OSError``; an empty path with a ``ValueError``); a symbolic link is
    followed and kept. Every ``OSError`` names ``path``.
    """
    if not os.fspath(path):
        raise ValueError("the output path is empty")
    # plans the layout (and, forward only, every checksum): errors come before any file is
    # touched
    data = _forward(ckpt, **kwargs) if forward_only else _stream(ckpt, **kwargs)
    write_atomic(path, data, progress=progress)


def _forward(ckpt: Checkpoint, **kwargs: Any) -> Iterator[bytes | memoryview]:
    """The file's bytes in order with every checksum already computed: `chunks`, with
    its plan (and the data read pass of schema 2 and 3) made before the first chunk is
    asked for."""
    data = chunks(ckpt, **kwargs)
    first = next(data, None)  # a generator plans on its first step: before any byte goes out
    return data if first is None else itertools.chain((first,), data)


def save_stream(ckpt: Checkpoint, file: BinaryIO, *,
                progress: Callable[[int], object] | None = None, **kwargs: Any) -> int:
    """Write ``ckpt`` to the binary file object ``file`` in one forward pass; returns the
    number of bytes written.

    For targets that cannot seek or only append: a pipe (``os.fdopen(w, "wb")``), standard output
    (``sys.stdout.buffer``), a socket's file, an object store's upload stream, an append-only file.
    Every offset and every checksum is computed first (schema 2 and 3 read the data once for their
    checksums), then each byte is written once, in order, through ``file.write`` at the file's own
    position: ``seek``, ``tell`` and ``fileno`` are never called. The bytes are those
    [`save`][onert_checkpoint.save] and [`to_bytes`][onert_checkpoint.to_bytes] write; the options
    are theirs (``revision``, ``dialect``, ``allow_lossy``). ``file`` is flushed, not closed.

    Content errors (``not_representable``, a failed data check of the source) are raised before the
    first byte is written. A write error or an interruption afterwards leaves the receiver with a
    prefix of the file: nothing here can take back what a pipe has sent, so unlike
    [`save`][onert_checkpoint.save] there is no old file to keep (docs/saving.md, "Writing in one
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
