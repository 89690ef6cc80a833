"""Value sanity: corruptions a structural check cannot see.

Schema 1 has no checksum, so a file whose weights were overwritten with garbage is still valid.
These checks look at the values: a NaN or an infinity in a weight or an optimizer slot (a
diverged run, or bytes that were never floats), a negative value in Adam's ``v`` (a running mean
of squares cannot be negative), and Adam state that is not zero at step 0 (a fresh optimizer has
none; onert and onert-micro count the step from 1). They are warnings: ``validate`` reports
them and exits 0, ``validate --strict`` fails on them.

Entries are read as their dtype when a model (or a schema-2 record) gives it, otherwise as
float32, the type of every trainable tensor both runtimes train; only floating-point data is
checked.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..format.model import Buffer, Checkpoint

__all__ = ["ValueWarning", "value_warnings"]

_FLOAT_DTYPES = ("float16", "float32", "float64")


@dataclass(frozen=True)
class ValueWarning:
    """One finding: ``code``, the entry it is about (``field``, e.g. ``v[3]``) and a message."""

    code: str
    field: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _floats(buf: Buffer, dtype: str | None) -> np.ndarray | None:
    name = dtype or "float32"
    if name not in _FLOAT_DTYPES:
        return None
    item = np.dtype(name).newbyteorder("<")
    raw = buf.raw
    usable = raw.nbytes - raw.nbytes % item.itemsize
    return raw[:usable].view(item)


def _labels(ckpt: Checkpoint) -> dict[int, str]:
    """Entry index -> `` ('name')`` of the first named tensor with that index: built once, so
    that labelling a finding is a lookup, not a scan of every tensor (which made ``validate``
    quadratic in the entries)."""
    out: dict[int, str] = {}
    for index, name in zip(ckpt.tensors.indices(), ckpt.tensors.names()):
        if name and index not in out:
            out[index] = f" ({name!r})"
    return out


def value_warnings(ckpt: Checkpoint) -> list[ValueWarning]:
    """Every value finding in ``ckpt``, weights first, then each slot, in entry order."""
    found: list[ValueWarning] = []
    dtypes = {t.index: t.dtype for t in ckpt.tensors}
    labels = _labels(ckpt)
    for t in ckpt.tensors:
        values = _floats(t, t.dtype)
        if values is not None:
            bad = ~np.isfinite(values)
            if bad.any():
                found.append(ValueWarning(
                    "non_finite_weight", f"weights[{t.index}]",
                    f"entry {t.index}{labels.get(t.index, '')} holds {int(bad.sum())} NaN or "
                    f"infinite values (first at element {int(np.argmax(bad))})",
                ))
    if ckpt.optimizer is None:
        return found
    adam = ckpt.optimizer.kind == "adam"
    nonzero_at_zero: list[str] = []
    for slot, entries in ckpt.optimizer.slots.items():
        for index in sorted(entries):
            values = _floats(entries[index], dtypes.get(index))
            if values is None:
                continue
            field = f"{slot}[{index}]"
            label = labels.get(index, "")
            bad = ~np.isfinite(values)
            if bad.any():
                found.append(ValueWarning(
                    "non_finite_slot", field,
                    f"{slot} of entry {index}{label} holds {int(bad.sum())} NaN or infinite "
                    f"values (first at element {int(np.argmax(bad))})",
                ))
            if adam and slot == "v":
                negative = values < 0
                if negative.any():
                    found.append(ValueWarning(
                        "negative_adam_v", field,
                        f"v of entry {index}{label} holds {int(negative.sum())} negative values "
                        f"(min {float(values[negative].min())!r}); Adam's v is a running mean of "
                        "squares",
                    ))
            if adam and ckpt.step == 0 and np.any(values != 0):
                nonzero_at_zero.append(field)
    if nonzero_at_zero:
        found.append(ValueWarning(
            "adam_state_at_step_0", nonzero_at_zero[0],
            f"step is 0 but Adam's state is not zero in {', '.join(nonzero_at_zero[:8])}"
            + (", ..." if len(nonzero_at_zero) > 8 else "")
            + " (a fresh optimizer has none)",
        ))
    return found
