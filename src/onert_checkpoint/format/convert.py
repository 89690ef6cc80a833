"""Upgrades and downgrades between the revisions (spec/SPEC.md, section 9).

``upgrade`` loses nothing: what a schema-1 or WOF file records that schemas 2 and 3 do not model
(dialect, table length N, the footer-less quirk) goes into their origin section, and the data keep
their storage order, so ``downgrade`` can write the original file back byte for byte. Both return
new checkpoints sharing the data arrays of their input (no tensor byte is copied).

This module knows no circle model: what needs one (naming the tensors of an upgrade, moving
entries between the runtimes' indexings, Adam's batch size) is composed over it by
``onert_checkpoint.api``, whose ``upgrade`` and ``convert`` are the public ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .container.write import origin_of
from .errors import error_for
from .loss import U32_MAX, check_lossless
from .model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from .revisions import registry
from .revisions.registry import BY_CIRCLE_INDEX, RECOMMENDED, REVISIONS, RUNTIME, holds, revision
from .revisions.v1 import write as v1_write

__all__ = ["content_dialect", "downgrade", "indexing_text", "needs_model", "upgrade"]

#: Every schema-1 entry indexing (dialect) a revision is written in.
DIALECTS = tuple(dict.fromkeys(d for r in REVISIONS for d in r.dialects))


def _copy_tensor(t: Tensor) -> Tensor:
    return Tensor(index=t.index, data=t.raw, offset=t.offset, name=t.name, dtype=t.dtype,
                  shape=t.shape, model_index=t.model_index)


def _copy_optimizer(opt: Optimizer, *, raw: bool = False) -> Optimizer:
    # New entry objects, as for the tensors: the copy must not share the source's entries (an
    # ``open`` block's exit drops those, and an edit of one would reach the other).
    return Optimizer(opt.kind, {
        name: {i: Buffer(b.index, b.raw if raw else b.data, b.offset) for i, b in entries.items()}
        for name, entries in opt.slots.items()})


def upgrade(ckpt: Checkpoint, *, to: str = RECOMMENDED.name,
            name_tensors: Callable[[Checkpoint], None] | None = None) -> Checkpoint:
    """[`upgrade`][onert_checkpoint.upgrade] without a model: the tensors stay as they were
    read (raw bytes for schema 1 and WOF). ``name_tensors``, if given, is called with a view of
    the copied tensors as the file they came from laid them out (its revision, dialect and table
    length; for a schema-2 or schema-3 input those of its origin section), before the schema-3
    checks: the model layer names, types and shapes them there."""
    target = registry.find(to)
    if target is None or not target.holds_everything:
        targets = [r.name for r in REVISIONS if r.holds_everything]
        raise ValueError(f"upgrade targets {', '.join(targets)}, not {to!r}")
    check_lossless(ckpt, to)  # the rule of every write: schema 2 and 3 hold all (not released)
    if registry.find(ckpt.revision) is None:
        raise ValueError(f"cannot upgrade revision {ckpt.revision!r}")
    tensors: Iterable[Tensor] = ckpt.tensors.copied(_copy_tensor)
    if name_tensors is not None:
        tensors = list(tensors)
        # the file the content came from: its origin section's, or its own layout
        was = ckpt.layout.origin or ckpt.layout.values()
        name = str(was.get("revision", ckpt.revision))
        name_tensors(Checkpoint(tensors, layout=registry.layout_for(name, **was)))
    # Schema 2 allows model index 0xFFFFFFFF, which schema 3 reserves as NO_MODEL_INDEX
    # (SPEC 7.3): the one thing of a schema-2 file that schema 3 cannot hold, refused rather
    # than dropped.
    reserved = target.reserved_model_index
    for k, t in enumerate(tensors if reserved is not None else ()):
        if t.model_index == reserved:
            raise error_for("not_representable", f"tensors[{k}].model_index", None,
                            f"tensor {t.index} has model index 0x{reserved:08X}, which "
                            f"{target.title} reserves for 'no model index'; keep the file as "
                            "schema 2 or give the tensor another index")
    # the target's layout keeps what both revisions' files carry, and the origin
    layout = ckpt.layout.values() | {"origin": origin_of(ckpt), "dialect": None}
    optimizer = None if ckpt.optimizer is None else _copy_optimizer(ckpt.optimizer)
    return Checkpoint(tensors, optimizer, TrainingState(ckpt.state),
                      layout=registry.layout_for(to, **layout))


def downgrade(ckpt: Checkpoint, dialect: str | None = None, allow_lossy: bool = False, *,
              to: str = RUNTIME.name, model_restores: bool = False) -> Checkpoint:
    """Schema 2 or 3 to schema 1 (``dialect`` "onert", "onert-micro", or None for the dialect the
    content came from, else one that holds it), or to WOF (``to`` names it).

    Raises [`NotRepresentableError`][onert_checkpoint.NotRepresentableError] (code
    ``not_representable``) listing what would be lost, unless ``allow_lossy`` is true
    (``model_restores``: the tensor annotations are the circle model's, which the caller binds
    the output to, so not lost); what schema 1 cannot lay out at all (an Adam slot whose size
    differs from its weight, say) is refused either way.
    """
    target = registry.find(to)
    if target is None or target.holds_everything:
        targets = [r.name for r in REVISIONS if not r.holds_everything]
        raise ValueError(f"downgrade targets {' or '.join(targets)}, not {to!r}")
    origin = origin_of(ckpt) or {}
    if dialect is None and target.dialects and origin.get("revision") == to:
        dialect = origin.get("dialect")  # type: ignore[assignment]
    if dialect is not None and dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; choose from {', '.join(DIALECTS)}")
    check_lossless(  # the rule of every write
        ckpt, to, dialect=dialect, allow_lossy=allow_lossy, model_restores=model_restores
    )
    tensors = [Tensor(index=t.index, data=t.raw, offset=t.offset) for t in ckpt.tensors]
    top = max((t.index for t in tensors), default=-1) + 1
    num_entries = origin.get("num_entries")
    if not isinstance(num_entries, int) or num_entries < top:
        num_entries = top
    if not target.optimizers:  # no optimizer, no state (WOF)
        return Checkpoint(tensors, layout=registry.layout_for(to, num_entries=num_entries))

    opt = ckpt.optimizer
    optimizer = Optimizer("sgd")
    if opt is not None and opt.kind in target.optimizers:
        optimizer = _copy_optimizer(opt, raw=True)
    state = TrainingState({k: v for k in target.state_keys or ()
                           if isinstance(v := ckpt.state.get(k), int) and 0 <= v <= U32_MAX})
    footerless = bool(origin.get("footerless")) and not state and dialect in ("onert", None)
    out = Checkpoint(tensors, optimizer, state, layout=registry.layout_for(
        to, dialect=dialect, num_entries=num_entries, quirks=("footerless",) if footerless else ()))
    v1_write.plan(out, dialect)  # refuse now what schema 1 cannot lay out
    return out


def content_dialect(ckpt: Checkpoint) -> str | None:
    """Which runtime's schema-1 entry indexing the content of ``ckpt`` is known to follow:
    "onert" (the runtime's internal order) or "onert-micro" (circle tensor indices, with
    onert-micro's set of saved tensors), or None when nothing says: a schema-1 file that fits
    both runtimes, a schema-2 file made from scratch, and WOF (circle tensor indices by
    definition, spec/SPEC.md section 5, but of every constant: which of them onert-micro holds,
    and in which order it stores them, only the model says)."""
    if holds(ckpt.revision, "dialects"):
        return ckpt.dialect
    origin = ckpt.layout.origin or {}
    if origin.get("dialect") in holds(origin.get("revision"), "dialects"):
        return str(origin["dialect"])
    return None


def indexing_text(ckpt: Checkpoint) -> str:
    """What the entries of ``ckpt`` are, for messages: "onert entries", or why it is unknown."""
    known = content_dialect(ckpt)
    if known is not None:
        return f"{known} entries"
    if holds(ckpt.revision, "dialects"):
        return "entries of a file that fits both runtimes (whose indexing it does not record)"
    return f"the entries of a {ckpt.revision} file (which does not record their indexing)"


def needs_model(ckpt: Checkpoint, to: str, dialect: str | None) -> bool:
    """True when writing ``ckpt`` as revision ``to`` in ``dialect`` asserts an entry indexing
    that only the circle model can establish (spec/TOOLKIT.md section 2): a v1 output in a
    dialect the content is not known to be indexed by already, or a WOF output (circle tensor
    indices) of onert-indexed content. Without the model the entry indices would be written
    unchanged under the other meaning: a file that loads, and lies."""
    target = revision(to)
    if target.keyed_by == BY_CIRCLE_INDEX:
        return content_dialect(ckpt) == "onert"
    if not target.dialects or dialect is None:
        return False
    return content_dialect(ckpt) != dialect
