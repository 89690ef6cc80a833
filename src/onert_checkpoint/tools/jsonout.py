"""Strict JSON (RFC 8259) for every ``--json`` output and every JSON metadata string.

JSON has no number for NaN or the infinities and no bytes type, so values are written by type,
the convention of spec/TOOLKIT.md section 1 (the JSON description): a finite float is a JSON
number, a non-finite float is ``{"float": "nan" | "inf" | "-inf"}`` (every NaN, whatever its
sign and payload, is ``"nan"``), bytes are ``{"bytes": "<lower-case hex>"}``. NumPy scalars
become the Python numbers they hold. The output is ASCII (``ensure_ascii``): a string read from
a file can carry no control byte to a terminal, only its ``\\uXXXX`` escape.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

__all__ = ["dumps", "json_pieces", "json_value"]


_PLAIN = frozenset([str, int, bool, type(None)])


def json_value(value: Any) -> Any:
    """``value`` (nested dicts, lists, tuples, dataclass ``__dict__``s) made writable as strict
    JSON by the convention above. Keys are made strings, as JSON requires."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, (float, int)):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_value(v) for v in value.tolist()]
    return str(value)


def dumps(obj: Any) -> str:
    """``obj`` as one line of strict, ASCII JSON (``allow_nan=False``: a non-finite float that
    escaped :func:`json_value` is a bug, and fails loudly here rather than writing ``NaN``)."""
    try:  # already plain (to_dict() results are): no second walk over a large object
        return json.dumps(obj, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(json_value(obj), ensure_ascii=True, allow_nan=False)


def json_pieces(value: Any) -> Iterator[str]:
    """The text of :func:`dumps` in pieces: a dict a value at a time, and the items of an
    iterable that is not a list, tuple or string (a generator, rows made as they are read) one
    at a time, so that an output of millions of rows is written without being held whole."""
    if isinstance(value, dict):
        yield "{"
        for k, (key, item) in enumerate(value.items()):
            yield (", " if k else "") + json.dumps(str(key)) + ": "
            yield from json_pieces(item)
        yield "}"
    elif isinstance(value, Iterable) and not isinstance(value, _WHOLE):
        yield "["
        for k, item in enumerate(value):
            yield (", " if k else "") + dumps(item)
        yield "]"
    else:
        yield dumps(value)


#: the iterables written whole, by :func:`dumps`
_WHOLE = (str, bytes, bytearray, memoryview, list, tuple, np.ndarray, Mapping)
