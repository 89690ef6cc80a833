"""Numbers about the values of each entry: min, max, mean, std, NaN and Inf counts, the zero
fraction, histograms; ``onert-ckpt info --stats`` and ``onert-ckpt plot``.

Every figure is computed a chunk of :data:`CHUNK` elements at a time over the entry's (mapped)
data, never a copy of the whole tensor: the memory of a statistic does not grow with the file.
Values are read as the entry's dtype when known (a model was given, or a schema-2 record says
it), else as float32 when the size allows (onert's weights and optimizer state are float32),
else as bytes; ``dtype`` in the result says which. min, max, mean and std are those of the
finite values (NaN and Inf are counted, not averaged); None when there is none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..format.model import Buffer, Checkpoint
from ..format.typed import typed_view

__all__ = ["CHUNK", "EntryStats", "checkpoint_entries", "chunks", "entry_stats", "entry_values",
           "histogram"]

#: Elements per step: a few MiB of float64 temporaries, whatever the entry's size.
CHUNK = 1 << 18


def entry_values(entry: Buffer, dtype: str | None) -> np.ndarray:
    """The entry's values, flat: ``dtype``, else float32 when the size allows, else bytes."""
    if dtype is None and entry.nbytes % 4 == 0:
        dtype = "float32"
    return typed_view(entry.raw, dtype, None).reshape(-1)


def chunks(values: np.ndarray) -> Iterator[np.ndarray]:
    """``values`` as float64 (complex: their magnitude), :data:`CHUNK` elements at a time."""
    for start in range(0, values.size, CHUNK):
        part = values[start : start + CHUNK]
        yield np.abs(part) if part.dtype.kind == "c" else part.astype(np.float64)


@dataclass(frozen=True)
class EntryStats:
    """The figures of one entry (``slot``: ``weights`` or an optimizer slot name)."""

    index: int
    name: str | None
    slot: str
    dtype: str
    count: int
    min: float | None
    max: float | None
    mean: float | None
    std: float | None
    nan: int
    inf: int
    zeros: float | None  # fraction of the values that are zero; None for an empty entry


def entry_stats(entry: Buffer, dtype: str | None, *, name: str | None = None,
                slot: str = "weights") -> EntryStats:
    """:class:`EntryStats` of ``entry``, one chunk at a time (Chan's pairwise update of the
    mean and the sum of squared deviations, in float64). Values beyond 2**500 (float64 data)
    are scaled by a power of two first, so that no square or sum overflows to inf or NaN."""
    values = entry_values(entry, dtype)
    n, mean, m2, scale = 0, 0.0, 0.0, 1.0
    lo, hi = np.inf, -np.inf
    nan = inf = zeros = 0
    for x in chunks(values):
        finite = x[np.isfinite(x)]
        nan += int(np.isnan(x).sum())
        inf += x.size - finite.size - int(np.isnan(x).sum())
        zeros += int((x == 0).sum())
        if not finite.size:
            continue
        lo, hi = min(lo, float(finite.min())), max(hi, float(finite.max()))
        top = np.frexp(max(-lo, hi))[1]
        if top > 500 and scale != 2.0 ** -top:  # rescale what is summed so far, exactly
            ratio = 2.0 ** -top / scale
            mean, m2, scale = mean * ratio, m2 * ratio * ratio, 2.0 ** -top
        finite = finite * scale if scale != 1.0 else finite
        k, m = finite.size, float(finite.mean())
        delta, total = m - mean, n + k
        mean += delta * k / total
        m2 += float(((finite - m) ** 2).sum()) + delta * (delta * (n * k / total))
        n = total
    some = n > 0
    return EntryStats(entry.index, name, slot, str(values.dtype), int(values.size),
                      lo if some else None, hi if some else None, mean / scale if some else None,
                      float(np.sqrt(m2 / n)) / scale if some else None, nan, inf,
                      zeros / values.size if values.size else None)


def histogram(entry: Buffer, dtype: str | None, edges: np.ndarray) -> np.ndarray:
    """Counts of the entry's finite values between ``edges``, a chunk at a time."""
    counts = np.zeros(len(edges) - 1, np.int64)
    for x in chunks(entry_values(entry, dtype)):
        counts += np.histogram(x[np.isfinite(x)], bins=edges)[0]
    return counts


def checkpoint_entries(ckpt: Checkpoint) -> Iterator[tuple[Buffer, str | None, str | None, str]]:
    """(entry, its dtype, its tensor's name, slot) of every weight and optimizer slot entry, a
    tensor's slots right after it."""
    slots = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
    for tensor in ckpt.tensors:
        yield tensor, tensor.dtype, tensor.name, "weights"
        for slot, entries in slots.items():
            entry = entries.get(tensor.index)
            if entry is not None:
                yield entry, tensor.dtype, tensor.name, slot


def checkpoint_stats(ckpt: Checkpoint) -> Iterator[EntryStats]:
    """:func:`entry_stats` of every entry (:func:`checkpoint_entries`), one at a time; the
    data checks load defers run first (no figure of data that fails its checksum)."""
    ckpt.verify()
    for entry, dtype, name, slot in checkpoint_entries(ckpt):
        yield entry_stats(entry, dtype, name=name, slot=slot)
