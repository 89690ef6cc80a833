"""An entry's bytes as the typed array they encode (files are little-endian)."""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["little_endian_dtype", "shaped", "typed_geometry", "typed_view"]


@functools.cache
def little_endian_dtype(name: str) -> np.dtype | None:
    """NumPy's little-endian dtype of that name, or None (circle types NumPy lacks: int4...)."""
    try:
        dt = np.dtype(name)
    except TypeError:
        return None
    # On a little-endian machine the native dtype already reads the file's bytes (and prints
    # as "float32"); elsewhere the explicit little-endian one does.
    return dt if np.little_endian or dt.itemsize == 1 else dt.newbyteorder("<")


def _element_type(dtype: str | None, nbytes: int) -> np.dtype | None:
    """What ``nbytes`` bytes of ``dtype`` are viewed as: None for bytes (no dtype, one NumPy
    lacks, or a size its elements do not divide)."""
    dt = little_endian_dtype(dtype) if dtype is not None else None
    return None if dt is None or dt.itemsize == 0 or nbytes % dt.itemsize else dt


def typed_view(raw: np.ndarray, dtype: str | None, shape: tuple[int, ...] | None) -> np.ndarray:
    """``raw`` (flat uint8) as ``dtype`` and ``shape`` when the sizes allow it, else as bytes:
    a view, never a copy. A shape whose element count differs from the data's is not applied."""
    dt = _element_type(dtype, raw.nbytes)
    return raw if dt is None else shaped(raw.view(dt), shape)


def shaped(arr: np.ndarray, shape: tuple[int, ...] | None) -> np.ndarray:
    """``arr`` in ``shape`` when its element count is the array's, else as it is."""
    if shape is not None and math.prod(shape) == arr.size:
        try:
            return arr.reshape(shape)
        except ValueError:  # an empty shape with dims NumPy cannot index: kept flat
            pass
    return arr


def typed_geometry(nbytes: int, dtype: str | None,
                   shape: tuple[int, ...] | None) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape :func:`typed_view` gives ``nbytes`` bytes, without the bytes: an
    entry's array geometry is known before its data are read (or checked)."""
    dt = _element_type(dtype, nbytes)
    if dt is None:
        return np.dtype(np.uint8), (nbytes,)
    size = nbytes // dt.itemsize
    if not size:
        return dt, shaped(np.empty(0, dt), shape).shape
    return dt, tuple(shape) if shape is not None and math.prod(shape) == size else (size,)


class DTypeName(str):
    """An element type's name (``"float32"``) that also equals NumPy's spelling of the type
    (``np.float32``, ``np.dtype("<f4")``), as an array's ``dtype`` does; hashes as the name."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str) or other is None:
            return str.__eq__(self, other) is True
        try:
            return bool(np.dtype(str(self)) == np.dtype(other))  # type: ignore[call-overload]
        except TypeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def dtype_name(name: str | None) -> str | None:
    """``name`` as a :class:`DTypeName` (one object per name), None as None."""
    if name is None or type(name) is DTypeName:
        return name
    return _dtype_name(name)


_dtype_name = functools.cache(DTypeName)
