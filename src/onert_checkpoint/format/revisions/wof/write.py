"""Writing the weight-only format (spec/SPEC.md, "Weight-only format")."""

from __future__ import annotations

from collections.abc import Iterator

from onert_checkpoint_generated import structs

from ...loss import check_lossless
from ...model import Checkpoint
from ..blocks import U32_MAX, PlannedBlock, check_table_length, plan_block, refuse, storage_order
from .reader import HEADER_SIZE

__all__ = ["chunks", "plan", "write_chunks"]


def plan(ckpt: Checkpoint, *, allow_lossy: bool = False) -> PlannedBlock:
    check_lossless(ckpt, "wof", allow_lossy=allow_lossy)
    n = check_table_length(ckpt.table_length, "WOF")
    if len({t.index for t in ckpt.tensors}) != len(ckpt.tensors) or any(
        not 0 <= t.index < n for t in ckpt.tensors
    ):
        refuse(f"entry indices must be unique in 0..{n - 1}")
    size = HEADER_SIZE + 4 * n + sum(t.nbytes for t in ckpt.tensors)
    if size > U32_MAX:  # checked before the block is planned (spec/SPEC.md 9.2)
        refuse(f"WOF offsets are u32; a table of {n} entries and the data need {size} bytes")
    return plan_block(HEADER_SIZE, n, storage_order(ckpt.tensors))


def chunks(block: PlannedBlock) -> Iterator[bytes | memoryview]:
    yield structs.WofHeader.build({"num_entries": block.num_entries})
    yield from block.chunks()


def write_chunks(ckpt: Checkpoint, dialect: str | None,
                 **options: object) -> Iterator[bytes | memoryview]:
    """The file's bytes (the registry's writer of WOF, revisions/registry.py)."""
    return chunks(plan(ckpt, allow_lossy=bool(options.get("allow_lossy"))))
