"""MkDocs hook: the specification (spec/SPEC.md) and its layout diagrams
(generated/graphviz/*.svg) are pages of the site without being copied into docs/, so the site
always shows the normative text of the repository.

Links of SPEC.md that point at other repository files (the .ksy schemas, the C headers, the
vectors) have no page on the site: they become the file's repository path in code, so a reader
knows where to look and the strict build has no dangling link.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "SPEC.md"
DIAGRAMS = ROOT / "generated" / "graphviz"
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _rewrite(match: re.Match[str]) -> str:
    text, target = match.group(1), match.group(2)
    if target.startswith(("http://", "https://", "#", "mailto:")):
        return match.group(0)
    path = posixpath.normpath(posixpath.join("spec", target.split("#")[0]))
    if path.startswith("generated/graphviz/") and path.endswith(".svg"):
        return f"[{text}](diagrams/{posixpath.basename(path)})"
    return text if text.strip("`") == path else f"{text} (`{path}`)"


def spec_markdown() -> str:
    return LINK.sub(_rewrite, SPEC.read_text())


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, "spec.md", content=spec_markdown()))
    for svg in sorted(DIAGRAMS.glob("*.svg")):
        files.append(File.generated(config, f"diagrams/{svg.name}", abs_src_path=str(svg)))
    return files
