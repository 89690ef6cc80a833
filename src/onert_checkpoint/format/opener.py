"""``open``: a checkpoint for the length of a ``with`` block, its file mapping closed after it.

:func:`~onert_checkpoint.load` maps a path and hands out views on the mapping, which stays
open as long as any of them lives. :func:`open` gives the same object for lazy reading and, on
leaving the block, empties every entry and closes the mapping, as ``safetensors.safe_open`` does.
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
    """Map ``path`` and yield its :class:`Checkpoint`; on exit, release the mapping.

    What a released checkpoint does is documented once, on :func:`onert_checkpoint.open`
    (``onert_checkpoint.api``, which adds the model).
    """
    ckpt = load(path, **load_options)
    try:
        yield ckpt
    finally:
        _release(ckpt)


def _release(ckpt: Checkpoint) -> None:
    view = ckpt.source
    ckpt._release_data()
    ckpt.source = None
    if not isinstance(view, memoryview):
        return
    mapped = view.obj
    with contextlib.suppress(BufferError):
        view.release()
    if isinstance(mapped, mmap.mmap):
        # mmap refuses to close while a NumPy view still uses it; it then closes with the view.
        with contextlib.suppress(BufferError):
            mapped.close()
