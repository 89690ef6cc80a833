"""Every public operation of the model objects is linear in the entry count:
4x the entries may cost about 4x, never about 16x. Ratios of 10k and 40k entries (both past the
few thousand entries whose objects fit in memory a fresh process has already touched: below
that, page faults make the larger case look superlinear), bound 16x; a scan per lookup (the
old ``Checkpoint.__getitem__``) makes them ~16x and more.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import onert_checkpoint as oc
from tests.cpu_timing import median_cpu_time
from tests.large_files import v2_many_slots

SMALL, LARGE = 10_000, 40_000
LIMIT = 16.0


def typical_time(action: Callable[[], object], repeat: int = 3) -> float:
    return median_cpu_time(action, repeat)


@pytest.fixture(scope="module")
def files() -> dict[int, bytes]:
    return {n: v2_many_slots(n, k=2, names=True) for n in (SMALL, LARGE)}


def every_name(ckpt: oc.Checkpoint, n: int) -> None:
    for i in range(n):
        assert ckpt[f"t{i}"].index == i


def every_index(ckpt: oc.Checkpoint, n: int) -> None:
    for i in range(n):
        assert ckpt[i].index == i


def misses(ckpt: oc.Checkpoint, n: int) -> None:
    assert not any(f"absent{i}" in ckpt for i in range(n))


def rename_and_look_up(ckpt: oc.Checkpoint, n: int) -> None:
    for i in range(n):
        ckpt[f"t{i}"].name = f"u{i}"
        assert ckpt[f"u{i}"].index == i


def renumber_and_look_up(ckpt: oc.Checkpoint, n: int) -> None:
    for i in reversed(range(n)):
        ckpt[i].index = i + n
        assert ckpt[i + n].name == f"t{i}"


def append_and_look_up(ckpt: oc.Checkpoint, n: int) -> None:
    for i in range(n // 10):
        ckpt.tensors.append(oc.Tensor(n + i, np.zeros(4, np.uint8), name=f"new{i}"))
        assert ckpt[f"new{i}"].index == n + i


def slot_lookups(ckpt: oc.Checkpoint, n: int) -> None:
    for i in range(n):
        assert ckpt.slot("s00", i).nbytes == 0


OPERATIONS = {
    "load": lambda ckpt, n: None,
    "every name": every_name,
    "every index": every_index,
    "misses": misses,
    "rename": rename_and_look_up,
    "renumber": renumber_and_look_up,
    "append": append_and_look_up,
    "slot lookups": slot_lookups,
    "iterate and verify": lambda ckpt, n: sum(t.nbytes for t in ckpt.tensors),
    "content_equal": lambda ckpt, n: ckpt.content_equal(ckpt),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_operation_is_linear(files, operation):
    act = OPERATIONS[operation]
    times = {
        n: typical_time(lambda n=n: act(oc.load(files[n]), n))
        for n in (SMALL, LARGE)  # type: ignore[misc]
    }
    ratio = times[LARGE] / max(times[SMALL], 1e-4)
    assert ratio < LIMIT, f"{operation}: {LARGE} entries take {ratio:.0f}x the time of {SMALL}"
