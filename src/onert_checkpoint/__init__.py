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

#: public name -> the module that defines it. ``import onert_checkpoint`` imports none of
#: them: a command that reads one small file should not pay for NumPy-free parts it never
#: uses, the circle schema, Construct or the interchange formats (start-up time).
_LAZY = {
    # the functions that take a circle model, composed above the format and model layers
    "convert": ".api",
    "load": ".api",
    "open": ".api",
    "upgrade": ".api",
    "bake": ".circle.bake",
    "bind": ".circle.binding",
    "checkpoint_from_arrays": ".circle.initial",
    "new_checkpoint": ".circle.initial",
    "CircleModel": ".circle.model",
    "downgrade": ".format.convert",
    "SUPPORTED_VERSIONS": ".format.dispatch",
    "CheckpointError": ".format.errors",
    "FormatError": ".format.errors",
    "ModelMismatchError": ".format.errors",
    "NotRepresentableError": ".format.errors",
    "UnsupportedFormatError": ".format.errors",
    "Buffer": ".format.model",
    "Checkpoint": ".format.model",
    "Optimizer": ".format.model",
    "Tensor": ".format.model",
    "TrainingState": ".format.model",
    "save": ".format.saving",
    "save_stream": ".format.saving",
    "to_bytes": ".format.saving",
    "from_safetensors": ".interchange.safetensors_io",
    "to_safetensors": ".interchange.safetensors_io",
    "from_npz": ".interchange.tensor_dict",
    "from_numpy_dict": ".interchange.tensor_dict",
    "to_npz": ".interchange.tensor_dict",
    "to_numpy_dict": ".interchange.tensor_dict",
    "from_torch": ".interchange.torch_bridge",
    "to_torch": ".interchange.torch_bridge",
    "describe": ".tools.describe",
    "diff": ".tools.diff",
    "edit": ".tools.edit",
    "edit_file": ".tools.edit",
    "value_warnings": ".tools.sanity",
}


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
    "SUPPORTED_VERSIONS",
    "Buffer",
    "Checkpoint",
    "CheckpointError",
    "CircleModel",
    "FormatError",
    "ModelMismatchError",
    "NotRepresentableError",
    "Optimizer",
    "Tensor",
    "TrainingState",
    "UnsupportedFormatError",
    "__version__",
    "bake",
    "bind",
    "checkpoint_from_arrays",
    "convert",
    "describe",
    "diff",
    "downgrade",
    "edit",
    "edit_file",
    "from_npz",
    "from_numpy_dict",
    "from_safetensors",
    "from_torch",
    "load",
    "new_checkpoint",
    "open",
    "save",
    "save_stream",
    "to_bytes",
    "to_npz",
    "to_numpy_dict",
    "to_safetensors",
    "to_torch",
    "upgrade",
    "value_warnings",
]

del annotations, TYPE_CHECKING  # bound by the lines above for the package's own use
