"""The weight-only format (WOF): reading and validation (spec/SPEC.md, "Weight-only format").

The header is read by the parser generated from spec/onert_wof.ksy; the offset table with NumPy.
"""

from __future__ import annotations

import numpy as np
from onert_checkpoint_generated.layout import WofHeader
from onert_checkpoint_generated.onert_wof import OnertWof

from ...entries import DataStore, TensorList
from ...layout import WofLayout
from ...model import Checkpoint, Tensor, TrainingState
from ..blocks import Block, block_table, read_blocks, read_header
from ..record import Revision

__all__ = ["HEADER_SIZE", "is_wof_shaped", "read", "read_layout"]

HEADER_SIZE = WofHeader.SIZE
_NUM_ENTRIES = WofHeader.num_entries.offset


def read_layout(view: memoryview) -> tuple[OnertWof, Block]:
    hdr = read_header(view, "a WOF file", WofHeader, OnertWof, "an")
    size = len(view)
    blocks = read_blocks(view, [("tensors", HEADER_SIZE, size)], hdr.num_entries, size)
    return hdr, blocks["tensors"]


def is_wof_shaped(view: memoryview) -> bool:
    """The spec's tie-break when a version-1 file is neither a valid checkpoint nor valid WOF:
    its u32 at 4 is a plausible WOF entry count (non-zero, table fits). In a valid checkpoint
    that ends at its footer that u32 is ``ofs_opt1``: 0, or more than a third of the file size
    (SPEC section 3, step 5.3 handles checkpoints with bytes appended, in dispatch.py)."""
    size = len(view)
    if size < HEADER_SIZE:
        return False
    n = int.from_bytes(view[_NUM_ENTRIES : _NUM_ENTRIES + WofHeader.num_entries.size], "little")
    return n != 0 and HEADER_SIZE + 4 * n <= size


def read(view: memoryview, *, verify_data: bool = True, revision: Revision | None = None
         ) -> Checkpoint:
    """Validate a WOF file (no checksums: ``verify_data`` changes nothing)."""
    hdr, block = read_layout(view)
    hdr._io.close()  # everything is read: release the buffer (see BufferReader)
    store = DataStore(np.frombuffer(view, dtype=np.uint8))
    tensors: TensorList[Tensor] = TensorList(table=block_table(store, block, Tensor))
    ckpt = Checkpoint(tensors=tensors, optimizer=None, state=TrainingState(),
                      layout=WofLayout(revision.name if revision is not None else "wof",
                                       num_entries=hdr.num_entries),
                      file_size=len(view), source=view)
    ckpt._store = store
    return ckpt
