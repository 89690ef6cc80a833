"""An entry's bytes as the typed array they encode."""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["typed_view"]


def typed_view(raw: np.ndarray, dtype: str | None, shape: tuple[int, ...] | None) -> np.ndarray:
    """``raw`` (flat uint8) as ``dtype`` and ``shape`` when the sizes allow it, else as bytes."""
    if dtype is None:
        return raw
    try:
        dt = np.dtype(dtype)
        if sys.byteorder != "little" or dt.byteorder == ">":
            dt = dt.newbyteorder("<")  # files are little-endian
    except TypeError:
        return raw
    if dt.itemsize == 0 or raw.nbytes % dt.itemsize:
        return raw
    arr = raw.view(dt)
    if shape is not None and int(np.prod(shape, dtype=np.int64)) == arr.size:
        arr = arr.reshape(shape)
    return arr
