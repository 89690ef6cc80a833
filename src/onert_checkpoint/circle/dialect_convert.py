"""Converting a schema-1 checkpoint between onert's and onert-micro's conventions.

onert: one entry per trainable tensor in the runtime's order
(:func:`~onert_checkpoint.circle.onert_order.predict_onert_order`), every one present;
onert-micro: entry i is circle tensor i, data in the saver's order
(:meth:`~onert_checkpoint.circle.model.CircleModel.micro_saved_indices`); SPEC "Schema 1".
The data arrays are shared, never copied; onert -> onert-micro -> onert gives the same bytes.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import MutableMapping, Sequence

import numpy as np

from ..format.model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..format.revisions.registry import RUNTIME, holds, layout_for
from .adam_units import check_batch_size, has_state, rescale_slots
from .binding import MICRO_ELEMENT_SIZE, entry_tensors
from .model import CircleModel, as_circle_model, model_mismatch, not_representable
from .onert_order import copy_names, predict_onert_order

__all__ = ["DIALECTS", "to_dialect"]

DIALECTS = RUNTIME.dialects


def _describe(model: CircleModel, indices: Sequence[int]) -> str:
    return ", ".join(f"{i} ({model.tensors[i].name!r})" if model.tensors[i].name else str(i)
                     for i in indices)


def _refuse(model: CircleModel, indices: Sequence[int], message: str) -> None:
    """``not_representable`` (field ``weights``) naming ``indices`` at ``message``'s ``{}``."""
    if indices:
        raise not_representable("weights", message.format(_describe(model, indices)))


def _by_tensor(ckpt: Checkpoint, model: CircleModel, order: str
               ) -> tuple[dict[int, Tensor], dict[str, dict[int, Buffer]], bool]:
    """Every present entry (and optimizer slot entry) keyed by its circle tensor index, and
    whether the entries are indexed by circle tensor (onert-micro's layout) rather than in
    onert's order."""
    indices, by_index = entry_tensors(ckpt, model, order=order)
    given = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
    slots: dict[str, dict[int, Buffer]] = {name: {} for name in given}
    # entries per tensor, here and in onert's order: counted once (checking copies stays linear)
    counts = functools.cache(lambda: (Counter(indices), Counter(predict_onert_order(model))))
    tensors: dict[int, Tensor] = {}
    for tensor, index in zip(ckpt.tensors, indices):
        if not 0 <= index < len(model.tensors):
            raise model_mismatch(f"entry {tensor.index} names tensor {index}; the model has "
                                 f"{len(model.tensors)} tensors", f"weights[{tensor.index}]")
        if index in tensors:
            # onert's copies of a shared constant (SPEC B.9): one entry only while they agree
            have, predicted = counts()
            if have[index] != predicted[index]:
                raise model_mismatch(f"entries {tensors[index].index} and {tensor.index} both "
                                     f"hold tensor {index}", f"weights[{tensor.index}]")
            _check_same_copies(given, tensors[index], tensor, index, model)
            continue
        t = model.tensors[index]
        if tensor.nbytes not in (t.nbytes, MICRO_ELEMENT_SIZE * t.count):
            raise t.wrong_size(tensor.index, tensor.nbytes)
        tensors[index] = tensor
        for name, entries in given.items():
            if tensor.index in entries:
                slots[name][index] = entries[tensor.index]
    return tensors, slots, by_index


def _check_same_copies(slots: MutableMapping[str, MutableMapping[int, Buffer]], first: Tensor,
                       other: Tensor, index: int, model: CircleModel) -> None:
    pairs: list[tuple[Buffer, Buffer]] = [(first, other)] + [
        (entries[first.index], entries[other.index]) for entries in slots.values()
        if first.index in entries and other.index in entries]
    if any(not np.array_equal(a.raw, b.raw) for a, b in pairs):
        raise not_representable(f"weights[{other.index}]", f"entries {first.index} and "
                                f"{other.index}, onert's copies of the shared tensor "
                                f"{_describe(model, [index])}, hold different weights or "
                                "optimizer state (onert trains each copy with its reader alone, "
                                "SPEC B.9); one entry per tensor cannot hold both")


def _tensor(source: Tensor, index: int, model_index: int, model: CircleModel, rank: int | None):
    """``source``'s data as entry ``index`` (data position ``rank``), named from the model."""
    return Tensor(index, source.raw, rank, model.tensors[model_index].name, source.dtype,
                  source.shape, model_index)


def _to_micro(model: CircleModel, tensors: dict[int, Tensor], slots: dict[str, dict[int, Buffer]]
              ) -> tuple[list[Tensor], dict[str, MutableMapping[int, Buffer]], int]:
    saved = model.micro_saved_indices()
    _refuse(model, sorted(set(tensors) - set(saved)), "tensors {} are not constants of a "
            "FULLY_CONNECTED or CONV_2D operator: onert-micro neither saves nor loads them")
    wrong = [i for i, t in tensors.items()
             if t.nbytes != MICRO_ELEMENT_SIZE * model.tensors[i].count]
    _refuse(model, wrong, "tensors {} are not 4 bytes per element: onert-micro's saver and "
            "loader size every element as 4 bytes (spec/SPEC.md)")
    # Buffer.offset = rank in the saver's order: storage_order lays the data out as it does
    rank = {index: k for k, index in enumerate(saved)}
    out = [_tensor(tensors[i], i, i, model, rank[i]) for i in sorted(tensors)]
    out_slots: dict[str, MutableMapping[int, Buffer]] = {
        name: {i: Buffer(i, b.data, rank[i]) for i, b in sorted(entries.items())}
        for name, entries in slots.items()}
    return out, out_slots, len(model.tensors)


def _to_onert(model: CircleModel, tensors: dict[int, Tensor], slots: dict[str, dict[int, Buffer]],
              order: Sequence[int]
              ) -> tuple[list[Tensor], dict[str, MutableMapping[int, Buffer]], int]:
    _refuse(model, [i for i in order if i not in tensors], "onert exports every trainable "
            "tensor; the checkpoint has no data for tensors {}")
    _refuse(model, sorted(set(tensors) - set(order)),
            "tensors {} are not trainable tensors of onert for this model")
    _refuse(model, [i for i in order if tensors[i].nbytes != model.tensors[i].nbytes],
            "tensors {} hold onert-micro's 4-bytes-per-element data, not the tensor's own size")
    out = [_tensor(tensors[i], k, i, model, None) for k, i in enumerate(order)]
    for k, name in copy_names(model, order).items():  # named as bind names them
        out[k].name, out[k].model_index = name, None  # the kept entry holds the model index
    out_slots: dict[str, MutableMapping[int, Buffer]] = {
        name: {k: Buffer(k, entries[i].data) for k, i in enumerate(order) if i in entries}
        for name, entries in slots.items()}
    return out, out_slots, len(order)


def _schema2_from_micro(ckpt: Checkpoint, model: CircleModel) -> bool:
    """Whether a schema-2 file's content (its Adam units, SPEC 9.3) is onert-micro's: its
    origin's dialect, else its table length N against the model's tensor count and onert's
    entry count, as binding.entry_tensors reads a schema-1 file."""
    from ..format.convert import content_dialect

    known = content_dialect(ckpt)
    if known is not None:
        return known == "onert-micro"
    n = (ckpt.layout.origin or {}).get("num_entries")
    if not isinstance(n, int):
        n = max((t.index for t in ckpt.tensors), default=-1) + 1
    return n == len(model.tensors) and n != len(predict_onert_order(model))


def _in_target_units(slots: dict[str, dict[int, Buffer]], batch_size: int | None,
                     model: CircleModel, dialect: str) -> dict[str, dict[int, Buffer]]:
    """Adam's slots rescaled from the other runtime's units to ``dialect``'s (SPEC 9.3)."""
    if batch_size is None:
        if not has_state(slots):
            return slots  # zeros are zeros in either runtime's units
        source = "onert" if dialect == "onert-micro" else "onert-micro"
        raise not_representable(
            "batch_size", f"moving Adam state from {source} to {dialect} needs the run's batch "
            "size: onert-micro sums a batch's gradients where onert averages them, so its m is "
            "B times and its v B**2 times onert's (SPEC B.11), and the file does not record B: "
            "pass batch_size= (--batch-size on the command line; 1 if the run trained one "
            "sample per step)")
    dtypes = {i: model.tensors[i].dtype for entries in slots.values() for i in entries}
    return rescale_slots(slots, batch_size, to_micro=dialect == "onert-micro", dtypes=dtypes)


def to_dialect(ckpt: Checkpoint, dialect: str, model: CircleModel | str | os.PathLike[str] | bytes,
               *, order: str = "auto", onert_order: Sequence[int] | None = None,
               batch_size: int | None = None, rescale: bool = True) -> Checkpoint:
    """``ckpt`` re-indexed for ``dialect`` ("onert" or "onert-micro"), as a schema-1 checkpoint
    laid out as the module says; step and epoch are kept.

    ``model`` says which tensor each entry is (``order`` as in :func:`~onert_checkpoint.load`)
    and, for an onert target, the new entries' order (predicted, unless ``onert_order`` gives
    each entry's circle tensor index). Crossing to the other runtime rescales Adam's m and v by
    ``batch_size`` (:mod:`~onert_checkpoint.circle.adam_units`), refused without it for non-zero
    state; ``rescale=False`` re-indexes only. Raises ``model_mismatch`` when ``ckpt`` does not
    fit the model, ``not_representable`` naming the tensors the target cannot hold (or lacks).
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; choose from {', '.join(DIALECTS)}")
    model = as_circle_model(model)
    tensors, slots, from_micro = _by_tensor(ckpt, model, order)
    if holds(ckpt.revision, "holds_everything"):
        from_micro = _schema2_from_micro(ckpt, model)
    if batch_size is not None:
        batch_size = check_batch_size(batch_size)
    crossing = from_micro != (dialect == "onert-micro")
    if rescale and crossing and ckpt.optimizer is not None and ckpt.optimizer.kind == "adam":
        slots = _in_target_units(slots, batch_size, model, dialect)
    if dialect == "onert-micro":
        out, out_slots, n = _to_micro(model, tensors, slots)
    else:
        entries = list(onert_order) if onert_order is not None else predict_onert_order(model)
        out, out_slots, n = _to_onert(model, tensors, slots, entries)
    optimizer = Optimizer(ckpt.optimizer.kind, out_slots) if ckpt.optimizer is not None else None
    return Checkpoint(tensors=out, optimizer=optimizer, state=TrainingState(ckpt.state),
                      layout=layout_for(RUNTIME.name, dialect=dialect, num_entries=n))
