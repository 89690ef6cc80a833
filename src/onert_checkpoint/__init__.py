"""onert-checkpoint: read, validate, write and convert the training checkpoints of onert and
onert-micro (Samsung ONE's on-device training runtimes).

    >>> import onert_checkpoint as oc
    >>> ckpt = oc.load("tests/data/real-onert/fc2-sgd-step8.ckpt")
    >>> ckpt.optimizer.kind, len(ckpt), ckpt[0].nbytes
    ('sgd', 4, 128)
    >>> with oc.open("tests/data/real-onert/fc2-adam-step8.ckpt") as ckpt:
    ...     ckpt.step, ckpt.slot("m", 3).nbytes
    (8, 12)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below, imported on first use (module __getattr__)
    from .api import convert, load, open, upgrade
    from .circle.bake import bake
    from .circle.binding import bind
    from .circle.initial import checkpoint_from_arrays, new_checkpoint
    from .circle.model import CircleModel
    from .format.convert import downgrade
    from .format.dispatch import SUPPORTED_VERSIONS
    from .format.errors import (
        CheckpointError,
        FormatError,
        ModelMismatchError,
        NotRepresentableError,
        UnsupportedFormatError,
    )
    from .format.model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
    from .format.saving import save, save_stream, to_bytes
    from .interchange.safetensors_io import from_safetensors, to_safetensors
    from .interchange.tensor_dict import from_npz, from_numpy_dict, to_npz, to_numpy_dict
    from .interchange.torch_bridge import from_torch, to_torch
    from .tools.describe import describe
    from .tools.diff import diff
    from .tools.edit import edit, edit_file
    from .tools.sanity import value_warnings

#: the module that defines each public name. ``import onert_checkpoint`` imports none of them:
#: a command that reads one small file should not pay for NumPy-free parts it never uses, the
#: circle schema, Construct or the interchange formats (start-up time).
_DEFINED_IN = {
    ".api": "convert load open upgrade",
    ".circle.bake": "bake",
    ".circle.binding": "bind",
    ".circle.initial": "checkpoint_from_arrays new_checkpoint",
    ".circle.model": "CircleModel",
    ".format.convert": "downgrade",
    ".format.dispatch": "SUPPORTED_VERSIONS",
    ".format.errors": "CheckpointError FormatError ModelMismatchError NotRepresentableError "
    "UnsupportedFormatError",
    ".format.model": "Buffer Checkpoint Optimizer Tensor TrainingState",
    ".format.saving": "save save_stream to_bytes",
    ".interchange.safetensors_io": "from_safetensors to_safetensors",
    ".interchange.tensor_dict": "from_npz from_numpy_dict to_npz to_numpy_dict",
    ".interchange.torch_bridge": "from_torch to_torch",
    ".tools.describe": "describe",
    ".tools.diff": "diff",
    ".tools.edit": "edit edit_file",
    ".tools.sanity": "value_warnings",
}
_LAZY = {name: module for module, names in _DEFINED_IN.items() for name in names.split()}


def __getattr__(name: str) -> object:
    from importlib import import_module

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    """The public names (``__all__``) and the module's dunders; not what the package's own
    code binds (its submodules, ``TYPE_CHECKING``, the table above)."""
    return sorted({*__all__, *(k for k in globals() if k.startswith("__") and k.endswith("__"))})


__version__ = "0.1.0"

__all__ = [
    "SUPPORTED_VERSIONS", "Buffer", "Checkpoint", "CheckpointError", "CircleModel",
    "FormatError", "ModelMismatchError", "NotRepresentableError", "Optimizer", "Tensor",
    "TrainingState", "UnsupportedFormatError", "__version__", "bake", "bind",
    "checkpoint_from_arrays", "convert", "describe", "diff", "downgrade", "edit", "edit_file",
    "from_npz", "from_numpy_dict", "from_safetensors", "from_torch", "load", "new_checkpoint",
    "open", "save", "save_stream", "to_bytes", "to_npz", "to_numpy_dict", "to_safetensors",
    "to_torch", "upgrade", "value_warnings",
]

del annotations, TYPE_CHECKING  # bound by the lines above for the package's own use
