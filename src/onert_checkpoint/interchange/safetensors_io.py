"""safetensors files: weights and optimizer slots as named tensors, the rest as metadata.

The file is an ordinary safetensors file (any safetensors reader opens it); the names and the
metadata keys are those of `onert_checkpoint.interchange.tensor_dict`.
"""

from __future__ import annotations

import itertools
import json
import os
import struct
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..format.model import Checkpoint
from .tensor_dict import _fail, _iter_arrays, _metadata, array_count, export_file, import_file

__all__ = ["HEADER_LIMIT", "from_safetensors", "to_safetensors"]

#: The largest header (the JSON before the data) safetensors writes or reads: its readers
#: refuse a larger one (the Rust crate's MAX_HEADER_SIZE), and its writer fails on one.
HEADER_LIMIT = 100_000_000
#: The fewest header bytes one exported array costs: its tensor entry alone,
#: ``"0":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},`` (52 bytes), plus its place in the
#: ``arrays`` metadata (``\"0\": [0, null], ``, 17 bytes as a JSON string): 69, rounded down.
#: Exports of real checkpoints measure 104-118 bytes per array.
MIN_HEADER_PER_ARRAY = 64


def to_safetensors(ckpt: Checkpoint, path: str | os.PathLike[str], *,
                   progress: Callable[[int], object] | None = None) -> None:
    """Write ``ckpt`` as a safetensors file (weights ``<name>``, slots ``<name>.m``/``.v``;
    ``progress``: as [`save`][onert_checkpoint.save]'s).

    For example, a round trip through a temporary file gives back the same checkpoint bytes:

        >>> import onert_checkpoint as oc, tempfile, os
        >>> ckpt = oc.load("tests/data/real-onert/fc2-adam-step8.ckpt")
        >>> out = os.path.join(tempfile.mkdtemp(), "fc2.safetensors")
        >>> oc.to_safetensors(ckpt, out)
        >>> oc.to_bytes(oc.from_safetensors(out)) == oc.to_bytes(ckpt)
        True
    """
    export_file(ckpt, path, "safetensors", safetensors_chunks, progress)


#: safetensors' dtype names, by NumPy name, in the order of its ``Dtype`` enum (a file lists
#: its tensors by that order, largest first, then by name: what its own writer does)
ST_DTYPES = {
    "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "float16": "F16",
    "int32": "I32", "uint32": "U32", "float32": "F32", "float64": "F64", "int64": "I64",
    "uint64": "U64",
}
_RANK = {name: k for k, name in enumerate(ST_DTYPES)}


def _json(text: str) -> str:
    # serde_json's string escapes: the same as json.dumps with ensure_ascii=False
    return json.dumps(text, ensure_ascii=False)


def safetensors_chunks(ckpt: Checkpoint) -> Iterator[bytes | memoryview]:
    """The safetensors file of ``ckpt`` in file order, the bytes safetensors' writer gives (the
    metadata keys in the export's order rather than a hash map's). Made from the checkpoint a
    tensor at a time: the header's tensor part is generated twice (to count, then to write)
    rather than held, and the arrays are read when written. The header is checked here, before
    the file is opened: `HEADER_LIMIT`, and UTF-8."""
    # too many entries for any names (a schema-3 file of 2M zero-length tensors is 16 MB),
    # counted from the tables before any array is made: a refusal costs no memory
    count = array_count(ckpt)
    if count * MIN_HEADER_PER_ARRAY > HEADER_LIMIT:
        raise _fail(f"{count} arrays need a safetensors header of at least "
                    f"{count * MIN_HEADER_PER_ARRAY} bytes; safetensors holds at most "
                    f"{HEADER_LIMIT} ({HEADER_LIMIT // MIN_HEADER_PER_ARRAY} arrays or fewer)",
                    "safetensors")
    arrays: list[np.ndarray] = []
    # the names as UTF-8 in fixed-width byte arrays (a few bytes each rather than a str object
    # of about 50), sorted bytewise: the order of Rust's strings
    chunks: list[np.ndarray] = []
    batch: list[bytes] = []
    try:
        for name, arr in _iter_arrays(ckpt, False):
            arrays.append(arr)  # a view (one shared object per empty geometry)
            batch.append(name.encode("utf-8"))
            if len(batch) >= 4096:
                chunks.append(np.array(batch, dtype=object))
                batch = []
        chunks.append(np.array(batch, dtype=object))
        width = max((max(map(len, c), default=0) for c in chunks), default=0)
        total = sum(sum(map(len, c)) for c in chunks)
        if width * len(arrays) <= 8 * total:  # no long name to pad every name to
            names = np.concatenate([c.astype(f"S{max(width, 1)}") for c in chunks])
        else:
            names = np.concatenate(chunks)
        del chunks, batch
        ranks = np.fromiter((_RANK[a.dtype.name] for a in arrays), np.int8, len(arrays))
        by_name = np.argsort(names, kind="stable")
        order = by_name[np.argsort(-ranks[by_name], kind="stable")]
        del by_name, ranks
        ends = np.cumsum(np.fromiter((arrays[k].nbytes for k in order), np.int64, len(order)))
        meta = _metadata(ckpt, False)  # after the sort's temporaries are gone
        length = sum(len(piece.encode("utf-8")) for piece in _header(meta, names, arrays, order,
                                                                      ends))
    except UnicodeEncodeError as exc:  # a lone surrogate: no UTF-8 JSON holds it
        raise _fail("safetensors cannot hold this checkpoint (a name or metadata text is not "
                    f"UTF-8: {exc})", "safetensors") from None
    padding = -length % 8
    if length + padding > HEADER_LIMIT:
        raise _fail(f"the safetensors header would take {length + padding} bytes; "
                    f"safetensors holds at most {HEADER_LIMIT}", "safetensors")
    header = (p.encode("utf-8") for p in _header(meta, names, arrays, order, ends))
    # over the array itself: a list of its indices made here would be held beside the header's
    data = (memoryview(np.ascontiguousarray(arrays[k]).reshape(-1).view(np.uint8))  # type: ignore[arg-type]
            for k in order if arrays[k].nbytes)
    return itertools.chain([struct.pack("<Q", length + padding)], header, [b" " * padding], data)


def _header(meta: dict[str, str | list[str]], names: np.ndarray, arrays: list[np.ndarray],
            order: np.ndarray, ends: np.ndarray) -> Iterator[str]:
    """The JSON header of `safetensors_chunks`, in pieces."""
    yield '{"__metadata__":{'
    for n, (key, value) in enumerate(meta.items()):
        yield ("," if n else "") + _json(key) + ':"'
        for piece in [value] if isinstance(value, str) else value:  # escaped a piece at a time
            yield _json(piece)[1:-1]
        yield '"'
    yield "}"
    batch: list[str] = []
    for at, k in enumerate(order.tolist()):
        arr = arrays[k]
        end = int(ends[at])
        batch.append(
            f',{_json(bytes(names[k]).decode("utf-8"))}:{{"dtype":"{ST_DTYPES[arr.dtype.name]}",'
            f'"shape":[{",".join(str(d) for d in arr.shape)}],'
            f'"data_offsets":[{end - arr.nbytes},{end}]}}'
        )
        if len(batch) >= 4096:
            yield "".join(batch)
            batch = []
    yield "".join(batch) + "}"


def from_safetensors(path: str | os.PathLike[str], **options: Any) -> Checkpoint:
    """Read a checkpoint from a safetensors file written by
    [`to_safetensors`][onert_checkpoint.to_safetensors], or from any safetensors file of named
    arrays (see [`from_numpy_dict`][onert_checkpoint.from_numpy_dict])."""
    return import_file(path, "safetensors", _read, options)


def _read(name: str) -> tuple[dict[str, Any], dict[str, str]]:
    from safetensors import safe_open

    with safe_open(name, framework="np") as f:  # checks the header: bounds, overlaps
        mapped = _mapped_arrays(name) if os.path.getsize(name) > MAP_FROM else {}
        return {key: mapped[key] if key in mapped else f.get_tensor(key)
                for key in f.keys()}, f.metadata() or {}


#: Files larger than this are mapped, their arrays views of the mapping (not copies in memory):
#: ``load``'s mmap="auto" threshold. Smaller ones are read, so that another process truncating
#: the file meanwhile cannot fault the import (SIGBUS on a truncated mapping).
MAP_FROM = 64 << 20
#: safetensors dtypes NumPy reads as they are (little-endian): the others go through the
#: library's own reader.
_NUMPY_DTYPES = {st: np.dtype(name).newbyteorder("<") for name, st in ST_DTYPES.items()}


def _mapped_arrays(name: str) -> dict[str, np.ndarray]:
    """The arrays of a safetensors file (whose header ``safe_open`` has already checked) as
    read-only views of the file mapped into memory; dtypes NumPy lacks are left out."""
    import mmap

    with open(name, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
        view = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
    out = {}
    for key, info in header.items():
        dtype = _NUMPY_DTYPES.get(info.get("dtype")) if key != "__metadata__" else None
        if dtype is None:
            continue
        begin, end = info["data_offsets"]
        data = np.frombuffer(view[8 + size + begin : 8 + size + end], dtype=dtype)
        out[key] = data.reshape(info["shape"])
    return out
