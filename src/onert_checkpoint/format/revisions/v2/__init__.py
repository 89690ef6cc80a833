"""Schema 2 checkpoints: constants, reading and validation (spec/SPEC.md, section 6).

One module per part of SPEC 6.5's reading order: ``header`` (H1-H5), ``section_table``
(T1-T5), ``tensors`` (R0-R11), ``optimizer`` (O1-O10), ``state`` (V1-V9), ``origin``
(G1-G3), ``data_ranges`` (D0-D4 and the deferred data checks); ``rules`` holds what they
share, ``constants`` the numbers of 6.1-6.4, ``reader`` puts them together.
"""

from ...container.constants import (
                                    ALIGNMENT,
                                    FLAG_REQUIRED,
                                    FOOTERLESS,
                                    HAS_DTYPE,
                                    HAS_MODEL_INDEX,
                                    HAS_NAME,
                                    HAS_SHAPE,
                                    MAX_KEY_LEN,
                                    MAX_NAME_LEN,
                                    MAX_RANK,
                                    MAX_SECTIONS,
                                    MAX_SLOTS,
                                    MAX_STATE_ENTRIES,
                                    MAX_TENSORS,
                                    MAX_VALUE_LEN,
                                    NO_STATE,
                                    OPTIMIZER_CODES,
                                    OPTIMIZER_HEAD_SIZE,
                                    ORIGIN_DIALECTS,
                                    ORIGIN_REVISIONS,
                                    SECTION_HEAD_SIZE,
                                    SECTION_KINDS,
                                    SLOT_DESCRIPTOR_SIZE,
                                    SLOT_ENTRY_SIZE,
                                    STATE_ENTRY_SIZE,
                                    TENSOR_RECORD_SIZE,
                                    VALUE_TYPES,
                                    WELL_KNOWN_KEYS,
                                    SectionKind,
                                    align,
                                    crc,
                                    header_crc,
)
from .reader import read

__all__ = ["ALIGNMENT", "FLAG_REQUIRED", "FOOTERLESS", "HAS_DTYPE", "HAS_MODEL_INDEX", "HAS_NAME",
           "HAS_SHAPE", "MAX_KEY_LEN", "MAX_NAME_LEN", "MAX_RANK", "MAX_SECTIONS", "MAX_SLOTS",
           "MAX_STATE_ENTRIES", "MAX_TENSORS", "MAX_VALUE_LEN", "NO_STATE", "OPTIMIZER_CODES",
           "OPTIMIZER_HEAD_SIZE", "ORIGIN_DIALECTS", "ORIGIN_REVISIONS", "SECTION_HEAD_SIZE",
           "SECTION_KINDS", "SLOT_DESCRIPTOR_SIZE", "SLOT_ENTRY_SIZE", "STATE_ENTRY_SIZE",
           "TENSOR_RECORD_SIZE", "VALUE_TYPES", "WELL_KNOWN_KEYS", "SectionKind", "align", "crc",
           "header_crc", "read"]
