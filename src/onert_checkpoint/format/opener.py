"""``open``: a checkpoint for the length of a ``with`` block, its file mapping closed after it.

As ``safetensors.safe_open``: on leaving the block every entry is emptied and the mapping closed
(:func:`~onert_checkpoint.load`'s stays open while any view of it lives).
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator
from typing import Any

from .dispatch import load
from .model import Checkpoint

__all__ = ["open"]


@contextlib.contextmanager
def open(path: str | os.PathLike[str], **load_options: Any) -> Iterator[Checkpoint]:
    """Map ``path`` and yield its :class:`Checkpoint`; on exit, release the mapping (what
    that means: :func:`onert_checkpoint.open`, which adds the model)."""
    ckpt = load(path, **load_options)
    try:
        yield ckpt
    finally:
        view = ckpt.source
        ckpt._release_data()
        ckpt.source = None
        if isinstance(view, memoryview):
            mapped = view.obj
            with contextlib.suppress(BufferError):
                view.release()
            # mmap refuses to close while a NumPy view still uses it; it then closes with the view.
            if isinstance(mapped, mmap.mmap):
                with contextlib.suppress(BufferError):
                    mapped.close()
