"""Building a checkpoint from a circle model: its initial weights, or weights given as arrays.

The entries follow the dialect's conventions (`onert_checkpoint.circle.dialect_convert`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np

from ..format.model import OPTIMIZER_SLOTS, Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..format.revisions.registry import REVISIONS, RUNTIME, layout_for
from ..format.revisions.v1.reader import HEADER_SIZE
from .model import CircleModel, as_circle_model, has_numpy_dtype, model_mismatch
from .onert_order import copy_names, predict_onert_order, probe_onert_order

__all__ = ["checkpoint_from_arrays", "new_checkpoint", "trainable_tensors"]


def trainable_tensors(model: CircleModel, dialect: str = "onert") -> tuple[int, list[int]]:
    """``(num_entries, [circle tensor index of each saved entry, in storage order])``; onert's
    order predicted, or asked of the runtime past what the prediction knows."""
    if dialect == "onert":
        try:
            order: list[int] | None = predict_onert_order(model)
        except OverflowError:
            order = probe_onert_order(model)
        if order is None or -1 in order:
            raise model_mismatch("onert's entry order cannot be predicted for this model here "
                                 "(install the onert package to ask the runtime)")
        return len(order), order
    if dialect == "onert-micro":
        return len(model.tensors), model.micro_saved_indices()
    raise ValueError(f"unknown dialect {dialect!r}; choose from onert, onert-micro")


def _raw(arr: object) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(arr))
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.reshape(-1).view(np.uint8)


def checkpoint_from_arrays(model: CircleModel | str | os.PathLike[str] | bytes,
                           weights: Mapping[int, object], *, optimizer: str = "adam",
                           slots: Mapping[str, Mapping[int, object]] | None = None,
                           state: Mapping[str, object] | None = None, dialect: str = "onert",
                           revision: str | None = None) -> Checkpoint:
    """A checkpoint of ``model`` whose weights are ``weights[circle tensor index]``.

    Every trainable tensor of the dialect must be given, at its model size. Optimizer slots missing
    from ``slots`` are zero (a fresh optimizer); the state defaults to step 0, epoch 0. ``model`` is
    a [`CircleModel`][onert_checkpoint.CircleModel], a path or the model's bytes. ``revision``
    (None) is schema 1, what the runtimes read, when it holds the content, else schema 3 (a state
    key besides step and epoch, or a step or epoch beyond 32 bits: `fitting_revision`); schema 2
    or 3 keep names, dtypes, shapes and the dialect.
    """
    allowed = [RUNTIME.name, *(r.name for r in REVISIONS if r.holds_everything)]
    if revision is not None and revision not in allowed:
        raise ValueError(f"unknown revision {revision!r}; choose from {', '.join(allowed)}")
    model = as_circle_model(model)
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"unknown optimizer {optimizer!r}; choose from adam, sgd")
    num_entries, saved = trainable_tensors(model, dialect)
    missing = [model.tensors[t].name or str(t) for t in saved if t not in weights]
    if missing:
        raise model_mismatch("no value for " + ", ".join(missing))
    # onert's copies of a shared constant (SPEC B.9): named as binding names them, no model index
    names = copy_names(model, saved) if dialect == "onert" else {}
    tensors = []
    # The data's positions, so onert-micro's saver order is kept when the file is written.
    pos = HEADER_SIZE + 4 * num_entries
    for k, t in enumerate(saved):
        ct = model.tensors[t]
        raw = _raw(weights[t])
        if any(d < 0 for d in ct.shape):
            # a dynamic dimension in a constant: no size to check the data against
            raise model_mismatch(f"tensor {ct.name!r} is a constant of dynamic shape "
                                 f"{list(ct.shape)}")
        if (ct.nbytes or has_numpy_dtype(ct.dtype)) and raw.nbytes != ct.nbytes:
            # nbytes 0 is the size of an empty shape, or of a type without whole bytes (int4)
            raise model_mismatch(f"tensor {ct.name!r} has {ct.nbytes} bytes in the model; "
                                 f"{raw.nbytes} given")
        tensors.append(Tensor(k if dialect == "onert" else t, raw, pos, names.get(k, ct.name),
                              ct.dtype, ct.shape, None if k in names else t))
        pos += raw.nbytes
    opt = Optimizer(optimizer)
    for slot in OPTIMIZER_SLOTS[optimizer]:
        pos += 4 * num_entries
        entries = {}
        for tensor, t in zip(tensors, saved):
            value = (slots or {}).get(slot, {}).get(t)
            raw = np.zeros(tensor.nbytes, np.uint8) if value is None else _raw(value)
            if raw.nbytes != tensor.nbytes:
                raise model_mismatch(f"{slot} of {tensor.name!r} has {raw.nbytes} bytes; the "
                                     f"weight has {tensor.nbytes}")
            entries[tensor.index] = Buffer(tensor.index, raw, pos)
            pos += raw.nbytes
        opt.slots[slot] = entries
    ckpt = Checkpoint(tensors=tensors, optimizer=opt,
                      state=TrainingState(state if state is not None else {"step": 0, "epoch": 0}),
                      layout=layout_for(RUNTIME.name, dialect=dialect, num_entries=num_entries))
    if revision is None:
        from ..format.loss import fitting_revision

        revision = fitting_revision(ckpt, annotations_are_content=False)
    if revision == RUNTIME.name:
        return ckpt
    from ..format.convert import upgrade

    return upgrade(ckpt, to=revision)


def new_checkpoint(model: CircleModel | str | os.PathLike[str] | bytes, *, optimizer: str = "adam",
                   dialect: str = "onert", revision: str | None = None) -> Checkpoint:
    """A fresh checkpoint: the model's initial weights, zero optimizer state, step 0. ``model`` is a
    [`CircleModel`][onert_checkpoint.CircleModel], a path or the model's bytes; ``revision`` as
    [`checkpoint_from_arrays`][onert_checkpoint.checkpoint_from_arrays] (by default schema 1, which
    holds a fresh checkpoint of SGD or Adam, and the runtimes read it).

        >>> from onert_checkpoint.circle.model import CircleModel
        >>> model = CircleModel.load("tests/data/real-onert/fc2.circle")
        >>> ckpt = new_checkpoint(model, optimizer="adam")
        >>> [(t.index, t.name, t.shape) for t in ckpt.tensors]
        [(0, 'w0', (8, 4)), (1, 'b0', (8,)), (2, 'w1', (3, 8)), (3, 'b1', (3,))]
        >>> ckpt.step, float(abs(ckpt.optimizer.slots["m"][0].data).max())
        (0, 0.0)
    """
    model = as_circle_model(model)
    _, saved = trainable_tensors(model, dialect)
    weights = {}
    for t in saved:
        data = model.initial_data(t)
        if data is None:
            raise model_mismatch(f"trainable tensor {model.tensors[t].name!r} has no initial "
                                 "data in the model")
        weights[t] = data
    return checkpoint_from_arrays(model, weights, optimizer=optimizer, dialect=dialect,
                                  revision=revision)
