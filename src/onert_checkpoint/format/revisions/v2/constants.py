"""Schema 2's constants: sizes, limits, codes and the CRC-32C (spec/SPEC.md, 6.1 to 6.4)."""

from __future__ import annotations

import os

# Sizes and limits (spec/SPEC.md, 6.2) ---------------------------------------------------------
HEADER_SIZE = 64
SECTION_ENTRY_SIZE = 32
TENSOR_RECORD_SIZE = 72
SLOT_DESCRIPTOR_SIZE = 16
SLOT_ENTRY_SIZE = 16
STATE_ENTRY_SIZE = 32
ORIGIN_SIZE = 24
SECTION_HEAD_SIZE = 8  # tensors and state sections
OPTIMIZER_HEAD_SIZE = 16

ALIGNMENT = 64
MAX_SECTIONS = 64
MAX_TENSORS = 1 << 24
MAX_RANK = 8
MAX_NAME_LEN = 1024
MAX_SLOTS = 16
MAX_STATE_ENTRIES = 1024
MAX_KEY_LEN = 255
MAX_VALUE_LEN = 1 << 20
#: ``ofs_data`` of a slot entry whose tensor has no state in that slot.
NO_STATE = 0xFFFF_FFFF_FFFF_FFFF

# Codes -------------------------------------------------------------------------------------
SECTION_KINDS = {"tensors": 1, "optimizer": 2, "state": 3, "data": 4, "origin": 5}
FLAG_REQUIRED = 1
#: The REQUIRED flag each kind defined by the specification must have (rule T4h).
KIND_FLAGS = {1: FLAG_REQUIRED, 2: FLAG_REQUIRED, 3: FLAG_REQUIRED, 4: FLAG_REQUIRED, 5: 0}
HAS_DTYPE, HAS_SHAPE, HAS_NAME, HAS_MODEL_INDEX = 1, 2, 4, 8
OPTIMIZER_CODES = {"sgd": 0, "sgd_momentum": 1, "adam": 2}
VALUE_TYPES = {"int": 0, "float": 1, "string": 2, "bytes": 3}
ORIGIN_REVISIONS = {"v1": 1, "wof": 2}
ORIGIN_DIALECTS = {None: 0, "onert": 1, "onert-micro": 2}
FOOTERLESS = 1


#: Well-known state keys and their value types; int keys are non-negative.
WELL_KNOWN_KEYS = {
    "step": "int",
    "epoch": "int",
    "iteration": "int",
    "batch_size": "int",
    "learning_rate": "float",
    "best_metric": "float",
    "loss_type": "string",
    "log_dir": "string",
}

KIND_NAMES = {v: k for k, v in SECTION_KINDS.items()}
OPTIMIZER_NAMES = {v: k for k, v in OPTIMIZER_CODES.items()}
ORIGIN_REVISION_NAMES = {v: k for k, v in ORIGIN_REVISIONS.items()}
ORIGIN_DIALECT_NAMES = {v: k for k, v in ORIGIN_DIALECTS.items()}


def align(n: int) -> int:
    """``n`` rounded up to a multiple of :data:`ALIGNMENT`."""
    return -(-n // ALIGNMENT) * ALIGNMENT


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
    func = None
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.util.find_spec("crc32c")
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(folder, "_crc32c" + suffix)
                if os.path.exists(path):
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                    ext_spec = importlib.util.spec_from_loader("crc32c._crc32c", loader)
                    assert ext_spec is not None  # a spec is always made when a loader is given
                    module = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(module)
                    func = module.crc32c
                    break
            if func is not None:
                break
    except (ImportError, OSError, AttributeError):
        func = None
    if func is None:
        import crc32c

        func = crc32c.crc32c
    _CRC32C = func
    return func


def header_crc(header) -> int:
    """The header checksum: CRC-32C of the 64 header bytes with bytes 4..7 taken as zero."""
    return crc(header[8:HEADER_SIZE], crc(b"\0\0\0\0", crc(header[0:4])))


def optimizer_name(code: int) -> str:
    return OPTIMIZER_NAMES.get(code, f"optimizer_{code}")


def section_order_key(kind: int) -> tuple[int, int]:
    """Sections are in ascending order of this key (rule T4i): tensors, optimizer, state,
    origin, other kinds by kind, data last."""
    known = {1: 1, 2: 2, 3: 3, 5: 4, 4: 6}
    return (known[kind], 0) if kind in known else (5, kind)
