"""The JSON description of a checkpoint: the stable contract of ``onert-ckpt info --json``.

The conformance vectors and the reference C reader produce exactly this object (spec/SPEC.md,
"The JSON description").
"""

from __future__ import annotations

from typing import Any

from ..format.model import Buffer, Checkpoint, Tensor, is_schema2_family
from .jsonout import json_value

__all__ = ["describe", "describe_entry"]


def describe_entry(entry: Buffer) -> dict[str, Any]:
    out: dict[str, Any] = {
        "index": entry.index,
        "offset": entry.offset,
        "nbytes": entry.nbytes,
        "crc32": entry.crc32(),
    }
    if isinstance(entry, Tensor) and any(
        v is not None for v in (entry.name, entry.dtype, entry.shape, entry.model_index)
    ):  # bound to a model (which sets all four), or a schema-2 record with any of them
        out["name"] = entry.name
        out["dtype"] = entry.dtype
        out["shape"] = list(entry.shape) if entry.shape is not None else None
        out["model_index"] = entry.model_index
    return out


def _state_value(value: object) -> object:
    """A state value as JSON (spec/SPEC.md section 9): bytes as ``{"bytes": hex}``, a
    non-finite float as ``{"float": "nan" | "inf" | "-inf"}``, which JSON has no number for."""
    return json_value(value)  # the one convention of every JSON output (tools/jsonout.py)


def _origin(origin: dict[str, object] | None) -> dict[str, object] | None:
    """Schema 2's (and 3's) origin section (SPEC 6.4.6) as ``{"revision", "dialect", "num_entries",
    "footerless"}``; null without one (and always for schema 1 and WOF)."""
    if origin is None:
        return None
    return {
        "revision": origin["revision"],
        "dialect": origin["dialect"],
        "num_entries": origin["num_entries"],
        "footerless": origin["footerless"],
    }


def describe(ckpt: Checkpoint) -> dict[str, Any]:
    """``{"revision", "dialect", "file_size", "tensors", "optimizer", "state", "origin"}``."""
    optimizer = None
    if ckpt.optimizer is not None:
        optimizer = {
            "kind": ckpt.optimizer.kind,
            "slots": {
                name: [describe_entry(entries[i]) for i in sorted(entries)]
                for name, entries in ckpt.optimizer.slots.items()
            },
        }
    return {
        "revision": ckpt.revision,
        "dialect": ckpt.dialect,
        "file_size": ckpt.file_size,
        "tensors": [describe_entry(t) for t in ckpt.tensors],
        "optimizer": optimizer,
        "state": {k: _state_value(v) for k, v in ckpt.state.items()},
        "origin": _origin(ckpt.origin if is_schema2_family(ckpt.revision) else None),
    }
