"""What a revision is: its capability record (SPEC section 3). Each revision package exports
one (``v1.REVISION``, ...) and ``registry`` collects them.

A record names its reader and writer as modules imported when first used, so that importing a
package (its record) imports none of its codec: opening a schema-1 file never imports the
schema-2 code (start-up time).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..layout import Layout

__all__ = ["BY_CIRCLE_INDEX", "BY_RECORD", "BY_RUNTIME", "Revision"]

#: How a revision's entries say which tensor each is (``Revision.keyed_by``).
BY_RUNTIME = "runtime"  # the writing runtime's own indexing (schema 1: the dialect says which)
BY_CIRCLE_INDEX = "circle_index"  # circle tensor indices (WOF)
BY_RECORD = "record"  # each tensor record's model index (schemas 2 and 3)


@dataclass(frozen=True)
class Revision:
    """A revision: its name and version byte, its codec (the modules of this package that read
    and write it), and what it can hold of a checkpoint's content.

    A reader module has ``read(view, *, verify_data, revision)``; a writer module has
    ``write_chunks(ckpt, dialect, **options)``, or, when ``streams``, ``plan(ckpt, *,
    data_crc, version)`` for the section-table container's writer, which also streams."""

    name: str
    version: int
    reader: str
    writer: str
    #: how the specification names it in messages ("schema 1", "WOF", ...)
    title: str
    #: the writer plans a section-table container (container/write.py), which can stream
    streams: bool = False
    #: its tensor records hold names, dtypes, shapes and model indices
    holds_annotations: bool = False
    #: optimizer kind -> the slots it lays out; None: every kind and slot; {}: no optimizer state
    optimizers: Mapping[str, tuple[str, ...]] | None = None
    #: the training-state keys it holds (as u32); None: every key and value
    state_keys: tuple[str, ...] | None = None
    #: sections of unknown kinds are kept
    holds_sections: bool = False
    #: the schema-1 entry indexings (runtimes) it is written in; () when it has no dialect
    dialects: tuple[str, ...] = ()
    #: how an entry says which tensor it is: BY_RUNTIME, BY_CIRCLE_INDEX or BY_RECORD
    keyed_by: str = BY_RECORD
    #: a model index it reserves (schema 3's NO_MODEL_INDEX), which a tensor cannot have
    reserved_model_index: int | None = None
    #: the class of ``Checkpoint.layout`` for it: what its files carry besides the content
    layout_type: type[Layout] = Layout

    @property
    def holds_everything(self) -> bool:
        """Every content a checkpoint object can say fits (an upgrade's target)."""
        return (self.holds_annotations and self.optimizers is None and self.state_keys is None
                and self.holds_sections)

    def read(self, view: memoryview, *, verify_data: bool = True) -> Any:
        return _module(self.reader).read(view, verify_data=verify_data, revision=self)

    def write_chunks(self, ckpt: Any, dialect: str | None,
                     **options: Any) -> Iterator[bytes | memoryview]:
        writer = _module(self.writer)
        if self.streams:
            return _module(".container.write").chunks(writer.plan(ckpt, version=self.version))
        return writer.write_chunks(ckpt, dialect, **options)

    def write_stream(self, ckpt: Any, dialect: str | None, **options: Any) -> Any:
        """The bytes with the data CRC computed on the way (container/write.py, stream)."""
        plan = _module(self.writer).plan(ckpt, data_crc=False, version=self.version)
        return _module(".container.write").stream(plan)


def _module(name: str) -> ModuleType:
    return importlib.import_module(f".{name}", __package__)
