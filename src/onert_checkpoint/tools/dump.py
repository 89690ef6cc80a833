"""Tensor values for display: an entry's bytes as the array they encode."""

from __future__ import annotations

import numpy as np

from ..format.model import Buffer, Checkpoint, Tensor
from ..format.typed import typed_view
from ..suggestions import did_you_mean
from .render import safe_text

__all__ = ["find_tensor", "no_entry_message", "tensor_values"]


def find_tensor(ckpt: Checkpoint, key: str | int) -> Tensor | None:
    """The tensor named ``key``, else the entry whose index ``key`` is (an int or its decimal
    text), else None. One pass over the entries."""
    if isinstance(key, str):
        named = next((t for t in ckpt.tensors if t.name == key), None)
        if named is not None or not (key.isascii() and key.isdigit()):
            return named
        key = int(key)
    return next((t for t in ckpt.tensors if t.index == key), None)


def tensor_values(ckpt: Checkpoint, tensor: Tensor, *, slot: str | None = None,
                  dtype: str | None = None) -> np.ndarray:
    """The values of ``tensor`` (``slot`` None) or of one of its optimizer slots.

    The dtype is ``dtype`` if given, else the tensor's (a model bound, or a schema-2 record),
    else none is known and the values are the raw bytes (flat uint8), as ``export`` writes
    them: typed when the type is known, clearly raw otherwise. The shape is the tensor's when
    it fits. Constant time: no search of the entries.
    """
    entry: Buffer = tensor
    if slot is not None:
        slots = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
        slot_entry = slots.get(slot, {}).get(tensor.index)
        if slot_entry is None:
            kind = ckpt.optimizer.kind if ckpt.optimizer else "no"
            raise KeyError(f"entry {tensor.index} has no {slot!r} slot ({kind} optimizer)")
        entry = slot_entry
    chosen = dtype or tensor.dtype or "uint8"
    return typed_view(entry.raw, chosen, tensor.shape if dtype in (None, tensor.dtype) else None)


def no_entry_message(ckpt: Checkpoint, key: str, model: str | None) -> str:
    """``no entry KEY``, with what the user can do: the valid keys, and ``--model`` for names."""
    names = [t.name for t in ckpt.tensors if t.name is not None]
    shown = names if names else [str(t.index) for t in ckpt.tensors]
    listed = ", ".join(safe_text(k) for k in shown[:10]) + (", ..." if len(shown) > 10 else "")
    message = f"no entry {safe_text(key)!r} (entries: {listed or 'none'})"
    if hint := did_you_mean(key, names):
        message += f": {safe_text(hint)}"
    if not names and model is None and not (key.isascii() and key.isdigit()):
        message += "; tensor names need the model: add --model MODEL.circle"
    return message
