"""Writing the weight-only format (spec/SPEC.md, "Weight-only format")."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import error_for
from ..model import Checkpoint
from ..schemas import wof as schema
from ..schemas.common import OffsetTable
from .layout_plan import PlannedBlock, plan_block, storage_order
from .wof import HEADER_SIZE

__all__ = ["chunks", "plan"]


def plan(ckpt: Checkpoint, *, allow_lossy: bool = False) -> PlannedBlock:
    lost = []
    if ckpt.optimizer is not None and any(ckpt.optimizer.slots.values()):
        lost.append(f"the {ckpt.optimizer.kind} optimizer state")
    if ckpt.state:
        lost.append("the training state (" + ", ".join(sorted(ckpt.state)) + ")")
    if lost and not allow_lossy:
        raise error_for(
            "not_representable",
            None,
            None,
            "WOF holds weights only; writing it would lose "
            + " and ".join(lost)
            + " (pass allow_lossy=True to drop them)",
        )
    n = ckpt.table_length
    if len({t.index for t in ckpt.tensors}) != len(ckpt.tensors) or any(
        not 0 <= t.index < n for t in ckpt.tensors
    ):
        raise error_for(
            "not_representable", None, None, f"entry indices must be unique in 0..{n - 1}"
        )
    block = plan_block(HEADER_SIZE, n, storage_order(ckpt.tensors))
    if block.end > 0xFFFFFFFF:
        raise error_for(
            "not_representable", None, None, "WOF offsets are u32; the content is too large"
        )
    return block


def chunks(block: PlannedBlock) -> Iterator[bytes | memoryview]:
    yield schema.HEADER.build({"num_entries": len(block.table)})
    yield OffsetTable(len(block.table)).build(block.table)
    for entry in block.data:
        yield memoryview(entry.raw)
