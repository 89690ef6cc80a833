"""The performance figures in the docs are the committed benchmark results, not hand edits
(issue 12: "a test checks that the README's tables match the last committed results file")."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import report  # noqa: E402

PAGES = [ROOT / "docs" / "performance.md", ROOT / "README.md"]


def test_results_name_machine_date_and_commit() -> None:
    results = report.load_results()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", results["date"])
    assert re.fullmatch(r"[0-9a-f]{7,40}\+?", results["commit"])
    for key in ("cpu", "cores", "memory_gib", "python", "numpy", "safetensors"):
        assert results["machine"][key], key
    assert results["rows"], "no measurements"
    for row in results["rows"]:
        if row["ratio"] is not None and row["baseline"]:
            assert row["ratio"] == pytest.approx(row["ours"] / row["baseline"], rel=1e-9)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_generated_block_equals_results(page: Path) -> None:
    text = page.read_text()
    if report.BEGIN not in text:
        assert page.name == "README.md", f"{page} lost its generated benchmark block"
        return
    start, end = text.index(report.BEGIN), text.index(report.END) + len(report.END)
    assert text[start:end] == report.render(report.load_results()), (
        f"{page.name}: the benchmark block differs from tests/bench/results.json; "
        "run python tests/bench/bench.py --write-docs")
