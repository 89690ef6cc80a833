"""A checkpoint as named arrays plus string metadata: the common ground of NumPy, safetensors
and PyTorch.

The arrays are named as `_Keys` says, typed as `to_numpy_dict` says (the rule of ``onert-ckpt
dump``). The metadata (all strings, as safetensors requires; JSON inside is strict RFC 8259)
carry what the arrays cannot, key by key in docs/cli.md ("export and import are lossless"), so
``from_numpy_dict(*to_numpy_dict(ckpt, metadata=True))`` writes the original file back byte
for byte, for every valid file of every revision.
"""

from __future__ import annotations

import base64
import errno
import itertools
import json
import math
import os
import stat
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ..atomic_file import write_atomic
from ..format.errors import CheckpointError, error_for
from ..format.loss import check_lossless, fitting_revision
from ..format.model import (
    OPTIMIZER_SLOTS,
    Buffer,
    Checkpoint,
    Optimizer,
    Section,
    Tensor,
    TrainingState,
)
from ..format.revisions.registry import RECOMMENDED, layout_for
from ..format.revisions.v1.write import DIALECTS
from ..format.saving import WRITERS, verify_sources
from ..format.typed import typed_view
from .npz_stream import npy_geometry, npz_chunks, string_member

__all__ = ["FORMAT_NAME", "checkpoint_metadata", "from_npz", "from_numpy_dict", "to_npz",
           "to_numpy_dict"]

#: The ``format`` metadata value that marks an export of this package.
FORMAT_NAME = "onert-checkpoint"
#: npz member names that carry the metadata: ``__metadata__.<key>`` (0-d string arrays).
NPZ_META_PREFIX = "__metadata__."


def _fail(message: str, field: str | None = None) -> Exception:
    return error_for("not_representable", field, None, message)


#: dtypes exported typed: plain numbers every safetensors and NumPy reader has. Others (bool,
#: whose bytes may be other than 0/1; complex; circle types NumPy lacks) travel as raw bytes.
TYPED_EXPORT = frozenset(["float16", "float32", "float64", "int8", "int16", "int32", "int64",
                          "uint8", "uint16", "uint32", "uint64"])


def array_count(ckpt: Checkpoint) -> int:
    """The arrays of an export of ``ckpt``, one per tensor and per slot entry, counted from the
    tables (no array made)."""
    slots = ckpt.optimizer.slots.values() if ckpt.optimizer is not None else ()
    return len(ckpt.tensors) + sum(len(entries) for entries in slots)


def path_safe(name: str) -> bool:
    """True when ``name`` (plus ``.npy``) is an npz member name no extractor can turn into a
    path outside its folder: no ``..``, ``.`` or empty component, no leading ``/``, no
    backslash, no drive (a ``:`` in the first component). ``/`` inside is kept: ``a/b`` names
    a folder ``a`` below the extraction folder, as TensorFlow-style names do."""
    if "\\" in name:
        return False
    parts = name.split("/")
    return ":" not in parts[0] and all(p not in ("", ".", "..") for p in parts)


class _Keys:
    """The names of the arrays: ``<name>`` for a weight, ``<name>.<label>`` for a slot entry.

    ``<name>`` is the tensor's name when every name is unique, printable, not the metadata
    prefix and, with ``paths`` (npz members), `path_safe`; else the entry index (one list, no
    mapping per entry: a file may hold millions of empty entries). A slot's label is its name
    when every slot name is printable (and, with ``paths``, path-safe), else ``slot<k>`` by
    position (a container may alter a control character in an array name; the ``arrays``
    metadata maps the labels back to the names)."""

    def __init__(self, ckpt: Checkpoint, paths: bool) -> None:
        slots = ckpt.optimizer.slot_names if ckpt.optimizer is not None else ()
        if all(s.isprintable() and (not paths or path_safe(s)) for s in slots):
            self.labels = {s: s for s in slots}
        else:
            self.labels = {s: f"slot{k}" for k, s in enumerate(slots)}
        tensors = self._tensors = ckpt.tensors
        names = tensors.names() if hasattr(tensors, "names") else [t.name for t in tensors]
        usable = all(n and n.isprintable() and not n.startswith(NPZ_META_PREFIX)
                     and (not paths or path_safe(n)) for n in names)
        labels = self.labels.values() if usable else ()  # no "None.m" for millions of entries
        every = [*names, *(f"{n}.{s}" for n in names for s in labels)] if labels else names
        self.names = [str(n) for n in names] if usable and len(set(every)) == len(every) else None
        self._rows: dict[int, int] | None = None

    def at(self, pos: int, index: int) -> str:
        """The name of the tensor at list position ``pos`` (entry index ``index``)."""
        return str(index) if self.names is None else self.names[pos]

    def slot(self, index: int, slot: str) -> str:
        """The name of the entry ``index`` of slot ``slot``."""
        if self.names is None:
            return f"{index}.{self.labels[slot]}"
        find = getattr(self._tensors, "position_of_index", None)
        if find is None:
            if self._rows is None:
                self._rows = {t.index: k for k, t in enumerate(self._tensors)}
            find = self._rows.get
        pos = find(index)
        if pos is None:
            raise KeyError(index)
        return f"{self.names[pos]}.{self.labels[slot]}"


class _JsonObject:
    """A JSON object written a member at a time, the same text ``json.dumps`` gives the dict
    (``", "`` and ``": "`` separators), kept as a few joined chunks rather than an object per
    member: ``pieces()``, whose concatenation is the JSON."""

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._pieces: list[str] = []
        self.count = 0

    def add(self, key: str, value_json: str) -> None:
        self._pieces.append(f"{_dumps(key)}: {value_json}")
        self.count += 1
        if len(self._pieces) >= 4096:
            self._flush()

    def _flush(self) -> None:
        self._chunks.append((", " if self._chunks else "") + ", ".join(self._pieces))
        self._pieces = []

    def pieces(self) -> list[str]:
        if self._pieces:
            self._flush()
        return ["{", *self._chunks, "}"]


def _state_json(value: object) -> object:
    """A state value in the export metadata: int, string as themselves, bytes as
    ``{"bytes": hex}``, a float as a JSON number when finite, else as spec/TOOLKIT.md section 1's
    ``{"float": "nan" | "inf" | "-inf"}`` plus ``"bits"``, its IEEE-754 bits in hex (a NaN's
    sign and payload are content too)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, float) and not math.isfinite(value):
        name = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return {"float": name, "bits": struct.pack(">d", value).hex()}
    return value


def _state_from_json(obj: Mapping[str, Any]) -> TrainingState:
    state = TrainingState()
    for key, value in obj.items():
        if isinstance(value, dict) and set(value) == {"bytes"}:
            value = bytes.fromhex(value["bytes"])
        elif isinstance(value, dict) and "float" in value:
            if "bits" in value:
                value = struct.unpack(">d", bytes.fromhex(value["bits"]))[0]
            else:
                value = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[value["float"]]
        state[key] = value
    return state


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=True, allow_nan=False)


def checkpoint_metadata(ckpt: Checkpoint, *, paths: bool = False) -> dict[str, str]:
    """The string metadata that, with the arrays, makes an export lossless (``paths``: for
    arrays named as npz members, see `path_safe`)."""
    return {k: v if isinstance(v, str) else "".join(v) for k, v in _metadata(ckpt, paths).items()}


def _metadata(ckpt: Checkpoint, paths: bool) -> dict[str, str | list[str]]:
    """`checkpoint_metadata`, each per-entry text as pieces (joined, it would be held
    twice while joining; a writer can stream the pieces)."""
    keys = _Keys(ckpt, paths)
    # Each per-entry value is written into its JSON text as it is met: no dict of every entry.
    entries, offsets, arrays, described = _JsonObject(), _JsonObject(), _JsonObject(), _JsonObject()
    for pos, t in enumerate(ckpt.tensors):
        key = keys.at(pos, t.index)
        entries.add(key, _dumps(t.index))
        arrays.add(key, f"[{_dumps(t.index)}, null]")
        if t.offset is not None:
            offsets.add(key, _dumps(t.offset))
        if (t.name, t.dtype, t.shape, t.model_index) != (None, None, None, None):
            described.add(key, _dumps({
                "name": t.name, "dtype": t.dtype,
                "shape": None if t.shape is None else list(t.shape), "model_index": t.model_index,
            }))
    if ckpt.optimizer is not None:
        for slot, slot_entries in ckpt.optimizer.slots.items():
            for i, entry in slot_entries.items():
                key = keys.slot(i, slot)
                arrays.add(key, f"[{_dumps(i)}, {_dumps(slot)}]")
                if entry.offset is not None:
                    offsets.add(key, _dumps(entry.offset))
    meta: dict[str, str | list[str]] = {
        "format": FORMAT_NAME,
        "revision": ckpt.revision,
        "num_entries": str(ckpt.table_length),
        "optimizer": ckpt.optimizer.kind if ckpt.optimizer is not None else "none",
        "state": _dumps({k: _state_json(v) for k, v in ckpt.state.items()}),
        "entries": entries.pieces(),
        "offsets": offsets.pieces(),
        "arrays": arrays.pieces(),
    }
    if ckpt.optimizer is not None:
        meta["slots"] = _dumps(list(ckpt.optimizer.slot_names))
    if described.count:
        meta["tensors"] = described.pieces()
    if ckpt.dialect is not None:
        meta["dialect"] = ckpt.dialect
    layout = ckpt.layout
    if layout.origin is not None:
        meta["origin"] = _dumps(layout.origin)
    if layout.quirks:
        meta["quirks"] = _dumps(list(layout.quirks))
    if layout.data_order is not None:  # schema 3's order column (which offsets cannot tie-break)
        meta["data_order"] = _dumps([int(i) for i in layout.data_order])
    # schema 3's per-block checksums (block size) and range index (group size G): 0 for none
    for key in ("data_block_size", "range_index_group"):
        if getattr(layout, key) is not None:
            meta[key] = _dumps(int(getattr(layout, key)))
    if layout.sections:
        meta["sections"] = _dumps([{"kind": sec.kind, "required": bool(sec.required),
                                    "data": base64.b64encode(bytes(sec.data)).decode("ascii")}
                                   for sec in layout.sections])
    return meta


def to_numpy_dict(ckpt: Checkpoint, *, metadata: bool = False) -> Any:
    """The weights and optimizer slots of ``ckpt`` as ``{name: array}``.

    Arrays are typed and shaped when the entry's dtype is known (a model bound, see
    [`bind`][onert_checkpoint.bind], or schema-2 records) and a plain number type, flat uint8
    (the raw bytes) otherwise; they are read-only views on the checkpoint's data (the empty
    arrays of one dtype and shape are one object). With ``metadata=True`` returns
    ``(arrays, metadata)``.

        >>> import onert_checkpoint as oc
        >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> arrays, meta = oc.to_numpy_dict(ckpt, metadata=True)
        >>> sorted(arrays)[:4], arrays["0"].dtype, meta["optimizer"], meta["state"]
        (['0', '0.m', '0.v', '1'], dtype('uint8'), 'adam', '{"step": 8, "epoch": 0}')
        >>> oc.to_bytes(oc.from_numpy_dict(arrays, meta)) == oc.to_bytes(ckpt)
        True
    """
    arrays = dict(_iter_arrays(ckpt, False))
    return (arrays, checkpoint_metadata(ckpt)) if metadata else arrays


def _iter_arrays(ckpt: Checkpoint, paths: bool) -> Iterator[tuple[str, np.ndarray]]:
    """(export name, array) of every weight, then of every slot entry, one at a time: a writer
    streams them without holding them all."""
    keys = _Keys(ckpt, paths)
    # a slot array is typed as its weight when it has the weight's size: only the weights'
    # (size, dtype, shape) are kept for that, and only when there are slots
    weights: dict[int, tuple[int, str | None, tuple[int, ...] | None]] = {}
    with_slots = ckpt.optimizer is not None and any(ckpt.optimizer.slots.values())
    # Every empty array of one dtype and shape is one object: an array object costs about
    # 150 bytes, 60 MB for 400k empty entries, and an empty array has no data to tell apart.
    empties: dict[tuple[str | None, tuple[int, ...] | None], np.ndarray] = {}

    def view(raw: np.ndarray, dtype: str | None, shape: tuple[int, ...] | None) -> np.ndarray:
        dtype = dtype if dtype in TYPED_EXPORT else None
        if raw.nbytes:
            return typed_view(raw, dtype, shape)
        if (dtype, shape) not in empties:
            empties[dtype, shape] = typed_view(raw, dtype, shape)
        return empties[dtype, shape]

    for pos, t in enumerate(ckpt.tensors):
        if with_slots:
            weights[t.index] = (t.nbytes, t.dtype, t.shape)
        yield keys.at(pos, t.index), view(t.raw, t.dtype, t.shape)
    if ckpt.optimizer is not None:
        for slot, entries in ckpt.optimizer.slots.items():
            for i, entry in sorted(entries.items()):
                size, dtype, shape = weights.get(i, (None, None, None))
                if size != entry.nbytes:  # not the size of its weight: exported as raw bytes
                    dtype = shape = None
                yield keys.slot(i, slot), view(entry.raw, dtype, shape)


def _split(name: str, slots: tuple[str, ...]) -> tuple[str, str | None]:
    for slot in slots:
        if name.endswith("." + slot):
            return name[: -len(slot) - 1], slot
    return name, None


def _meta_json(meta: Mapping[str, str], key: str, default: str, kind: Any) -> Any:
    """``meta[key]`` parsed as JSON of type ``kind``; malformed metadata is not_representable
    naming the key (never a bare JSON or type error)."""
    try:
        value = json.loads(meta.get(key, default))
    except (TypeError, ValueError) as exc:
        raise _fail(f"metadata {key!r} is not valid JSON: {exc}") from None
    if not isinstance(value, kind):
        raise _fail(f"metadata {key!r} is not of the JSON type it needs")
    return value


def _meta_choice(meta: Mapping[str, str], key: str, choices: tuple[str, ...]) -> None:
    """``meta[key]``, when present, must be one of ``choices``: an unknown revision or dialect
    is refused at import, naming the key, not later by the writer as a bare ValueError."""
    value = meta.get(key)
    if value is not None and value not in choices:
        raise _fail(f"metadata {key!r} is {value!r}, not one of {', '.join(choices)}",
                    f"metadata.{key}")


def _layout_values(meta: Mapping[str, str]) -> dict[str, Any]:
    """The layout fields the metadata give (``layout_for``'s values), each checked for the JSON
    type it needs."""
    values = {"dialect": meta.get("dialect"),
              "origin": _meta_json(meta, "origin", "null", (dict, type(None))),
              "quirks": tuple(_meta_json(meta, "quirks", "[]", list)), "sections": []}
    for item in _meta_json(meta, "sections", "[]", list):
        try:
            values["sections"].append(Section(int(item["kind"]), base64.b64decode(
                item["data"], validate=True), bool(item["required"])))
        except (KeyError, TypeError, ValueError) as exc:
            raise _fail(f"metadata 'sections' has a malformed entry: {exc!r}") from None
    order = values["data_order"] = _meta_json(meta, "data_order", "null", (list, type(None)))
    if order is not None and any(type(i) is not int for i in order):
        raise _fail("metadata 'data_order' must list entry indices (integers)")
    for key, what in (("data_block_size", "a block size in bytes, or 0"),
                      ("range_index_group", "a group size in ranges, or 0")):
        size = values[key] = _meta_json(meta, key, "null", (int, type(None)))
        if type(size) is bool or (size is not None and size < 0):
            raise _fail(f"metadata '{key}' must be {what}")
    return values


def from_numpy_dict(arrays: Mapping[str, Any], metadata: Mapping[str, str] | None = None, *,
                    entries: Mapping[str, int] | None = None,
                    optimizer: str | None = None) -> Checkpoint:
    """Build a checkpoint from ``{name: array}`` (the inverse of
    [`to_numpy_dict`][onert_checkpoint.to_numpy_dict]).

    Which entry and slot each array is comes from ``metadata["arrays"]`` (an export of this
    package), else entry indices from ``metadata["entries"]`` or ``entries`` (name -> index),
    else from the names themselves, which must then be entry indices ("0", "0.m", ...). Without
    metadata the optimizer is Adam when there are ``.m``/``.v`` arrays and SGD otherwise, and
    the state is empty. Any array-like works (NumPy, or PyTorch CPU tensors via ``.numpy()``).
    Malformed metadata raises [`NotRepresentableError`][onert_checkpoint.NotRepresentableError].

    The revision is the metadata's; without one it is schema 1 (what the runtimes read) when
    it holds the content, else schema 3 (the recommended revision): arrays of names, dtypes
    and shapes of their own, an optimizer other than SGD and Adam, or a state schema 1 cannot
    hold. Names from ``entries`` are the caller's (a model's) and need no schema 3.

    ``optimizer`` ("adam" or "sgd") is the optimizer of weights-only arrays: Adam gets zeroed m
    and v for every tensor (a run starting from these weights, as onert starts one). Arrays
    that hold optimizer state keep it, and must be of that optimizer.
    """
    meta = dict(metadata or {})
    if meta.get("format", FORMAT_NAME) != FORMAT_NAME:
        raise _fail(f"metadata format is {meta['format']!r}, not {FORMAT_NAME!r}")
    _meta_choice(meta, "revision", tuple(sorted(WRITERS)))
    _meta_choice(meta, "dialect", DIALECTS)
    kind = meta.get("optimizer")
    if kind is None:
        kind = "adam" if any(_split(n, ("m", "v"))[1] for n in arrays) else "sgd"
    slot_names = (tuple(_meta_json(meta, "slots", "null", (list, type(None))) or ())
                  or OPTIMIZER_SLOTS.get(kind, ()))
    placed: dict[str, tuple[int, str | None]] = {}
    if "arrays" in meta:
        for name, where in _meta_json(meta, "arrays", "{}", dict).items():
            try:
                index, slot = int(where[0]), where[1]
            except (TypeError, ValueError, IndexError, KeyError):
                raise _fail(f"metadata 'arrays' places {name!r} nowhere") from None
            if slot is not None and slot not in slot_names:
                raise _fail(f"metadata 'arrays' names the slot {slot!r}, not one of {slot_names}")
            placed[name] = (index, slot)
    else:
        index_of: dict[str, int] | None = None  # None: the names are entry indices
        if "entries" in meta:
            try:
                index_of = {k: int(v) for k, v in _meta_json(meta, "entries", "{}", dict).items()}
            except (TypeError, ValueError):
                raise _fail("metadata 'entries' maps a name to no entry index") from None
        elif entries is not None:
            index_of = {k: int(v) for k, v in entries.items()}
        for name in arrays:
            base, slot = _split(name, slot_names)
            if index_of is None and not base.isdecimal():
                raise _fail(f"array {name!r} is not named by an entry index; give the model or "
                            "entries")
            at = int(base) if index_of is None else index_of.get(base)
            if at is None:
                raise _fail(f"array {name!r} names no entry")
            placed[name] = (at, slot)
    try:
        offsets = {k: int(v) for k, v in _meta_json(meta, "offsets", "{}", dict).items()}
        num_entries = int(meta["num_entries"]) if "num_entries" in meta else None
    except (TypeError, ValueError):
        raise _fail("metadata 'offsets' or 'num_entries' is not an integer") from None
    described = _meta_json(meta, "tensors", "{}", dict)
    tensors: list[Tensor] = []
    held = None if kind == "none" else Optimizer(kind, {n: {} for n in slot_names})
    weights: dict[int, tuple[str, np.dtype, tuple[int, ...]]] = {}  # Adam's: see _check_slots
    for name, value in arrays.items():
        if name not in placed:
            raise _fail(f"array {name!r} names no entry")
        index, slot = placed[name]
        arr = np.asarray(value)
        if arr.dtype.byteorder == ">":  # the checkpoint's bytes are little-endian
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        if slot is None:
            tensor = Tensor(index=index, data=raw, offset=offsets.get(name))
            info = described.get(name)
            if isinstance(info, dict):
                tensor.name, tensor.dtype = info.get("name"), info.get("dtype")
                shape = info.get("shape")
                tensor.shape = None if shape is None else tuple(shape)
                tensor.model_index = info.get("model_index")
            elif arr.dtype != np.uint8:
                tensor.name = name if name != str(index) else None
                tensor.dtype, tensor.shape = str(arr.dtype.newbyteorder("=")), tuple(arr.shape)
            elif name != str(index):
                tensor.name = name
            tensors.append(tensor)
            if kind == "adam":
                weights[index] = (name, arr.dtype.newbyteorder("="), arr.shape)
        else:
            if held is None:
                raise _fail(f"array {name!r} is optimizer state, but the optimizer is none")
            held.slots.setdefault(slot, {})[index] = Buffer(index, raw, offsets.get(name))
    _check_slots(arrays, placed, weights, exported="arrays" in meta)
    try:
        state = _state_from_json(_meta_json(meta, "state", "{}", dict))
    except (TypeError, ValueError, KeyError, struct.error) as exc:
        raise _fail(f"metadata 'state' holds a malformed value: {exc!r}") from None
    layout = layout_for(meta.get("revision", RECOMMENDED.name), num_entries=num_entries,
                        **_layout_values(meta))
    ckpt = Checkpoint(tensors=tensors, optimizer=held, state=state, layout=layout)
    if optimizer is not None:
        ckpt.optimizer = _chosen_optimizer(ckpt, optimizer)
    if "revision" not in meta:  # arrays of no export of ours: see the docstring
        ckpt.revision = fitting_revision(
            ckpt, annotations_are_content=entries is None or "entries" in meta)
    return ckpt


def _check_slots(arrays: Mapping[str, Any], placed: Mapping[str, tuple[int, str | None]],
                 weights: Mapping[int, tuple[str, np.dtype, tuple[int, ...]]],
                 exported: bool) -> None:
    """Adam's m and v arrays must have the dtype and shape of their weight's (``weights``):
    onert resumes from no other. A schema-3 slot may be of another size (SPEC 6.7); an export
    of ours gives such a slot as its raw bytes (flat uint8), and those are kept."""
    for name, value in arrays.items():
        index, slot = placed[name]
        if slot is None or index not in weights:
            continue
        arr = np.asarray(value)
        dtype = arr.dtype.newbyteorder("=")
        weight, weight_dtype, weight_shape = weights[index]
        if (dtype, arr.shape) != (weight_dtype, weight_shape) and not (
                exported and dtype == np.uint8 and arr.ndim == 1):
            raise _fail(f"array {name!r} (Adam's {slot} of {weight!r}) is "
                        f"{dtype}{list(arr.shape)}; {weight!r} is {weight_dtype}"
                        f"{list(weight_shape)}: m and v must have their tensor's dtype and shape",
                        name)


def _chosen_optimizer(ckpt: Checkpoint, kind: str) -> Optimizer:
    """``optimizer=kind`` of [`from_numpy_dict`][onert_checkpoint.from_numpy_dict]: zeroed slots for
    weights-only arrays."""
    if kind not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', not {kind!r}")
    held = ckpt.optimizer
    if held is not None and any(held.slots.values()):
        if held.kind != kind:
            raise _fail(f"the arrays hold {held.kind} state ({', '.join(held.slots)}); a fresh "
                        f"{kind} optimizer would drop it (import them as they are, then edit "
                        "--drop-optimizer or --reset-optimizer)")
        return held
    # np.zeros: untouched zero pages until written, not a copy of the weights' size in memory
    return Optimizer(kind, {slot: {t.index: Buffer(t.index, np.zeros(t.nbytes, np.uint8))
                                   for t in ckpt.tensors}
                            for slot in OPTIMIZER_SLOTS[kind]})


def export_file(ckpt: Checkpoint, path: str | os.PathLike[str], kind: str,
                chunks: Callable[[Checkpoint], Iterable[bytes | memoryview]],
                progress: Callable[[int], object] | None) -> None:
    """Write the ``kind`` file ``chunks(ckpt)`` makes, under the rules of every write (lossless,
    no unchecked bytes) and as save() writes (atomic, special files refused)."""
    check_lossless(ckpt, kind)
    verify_sources(ckpt)
    write_atomic(path, chunks(ckpt), progress=progress)


def import_file(path: str | os.PathLike[str], kind: str,
                read: Callable[[str], tuple[dict[str, Any], dict[str, str]]],
                options: Mapping[str, Any]) -> Checkpoint:
    """`from_numpy_dict` of the (arrays, metadata) ``read`` finds in the regular file ``path`` (a
    FIFO would block it); what ``read`` refuses is not_representable naming the file."""
    name = os.fspath(path)
    if not stat.S_ISREG(os.stat(name).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", name)
    try:
        arrays, meta = read(name)
    except (OSError, CheckpointError):
        raise
    except Exception as exc:  # BadZipFile, ValueError (pickled objects, bad headers), ...
        raise _fail(f"{name} is not a readable {kind} file ({type(exc).__name__}: {exc})") from None
    return from_numpy_dict(arrays, meta, **options)


def to_npz(ckpt: Checkpoint, path: str | os.PathLike[str], *,
           progress: Callable[[int], object] | None = None) -> None:
    """Write the arrays and metadata of ``ckpt`` to a NumPy ``.npz`` file (``progress``: as
    [`save`][onert_checkpoint.save]'s, called with the byte count of each chunk written).

    The metadata travel as 0-d string arrays named ``__metadata__.<key>``. Member names are
    the tensor names only when every one is `path_safe` (no naive extractor is taken out of its
    folder); otherwise every array is named by its entry index (``0``, ``0.m``) and the names
    travel in the metadata, so nothing is lost. Slot names likewise.
    """
    export_file(ckpt, path, "npz", _npz_chunks, progress)


def _npz_chunks(ckpt: Checkpoint) -> Iterator[bytes | memoryview]:
    # the metadata first, each text dropped once written; then the arrays one at a time from
    # the checkpoint: never a dict of every array nor the whole file in memory
    meta = _metadata(ckpt, True)
    texts = ((NPZ_META_PREFIX + key, string_member(meta.pop(key))) for key in list(meta))
    return npz_chunks(itertools.chain(texts, _iter_arrays(ckpt, True)))


def npz_inflate_limit(container_size: int) -> int:
    """The most bytes [`from_npz`][onert_checkpoint.from_npz] inflates from an npz of
    ``container_size`` bytes: 24 MiB plus 3 times the container. The arrays, the checkpoint made of
    them and a file written from it then stay within the bound every command keeps (64 MiB plus 8
    times its input); an npz this library writes (members stored, not compressed) is always below
    it."""
    return 24 * 1024 * 1024 + 3 * container_size


def _read_npz(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The arrays and metadata of the npz ``name``, its sizes checked first (`from_npz`): what
    each .npy header claims too, which NumPy would allocate though the entry holds less."""
    import zipfile

    limit = npz_inflate_limit(os.path.getsize(name))
    total = 0
    with zipfile.ZipFile(name) as zf:
        for info in zf.infolist():
            total += info.file_size
            if total > limit:
                raise _fail(f"{name}: its members inflate to more than {limit} bytes (the limit "
                            f"for a {os.path.getsize(name)}-byte npz: 24 MiB + 3x its size); "
                            f"member {info.filename!r} declares {info.file_size} bytes")
            if not info.filename.endswith(".npy"):
                continue
            with zf.open(info) as member:
                shape, dtype, declared = npy_geometry(member)
            if declared > info.file_size:
                raise _fail(f"{name}: member {info.filename!r} declares {dtype}{list(shape)} "
                            f"({declared} bytes) in {info.file_size} bytes")
    with np.load(name, allow_pickle=False) as npz:
        arrays, meta = {}, {}
        for key in npz.files:
            if key.startswith(NPZ_META_PREFIX):
                meta[key[len(NPZ_META_PREFIX) :]] = str(npz[key][()])
            else:
                arrays[key] = npz[key]
    return arrays, meta


def from_npz(path: str | os.PathLike[str], **options: Any) -> Checkpoint:
    """Read a checkpoint written by [`to_npz`][onert_checkpoint.to_npz] (or any npz of named
    arrays).

    Sizes are checked before anything is inflated: an npz whose members declare more than
    `npz_inflate_limit` bytes (a compression bomb: a few MB of zip inflating to GB), or
    a member whose .npy header claims more than the member holds, raises
    [`NotRepresentableError`][onert_checkpoint.NotRepresentableError].
    """
    return import_file(path, "npz", _read_npz, options)
