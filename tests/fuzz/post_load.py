"""The properties of every public path that runs *after* a successful load.

:func:`check_post_load` takes the bytes of a file that loads and sends the checkpoint through
every public entry point: ``describe`` and the JSON of ``info``/``validate``/``diff``/
``dump --layout``, ``layout_map``, ``diff`` (a file equals itself), ``convert`` to every target
revision and dialect, ``export``/``import`` in both formats, ``to_numpy_dict``/
``from_numpy_dict``, and the command line's renderers (run in-process, so a fuzzer can afford
them). It raises ``AssertionError`` (or lets an unexpected exception through) when a property
breaks:

* only :class:`onert_checkpoint.CheckpointError` escapes the library (``OSError`` for the file
  system; a ``ValueError`` that asks for the circle model when a conversion needs one), and the
  command line answers with one ``onert-ckpt: error: <code>`` line whose code is the project's,
  never a Python exception's name;
* every JSON output is strict RFC 8259 (no ``NaN``/``Infinity`` tokens);
* no raw control character (C0 but newline and tab, DEL, C1) reaches stdout or stderr;
* a file diffed against itself is equal, by the library and by the command line;
* export then import (safetensors, npz, a dict of arrays) gives back the same bytes.

Used by tests/fuzz/test_fuzz_entrypoints.py (hypothesis) and tests/fuzz/fuzz_tools.py (atheris).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import onert_checkpoint as oc
from onert_checkpoint import CheckpointError
from onert_checkpoint.tools.cli import main as cli_main
from onert_checkpoint.tools.layout_map import layout_map

#: C0 controls but newline and tab, DEL, and the C1 block.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ERROR_LINE = re.compile(r"^onert-ckpt: error: ([A-Za-z_]+)")
TARGETS = [(revision, dialect) for revision in ("v1", "wof", "v2", "v3")
           for dialect in ((None, "onert", "onert-micro") if revision == "v1" else (None,))]


def strict_json(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"non-standard JSON token {token!r}")

    return json.loads(text, parse_constant=refuse)


def run_cli(*args: str) -> tuple[int, str, str]:
    """The command line in this process; checks the output properties."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli_main([*args])
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
    stdout, stderr = out.getvalue(), err.getvalue()
    assert not CONTROL.search(stdout), f"{args}: raw control character on stdout: {stdout!r}"
    assert not CONTROL.search(stderr), f"{args}: raw control character on stderr: {stderr!r}"
    assert "Traceback" not in stderr, f"{args}: {stderr}"
    for line in stderr.splitlines():
        m = ERROR_LINE.match(line)
        if m:
            # the format's codes and the command line's own (usage_error, io_error, ...) are
            # snake_case; the catch-all for an unexpected exception prints its class name
            assert m.group(1).islower(), f"{args}: an unexpected exception: {line}"
    assert status in (0, 1, 2), (args, status, stderr)
    return status, stdout, stderr


def library(call: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Exception | None]:
    """A library call returns, or raises CheckpointError (OSError); nothing else escapes."""
    try:
        return call(*args, **kwargs), None
    except (CheckpointError, OSError) as exc:
        return None, exc


def _convert(ckpt: oc.Checkpoint, revision: str, dialect: str | None) -> tuple[Any, Any]:
    try:
        return library(oc.convert, ckpt, revision, dialect=dialect, allow_lossy=True)
    except ValueError as exc:  # a usage error: the dialect needs the circle model
        if "model" not in str(exc) or dialect is None:
            raise
        return None, exc


def check_library(data: bytes, tmp: Path) -> None:
    ckpt = oc.load(data)
    strict_json(json.dumps(oc.describe(ckpt), allow_nan=False))
    strict_json(json.dumps(layout_map(data).to_dict(), allow_nan=False))
    d = oc.diff(ckpt, oc.load(data))
    assert d.equal, f"a file differs from itself: {d.to_dict()}"
    strict_json(json.dumps(d.to_dict(), allow_nan=False))

    for revision, dialect in TARGETS:
        out, err = _convert(ckpt, revision, dialect)
        if err is None:
            written, err = library(oc.to_bytes, out)
            if err is None:
                oc.load(written)

    for export, imp, name in ((oc.to_safetensors, oc.from_safetensors, "e.safetensors"),
                              (oc.to_npz, oc.from_npz, "e.npz")):
        _, err = library(export, ckpt, tmp / name)
        if err is None:
            back, err = library(imp, tmp / name)
            assert err is None, f"{name}: exported, then import refused it: {err}"
            assert oc.to_bytes(back) == data, f"{name}: export then import is not lossless"
    pair, err = library(oc.to_numpy_dict, ckpt, metadata=True)
    if err is None:
        back, err = library(oc.from_numpy_dict, *pair)
        assert err is None, f"from_numpy_dict refused to_numpy_dict's output: {err}"
        assert oc.to_bytes(back) == data, "to_numpy_dict then from_numpy_dict is not lossless"


def check_cli(data: bytes, tmp: Path) -> None:
    path = tmp / "f.ckpt"
    path.write_bytes(data)
    p = str(path)
    for args in (["info", p], ["validate", p], ["dump", p], ["dump", "--layout", p]):
        run_cli(*args)
    status, _, err = run_cli("diff", p, p)
    assert status == 0, f"diff of a file with itself: {err}"
    for args in (["info", "--json", p], ["validate", "--json", p],
                 ["dump", "--layout", "--json", p], ["diff", "--json", p, p]):
        _, out, _ = run_cli(*args)
        assert out.strip(), f"{args}: no JSON output"
        strict_json(out)
    for revision, _ in TARGETS[::3]:
        run_cli("convert", p, str(tmp / f"o.{revision}"), "--to", revision, "--allow-lossy")
    for ext in ("safetensors", "npz"):
        status, _, _ = run_cli("export", p, str(tmp / f"e2.{ext}"))
        if status == 0:
            status, _, err = run_cli("import", str(tmp / f"e2.{ext}"), str(tmp / "back.ckpt"))
            assert status == 0, f"import of an export: {err}"
            assert (tmp / "back.ckpt").read_bytes() == data, f"CLI {ext} round trip not lossless"


def check_post_load(data: bytes, tmp: Path, *, cli: bool = True) -> bool:
    """Every property above for ``data``; False (nothing checked) when ``data`` does not load."""
    try:
        oc.load(data).verify()  # with the data checks load leaves to the first data access
    except CheckpointError:
        return False
    check_library(data, tmp)
    if cli:
        check_cli(data, tmp)
    return True
