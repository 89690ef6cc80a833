"""The revisions of the format family as data: each package's capability record (record.py,
SPEC section 3), collected. Everything outside ``revisions/`` that depends on a revision asks
its record (loading the reader by version byte, saving the writer by name, the loss rule,
conversion and the model binding what it holds and how it is keyed), never its name: a
revision added by :func:`register` is read, written, converted and validated with no other
edit.
"""

from __future__ import annotations

from typing import Any

from ..layout import Layout
from . import v1, v2, v3, wof
from .record import BY_CIRCLE_INDEX, BY_RECORD, BY_RUNTIME, Revision

__all__ = ["BY_CIRCLE_INDEX", "BY_NAME", "BY_RECORD", "BY_RUNTIME", "RECOMMENDED", "REVISIONS",
           "RUNTIME", "Revision", "find", "holds", "layout_for", "names", "register", "revision",
           "unregister", "with_version"]

#: Every revision, in the order of SPEC section 3 (schema 1 and WOF share version byte 1 and are
#: told apart by structure, dispatch.py).
REVISIONS: list[Revision] = [v1.REVISION, wof.REVISION, v2.REVISION, v3.REVISION]
BY_NAME: dict[str, Revision] = {r.name: r for r in REVISIONS}
#: What a checkpoint built by hand is, and what holds any content (spec/SPEC.md 10).
RECOMMENDED = v3.REVISION
#: What the runtimes read: a new checkpoint is written so when it holds all of the content.
RUNTIME = v1.REVISION


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


def layout_for(name: str, /, **values: Any) -> Layout:
    """A layout of revision ``name`` (its record's ``layout_type``; the base `Layout` for a
    name that is none) with those of ``values`` that its files carry."""
    return (find(name) or _NONE).layout_type.of(name, **values)


def holds(name: object, capability: str) -> Any:
    """A capability of revision ``name`` (a record's attribute); for a name that is none, an
    empty one (False, ())."""
    return getattr(find(name) or _NONE, capability)
