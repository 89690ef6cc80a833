"""Tensor values for display: an entry's bytes as the array they encode."""

from __future__ import annotations

import numpy as np

from ..format.model import Buffer, Checkpoint
from ..format.typed import typed_view

__all__ = ["entry_key", "values"]


def entry_key(ckpt: Checkpoint, key: str | int) -> int | str:
    """``key`` as the checkpoint's mapping takes it: a name, or an entry index given as text."""
    if isinstance(key, str):
        if any(t.name == key for t in ckpt.tensors):
            return key
        if key.isdigit():
            return int(key)
    return key


def values(
    ckpt: Checkpoint, key: str | int, *, slot: str | None = None, dtype: str | None = None
) -> np.ndarray:
    """The values of an entry (``slot`` None) or of one of its optimizer slots.

    The dtype is ``dtype`` if given, else the tensor's (when a model named it), else float32
    when the size is a multiple of 4, else uint8; the shape is the tensor's when it fits.

    >>> import onert_checkpoint as oc
    >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
    >>> values(ckpt, 3).dtype, values(ckpt, 3).shape, values(ckpt, 3, slot="v").shape
    (dtype('float32'), (3,), (3,))
    """
    tensor = ckpt[entry_key(ckpt, key)]
    entry: Buffer | None = tensor
    if slot is not None:
        entry = ckpt.slot(slot, tensor.index)
        if entry is None:
            kind = ckpt.optimizer.kind if ckpt.optimizer else "no"
            raise KeyError(f"entry {tensor.index} has no {slot!r} slot ({kind} optimizer)")
    assert entry is not None
    chosen = dtype or tensor.dtype
    if chosen is None:
        chosen = "float32" if entry.nbytes % 4 == 0 else "uint8"
    return typed_view(entry.raw, chosen, tensor.shape if dtype in (None, tensor.dtype) else None)
