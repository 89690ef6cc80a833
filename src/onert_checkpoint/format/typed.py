"""An entry's bytes as the typed array they encode (files are little-endian)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["little_endian_dtype", "typed_geometry", "typed_view"]

_DTYPES: dict[str, np.dtype | None] = {}


def _little_endian(name: str) -> np.dtype | None:
    """NumPy's little-endian dtype of that name, or None (circle types NumPy lacks: int4...)."""
    if name not in _DTYPES:
        try:
            dt = np.dtype(name)
        except TypeError:
            _DTYPES[name] = None
        else:
            # On a little-endian machine the native dtype already reads the file's bytes (and
            # prints as "float32"); elsewhere the explicit little-endian one does.
            _DTYPES[name] = dt if np.little_endian or dt.itemsize == 1 else dt.newbyteorder("<")
    return _DTYPES[name]


#: the public name: the entry tables type their views with it (format/entries.py)
little_endian_dtype = _little_endian


def typed_view(raw: np.ndarray, dtype: str | None, shape: tuple[int, ...] | None) -> np.ndarray:
    """``raw`` (flat uint8) as ``dtype`` and ``shape`` when the sizes allow it, else as bytes.

    A view, never a copy. A shape whose element count differs from the data's is not applied.
    """
    dt = _little_endian(dtype) if dtype is not None else None
    if dt is None or dt.itemsize == 0 or raw.nbytes % dt.itemsize:
        return raw
    arr = raw.view(dt)
    if shape is not None and math.prod(shape) == arr.size:
        try:
            arr = arr.reshape(shape)
        except ValueError:  # an empty shape with dims NumPy cannot index: kept flat
            pass
    return arr


def typed_geometry(
    nbytes: int, dtype: str | None, shape: tuple[int, ...] | None
) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape :func:`typed_view` gives ``nbytes`` bytes, without the bytes: an
    entry's array geometry is known before its data are read (or checked)."""
    dt = _little_endian(dtype) if dtype is not None else None
    if dt is None or dt.itemsize == 0 or nbytes % dt.itemsize:
        return np.dtype(np.uint8), (nbytes,)
    size = nbytes // dt.itemsize
    if shape is not None and math.prod(shape) == size:
        if size:
            return dt, tuple(shape)
        try:
            return dt, np.empty(0, dt).reshape(shape).shape
        except ValueError:  # as typed_view: kept flat
            pass
    return dt, (size,)


class DTypeName(str):
    """An element type's name (``"float32"``) that also compares equal to NumPy's spelling of
    the same type (``np.float32``, ``np.dtype("<f4")``), as an array's ``dtype`` does: a
    tensor's ``dtype`` is a name (the model's or the file's record's) and still answers
    ``tensor.dtype == np.float32``. Hashes as the plain name, so it keys the same dicts."""

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


_NAMES: dict[str, DTypeName] = {}


def dtype_name(name: str | None) -> str | None:
    """``name`` as a :class:`DTypeName` (one object per name), None as None."""
    if name is None or type(name) is DTypeName:
        return name
    found = _NAMES.get(name)
    if found is None:
        found = _NAMES[name] = DTypeName(name)
    return found
