"""The documentation site builds in strict mode (broken links, missing pages, unresolved API
references fail), its CLI reference is the command line's own help, and its API reference
renders: cross-references linked (no Sphinx role shown literally), typed signatures, the
functions users call first at the top and the errors last."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]

#: a Sphinx role as reStructuredText writes it (``:func:`~pkg.save```), in a docstring or as
#: Markdown renders it when nothing converts it (``:func:<code>~pkg.save</code>``)
SPHINX_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const|ref|term):"
                         r"(?:`|<code>)")

#: the API reference's order: what users call first, then the objects they get, then the errors
FIRST = ["load", "save", "open", "Checkpoint", "Tensor", "upgrade", "convert", "bind"]
ERRORS = ["CheckpointError", "FormatError", "UnsupportedFormatError", "ModelMismatchError",
          "NotRepresentableError"]


def public_api_modules() -> list[Path]:
    """The source files that define the objects ``onert_checkpoint`` exports."""
    modules = {getattr(getattr(oc, name), "__module__", None) for name in oc.__all__}
    modules.add("onert_checkpoint.format.dispatch")  # SUPPORTED_VERSIONS (a tuple)
    return sorted(Path(importlib.import_module(m).__file__)  # type: ignore[arg-type]
                  for m in modules if m and m.startswith("onert_checkpoint"))


def test_no_public_api_module_writes_a_sphinx_role() -> None:
    """The docstrings are Markdown for mkdocstrings: a cross-reference is
    ``[`save`][onert_checkpoint.save]``, which the site links; a Sphinx role would be shown
    as written."""
    modules = public_api_modules()
    assert len(modules) >= 15
    found = [f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
             for path in modules for text in [path.read_text()]
             for m in SPHINX_ROLE.finditer(text)]
    assert found == []


def test_site_builds_strict(docs_site: Path) -> None:
    page = (docs_site / "cli-reference" / "index.html").read_text()
    from onert_checkpoint.tools.cli import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions:
        for name in action.choices:
            assert f"onert-ckpt {name}" in page, f"CLI reference misses {name}"
    api = (docs_site / "api" / "index.html").read_text()
    for name in oc.__all__:
        if not name.startswith("_"):
            assert name in api, f"API reference misses {name}"


def test_no_page_shows_a_raw_sphinx_role(docs_site: Path) -> None:
    pages = sorted(docs_site.rglob("*.html"))
    assert len(pages) > 10
    shown = [f"{page.relative_to(docs_site)}: {m.group(0)}" for page in pages
             for m in SPHINX_ROLE.finditer(page.read_text())]
    assert shown == []


def test_the_api_reference_links_its_cross_references(docs_site: Path) -> None:
    api = (docs_site / "api" / "index.html").read_text()
    # load's docstring names save, the writers' one: a link to save's entry
    load = api[api.index('id="onert_checkpoint.load"'):api.index('id="onert_checkpoint.save"')]
    assert re.search(r'<a [^>]*href="#onert_checkpoint\.save"', load), load[:2000]


def test_the_api_reference_shows_typed_signatures(docs_site: Path) -> None:
    api = (docs_site / "api" / "index.html").read_text()
    start = api.index('id="onert_checkpoint.save"')
    signature = re.sub(r"<[^>]+>", "", api[start:api.index("</pre>", start)])
    assert "ckpt: Checkpoint" in re.sub(r"\s+", " ", signature).replace("&quot;", '"'), signature


def test_the_api_reference_puts_what_users_call_first_and_the_errors_last(
    docs_site: Path,
) -> None:
    api = (docs_site / "api" / "index.html").read_text()
    order = re.findall(r'<h3 id="onert_checkpoint\.(\w+)"', api)
    assert sorted(order) == sorted(n for n in oc.__all__ if not n.startswith("_")
                                   and n != "SUPPORTED_VERSIONS")
    assert order[:3] == FIRST[:3]
    assert [order.index(n) for n in FIRST] == sorted(order.index(n) for n in FIRST)
    assert order[-len(ERRORS):] == ERRORS
