"""Checked assignment of an entry's data: the new data keep the entry's size, type and shape.

The model fixes an entry's size (SPEC rule 10), so ``tensor.data = x`` keeps it, and a typed
entry's element type and shape, converting by :func:`cast_for_entry` (as ``edit --replace``).
Anything else is a :class:`~.errors.CheckpointError` naming the tensor, raised at the
assignment, not at save time or as a file its model no longer reads.
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol

import numpy as np

from .errors import error_for

__all__ = ["cast_for_entry", "check_assignment"]


class Entry(Protocol):
    """What an assignment reads of its entry (model.Buffer and model.Tensor have it)."""

    index: int

    @property
    def data(self) -> Any: ...

    def _what(self) -> str: ...


#: The casting rule in words, for messages.
CAST_RULE = "NumPy's same_kind casting, every value kept exactly"


def _describe(arr: np.ndarray) -> str:
    return f"{arr.dtype}{list(arr.shape)}"


def _lossless(value: np.ndarray, dtype: np.dtype) -> np.ndarray | None:
    """``value`` as ``dtype`` when every element survives the conversion exactly, else None."""
    if value.dtype == dtype:
        return value
    if value.dtype.kind not in "biufc" or dtype.kind not in "biufc":
        return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        converted = value.astype(dtype)
        back = converted.astype(value.dtype)
    nan = value.dtype.kind in "fc" and dtype.kind in "fc"
    return converted if np.array_equal(back, value, equal_nan=nan) else None


def cast_for_entry(value: np.ndarray, dtype: np.dtype, *,
                   python_numbers: bool = False) -> np.ndarray | None:
    """``value`` as ``dtype`` by the one rule every write of new values follows (the API's
    ``entry.data = x`` and the command line's ``edit --replace``), or None when refused.

    An array casts when NumPy's ``same_kind`` casting allows it (float64 to float32, not float
    to int) and every value survives exactly; for ``python_numbers`` (which have no NumPy type
    of their own) the values alone decide.
    """
    if not python_numbers and not np.can_cast(value.dtype, dtype, "same_kind"):
        return None
    return _lossless(value, dtype)


def check_assignment(entry: Entry, value: object) -> np.ndarray:
    """``value`` as the new data of ``entry``: same size; for a typed entry, same element type
    (converted when lossless) and shape. Raises a CheckpointError naming the entry."""
    current = entry.data
    what = entry._what()

    def refused(code: str, message: str) -> Exception:
        return error_for(code, f"weights[{entry.index}]", None, what + message)

    if current is None or not isinstance(current, np.ndarray):
        # an entry built in memory around something that is not an array: anything goes
        return value if isinstance(value, np.ndarray) else np.asarray(value)
    # A tensor without a dtype (no model, no schema-2 record type) is bytes whatever array
    # it was last given; other entries are typed when their data are.
    untyped = getattr(entry, "dtype", "") is None
    raw_target = untyped or (current.dtype == np.uint8 and current.ndim == 1)
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        arr = np.frombuffer(memoryview(value).cast("B"), dtype=np.uint8)
    else:
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError) as exc:
            raise refused("not_representable", f": the new data is not an array: {exc}") from None
        if raw_target and arr.dtype != np.uint8 and arr.dtype.kind in "biuf":
            # numbers for a raw (bytes) entry are byte values: converted when each fits
            converted = _lossless(arr.reshape(-1), np.dtype(np.uint8))
            if converted is None:
                raise refused("not_representable", " holds raw bytes; the new values are not all "
                              "whole numbers 0..255")
            arr = converted
    if arr.dtype.hasobject or arr.dtype.kind not in "biufcV":
        raise refused("not_representable", f": cannot hold data of type {arr.dtype}")
    # The entry's bytes, whatever the element type, are always accepted as flat uint8: that
    # is what the file holds (and what typed entries are views of).
    if arr.dtype == np.uint8 and arr.ndim == 1 and arr.nbytes == current.nbytes:
        if not raw_target and current.dtype.itemsize:
            typed = np.ascontiguousarray(arr).view(current.dtype)
            return typed.reshape(current.shape) if typed.size == current.size else typed
        return arr
    if raw_target:
        if arr.nbytes != current.nbytes:
            raise refused("not_representable", f" holds {current.nbytes} bytes; the new data "
                          f"({_describe(arr)}) has {arr.nbytes} (an entry keeps its size: its "
                          "model and optimizer state fix it)")
        return arr
    if arr.shape != current.shape:
        raise refused("model_mismatch",
                      f" is {_describe(current)}; the new data is {_describe(arr)}")
    converted = cast_for_entry(arr, current.dtype, python_numbers=not isinstance(value, np.ndarray))
    if converted is None:
        raise refused("model_mismatch", f" is {_describe(current)}; the new data "
                      f"({_describe(arr)}) does not convert to {current.dtype} without loss "
                      f"({CAST_RULE})")
    return converted
