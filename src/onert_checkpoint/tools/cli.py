"""``onert-ckpt``: the command line, a thin layer over the library.

Exit codes: 0 success (every file valid, checkpoints equal), 1 a checkpoint is invalid, does not
fit its model, or differs, 2 usage error or a file that cannot be read at all. Every error is one
line on stderr, ``onert-ckpt: error: <code>: <message>``; ``--debug`` adds the traceback."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NoReturn

import numpy as np

from .. import __version__
from ..format.dispatch import load
from ..format.errors import CheckpointError
from ..format.model import Checkpoint
from ..format.revisions import registry
from .cli_common import (
    DIALECTS,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    ORDER_CHOICES,
    CliError,
    batch_size_option,
    lost_in_write,
    model_option,
    progress_bar,
    require_model,
    warn_dropped,
)
from .cli_common import command_model as _model
from .cli_common import given_path as _output
from .cli_common import load_model as _load_model
from .describe import describe_lazy, json_pieces
from .jsonout import dumps as json_dumps
from .render import SafeStream, counted, human_size, safe_text

#: The command line's own error codes, each with when it is used; every error line's code is
#: one of these or of the format's (spec/error-codes.toml).
CLI_CODES = {
    "usage_error": "an option or argument is wrong (exit 2)",
    "io_error": "a file cannot be read or written (exit 2)",
    "model_required": "the task needs the circle model: add --model (exit 2)",
    "unknown_format": "an export or import file is named neither .safetensors nor .npz, or a "
    "picture neither .png nor .svg (exit 2)",
    "no_such_tensor": "dump names an entry the checkpoint does not have (exit 2)",
    "no_such_slot": "dump names an optimizer slot the checkpoint does not have (exit 2)",
    "bad_dtype": "dump --dtype names no NumPy number type (exit 2)",
    "missing_dependency": "an optional package the command needs is not installed (exit 2)",
    "interrupted": "stopped by Ctrl-C (exit 130)",
    "internal_error": "an unexpected exception: a bug of this package; --debug shows it (exit 2)",
}


# Helpers ------------------------------------------------------------------------------------


def _where(err: CheckpointError) -> str:
    at = "" if err.field is None else f" at {safe_text(str(err.field))}"
    return at + ("" if err.offset is None else f" (offset {err.offset})")


def _error_line(path: str, err: CheckpointError) -> str:
    return f"{safe_text(path)}: invalid: {err.code}{_where(err)}: {safe_text(err.message)}"


def _load(path: str, model: Any = None, order: str = "auto") -> Checkpoint:
    """Read ``path``; with a circle model, name, type and shape its entries. Files under 64 MiB
    are read into private memory (``mmap="auto"``): one truncated by another process meanwhile
    cannot kill the command with SIGBUS (SPEC section 1, mapped reading; docs/saving.md)."""
    ckpt = load(path, mmap="auto")
    if model is not None:
        from ..circle.binding import bind

        bind(ckpt, model, order=order)  # parsed once: the probe gets model.source
    return ckpt


def _table(rows: Callable[[], Iterable[Sequence[str]]], left: Iterable[int] = ()
           ) -> Iterator[str]:
    """Rows as aligned columns: right-aligned, except the column indices in ``left``. The rows
    are made twice (the widths, then the lines), never held: a file of 2,000,000 entries
    costs no list of 2,000,000 rows."""
    left = set(left)
    widths: list[int] = []
    for r in rows():
        widths = [max(len(c), w) for c, w in zip(r, widths or [0] * len(r))]
    for r in rows():
        yield "  ".join(
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
        ).rstrip()


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


# info ---------------------------------------------------------------------------------------


def cmd_info(args: argparse.Namespace) -> int:
    if len(args.files) == 1:
        return _info_one(args, args.files[0])
    status = EXIT_OK  # several files: each described (a header, or "file" in JSON), in turn
    for k, path in enumerate(args.files):
        if not args.json:
            print(("\n" if k else "") + f"==> {safe_text(path)} <==", flush=True)
        try:
            status = max(status, _info_one(args, path, named=True))
        except CheckpointError as err:
            status = max(status, EXIT_INVALID)
            print(f"onert-ckpt: error: {err.code}: {safe_text(path)}: {safe_text(err.message)}",
                  file=sys.stderr)
        except OSError as err:
            status = EXIT_USAGE
            why = err.strerror or str(err)
            print(f"onert-ckpt: error: io_error: {safe_text(path)}: {safe_text(why)}",
                  file=sys.stderr)
            if args.json:  # an object per file, in the files' order, this one included
                print(json_dumps({"file": path, "error": {"code": "io_error", "message": why}}))
        sys.stdout.flush()
    return status


def _info_one(args: argparse.Namespace, path: str, named: bool = False) -> int:
    """``info`` of one file (``named``: one of several, its path in the JSON object)."""
    head = {"file": path} if named else {}
    try:
        ckpt = _load(path, _model(args, path), args.order)
        # the data checks load defers, before any CRC-32 of the data is shown: a corrupt data
        # section is reported as validate reports it (same code, exit 1), text or JSON
        ckpt.verify()
        # entries described one at a time as they are printed (memory bounded by the file)
        desc = describe_lazy(ckpt)
    except CheckpointError as err:
        if args.json:
            print(json_dumps({**head, "error": err.to_dict()}))
            return EXIT_INVALID
        raise
    choice = args.model_choice
    if args.json:
        desc = {**head, **desc}
        if choice is not None:  # only then: the description of a file alone stays TOOLKIT 1's
            desc["model"] = {"path": choice.path, "found": choice.how}
        if args.stats:  # only then, likewise
            from .stats import checkpoint_stats

            desc["stats"] = (s.__dict__ for s in checkpoint_stats(ckpt))
        _write_all(json_pieces(desc), end="\n")
    else:
        model = None if choice is None else choice.describe()
        _write_all(line + "\n" for line in info_lines(desc, ckpt.layout.quirks, model))
        if args.stats:
            _write_all(line + "\n" for line in stats_lines(ckpt))
    return EXIT_OK


def stats_lines(ckpt: Checkpoint) -> Iterator[str]:
    """The ``info --stats`` table: one row per tensor and optimizer slot entry."""
    from .stats import checkpoint_stats

    # each row held as one text (its cells joined by NUL), not a list of twelve
    rows = ["\0".join("entry slot dtype count min max mean std nan inf zeros name".split())]
    for s in checkpoint_stats(ckpt):
        zeros = "-" if s.zeros is None else f"{s.zeros:.1%}"
        rows.append("\0".join([
            str(s.index), safe_text(s.slot), s.dtype, str(s.count), _fmt(s.min), _fmt(s.max),
            _fmt(s.mean), _fmt(s.std), str(s.nan), str(s.inf), zeros,
            "-" if s.name is None else safe_text(s.name)]))
    yield ""
    yield from _table(lambda: (r.split("\0") for r in rows), left=(1, 2, 11))


def _write_all(pieces: Iterable[str], end: str = "") -> None:
    """Write ``pieces`` to stdout a batch at a time (never the whole output held), each batch
    through ``sys.stdout.write``: the escaping stream's own write, not a raw writelines."""
    batch: list[str] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if size >= 1 << 16:
            sys.stdout.write("".join(batch))
            batch, size = [], 0
    sys.stdout.write("".join(batch) + end)


def _state_text(value: object) -> str:
    """A state value of the JSON description as text: ``nan``, ``bytes 00ff``, ``8``."""
    if isinstance(value, dict) and "float" in value:
        return str(value["float"])
    if isinstance(value, dict) and "bytes" in value:
        return f"bytes {value['bytes'] or '(empty)'}"
    return safe_text(repr(value) if isinstance(value, str) else str(value))


def _dialect_text(revision: str, dialect: str | None, why: bool = False) -> str:
    """A file's dialect as ``info`` and ``diff`` say it: its own, else "either" for a schema-1
    file that fits both runtimes, else "none"; ``why`` adds what that means."""
    if dialect:
        return str(dialect)
    if registry.holds(revision, "dialects"):
        # JSON says null here (TOOLKIT section 1, which other readers print too): the text says so
        return "either (fits onert and onert-micro; null in --json)" if why else "either"
    return "none (dialects are a schema-1 matter)" if why else "none"


def _slot_column(entries: Iterable[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, int]:
    """(entry indices, ascending; their offsets (-1 for none) and sizes as one array of
    rows; total bytes) of one slot: 24 bytes an entry, not a dict or a text per entry."""
    flat = (v for e in entries
            for v in (e["index"], -1 if e["offset"] is None else e["offset"], e["nbytes"]))
    # annotated: numpy 2.2's stubs (Python 3.10) type reshape's result with a fixed rank
    rows: np.ndarray = np.fromiter(flat, np.int64).reshape(-1, 3)
    rows = rows[np.argsort(rows[:, 0], kind="stable")]
    return rows[:, 0].copy(), rows[:, 1:].copy(), int(rows[:, 2].sum())


def info_lines(desc: dict[str, Any], quirks: Sequence[str] = (), model: str | None = None
               ) -> Iterator[str]:
    """The summary and table of ``info``, a line at a time (``model``: the circle model read,
    and how it was found). ``desc`` is :func:`describe`'s or ``describe_lazy``'s; with the
    latter, the entries are gone over twice (column widths, then the rows) and never held."""
    opt = desc["optimizer"]
    state = ", ".join(f"{safe_text(str(k))}={_state_text(v)}" for k, v in desc["state"].items())
    yield from [
        f"revision   {desc['revision']}",
        f"dialect    {_dialect_text(desc['revision'], desc['dialect'], why=True)}",
        f"file size  {desc['file_size']} bytes ({human_size(desc['file_size'])})",
        f"optimizer  {safe_text(str(opt['kind'])) if opt else 'none (weights only)'}",
        f"state      {state or 'none'}",
    ]
    if model is not None:
        yield f"model      {safe_text(model)}"
    if quirks:
        yield f"quirks     {', '.join(safe_text(q) for q in quirks)}"
    yield ""
    slots = list(opt["slots"]) if opt else []
    columns = {s: _slot_column(opt["slots"][s]) for s in slots}
    header = ["entry", "offset", "bytes", "crc32"] + [f"{safe_text(s)}.offset" for s in slots]
    seen = {"passes": 0, "names": False, "weights": 0}

    def rows() -> Iterator[list[str]]:
        """Every tensor's row; the name columns made on the first pass, kept on the second
        only when some tensor has them."""
        seen["passes"] += 1
        n = None if seen["passes"] == 1 or seen["names"] else len(header)
        yield [*header, "dtype", "shape", "name"][:n]
        for t in desc["tensors"]:
            seen["names"] = seen["names"] or "name" in t
            seen["weights"] += t["nbytes"] if seen["passes"] == 1 else 0
            row = [str(t["index"]), str(t["offset"]), str(t["nbytes"]), f"{t['crc32']:08x}"]
            for s in slots:  # the slot's row of this tensor, found by binary search
                keys, where, _ = columns[s]
                at = int(np.searchsorted(keys, t["index"]))
                if at < keys.size and keys[at] == t["index"]:
                    offset, nbytes = where[at].tolist()
                    row.append(f"{None if offset < 0 else offset}+{nbytes}")
                else:
                    row.append("-")
            shape, dtype, name = t.get("shape"), t.get("dtype"), t.get("name")
            row += ["-" if dtype is None else safe_text(str(dtype)),
                    "-" if shape is None else "[" + ", ".join(map(str, shape)) + "]",
                    "-" if name is None else safe_text(str(name))]
            yield row[:n]

    yield from _table(rows, left=range(len(header), len(header) + 3))
    summary = f"{counted(len(desc['tensors']), 'tensor')}, {human_size(seen['weights'])} of weights"
    if slots:
        shown = ", ".join(safe_text(s) for s in slots)
        state_bytes = sum(columns[s][2] for s in slots)
        summary += f", {human_size(state_bytes)} of optimizer state ({shown})"
    yield ""
    yield summary


# validate -----------------------------------------------------------------------------------

#: Quirks that ``validate --strict`` fails on, and why (a reader of today refuses them).
STRICT_QUIRKS = {
    "footerless": "no footer (an earlier onert exporter); today's onert refuses the file",
    "micro_element_size": "onert-micro's 4-bytes-per-element sizes for a non-float32 tensor",
}


def cmd_validate(args: argparse.Namespace) -> int:
    from .sanity import value_warnings

    status = EXIT_OK
    # --model: read once, and a model that cannot be read stops the command (exit 2) naming it;
    # else each file's own model by the convention (model_lookup)
    given = _model(args) if args.model is not None else None
    for path in args.files:
        error: dict[str, Any] | None = None
        try:
            model = given if args.model is not None else _model(args, path)
            ckpt = _load(path, model, args.order)
            ckpt.verify()  # the data checks load leaves to the first data access
        except CheckpointError as err:
            status = max(status, EXIT_INVALID)
            error, line = err.to_dict(), _error_line(path, err)
        except OSError as err:
            status = EXIT_USAGE
            msg = err.strerror or str(err)
            if err.filename is not None and os.fsdecode(err.filename) != path:
                msg += f": {os.fsdecode(err.filename)}"  # the model found for it, not the file
            error = {"code": "io_error", "field": None, "offset": None, "message": msg}
            line = f"{safe_text(path)}: cannot read: {safe_text(msg)}"
        if error is not None:
            print(json_dumps({"file": path, "valid": False, "error": error}) if args.json
                  else line)
            continue
        quirks = ckpt.layout.quirks
        failing = [q for q in quirks if q in STRICT_QUIRKS] if args.strict else []
        warnings = value_warnings(ckpt)  # values: warnings, failures with --strict
        invalid = bool(failing or (args.strict and warnings))
        status = max(status, EXIT_INVALID if invalid else EXIT_OK)
        if args.json:
            print(json_dumps({"file": path, "valid": not invalid, "revision": ckpt.revision,
                              "dialect": ckpt.dialect, "quirks": list(quirks),
                              "warnings": [w.to_dict() for w in warnings]}))
            continue
        for w in warnings:
            print(f"{safe_text(path)}: warning: {w.code} at {w.field}: {safe_text(w.message)}")
        for q in failing if invalid else ():
            print(f"{safe_text(path)}: quirk: {q}: {STRICT_QUIRKS[q]}")
        if not invalid:
            dialect = f" {ckpt.dialect}" if ckpt.dialect else ""
            shown = f", quirks: {', '.join(quirks)}" if quirks else ""
            print(f"{safe_text(path)}: ok ({ckpt.revision}{dialect}, "
                  f"{counted(len(ckpt), 'tensor')}{shown})")
    return status


# dump ---------------------------------------------------------------------------------------


def cmd_dump(args: argparse.Namespace) -> int:
    if args.layout:
        return _dump_layout(args)
    from .dump import tensor_values

    if args.dtype is not None:
        numeric = False
        with contextlib.suppress(TypeError):
            numeric = np.dtype(args.dtype).kind in "biufc"
        if not numeric:
            raise CliError("bad_dtype", f"{args.dtype!r} is not a NumPy number dtype")
    for flag, value in (("--limit", args.limit), ("--threshold", args.threshold)):
        if value is not None and value < 0:
            raise CliError("usage_error", f"{flag} must be 0 or more, not {value}")
    ckpt = _load(args.file, _model(args, args.file), args.order)
    slot = args.slot
    tensors = _pick_entries(ckpt, args.tensor, slot, args.model)
    if not tensors:
        print(f"no entry holds {slot!r} state")
        return EXIT_OK
    shown = []  # (tensor, its values, cut to --limit, their count and shape before the cut)
    for tensor in tensors:
        arr = tensor_values(ckpt, tensor, slot=slot, dtype=args.dtype)
        size, shape = arr.size, list(arr.shape)
        if args.limit is not None and size > args.limit:
            arr = arr.reshape(-1)[: args.limit]
        shown.append((tensor, arr, size, shape))
    if args.json:  # the values as (nested) JSON lists, non-finite ones as TOOLKIT section 1 says
        from .jsonout import json_value

        entries = [{"index": t.index, "name": t.name, "slot": slot or "weights",
                    "dtype": str(arr.dtype), "shape": shape,
                    "raw": args.dtype is None and t.dtype is None,
                    **({"limit": args.limit} if arr.size < size else {}),
                    "values": json_value(arr.tolist())} for t, arr, size, shape in shown]
        print(json_dumps({"file": args.file, "entries": entries}))
        return EXIT_OK
    blocks = []
    with np.printoptions(threshold=args.threshold):
        for t, arr, size, shape in shown:
            kind = str(arr.dtype)
            if args.dtype is None and t.dtype is None:
                kind = "raw bytes (uint8; no dtype known: give --model or --dtype)"
            title = f"entry {t.index}{'' if t.name is None else ' ' + t.name}"
            title += f" {slot or 'weights'} {kind} {shape}"
            if arr.size < size:
                title += f" (first {args.limit} of {size} values)"
            blocks.append(f"{safe_text(title)}\n{arr}")
    print("\n\n".join(blocks))
    return EXIT_OK


def _pick_entries(ckpt: Checkpoint, key: str | None, slot: str | None,
                 model: str | None) -> list[Any]:
    """The entries ``dump`` and ``export --tensor`` name: ``key``'s (every entry when None),
    and of those only the ones with a ``slot`` entry when a slot is named. A key or slot the
    checkpoint does not have is ``no_such_tensor`` or ``no_such_slot`` (exit 2)."""
    if key is None:
        tensors = list(ckpt.tensors)
    else:
        from .dump import find_tensor, no_entry_message

        found = find_tensor(ckpt, key)
        if found is None:
            raise CliError("no_such_tensor", no_entry_message(ckpt, key, model))
        tensors = [found]
    if slot is None:
        return tensors
    slots = ckpt.optimizer.slots if ckpt.optimizer is not None else {}
    have = f"this checkpoint's slots: {', '.join(slots) or 'none'}"
    if slot not in slots:
        raise CliError("no_such_slot", f"no {slot!r} slot ({have})")
    if key is not None and tensors[0].index not in slots[slot]:
        raise CliError("no_such_slot", f"entry {tensors[0].index} has no {slot!r} slot entry "
                       f"({have})")
    return [t for t in tensors if t.index in slots[slot]]


def _dump_layout(args: argparse.Namespace) -> int:
    from .layout_map import layout_map

    lmap = layout_map(args.file, lazy=True)
    if args.json:  # written a field at a time: a file of many entries is streamed
        _write_all(lmap.json_pieces(), end="\n")
        return EXIT_INVALID if lmap.error else EXIT_OK
    print(f"{safe_text(args.file)}: {lmap.revision or 'unknown revision'}, {lmap.file_size} bytes")
    def rows() -> Iterator[list[str]]:
        yield ["offset", "size", "field", "value", "note"]
        for f in lmap.iter_fields():
            yield [str(f.offset), str(f.size), safe_text(f.name), safe_text(f.value),
                   safe_text(f.note)]

    _write_all(line + "\n" for line in _table(rows, left=(2, 4)))
    if lmap.error is not None:
        print(_error_line(args.file, lmap.error))
        return EXIT_INVALID
    return EXIT_OK


# diff ---------------------------------------------------------------------------------------


def cmd_diff(args: argparse.Namespace) -> int:
    from .diff import diff

    for flag, value in (("--atol", args.atol), ("--rtol", args.rtol)):
        if not (value >= 0 and value != float("inf")):  # NaN fails the first test
            raise CliError("usage_error", f"{flag} must be a finite number >= 0, not {value}")
    model = _model(args, args.a, args.b)
    a, b = _load_named("A", args.a, model, args.order), _load_named("B", args.b, model, args.order)
    with progress_bar(os.path.getsize(args.a) + os.path.getsize(args.b), "comparing") as tick:
        result = diff(a, b, atol=args.atol, rtol=args.rtol, ignore_state=args.ignore_state,
                      progress=tick)
    hint = None
    unpaired = all(e.status in ("only_a", "only_b", "size") for e in result.entries)
    if model is None and result.paired_by == "index" and result.entries and unpaired:
        # no entry index holds the same tensor in both: onert's order against circle tensor
        # indices (an onert file and its onert-micro conversion), or two unrelated models
        hint = ("no entry pairs up by index: the files may number their entries differently "
                "(onert's order, onert-micro's circle tensor indices); add --model "
                "MODEL.circle to pair them by tensor name")
    if args.json:
        _write_all(result.json_pieces(**({} if hint is None else {"hint": hint})), end="\n")
        return EXIT_OK if result.equal else EXIT_INVALID
    for label, path, ckpt in (("a", args.a, a), ("b", args.b, b)):
        kind = ckpt.optimizer.kind if ckpt.optimizer is not None else "no optimizer"
        dialect = _dialect_text(ckpt.revision, ckpt.dialect)
        print(safe_text(f"{label}: {path} ({ckpt.revision}, {dialect}, {kind})"))
    def rows() -> Iterator[list[str]]:
        yield ["entry", "slot", "status", "changed", "rel_l2", "mean_abs", "max_abs", "max_rel"]
        for e in result.entries:
            shown = e.status if e.status != "size" else f"size {e.nbytes_a} != {e.nbytes_b}"
            changed = "-" if e.changed is None else f"{e.changed}/{e.elements}"
            yield [safe_text(e.key), safe_text(e.slot), shown, changed, _fmt(e.rel_l2),
                   _fmt(e.mean_abs), _fmt(e.max_abs), _fmt(e.max_rel)]

    print(f"entries paired by {result.paired_by}")
    _write_all(line + "\n" for line in _table(rows, left=(1, 2)))
    ignored = " (ignored: --ignore-state)" if args.ignore_state else ""
    for key, (va, vb) in result.state.items():
        print(f"state {safe_text(key)}: {safe_text(repr(va))} != {safe_text(repr(vb))}{ignored}")
    for key, (va, vb) in result.facts.items():
        if key == "dialect":
            va, vb = _dialect_text(a.revision, va), _dialect_text(b.revision, vb)
        print(safe_text(f"note: {key} {va} != {vb} (not a difference of content)"))
    verdict = "equal" if result.equal else "different"
    print(f"{verdict} (atol={args.atol:g}, rtol={args.rtol:g})")
    if hint is not None:
        print(f"hint: {hint}")
    return EXIT_OK if result.equal else EXIT_INVALID


def _load_named(label: str, path: str, model: Any, order: str) -> Checkpoint:
    """``_load`` of one of several files, its deferred data checks run: an error says which
    file (``B (x.circle): ...``), a damaged data block of B included."""
    try:
        ckpt = _load(path, model, order)
        ckpt.verify()
        return ckpt
    except CheckpointError as err:
        from ..format.errors import error_for

        raise error_for(err.code, err.field, err.offset,
                        f"{label} ({path}): {err.message}") from None


# convert, new, export, import ---------------------------------------------------------------


def _save(ckpt: Checkpoint, out: str, *, size_hint: int, progress: bool, **options: Any) -> None:
    """:func:`onert_checkpoint.save` with ``progress_bar``; imported on first use: it brings
    every writer, which the commands that only read never need (start-up time)."""
    from ..format.saving import save

    with progress_bar(size_hint if progress else 0) as tick:
        save(ckpt, out, progress=tick, **options)


def cmd_convert(args: argparse.Namespace) -> int:
    from ..api import convert

    output = _output(args.output)
    ckpt = load(args.input, mmap="auto")
    to = args.to or ckpt.revision  # --dialect/--model alone: same revision, other dialect
    if args.dialect is not None and not registry.holds(to, "dialects"):
        raise CliError("usage_error",
                       f"--dialect is a schema-1 matter; the output is {to} (add --to v1)")
    model = _model(args, args.input)
    require_model(ckpt, args.input, to, args.dialect, model)
    result = convert(ckpt, to, dialect=args.dialect, allow_lossy=args.allow_lossy, model=model,
                     batch_size=args.batch_size, order=args.order)
    dropped = lost_in_write(ckpt, to, args.allow_lossy, written=result)
    _save(result, output, size_hint=os.path.getsize(args.input), progress=not args.no_progress)
    # a schema-2 or -3 file has no dialect: not read again (millions of records cost their size)
    out = result if registry.holds(to, "streams") else load(output, mmap="auto")
    dialect = f" {out.dialect}" if out.dialect else ""
    size = human_size(os.path.getsize(output))
    print(f"wrote {safe_text(args.output)}: {out.revision}{dialect}, {size}")
    warn_dropped(dropped)
    return EXIT_OK


def _suffix(path: str) -> str:
    lower = path.lower()
    for suffix in (".safetensors", ".npz"):
        if lower.endswith(suffix):
            return suffix
    raise CliError("unknown_format", f"{safe_text(path)}: name the file .safetensors or .npz "
                   "(or .npy with --tensor, for one entry)")


def _export_npy(args: argparse.Namespace, ckpt: Checkpoint) -> int:
    """One entry (``--tensor``, with ``--slot`` one of its optimizer slots) as a .npy file:
    the inverse of ``edit --replace``. Written as every output is (atomic_file.py)."""
    from ..atomic_file import write_atomic
    from ..interchange.npz_stream import npy_pieces
    from .dump import tensor_values

    [tensor] = _pick_entries(ckpt, args.tensor, args.slot, args.model)
    arr = tensor_values(ckpt, tensor, slot=args.slot)
    write_atomic(args.output, npy_pieces(arr))
    what = "" if args.slot is None else f" {args.slot}"
    raw = " (raw bytes: no dtype known, give --model)" if tensor.dtype is None else ""
    print(f"wrote {safe_text(args.output)}: entry {tensor.index}{what} "
          f"{arr.dtype}{list(arr.shape)}{raw}")
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from ..interchange.safetensors_io import to_safetensors
    from ..interchange.tensor_dict import array_count, to_npz

    output = _output(args.output)
    npy = output.lower().endswith(".npy")
    # --tensor (and --slot, with it) exactly when the output is .npy
    if npy != (args.tensor is not None) or (args.slot is not None and not npy):
        raise CliError("usage_error", "one entry is exported as .npy: give --tensor NAME|INDEX "
                       "and an output named .npy (a whole checkpoint: .safetensors or .npz)")
    suffix = None if npy else _suffix(output)
    ckpt = _load(args.input, _model(args, args.input), args.order)
    if npy:
        return _export_npy(args, ckpt)
    with progress_bar(os.path.getsize(args.input)) as tick:
        (to_safetensors if suffix == ".safetensors" else to_npz)(ckpt, args.output, progress=tick)
    print(f"wrote {safe_text(args.output)}: {counted(array_count(ckpt), 'array')}")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from ..interchange.safetensors_io import from_safetensors
    from ..interchange.tensor_dict import from_npz

    try:
        suffix = _suffix(args.input)
    except CliError:
        # a checkpoint after all: the error says what the user meant (convert)
        with contextlib.suppress(CheckpointError, OSError, ValueError):
            kind = load(args.input, verify_data=False, mmap="auto").revision
            raise CliError("unknown_format", f"{safe_text(args.input)} is already a checkpoint "
                           f"({kind}): use convert to rewrite it (onert-ckpt convert "
                           f"{safe_text(args.input)} OUT --to v3), export to make safetensors "
                           "or npz of it") from None
        raise
    _output(args.output)
    from ..file_kinds import not_regular

    bad = not_regular(os.stat(args.input).st_mode, args.input, "import")  # a FIFO would block
    if bad is not None:
        raise bad
    model = _load_model(args.model)
    options: dict[str, Any] = {"optimizer": args.optimizer}
    dialect = args.dialect or "onert"
    if model is not None:  # arrays named after the model's tensors: name -> entry index
        from ..circle.initial import trainable_tensors

        num_entries, saved = trainable_tensors(model, dialect)
        options["entries"] = {model.tensors[t].name: i if dialect == "onert" else t
                              for i, t in enumerate(saved)}
    reader = from_safetensors if suffix == ".safetensors" else from_npz
    try:
        ckpt = reader(args.input, **options)
    except CheckpointError as err:
        if model is None and err.code == "not_representable" and "entries" in err.message:
            # arrays named after tensors, not entry indices: the library asks for its
            # ``entries`` argument; here that is the model (a usage matter, exit 2)
            raise CliError(
                "model_required",
                f"{safe_text(args.input)}: {safe_text(err.message.split(';')[0])}: arrays "
                "named after the model's tensors need the circle model: add --model "
                "MODEL.circle",
            ) from None
        raise
    if model is not None and ckpt.layout.num_entries is None:
        ckpt.layout = ckpt.layout.replaced(num_entries=num_entries, dialect=dialect)
    save_options: dict[str, Any] = {"allow_lossy": args.allow_lossy, "revision": args.revision}
    dropped = lost_in_write(ckpt, args.revision, args.allow_lossy)
    if args.dialect is not None:
        from ..api import convert
        from ..format.convert import needs_model

        to = args.revision or ckpt.revision
        require_model(ckpt, args.input, to, args.dialect, model)
        if needs_model(ckpt, to, args.dialect):
            ckpt = convert(ckpt, registry.RUNTIME.name, dialect=args.dialect, model=model,
                           batch_size=args.batch_size, allow_lossy=args.allow_lossy)
        save_options["dialect"] = args.dialect
    _save(ckpt, args.output, size_hint=os.path.getsize(args.input), progress=True, **save_options)
    out = load(args.output, mmap="auto")
    print(f"wrote {safe_text(args.output)}: {out.revision}, {counted(len(out), 'tensor')}")
    warn_dropped(dropped)
    return EXIT_OK


def cmd_new(args: argparse.Namespace) -> int:
    from ..circle.initial import new_checkpoint

    _output(args.output)
    model = _load_model(args.model)
    # v3, v2: names, dtypes and shapes of the model kept; v1 by default (it holds the rest)
    ckpt = new_checkpoint(model, optimizer=args.optimizer, dialect=args.dialect,
                          revision=args.revision)
    slots = ckpt.optimizer.slots.values() if ckpt.optimizer is not None else ()
    # the bytes of every entry and slot entry: near enough the file's size, for the bar
    size = sum(t.nbytes for t in ckpt.tensors) + sum(e.nbytes for s in slots for e in s.values())
    _save(ckpt, args.output, size_hint=size, progress=True)
    out = load(args.output, mmap="auto")
    print(f"wrote {safe_text(args.output)}: {out.revision} {args.dialect}, {args.optimizer}, "
          f"{counted(len(out), 'tensor')}, {human_size(out.file_size)}")
    return EXIT_OK


# plot ---------------------------------------------------------------------------------------

#: plot's kinds and the file counts each takes (min, max)
PLOT_KINDS = {"hist": (1, 1), "change": (2, 2), "trajectory": (2, None)}


def cmd_plot(args: argparse.Namespace) -> int:
    from . import plot

    output = _output(args.output)
    if os.path.splitext(output)[1].lower() not in plot.FORMATS:
        raise CliError("unknown_format", f"{safe_text(output)}: name the picture .png or .svg")
    try:
        plot.require_matplotlib()
    except ImportError as err:
        raise CliError("missing_dependency", str(err)) from None
    files = args.files
    kind = args.kind or {1: "hist", 2: "change"}.get(len(files), "trajectory")
    low, high = PLOT_KINDS[kind]
    if len(files) < low or (high is not None and len(files) > high):
        wanted = f"{low}" if low == high else f"{low} or more"
        raise CliError("usage_error", f"--kind {kind} takes {wanted} checkpoint(s), not "
                       f"{len(files)}")
    if args.tensor is not None and kind != "hist":
        raise CliError("usage_error", "--tensor chooses histograms (--kind hist)")
    model = _model(args, *files)
    ckpts = [_load_named(f"file {k + 1}", path, model, args.order)
             for k, path in enumerate(files)]
    slot = args.slot or "weights"
    try:
        if kind == "hist":
            shown = plot.histograms(ckpts[0], output, tensors=args.tensor, slot=args.slot)
        elif kind == "change":
            labels = (os.path.basename(files[0]), os.path.basename(files[1]))
            shown = plot.change(ckpts[0], ckpts[1], output, slot=slot, labels=labels)
        else:
            shown = plot.trajectory(ckpts, output, slot=slot)
    except CheckpointError:  # a ValueError too: the file's own error, exit 1
        raise
    except ValueError as err:
        raise CliError("usage_error", safe_text(str(err))) from None
    print(f"wrote {safe_text(output)}: {safe_text(shown)}")
    return EXIT_OK


# The parser ---------------------------------------------------------------------------------


def _nearest(word: str, known: Iterable[str], show: Callable[[str], str] = repr) -> str:
    """``; did you mean 'info'?``: the nearest of ``known`` to a mistyped ``word``, or ""."""
    from ..suggestions import nearest

    close = nearest(word, known)
    return f"; did you mean {show(close[0])}?" if close else ""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one line on stderr (exit 2), and the nearest choice to a
    mistyped command or choice (argparse has its own from Python 3.14 only)."""

    def error(self, message: str) -> NoReturn:
        import re

        found = re.search(r"invalid choice: '([^']*)'", message)
        if found is not None and "did you mean" not in message:
            message += _nearest(found.group(1), [str(c) for a in self._actions if a.choices
                                                 for c in a.choices])
        self.exit(EXIT_USAGE,
                  f"onert-ckpt: error: usage_error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="onert-ckpt", formatter_class=argparse.RawDescriptionHelpFormatter,
                     description="Inspect, validate, compare, convert and create onert / "
                     "onert-micro training checkpoints.",
                     epilog="examples:\n  onert-ckpt info model.ckpt\n  onert-ckpt validate "
                     "*.ckpt\n  onert-ckpt COMMAND --help\n\n"
                     "exit status: 0 success, 1 invalid or different, 2 usage or I/O error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help: str, description: str, func: Callable[..., int],
                examples: list[str], extra: str = "") -> argparse.ArgumentParser:
        epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
        p = sub.add_parser(name, help=help, description=description,
                           epilog=epilog + (f"\n\n{extra}" if extra else ""),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show a traceback on errors")
        p.set_defaults(func=func)
        return p

    p = command("info", "describe a checkpoint",
                "Describe a checkpoint: revision, dialect, size, optimizer, training state, "
                "and one row per entry; several files one after another.", cmd_info,
                ["onert-ckpt info tests/data/real-onert/fc2-adam-step8.ckpt",
                 "onert-ckpt info --model fc2.circle fc2-adam-step8.ckpt",
                 "onert-ckpt info --json fc2-adam-step8.ckpt | jq .state"])
    p.add_argument("files", nargs="+", metavar="FILE")
    model_option(p, "circle model: adds names, dtypes and shapes")
    p.add_argument("--json", action="store_true", help="print the JSON description")
    p.add_argument("--stats", action="store_true",
                   help="min, max, mean, std, NaN and Inf counts and zero fraction of each "
                   "tensor and optimizer slot (in --json: a \"stats\" list)")

    p = command("validate", "check files against the specification",
                "Check each file against every rule of the specification; one line per file.",
                cmd_validate,
                ["onert-ckpt validate *.ckpt", "onert-ckpt validate --strict --json old.ckpt"],
                "exit status: 0 all valid, 1 any invalid, 2 usage or I/O error")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--strict", action="store_true",
                   help="also fail on known producer quirks (e.g. a footer-less file)")
    model_option(p, "circle model the files must fit")
    p.add_argument("--json", action="store_true", help="one JSON object per file")

    p = command("dump", "print tensor values or the file's layout",
                "Print entry values as NumPy prints them, or (--layout) an annotated map of "
                "every field of the file: offset, size, name, value.", cmd_dump,
                ["onert-ckpt dump fc2-adam-step8.ckpt --tensor 0",
                 "onert-ckpt dump --model fc2.circle fc2-adam-step8.ckpt --tensor w0 --slot m",
                 "onert-ckpt dump --layout fc2-adam-step8.ckpt"])
    p.add_argument("file", metavar="FILE")
    p.add_argument("--tensor", metavar="I|NAME", help="entry index or tensor name (default all)")
    p.add_argument("--slot", metavar="SLOT", help="optimizer slot to print (m, v)")
    p.add_argument("--dtype", help="element type (default: the model's or the schema-2 "
                   "record's; else the raw bytes, uint8)")
    p.add_argument("--limit", type=int, metavar="N", help="print at most N values per entry")
    p.add_argument("--threshold", type=int, default=1000, metavar="N",
                   help="NumPy summarizes arrays of more than N values with '...' (1000)")
    p.add_argument("--layout", action="store_true", help="print the annotated file map")
    p.add_argument("--json", action="store_true",
                   help="the values as JSON (with --layout: the map as JSON)")
    model_option(p, "circle model: names, dtypes and shapes")

    p = command("diff", "compare two checkpoints",
                "Compare two checkpoints per entry and optimizer slot (elements changed, "
                "relative L2 change ||B-A||/||A||, mean, max absolute and max relative "
                "difference) and their training state. Entries pair by name when both are "
                "named (--model), else by entry index.", cmd_diff,
                ["onert-ckpt diff before.ckpt after.ckpt",
                 "onert-ckpt diff --rtol 1e-6 --model fc2.circle onert.ckpt micro.ckpt"],
                "exit status: 0 equal within tolerance, 1 different, 2 usage or I/O error")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("--atol", type=float, default=0.0, help="absolute tolerance (0)")
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (0)")
    p.add_argument("--ignore-state", action="store_true",
                   help="a training state that differs (step, epoch) is shown but does not "
                   "make the files different")
    model_option(p, "circle model of both files: pair entries by tensor name")
    p.add_argument("--json", action="store_true", help="the comparison as JSON")

    p = command("convert", "rewrite a checkpoint in another revision or dialect",
                "Rewrite a checkpoint in another revision or dialect. Refuses to drop content "
                "unless --allow-lossy.", cmd_convert,
                ["onert-ckpt convert old.ckpt new.ckpt --to v3",
                 "onert-ckpt convert onert.ckpt micro.ckpt --to v1 --dialect onert-micro "
                 "--model m.circle",
                 "onert-ckpt convert adam.ckpt micro.ckpt --to v1 --dialect onert-micro "
                 "--model m.circle --batch-size 2"])
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--to", choices=registry.names(),
                   help="target revision (default: the input's)")
    p.add_argument("--dialect", choices=DIALECTS, help="schema-1 dialect")
    model_option(p, "circle model (needed to move between dialects)")
    batch_size_option(p)
    p.add_argument("--allow-lossy", action="store_true", help="permit dropping content")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")

    p = command("export", "write weights and optimizer slots as safetensors or npz",
                "Write the weights (<name>) and optimizer slots (<name>.m, <name>.v) as named "
                "tensors; the state and layout facts go into the metadata, so that `import` "
                "gives back the same file. Names are entry indices unless --model names them.",
                cmd_export,
                ["onert-ckpt export fc2-adam-step8.ckpt fc2.safetensors --model fc2.circle",
                 "onert-ckpt export fc2-adam-step8.ckpt fc2.npz",
                 "onert-ckpt export fc2-adam-step8.ckpt w1.npy --tensor w1 --model fc2.circle"])
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT.safetensors|OUT.npz|OUT.npy")
    p.add_argument("--tensor", metavar="I|NAME",
                   help="export this one entry as OUT.npy (edit --replace reads it back)")
    p.add_argument("--slot", metavar="SLOT", help="with --tensor: its optimizer slot (m, v)")
    model_option(p, "circle model: tensor names, dtypes and shapes")

    p = command("import", "build a checkpoint from safetensors or npz",
                "Build a checkpoint from a file written by `export` (lossless), or from any "
                "safetensors/npz of arrays named after the model's tensors (with --model).",
                cmd_import,
                ["onert-ckpt import fc2.safetensors fc2.ckpt",
                 "onert-ckpt import weights.safetensors fc2.ckpt --model fc2.circle "
                 "--dialect onert",
                 "onert-ckpt import weights.safetensors fc2.ckpt --model fc2.circle "
                 "--optimizer adam"])
    p.add_argument("input", metavar="IN.safetensors|IN.npz")
    p.add_argument("output", metavar="OUT")
    p.add_argument("--model", metavar="MODEL.circle",
                   help="circle model: place arrays named after its tensors")
    p.add_argument("--revision", choices=registry.names(),
                   help="revision to write (an export's own; other arrays: v1 when schema 1 "
                   "holds them, else v3, the recommended revision)")
    p.add_argument("--dialect", choices=DIALECTS, help="schema-1 dialect")
    p.add_argument("--optimizer", choices=("adam", "sgd"),
                   help="the optimizer of weights-only arrays: adam adds zeroed m and v "
                   "(default: as the input holds; arrays alone are SGD)")
    batch_size_option(p)
    p.add_argument("--allow-lossy", action="store_true",
                   help="permit dropping what the revision cannot hold (said on stderr)")

    p = command("new", "a fresh checkpoint from a model's initial weights",
                "Write a checkpoint holding the model's initial weights, zero optimizer state "
                "and step 0, with the entries in the dialect's order.", cmd_new,
                ["onert-ckpt new --model fc2.circle --optimizer adam fc2-start.ckpt",
                 "onert-ckpt new --model fc2.circle --optimizer sgd --dialect onert-micro "
                 "micro.ckpt",
                 "onert-ckpt new --model fc2.circle --revision v3 fc2-start-v3.ckpt"])
    p.add_argument("output", metavar="OUT")
    p.add_argument("--model", metavar="MODEL.circle", required=True, help="circle model")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam", help="(adam)")
    p.add_argument("--dialect", choices=DIALECTS, default="onert",
                   help="entry order, and the dialect a schema-2 file downgrades to (onert)")
    p.add_argument("--revision", choices=[registry.RUNTIME.name, *(
                       r.name for r in registry.REVISIONS if r.holds_everything)],
                   help="v1 (what the runtimes read; the default, as schema 1 holds a fresh "
                   "checkpoint), or v3 (the recommended revision) or v2, with names, dtypes "
                   "and shapes")

    from .jobs_cli import bake_arguments, cmd_bake, cmd_edit, edit_arguments

    p = command("bake", "write a circle model holding a checkpoint's weights",
                "Write a copy of the circle model whose constant buffers hold the checkpoint's "
                "weights; everything else in the model is kept.", cmd_bake,
                ["onert-ckpt bake trained.ckpt --model fc2.circle fc2-trained.circle",
                 "onert-ckpt bake trained.ckpt --model shared.circle --shared untie out.circle"])
    bake_arguments(p)

    p = command("edit", "change the state, optimizer state or one tensor of a checkpoint",
                "Set the step, epoch or state keys, drop or reset the optimizer state, or "
                "replace one tensor from a .npy file; written atomically in the input's "
                "revision and dialect unless --to/--dialect.", cmd_edit,
                ["onert-ckpt edit trained.ckpt deploy.ckpt --drop-optimizer",
                 "onert-ckpt edit a.ckpt b.ckpt --model fc2.circle --replace w0=w0.npy --step 0"])
    edit_arguments(p)

    p = command("plot", "draw histograms or the change between checkpoints (PNG, SVG)",
                "Draw a picture (PNG or SVG, by the name): hist, one histogram per tensor and "
                "optimizer slot of one checkpoint; change, a bar per tensor of its relative L2 "
                "change ||B-A||/||A|| between two; trajectory, a line per tensor of its "
                "relative L2 change from the first of a series (a training run) against the "
                "step. Needs matplotlib (pip install 'onert-checkpoint[plot]').", cmd_plot,
                ["onert-ckpt plot --model fc2.circle fc2-adam-step8.ckpt weights.svg",
                 "onert-ckpt plot --model fc2.circle start.ckpt trained.ckpt change.png",
                 "onert-ckpt plot --model fc2.circle run/step*.ckpt trajectory.svg"])
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("output", metavar="OUT.png|OUT.svg")
    p.add_argument("--kind", choices=tuple(PLOT_KINDS),
                   help="(default: hist for one file, change for two, trajectory for more)")
    p.add_argument("--tensor", action="append", metavar="I|NAME",
                   help="hist: only this tensor (repeat for more)")
    p.add_argument("--slot", metavar="SLOT",
                   help="hist: only this slot (weights, m, v); change and trajectory: the slot "
                   "compared (weights)")
    model_option(p, "circle model of the files: tensor names and dtypes")

    from .conformance import cmd_conformance, conformance_arguments

    p = command("conformance", "run another reader on every conformance vector and corpus case",
                "Run a reader that prints TOOLKIT.md section 1's JSON on every conformance vector\n"
                "(spec/vectors) and corpus case (tests/corpus), compare its output as TOOLKIT\n"
                "section 1 says (an error's code, field and offset; a valid file's whole\n"
                "description, by JSON value) and report each disagreement with the rule the case\n"
                "tests. Exit\n"
                "status 0 when the reader agrees on every case, 1 otherwise.", cmd_conformance,
                ["onert-ckpt conformance -- spec/c/ockpt-info {file}",
                 "onert-ckpt conformance --select 'invalid-v3-*' -- ./my-reader --json {file}",
                 "onert-ckpt conformance -- onert-ckpt info --json"])
    conformance_arguments(p)

    p = command("completion", "print a shell completion script",
                "Print a completion script for bash, zsh or tcsh.", cmd_completion,
                ["onert-ckpt completion bash > "
                 "~/.local/share/bash-completion/completions/onert-ckpt",
                 "onert-ckpt completion zsh > ~/.zfunc/_onert-ckpt"])
    p.add_argument("shell", choices=("bash", "zsh", "tcsh"))
    return parser


def cmd_completion(args: argparse.Namespace) -> int:
    try:
        import shtab
    except ImportError:
        raise CliError("missing_dependency",
                       "shell completion needs shtab: pip install shtab") from None
    print(shtab.complete(build_parser(), shell=args.shell))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line, stdout and stderr through :class:`SafeStream`: no control byte
    read from a file reaches the terminal (a name could move the cursor or retitle it)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:  # the nearest option of the command to a mistyped flag (--modle: --model)
        commands = next(a.choices for a in parser._actions
                        if isinstance(a, argparse._SubParsersAction))
        flags = list(commands[args.command]._option_string_actions) if args.command else []
        hints = (_nearest(w.split("=", 1)[0], flags, str) for w in extras if w.startswith("--"))
        parser.error(f"unrecognized arguments: {' '.join(extras)}{next(filter(None, hints), '')}")
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as cat and grep do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        print("onert-ckpt: error: interrupted: stopped by the user", file=sys.stderr)
        return 130
    except Exception as err:  # the promise: one line, never a traceback unless --debug
        if args.debug:
            traceback.print_exc()
        code, message, status = _failure(args, err)
        # "<code>: " first, so that a reader splitting on ": " gets the stable part.
        print(f"onert-ckpt: error: {code}: {message}", file=sys.stderr)
        return status


def _failure(args: argparse.Namespace, err: Exception) -> tuple[str, str, int]:
    """The code, message (escaped) and exit status of the error line of ``err``."""
    if isinstance(err, CliError):
        return err.code, safe_text(str(err)), err.status
    if isinstance(err, CheckpointError):
        # The library's advice names its keyword arguments; the command line's, its flags.
        if "allow_lossy" in vars(args):
            swaps = [("pass allow_lossy=True", "pass --allow-lossy")]
        else:  # advise only options this command has (new has none: it never drops content)
            swaps = [(" (pass allow_lossy=True to drop them)",
                      f" ({args.command} never drops content)")]
        swaps.append(("pass batch_size= (--batch-size on the command line; ",
                      "pass --batch-size B ("))
        if "order" in vars(args):  # the library's order='probe' is the flag --order probe
            swaps += [(f"order={source!r}", f"--order {source}") for source in ORDER_CHOICES]
        message = err.message
        for old, new in swaps:
            message = message.replace(old, new)
        choice = getattr(args, "model_choice", None)
        # only an error a model can cause (model_mismatch, ambiguous_entries) names the model
        if choice is not None and choice.how != "--model" and err.category == "model":
            message += (f" (model: {choice.describe()}; --model names another, --no-model "
                        "reads without one)")
        where = f" [{_where(err).strip()}]" if _where(err) else ""
        return err.code, safe_text(message) + where, EXIT_INVALID
    if isinstance(err, OSError):
        msg = f"{err.strerror or err}" + (f": {err.filename}" if err.filename else "")
        if isinstance(err, FileNotFoundError) and err.filename:
            folder = os.path.dirname(os.fsdecode(err.filename))
            if folder and not os.path.isdir(folder):
                msg += f" (the folder {folder} does not exist)"
        return "io_error", safe_text(msg), EXIT_USAGE
    hint = "" if args.debug else " (--debug shows the traceback)"
    # what escaped, after a code like every other line's: the matrix of public paths proves
    # no file gets here
    return "internal_error", f"{type(err).__name__}: {safe_text(str(err))}{hint}", EXIT_USAGE

if __name__ == "__main__":
    sys.exit(main())
