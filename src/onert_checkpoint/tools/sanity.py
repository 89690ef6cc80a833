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
from .describe import ascending
from .render import counted

__all__ = ["ValueWarning", "value_warnings"]

_FLOAT_DTYPES = ("float16", "float32", "float64")
#: What a damaged optimizer state is cured by: zeroed state, same optimizer, weights kept.
_RESET = "; zero the state with: onert-ckpt edit --reset-optimizer IN.ckpt OUT.ckpt"


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
    return raw[: raw.nbytes - raw.nbytes % item.itemsize].view(item)


def _non_finite(values: np.ndarray) -> str | None:
    bad = ~np.isfinite(values)
    if not bad.any():
        return None
    return (f"{counted(int(bad.sum()), 'NaN or infinite value')} (first at element "
            f"{int(np.argmax(bad))})")


def value_warnings(ckpt: Checkpoint) -> list[ValueWarning]:
    """Every value finding in ``ckpt``, weights first, then each slot, in entry order.

    Linear in the entries, and no object is kept per entry (the passes go over floating
    entries, `onert_checkpoint.format.entries`): the dtypes of the weights are a
    column looked up by binary search."""
    found: list[ValueWarning] = []
    typed = sorted(((t.index, t.dtype) for t in ckpt.tensors if t.dtype is not None),
                   key=lambda pair: pair[0])
    typed_keys = np.array([i for i, _ in typed], np.int64)
    typed_names = [d for _, d in typed]
    del typed

    def dtype_of(index: int) -> str | None:
        at = int(np.searchsorted(typed_keys, index))
        return typed_names[at] if at < typed_keys.size and typed_keys[at] == index else None

    def label_of(index: int) -> str:
        """`` ('name')`` of the tensor with entry index ``index``, or "": looked up (binary
        search or the list's dict) only for the entries a finding is about, neither a scan
        per finding (quadratic) nor a text kept per entry."""
        pos = ckpt.tensors.position_of_index(index)
        name = None if pos is None else ckpt.tensors[pos].name
        return f" ({name!r})" if name else ""

    for t in ckpt.tensors:
        values = _floats(t, t.dtype) if t.nbytes else None  # empty: known without reading it
        if values is not None and (bad := _non_finite(values)):
            found.append(ValueWarning("non_finite_weight", f"weights[{t.index}]",
                                      f"entry {t.index}{label_of(t.index)} holds {bad}"))
    if ckpt.optimizer is None:
        return found
    adam = ckpt.optimizer.kind == "adam"
    nonzero_at_zero: list[tuple[str, str]] = []  # (field, field with the tensor's name)
    for slot, entries in ckpt.optimizer.slots.items():
        for index, entry in ascending(entries):
            values = _floats(entry, dtype_of(index)) if entry.nbytes else None
            if values is None:
                continue
            field = f"{slot}[{index}]"
            if bad := _non_finite(values):
                found.append(ValueWarning("non_finite_slot", field, f"{slot} of entry {index}"
                                          f"{label_of(index)} holds {bad}{_RESET}"))
            if adam and slot == "v":
                negative = values < 0
                if negative.any():
                    least = float(values[negative].min())
                    found.append(ValueWarning("negative_adam_v", field, (
                        f"v of entry {index}{label_of(index)} holds "
                        f"{counted(int(negative.sum()), 'negative value')} (min {least!r}); "
                        f"Adam's v is a running mean of squares{_RESET}")))
            if adam and ckpt.step == 0 and np.any(values != 0):
                nonzero_at_zero.append((field, field + label_of(index)))
    if nonzero_at_zero:
        shown = ", ".join(s for _, s in nonzero_at_zero[:8])
        more = ", ..." if len(nonzero_at_zero) > 8 else ""
        found.append(ValueWarning("adam_state_at_step_0", nonzero_at_zero[0][0], (
            f"step is 0 but Adam's state is not zero in {shown}{more} (a fresh optimizer has "
            "none: `onert-ckpt edit --reset-optimizer` zeroes it; or the step is wrong: "
            "`edit --step N`)")))
    return found
