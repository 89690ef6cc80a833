"""Hypothesis strategies for schema-1 and WOF checkpoints, in the conventions of each dialect."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState

U32_EDGES = st.sampled_from([0, 1, 2**31, 2**32 - 1]) | st.integers(0, 2**32 - 1)


@st.composite
def payload(draw, nbytes: int, seed_base: int = 0) -> np.ndarray:
    seed = draw(st.integers(0, 2**16))
    return np.random.default_rng(seed + seed_base).integers(0, 256, nbytes, dtype=np.uint8)


@st.composite
def checkpoints_v1(draw, dialect: str | None = None, max_entries: int = 8) -> Checkpoint:
    """A checkpoint that ``dialect`` ("onert", "onert-micro", or None for either) can write."""
    dialect = dialect or draw(st.sampled_from(["onert", "onert-micro"]))
    kind = draw(st.sampled_from(["sgd", "adam"]))
    n = draw(st.integers(0, max_entries))
    sizes = draw(st.lists(st.sampled_from([0, 1, 3, 4, 12, 64]), min_size=n, max_size=n))
    if dialect == "onert":
        present = list(range(n))
    else:
        present = sorted(draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))) if n else []
    tensors = []
    # onert-micro stores data in its own order (reverse operator order); offsets steer it.
    order = draw(st.permutations(present)) if dialect == "onert-micro" else present
    rank = {index: k for k, index in enumerate(order)}
    for i in present:
        offset = rank[i] + 1 if dialect == "onert-micro" else None
        tensors.append(Tensor(i, draw(payload(sizes[i], i)), offset=offset))
    optimizer = Optimizer(kind)
    # onert records an empty optimizer entry for a tensor without optimizer variables; m and v
    # of one tensor are both empty or both full (CheckpointExporter.cc).
    empty = {t.index for t in tensors if dialect == "onert" and draw(st.integers(0, 3)) == 0}
    for s, slot in enumerate(optimizer.slot_names):
        for t in tensors:
            nbytes = 0 if t.index in empty else t.nbytes
            data = draw(payload(nbytes, 1000 * (s + 1)))
            optimizer.slots[slot][t.index] = Buffer(t.index, data, t.offset)
    state = TrainingState(step=draw(U32_EDGES), epoch=draw(U32_EDGES))
    return Checkpoint(tensors, optimizer, state, revision="v1", dialect=dialect, num_entries=n)


@st.composite
def checkpoints_wof(draw, max_entries: int = 8) -> Checkpoint:
    n = draw(st.integers(0, max_entries))
    present = sorted(draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))) if n else []
    tensors = [Tensor(i, draw(payload(draw(st.sampled_from([0, 1, 4, 12])), i))) for i in present]
    return Checkpoint(tensors, None, TrainingState(), revision="wof", num_entries=n)
