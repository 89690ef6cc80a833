"""The public functions that take a circle model: ``load``, ``open``, ``upgrade``, ``convert``.

The format layer (``format/``) knows no circle model, and the model layer (``circle/``) reads
checkpoints through it; the functions that accept a ``model=`` join the two here, above both.
The circle modules are imported only when a model is given (start-up time).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from .format import dispatch, opener
from .format.errors import CheckpointError, error_for
from .format.loss import tensor_annotations
from .format.model import Checkpoint
from .format.revisions import registry
from .format.revisions.registry import holds
from .format.source import Source

if TYPE_CHECKING:
    from .circle.model import CircleModel

__all__ = ["convert", "load", "open", "upgrade"]


def load(source: Source, model: CircleModel | str | os.PathLike[str] | bytes | None = None, *,
         order: str = "auto", verify_data: bool = True,
         mmap: bool | Literal["auto"] = True) -> Checkpoint:
    """Read a checkpoint of any supported revision from a path, bytes or any buffer.

    Tensor data are read-only NumPy views on the (memory-mapped) source, never copies; they are
    bytes (uint8) unless ``model`` (a circle model: path, bytes or ``CircleModel``) says which
    tensor each entry is, in which case they come out typed and shaped, with names
    ([`bind`][onert_checkpoint.bind]; ``order`` says how onert's entry order is found).

    Every rule of the specification is checked; the checks of the tensor data section of
    schemas 2 and 3 (its CRC-32C and zero padding), which read the data itself, run on the
    first access to any entry's data, before a byte is handed out (or on ``ckpt.verify()``):
    opening a large checkpoint to read its names costs what its structure costs.
    ``verify_data=False`` hands data out without them (``onert-ckpt validate`` always checks
    everything); [`save`][onert_checkpoint.save] and the other writers still run them before
    they write the data under a fresh checksum (docs/saving.md).

    ``mmap=False`` reads a path into private memory instead of mapping it: the arrays then no
    longer change if the file is written in place, and truncating the file cannot kill the
    process with SIGBUS (docs/saving.md, "Memory-mapped reading"); ``"auto"`` does so for files
    smaller than 64 MiB. Only regular files are read: a directory, FIFO, socket or device is
    refused with an ``OSError`` naming the path, before anything could block.

        >>> ckpt = load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> ckpt.revision, ckpt.dialect, ckpt.optimizer.kind, ckpt.step, ckpt.epoch
        ('v1', None, 'adam', 8, 0)
        >>> [t.nbytes for t in ckpt.tensors]
        [128, 32, 96, 12]
        >>> named = load("tests/data/real-onert/fc2-adam-step8.ckpt",
        ...              model="tests/data/real-onert/fc2.circle")
        >>> named[0].dtype, named[0].shape == tuple(named[0].data.shape)
        ('float32', True)
    """
    return _bound(dispatch.load(source, verify_data=verify_data, mmap=mmap), model, order)


def _bound(ckpt: Checkpoint, model: Any, order: str) -> Checkpoint:
    """``ckpt`` bound to ``model`` when one is given (circle/binding.py, imported only then)."""
    if model is not None:
        from .circle.binding import bind

        bind(ckpt, model, order=order)
    return ckpt


@contextlib.contextmanager
def open(path: str | os.PathLike[str], **load_options: Any) -> Iterator[Checkpoint]:
    """Map ``path`` and yield its [`Checkpoint`][onert_checkpoint.Checkpoint]; on exit, release the
    mapping.

    ``load_options`` are [`load`][onert_checkpoint.load]'s (``model``, ``order``, ``verify_data``,
    ``mmap``). Inside the block only the bytes that are looked at are read. After it the
    checkpoint's storage is released: reading an entry's data or size, copying, converting,
    exporting or saving the checkpoint raises [`CheckpointError`][onert_checkpoint.CheckpointError]
    with code ``released`` (never empty entries: a save would write them over the file). Copy
    (``np.array(t.data)``) what must outlive the block. An array view kept past the block keeps the
    mapping alive instead of being invalidated.

        >>> import onert_checkpoint as oc
        >>> with oc.open("tests/data/real-onert/fc2-adam-step8.ckpt") as ckpt:
        ...     first = ckpt[0].data.view("<f4").copy()
        ...     ckpt.step, first.shape
        (8, (32,))
        >>> ckpt[0].nbytes
        Traceback (most recent call last):
        ...
        onert_checkpoint.format.errors.CheckpointError: released: entry 0: ...
    """
    model = load_options.pop("model", None)
    order = load_options.pop("order", "auto")
    with opener.open(path, **load_options) as ckpt:
        yield _bound(ckpt, model, order)


def _name_tensors(ckpt: Checkpoint, model: CircleModel | str | os.PathLike[str] | bytes,
                  order: str) -> None:
    """Name, type and shape the tensors of ``ckpt`` (a schema-1 or WOF view) from ``model``.

    A tensor whose bytes disagree with its circle shape and type (onert-micro writes 4 bytes per
    element whatever the type, FORMAT-FACTS section 2) keeps its name but stays raw bytes.
    """
    from .format.dtypes import DTYPE_CODES, DTYPES

    for t in _bound(ckpt, model, order).tensors:
        if t.dtype is not None and t.shape is not None:
            size = DTYPES.get(DTYPE_CODES.get(t.dtype, 99), ("", None))[1]
            if size is None or size * math.prod(t.shape) != t.nbytes:
                t.dtype, t.shape = None, None
                t.data = t.raw


def upgrade(ckpt: Checkpoint, model: CircleModel | str | os.PathLike[str] | bytes | None = None,
            *, to: str = registry.RECOMMENDED.name, order: str = "auto") -> Checkpoint:
    """Schema 1 (either dialect) or WOF to a revision that holds everything (``to``: by
    default schema 3, the recommended revision, SPEC 10; or schema 2), losslessly.

    With ``model`` (a circle model: path, bytes or [`CircleModel`][onert_checkpoint.CircleModel])
    every tensor record gets the circle tensor's index, name, dtype and shape; without it the
    tensors are raw bytes. A schema-2 or schema-3 checkpoint is returned as a copy in revision
    ``to`` (bound to ``model`` if given); the tensors keep the offsets (and a schema-3 file's
    ``layout.data_order``) they were read with, so the data keep their storage order. ``order``
    is how an onert file's entries are matched to the model's tensors (``load``'s).
    """
    from .format import convert as formats

    named = None if model is None else lambda view: _name_tensors(view, model, order)
    return formats.upgrade(ckpt, to=to, name_tensors=named)


def _batch_size(ckpt: Checkpoint, given: int | None) -> int | None:
    """B from the argument or from a schema-2 file's ``batch_size`` key (0: not recorded);
    both present and different is refused."""
    from .circle.adam_units import check_batch_size

    if given is not None:
        given = check_batch_size(given)
    recorded = ckpt.state.get("batch_size") if holds(ckpt.revision, "holds_everything") else None
    if isinstance(recorded, bool) or not isinstance(recorded, int) or recorded < 1:
        return given
    recorded = check_batch_size(recorded, "the file's batch_size")
    if given is not None and given != recorded:
        raise error_for("not_representable", "batch_size", None,
                        f"batch size {given} given, but the file records batch_size {recorded}")
    return recorded


def convert(ckpt: Checkpoint, to: str | None = registry.RECOMMENDED.name,
            dialect: str | None = None, allow_lossy: bool = False,
            model: CircleModel | str | os.PathLike[str] | bytes | None = None, *,
            batch_size: int | None = None, order: str = "auto") -> Checkpoint:
    """The content of ``ckpt`` as revision ``to`` (schema 1, WOF, schema 2 or 3 by their short
    names; by default schema 3, the recommended revision; None keeps the input's revision),
    ready to [`save`][onert_checkpoint.save].

    To schema 2 or 3 it is [`upgrade`][onert_checkpoint.upgrade] (``model`` names the tensors;
    between schema 2 and 3 everything is kept but the data order, SPEC 7.3); to schema 1 or WOF
    it is [`downgrade`][onert_checkpoint.downgrade], where the tensors' names, dtypes, shapes
    and model indices are no loss when binding the output to ``model`` gives every one back. A
    checkpoint converted to schema 1 in another dialect than its content's
    (`onert_checkpoint.format.convert.content_dialect`) is re-indexed for the other runtime,
    which needs ``model`` (`onert_checkpoint.circle.dialect_convert.to_dialect`); without it a
    [`NotRepresentableError`][onert_checkpoint.NotRepresentableError] (a ``ValueError``) names
    the missing model. Nothing is silently dropped.

    ``batch_size`` is the batch size B of the training run, for Adam state crossing between
    onert and onert-micro (SPEC 9.3): onert-micro's m is B times and its v B**2 times onert's,
    so the state is rescaled when the entries move to the other runtime's layout, and such a
    move with non-zero Adam state and no B is refused (``not_representable``, field
    ``batch_size``). A schema-2 input's ``batch_size`` state key (1 or more) gives B when the
    argument is absent and must agree with it when both are given; a schema-2 or schema-3
    output records B there. Nothing is rescaled within one runtime, for SGD, or when writing WOF (no
    state). ``order`` is how an onert file's entries are matched to the model's tensors (as
    [`load`][onert_checkpoint.load]'s: "auto", "probe", "predict" or "size").
    """
    from .format.convert import content_dialect, downgrade, indexing_text, needs_model

    ckpt._check_live()
    if to is None:
        to = ckpt.revision
    batch_size = _batch_size(ckpt, batch_size)
    target = registry.revision(to)
    if target.holds_everything:
        out = upgrade(ckpt, model, to=to, order=order)
        if batch_size is not None:
            out.state["batch_size"] = batch_size
        return out
    by_index = target.keyed_by == registry.BY_CIRCLE_INDEX
    if needs_model(ckpt, to, dialect) and model is None:
        target_text = (f"{target.title} (circle tensor indices)" if by_index
                       else f"the {dialect} dialect")
        raise error_for("not_representable", "dialect", None,
                        f"writing {indexing_text(ckpt)} in {target_text} needs the circle model "
                        "to index them: pass model= (--model on the command line)")

    def upgraded() -> Checkpoint:
        return ckpt if holds(ckpt.revision, "holds_everything") else upgrade(ckpt)

    def in_own_dialect() -> Checkpoint:
        """The content laid out as schema 1 in its own dialect (nothing dropped unless
        allowed; what ``model`` gives back is not dropped)."""
        if holds(ckpt.revision, "dialects"):
            return ckpt
        own = content_dialect(ckpt)
        return _downgrade(upgraded(), own, allow_lossy, registry.RUNTIME.name, model, order)

    if model is not None:  # the model says which circle tensor each entry is
        from .circle.dialect_convert import to_dialect

        if by_index and needs_model(ckpt, to, dialect):
            # onert's order -> circle tensor indices (onert-micro's), then weights only; the
            # state is dropped for WOF: re-indexed only, never rescaled
            micro = to_dialect(in_own_dialect(), "onert-micro", model, rescale=False, order=order)
            return downgrade(upgrade(micro), None, allow_lossy, to=to)
        if target.dialects and dialect is not None:  # between the runtimes
            return to_dialect(in_own_dialect(), dialect, model, batch_size=batch_size, order=order)
    return _downgrade(upgraded(), dialect, allow_lossy, to, model, order)


def _downgrade(source: Checkpoint, dialect: str | None, allow_lossy: bool, to: str,
                model: CircleModel | str | os.PathLike[str] | bytes | None,
                order: str) -> Checkpoint:
    """``source`` (a revision that holds everything) as ``to``, its annotations no loss when
    ``model`` gives them back (`convert`; the output comes back bound)."""
    from .format.convert import downgrade

    if model is None or not tensor_annotations(source):
        return downgrade(source, dialect, allow_lossy, to=to)
    from .circle.binding import bind

    out = downgrade(source, dialect, allow_lossy, to=to, model_restores=True)
    try:
        bind(out, model, order=order)
        restored = all(
            (t.name is None or t.name == b.name)
            and (t.dtype is None or t.dtype == b.dtype)
            and (t.shape is None or (b.shape is not None and tuple(t.shape) == tuple(b.shape)))
            and (t.model_index is None or t.model_index == b.model_index)
            for t, b in zip(source.tensors, out.tensors)
        )
    except CheckpointError:
        restored = False
    if restored:
        return out
    # the model does not give them back: the rule of every write says what is lost
    return downgrade(source, dialect, allow_lossy, to=to)
