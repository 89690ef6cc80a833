"""A checkpoint as named arrays plus string metadata: the common ground of NumPy, safetensors
and PyTorch.

Names: a weight is ``<name>``, its optimizer slots ``<name>.m`` and ``<name>.v``; ``<name>`` is
the circle tensor name when the entries are named (a model was bound) and the entry index
otherwise. The metadata (all strings, as safetensors requires) carries what the arrays cannot:
revision, dialect, table length, optimizer kind, training state, and where each entry's data
sat in the file, and (schema 2) each tensor's name, dtype, shape and model index and the
content's origin, so that ``from_numpy_dict(*to_numpy_dict(ckpt, metadata=True))`` writes the
original file back byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..format.errors import error_for
from ..format.model import OPTIMIZER_SLOTS, Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..format.typed import typed_view

__all__ = [
    "FORMAT_NAME",
    "checkpoint_metadata",
    "from_npz",
    "from_numpy_dict",
    "to_npz",
    "to_numpy_dict",
]

#: The ``format`` metadata value that marks an export of this package.
FORMAT_NAME = "onert-checkpoint"
#: npz member names that carry the metadata: ``__metadata__.<key>`` (0-d string arrays).
NPZ_META_PREFIX = "__metadata__."


def _fail(message: str) -> Exception:
    return error_for("not_representable", None, None, message)


def _keys(ckpt: Checkpoint) -> dict[int, str]:
    """Entry index -> export name: tensor names when all are present and unique, else indices."""
    names = [t.name for t in ckpt.tensors]
    slots = ckpt.optimizer.slot_names if ckpt.optimizer is not None else ()
    usable = all(names) and len(set(names)) == len(names)
    if usable:
        taken = set(names)
        usable = not any(f"{n}.{s}" in taken for n in names for s in slots)  # type: ignore[str-format]
    if usable:
        return {t.index: str(t.name) for t in ckpt.tensors}
    return {t.index: str(t.index) for t in ckpt.tensors}


def _json_value(value: object) -> object:
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _state_from_json(obj: Mapping[str, Any]) -> TrainingState:
    state = TrainingState()
    for key, value in obj.items():
        if isinstance(value, dict) and set(value) == {"bytes"}:
            value = bytes.fromhex(value["bytes"])
        state[key] = value
    return state


def checkpoint_metadata(ckpt: Checkpoint) -> dict[str, str]:
    """The string metadata that, with the arrays, makes an export lossless."""
    keys = _keys(ckpt)
    offsets: dict[str, int] = {}
    for t in ckpt.tensors:
        if t.offset is not None:
            offsets[keys[t.index]] = t.offset
    if ckpt.optimizer is not None:
        for slot, entries in ckpt.optimizer.slots.items():
            for i, entry in entries.items():
                if entry.offset is not None:
                    offsets[f"{keys[i]}.{slot}"] = entry.offset
    meta = {
        "format": FORMAT_NAME,
        "revision": ckpt.revision,
        "num_entries": str(ckpt.table_length),
        "optimizer": ckpt.optimizer.kind if ckpt.optimizer is not None else "none",
        "state": json.dumps({k: _json_value(v) for k, v in ckpt.state.items()}),
        "entries": json.dumps({keys[t.index]: t.index for t in ckpt.tensors}),
        "offsets": json.dumps(offsets),
    }
    described = {
        keys[t.index]: {
            "name": t.name, "dtype": t.dtype,
            "shape": None if t.shape is None else list(t.shape), "model_index": t.model_index,
        }
        for t in ckpt.tensors
        if (t.name, t.dtype, t.shape, t.model_index) != (None, None, None, None)
    }
    if described:
        meta["tensors"] = json.dumps(described)
    if ckpt.dialect is not None:
        meta["dialect"] = ckpt.dialect
    origin = getattr(ckpt, "origin", None)
    if origin is not None:
        meta["origin"] = json.dumps(origin)
    if ckpt.quirks:
        meta["quirks"] = json.dumps(list(ckpt.quirks))
    return meta


def to_numpy_dict(ckpt: Checkpoint, *, metadata: bool = False) -> Any:
    """The weights and optimizer slots of ``ckpt`` as ``{name: array}``.

    Arrays are typed and shaped when the entries are named after a model (see
    :func:`~onert_checkpoint.bind`), flat uint8 otherwise; they are views on the
    checkpoint's data. With ``metadata=True`` returns ``(arrays, metadata)``.

    >>> import onert_checkpoint as oc
    >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
    >>> arrays, meta = oc.to_numpy_dict(ckpt, metadata=True)
    >>> sorted(arrays)[:4], arrays["0"].dtype, meta["optimizer"], meta["state"]
    (['0', '0.m', '0.v', '1'], dtype('uint8'), 'adam', '{"step": 8, "epoch": 0}')
    >>> oc.to_bytes(oc.from_numpy_dict(arrays, meta)) == oc.to_bytes(ckpt)
    True
    """
    keys = _keys(ckpt)
    arrays: dict[str, np.ndarray] = {}
    for t in ckpt.tensors:
        arrays[keys[t.index]] = typed_view(t.raw, t.dtype, t.shape)
    if ckpt.optimizer is not None:
        for slot, entries in ckpt.optimizer.slots.items():
            for i, entry in sorted(entries.items()):
                t = ckpt[i]
                same = entry.nbytes == t.nbytes
                arrays[f"{keys[i]}.{slot}"] = typed_view(
                    entry.raw, t.dtype if same else None, t.shape if same else None
                )
    if metadata:
        return arrays, checkpoint_metadata(ckpt)
    return arrays


def _raw(arr: np.ndarray) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


def _split(name: str, slots: tuple[str, ...]) -> tuple[str, str | None]:
    for slot in slots:
        if name.endswith("." + slot):
            return name[: -len(slot) - 1], slot
    return name, None


def from_numpy_dict(
    arrays: Mapping[str, Any],
    metadata: Mapping[str, str] | None = None,
    *,
    entries: Mapping[str, int] | None = None,
) -> Checkpoint:
    """Build a checkpoint from ``{name: array}`` (the inverse of :func:`to_numpy_dict`).

    Entry indices come from ``metadata["entries"]``, else from ``entries`` (name -> index),
    else from the names themselves, which must then be entry indices ("0", "0.m", ...). Without
    metadata the optimizer is Adam when there are ``.m``/``.v`` arrays and SGD otherwise, and
    the state is empty. Any array-like works (NumPy, or PyTorch CPU tensors via ``.numpy()``).
    """
    meta = dict(metadata or {})
    if meta.get("format", FORMAT_NAME) != FORMAT_NAME:
        raise _fail(f"metadata format is {meta['format']!r}, not {FORMAT_NAME!r}")
    kind = meta.get("optimizer")
    if kind is None:
        kind = "adam" if any(_split(n, ("m", "v"))[1] for n in arrays) else "sgd"
    slot_names = OPTIMIZER_SLOTS.get(kind, ())
    if "entries" in meta:
        index_of: dict[str, int] = {k: int(v) for k, v in json.loads(meta["entries"]).items()}
    elif entries is not None:
        index_of = {k: int(v) for k, v in entries.items()}
    else:
        index_of = {}
        for name in arrays:
            base, _ = _split(name, slot_names)
            if not base.isdigit():
                raise _fail(
                    f"array {name!r} is not named by an entry index; give the model or entries"
                )
            index_of[base] = int(base)
    offsets = {k: int(v) for k, v in json.loads(meta.get("offsets", "{}")).items()}
    described = json.loads(meta.get("tensors", "{}"))
    tensors: list[Tensor] = []
    optimizer = None if kind == "none" else Optimizer(kind)
    for name, value in arrays.items():
        base, slot = _split(name, slot_names)
        if base not in index_of:
            raise _fail(f"array {name!r} names no entry")
        index = index_of[base]
        arr = np.asarray(value)
        raw = _raw(arr)
        if slot is None:
            tensor = Tensor(index=index, data=raw, offset=offsets.get(name))
            if base in described:
                info = described[base]
                tensor.name, tensor.dtype = info.get("name"), info.get("dtype")
                shape = info.get("shape")
                tensor.shape = None if shape is None else tuple(shape)
                tensor.model_index = info.get("model_index")
            elif arr.dtype != np.uint8:
                tensor.name = base if base != str(index) else None
                tensor.dtype, tensor.shape = str(arr.dtype.newbyteorder("=")), tuple(arr.shape)
            elif base != str(index):
                tensor.name = base
            tensors.append(tensor)
        else:
            if optimizer is None:
                raise _fail(f"array {name!r} is optimizer state, but the optimizer is none")
            optimizer.slots.setdefault(slot, {})[index] = Buffer(index, raw, offsets.get(name))
    num_entries = int(meta["num_entries"]) if "num_entries" in meta else None
    ckpt = Checkpoint(
        tensors=tensors,
        optimizer=optimizer,
        state=_state_from_json(json.loads(meta.get("state", "{}"))),
        revision=meta.get("revision", "v1"),
        dialect=meta.get("dialect"),
        num_entries=num_entries,
        quirks=tuple(json.loads(meta.get("quirks", "[]"))),
    )
    if "origin" in meta:
        ckpt.origin = json.loads(meta["origin"])
    return ckpt


def to_npz(ckpt: Checkpoint, path: str | os.PathLike[str]) -> None:
    """Write the arrays and metadata of ``ckpt`` to a NumPy ``.npz`` file.

    The metadata travel as 0-d string arrays named ``__metadata__.<key>``.
    """
    arrays, meta = to_numpy_dict(ckpt, metadata=True)
    members = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    for key, value in meta.items():
        members[NPZ_META_PREFIX + key] = np.array(value)
    np.savez(os.fspath(path), **members)  # type: ignore[arg-type]


def from_npz(path: str | os.PathLike[str], **options: Any) -> Checkpoint:
    """Read a checkpoint written by :func:`to_npz` (or any npz of named arrays)."""
    with np.load(os.fspath(path), allow_pickle=False) as npz:
        arrays, meta = {}, {}
        for key in npz.files:
            if key.startswith(NPZ_META_PREFIX):
                meta[key[len(NPZ_META_PREFIX) :]] = str(npz[key][()])
            else:
                arrays[key] = npz[key]
    return from_numpy_dict(arrays, meta, **options)
