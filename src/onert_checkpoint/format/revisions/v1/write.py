"""Writing schema-1 checkpoints exactly as each runtime does (spec/SPEC.md, "Schema 1").

onert (CheckpointExporter.cc): every entry present, data in table order, an empty optimizer
entry recorded at the current offset, SGD as ``ofs_opt1 == ofs_other`` and ``ofs_opt2 == 0``.
onert-micro (OMCheckpointSaver.cpp): N counts every model tensor, absent entries are 0, data in
the saver's order (kept from the file it was read from), SGD as ``ofs_opt1 == ofs_opt2 == 0``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from onert_checkpoint_generated import structs

from ...model import Checkpoint
from ..blocks import U32_MAX, PlannedBlock, check_table_length, plan_block, refuse, storage_order
from . import REVISION
from .reader import FOOTER_SIZE, HEADER_SIZE

__all__ = ["DIALECTS", "Plan", "chunks", "plan", "write_chunks"]

DIALECTS = REVISION.dialects


@dataclass(frozen=True)
class Plan:
    dialect: str
    header: dict[str, int]
    blocks: list[PlannedBlock]
    footer: dict[str, int] | None
    file_size: int


def _onert_representable(ckpt: Checkpoint) -> str | None:
    """Why onert's conventions cannot hold ``ckpt``, or None."""
    indices = [t.index for t in ckpt.tensors]
    if indices != list(range(len(indices))) or ckpt.table_length != len(indices):
        return "onert files have no absent entries (indices must be 0..N-1, all present)"
    return None


def _micro_representable(ckpt: Checkpoint) -> str | None:
    if "footerless" in ckpt.layout.quirks:
        return "onert-micro files always have a footer"
    if ckpt.optimizer is not None and ckpt.optimizer.kind == "adam":
        sizes = {t.index: t.nbytes for t in ckpt.tensors}
        for slot in ("m", "v"):
            entries = ckpt.optimizer.slots.get(slot, {})
            if {i: b.nbytes for i, b in entries.items()} != sizes:
                return f"onert-micro keeps Adam's {slot} for every saved tensor, at its size"
    return None


def _check_content(ckpt: Checkpoint) -> str:
    kind = "sgd" if ckpt.optimizer is None else ckpt.optimizer.kind
    if kind not in ("sgd", "adam"):
        refuse(f"schema 1 stores only SGD and Adam, not {kind}")
    n = check_table_length(ckpt.table_length, "schema 1")
    if any(t.index < 0 or t.index >= n for t in ckpt.tensors):
        refuse(f"entry indices must lie in 0..{n - 1}")
    if len({t.index for t in ckpt.tensors}) != len(ckpt.tensors):
        refuse("two tensors share an entry index")
    if kind == "adam":
        # Sizes by index, looked up once: ckpt[i] scans the tensors (quadratic at 100,000).
        # Each size read once (nbytes is a property, and a save of 30,000 entries reads many).
        present = {t.index: t.nbytes for t in ckpt.tensors}
        assert ckpt.optimizer is not None
        sizes = {}
        for slot in ("m", "v"):
            sizes[slot] = {i: b.nbytes for i, b in ckpt.optimizer.slots.get(slot, {}).items()}
            for i, size in sizes[slot].items():
                if i not in present:
                    refuse(f"{slot} entry {i} has no weight entry")
                if size not in (0, present[i]):
                    refuse(f"{slot} entry {i} is {size} bytes; its weight is {present[i]}")
        m, v = sizes["m"], sizes["v"]
        if m != v:
            for i in sorted(set(m) | set(v)):
                if m.get(i, 0) != v.get(i, 0):
                    refuse(f"m and v entries {i} differ in size (Adam keeps both or neither)")
    extra = sorted(set(ckpt.state) - {"step", "epoch"})
    if extra:
        refuse(f"schema 1 stores only step and epoch; not {', '.join(extra)}")
    for key in ("step", "epoch"):
        value = ckpt.state.get(key, 0)
        if not isinstance(value, int) or not 0 <= value <= U32_MAX:
            refuse(f"{key} must be an integer in 0..2**32-1, not {value!r}")
    return kind


def plan(ckpt: Checkpoint, dialect: str | None = None) -> Plan:
    """Compute every offset of the file before a byte is written."""
    kind = _check_content(ckpt)
    if dialect is None:  # the one whose conventions hold the content
        dialect = "onert" if _onert_representable(ckpt) is None else "onert-micro"
    elif dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; choose from {', '.join(DIALECTS)}")
    why = _onert_representable(ckpt) if dialect == "onert" else _micro_representable(ckpt)
    if why:
        refuse(f"cannot write as {dialect}: {why}")
    n = ckpt.table_length
    footer_present = not (dialect == "onert" and "footerless" in ckpt.layout.quirks)
    blocks = [plan_block(HEADER_SIZE, n, list(ckpt.tensors) if dialect == "onert"
                         else storage_order(ckpt.tensors))]
    if kind == "adam":
        assert ckpt.optimizer is not None
        for slot in ("m", "v"):
            entries = ckpt.optimizer.slots.get(slot, {})
            if dialect == "onert":
                # Empty entries (absent or zero-length) sit at the offset where they fall in
                # table order, as CheckpointExporter's DataBuffer::setData records them.
                stored = []
                empties: dict[int, int] = {}
                for t in ckpt.tensors:
                    entry = entries.get(t.index)
                    if entry is not None and entry.nbytes:
                        stored.append(entry)
                    else:
                        empties[t.index] = len(stored)
                blocks.append(plan_block(blocks[-1].end, n, stored, empty_entries=empties))
            else:
                blocks.append(plan_block(blocks[-1].end, n, storage_order(entries.values())))
    pos = blocks[-1].end
    other = pos if footer_present else 0
    size = pos + (FOOTER_SIZE if footer_present else 0)
    if pos > U32_MAX:  # planning allocated nothing of the size of N (blocks.py)
        refuse(f"schema 1 offsets are u32; this content needs {size} bytes")
    opt1 = blocks[1].start if kind == "adam" else (pos if dialect == "onert" else 0)
    opt2 = blocks[2].start if kind == "adam" else 0
    header = {"ofs_opt1": opt1, "ofs_opt2": opt2, "ofs_other": other, "num_entries": n}
    footer = {"step": ckpt.state.step or 0, "epoch": ckpt.state.epoch or 0}
    return Plan(dialect, header, blocks, footer if footer_present else None, size)


def chunks(p: Plan) -> Iterator[bytes | memoryview]:
    """The file's bytes in order: header, each block's table then data, footer."""
    yield structs.V1Header.build(p.header)
    for block in p.blocks:
        yield from block.chunks()
    if p.footer is not None:
        yield structs.V1Footer.build(p.footer)


def write_chunks(ckpt: Checkpoint, dialect: str | None,
                 **options: object) -> Iterator[bytes | memoryview]:
    """The file's bytes (the registry's writer of schema 1, revisions/registry.py)."""
    return chunks(plan(ckpt, dialect))
