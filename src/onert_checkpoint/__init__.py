"""onert-checkpoint: read, validate, write and convert the training checkpoints of onert and
onert-micro (Samsung ONE's on-device training runtimes).

>>> import onert_checkpoint as oc
>>> ckpt = oc.load("tests/data/real-onert/fc2-sgd-step8.ckpt")
>>> ckpt.optimizer.kind, len(ckpt), ckpt[0].nbytes
('sgd', 4, 128)
"""

from .describe import describe
from .dispatch import SUPPORTED_VERSIONS, load
from .errors import (
    CheckpointError,
    FormatError,
    ModelMismatchError,
    NotRepresentableError,
    UnsupportedFormatError,
)
from .model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from .saving import save, to_bytes

__version__ = "0.1.0"

__all__ = [
    "SUPPORTED_VERSIONS",
    "Buffer",
    "Checkpoint",
    "CheckpointError",
    "FormatError",
    "ModelMismatchError",
    "NotRepresentableError",
    "Optimizer",
    "Tensor",
    "TrainingState",
    "UnsupportedFormatError",
    "__version__",
    "describe",
    "load",
    "save",
    "to_bytes",
]
