"""Schema 2's constants: sizes, limits, codes and the CRC-32C (spec/SPEC.md, 6.1 to 6.4)."""

from __future__ import annotations

import os

from onert_checkpoint_generated import layout

# Sizes, limits and codes: generated from spec/onert_checkpoint_common.ksy and
# spec/onert_checkpoint_v2.ksy (onert_checkpoint_generated.layout), named as the readers use them.
HEADER_SIZE = layout.Header.SIZE
SECTION_ENTRY_SIZE = layout.SectionEntry.SIZE
TENSOR_RECORD_SIZE = layout.V2TensorRecord.SIZE
SLOT_DESCRIPTOR_SIZE = layout.SlotDescriptor.SIZE
SLOT_ENTRY_SIZE = layout.V2SlotEntry.SIZE
STATE_ENTRY_SIZE = layout.StateEntry.SIZE
ORIGIN_SIZE = layout.Origin.SIZE
SECTION_HEAD_SIZE = layout.V2TensorsHead.SIZE  # tensors and state sections
OPTIMIZER_HEAD_SIZE = layout.OptimizerHead.SIZE

ALIGNMENT = layout.ALIGNMENT
MAX_SECTIONS = layout.MAX_SECTIONS
MAX_TENSORS = layout.MAX_TENSORS
MAX_RANK = layout.MAX_RANK
MAX_NAME_LEN = layout.MAX_NAME_LEN
MAX_SLOTS = layout.MAX_SLOTS
MAX_STATE_ENTRIES = layout.MAX_STATE_ENTRIES
MAX_KEY_LEN = layout.MAX_KEY_LEN
MAX_VALUE_LEN = layout.MAX_VALUE_LEN
#: ``ofs_data`` of a slot entry whose tensor has no state in that slot.
NO_STATE = layout.NO_STATE

SectionKind = layout.SectionKind
SECTION_KINDS = {k.name.lower(): int(k) for k in SectionKind}
FLAG_REQUIRED = int(layout.SectionFlags.REQUIRED)
#: The REQUIRED flag each kind defined by the specification must have (rule T4h).
KIND_FLAGS = {int(k): 0 if k is SectionKind.ORIGIN else FLAG_REQUIRED for k in SectionKind}
_FLAGS = layout.V2TensorFlags
HAS_DTYPE, HAS_SHAPE = int(_FLAGS.HAS_DTYPE), int(_FLAGS.HAS_SHAPE)
HAS_NAME, HAS_MODEL_INDEX = int(_FLAGS.HAS_NAME), int(_FLAGS.HAS_MODEL_INDEX)
OPTIMIZER_CODES = {k.name.lower(): int(k) for k in layout.OptimizerKind}
VALUE_TYPES = {k.name.lower(): int(k) for k in layout.ValueType}
ORIGIN_REVISIONS = {k.name.lower(): int(k) for k in layout.OriginRevision}
#: The library names a dialect as Checkpoint.dialect does (None: unknown, or either).
ORIGIN_DIALECTS = {
    None if k is layout.OriginDialect.UNKNOWN else k.name.lower().replace("_", "-"): int(k)
    for k in layout.OriginDialect
}
FOOTERLESS = int(layout.OriginFlags.FOOTERLESS)


#: Well-known state keys and their value types; int keys are non-negative.
WELL_KNOWN_KEYS = {"step": "int", "epoch": "int", "iteration": "int", "batch_size": "int",
                   "learning_rate": "float", "best_metric": "float", "loss_type": "string",
                   "log_dir": "string"}

KIND_NAMES = {v: k for k, v in SECTION_KINDS.items()}
OPTIMIZER_NAMES = {v: k for k, v in OPTIMIZER_CODES.items()}
ORIGIN_REVISION_NAMES = {v: k for k, v in ORIGIN_REVISIONS.items()}
ORIGIN_DIALECT_NAMES = {v: k for k, v in ORIGIN_DIALECTS.items()}


def align(n: int, alignment: int = ALIGNMENT) -> int:
    """``n`` rounded up to a multiple of ``alignment`` (:data:`ALIGNMENT`: sections, 6.4)."""
    return -(-n // alignment) * alignment


def crc(data, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``, continuing from ``value``: one call of the crc32c
    library over the whole buffer (its hardware path), however large."""
    return (_CRC32C or _load_crc32c())(data, value)


_CRC32C = None


def _load_crc32c():
    """The crc32c library's C function, loaded on first use.

    ``import crc32c`` runs the package's ``__init__``, which asks ``importlib.metadata`` for
    its own version (most of its ~30 ms import); the extension module alone is what is used,
    so it is loaded directly when it can be found, else through the package.
    """
    global _CRC32C
    import importlib.machinery
    import importlib.util

    try:
        spec = importlib.util.find_spec("crc32c")  # found, not imported
        folders = (spec.submodule_search_locations or []) if spec else []
        path = next(p for folder in folders for suffix in importlib.machinery.EXTENSION_SUFFIXES
                    if os.path.exists(p := os.path.join(folder, "_crc32c" + suffix)))
        loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
        ext_spec = importlib.util.spec_from_loader("crc32c._crc32c", loader)
        assert ext_spec is not None  # a spec is always made when a loader is given
        module = importlib.util.module_from_spec(ext_spec)
        loader.exec_module(module)
        _CRC32C = module.crc32c
    except (ImportError, OSError, AttributeError, StopIteration):
        import crc32c

        _CRC32C = crc32c.crc32c
    return _CRC32C


_CRC_AT = layout.Header.header_crc.offset
_CRC_END = _CRC_AT + layout.Header.header_crc.size


def header_crc(header) -> int:
    """The header checksum: CRC-32C of the header bytes with ``header_crc`` taken as zero."""
    return crc(header[_CRC_END:HEADER_SIZE], crc(bytes(_CRC_END - _CRC_AT), crc(header[:_CRC_AT])))


def optimizer_name(code: int) -> str:
    return OPTIMIZER_NAMES.get(code, f"optimizer_{code}")


def section_order_key(kind: int) -> tuple[int, int]:
    """Sections are in ascending order of this key (rule T4i): tensors, optimizer, state,
    origin, other kinds by kind, data last."""
    known = {SectionKind.TENSORS: 1, SectionKind.OPTIMIZER: 2, SectionKind.STATE: 3,
             SectionKind.ORIGIN: 4, SectionKind.DATA: 6}
    return (known[kind], 0) if kind in known else (5, kind)
