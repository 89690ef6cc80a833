"""safetensors files: weights and optimizer slots as named tensors, the rest as metadata.

The file is an ordinary safetensors file (any safetensors reader opens it); the names and the
metadata keys are those of :mod:`onert_checkpoint.interchange.tensor_dict`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..format.errors import error_for
from ..format.loss import check_lossless
from ..format.model import Checkpoint
from ..format.saving import verify_sources, write_atomic
from .tensor_dict import _regular, from_numpy_dict, to_numpy_dict, unreadable

__all__ = ["HEADER_LIMIT", "from_safetensors", "to_safetensors"]

#: The largest header (the JSON before the data) safetensors writes or reads: its readers
#: refuse a larger one (the Rust crate's MAX_HEADER_SIZE), and its writer fails on one.
HEADER_LIMIT = 100_000_000
#: The fewest header bytes one exported array costs: its tensor entry alone,
#: ``"0":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},`` (52 bytes), plus its place in the
#: ``arrays`` metadata (``\"0\": [0, null], ``, 17 bytes as a JSON string): 69, rounded down.
#: Exports of real checkpoints measure 104-118 bytes per array.
MIN_HEADER_PER_ARRAY = 64


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
    check_lossless(ckpt, "safetensors")  # the rule of every write (holds all; not released)
    verify_sources(ckpt)  # no unchecked bytes go out (verify_data=False, a changed mapping)
    _check_header_fits(ckpt)  # before any array is made: a refusal costs no memory
    arrays, meta = to_numpy_dict(ckpt, metadata=True)
    try:
        data = _numpy_api().save({k: np.ascontiguousarray(v) for k, v in arrays.items()},
                                 metadata=meta)
    except MemoryError:
        raise
    except Exception as exc:  # safetensors' own SafetensorError: the project's error instead
        raise error_for(
            "not_representable", "safetensors", None,
            f"safetensors cannot hold this checkpoint ({type(exc).__name__}: {exc})",
        ) from None
    # Written as save() writes: atomically, special files refused, errors naming the path.
    write_atomic(path, data)


def _check_header_fits(ckpt: Checkpoint) -> None:
    """Refuse, as not_representable, a checkpoint of so many entries that its safetensors
    header would exceed :data:`HEADER_LIMIT` whatever their names (a schema-3 file of 2M
    zero-length tensors is 16 MB): counted from the tables, no entry made."""
    count = len(ckpt.tensors)
    if ckpt.optimizer is not None:
        count += sum(len(entries) for entries in ckpt.optimizer.slots.values())
    if count * MIN_HEADER_PER_ARRAY > HEADER_LIMIT:
        raise error_for(
            "not_representable", "safetensors", None,
            f"{count} arrays need a safetensors header of at least "
            f"{count * MIN_HEADER_PER_ARRAY} bytes; safetensors holds at most {HEADER_LIMIT} "
            f"({HEADER_LIMIT // MIN_HEADER_PER_ARRAY} arrays or fewer)",
        )


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
