"""The format layer (``format/``, the bytes on disk) never imports the model layer (``circle/``):
the model layer reads checkpoints through the format layer, and what takes a circle model is
composed above both (``onert_checkpoint/api.py``). Every module is parsed, so an import inside
a function or under ``if TYPE_CHECKING:`` counts as much as one at the top."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import onert_checkpoint as oc

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "onert_checkpoint"
FORMAT = PACKAGE / "format"


def _absolute(module: Path, node: ast.ImportFrom) -> str:
    """The dotted name ``node`` imports from, relative levels resolved against ``module``."""
    if node.level == 0:
        return node.module or ""
    parts = ["onert_checkpoint", *module.relative_to(PACKAGE).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    base = parts[: len(parts) - node.level]  # level 1: the module's own package
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_modules(module: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, dotted name) of everything ``module`` (or ``text`` placed there) imports, at any
    depth of its code."""
    found: list[tuple[int, str]] = []
    code = module.read_text() if text is None else text
    for node in ast.walk(ast.parse(code, str(module))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            name = _absolute(module, node)
            found.append((node.lineno, name))
            # ``from .. import circle`` names the package in the alias, not the module
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return found


def _is_circle(name: str) -> bool:
    return name == "onert_checkpoint.circle" or name.startswith("onert_checkpoint.circle.")


def circle_imports(module: Path) -> list[str]:
    return [
        f"{module.relative_to(PACKAGE.parent)}:{line}: {name}"
        for line, name in imported_modules(module)
        if _is_circle(name)
    ]


def test_the_format_layer_never_imports_the_model_layer() -> None:
    modules = sorted(FORMAT.rglob("*.py"))
    assert len(modules) > 10  # the walk found the package
    offending = [hit for module in modules for hit in circle_imports(module)]
    assert offending == [], "format/ imports circle/:\n" + "\n".join(offending)


def test_every_spelling_of_a_circle_import_is_recognised() -> None:
    """The check itself: relative imports of any level, an absolute import, one inside a
    function and ``from .. import circle`` are all found; a format-local import is not."""
    module = FORMAT / "revisions" / "probe.py"  # never written: only its place is used
    spellings = {
        "from ...circle.binding import bind": True,
        "from ... import circle": True,
        "import onert_checkpoint.circle.model": True,
        "def f():\n    from ...circle import model": True,
        "from ..model import Checkpoint": False,
        "from ...format import dispatch": False,
    }
    for code, is_circle in spellings.items():
        names = [name for _, name in imported_modules(module, code + "\n")]
        assert any(_is_circle(n) for n in names) is is_circle, (code, names)


def test_the_public_functions_that_take_a_model_are_composed_above_both_layers() -> None:
    """``oc.load``, ``oc.open``, ``oc.upgrade`` and ``oc.convert`` take ``model=``; they live
    in ``onert_checkpoint.api``, and the format layer's own ``load`` and ``upgrade`` take none."""
    from onert_checkpoint.format import convert, dispatch

    for name in ("load", "open", "upgrade", "convert"):
        assert getattr(oc, name).__module__ == "onert_checkpoint.api", name
    assert "model" not in inspect.signature(dispatch.load).parameters
    assert "model" not in inspect.signature(convert.upgrade).parameters
    assert not hasattr(convert, "convert")

