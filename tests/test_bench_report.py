"""The performance figures in the docs are the committed benchmark results, not hand edits
(the README's and the docs' tables match the last committed results file)."""

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


def test_the_page_states_the_machine_and_its_load() -> None:
    """The header names the CPU model, the cores and the load average of the run; results that
    did not record the load say so rather than show a figure."""
    results = report.load_results()
    recorded = {**results, "machine": {**results["machine"], "load": {
        "before": 4.5, "during_min": 3.25, "during_max": 7.5, "during_mean": 5.0,
        "after": 4.0, "samples": 12}}}
    block = report.render(recorded)
    assert f"Machine: {results['machine']['cpu']}, {results['machine']['cores']} cores" in block
    assert "load average (1 min) 4.50 before, 3.25-7.50 during (mean 5.00), 4.00 after" in block
    old = {**results, "machine": {k: v for k, v in results["machine"].items() if k != "load"}}
    assert "load average not recorded" in report.render(old)


def test_rows_say_whether_their_figure_depends_on_the_machine() -> None:
    """A time, a speed or a ratio of times holds on the measuring machine only; a file size on
    any machine. Rows of results written before rows recorded it are classified by unit."""
    results = report.load_results()
    lines = {row["measure"]: line for row in results["rows"]
             for line in report.render(results).splitlines()
             if line.startswith(f"| {row['measure']} |")}
    assert len(lines) == len(results["rows"])
    for row in results["rows"]:
        where = "any machine" if row["unit"] == "B" else "this machine"
        assert lines[row["measure"]].endswith(f"| {where} |"), lines[row["measure"]]
    assert any(row["unit"] == "B" for row in results["rows"])
    assert any(row["unit"] != "B" for row in results["rows"])
