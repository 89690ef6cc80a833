"""Fixtures shared by the test modules, and the hypothesis seed of the run."""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import core as hypothesis_core
from hypothesis import settings as hypothesis_settings

from tests.shared_build import built_once

C_DIR = Path(__file__).resolve().parents[1] / "spec" / "c"

#: Environment variable that fixes the hypothesis seed of a run (an integer).
SEED_ENV = "OCKPT_HYPOTHESIS_SEED"
PROFILE = "ockpt"

#: ``--doctest-modules`` imports every module under tests/: the atheris targets import atheris at
#: the top, so where it is not installed (it has wheels for CPython 3.11 on x86-64 Linux only)
#: they are left out of collection instead of failing it; tests/fuzz/test_fuzzers.py skips and
#: says why.
collect_ignore: list[str] = []
if importlib.util.find_spec("atheris") is None:
    collect_ignore += ["fuzz/fuzz_load.py", "fuzz/fuzz_tools.py", "fuzz/instrumented.py"]


def _hypothesis_seed(config: pytest.Config) -> int:
    """``--hypothesis-seed``, else $OCKPT_HYPOTHESIS_SEED, else a fresh random seed."""
    given = config.getoption("--hypothesis-seed", default=None) or os.environ.get(SEED_ENV)
    if given in (None, ""):
        return secrets.randbits(32)
    try:
        return int(given)
    except ValueError:
        raise pytest.UsageError(f"the hypothesis seed must be an integer, not {given!r}") from None


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Every run draws new examples, from a seed the run prints and a re-run can fix.

    Under CI=true hypothesis loads its ``ci`` profile, which derandomizes: every CI run would
    draw the same examples, and a bug outside them would never be found (a schema-2
    section-length off-by-one once passed every property that way). This keeps the loaded profile
    (the ``ci`` one in CI: no database, no deadline) but turns derandomization off and seeds
    every hypothesis test with one seed per run, printed in the header and in the summary.
    Reproduce a failure with ``OCKPT_HYPOTHESIS_SEED=<seed> python -m pytest ...`` (or
    ``--hypothesis-seed=<seed>``). Runs after hypothesis' own plugin, so its options still load
    profiles first.
    """
    current = hypothesis_settings.get_profile(hypothesis_settings.get_current_profile_name())
    # No deadline, CI or not: a property's examples take longer on a loaded machine, and a
    # deadline would fail the test for the machine's load, not for the code (speed targets are
    # tests/bench's; the linear-time tests compare CPU-time ratios instead).
    hypothesis_settings.register_profile(PROFILE, current, derandomize=False, deadline=None)
    hypothesis_settings.load_profile(PROFILE)
    # Under pytest-xdist each worker process runs this hook too: it takes the seed the
    # controller drew (pytest_configure_node), so one seed, the printed one, covers the run.
    seed = getattr(config, "workerinput", {}).get(_WORKER_SEED)
    if seed is None:
        seed = _hypothesis_seed(config)
    hypothesis_core.global_force_seed = seed
    config.stash[_SEED_KEY] = seed


_SEED_KEY = pytest.StashKey[int]()
_WORKER_SEED = "ockpt_hypothesis_seed"


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist: hand the controller's seed to each worker it starts."""
    node.workerinput[_WORKER_SEED] = node.config.stash[_SEED_KEY]


def _seed_line(config: pytest.Config) -> str:
    seed = config.stash.get(_SEED_KEY, None)
    return f"hypothesis seed: {seed} (reproduce with {SEED_ENV}={seed})"


def pytest_report_header(config: pytest.Config) -> str:
    return _seed_line(config)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    terminalreporter.write_line(_seed_line(config))


# Markers --------------------------------------------------------------------------------------
# pyproject.toml registers them (with --strict-markers); README.md's "Running the tests" gives
# the inner loop, ``python -m pytest -m "not slow"``. A module's markers apply to all its tests;
# SLOW_TESTS marks single tests where one test dominates its module's time.

#: Test modules (paths under tests/, a folder ending in "/") and the markers of all their tests.
MODULE_MARKERS: dict[str, tuple[str, ...]] = {
    # against the real runtimes: onert-micro built from ../shared, the onert wheel
    "interop/": ("interop",),
    # fuzzing harnesses and the properties and corpora they share
    "fuzz/": ("fuzz",),
    # the C kit of spec/c, compiled by the test
    "ckit/": ("c",),
}

#: Modules whose tests are ``slow``: measured per file (CPU time of a run of the file alone, on
#: 2 cores), each of these costs 6 s or more, most of it spread over many tests (a whole-module
#: mark), or is time-boxed (the fuzzers: 20 s + 10 s + 10 s of wall time).
SLOW_MODULES: frozenset[str] = frozenset({
    "fuzz/test_fuzzers.py",
    "interop/test_onert_order.py",
    "interop/test_operators.py",
    "interop/test_resume.py",
    "interop/test_unused_tensors.py",
    "circle/test_batch_rescale.py",
    "invariants/test_bounded_cost.py",
    "ckit/test_c_stream.py",
    "ckit/test_c_v3.py",
    "ckit/test_c_writer.py",
    "tools/test_cli.py",
    "tools/test_plot.py",
    "tools/test_progress.py",
    "tools/test_diff_stats.py",
    "invariants/test_attacks_on_stats_diff_plot_import.py",
    "tools/test_cli_guidance.py",
    "format/test_convert.py",
    "interchange/test_export_lossless.py",
    "fuzz/test_fuzz_entrypoints.py",
    "fuzz/test_fuzz_properties.py",
    "invariants/test_hostile_use.py",
    "format/test_linear_time.py",
    "format/test_roundtrip.py",
    "tools/test_tools_hardening.py",
    "format/test_v3_read.py",
    "format/test_v3_write.py",
})

#: Single tests (node ids under tests/, without parameters: every parametrization is meant)
#: that are slow in a module that is otherwise quick: each costs seconds (a build, a pip
#: install, a mkdocs site, mypy, a subprocess per command, hundreds of hypothesis examples).
SLOW_TESTS: tuple[str, ...] = (
    "interop/test_bake.py::test_bake_command_writes_atomically_and_reports_errors",
    "interop/test_dialect_convert.py::test_generated_round_trips",
    "interop/test_shared_weights.py::test_prediction_matches_the_probe_on_random_shared_models",
    "project/test_bench_report.py::test_schema3_goals_rows_run_on_tiny_inputs",
    "circle/test_circle_linear.py::test_walk_is_linear",
    "tools/test_conformance_runner.py::test_the_python_reader_agrees_through_the_command",
    "invariants/test_hostile_readers.py::test_the_runner_s_memory_does_not_grow_with_the_number_of_cases",
    "format/test_data_blocks.py::test_c_copy_verifies_each_block_before_copying_it",
    "ckit/test_c_micro.py::test_the_judgment_catches_the_mutant",
    "ckit/test_c_micro.py::test_every_vector_and_corpus_case_keeps_the_promise",
    "ckit/test_c_micro.py::test_the_micro_reader_passes_conformance_profile_micro",
    "ckit/test_c_micro.py::test_the_differential_fuzzer_finds_no_disagreement_with_the_full_reader",
    "interop/micro/test_patched_loader.py::test_the_patched_runtime_trains_from_schema_3_as_from_schema_1",
    "format/test_data_blocks.py::test_c_reader_before_the_section_reads_the_new_files",
    "spec/test_differential_tables.py::test_mutated_files_read_the_same",
    "spec/test_differential_tables.py::test_written_files_read_the_same",
    "tools/test_edit.py::test_edit_command",
    "tools/test_edit.py::test_edit_replace_npy_header_is_checked_before_allocating",
    "interchange/test_export_streamed.py::test_streamed_npz_of_more_than_65535_members_reads_back",
    "fuzz/test_fuzz_model_paths.py::test_hostile_schema2_files",
    "spec/test_generated.py::test_regenerating_changes_nothing",
    "fuzz/test_hypothesis_seed.py::test_ci_runs_vary_and_a_printed_seed_reproduces",
    "fuzz/test_hypothesis_seed.py::test_xdist_workers_draw_from_the_printed_seed",
    "format/test_range_index.py::test_c_reader_before_the_section_reads_the_new_files",
    "format/test_range_index.py::test_100k_tiny_adam_tensors_with_both_sections_within_1_25_times_schema_1",
    "project/test_readme_claims.py::test_every_command_has_help_with_examples",
    "project/test_readme_claims.py::test_pip_install_dot_gives_the_quick_start",
    "project/test_readme_promises.py::test_the_c_reader_allocates_nothing",
    "project/test_repo_hygiene.py::test_no_tracked_file_names_a_machine_path",
    "project/test_shared_build.py::test_two_workers_build_once_and_share_the_result",
    "format/test_save_faults.py::test_sigkill_during_saves_leaves_old_or_new",
    "format/test_save_targets.py::test_modes_under_umask_077_with_another_thread_creating_files",
    "spec/test_schema_source.py::test_a_changed_field_width_makes_the_check_fail_and_the_library_follows",
    "spec/test_schema_source.py::test_a_changed_schema3_width_makes_the_check_fail_and_the_library_follows",
    "project/test_typecheck.py::test_mypy_reports_no_error",
    "format/test_v2.py::test_every_bit_flip_is_detected",
    "format/test_v2.py::test_kaitai_construct_and_load_agree",
    "format/test_v2.py::test_round_trip",
    "format/test_v2_bounds.py::test_h1_header_size",
    "format/test_v2_bounds.py::test_h4_len_file",
    "spec/test_vector_expectations.py::test_c_reader_writes_shortest_floats",
    "spec/test_vectors.py::test_make_vectors_reproduces_the_committed_vectors",
)

#: Fixtures (direct or through another fixture) whose tests are marked too: the reference C
#: reader is built with the sanitizers (seconds) and each test runs it in a child process,
#: hundreds of them; the onert-micro peer is compiled from the runtime's C++ sources (tens of
#: seconds of g++) and every test runs it.
FIXTURE_MARKERS: dict[str, tuple[str, ...]] = {
    "ockpt_info": ("c", "slow"),
    "micro_driver": ("interop", "slow"),
    # the documentation site, built by mkdocs (seconds; tests/project/conftest.py)
    "docs_site": ("slow",),
}

TESTS_DIR = Path(__file__).resolve().parent


def markers_of(relative: str, fixtures: tuple[str, ...] | list[str]) -> set[str]:
    """The markers of the test with node id ``relative`` (its path under tests/, "::" and its
    name)."""
    path = relative.split("::", 1)[0]
    found = {m for prefix, marks in MODULE_MARKERS.items()
             if (path.startswith(prefix) if prefix.endswith("/") else path == prefix)
             for m in marks}
    found |= {m for f in fixtures for m in FIXTURE_MARKERS.get(f, ())}
    if path in SLOW_MODULES or relative.split("[", 1)[0] in SLOW_TESTS:
        found.add("slow")
    return found


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            relative = item.path.relative_to(TESTS_DIR).as_posix()
        except ValueError:
            continue  # the doctests of src/
        nodeid = relative + item.nodeid[len(item.nodeid.split("::", 1)[0]):]
        for name in sorted(markers_of(nodeid, getattr(item, "fixturenames", ()))):
            item.add_marker(name)


@pytest.fixture(scope="session")
def ockpt_info(pytestconfig: pytest.Config, tmp_path_factory) -> Path:
    """The reference C reader's ``ockpt-info``, built from spec/c/ into a temporary folder with
    ``-fsanitize=address,undefined`` (the Makefile's default); ``OCKPT_INFO`` names another
    implementation that prints the same JSON instead."""
    other = os.environ.get("OCKPT_INFO")
    if other:
        return Path(other)
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc and make are needed to build the C reader (.ci/run installs them)")
    return built_once(pytestconfig, tmp_path_factory, "ockpt", _build_ockpt_info)


def _build_ockpt_info(build: Path) -> Path:
    for src in C_DIR.iterdir():
        if src.suffix in (".c", ".h") or src.name == "Makefile":
            shutil.copy(src, build / src.name)
    done = subprocess.run(
        ["make", "-s", "-C", str(build), "CC=gcc", "ockpt-info"], capture_output=True, text=True
    )
    exe = build / "ockpt-info"
    if done.returncode != 0 or not exe.exists():
        pytest.fail(f"the C reader does not build:\n{done.stdout}\n{done.stderr}")
    return exe


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and each command it runs) keeps its cache (the onert probe's answers,
    circle/onert_order.py) in a fresh folder of its own: no test reads another's answers or
    writes the user's ``~/.cache``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
