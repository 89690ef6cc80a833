"""The markers of the suite (``slow``, ``interop``, ``fuzz``, ``c``): pyproject.toml registers
exactly the ones tests/conftest.py gives, every entry of conftest's tables names a module or a
test that exists (a renamed test would otherwise drop out of its marker silently), and the inner
loop of README.md, ``-m "not slow"``, leaves out what the tables call slow."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from tests import conftest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def registered() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "--strict-markers" in config["ini_options"]["addopts"].split()
    return {line.split(":", 1)[0].strip() for line in config["ini_options"]["markers"]}


def given() -> set[str]:
    marks = {m for ms in conftest.MODULE_MARKERS.values() for m in ms}
    marks |= {m for ms in conftest.FIXTURE_MARKERS.values() for m in ms}
    return marks | {"slow"}


def test_pyproject_registers_the_markers_conftest_gives() -> None:
    assert registered() == given() == {"slow", "interop", "fuzz", "c"}


def missing_entries() -> list[str]:
    """Entries of conftest's tables that name no module, folder or test of tests/."""
    missing = []
    for entry in [*conftest.MODULE_MARKERS, *conftest.SLOW_MODULES]:
        if not (TESTS / entry).exists():
            missing.append(entry)
    for node in conftest.SLOW_TESTS:
        path, _, name = node.partition("::")
        name = name.split("[", 1)[0]
        source = TESTS / path
        if not source.is_file() or not re.search(rf"^def {re.escape(name)}\(",
                                                  source.read_text(), re.MULTILINE):
            missing.append(node)
    return missing


def test_every_table_entry_names_a_module_or_test_that_exists() -> None:
    assert missing_entries() == []


def test_a_renamed_test_in_the_tables_is_found(monkeypatch) -> None:
    monkeypatch.setattr(conftest, "SLOW_TESTS", ("project/test_markers.py::test_no_such_test",))
    monkeypatch.setattr(conftest, "SLOW_MODULES", frozenset({"test_no_such_module.py"}))
    assert missing_entries() == [
        "test_no_such_module.py", "project/test_markers.py::test_no_such_test"]


def test_markers_follow_module_fixture_and_test_tables(monkeypatch) -> None:
    monkeypatch.setattr(conftest, "SLOW_TESTS", ("test_a.py::test_slow",))
    assert conftest.markers_of("interop/test_x.py::test_y", []) == {"interop"}
    assert conftest.markers_of("fuzz/test_fuzzers.py::test_atheris_load", []) >= {"fuzz"}
    assert conftest.markers_of("spec/test_vectors.py::test_c_reader[x]", ["ockpt_info"]) == {
        "c", "slow"}
    assert "slow" in conftest.markers_of("interop/test_x.py::test_y", ["micro", "micro_driver"])
    assert conftest.markers_of("test_a.py::test_slow[1-2]", []) == {"slow"}
    assert conftest.markers_of("test_a.py::test_quick", []) == set()
    assert conftest.markers_of("test_a.py::test_slowest", []) == set()


def test_the_inner_loop_builds_and_runs_the_c_smoke_test() -> None:
    """tests/ckit/test_c_smoke.py is the inner loop's C reader: its tests are marked ``c``
    (their folder) and not ``slow``, whatever fixtures they use."""
    import inspect

    from tests.ckit import test_c_smoke

    tests = {name: list(inspect.signature(fn).parameters)
             for name, fn in vars(test_c_smoke).items()
             if name.startswith("test_") and callable(fn)}
    assert any("plain_ockpt_info" in fixtures for fixtures in tests.values())
    for name, fixtures in tests.items():
        assert conftest.markers_of(f"ckit/test_c_smoke.py::{name}", fixtures) == {"c"}, name
