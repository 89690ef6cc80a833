"""The ``bake`` and ``edit`` commands of ``onert-ckpt``: ``*_arguments`` declares a command's
options, ``cmd_*`` runs it; :mod:`.cli` registers them and reports their errors."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ..format.revisions import registry
from .cli_common import (
    DIALECTS,
    CliError,
    batch_size_option,
    command_model,
    given_path,
    load_model,
    lost_in_write,
    model_option,
    order_option,
    progress_bar,
    require_model,
    warn_dropped,
)

__all__ = ["bake_arguments", "cmd_bake", "cmd_edit", "edit_arguments"]


# bake -------------------------------------------------------------------------------------


def bake_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", metavar="CKPT")
    p.add_argument("output", metavar="OUT.circle")
    p.add_argument("--model", metavar="MODEL.circle", required=True,
                   help="the circle model the checkpoint was trained from")
    order_option(p)
    p.add_argument("--shared", choices=("error", "kept", "untie"), default="error",
                   help="onert's diverged copies of a shared weight: refuse (error), bake the "
                   "entry onert keeps (kept), or give each reader its own tensor (untie)")


def cmd_bake(args: argparse.Namespace) -> int:
    from ..circle.bake import bake
    from .render import human_size, safe_text

    output = given_path(args.output)
    model = load_model(args.model)
    with progress_bar(os.path.getsize(args.model)) as tick:  # the output is about as large
        baked = bake(given_path(args.checkpoint, "checkpoint"), model, output,
                     order=args.order, shared=args.shared, progress=tick)
    print(f"wrote {safe_text(output)}: circle model with the weights of "
          f"{safe_text(args.checkpoint)}, {human_size(len(baked))}")
    return 0


# edit -------------------------------------------------------------------------------------


def edit_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT")
    model_option(p, "circle model: names entries, checks --replace values")
    p.add_argument("--step", type=int, help="set the training step")
    p.add_argument("--epoch", type=int, help="set the epoch")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="set a state key (schema 2); VALUE is read as JSON when it parses, "
                   "else kept as text")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--drop-optimizer", action="store_true",
                       help="drop the optimizer state (Adam becomes SGD)")
    group.add_argument("--reset-optimizer", action="store_true",
                       help="zero the optimizer state (same optimizer)")
    p.add_argument("--replace", action="append", default=[], metavar="ENTRY=FILE.npy",
                   help="new values of one entry (tensor name or index) from a .npy file")
    p.add_argument("--to", choices=registry.names(), help="revision to write (the input's)")
    p.add_argument("--dialect", choices=DIALECTS, help="schema-1 dialect to write (the input's)")
    batch_size_option(p)
    p.add_argument("--allow-lossy", action="store_true",
                   help="permit dropping what the target revision cannot hold (said on stderr)")


def _pair(text: str, what: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise CliError("usage_error", f"{what} takes KEY=VALUE, not {text!r}")
    return key, value


def _state_value(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _read_npy(path: str) -> Any:
    """The array of the .npy file ``path``: a header claiming more (a MemoryError) or less data
    than the file holds is a usage error; a missing or odd file (a directory, a FIFO) the
    library's OSError naming ``path`` (``open_source``): io_error, exit 2."""
    import io
    from tokenize import TokenError

    from numpy.lib import format as npy

    from ..format.source import open_source
    from ..interchange.npz_stream import npy_geometry
    from .render import safe_text

    # a file of 64 MiB or more is mapped and copied once (the page cache, then the bytes), not
    # read privately and copied again
    view = open_source(given_path(path, "array"), copy="auto")
    try:
        raw = bytes(view)
    finally:
        view.release()
    f = io.BytesIO(raw)
    try:
        shape, dtype, need = npy_geometry(f)
        array = f"{dtype}{list(shape)}"
        have = len(raw) - f.tell()
        if dtype.hasobject or min(shape, default=0) < 0:
            raise ValueError(f"its header claims {array}: not an array of numbers")
        if need > have:
            raise ValueError(f"its header claims {array} ({need} bytes) but the file holds "
                             f"{have} bytes of data")
        if need < have:  # bytes after the array: not what np.save writes
            raise ValueError(f"{have - need} bytes follow the {array} array ({need} bytes of "
                             "data)")
        f.seek(0)
        return npy.read_array(f, allow_pickle=False)
    except (ValueError, TypeError, SyntaxError, TokenError) as exc:  # numpy parses the header
        raise CliError("usage_error",
                       f"{safe_text(path)}: not a .npy array: {safe_text(str(exc))}") from exc


def cmd_edit(args: argparse.Namespace) -> int:
    """``edit``: :func:`~onert_checkpoint.edit_file` on the input read once."""
    from ..format.dispatch import load
    from .dump import find_tensor, no_entry_message
    from .edit import edit_and_save
    from .render import safe_text

    output = given_path(args.output)
    state = {k: _state_value(v) for k, v in (_pair(s, "--set") for s in args.set)}
    replace: dict[str | int, object] = {}
    for item in args.replace:
        key, path = _pair(item, "--replace")
        replace[key] = _read_npy(path)
    model = command_model(args, args.input)
    ckpt = load(args.input, mmap="auto")
    if args.dialect is not None:  # as convert: refused before anything is written
        require_model(ckpt, args.input, args.to or ckpt.revision, args.dialect, model)
    if model is not None:
        from ..circle.binding import bind

        bind(ckpt, model, order=args.order)
    for wanted in map(str, replace):  # dump's and export's no_such_tensor, not a model matter
        if find_tensor(ckpt, wanted) is None:
            raise CliError("no_such_tensor", no_entry_message(ckpt, wanted, args.model))
    # what --allow-lossy drops is said of the input as read now, without the model's names
    source = load(args.input, mmap="auto") if args.allow_lossy else None
    with progress_bar(os.path.getsize(args.input)) as tick:
        ckpt = edit_and_save(ckpt, output, revision=args.to, dialect=args.dialect, model=model,
                             batch_size=args.batch_size, allow_lossy=args.allow_lossy,
                             progress=tick, state=state, replace=replace, step=args.step,
                             epoch=args.epoch, drop_optimizer=args.drop_optimizer,
                             reset_optimizer=args.reset_optimizer)
    dropped = [] if source is None else lost_in_write(source, args.to, True, ckpt)
    out = load(output, mmap="auto")
    kind = out.optimizer.kind if out.optimizer is not None else "no optimizer"
    dialect = f" {out.dialect}" if out.dialect else ""
    print(f"wrote {safe_text(output)}: {out.revision}{dialect}, {kind}, step {out.step}")
    warn_dropped(dropped)
    return 0
