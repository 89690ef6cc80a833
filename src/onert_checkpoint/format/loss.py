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
hold them). Those of a schema-1 or WOF checkpoint came from a circle model (``bind``), which
keeps them: writing schema 1 again does not lose them.
"""

from __future__ import annotations

from .errors import error_for
from .model import Checkpoint, is_schema2_family

__all__ = [
    "EXPORT_TARGETS",
    "V1_STATE_KEYS",
    "check_lossless",
    "fitting_revision",
    "lost_content",
]

#: What schema 1's footer holds; every other state key is lost in schema 1.
V1_STATE_KEYS = ("step", "epoch")
#: The optimizers schema 1 lays out, and the slots each has there (spec/SPEC.md 4).
V1_OPTIMIZER_SLOTS = {"sgd": (), "adam": ("m", "v")}
#: The containers of ``export`` (safetensors, npz): every array and, in the metadata, the rest.
EXPORT_TARGETS = ("safetensors", "npz")
U32_MAX = 0xFFFF_FFFF


def _short(items: list[int]) -> str:
    return ", ".join(map(str, items[:8])) + (", ..." if len(items) > 8 else "")


def _tensor_metadata(ckpt: Checkpoint) -> list[str]:
    if not is_schema2_family(ckpt.revision):
        return []  # a bound model's annotations: the model keeps them (module docstring)
    return _annotations(ckpt)


def _annotations(ckpt: Checkpoint) -> list[str]:
    lost = []
    for what, attr in (
        ("names", "name"),
        ("dtypes", "dtype"),
        ("shapes", "shape"),
        ("circle indices", "model_index"),
    ):
        which = [t.index for t in ckpt.tensors if getattr(t, attr) is not None]
        if which:
            lost.append(f"the tensor {what} of entries {_short(which)}")
    return lost


def _optimizer_state(ckpt: Checkpoint, target: str) -> list[str]:
    opt = ckpt.optimizer
    if opt is None:
        return []
    held = [name for name, entries in opt.slots.items() if len(entries)]
    if target == "wof":
        if held:
            return [f"the {opt.kind} optimizer state (slots {', '.join(held)})"]
        if opt.kind != "sgd":
            return [f"the optimizer kind {opt.kind!r}"]
        return []
    kept = V1_OPTIMIZER_SLOTS.get(opt.kind)
    if kept is None:
        return [f"the {opt.kind} optimizer state (schema 1 has SGD and Adam only)"]
    extra = [name for name in held if name not in kept]
    if extra:
        return [
            f"the {opt.kind} optimizer's slots {', '.join(map(repr, extra))} (schema 1's "
            f"{opt.kind} keeps {', '.join(kept) or 'no state'})"
        ]
    return []


def _state(ckpt: Checkpoint, target: str) -> list[str]:
    if target == "wof":
        return [f"the training state ({', '.join(map(str, ckpt.state))})"] if ckpt.state else []
    lost = []
    extra = [k for k in ckpt.state if k not in V1_STATE_KEYS]
    if extra:
        lost.append(f"the state keys {', '.join(map(repr, extra))} (schema 1 keeps step and epoch)")
    for key in V1_STATE_KEYS:
        value = ckpt.state.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= U32_MAX
        ):
            lost.append(f"the {key} value {value!r} (schema 1 stores a u32)")
    if "footerless" in ckpt.quirks and any(ckpt.state.get(k) for k in V1_STATE_KEYS):
        lost.append("the step and epoch (this footer-less onert file has no footer to hold them)")
    return lost


def fitting_revision(ckpt: Checkpoint, *, annotations_are_content: bool = True) -> str:
    """The revision a new checkpoint is written in when its maker names none: ``"v1"`` (what
    the runtimes read) when schema 1 holds all of its content, else ``"v3"``, the recommended
    revision, which holds everything (spec/SPEC.md 10). Never schema 2, and never a revision
    that would drop content.

    ``annotations_are_content``: the tensors' names, dtypes, shapes and model indices count as
    content (arrays that carry them, like a safetensors file of named, typed arrays); False
    when they are a circle model's (``new``, arrays placed by the model's tensor names), which
    gives them back to a schema-1 file bound to it.
    """
    lost = _optimizer_state(ckpt, "v1") + _state(ckpt, "v1")
    if annotations_are_content:
        lost += _annotations(ckpt)
    return "v3" if lost or ckpt.sections else "v1"


def lost_content(ckpt: Checkpoint, revision: str | None = None) -> list[str]:
    """What writing ``ckpt`` as ``revision`` ("v1", "wof", "v2", "v3", or an export container
    "safetensors"/"npz"; None: the checkpoint's own) would lose, one phrase per kind of
    content; empty when the write keeps everything.

    Schema 2 and 3 and the export containers hold everything a checkpoint object can say.
    What a target cannot lay out at all (an Adam slot of another size than its weight, an
    entry index outside the table) is not listed here: the writer refuses it either way.

        >>> import onert_checkpoint as oc
        >>> from onert_checkpoint.format.loss import lost_content
        >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> lost_content(ckpt, "v2"), lost_content(ckpt, "v1")
        ([], [])
        >>> lost_content(ckpt, "wof")
        ['the adam optimizer state (slots m, v)', 'the training state (step, epoch)']
    """
    revision = revision or ckpt.revision
    if is_schema2_family(revision) or revision in EXPORT_TARGETS:
        return []
    if revision not in ("v1", "wof"):
        raise ValueError(f"unknown revision {revision!r}; choose from v1, v2, v3, wof")
    lost = _tensor_metadata(ckpt) + _optimizer_state(ckpt, revision) + _state(ckpt, revision)
    if ckpt.sections:
        lost.append(f"the unknown sections of kinds {[s.kind for s in ckpt.sections]}")
    return lost


def check_lossless(
    ckpt: Checkpoint,
    revision: str | None = None,
    *,
    dialect: str | None = None,
    allow_lossy: bool = False,
) -> list[str]:
    """Refuse (``not_representable``, naming everything that would be lost) a write of
    ``ckpt`` as ``revision`` that loses content, unless ``allow_lossy``; returns what is lost
    (empty for a lossless write). Also refuses any write of a released checkpoint
    (``released``): its entries are gone, not empty."""
    ckpt._check_live()
    revision = revision or ckpt.revision
    lost = lost_content(ckpt, revision)
    if lost and not allow_lossy:
        target = revision + (f" ({dialect})" if dialect else "")
        raise error_for(
            "not_representable",
            None,
            None,
            f"writing {target} would lose "
            + "; ".join(lost)
            + " (pass allow_lossy=True to drop them)",
        )
    return lost
