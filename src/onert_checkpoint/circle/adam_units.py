"""Adam's state in each runtime's units, and the rescale between them (spec/SPEC.md 9.3, B.11).

onert-micro adds a batch's gradients up where onert averages them, so its m is B times onert's
and its v B**2 times (B the batch size, which neither file records). Precision and overflow
rules: docs/onert-micro.md. Each value is rounded once to float32 when the odd part o of B is
below 23171 (o**2 < 2**29): ``x * o**e`` is then exact in float64 and ``x / o**e`` too far from
any float32 midpoint for the second rounding to matter; the power of two is applied exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..format.model import Buffer
from .model import not_representable

__all__ = ["ADAM_POWERS", "MAX_BATCH_SIZE", "check_batch_size", "has_state", "rescale_slots"]

#: The power of B that scales each Adam slot between the runtimes.
ADAM_POWERS = {"m": 1, "v": 2}

#: The largest batch size this library rescales by (an i32; far beyond any device run).
MAX_BATCH_SIZE = 2**31 - 1


def check_batch_size(batch_size: object, what: str = "batch_size") -> int:
    """``batch_size`` as an int in 1..``MAX_BATCH_SIZE``, or a ``not_representable`` error."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise not_representable("batch_size", f"{what} must be a whole number of samples, not "
                                f"{type(batch_size).__name__}")
    value = int(batch_size)
    if not 1 <= value <= MAX_BATCH_SIZE:
        raise not_representable("batch_size", f"{what} {value} is outside 1..{MAX_BATCH_SIZE}")
    return value


def has_state(slots: Mapping[str, Mapping[int, Buffer]]) -> bool:
    """True when some m or v entry holds a non-zero byte (all-zero state has no units)."""
    return any(bool(np.any(b.raw)) for name in ADAM_POWERS for b in slots.get(name, {}).values())


def rescale(values: np.ndarray, batch_size: int, power: int, *, to_micro: bool) -> np.ndarray:
    """float32 ``values`` times ``batch_size**power`` (``to_micro``) or divided by it, each
    rounded once to float32 (see the module's docstring for when that holds)."""
    k = (batch_size & -batch_size).bit_length() - 1  # batch_size = 2**k * an odd number
    odd, shift = float((batch_size >> k) ** power), k * power
    wide = values.astype(np.float64)
    with np.errstate(over="ignore", under="ignore"):
        wide = np.ldexp(wide * odd, shift) if to_micro else np.ldexp(wide / odd, -shift)
        return wide.astype(np.float32)


def rescale_slots(slots: Mapping[str, Mapping[int, Buffer]], batch_size: int, *, to_micro: bool,
                  dtypes: Mapping[int, str | None]) -> dict[str, dict[int, Buffer]]:
    """New m and v buffers (other slots as they are) in the target runtime's units. Only
    float32 state (``dtypes``: each key's weight dtype) is rescaled; non-zero m or v of another
    type, or a value that would overflow, is refused (field ``m[i]`` / ``v[i]``)."""
    out: dict[str, dict[int, Buffer]] = {}
    for name, entries in slots.items():
        power = ADAM_POWERS.get(name)
        if power is None or batch_size == 1:
            out[name] = dict(entries)
            continue
        scaled: dict[int, Buffer] = {}
        for key, buf in entries.items():
            raw = buf.raw
            if raw.size == 0 or not np.any(raw):
                scaled[key] = buf
                continue
            if dtypes.get(key) != "float32" or raw.size % 4:
                raise not_representable(
                    f"{name}[{buf.index}]", f"Adam {name} of entry {buf.index} is "
                    f"{dtypes.get(key) or 'untyped'} ({raw.size} bytes), not float32: its rescale "
                    "by the batch size is not defined")
            values = raw.view("<f4")
            result = rescale(values, batch_size, power, to_micro=to_micro)
            grown = np.isinf(result) & np.isfinite(values)
            if grown.any():
                first = int(np.argmax(grown))
                raise not_representable(
                    f"{name}[{buf.index}]", f"Adam {name} of entry {buf.index}, element {first} "
                    f"({float(values[first])!r}) times {batch_size}**{power} overflows float32")
            scaled[key] = Buffer(index=buf.index, data=result.view(np.uint8), offset=buf.offset)
        out[name] = scaled
    return out
