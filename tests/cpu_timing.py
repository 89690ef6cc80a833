"""CPU timings for the linear-time tests: CPU time, not wall time, so that other jobs on a busy
machine do not count, with the cyclic collector off while timing (its full passes scan every
object the test session keeps alive, so their cost grows with what ran before, not with the
operation compared)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable


def cpu_times(action: Callable[[], object], repeat: int) -> list[float]:
    """The CPU time of each of ``repeat`` runs of ``action``."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t = time.process_time()
            action()
            times.append(time.process_time() - t)
        finally:
            gc.enable()
    return times


def median_cpu_time(action: Callable[[], object], repeat: int = 3) -> float:
    """The median: a lucky run of a small case (its memory already faulted in) would make the
    minimum a poor measure."""
    return statistics.median(cpu_times(action, repeat))
