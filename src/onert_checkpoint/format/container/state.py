"""The state section of a schema-2 file: rules V1 to V9 (spec/SPEC.md, 6.8 and 6.5)."""

from __future__ import annotations

import struct
from typing import NoReturn

import numpy as np
from onert_checkpoint_generated.layout import StateEntry, StateHead

from ..model import TrainingState
from .constants import (
    MAX_KEY_LEN,
    MAX_STATE_ENTRIES,
    MAX_VALUE_LEN,
    STATE_ENTRY_SIZE,
    VALUE_TYPES,
    WELL_KNOWN_KEYS,
)
from .rules import check_head, check_pool, decode, fail, first, read_records
from .section_table import SectionInfo

__all__ = ["check_state_section"]


def check_state_section(view: memoryview, sec: SectionInfo) -> TrainingState:
    """Rules V1 to V9, in order (at most MAX_STATE_ENTRIES entries: plain loops)."""
    n = int(check_head(view, sec, StateHead, "state", "num_entries")["num_entries"])
    if n == 0:
        fail("empty_section", "state.num_entries", sec.start, "a state section without entries")
    ent = read_records(view, sec, StateHead.SIZE, n, MAX_STATE_ENTRIES, StateEntry.DTYPE,
                       "state", "num_entries", sec.start)
    base = sec.start + StateHead.SIZE
    at = base + STATE_ENTRY_SIZE * np.arange(n, dtype=np.int64)
    check_state_entries(ent, at)
    check_state_pool(ent, at, base + STATE_ENTRY_SIZE * n, sec.end)
    return read_state_values(view, ent, at)


#: Each entry field's offset in the entry (spec/onert_checkpoint_common.ksy, `state_entry`).
_AT = {f.name: f.offset for f in StateEntry.FIELDS}


def _field(k: int, name: str) -> str:
    return f"state[{k}].{name}"


def _refuse(at: np.ndarray, k: int, code: str, name: str, message: str,
            extra: int = 0) -> NoReturn:
    fail(code, _field(k, name), int(at[k]) + _AT[name] + extra, message)


def check_state_entries(ent: np.ndarray, at: np.ndarray) -> None:
    """V3 reserved bytes, V4 value types, V5 key lengths, V6-V7 value lengths."""
    n = ent.size
    reserved = ent["reserved"].reshape(n, 3)
    # an array (numpy's hints also allow a scalar)
    if (i := first(np.asarray(reserved.any(axis=1)))) is not None:
        # the offset of the first non-zero byte (SPEC section 1.3, error offsets)
        j = int(np.flatnonzero(reserved[i])[0])
        _refuse(at, i, "reserved_nonzero", "reserved", "reserved byte is not 0", j)
    vt = ent["value_type"].astype(np.int64)
    if (i := first(vt > 3)) is not None:
        _refuse(at, i, "bad_state_type", "value_type", f"unknown value type {int(vt[i])}")
    lk = ent["len_key"].astype(np.int64)
    if (i := first((lk == 0) | (lk > MAX_KEY_LEN))) is not None:
        _refuse(at, i, "limit_exceeded", "len_key",
                f"a key has 1..{MAX_KEY_LEN} bytes, not {int(lk[i])}")
    scalar = vt <= 1
    if (i := first(scalar & (ent["len_value"] != 0))) is not None:
        _refuse(at, i, "bad_state_type", "len_value", "an int or float value has len_value 0")
    if (i := first(~scalar & (ent["len_value"] > MAX_VALUE_LEN))) is not None:
        _refuse(at, i, "limit_exceeded", "len_value", f"a value has at most {MAX_VALUE_LEN} bytes")


def check_state_pool(ent: np.ndarray, at: np.ndarray, pool_start: int, pool_end: int) -> None:
    """V8: keys and string/bytes values, interleaved in entry order (key 0, value 0, key 1...),
    back to back from the end of the entries to the end of the section."""
    keep = np.ones((ent.size, 2), bool)  # each entry's key, then its value if a string or bytes
    keep[:, 1] = ent["value_type"] > 1
    starts = np.stack([ent["ofs_key"], ent["value"]], axis=1)[keep]
    lengths = np.stack([ent["len_key"].astype(np.uint64), ent["len_value"]], axis=1)[keep]
    which = np.flatnonzero(keep)  # 2k: entry k's key, 2k + 1: its value

    def field_of(i: int) -> tuple[str, int]:
        k, is_value = divmod(int(which[i]), 2)
        name = "value" if is_value else "ofs_key"
        return _field(k, name), int(at[k]) + _AT[name]

    check_pool(starts, lengths, field_of, pool_start, pool_end, "state.pool")


def read_state_values(view: memoryview, ent: np.ndarray, at: np.ndarray) -> TrainingState:
    """V9, entry by entry: keys UTF-8 and unique, string values UTF-8, well-known keys of
    their type; the state as Python values."""
    lk = ent["len_key"].astype(np.int64)
    vt = ent["value_type"].astype(np.int64)
    state = TrainingState()
    for k in range(ent.size):
        ko = int(ent["ofs_key"][k])
        key = decode(view, ko, int(lk[k]), _field(k, "key"), ko)
        if key in state:
            fail("duplicate_state_key", _field(k, "key"), ko, f"key {key!r} appears twice")
        t = int(vt[k])
        raw = int(ent["value"][k])
        value: object
        if t == 0:
            value = raw - (1 << 64) if raw >= 1 << 63 else raw
        elif t == 1:
            value = struct.unpack("<d", raw.to_bytes(8, "little"))[0]
        elif t == 2:
            value = decode(view, raw, int(ent["len_value"][k]), _field(k, "value"), raw)
        else:
            value = bytes(view[raw : raw + int(ent["len_value"][k])])
        want = WELL_KNOWN_KEYS.get(key)
        negative = isinstance(value, int) and value < 0  # an int is read for type 0 only
        if want is not None and (VALUE_TYPES[want] != t or (t == 0 and negative)):
            _refuse(at, k, "bad_state_type", "value_type",
                    f"{key!r} is a well-known key of type {want}"
                    + (" (non-negative)" if want == "int" else ""))
        state[key] = value
    return state
