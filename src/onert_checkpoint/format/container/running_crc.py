"""A CRC-32C computed beside the write that streams the same bytes (the save benchmark rows).

A writer that streams a data section and patches its CRC in afterwards (container/write.py)
reads every data byte twice: once for the CRC, once when the kernel copies it into the file.
The crc32c library releases the GIL while it runs, so a second thread can do the first read
while the main thread is in ``writev``: on two free cores the CRC costs no wall time.

Pieces are handed over in batches of at least :data:`BATCH_BYTES`; a stream smaller than one
batch is summed inline and never starts a thread. The bytes must not change until
:meth:`RunningCrc.value` returns (they are the caller's arrays, being written meanwhile).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["BATCH_BYTES", "RunningCrc"]

#: Bytes per hand-over: large enough that the queue and the thread switch cost nothing
#: against the CRC itself, small enough that the worker starts early.
BATCH_BYTES = 4 << 20

_STOP = None


class RunningCrc:
    """``crc(piece, value)`` over every piece given to :meth:`add`, in order."""

    def __init__(self, crc: Callable[[Any, int], int], value: int = 0) -> None:
        self._crc = crc
        self._value = value
        self._batch: list[Any] = []
        self._size = 0
        self._jobs: queue.SimpleQueue | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._cancelled = False

    def add(self, piece: Any) -> None:
        self._batch.append(piece)
        self._size += len(piece)
        if self._size >= BATCH_BYTES:
            self._hand_over()

    def _hand_over(self) -> None:
        if self._jobs is None:
            self._jobs = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._work, name="onert-checkpoint crc",
                                            daemon=True)
            self._thread.start()
        self._jobs.put(self._batch)
        self._batch, self._size = [], 0

    def _work(self) -> None:
        assert self._jobs is not None
        while True:
            batch = self._jobs.get()
            if batch is _STOP:
                return
            if self._error is not None or self._cancelled:
                continue  # drain: value() reports the first error
            try:
                for piece in batch:
                    self._value = self._crc(piece, self._value)
            except BaseException as exc:  # reported by value(), in the caller's thread
                self._error = exc

    def value(self) -> int:
        """The CRC of everything added (waits for the worker)."""
        self.close()
        if self._error is not None:
            raise self._error
        for piece in self._batch:
            self._value = self._crc(piece, self._value)
        self._batch = []
        return self._value

    def close(self, *, cancel: bool = False) -> None:
        """Stop the worker after the batches already handed over (``cancel``: skipping them,
        for a stream abandoned half-way); safe to call twice."""
        if cancel:
            self._cancelled = True
        if self._thread is not None:
            assert self._jobs is not None
            self._jobs.put(_STOP)
            self._thread.join()
            self._thread = None
