"""The public surface in one place: every public function and every command of ``onert-ckpt``
that reads or writes a checkpoint, a circle model or a foreign container (safetensors, npz),
with how to run it on one input, and the input families the project-wide promises are checked
over (tests/invariants/test_public_matrix.py).

Plain data on purpose: other test modules import :data:`PUBLIC_API`, :data:`CLI_COMMANDS`
and :func:`build_families` to run their own invariant over the same list of paths (a new
public path is then guarded by all of them at once).

Adding a public function: an :class:`ApiPath` in :data:`PUBLIC_API` (``run`` calls it on a
:class:`Family` the way a user would; ``reads`` says which families it takes), or, when it
touches no file, model or container, its name in :data:`NOT_IO_API` with the reason.
Adding a command: its variants in :data:`CLI_COMMANDS` (an argv builder per variant), or its
name in :data:`NOT_IO_COMMANDS` with the reason.
"""

from __future__ import annotations

import shutil
import struct
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import crc32c
import numpy as np

import onert_checkpoint as oc
from onert_checkpoint.format.layout import Schema3Layout
from tests import large_files

__all__ = [
    "CLI_COMMANDS",
    "HOSTILE_READERS",
    "NOT_IO_API",
    "NOT_IO_COMMANDS",
    "PUBLIC_API",
    "ApiPath",
    "CliVariant",
    "Family",
    "HostileReader",
    "build_families",
    "consume",
    "v3_range_indexed",
    "v3_zero_length",
]

DATA = Path(__file__).resolve().parent / "data"
FC2 = DATA / "real-onert" / "fc2-adam-step8.ckpt"
FC2_MODEL = DATA / "real-onert" / "fc2.circle"
MICRO = DATA / "real-onert-micro" / "ckpt_adam.bin"

#: what a path reads: a checkpoint file (or object), a circle model, a foreign container
CHECKPOINT, MODEL, CONTAINER = "checkpoint", "model", "container"


@dataclass(frozen=True)
class Family:
    """One input: a file of one kind, built once per session by :func:`build_families`."""

    name: str
    kind: str  # CHECKPOINT, MODEL or CONTAINER
    path: Path
    #: the circle model the checkpoint fits (else fc2.circle is given, and may not fit)
    model: Path | None = None
    #: the family this one is a copy of with one data byte flipped (None: not corrupt)
    clean: str | None = None
    #: API only: the checkpoint is the one an ``open`` block handed out, after the block
    released: bool = False

    def checkpoint(self) -> oc.Checkpoint:
        """The checkpoint as a user gets it: loaded, or handed out by ``open`` and released."""
        if self.released:
            with oc.open(self.path) as ckpt:
                pass
            return ckpt
        return oc.load(self.path)

    def model_or_default(self) -> Path:
        return self.model or FC2_MODEL


def consume(result: object) -> object:
    """Read everything a returned checkpoint hands out (every tensor's and slot's data), so that
    a path that returns a checkpoint is judged by what a caller then reads from it."""
    if isinstance(result, oc.Checkpoint):
        for t in result.tensors:
            np.asarray(t.data)
        if result.optimizer is not None:
            for entries in result.optimizer.slots.values():
                for entry in entries.values():
                    np.asarray(entry.data)
    elif isinstance(result, tuple):
        for item in result:
            consume(item)
    return result


@dataclass(frozen=True)
class ApiPath:
    """A public function and how to run it on a family, writing any output into ``out``."""

    name: str
    reads: str  # the family kind it takes
    run: Callable[[Family, Path], object]
    #: it hands out, copies or re-checksums data: a corrupt data byte must stop it
    data_out: bool = True
    #: an optional package it needs (skipped without it)
    needs: str | None = None
    #: it takes the checkpoint object (not a path): a released one must be refused
    takes_object: bool = True
    #: its peak memory is bounded by its input files' size (64 MiB + 8x); False for a runner
    #: that reads the container itself before the call (its input is arrays in memory)
    bounded: bool = True
    #: the file a success creates in ``out`` (every such path is held to the output contract:
    #: tests/invariants/test_output_contract.py)
    output: str | None = None


def _ck(f: Family) -> oc.Checkpoint:
    return f.checkpoint()


def _arrays_of(f: Family) -> tuple[dict[str, Any], dict[str, str]]:
    """The arrays and metadata of a container, read by its own library (no project code)."""
    if f.path.suffix == ".npz":
        with np.load(f.path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files if not k.startswith("__metadata__.")}
            meta = {k[13:]: str(npz[k][()]) for k in npz.files if k.startswith("__metadata__.")}
        return arrays, meta
    from safetensors import safe_open

    with safe_open(str(f.path), framework="np") as st:
        return {k: st.get_tensor(k) for k in st.keys()}, dict(st.metadata() or {})


def _torch_round_trip(f: Family, out: Path) -> object:
    fc2 = oc.load(FC2)
    state, optim = oc.to_torch(fc2, FC2_MODEL)
    return oc.from_torch(state, optim, f.path)


#: Every public function that reads or writes a checkpoint, a model or a container.
PUBLIC_API: dict[str, ApiPath] = {
    p.name: p
    for p in [
        ApiPath("load", CHECKPOINT, lambda f, out: consume(oc.load(f.path)), takes_object=False),
        ApiPath("open", CHECKPOINT, lambda f, out: _open_and_read(f.path), takes_object=False),
        ApiPath("save", CHECKPOINT, lambda f, out: oc.save(_ck(f), out / "saved.ckpt"),
                output="saved.ckpt"),
        ApiPath("to_bytes", CHECKPOINT, lambda f, out: oc.to_bytes(_ck(f))),
        ApiPath("save_stream", CHECKPOINT, lambda f, out: _save_stream(_ck(f), out)),
        ApiPath("convert", CHECKPOINT, lambda f, out: consume(oc.convert(_ck(f), "v3"))),
        ApiPath("upgrade", CHECKPOINT, lambda f, out: consume(oc.upgrade(_ck(f), to="v3"))),
        ApiPath("downgrade", CHECKPOINT,
                lambda f, out: consume(oc.downgrade(_ck(f), allow_lossy=True))),
        ApiPath("to_numpy_dict", CHECKPOINT, lambda f, out: oc.to_numpy_dict(_ck(f))),
        ApiPath("to_safetensors", CHECKPOINT,
                lambda f, out: oc.to_safetensors(_ck(f), out / "out.safetensors"),
                output="out.safetensors"),
        ApiPath("to_npz", CHECKPOINT, lambda f, out: oc.to_npz(_ck(f), out / "out.npz"),
                output="out.npz"),
        ApiPath("to_torch", CHECKPOINT,
                lambda f, out: oc.to_torch(_ck(f), f.model_or_default()), needs="torch"),
        ApiPath("describe", CHECKPOINT, lambda f, out: oc.describe(_ck(f))),
        ApiPath("diff", CHECKPOINT, lambda f, out: oc.diff(_ck(f), oc.load(f.path))),
        ApiPath("value_warnings", CHECKPOINT, lambda f, out: oc.value_warnings(_ck(f))),
        ApiPath("edit", CHECKPOINT, lambda f, out: consume(oc.edit(_ck(f), step=1))),
        ApiPath("edit_file", CHECKPOINT,
                lambda f, out: oc.edit_file(f.path, out / "edited.ckpt", step=1),
                takes_object=False, output="edited.ckpt"),
        ApiPath("bind", CHECKPOINT,
                lambda f, out: consume(oc.bind(_ck(f), f.model_or_default()))),
        ApiPath("bake", CHECKPOINT,
                lambda f, out: oc.bake(f.path, f.model_or_default(), out / "baked.circle"),
                takes_object=False, output="baked.circle"),
        ApiPath("CircleModel", MODEL, lambda f, out: oc.CircleModel.load(f.path.read_bytes()),
                data_out=False),
        ApiPath("new_checkpoint", MODEL, lambda f, out: consume(oc.new_checkpoint(f.path)),
                data_out=False),
        ApiPath("checkpoint_from_arrays", MODEL,
                lambda f, out: consume(oc.checkpoint_from_arrays(f.path, {})), data_out=False),
        ApiPath("from_torch", MODEL, _torch_round_trip, data_out=False, needs="torch"),
        ApiPath("from_safetensors", CONTAINER,
                lambda f, out: consume(_from_container(oc.from_safetensors, f)), data_out=False),
        ApiPath("from_npz", CONTAINER,
                lambda f, out: consume(_from_container(oc.from_npz, f)), data_out=False),
        ApiPath("from_numpy_dict", CONTAINER, lambda f, out: _from_dict(f), data_out=False,
                bounded=False),
    ]
}


class _FirstWriteCreates:
    """A write-only file object (as a pipe or stdout is one) whose file appears with the first
    byte written, so that "nothing is written" is seen on disk: an empty file is the caller's
    ``open``, not the library's doing."""

    def __init__(self, path: Path) -> None:
        self.path, self.file = path, None

    def write(self, data: bytes) -> int:
        if self.file is None:
            self.file = open(self.path, "wb")
        return self.file.write(data)

    def flush(self) -> None:
        if self.file is not None:
            self.file.flush()

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _save_stream(ckpt: oc.Checkpoint, out: Path) -> int:
    """``save_stream`` as a user writing to a pipe or stdout calls it: a file object."""
    file = _FirstWriteCreates(out / "streamed.ckpt")
    try:
        return oc.save_stream(ckpt, file)
    finally:
        file.close()


def _open_and_read(path: Path) -> None:
    with oc.open(path) as ckpt:
        consume(ckpt)


def _from_dict(f: Family) -> object:
    """The arrays and metadata of a container its own library reads (the others are not this
    path's input), made a checkpoint and written out."""
    if zipfile.is_zipfile(f.path):
        with zipfile.ZipFile(f.path) as z:
            if sum(i.file_size for i in z.infolist()) > 16 << 20:
                return None  # a bomb: no user's reader hands its arrays over
    try:
        arrays, meta = _arrays_of(f)
    except Exception:
        return None
    return oc.to_bytes(oc.from_numpy_dict(arrays, meta))


def _from_container(reader: Callable[[Path], oc.Checkpoint], f: Family) -> oc.Checkpoint:
    """``reader`` on every container (an npz given to the safetensors reader too), and the
    checkpoint written out: an accepted import must write."""
    ckpt = reader(f.path)
    oc.to_bytes(ckpt)
    return ckpt


def _every_way_out(entry: oc.Buffer) -> None:
    """Each way an entry hands its data out: the array protocol, ``numpy()``, ``raw``,
    ``crc32()``, indexing and iteration."""
    np.asarray(entry)
    entry.numpy()
    np.asarray(entry.raw)
    entry.crc32()
    if entry.ndim and len(entry):
        entry[0]
        next(iter(entry))


def _tensors_out(f: Family) -> None:
    for t in _ck(f).tensors:
        _every_way_out(t)


def _slots_out(f: Family) -> None:
    ckpt = _ck(f)
    for entries in (ckpt.optimizer.slots.values() if ckpt.optimizer else ()):
        for entry in entries.values():
            _every_way_out(entry)


def _checkpoint_methods(f: Family) -> object:
    ckpt = _ck(f)
    ckpt.verify()
    return ckpt.content_equal(oc.load(f.path))


PUBLIC_API.update(
    (p.name, p)
    for p in [
        ApiPath("Tensor", CHECKPOINT, lambda f, out: _tensors_out(f)),
        ApiPath("Buffer", CHECKPOINT, lambda f, out: _slots_out(f)),
        ApiPath("Checkpoint", CHECKPOINT, lambda f, out: _checkpoint_methods(f)),
    ]
)

#: Public names that touch no file, model or container, and why.
NOT_IO_API: dict[str, str] = {
    "Optimizer": "in-memory optimizer state",
    "TrainingState": "a dict of state values",
    "CheckpointError": "the error class",
    "FormatError": "an error class",
    "ModelMismatchError": "an error class",
    "NotRepresentableError": "an error class",
    "UnsupportedFormatError": "an error class",
}


@dataclass(frozen=True)
class CliVariant:
    """One way to run a command: its arguments for a family, output files in ``out``."""

    label: str
    reads: str
    argv: Callable[[Family, Path], Sequence[str]]
    #: what a success creates in ``out`` (checked absent when the input is corrupt)
    output: str | None = None
    #: it hands out, copies or judges data: a corrupt data byte must stop it (False for
    #: ``conformance``, where another reader judges the file)
    data_out: bool = True


def _npy(out: Path) -> Path:
    """A .npy of float32[8, 4] (fc2's first entry, w0) in ``out``: edit --replace's input."""
    path = out / "w0.npy"
    np.save(path, np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4))
    return path


def _m(f: Family) -> list[str]:
    return ["--model", str(f.model)] if f.model is not None else []


#: Every command that reads or writes a checkpoint, a model or a container: its variants.
CLI_COMMANDS: dict[str, list[CliVariant]] = {
    "info": [
        CliVariant("text", CHECKPOINT, lambda f, out: ["info", str(f.path), *_m(f)]),
        CliVariant("json", CHECKPOINT, lambda f, out: ["info", "--json", str(f.path)]),
        CliVariant("stats", CHECKPOINT, lambda f, out: ["info", "--stats", str(f.path), *_m(f)]),
        CliVariant("stats-json", CHECKPOINT,
                   lambda f, out: ["info", "--stats", "--json", str(f.path)]),
        CliVariant("two-files", CHECKPOINT, lambda f, out: ["info", str(FC2), str(f.path)]),
    ],
    "validate": [
        CliVariant("text", CHECKPOINT, lambda f, out: ["validate", str(f.path), *_m(f)]),
        CliVariant("json", CHECKPOINT, lambda f, out: ["validate", "--json", str(f.path)]),
        CliVariant("strict", CHECKPOINT, lambda f, out: ["validate", "--strict", str(f.path)]),
    ],
    "dump": [
        CliVariant("values", CHECKPOINT, lambda f, out: ["dump", str(f.path), *_m(f)]),
        CliVariant("slot", CHECKPOINT,
                   lambda f, out: ["dump", str(f.path), "--tensor", "0", "--slot", "m"]),
        CliVariant("layout", CHECKPOINT, lambda f, out: ["dump", "--layout", str(f.path)]),
        CliVariant("layout-json", CHECKPOINT,
                   lambda f, out: ["dump", "--layout", "--json", str(f.path)]),
        CliVariant("values-json", CHECKPOINT,
                   lambda f, out: ["dump", "--json", str(f.path), *_m(f)]),
    ],
    "diff": [
        CliVariant("self", CHECKPOINT, lambda f, out: ["diff", str(f.path), str(f.path)]),
        CliVariant("against-v1", CHECKPOINT, lambda f, out: ["diff", str(FC2), str(f.path)]),
        CliVariant("json", CHECKPOINT,
                   lambda f, out: ["diff", "--json", str(f.path), str(f.path)]),
        CliVariant("ignore-state", CHECKPOINT,
                   lambda f, out: ["diff", "--ignore-state", str(f.path), str(f.path)]),
    ],
    "convert": [
        CliVariant("v3", CHECKPOINT,
                   lambda f, out: ["convert", str(f.path), str(out / "c.ckpt"), "--to", "v3"],
                   output="c.ckpt"),
        CliVariant("lossy-v1", CHECKPOINT,
                   lambda f, out: ["convert", str(f.path), str(out / "c1.ckpt"), "--to", "v1",
                                   "--allow-lossy"],
                   output="c1.ckpt"),
        CliVariant("micro", CHECKPOINT,
                   lambda f, out: ["convert", str(f.path), str(out / "cm.ckpt"), "--to", "v1",
                                   "--dialect", "onert-micro", "--model",
                                   str(f.model_or_default()), "--batch-size", "2"],
                   output="cm.ckpt"),
    ],
    "export": [
        CliVariant("safetensors", CHECKPOINT,
                   lambda f, out: ["export", str(f.path), str(out / "e.safetensors"), *_m(f)],
                   output="e.safetensors"),
        CliVariant("npz", CHECKPOINT,
                   lambda f, out: ["export", str(f.path), str(out / "e.npz")], output="e.npz"),
        CliVariant("one-entry-npy", CHECKPOINT,
                   lambda f, out: ["export", str(f.path), str(out / "e.npy"), "--tensor", "0"],
                   output="e.npy"),
        CliVariant("one-slot-npy", CHECKPOINT,
                   lambda f, out: ["export", str(f.path), str(out / "m.npy"), "--tensor", "0",
                                   "--slot", "m"],
                   output="m.npy"),
    ],
    "import": [
        CliVariant("plain", CONTAINER,
                   lambda f, out: ["import", str(f.path), str(out / "i.ckpt")],
                   output="i.ckpt"),
        CliVariant("v3", CONTAINER,
                   lambda f, out: ["import", str(f.path), str(out / "i3.ckpt"),
                                   "--revision", "v3"],
                   output="i3.ckpt"),
        CliVariant("model-micro", CONTAINER,
                   lambda f, out: ["import", str(f.path), str(out / "im.ckpt"), "--model",
                                   str(FC2_MODEL), "--dialect", "onert-micro"],
                   output="im.ckpt"),
        CliVariant("optimizer-adam", CONTAINER,
                   lambda f, out: ["import", str(f.path), str(out / "ia.ckpt"),
                                   "--optimizer", "adam"],
                   output="ia.ckpt"),
    ],
    "new": [
        CliVariant("adam", MODEL,
                   lambda f, out: ["new", "--model", str(f.path), str(out / "n.ckpt")],
                   output="n.ckpt"),
    ],
    "bake": [
        CliVariant("model", CHECKPOINT,
                   lambda f, out: ["bake", str(f.path), str(out / "b.circle"), "--model",
                                   str(f.model_or_default())],
                   output="b.circle"),
    ],
    "edit": [
        CliVariant("step", CHECKPOINT,
                   lambda f, out: ["edit", str(f.path), str(out / "ed.ckpt"), "--step", "1"],
                   output="ed.ckpt"),
        CliVariant("drop-optimizer", CHECKPOINT,
                   lambda f, out: ["edit", str(f.path), str(out / "eo.ckpt"), "--drop-optimizer",
                                   "--to", "v3"],
                   output="eo.ckpt"),
        CliVariant("replace", CHECKPOINT,
                   lambda f, out: ["edit", str(f.path), str(out / "er.ckpt"), "--replace",
                                   f"0={_npy(out)}", *_m(f)],
                   output="er.ckpt"),
        CliVariant("model", MODEL,
                   lambda f, out: ["edit", str(FC2), str(out / "em.ckpt"), "--model",
                                   str(f.path), "--step", "1"],
                   output="em.ckpt"),
    ],
}

CLI_COMMANDS["plot"] = [
    CliVariant("hist", CHECKPOINT,
               lambda f, out: ["plot", str(f.path), str(out / "h.svg"), *_m(f)], output="h.svg"),
    CliVariant("change", CHECKPOINT,
               lambda f, out: ["plot", str(FC2), str(f.path), str(out / "c.png")],
               output="c.png"),
]


def _as_vector(f: Family, out: Path) -> Path:
    """A folder in ``out`` holding ``f``'s file as its one conformance vector, described by
    what ``info --json`` prints of it (run in this process): a reader that prints the same
    agrees."""
    import contextlib
    import io

    from onert_checkpoint.tools.cli import main

    folder = out / "vectors"
    folder.mkdir(exist_ok=True)
    shutil.copyfile(f.path, folder / "family.ckpt")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        main(["info", "--json", str(folder / "family.ckpt")])
    (folder / "family.json").write_text(printed.getvalue())
    return folder


CLI_COMMANDS["conformance"] = [
    # the library's reader as another program (a real process) on each family as a vector
    CliVariant("library-reader", CHECKPOINT,
               lambda f, out: ["conformance", "--no-corpus", "--vectors", str(_as_vector(f, out)),
                               "--", sys.executable, "-m", "onert_checkpoint", "info", "--json"],
               data_out=False),
]

#: Commands that touch no file, model or container, and why.
NOT_IO_COMMANDS: dict[str, str] = {
    "completion": "prints a shell script built from the parser",
}


def _nested(depth: int) -> str:
    """A shell command printing ``depth`` opening brackets and as many closing ones."""
    return f"head -c {depth} /dev/zero | tr '\\0' '['; head -c {depth} /dev/zero | tr '\\0' ']'"


@dataclass(frozen=True)
class HostileReader:
    """A reader ``conformance`` runs (a POSIX shell script, ``$1`` the file's path): on the
    vector v3-minimal it attacks the runner, on every other vector it prints the vector's own
    description (and agrees)."""

    name: str
    attack: str
    #: what the runner reports of v3-minimal (a regular expression); None: it agrees
    says: str | None


#: Readers built to break the runner (tests/invariants/test_hostile_readers.py): each case must
#: end within its timeout, with the runner's memory bounded, the reader's children gone, and
#: every other case's result kept.
HOSTILE_READERS = [
    HostileReader("floods-stdout-without-newline", "exec head -c 1610612736 /dev/zero",
                  "more than 1048576 bytes on stdout: its output was cut there"),
    HostileReader("floods-stderr", "exec head -c 1610612736 /dev/zero >&2",
                  "more than 1048576 bytes on stderr"),
    HostileReader("prints-349000-empty-arrays",  # 1,047,004 bytes: near the most arrays of 1 MiB
                  "printf '['; yes '[],' | head -n 349000 | tr -d '\\n'; printf '[]]'",
                  "expected an object, got array"),
    HostileReader("nests-990-deep", _nested(990),
                  "nests deeper than Python's recursion limit|expected an object, got array"),
    HostileReader("nests-100000-deep", _nested(100_000),
                  "nests deeper than Python's recursion limit"),
    HostileReader("prints-invalid-utf8", "printf '{\"revision\": \"\\377\"}'",
                  r"the output is not UTF-8 \(byte 14"),
    HostileReader("background-child-holds-stdout",
                  'sleep 1000 &\nexec cat -- "${1%.ckpt}.json"', None),
    HostileReader("job-control-child-holds-stdout",  # bash's set -m: a group of its own
                  'exec bash -c \'set -m; sleep 1000 & exec cat -- "${1%.ckpt}.json"\' _ "$1"',
                  None),
    HostileReader("closes-stdout-and-keeps-running",
                  'cat -- "${1%.ckpt}.json"\nexec >&- 2>&-\ntrap "" TERM\nsleep 1000',
                  r"did not finish within \d+ s"),
    HostileReader("reads-stdin", "exec cat", "the output is not one JSON text"),
    HostileReader("forks-printers-and-exits",
                  'for i in 1 2 3 4 5 6 7 8; do (sleep 1000; echo x) & done\necho "{}"',
                  "expected an object|missing 'dialect'"),
]


# The input families ---------------------------------------------------------------------------


def v3_zero_length(n: int) -> bytes:
    """A valid schema-3 file of ``n`` zero-length tensors and no optimizer: 8 bytes per tensor
    (its ``len_data``), written directly (a million tensor objects through ``save`` would take
    minutes). The same bytes as the library's writer gives (checked by the matrix)."""
    t_at = 128  # after the 64-byte header and two 32-byte section-table entries
    body = struct.pack("<II", n, 0) + bytes(8 * n)  # num_tensors, columns (none), len_data
    d_at = -(-(t_at + len(body)) // 64) * 64
    table = struct.pack("<IIQQII", 1, 1, t_at, len(body), crc32c.crc32c(body), 0)
    table += struct.pack("<IIQQII", 4, 1, d_at, 0, 0, 0)  # the data section: empty
    head = bytearray(
        struct.pack("<HBBIQQII", 429, 3, 0, 0, d_at, 64, 2, crc32c.crc32c(table)) + bytes(32)
    )
    head[4:8] = struct.pack("<I", crc32c.crc32c(bytes(head)))
    return bytes(head) + table + body + bytes(d_at - t_at - len(body))


def v3_range_indexed(n: int = 200) -> bytes:
    """A schema-3 file of ``n`` tensors of 0 to 99 bytes in a data order that is not record
    order, with Adam state (some entries absent), as the library writes it: past 64 tensors it
    carries a range_index section (spec/SPEC.md 7.5)."""
    tensors = [oc.Tensor(i, np.full((7 * i + 3) % 100, i % 251, np.uint8)) for i in range(n)]
    opt = oc.Optimizer("adam", {})
    for j, slot in enumerate(opt.slots):
        opt.slots[slot] = {
            t.index: oc.Buffer(t.index, np.full(t.nbytes, j + 1, np.uint8))
            for t in tensors
            if t.index % 9
        }
    order = [(11 * i) % n for i in range(n)] if n % 11 else None
    return oc.to_bytes(oc.Checkpoint(tensors, opt,
                                     layout=Schema3Layout("v3", data_order=order)), revision="v3")


def _flip_data_byte(data: bytes) -> bytes:
    """``data`` with one byte of its first non-empty tensor's data flipped."""
    ckpt = oc.load(data, verify_data=False)
    first = next(t for t in ckpt.tensors if t.nbytes)
    out = bytearray(data)
    out[first.offset] ^= 0x01
    return bytes(out)


def _flip_padding_byte(data: bytes) -> bytes:
    """``data`` with one padding byte between two data ranges set (no entry's bytes change)."""
    ckpt = oc.load(data, verify_data=False)
    ranges = sorted((e.offset, e.offset + e.nbytes) for e in _entries(ckpt) if e.nbytes)
    gap = next(end for (_, end), (start, _) in pairwise(ranges) if start > end)
    out = bytearray(data)
    out[gap] ^= 0x5A
    return bytes(out)


def _entries(ckpt: oc.Checkpoint) -> list[oc.Buffer]:
    slots = ckpt.optimizer.slots.values() if ckpt.optimizer is not None else ()
    return [*ckpt.tensors, *(e for entries in slots for e in entries.values())]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _safetensors_with(folder: Path, name: str, source: Path, **meta: str) -> Path:
    from safetensors.numpy import save_file

    fam = Family("src", CONTAINER, source)
    arrays, metadata = _arrays_of(fam)
    path = folder / f"{name}.safetensors"
    save_file(arrays, str(path), metadata={**metadata, **meta})
    return path


def _npz_with(folder: Path, name: str, source: Path, **meta: str) -> Path:
    fam = Family("src", CONTAINER, source)
    arrays, metadata = _arrays_of(fam)
    members = dict(arrays)
    for key, value in {**metadata, **meta}.items():
        members["__metadata__." + key] = np.array(value)
    path = folder / f"{name}.npz"
    with path.open("wb") as fh:
        np.savez(fh, **members)  # type: ignore[arg-type]
    return path


def build_families(folder: Path) -> dict[str, Family]:
    """Every input family, written into ``folder``: schema 1 in both dialects (the real onert
    and onert-micro exports), WOF, schema 2 and 3 without and with names and dtypes, each of
    those with one corrupt data byte (and schema 3 with one corrupt padding byte between data
    ranges), hostile-but-valid files (many zero-length tensors, many
    slots), schema 3 past 64 tensors (with a range_index section, and its corrupt twin), a
    released checkpoint, good and hostile safetensors and npz files (a compression
    bomb among them), good, broken and hostile circle models (a reference bomb)."""
    folder.mkdir(parents=True, exist_ok=True)
    fams: list[Family] = []

    def ck(name: str, data: bytes, model: Path | None = None) -> None:
        fams.append(Family(name, CHECKPOINT, _write(folder / f"{name}.ckpt", data), model))

    fams.append(Family("v1-onert", CHECKPOINT, FC2, FC2_MODEL))
    fams.append(Family("v1-onert-micro", CHECKPOINT, MICRO))
    bound = oc.load(FC2, model=FC2_MODEL)
    plain = oc.load(FC2)
    ck("wof", oc.to_bytes(oc.convert(bound, "wof", allow_lossy=True)), FC2_MODEL)
    ck("v2", oc.to_bytes(oc.upgrade(plain, to="v2")))
    ck("v2-named", oc.to_bytes(oc.upgrade(bound, to="v2")), FC2_MODEL)
    ck("v3", oc.to_bytes(oc.upgrade(plain, to="v3")))
    ck("v3-named", oc.to_bytes(oc.upgrade(bound, to="v3")), FC2_MODEL)
    ck("v3-many-zero", v3_zero_length(1000))
    ck("v3-range-index", v3_range_indexed())
    ck("v2-many-slots", large_files.v2_many_slots(64, 16, names=True))
    for name in ("v2", "v2-named", "v3", "v3-named", "v3-range-index"):
        clean = next(f for f in fams if f.name == name)
        bad = _write(folder / f"{name}-corrupt.ckpt", _flip_data_byte(clean.path.read_bytes()))
        fams.append(Family(f"{name}-corrupt", CHECKPOINT, bad, clean.model, clean=name))
    padded = folder / "v3-named-padding-corrupt.ckpt"
    _write(padded, _flip_padding_byte((folder / "v3-named.ckpt").read_bytes()))
    fams.append(Family("v3-named-padding-corrupt", CHECKPOINT, padded, FC2_MODEL,
                       clean="v3-named"))
    fams.append(Family("v1-released", CHECKPOINT, FC2, FC2_MODEL, released=True))

    st = folder / "export.safetensors"
    oc.to_safetensors(oc.load(folder / "v3-named.ckpt"), st)
    npz = folder / "export.npz"
    oc.to_npz(plain, npz)
    fams += [
        Family("safetensors", CONTAINER, st),
        Family("npz", CONTAINER, npz),
        Family("safetensors-revision-v9", CONTAINER,
               _safetensors_with(folder, "rev9", st, revision="v9")),
        Family("safetensors-dialect-xl", CONTAINER,
               _safetensors_with(folder, "xl", st, dialect="onert-xl")),
        Family("npz-revision-v9", CONTAINER, _npz_with(folder, "rev9", npz, revision="v9")),
        Family("npz-dialect-xl", CONTAINER, _npz_with(folder, "xl", npz, dialect="onert-xl")),
        Family("safetensors-garbage", CONTAINER,
               _write(folder / "garbage.safetensors", b"\x07" * 8 + b"{not json" * 8)),
        Family("safetensors-huge-header", CONTAINER,
               _write(folder / "huge.safetensors", struct.pack("<Q", 1 << 62) + b"{}")),
        Family("safetensors-bf16", CONTAINER, _write(
            folder / "bf16.safetensors",
            _safetensors_bytes({"0": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}, 4))),
        Family("safetensors-overlap", CONTAINER, _write(
            folder / "overlap.safetensors",
            _safetensors_bytes({"0": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                "0.m": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}, 4))),
        Family("npz-garbage", CONTAINER, _write(folder / "garbage.npz", b"PK\x03\x04" + b"x" * 60)),
        Family("npz-object-array", CONTAINER, _object_npz(folder / "object.npz")),
        Family("npz-bomb", CONTAINER,
               _write(folder / "bomb.npz", large_files.npz_bomb(128 << 20))),
    ]
    model = folder / "fc2.circle"
    shutil.copyfile(FC2_MODEL, model)
    raw = model.read_bytes()
    fams += [
        Family("model", MODEL, model),
        Family("model-truncated", MODEL, _write(folder / "cut.circle", raw[: len(raw) // 2])),
        Family("model-garbage", MODEL, _write(folder / "junk.circle", b"\xff" * 64)),
        Family("model-reference-bomb", MODEL,
               _write(folder / "bomb.circle", large_files.circle_reference_bomb(4000, 64))),
    ]
    return {f.name: f for f in fams}


def _safetensors_bytes(header: dict[str, object], data_size: int) -> bytes:
    """A safetensors file written by hand: what its own writer would never produce."""
    import json

    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + bytes(data_size)


def _object_npz(path: Path) -> Path:
    """An npz whose member is a pickled object array (``np.load`` refuses it without pickles)."""
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("0.npy", buf.getvalue())
    return path
