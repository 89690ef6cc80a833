"""The performance figures in the docs are the committed benchmark results, not hand edits
(the README's and the docs' tables match the last committed results file)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import bench  # noqa: E402
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


# --- schema 3's goals table (tests/bench/bench_schema3_goals.py) -------------------------------
import bench_schema3_goals as goals  # noqa: E402


def test_schema3_goals_page_equals_results() -> None:
    """docs/schema-3.md's goals table is the committed results file, rendered."""
    results = json.loads(goals.RESULTS.read_text())
    text = goals.PAGE.read_text()
    assert goals.BEGIN in text and goals.END in text, "docs/schema-3.md lost its goals table"
    start, end = text.index(goals.BEGIN), text.index(goals.END) + len(goals.END)
    assert text[start:end] == goals.render(results), (
        "docs/schema-3.md's goals table differs from tests/bench/schema3_goals.json; run "
        "python tests/bench/bench_schema3_goals.py --write-docs")


def test_schema3_goals_results_name_machine_load_commit_and_every_row() -> None:
    results = json.loads(goals.RESULTS.read_text())
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", results["date"])
    assert re.fullmatch(r"[0-9a-f]{7,40}\+?", results["commit"])
    machine = results["machine"]
    for key in ("cpu", "cores", "python", "numpy", "safetensors"):
        assert machine[key], key
    assert {"before", "during_min", "during_max", "after"} <= set(machine["load"])
    measures = " / ".join(r["measure"] for r in results["rows"])
    for part in ("first byte", "read all", "hand-out", "tiny Adam", "no-scratch",
                 "streaming reader's state", "bytes read per byte", "forward pass"):
        assert part in measures, part
    for r in results["rows"]:
        if r["ratio"] is not None and r["baseline"]:
            assert r["ratio"] == pytest.approx(r["ours"] / r["baseline"], rel=1e-9)


def test_schema3_goals_rows_run_on_tiny_inputs(tmp_path: Path) -> None:
    """The quick mode's Python rows, on files of a few tensors, once each: every row has a
    figure (no time is asserted)."""
    from bench_handout import write_pair

    ours, st = write_pair(tmp_path, "tiny", 12, 35_000)
    rows = goals.first_byte_rows(ours, st, 12, 1)
    rows += goals.read_all_row(ours, st, 12, 1)
    rows += goals.handout_rows(tmp_path, 50, 1)
    rows += goals.size_row(200)
    rows += goals.writer_rows(tmp_path, 3, 1)
    assert len(rows) == 7
    for r in rows:
        assert r["ours"] is not None and r["ours"] > 0, r
        assert r["unit"] in ("s", "us", "B"), r
    page = goals.render({"date": "2026-12-01", "commit": "0000000", "quick": True,
                         "repeats": 1, "machine": {**bench.machine(), "load": None},
                         "rows": rows})
    assert page.count("\n| ") == len(rows) + 1  # the header, then one line a row
