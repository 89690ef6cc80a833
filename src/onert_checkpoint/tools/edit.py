"""Edit jobs on a checkpoint: training state, optimizer state, one tensor's values.

* set the step, the epoch, or (schema 2) any state key;
* drop the optimizer state (Adam becomes SGD: for deployment, or to fine-tune afresh);
* reset the optimizer state to zeros (same optimizer, fresh moments);
* replace one tensor's values from an array (a ``.npy`` file on the command line), its dtype
  and shape checked against what the model (or a schema-2 record) says of the tensor.

[`edit`][onert_checkpoint.edit] changes a [`Checkpoint`][onert_checkpoint.Checkpoint] in memory;
[`edit_file`][onert_checkpoint.edit_file] reads a file, edits it and writes it atomically
([`save`][onert_checkpoint.save]) in the same revision and dialect unless told otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..format.assignment import CAST_RULE, cast_for_entry
from ..format.errors import error_for
from ..format.model import Buffer, Checkpoint, Optimizer
from ..format.revisions.registry import holds
from .dump import find_tensor

__all__ = ["edit", "edit_file"]

U32_MAX = 0xFFFFFFFF


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
        raise _mismatch(
            where,
            f"entry {tensor.index} has no dtype and shape to check the new values against: "
            "give the circle model",
        )
    # the API's rule (entry.data = x): cast when same_kind allows it and no value changes
    cast = None
    if tuple(arr.shape) == tuple(tensor.shape):
        cast = cast_for_entry(arr, np.dtype(tensor.dtype).newbyteorder("<"))
    if cast is None:
        lossy = tuple(arr.shape) == tuple(tensor.shape)
        raise _mismatch(
            where,
            f"entry {tensor.index} ({tensor.name!r}) is {tensor.dtype}{list(tensor.shape)}; "
            f"the new values are {arr.dtype}{list(arr.shape)}"
            + (f", which do not convert without loss ({CAST_RULE}); save them as "
               f"{tensor.dtype} if that rounding is meant (numpy: "
               f"arr.astype({tensor.dtype!r}))" if lossy else ""),
        )
    new = np.ascontiguousarray(cast).astype(cast.dtype.newbyteorder("<"), copy=True)
    if new.nbytes != tensor.nbytes:  # onert-micro's 4 bytes per element (SPEC B.2)
        raise _not_representable(
            where,
            f"entry {tensor.index} holds {tensor.nbytes} bytes for {new.nbytes} bytes of "
            "values (onert-micro's element-size quirk): convert the file first",
        )
    tensor.data = new


def _set_state(ckpt: Checkpoint, key: str, value: object) -> None:
    if not holds(ckpt.revision, "holds_everything") and key not in ("step", "epoch"):
        raise _not_representable(
            f"state.{key}",
            f"a {ckpt.revision} file holds only step and epoch; state key {key!r} needs schema 3 "
            "or 2 (--to v3)",
        )
    if key in ("step", "epoch"):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise _not_representable(f"state.{key}", f"{key} must be an integer, not {value!r}")
        if not holds(ckpt.revision, "holds_everything") and not 0 <= int(value) <= U32_MAX:
            raise _not_representable(
                f"state.{key}", f"schema 1 stores the {key} as u32; {value} does not fit"
            )
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
    from ..api import convert, load
    from ..format.saving import save

    # a private copy of a small input (mmap="auto"): cheap, and another process truncating the
    # input meanwhile cannot fault the copy being written (SIGBUS on a truncated mapping)
    ckpt = load(source, model=model, order=order, mmap="auto")
    if revision is not None or dialect is not None:
        # converted first, so that the edits are checked against what the target holds
        # (a state key needs schema 2)
        ckpt = convert(ckpt, revision, dialect=dialect, model=model, batch_size=batch_size,
                       allow_lossy=allow_lossy)
    edit(ckpt, **edits)
    # the revision and dialect ckpt has: the source's unless converted
    save(ckpt, target, allow_lossy=allow_lossy, progress=progress)
    return ckpt
