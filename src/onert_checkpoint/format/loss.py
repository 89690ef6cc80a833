"""The one rule of every write: keep the content, or refuse naming what would be lost.

``save``, ``to_bytes``, ``convert`` (``downgrade``), ``import`` and ``edit`` all ask
:func:`check_lossless` before they write; it lists what the target revision cannot hold
(:func:`lost_content`) and refuses with ``not_representable`` unless the caller asked for the
loss (``allow_lossy=True``, ``--allow-lossy``). A write that passes keeps what
:meth:`~onert_checkpoint.Checkpoint.content_equal` compares, and for schema 2 and 3 the tensor
records and unknown sections too (tests/invariants/test_no_silent_loss.py checks both directions).

What counts as content (spec/SPEC.md 9.2): the entries and their bytes, the optimizer kind and
every slot entry, the training state, the unknown sections, and, for a checkpoint whose own
revision is schema 2 or 3, the tensors' names, dtypes, shapes and model indices (its records
hold them).
"""

from __future__ import annotations

from .errors import error_for
from .model import Checkpoint
from .revisions.registry import RECOMMENDED, RUNTIME, Revision, holds
from .revisions.registry import revision as revision_named

__all__ = ["EXPORT_TARGETS", "check_lossless", "fitting_revision", "lost_content",
           "tensor_annotations"]

#: The containers of ``export`` (safetensors, npz): every array and, in the metadata, the rest.
EXPORT_TARGETS = ("safetensors", "npz")
U32_MAX = 0xFFFF_FFFF


def _short(items: list[int]) -> str:
    return ", ".join(map(str, items[:8])) + (", ..." if len(items) > 8 else "")


def tensor_annotations(ckpt: Checkpoint) -> list[str]:
    """The tensor names, dtypes, shapes and model indices ``ckpt`` has, one phrase a kind."""
    lost = []
    for what, attr in (("names", "name"), ("dtypes", "dtype"), ("shapes", "shape"),
                       ("circle indices", "model_index")):
        which = [t.index for t in ckpt.tensors if getattr(t, attr) is not None]
        if which:
            lost.append(f"the tensor {what} of entries {_short(which)}")
    return lost


def _optimizer_state(ckpt: Checkpoint, target: Revision) -> list[str]:
    opt, kinds = ckpt.optimizer, target.optimizers
    if opt is None or kinds is None:
        return []
    held = [name for name, entries in opt.slots.items() if len(entries)]
    if not kinds:  # no optimizer state at all (WOF)
        if held:
            return [f"the {opt.kind} optimizer state (slots {', '.join(held)})"]
        if opt.kind != "sgd":
            return [f"the optimizer kind {opt.kind!r}"]
        return []
    kept = kinds.get(opt.kind)
    if kept is None:
        names = " and ".join(k.upper() if k == "sgd" else k.title() for k in kinds)
        return [f"the {opt.kind} optimizer state ({target.title} has {names} only)"]
    extra = [name for name in held if name not in kept]
    if extra:
        return [f"the {opt.kind} optimizer's slots {', '.join(map(repr, extra))} ({target.title}'s "
                f"{opt.kind} keeps {', '.join(kept) or 'no state'})"]
    return []


def _state(ckpt: Checkpoint, target: Revision) -> list[str]:
    keys = target.state_keys
    if keys is None:
        return []
    if not keys:
        return [f"the training state ({', '.join(map(str, ckpt.state))})"] if ckpt.state else []
    lost = []
    extra = [k for k in ckpt.state if k not in keys]
    if extra:
        lost.append(f"the state keys {', '.join(map(repr, extra))} ({target.title} keeps "
                    f"{' and '.join(keys)})")
    for key in keys:
        value = ckpt.state.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 0 <= value <= U32_MAX):
            lost.append(f"the {key} value {value!r} ({target.title} stores a u32)")
    if "footerless" in ckpt.layout.quirks and any(ckpt.state.get(k) for k in keys):
        lost.append(f"the {' and '.join(keys)} (this footer-less onert file has no footer to "
                    "hold them)")
    return lost


def fitting_revision(ckpt: Checkpoint, *, annotations_are_content: bool = True) -> str:
    """The revision a new checkpoint is written in when its maker names none: schema 1 (what
    the runtimes read, ``registry.RUNTIME``) when it holds all of its content, else schema 3,
    the recommended revision (``registry.RECOMMENDED``), which holds everything (spec/SPEC.md
    10). Never schema 2, and never a revision that would drop content.

    ``annotations_are_content``: the tensors' names, dtypes, shapes and model indices count as
    content (arrays that carry them, like a safetensors file of named, typed arrays); False
    when they are a circle model's (``new``, arrays placed by the model's tensor names), which
    gives them back to a schema-1 file bound to it.
    """
    lost = _optimizer_state(ckpt, RUNTIME) + _state(ckpt, RUNTIME)
    if annotations_are_content:
        lost += tensor_annotations(ckpt)
    return RECOMMENDED.name if lost or ckpt.layout.sections else RUNTIME.name


def lost_content(ckpt: Checkpoint, revision: str | None = None) -> list[str]:
    """What writing ``ckpt`` as ``revision`` (a revision of the registry, or an export
    container "safetensors"/"npz"; None: the checkpoint's own) would lose, one phrase per kind
    of content; empty when the write keeps everything.

    Revisions that hold everything (schemas 2 and 3) and the export containers lose nothing.
    The tensors' names, dtypes, shapes and model indices of a checkpoint whose own revision has
    no records for them came from a circle model, which keeps them. What a target cannot lay
    out at all (an Adam slot of another size than its weight, an entry index outside the
    table) is not listed here: the writer refuses it either way.

        >>> import onert_checkpoint as oc
        >>> from onert_checkpoint.format.loss import lost_content
        >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> from onert_checkpoint.format.revisions.registry import REVISIONS
        >>> for r in REVISIONS:
        ...     print(r.title, lost_content(ckpt, r.name))
        schema 1 []
        WOF ['the adam optimizer state (slots m, v)', 'the training state (step, epoch)']
        schema 2 []
        schema 3 []
    """
    name = revision or ckpt.revision
    if name in EXPORT_TARGETS:
        return []
    target = revision_named(name)
    if target.holds_everything:
        return []
    lost = []
    if holds(ckpt.revision, "holds_annotations") and not target.holds_annotations:
        lost += tensor_annotations(ckpt)  # a bound model's annotations: the model keeps them
    lost += _optimizer_state(ckpt, target) + _state(ckpt, target)
    if ckpt.layout.sections and not target.holds_sections:
        lost.append(f"the unknown sections of kinds {[s.kind for s in ckpt.layout.sections]}")
    return lost


def check_lossless(ckpt: Checkpoint, revision: str | None = None, *, dialect: str | None = None,
                   allow_lossy: bool = False, model_restores: bool = False) -> list[str]:
    """Refuse (``not_representable``, naming everything that would be lost) a write of
    ``ckpt`` as ``revision`` that loses content, unless ``allow_lossy``; returns what is lost
    (empty for a lossless write). ``model_restores``: the tensors' names, dtypes, shapes and
    model indices are given back by the circle model the written file is bound to, so they
    are not lost. Also refuses any write of a released checkpoint (``released``): its entries
    are gone, not empty."""
    ckpt._check_live()
    revision = revision or ckpt.revision
    lost = lost_content(ckpt, revision)
    if model_restores:
        lost = [what for what in lost if what not in tensor_annotations(ckpt)]
    if lost and not allow_lossy:
        target = revision + (f" ({dialect})" if dialect else "")
        raise error_for("not_representable", None, None, f"writing {target} would lose "
                        + "; ".join(lost) + " (pass allow_lossy=True to drop them)")
    return lost
