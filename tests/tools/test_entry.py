"""The entry point answers --version without importing the format or NumPy (start-up
time), with the same text as the full parser's --version."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from onert_checkpoint.tools import cli, entry


def test_fast_version_equals_the_parsers() -> None:
    fast = io.StringIO()
    with contextlib.redirect_stdout(fast):
        assert entry.main(["--version"]) == 0
    full = io.StringIO()
    with contextlib.redirect_stdout(full), pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--version"])
    assert fast.getvalue() == full.getvalue()


def test_version_imports_neither_numpy_nor_the_format() -> None:
    code = ("import sys; from onert_checkpoint.tools.entry import main; main(['--version']); "
            "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith("
            "'onert_checkpoint.format')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == "[]", out


def test_other_commands_reach_the_cli() -> None:
    path = Path(__file__).parents[1] / "data" / "real-onert" / "fc2-sgd-step8.ckpt"
    res = subprocess.run([sys.executable, "-m", "onert_checkpoint", "info", str(path)],
                         capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.startswith("revision   v1"), res.stderr


def test_new_writes_schema_2_directly(tmp_path: Path) -> None:
    """`new --revision v2` writes schema 2 directly: the model's names, dtypes and shapes in
    the file; the downgrade is the schema-1 file `new` writes."""
    import onert_checkpoint as oc

    model = Path(__file__).parents[1] / "data" / "real-onert" / "fc2.circle"
    for rev in ("v1", "v2"):
        res = subprocess.run([sys.executable, "-m", "onert_checkpoint", "new", "--model",
                              str(model), "--revision", rev, str(tmp_path / rev)],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    v2 = oc.load(tmp_path / "v2")
    assert v2.revision == "v2" and v2["w1"].shape == (3, 8) and str(v2["w1"].dtype) == "float32"
    v1 = (tmp_path / "v1").read_bytes()
    assert oc.to_bytes(oc.downgrade(v2, allow_lossy=True)) == v1
