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

    Inside the block only the bytes that are looked at are read. After it the checkpoint's
    storage is released: reading an entry's data or size, copying, converting, exporting or
    saving the checkpoint raises :class:`~onert_checkpoint.CheckpointError` with code
    ``released`` (never empty entries: a save would write them over the file). Copy
    (``np.array(t.data)``) what must outlive the block. An array view kept past the block
    keeps the mapping alive instead of being invalidated.

        >>> import onert_checkpoint as oc
        >>> with oc.open("tests/data/real-onert/fc2-adam-step8.ckpt") as ckpt:
        ...     first = ckpt[0].data.view("<f4").copy()
        ...     ckpt.step, first.shape
        (8, (32,))
        >>> ckpt[0].nbytes
        Traceback (most recent call last):
        ...
        onert_checkpoint.format.errors.CheckpointError: released: entry 0: ...
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
