"""Reading a checkpoint through its circle model: which tensor each entry is, typed and shaped.

onert-micro and WOF files index their tables by circle tensor index; onert files follow the
runtime's iteration order (`onert_checkpoint.circle.onert_order`), which they do not record. It
is taken from the prediction, else the runtime (a probe), else the sizes when all differ;
anything else is an error naming the ambiguous entries: this module never guesses.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from ..format.errors import error_for
from ..format.model import Buffer, Checkpoint
from ..format.revisions.registry import BY_CIRCLE_INDEX, BY_RECORD, holds
from ..format.typed import typed_view
from . import onert_order
from .model import CircleModel, CircleTensor, as_circle_model, model_mismatch
from .onert_order import predict_onert_order

__all__ = ["ORDER_SOURCES", "bind", "entry_tensors"]

#: How an onert file's entries are matched to tensors: "auto" tries predict, probe, size.
ORDER_SOURCES = ("auto", "probe", "predict", "size")

#: onert-micro computes the element size as sizeof(its enum type) = 4 bytes whatever the dtype
#: (OMCheckpointSaver.cpp, FORMAT-FACTS section 2), so real files hold 4 bytes per element.
MICRO_ELEMENT_SIZE = 4


def _sizes(sizes: Iterable[int]) -> str:
    items = sorted(sizes)
    return ", ".join(map(str, items[:8])) + (", ..." if len(items) > 8 else "")


def _by_size(ckpt: Checkpoint, model: CircleModel, candidates: Sequence[int]) -> list[int]:
    sizes = [t.nbytes for t in ckpt.tensors]
    wanted = {i: model.tensors[i].nbytes for i in candidates}
    if sorted(sizes) != sorted(model.tensors[i].nbytes for i in candidates):  # shared: twice
        # sizes no order can match mean another model: reported before any ambiguity
        extra = sorted(set(sizes) - set(wanted.values()))
        raise model_mismatch(
            "the entry sizes do not match the sizes of the model's trainable tensors in any "
            f"order (entry sizes {_sizes(sizes)}; tensor sizes {_sizes(wanted.values())}"
            + (f"; no tensor has {extra[0]} bytes" if extra else "") + ")",
            "weights",
        )
    counts = Counter(sizes)
    ambiguous = [k for k, n in enumerate(sizes) if counts[n] > 1]
    if ambiguous:
        raise error_for("ambiguous_entries", "weights", None, f"entries {ambiguous} share a size, "
                        "and the runtime's entry order is neither known nor predictable here; "
                        "give the order explicitly (order='probe' with onert installed, or "
                        "order='predict')")
    # the sizes are the tensors' and all differ: each names one tensor
    tensor_of = {m: i for i, m in wanted.items()}
    return [tensor_of[n] for n in sizes]


def _onert_order(ckpt: Checkpoint, model: CircleModel, order: str) -> list[int]:
    try:
        predicted: list[int] | None = predict_onert_order(model)
    except OverflowError:  # past the prediction's table of libstdc++ bucket counts
        predicted = None
    trainable = predicted or sorted(onert_order.trainable_indices(model))
    if predicted is not None and len(ckpt.tensors) != len(predicted):
        raise model_mismatch(f"the file has {len(ckpt.tensors)} entries; onert exports "
                             f"{len(predicted)} trainable tensors of this model", "num_entries")
    tried: list[str] = []
    # auto: the prediction (at file speed), the runtime where it cannot decide, the sizes last
    sources = ["predict", "probe", "size"] if order == "auto" else [order]
    for source in sources:
        if source == "probe":
            found = onert_order.probe_onert_order(model)
            if found is None or -1 in found:
                tried.append("probe (onert is not installed)" if found is None else "probe")
                continue
        elif source == "predict":
            found = predicted
            if found is None:
                tried.append("predict (the model is past what the prediction knows)")
                continue
        else:
            return _by_size(ckpt, model, trainable)
        if len(found) == len(ckpt.tensors) and all(
                model.tensors[i].nbytes == t.nbytes for i, t in zip(found, ckpt.tensors)):
            return list(found)
        tried.append(f"{source} (sizes disagree)")
    raise model_mismatch("no entry order fits the file: tried " + ", ".join(tried), "weights")


def entry_tensors(ckpt: Checkpoint, model: CircleModel, *,
                  order: str = "auto") -> tuple[list[int], bool]:
    """The circle tensor index of each present weight entry, and whether indices are the
    model's own (onert-micro, WOF) rather than onert's iteration order."""
    if order not in ORDER_SOURCES:
        raise ValueError(f"order must be one of {', '.join(ORDER_SOURCES)}, not {order!r}")
    keyed_by = holds(ckpt.revision, "keyed_by")
    by_index = keyed_by == BY_CIRCLE_INDEX or ckpt.dialect == "onert-micro"
    if holds(ckpt.revision, "dialects") and ckpt.dialect != "onert":
        # Fits both runtimes' conventions, or onert-micro's only by its SGD header (opt1 = 0),
        # which onert reads too: the entry count says which runtime's indexing it has.
        n = ckpt.table_length
        by_index = n == len(model.tensors) and n != len(predict_onert_order(model))
    if keyed_by == BY_RECORD:
        origin = ckpt.layout.origin or {}
        if origin.get("dialect") != "onert-micro" and any(
                t.model_index is None for t in ckpt.tensors):
            # an upgraded onert file: entries without a model index (SPEC B.9 copies, or
            # upgraded without the model) are numbered in onert's order
            onert_entries = predict_onert_order(model)
            if origin.get("num_entries") == len(onert_entries) != len(model.tensors):
                return [t.model_index if t.model_index is not None else onert_entries[t.index]
                        for t in ckpt.tensors], True
        return [t.model_index if t.model_index is not None else t.index for t in ckpt.tensors], True
    if by_index:
        if ckpt.table_length != len(model.tensors):
            raise model_mismatch(f"the file has {ckpt.table_length} entries; the model has "
                                 f"{len(model.tensors)} tensors (onert-micro and WOF files have "
                                 "one entry per tensor)", "num_entries")
        return [t.index for t in ckpt.tensors], True
    return _onert_order(ckpt, model, order), False


def _typed(buffer: Buffer, t: CircleTensor) -> np.ndarray | None:
    """The entry as its tensor's dtype and shape, or None when its size is not the tensor's."""
    if buffer.nbytes != t.nbytes or (t.nbytes == 0 and t.count != 0):
        return None
    arr = typed_view(buffer.raw, t.dtype, t.shape)
    return None if arr.dtype == np.uint8 and t.dtype != "uint8" and t.nbytes else arr


def bind(ckpt: Checkpoint, model: CircleModel | str | os.PathLike | bytes | memoryview, *,
         order: str = "auto") -> Checkpoint:
    """Name, type and shape every entry of ``ckpt`` from ``model`` (in place; returns ``ckpt``).

    Raises ModelMismatchError when the file does not fit the model (a different count, a size
    that disagrees with a tensor's shape and type), naming the entry.
    """
    model = as_circle_model(model)
    indices, by_index = entry_tensors(ckpt, model, order=order)
    micro = by_index and bool(holds(ckpt.revision, "dialects"))
    quirks = set(ckpt.layout.quirks)
    slots = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
    for tensor, model_index in zip(ckpt.tensors, indices):
        if not 0 <= model_index < len(model.tensors):
            raise model_mismatch(f"tensor index {model_index} is not in the model",
                                 f"weights[{tensor.index}]")
        t = model.tensors[model_index]
        if tensor.nbytes != t.nbytes and not (
                micro and tensor.nbytes == MICRO_ELEMENT_SIZE * t.count):
            raise t.wrong_size(tensor.index, tensor.nbytes)
        tensor.name, tensor.dtype, tensor.shape = t.name, t.dtype, t.shape
        tensor.model_index = model_index
        typed = _typed(tensor, t)
        if typed is None:  # kept as bytes
            if tensor.nbytes != t.nbytes:
                quirks.add("micro_element_size")  # the file holds 4 bytes per element
            continue
        tensor.data = typed
        for entries in slots.values():
            slot = entries.get(tensor.index)
            if slot is not None and slot.nbytes == t.nbytes:
                slot.data = slot.raw.view(typed.dtype).reshape(t.shape)
    if len(set(indices)) < len(indices):
        quirks |= _name_shared_copies(ckpt, model, indices)
    ckpt.layout = ckpt.layout.replaced(quirks=tuple(sorted(quirks)))
    return ckpt


def _name_shared_copies(ckpt: Checkpoint, model: CircleModel, indices: list[int]) -> set[str]:
    """Name the entries of a tensor that onert split between its readers (SPEC B.9): each copy
    ``<name>@op<reader>`` (`onert_order.copy_names`; ``<name>@<k>`` for an order from elsewhere),
    without a model index (schema 2 allows each once). Returns ``{"shared_copies_differ"}`` when
    the copies do not hold the same bytes.
    """
    names = onert_order.copy_names(model, indices)
    if not names:  # the order came from elsewhere: number them
        seen: Counter[int] = Counter()
        for k, i in enumerate(indices):
            seen[i] += 1
            if seen[i] > 1:
                names[k] = f"{model.tensors[i].name or i}@{seen[i] - 1}"
    kept = {i: tensor for k, (tensor, i) in enumerate(zip(ckpt.tensors, indices)) if k not in names}
    for k, name in names.items():
        ckpt.tensors[k].name, ckpt.tensors[k].model_index = name, None
    differ = any(not np.array_equal(ckpt.tensors[k].raw, kept[indices[k]].raw) for k in names)
    return {"shared_copies_differ"} if differ else set()
