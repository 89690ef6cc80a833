"""MkDocs hook: the specification (spec/SPEC.md), its toolkit companion (spec/TOOLKIT.md) and
its layout diagrams (generated/graphviz/*.svg) are pages of the site without being copied into
docs/, so the site always shows the normative text of the repository.

Pages (SPEC.md and the docs/ pages alike) link to repository files that have no page on the
site (the .ksy schemas, the C headers, tests): in the site those links become the file's
repository path in code, so a reader knows where to look and the strict build has no dangling
link; links to spec/SPEC.md and spec/TOOLKIT.md go to their pages.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "SPEC.md"
TOOLKIT = ROOT / "spec" / "TOOLKIT.md"
DIAGRAMS = ROOT / "generated" / "graphviz"
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _repo_path(page_dir: str, target: str) -> str:
    return posixpath.normpath(posixpath.join(page_dir, target.split("#")[0]))


def rewrite_links(markdown: str, page_dir: str) -> str:
    """``page_dir`` is the page's folder in the repository ("spec", "docs")."""

    def one(match: re.Match[str]) -> str:
        bang, text, target = match.group(1), match.group(2), match.group(3)
        if target.startswith(("http://", "https://", "#", "mailto:")):
            return match.group(0)
        path = _repo_path(page_dir, target)
        anchor = "#" + target.split("#", 1)[1] if "#" in target else ""
        if path == "spec/SPEC.md":
            return f"[{text}](spec.md{anchor})"
        if path == "spec/TOOLKIT.md":
            return f"[{text}](toolkit.md{anchor})"
        if path.startswith("docs/"):
            return match.group(0)
        if path.startswith("generated/graphviz/") and path.endswith(".svg"):
            return f"{bang}[{text}](diagrams/{posixpath.basename(path)})"
        return text if text.strip("`") == path else f"{text} (`{path}`)"

    return LINK.sub(one, markdown)


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, "spec.md", content=SPEC.read_text()))
    files.append(File.generated(config, "toolkit.md", content=TOOLKIT.read_text()))
    for svg in sorted(DIAGRAMS.glob("*.svg")):
        files.append(File.generated(config, f"diagrams/{svg.name}", abs_src_path=str(svg)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    src = page.file.src_uri
    in_spec = src in ("spec.md", "toolkit.md")
    page_dir = "spec" if in_spec else posixpath.dirname(posixpath.join("docs", src))
    return rewrite_links(markdown, page_dir)
