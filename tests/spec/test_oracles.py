"""The test oracles of spec/oracles/ stay independent of the library (spec/oracles/README.md).

An oracle is a second encoder written from spec/SPEC.md alone; spec/make_vectors.py compares the
library's writer against it. If an oracle imported the library, a bug of the library would be on
both sides of that comparison and the vectors would bless it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORACLES = ROOT / "spec" / "oracles"
MODULES = sorted(ORACLES.glob("*.py"))
LIBRARY = "onert_checkpoint"  # the package under test; onert_checkpoint_generated is the .ksy's


def imported_modules(source: str) -> set[str]:
    """Every module an ``import`` or ``from ... import`` of ``source`` names, at any depth."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def is_library(module: str) -> bool:
    return module == LIBRARY or module.startswith(LIBRARY + ".")


def test_there_are_oracles() -> None:
    assert [p.name for p in MODULES] == ["v3_encoder.py"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_oracle_source_imports_nothing_of_the_library(path: Path) -> None:
    assert sorted(filter(is_library, imported_modules(path.read_text()))) == []


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_importing_an_oracle_loads_nothing_of_the_library(path: Path) -> None:
    """Indirect imports too: a fresh interpreter imports the oracle alone and lists what of the
    library it loaded (nothing)."""
    probe = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(ORACLES)!r})\n"
        f"import {path.stem}\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m == {LIBRARY!r} "
        f"or m.startswith({LIBRARY + '.'!r}))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_the_readme_lists_every_oracle() -> None:
    readme = (ORACLES / "README.md").read_text()
    for path in MODULES:
        assert f"[{path.name}]({path.name})" in readme, path.name


def test_imported_modules_sees_nested_and_aliased_imports() -> None:
    source = "def f():\n    import onert_checkpoint.format as x\nfrom onert_checkpoint import y\n"
    assert sorted(filter(is_library, imported_modules(source))) == [
        "onert_checkpoint",
        "onert_checkpoint.format",
    ]
    assert not is_library("onert_checkpoint_generated.layout")
