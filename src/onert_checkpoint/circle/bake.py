"""Baking: a circle model whose constant buffers hold a checkpoint's weights.

onert's ``train_export_circle`` and onert-micro's ``saveModel``, from a checkpoint file: each
entry replaces its tensor's buffer (`onert_checkpoint.circle.rebuild`), a shared buffer split.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from ..atomic_file import write_atomic
from ..format.model import Checkpoint
from ..format.revisions.registry import holds
from .binding import bind, entry_tensors
from .model import CircleModel, as_circle_model, model_mismatch, not_representable
from .onert_order import predict_onert_entries
from .rebuild import rebuild

__all__ = ["SHARED_POLICIES", "bake"]

#: onert's diverged copies of a shared constant (SPEC B.9): "error" refuses, "kept" bakes the
#: kept entry (as train_export_circle), "untie" gives each reader its own tensor and buffer.
SHARED_POLICIES = ("error", "kept", "untie")


def _values(ckpt: Checkpoint, model: CircleModel, order: str,
            shared: str) -> tuple[dict[int, np.ndarray], dict[int, dict[int, np.ndarray]]]:
    """(tensor index -> bytes to bake, {tensor index: {reader operator: bytes}} to untie)."""
    indices, by_index = entry_tensors(ckpt, model, order=order)
    micro_sizes = by_index and bool(holds(ckpt.revision, "dialects"))
    entries = None  # onert's, where the file holds copies of shared constants
    if not by_index and len(set(indices)) < len(indices):
        entries = predict_onert_entries(model)
        if [e.tensor for e in entries] != indices:
            raise not_representable("weights", "the file has copies of shared constants in an "
                                    "order the prediction does not give; which reader each copy "
                                    "belongs to is unknown")
    kept: dict[int, np.ndarray] = {}
    per_reader: dict[int, dict[int, np.ndarray]] = {}
    for k, (tensor, index) in enumerate(zip(ckpt.tensors, indices)):
        t = model.tensors[index]
        raw = tensor.raw
        if micro_sizes and raw.nbytes != t.nbytes and t.nbytes:
            raw = raw[: t.nbytes]  # onert-micro's 4 bytes per element (SPEC B.2)
        if raw.nbytes != t.nbytes:
            raise t.wrong_size(tensor.index, raw.nbytes)
        if not t.is_constant:
            raise model_mismatch(f"tensor {index} ({t.name!r}) has no buffer in the model to "
                                 "bake into", f"weights[{tensor.index}]")
        if entries is None or not entries[k].copy:
            kept[index] = raw
        for reader in entries[k].readers if entries is not None else ():
            per_reader.setdefault(index, {})[reader] = raw
    untie: dict[int, dict[int, np.ndarray]] = {}
    for index, by_reader in per_reader.items():
        first, *others = by_reader.values()
        if all(v.data == first.data for v in others):
            continue
        name = model.tensors[index].name
        if shared == "error":
            raise not_representable(
                "weights", f"the entries of the shared tensor {index} ({name!r}) hold different "
                "values (onert trains each reader's copy apart, SPEC B.9): choose the policy "
                "'kept' (what onert's train_export_circle writes) or 'untie' (shared=, or "
                "--shared on the command line)")
        if shared == "untie":
            untie[index] = by_reader
    return kept, untie


def bake(ckpt: Checkpoint | str | os.PathLike[str] | bytes,
         model: CircleModel | str | os.PathLike[str] | bytes,
         out: str | os.PathLike[str] | None = None, *, order: str = "auto",
         shared: str = "error", progress: Callable[[int], object] | None = None
         ) -> bytes | memoryview:
    """The circle model ``model`` with the weights of ``ckpt`` in its constant buffers.

    ``ckpt`` is a checkpoint or a path or bytes to load; ``order`` says how an onert file's entry
    order is found (as in [`load`][onert_checkpoint.load]); ``shared`` what to do with onert's
    diverged copies of a shared constant (`SHARED_POLICIES`). Returns the new model's bytes or,
    given ``out``, writes them there atomically with [`save`][onert_checkpoint.save]'s target
    rules and returns the file written as a read-only mapped view; ``progress``, if given, is
    called with the byte count of each piece written (as `save`'s).

    Raises [`ModelMismatchError`][onert_checkpoint.ModelMismatchError] when the checkpoint does not
    fit the model and [`NotRepresentableError`][onert_checkpoint.NotRepresentableError] for what a
    model cannot hold, or whose rebuild would exceed the memory bound (`rebuild.unpack_budget`).
    """
    if shared not in SHARED_POLICIES:
        raise ValueError(f"shared must be one of {', '.join(SHARED_POLICIES)}, not {shared!r}")
    model = as_circle_model(model)
    if not isinstance(ckpt, Checkpoint):
        from ..format.dispatch import load

        ckpt = load(ckpt, mmap="auto")  # a private copy of a small file, as edit_file
    bind(ckpt, model, order=order)
    built = rebuild(model, *_values(ckpt, model, order, shared))
    if out is None:
        return b"".join(built.pieces())
    write_atomic(out, built.pieces(), progress=progress)
    from ..format.source import open_source

    return open_source(out)
