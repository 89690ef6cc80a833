"""The shape of spec/SPEC.md: its normative text stays within its size bound, schema 3's section
reads without schema 2's, and every citation of a section ("SPEC 7.4", "TOOLKIT.md 1.3") in the
repository names a section that exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC_MD = ROOT / "spec" / "SPEC.md"
TOOLKIT_MD = ROOT / "spec" / "TOOLKIT.md"

#: The normative text is SPEC.md's bytes before its first (informative) appendix.
NORMATIVE_LIMIT = 110_000
FIRST_APPENDIX = "\n## Appendix A."


def normative_bytes(text: str) -> int:
    data = text.encode("utf-8")
    return data.index(FIRST_APPENDIX.encode())


def test_normative_text_at_most_110_kb():
    text = SPEC_MD.read_text(encoding="utf-8")
    assert normative_bytes(text) <= NORMATIVE_LIMIT, normative_bytes(text)


def test_normative_size_counts_everything_before_the_first_appendix():
    """The measure can fail: a document whose text before appendix A is longer is over it."""
    text = "# t\n" + "x" * NORMATIVE_LIMIT + "\n## Appendix A. History\n" + "y" * 10
    assert normative_bytes(text) > NORMATIVE_LIMIT
    assert normative_bytes("# t\n\n## Appendix A. History\n" + "y" * 10**6) == 4


def top_section(text: str, number: str) -> str:
    match = re.search(rf"^## {re.escape(number)}\. .*?(?=^## |\Z)", text, re.S | re.M)
    assert match, number
    return match.group(0)


def schema_2_references(text: str) -> list[str]:
    """What in ``text`` needs schema 2's section: its subsections and its own rules."""
    refs = re.findall(r"(?<![\w.])8\.\d\b", text)
    refs += re.findall(r"\b(?:R\d{1,2}|D[0-4]|O10)\b", text)
    return refs


def test_schema_3_section_needs_no_schema_2_section():
    section = top_section(SPEC_MD.read_text(encoding="utf-8"), "7")
    assert "### 7.1 " in section and "### 7.5 " in section
    assert schema_2_references(section) == []


def test_schema_2_references_are_found():
    assert schema_2_references("as in R11 (8.1); D3 and O10") == ["8.1", "R11", "D3", "O10"]


# ---- citations ----------------------------------------------------------------------------------

NUM = r"(?:\d{1,2}(?:\.\d{1,2}){0,2}|[A-Z](?:\.\d{1,2})?)(?!\w)"
CITATION = re.compile(
    rf"(?P<doc>SPEC|TOOLKIT)(?:\.md)?,? (?:sections? |appendix |appendices )?"
    rf"(?P<list>{NUM}(?:(?:, and |, | and | to ){NUM})*)(?![\w.]\w)"
)


def headings(text: str) -> set[str]:
    numbers = set(re.findall(r"^#{2,4} (\d+(?:\.\d+)*)\. ", text, re.M))
    numbers |= set(re.findall(r"^#{2,4} (\d+(?:\.\d+)+) ", text, re.M))
    numbers |= set(re.findall(r"^## Appendix ([A-Z])\. ", text, re.M))
    numbers |= set(re.findall(r"^### ([A-Z]\.\d+) ", text, re.M))
    return numbers


def bad_citations(text: str, spec: set[str], toolkit: set[str]) -> list[str]:
    """Citations of missing sections, also those a Python string broken across lines (as a help
    string is) splits in two: ``"... (SPEC.md "`` + newline + ``"15)"``."""
    bad = []
    for m in CITATION.finditer(re.sub(r"\"\s*\n\s*[rf]?\"", "", text)):
        known = spec if m.group("doc") == "SPEC" else toolkit
        for number in re.split(r", and |, | and | to ", m.group("list")):
            if number not in known:
                bad.append(f"{m.group(0)!r}: no section {number}")
    return bad


def cited_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "src", "tests", "spec", "docs", "README.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    suffixes = {".py", ".md", ".c", ".h", ".ksy", ".toml", ".cpp", ".js"}
    skip = ("spec/vectors/", "spec/SPEC.md", "spec/TOOLKIT.md", "tests/spec/test_spec_structure.py")
    return [ROOT / f for f in listed if Path(f).suffix in suffixes and not f.startswith(skip)]


def test_every_section_citation_names_a_section():
    spec = headings(SPEC_MD.read_text(encoding="utf-8"))
    toolkit = headings(TOOLKIT_MD.read_text(encoding="utf-8"))
    bad = []
    for path in cited_files():
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        bad += [f"{path.relative_to(ROOT)}: {p}" for p in bad_citations(text, spec, toolkit)]
    assert bad == [], "citations of sections that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "text",
    [
        "SPEC 6.7.4",
        "see SPEC.md 15",
        "spec/SPEC.md sections 7.2 and 12.2",
        "TOOLKIT 9",
        "SPEC appendix E",
        'help="an optional kind (SPEC.md "\n                   "15): 0x100008"',
    ],
)
def test_citation_of_a_missing_section_is_found(text):
    spec = {"6.7", "7.2", "7", "B", "B.2"}
    assert bad_citations(text, spec, {"1", "1.3"}) != []


def test_citation_of_an_existing_section_passes():
    spec = headings(SPEC_MD.read_text(encoding="utf-8"))
    toolkit = headings(TOOLKIT_MD.read_text(encoding="utf-8"))
    text = "SPEC 7.4, SPEC.md sections 6.5 and 7.5, SPEC B.9, SPEC appendix C, TOOLKIT.md 1.3"
    assert bad_citations(text, spec, toolkit) == []
