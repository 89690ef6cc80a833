"""The revisions of the format family as data: one capability record each (SPEC section 3).

Everything outside ``revisions/`` that depends on a revision asks its record what it holds
and how it is keyed, never its name: loading (dispatch.py) finds the reader by version byte,
saving the writer by name, the loss rule (loss.py) what a target keeps, conversion (convert.py)
and the model binding (circle/binding.py) how entries are indexed. A revision added to
:data:`REVISIONS` (or by :func:`register`) is read, written, converted and validated with no
other edit.

Readers and writers are modules of this package imported when first used, so that opening a
schema-1 file never imports the schema-2 code (start-up time); the records are therefore kept
here, not in the packages whose code they name.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

__all__ = ["BY_NAME", "RECOMMENDED", "REVISIONS", "RUNTIME", "Revision", "find", "names",
           "register", "revision", "unregister", "with_version"]

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
    #: an origin section records what a schema-1 or WOF file was
    keeps_origin: bool = False
    #: a model index it reserves (schema 3's NO_MODEL_INDEX), which a tensor cannot have
    reserved_model_index: int | None = None

    @property
    def holds_everything(self) -> bool:
        """Every content a checkpoint object can say fits (an upgrade's target)."""
        return (self.holds_annotations and self.optimizers is None and self.state_keys is None
                and self.holds_sections)

    def read(self, view: memoryview, *, verify_data: bool = True) -> Any:
        return _module(self.reader).read(view, verify_data=verify_data, revision=self)

    def write_chunks(
        self, ckpt: Any, dialect: str | None, **options: Any
    ) -> Iterator[bytes | memoryview]:
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


#: Every revision, in the order of SPEC section 3 (schema 1 and WOF share version byte 1 and are
#: told apart by structure, dispatch.py).
_V2 = Revision("v2", 2, "v2.reader", "v2.write", "schema 2", streams=True, holds_annotations=True,
               holds_sections=True, keeps_origin=True)
REVISIONS: list[Revision] = [
    Revision("v1", 1, "v1.reader", "v1.write", "schema 1",
             optimizers={"sgd": (), "adam": ("m", "v")}, state_keys=("step", "epoch"),
             dialects=("onert", "onert-micro"), keyed_by=BY_RUNTIME),
    Revision("wof", 1, "wof.reader", "wof.write", "WOF", optimizers={}, state_keys=(),
             keyed_by=BY_CIRCLE_INDEX),
    _V2,
    replace(_V2, name="v3", version=3, reader="v3.reader", writer="v3.write", title="schema 3",
            reserved_model_index=0xFFFF_FFFF),
]
BY_NAME: dict[str, Revision] = {r.name: r for r in REVISIONS}
#: What a checkpoint built by hand is, and what holds any content (spec/SPEC.md 10).
RECOMMENDED = BY_NAME["v3"]
#: What the runtimes read: a new checkpoint is written so when it holds all of the content.
RUNTIME = BY_NAME["v1"]


def register(record: Revision) -> None:
    """Add a revision (or replace the one of its name): loading, saving, conversion and the
    loss rule see it at once."""
    _keep([r for r in REVISIONS if r.name != record.name] + [record])


def unregister(name: str) -> None:
    """Remove revision ``name`` (one that :func:`register` added)."""
    _keep([r for r in REVISIONS if r.name != name])


def _keep(records: list[Revision]) -> None:
    REVISIONS[:] = records
    BY_NAME.clear()
    BY_NAME.update((r.name, r) for r in records)


def names() -> list[str]:
    """The revisions' names, sorted (for choices and messages)."""
    return sorted(BY_NAME)


def find(name: object) -> Revision | None:
    """The record of revision ``name``, or None for a name that is none."""
    return BY_NAME.get(name) if isinstance(name, str) else None


def revision(name: object) -> Revision:
    """The record of revision ``name``; ValueError naming the choices for any other."""
    found = find(name)
    if found is None:
        raise ValueError(f"unknown revision {name!r}; choose from {', '.join(names())}")
    return found


def with_version(version: int) -> list[Revision]:
    """The revisions of a version byte (schema 1 and WOF share 1)."""
    return [r for r in REVISIONS if r.version == version]


#: What a name that is no revision has: nothing (``holds``).
_NONE = Revision("", -1, "", "", "", keyed_by="")


def holds(name: object, capability: str) -> Any:
    """A capability of revision ``name`` (a record's attribute); for a name that is none, an
    empty one (False, ())."""
    return getattr(find(name) or _NONE, capability)
