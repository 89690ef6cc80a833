"""Edit jobs on a checkpoint: the step, epoch or (schema 2 and 3) any state key; dropping the
optimizer state (Adam becomes SGD: for deployment, or to fine-tune afresh) or zeroing it; one
tensor's new values, their dtype and shape checked against what the model or a record says."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..format.assignment import CAST_RULE, cast_for_entry
from ..format.errors import error_for
from ..format.loss import U32_MAX
from ..format.model import Buffer, Checkpoint, Optimizer
from ..format.revisions.registry import holds
from .dump import find_tensor

__all__ = ["edit", "edit_file"]


def _not_representable(field: str | None, message: str) -> Exception:
    return error_for("not_representable", field, None, message)


def _mismatch(field: str | None, message: str) -> Exception:
    return error_for("model_mismatch", field, None, message)


def _replace(ckpt: Checkpoint, key: str | int, value: object) -> None:
    tensor = find_tensor(ckpt, key)
    if tensor is None:
        names = [t.name for t in ckpt.tensors if t.name]
        known = f"; names: {', '.join(names[:12])}" if names else " (no names: give --model)"
        raise _mismatch("weights", f"no entry {key!r} in the checkpoint{known}")
    arr = np.asarray(value)
    where = f"weights[{tensor.index}]"
    if tensor.dtype is None or tensor.shape is None:
        raise _mismatch(where, f"entry {tensor.index} has no dtype and shape to check the new "
                        "values against: give the circle model")
    # the API's rule (entry.data = x): cast when same_kind allows it and no value changes
    same_shape = tuple(arr.shape) == tuple(tensor.shape)
    cast = cast_for_entry(arr, np.dtype(tensor.dtype).newbyteorder("<")) if same_shape else None
    if cast is None:
        raise _mismatch(
            where,
            f"entry {tensor.index} ({tensor.name!r}) is {tensor.dtype}{list(tensor.shape)}; "
            f"the new values are {arr.dtype}{list(arr.shape)}"
            + (f", which do not convert without loss ({CAST_RULE}); save them as "
               f"{tensor.dtype} if that rounding is meant (numpy: "
               f"arr.astype({tensor.dtype!r}))" if same_shape else ""),
        )
    new = np.ascontiguousarray(cast).astype(cast.dtype.newbyteorder("<"), copy=True)
    if new.nbytes != tensor.nbytes:  # onert-micro's 4 bytes per element (SPEC B.2)
        raise _not_representable(where, f"entry {tensor.index} holds {tensor.nbytes} bytes for "
                                 f"{new.nbytes} bytes of values (onert-micro's element-size "
                                 "quirk): convert the file first")
    tensor.data = new


def _set_state(ckpt: Checkpoint, key: str, value: object) -> None:
    field = f"state.{key}"
    u32_only = not holds(ckpt.revision, "holds_everything")
    if key not in ("step", "epoch"):
        if u32_only:
            raise _not_representable(field, f"a {ckpt.revision} file holds only step and epoch; "
                                     f"state key {key!r} needs schema 3 or 2 (--to v3)")
    elif isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _not_representable(field, f"{key} must be an integer, not {value!r}")
    elif u32_only and not 0 <= int(value) <= U32_MAX:
        raise _not_representable(field, f"schema 1 stores the {key} as u32; {value} does not fit")
    else:
        value = int(value)
    ckpt.state[key] = value


def edit(
    ckpt: Checkpoint,
    *,
    step: int | None = None,
    epoch: int | None = None,
    state: Mapping[str, object] | None = None,
    drop_optimizer: bool = False,
    reset_optimizer: bool = False,
    replace: Mapping[str | int, object] | None = None,
) -> Checkpoint:
    """Apply the edits to ``ckpt`` in place and return it.

    ``replace`` maps an entry (tensor name or entry index) to its new values, which must have
    the entry's dtype and shape (a model bound with [`bind`][onert_checkpoint.bind], or a
    schema-2 record, says them). ``drop_optimizer`` turns the optimizer into plain SGD with no
    state; ``reset_optimizer`` zeroes every slot. Raises
    [`ModelMismatchError`][onert_checkpoint.ModelMismatchError] or
    [`NotRepresentableError`][onert_checkpoint.NotRepresentableError] before changing anything.
    """
    if drop_optimizer and reset_optimizer:
        raise ValueError("drop_optimizer and reset_optimizer exclude each other")
    named = (("step", step), ("epoch", epoch))
    changes = [*(state or {}).items(), *((k, v) for k, v in named if v is not None)]
    # check everything on a scratch copy of what changes, then apply: all or nothing
    saved_state = dict(ckpt.state)
    saved_data = {t.index: t.data for t in ckpt.tensors}
    try:
        for key, value in changes:
            _set_state(ckpt, key, value)
        for target, array in (replace or {}).items():
            _replace(ckpt, target, array)
    except Exception:
        ckpt.state.clear()
        ckpt.state.update(saved_state)
        for t in ckpt.tensors:
            t.data = saved_data[t.index]
        raise
    if drop_optimizer and ckpt.optimizer is not None:
        ckpt.optimizer = Optimizer("sgd")
    if reset_optimizer and ckpt.optimizer is not None:
        for entries in ckpt.optimizer.slots.values():
            for i, buf in list(entries.items()):
                entries[i] = Buffer(buf.index, np.zeros_like(np.asarray(buf.data)), buf.offset)
    return ckpt


def edit_file(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    model: Any = None,
    order: str = "auto",
    revision: str | None = None,
    dialect: str | None = None,
    batch_size: int | None = None,
    allow_lossy: bool = False,
    progress: Callable[[int], object] | None = None,
    **edits: Any,
) -> Checkpoint:
    """Read ``source``, apply [`edit`][onert_checkpoint.edit] (keyword arguments as there), write
    ``target`` atomically. The revision and dialect stay the source's unless ``revision`` /
    ``dialect`` say otherwise; ``model`` (a circle model) names, types and shapes the entries first
    (``order``: how, as [`load`][onert_checkpoint.load]'s); ``batch_size`` is
    [`convert`][onert_checkpoint.convert]'s (Adam state crossing dialects). A target revision that
    cannot hold the content is refused (``not_representable``, naming what would be lost) unless
    ``allow_lossy``, as every write is (format/loss.py). ``progress`` is
    [`save`][onert_checkpoint.save]'s: called with the byte count of each chunk written."""
    from ..api import load

    # a private copy of a small input (mmap="auto"): cheap, and another process truncating the
    # input meanwhile cannot fault the copy being written (SIGBUS on a truncated mapping)
    ckpt = load(source, model=model, order=order, mmap="auto")
    return edit_and_save(ckpt, target, revision=revision, dialect=dialect, model=model,
                         batch_size=batch_size, allow_lossy=allow_lossy, progress=progress,
                         **edits)


def edit_and_save(ckpt: Checkpoint, target: str | os.PathLike[str], *, revision: str | None,
                  dialect: str | None, model: Any, batch_size: int | None, allow_lossy: bool,
                  progress: Callable[[int], object] | None, **edits: Any) -> Checkpoint:
    """[`edit_file`][onert_checkpoint.edit_file]'s steps once ``ckpt`` is read (the ``edit``
    command's too)."""
    from ..api import convert
    from ..format.saving import save

    if revision is not None or dialect is not None:
        # converted first, so that the edits are checked against what the target holds
        # (a state key needs schema 2)
        ckpt = convert(ckpt, revision, dialect=dialect, model=model, batch_size=batch_size,
                       allow_lossy=allow_lossy)
    edit(ckpt, **edits)
    save(ckpt, target, allow_lossy=allow_lossy, progress=progress)
    return ckpt
