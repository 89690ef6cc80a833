"""The revisions of the format family in one table: each one's name, version byte, reader and
writer (SPEC section 3). Loading (dispatch.py) and saving (saving.py) both take them from here.

Readers and writers are modules of this package imported when first used, so that opening a
schema-1 file never imports the schema-2 code (start-up time).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..model import Checkpoint

__all__ = ["BY_NAME", "REVISIONS", "Revision"]


@dataclass(frozen=True)
class Revision:
    """A revision: its name, its version byte, and the modules (of this package) that read and
    write it. A reader module has ``read(view, *, verify_data)``; a writer module has
    ``write_chunks(ckpt, dialect, **options)``, or, when ``streams``, ``plan(ckpt, *,
    data_crc)`` for the container writer, which also streams (saving.Stream)."""

    name: str
    version: int
    reader: str
    writer: str
    #: the writer plans a schema-2-family container (container_write.py), which can stream
    streams: bool = False

    def read(self, view: memoryview, *, verify_data: bool = True) -> Checkpoint:
        return _module(self.reader).read(view, verify_data=verify_data)

    def write_chunks(
        self, ckpt: Checkpoint, dialect: str | None, **options: Any
    ) -> Iterator[bytes | memoryview]:
        writer = _module(self.writer)
        if self.streams:
            return _module("container_write").chunks(writer.plan(ckpt))
        return writer.write_chunks(ckpt, dialect, **options)

    def write_stream(self, ckpt: Checkpoint, dialect: str | None, **options: Any) -> Any:
        """The bytes with the data CRC computed on the way (container_write.stream)."""
        return _module("container_write").stream(_module(self.writer).plan(ckpt, data_crc=False))


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{name}")


#: Every revision, in the order of SPEC section 3 (schema 1 and WOF share version byte 1 and are
#: told apart by structure, dispatch.py).
REVISIONS = (
    Revision("v1", 1, "v1", "v1_write"),
    Revision("wof", 1, "wof", "wof_write"),
    Revision("v2", 2, "v2", "v2_write", streams=True),
    Revision("v3", 3, "v3", "v3_write", streams=True),
)
BY_NAME = {r.name: r for r in REVISIONS}
