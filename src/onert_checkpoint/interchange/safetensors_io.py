"""safetensors files: weights and optimizer slots as named tensors, the rest as metadata.

The file is an ordinary safetensors file (any safetensors reader opens it); the names and the
metadata keys are those of :mod:`onert_checkpoint.interchange.tensor_dict`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..format.model import Checkpoint
from ..format.saving import write_atomic
from .tensor_dict import _regular, from_numpy_dict, to_numpy_dict, unreadable

__all__ = ["from_safetensors", "to_safetensors"]


def _numpy_api() -> Any:
    try:
        from safetensors import numpy as st_numpy
    except ImportError as exc:  # pragma: no cover - safetensors is a dependency
        raise ImportError("safetensors is needed: pip install safetensors") from exc
    return st_numpy


def to_safetensors(ckpt: Checkpoint, path: str | os.PathLike[str]) -> None:
    """Write ``ckpt`` as a safetensors file (weights ``<name>``, slots ``<name>.m``/``.v``).

    For example, a round trip through a temporary file gives back the same checkpoint bytes:

        >>> import onert_checkpoint as oc, tempfile, os
        >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> out = os.path.join(tempfile.mkdtemp(), "fc2.safetensors")
        >>> oc.to_safetensors(ckpt, out)
        >>> oc.to_bytes(oc.from_safetensors(out)) == oc.to_bytes(ckpt)
        True
    """
    arrays, meta = to_numpy_dict(ckpt, metadata=True)
    data = _numpy_api().save({k: np.ascontiguousarray(v) for k, v in arrays.items()},
                             metadata=meta)
    # Written as save() writes: atomically, special files refused, errors naming the path.
    write_atomic(path, data)


def from_safetensors(path: str | os.PathLike[str], **options: Any) -> Checkpoint:
    """Read a checkpoint from a safetensors file written by :func:`to_safetensors`, or from any
    safetensors file of named arrays (see :func:`~onert_checkpoint.from_numpy_dict`)."""
    from safetensors import safe_open

    name = _regular(path)
    try:
        with safe_open(name, framework="np") as f:
            meta = f.metadata() or {}
            arrays = {key: f.get_tensor(key) for key in f.keys()}
    except OSError:
        raise
    except Exception as exc:  # safetensors' own error types: the project's error instead
        raise unreadable(name, "safetensors", exc) from None
    return from_numpy_dict(arrays, meta, **options)
