"""Schema 1 checkpoints: reading and validation (spec/SPEC.md, "Schema 1 checkpoint").

The header and footer are read by the parser generated from spec/onert_checkpoint_v1.ksy; the
offset tables, which the generated code would read one Python call per entry, are read with
NumPy (tests/spec/test_differential_tables.py proves both agree).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from onert_checkpoint_generated.layout import V1Footer, V1Header
from onert_checkpoint_generated.onert_checkpoint_v1 import OnertCheckpointV1

from ...entries import DataStore, SlotEntries, TensorList
from ...errors import error_for
from ...layout import Schema1Layout
from ...model import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from ..blocks import Block, block_table, read_blocks, read_header
from ..record import Revision

__all__ = ["FOOTER_SIZE", "HEADER_SIZE", "Layout", "read", "read_layout"]

HEADER_SIZE = V1Header.SIZE
FOOTER_SIZE = V1Footer.SIZE
_OPT1, _OTHER = V1Header.ofs_opt1.offset, V1Header.ofs_other.offset
#: Each Adam slot's block and the header field that says where it starts.
_SLOTS = (("m", V1Header.ofs_opt1), ("v", V1Header.ofs_opt2))


@dataclass(frozen=True)
class Layout:
    """Everything the validation found out, before any model object is built."""

    header: OnertCheckpointV1
    file_size: int
    kind: str
    blocks: dict[str, Block]
    dialect: str | None
    has_footer: bool


def read_layout(view: memoryview) -> Layout:
    """Apply every schema-1 rule of the spec, in the spec's order; raise the first that fails."""
    # The dispatcher has checked magic and version; the generated parser checks them again.
    hdr = read_header(view, "a schema-1 checkpoint", V1Header, OnertCheckpointV1)
    size = len(view)
    n = hdr.num_entries
    other = hdr.ofs_other
    has_footer = other != 0
    if has_footer and other + FOOTER_SIZE > size:
        raise error_for("truncated_file", "ofs_other", _OTHER,
                        f"the footer at {other} needs 8 bytes; the file ends at {size}")
    if has_footer and other + FOOTER_SIZE < size:
        raise error_for("trailing_bytes", "footer", other + FOOTER_SIZE,
                        f"{size - other - FOOTER_SIZE} bytes follow the footer, which must end the "
                        "file")
    end = other if has_footer else size
    opt1, opt2 = hdr.ofs_opt1, hdr.ofs_opt2
    kind = "adam" if opt2 != 0 else "sgd"
    if kind == "adam" and opt1 == 0:
        raise error_for("optimizer_layout", "ofs_opt1", _OPT1, "a v block without an m block")
    if kind == "sgd" and opt1 not in (0, end):
        raise error_for("optimizer_layout", "ofs_opt1", _OPT1, f"without a v block, ofs_opt1 "
                        f"must be 0 or {end} (no optimizer state); it is {opt1}")
    starts: list[tuple[str, int, str, int]] = [("weights", HEADER_SIZE, "header", 0)]
    if kind == "adam":
        for slot, field in _SLOTS:
            value = getattr(hdr, field.name)
            if value > size:
                raise error_for("offset_out_of_bounds", field.name, field.offset,
                                f"{field.name} is {value}, past the end of the {size}-byte file")
            starts.append((slot, value, field.name, field.offset))
    bounds = [*starts,
              ("footer", end, "ofs_other" if has_footer else "header", _OTHER if has_footer else 0)]
    spans = []  # each block: its name, where its table starts, where its data end
    for (name, start, _, _), (next_name, next_start, field, at) in itertools.pairwise(bounds):
        if start + 4 * n > next_start:
            raise error_for("block_order", field, at,
                            f"the {next_name} starts at {next_start}, inside the {name} block's "
                            f"{4 * n}-byte table at {start}")
        spans.append((name, start, next_start))
    blocks = read_blocks(view, spans, n, size)
    if kind == "adam":
        _check_slots(blocks)
    dialect = _dialect(blocks, kind, opt1, end, has_footer)
    return Layout(hdr, size, kind, blocks, dialect, has_footer)


def _check_slots(blocks: dict[str, Block]) -> None:
    """Rule 10, index by index; for one index the tests (a)..(e) of the spec, in order."""
    w, m, v = blocks["weights"], blocks["m"], blocks["v"]
    both = m.present & v.present
    tests = [("slot_without_weight", m, m.present & ~w.present),
             ("slot_without_weight", v, v.present & ~w.present),
             ("slot_size_mismatch", m, m.present & (m.sizes != 0) & (m.sizes != w.sizes)),
             ("slot_size_mismatch", v, v.present & (v.sizes != 0) & (v.sizes != w.sizes)),
             ("slot_size_mismatch", v, both & (m.sizes != v.sizes))]
    failing = np.stack([mask for _, _, mask in tests]) if tests[0][2].size else None
    if failing is None or not failing.any():
        return
    i = int(np.flatnonzero(failing.any(axis=0))[0])
    k = int(np.flatnonzero(failing[:, i])[0])
    code, block, _ = tests[k]
    slot = block.name
    if code == "slot_without_weight":
        message = f"{slot} entry {i} is present but weight entry {i} is absent"
    else:
        message = (f"{slot} entry {i} has {int(block.sizes[i])} bytes; the weight entry has "
                   f"{int(w.sizes[i])}" + (f" and m has {int(m.sizes[i])}" if k == 4 else ""))
    raise error_for(code, f"{slot}[{i}]", block.start + 4 * i, message)


def _dialect(
    blocks: dict[str, Block], kind: str, opt1: int, end: int, has_footer: bool
) -> str | None:
    """Which runtime's conventions the file follows (spec rule 11)."""
    onert = all(bool(b.present.all()) and b.in_table_order for b in blocks.values())
    micro = has_footer
    if kind == "sgd":
        onert = onert and opt1 == end
        micro = micro and opt1 == 0
    else:
        w = blocks["weights"]
        micro = micro and all(np.array_equal(blocks[s].present, w.present)
                              and np.array_equal(blocks[s].sizes, w.sizes) for s in ("m", "v"))
    if onert and micro:
        return None
    if onert:
        return "onert"
    if micro:
        return "onert-micro"
    raise error_for("dialect_conflict", "header", 0, "the file mixes onert's and onert-micro's "
                    "conventions; neither runtime reads it as written")


def read(view: memoryview, *, verify_data: bool = True, revision: Revision | None = None
         ) -> Checkpoint:
    """Validate a schema-1 checkpoint and wrap it in model objects (data are views on ``view``).

    Schema 1 has no checksums: ``verify_data`` changes nothing, every rule is structural.
    """
    layout = read_layout(view)
    optimizer = Optimizer(layout.kind)
    footer = layout.header.footer if layout.has_footer else None
    state = TrainingState({} if footer is None else {"step": footer.step, "epoch": footer.epoch})
    layout.header._io.close()  # everything is read: release the buffer (see BufferReader)
    # Columns, not objects: entries are made when first looked at (entries.py).
    store = DataStore(np.frombuffer(view, dtype=np.uint8))
    if layout.kind == "adam":
        for slot in ("m", "v"):
            optimizer.slots[slot] = SlotEntries(block_table(store, layout.blocks[slot], Buffer))
    weights = block_table(store, layout.blocks["weights"], Tensor)
    tensors: TensorList[Tensor] = TensorList(table=weights)
    ckpt = Checkpoint(tensors=tensors, optimizer=optimizer, state=state,
                      layout=Schema1Layout(revision.name if revision is not None else "v1",
                                           layout.dialect, layout.header.num_entries,
                                           () if layout.has_footer else ("footerless",)),
                      file_size=layout.file_size, source=view)
    ckpt._store = store
    return ckpt
