"""``onert-ckpt``: the command line, a thin layer over the library.

Exit codes: 0 success (every file valid), 1 a checkpoint is invalid or differs, 2 usage error
or a file that cannot be read at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import __version__
from .describe import describe
from .dispatch import load
from .errors import CheckpointError
from .render import human_size, safe_text

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def _print_json(obj: object) -> None:
    print(json.dumps(obj, ensure_ascii=True))


def _error_line(path: str, err: CheckpointError) -> str:
    return f"{safe_text(path)}: invalid: {err.code} at {err.field} (offset {err.offset}): {safe_text(err.message)}"


def cmd_info(args: argparse.Namespace) -> int:
    try:
        ckpt = load(args.file)
    except CheckpointError as err:
        if args.json:
            _print_json({"error": err.to_dict()})
        else:
            print(_error_line(args.file, err), file=sys.stderr)
        return EXIT_INVALID
    desc = describe(ckpt)
    if args.json:
        _print_json(desc)
        return EXIT_OK
    print(render_info(desc))
    return EXIT_OK


def render_info(desc: dict) -> str:
    """The human-readable table of ``info``."""
    opt = desc["optimizer"]
    lines = [
        f"revision   {desc['revision']}",
        f"dialect    {desc['dialect'] or 'either (fits onert and onert-micro)'}",
        f"file size  {desc['file_size']} bytes ({human_size(desc['file_size'])})",
        f"optimizer  {opt['kind'] if opt else 'none (weights only)'}",
        "state      " + (", ".join(f"{safe_text(str(k))}={safe_text(str(v))}" for k, v in desc["state"].items()) or "none"),
        "",
    ]
    slots = list(opt["slots"]) if opt else []
    header = ["entry", "offset", "bytes", "crc32"] + [f"{s}.offset" for s in slots]
    has_names = any("name" in t for t in desc["tensors"])
    if has_names:
        header += ["dtype", "shape", "name"]
    rows = [header]
    slot_by_index = {s: {e["index"]: e for e in opt["slots"][s]} for s in slots}
    for t in desc["tensors"]:
        row = [str(t["index"]), str(t["offset"]), str(t["nbytes"]), f"{t['crc32']:08x}"]
        for s in slots:
            e = slot_by_index[s].get(t["index"])
            row.append("-" if e is None else f"{e['offset']}+{e['nbytes']}")
        if has_names:
            row += [str(t.get("dtype")), str(tuple(t["shape"])) if t.get("shape") is not None else "?", safe_text(str(t.get("name")))]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  ".join(c.rjust(w) if i < len(header) - 1 or not has_names else c for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    total = sum(t["nbytes"] for t in desc["tensors"])
    lines.append("")
    lines.append(f"{len(desc['tensors'])} tensors, {human_size(total)} of weights" + (f", {len(slots)} optimizer slots" if slots else ""))
    return "\n".join(lines)


def cmd_validate(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for path in args.files:
        try:
            ckpt = load(path)
        except CheckpointError as err:
            status = EXIT_INVALID
            if args.json:
                _print_json({"file": path, "valid": False, "error": err.to_dict()})
            else:
                print(_error_line(path, err))
            continue
        except OSError as err:
            status = max(status, EXIT_USAGE)
            msg = err.strerror or str(err)
            if args.json:
                _print_json({"file": path, "valid": False, "error": {"code": "io_error", "field": None, "offset": None, "message": msg}})
            else:
                print(f"{safe_text(path)}: cannot read: {safe_text(msg)}")
            continue
        if args.json:
            _print_json({"file": path, "valid": True, "revision": ckpt.revision, "dialect": ckpt.dialect})
        else:
            dialect = f" {ckpt.dialect}" if ckpt.dialect else ""
            print(f"{safe_text(path)}: ok ({ckpt.revision}{dialect}, {len(ckpt)} tensors)")
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onert-ckpt",
        description="Inspect and validate onert / onert-micro training checkpoints.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  onert-ckpt info model.ckpt\n  onert-ckpt info --json model.ckpt\n  onert-ckpt validate *.ckpt",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on unexpected errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="describe a checkpoint", description="Describe a checkpoint: revision, dialect, entries, optimizer, state.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  onert-ckpt info fc2-adam-step8.ckpt\n  onert-ckpt info --json fc2-adam-step8.ckpt | jq .state")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print the JSON description (a stable contract)")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("validate", help="check files against the specification", description="Check each file against every rule of the specification; one line per file.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="exit status: 0 all valid, 1 any invalid, 2 usage or I/O error\nexample:\n  onert-ckpt validate a.ckpt b.ckpt")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.set_defaults(func=cmd_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except OSError as err:
        if args.debug:
            raise
        print(f"onert-ckpt: error: {safe_text(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except CheckpointError as err:
        if args.debug:
            raise
        print(f"onert-ckpt: error: {err.code}: {safe_text(err.message)}", file=sys.stderr)
        return EXIT_INVALID


if __name__ == "__main__":
    sys.exit(main())
