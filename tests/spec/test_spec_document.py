"""spec/SPEC.md agrees with the single sources it quotes: the error table, the real file of its
worked example, the vectors and the files it links to."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

try:

    import tomllib

except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package

    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT / "spec"
SPEC_MD = SPEC_DIR / "SPEC.md"
TEXT = SPEC_MD.read_text()
TOOLKIT = (SPEC_DIR / "TOOLKIT.md").read_text()
WORKED_EXAMPLE = ROOT / "tests" / "data" / "real-onert" / "fc2-sgd-step8.ckpt"


def error_codes() -> list[dict]:
    with open(SPEC_DIR / "error-codes.toml", "rb") as f:
        return tomllib.load(f)["error"]


def section(title_start: str) -> str:
    """The text of the ``## `` section whose title starts with ``title_start``."""
    match = re.search(rf"^## {re.escape(title_start)}.*?(?=^## |\Z)", TEXT, re.S | re.M)
    assert match, f"SPEC.md has no section {title_start!r}"
    return match.group(0)


def make_vectors():
    spec = importlib.util.spec_from_file_location("make_vectors", SPEC_DIR / "make_vectors.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_vectors", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def table_rows() -> dict[str, list[str]]:
    rows = {}
    for line in section("Appendix D. The error codes").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].startswith("`"):
            rows[cells[1].strip("`")] = cells
    return rows


def test_error_table_lists_every_code_of_error_codes_toml():
    assert sorted(table_rows()) == sorted(e["code"] for e in error_codes())


def test_error_table_rows_match_error_codes_toml():
    rows = table_rows()
    for e in error_codes():
        number, _, category, applies, summary = rows[e["code"]]
        assert (int(number), category, applies, summary) == (
            e["number"],
            e["category"],
            ", ".join(e["applies"]),
            e["summary"],
        ), e["code"]


def test_every_code_named_by_a_rule_is_in_error_codes_toml():
    """The other direction: no rule of the document reports an undeclared code."""
    named = set(re.findall(r"`([a-z0-9_]+)`\s*\(field", TEXT))
    named |= set(re.findall(r":\s*`([a-z][a-z0-9]*_[a-z0-9_]+)`", TEXT))
    known = {e["code"] for e in error_codes()}
    assert named, "no rule found"
    assert sorted(named - known) == []


def test_every_code_appears_in_the_text_outside_the_table():
    """Each code is explained by a rule, not only listed."""
    body = TEXT.replace(section("Appendix D. The error codes"), "")
    for e in error_codes():
        assert f"`{e['code']}`" in body, e["code"]


def test_normative_language_and_required_sections():
    assert "RFC 2119" in TEXT and "MUST" in TEXT
    for title in (
        "1. Overview",
        "2. Versioning policy",
        "3. Reading a file: revision detection",
        "4. Schema 1 checkpoint",
        "5. Weight-only format (WOF)",
        "6. The container of schemas 2 and 3",
        "7. Schema 3, the recommended revision",
        "8. Schema 2",
        "9. Upgrading and downgrading",
        "10. Conformance profiles",
        "11. The micro profile (device readers)",
        "12. Error codes",
        "Appendix A. History",
        "Appendix B. Known quirks of real producers",
        "Appendix C. Worked example",
        "Appendix D. The error codes",
    ):
        section(title)


def test_worked_example_is_the_real_file_dumped():
    dump = make_vectors().hexdump(WORKED_EXAMPLE.read_bytes())
    assert len(WORKED_EXAMPLE.read_bytes()) == 312
    assert f"```text\n{dump}```" in TEXT, (
        "regenerate: python spec/make_vectors.py --hexdump tests/data/real-onert/fc2-sgd-step8.ckpt"
    )


def test_vectors_named_in_the_text_exist():
    names = set(re.findall(r"vector `([a-z0-9-]+)`", TEXT))
    names |= set(re.findall(r"vectors? `([a-z0-9-]+)`", TEXT))
    assert names
    for name in names:
        assert (SPEC_DIR / "vectors" / f"{name}.ckpt").exists(), name


LINK = re.compile(r"\]\(([^)#]+)(?:#[^)]*)?\)")
ANCHOR = re.compile(r"\]\(#([^)]+)\)")


def relative_link_targets(text: str) -> list[str]:
    """The file links of ``text`` that point into this repository (web links excluded)."""
    return sorted(t for t in set(LINK.findall(text)) if not t.startswith(("http://", "https://")))


def broken_links(text: str, base: Path) -> list[str]:
    return [t for t in relative_link_targets(text) if not (base / t).resolve().exists()]


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of the Markdown headings: lower case, punctuation dropped, spaces to -."""
    return {
        re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        for title in re.findall(r"^#{1,6} (.+)$", text, re.M)
    }


def test_relative_links_resolve():
    """Every file SPEC.md and TOOLKIT.md link to exists (schema 2's files included)."""
    assert relative_link_targets(TEXT), "no relative link found"
    assert broken_links(TEXT, SPEC_DIR) == []
    assert broken_links(TOOLKIT, SPEC_DIR) == []


def test_broken_links_are_found():
    """The check above can fail: a link to a missing schema-2 file is reported."""
    text = "see [x](vectors/v2-missing.json) and [y](onert_checkpoint_v2.ksy)"
    assert broken_links(text, SPEC_DIR) == ["vectors/v2-missing.json"]


def test_in_document_anchors_resolve():
    anchors = ANCHOR.findall(TEXT)
    assert anchors
    assert sorted(set(anchors) - heading_anchors(TEXT)) == []
    assert sorted(set(ANCHOR.findall(TOOLKIT)) - heading_anchors(TOOLKIT)) == []


def test_diagrams_are_embedded():
    for svg in ("onert_checkpoint_v1.svg", "onert_wof.svg", "onert_checkpoint_v2.svg"):
        assert f"](../generated/graphviz/{svg})" in TEXT
        assert (ROOT / "generated" / "graphviz" / svg).exists()
