"""The JSON description of a checkpoint: the stable contract of ``onert-ckpt info --json``.

The conformance vectors and the reference C reader produce exactly this object (spec/SPEC.md,
"The JSON description").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..format.entries import SlotEntries
from ..format.model import Buffer, Checkpoint, Tensor
from .jsonout import json_pieces, json_value

__all__ = ["EntryDescriptions", "describe", "describe_entry", "describe_lazy", "json_pieces"]


def ascending(entries: Mapping[int, Buffer]) -> Iterator[tuple[int, Buffer]]:
    """A slot's (entry index, entry) in ascending index without holding them all: a loaded
    slot's items already are (floating entries); a slot built or changed in memory is sorted."""
    if isinstance(entries, SlotEntries) and entries._table is not None:
        return iter(entries.items())
    return ((i, entries[i]) for i in sorted(entries))


def describe_entry(entry: Buffer, *, crc32: int | None = None) -> dict[str, Any]:
    """One entry of the description (``crc32``: the entry's CRC-32 when already known)."""
    out: dict[str, Any] = {"index": entry.index, "offset": entry.offset, "nbytes": entry.nbytes,
                           "crc32": entry.crc32() if crc32 is None else crc32}
    if isinstance(entry, Tensor) and any(
        v is not None for v in (entry.name, entry.dtype, entry.shape, entry.model_index)
    ):  # bound to a model (which sets all four), or a schema-2 record with any of them
        out.update(name=entry.name, dtype=entry.dtype,
                   shape=list(entry.shape) if entry.shape is not None else None,
                   model_index=entry.model_index)
    return out


class EntryDescriptions:
    """The `describe_entry` of every entry of a tensor list or a slot, in entry order,
    made one at a time on each pass and never kept: what the command line prints for a file of
    millions of entries stays within memory bounded by the file (the entries are floating,
    `onert_checkpoint.format.entries`). The CRC-32 of each entry is computed on the first
    pass and kept (4 bytes an entry), so a second pass does not read the data again."""

    def __init__(self, entries: Iterable[Buffer] | Mapping[int, Buffer]) -> None:
        self._entries = entries
        self._crcs: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._entries)  # type: ignore[arg-type]

    def _pass(self) -> Iterator[Buffer]:
        entries = self._entries
        if isinstance(entries, Mapping):
            return (entry for _, entry in ascending(entries))
        return iter(entries)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        crcs = self._crcs
        if crcs is None:
            made = np.zeros(len(self), np.uint32)
            for k, entry in enumerate(self._pass()):
                out = describe_entry(entry)
                made[k] = out["crc32"]
                yield out
            self._crcs = made
            return
        for k, entry in enumerate(self._pass()):
            yield describe_entry(entry, crc32=int(crcs[k]))


def describe_lazy(ckpt: Checkpoint) -> dict[str, Any]:
    """[`describe`][onert_checkpoint.describe] with `EntryDescriptions` in place of the lists of
    entries: for printing (`json_pieces`) in memory bounded by the file, whatever its entries."""
    opt = ckpt.optimizer
    optimizer = None if opt is None else {
        "kind": opt.kind, "slots": {name: EntryDescriptions(e) for name, e in opt.slots.items()}}
    origin = ckpt.layout.origin  # schema 2's and 3's origin section (SPEC 6.9), or None
    return {"revision": ckpt.revision, "dialect": ckpt.dialect, "file_size": ckpt.file_size,
            "tensors": EntryDescriptions(ckpt.tensors), "optimizer": optimizer,
            # bytes and non-finite floats as TOOLKIT section 1 says (tools/jsonout.py)
            "state": {k: json_value(v) for k, v in ckpt.state.items()},
            "origin": None if origin is None else {
                k: origin[k] for k in ("revision", "dialect", "num_entries", "footerless")}}


def describe(ckpt: Checkpoint) -> dict[str, Any]:
    """``{"revision", "dialect", "file_size", "tensors", "optimizer", "state", "origin"}``."""
    return _listed(describe_lazy(ckpt))


def _listed(value: Any) -> Any:
    if isinstance(value, EntryDescriptions):
        return list(value)
    if isinstance(value, dict):
        return {k: _listed(v) for k, v in value.items()}
    return value
