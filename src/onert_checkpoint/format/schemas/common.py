"""Construct pieces shared by the revisions."""

from __future__ import annotations

import numpy as np
from construct import Adapter, Bytes

__all__ = ["OffsetTable"]


class OffsetTable(Adapter):
    """``count`` little-endian u32 values, parsed to and built from a NumPy array in one step.

    Equivalent to ``Array(count, Int32ul)``, without one Python call per entry.
    """

    def __init__(self, count) -> None:  # count: an int or a context lambda such as this.n
        self._count = count
        super().__init__(Bytes(lambda ctx: 4 * (count(ctx) if callable(count) else count)))

    def _decode(self, obj, context, path):
        return np.frombuffer(obj, dtype="<u4").astype(np.int64)

    def _encode(self, obj, context, path):
        arr = np.asarray(obj, dtype=np.int64)
        if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
            raise ValueError("offset does not fit in u32")
        return arr.astype("<u4").tobytes()
