"""The project-wide promises, run over every public path and every input family.

The paths and the families are listed once, in tests/public_surface.py. What is checked here:

* the list is complete: every public callable of ``onert_checkpoint`` and every command of
  ``onert-ckpt`` is in it (or named as touching no file), so a new path cannot arrive unguarded;
* only the project's errors: on every family a public function returns or raises
  :class:`~onert_checkpoint.CheckpointError`, never another library's exception or a bare
  ``ValueError`` (nor an ``OSError``: every input is readable, every output folder writable);
  every error line of the command line is ``onert-ckpt: error: <code>: <message>`` with a code
  of spec/error-codes.toml or of the command line's own table, and the exit status is the
  README's (1 a file is invalid, 2 usage or I/O);
* bounded memory: every public function's peak allocations stay within 64 MiB + 8x its input
  files (the commands on big inputs: test_memory_bounds and the bounded-cost tests);
* no use after release: a checkpoint released by its ``open`` block is refused (``released``);
* nothing unverified goes out, and the diagnostics agree: with one data byte flipped, every
  path that hands out, copies or re-checksums data and succeeds on the intact file refuses with
  the code ``validate`` gives (``section_checksum``, or schema 3's ``block_checksum``) and
  writes nothing; ``info`` and ``dump`` (values and ``--layout``, text and JSON) report it as
  ``validate`` does.

The command line runs in this process for the whole matrix (hundreds of runs), and once per
command as a real subprocess on a corrupt file.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import CheckpointError
from onert_checkpoint.format.errors import ERROR_CODES
from onert_checkpoint.tools import cli
from tests import public_surface as surface
from tests.public_surface import (
    CHECKPOINT,
    CLI_COMMANDS,
    NOT_IO_API,
    NOT_IO_COMMANDS,
    PUBLIC_API,
    Family,
)

#: The families, by name and kind (the same as build_families gives: checked below), known when
#: tests are collected.
FAMILY_KINDS = {
    "v1-onert": "checkpoint", "v1-onert-micro": "checkpoint", "wof": "checkpoint",
    "v2": "checkpoint", "v2-named": "checkpoint", "v3": "checkpoint", "v3-named": "checkpoint",
    "v3-many-zero": "checkpoint", "v3-range-index": "checkpoint",
    "v3-range-index-corrupt": "checkpoint", "v2-many-slots": "checkpoint",
    "v2-corrupt": "checkpoint", "v2-named-corrupt": "checkpoint",
    "v3-corrupt": "checkpoint", "v3-named-corrupt": "checkpoint",
    "v3-named-padding-corrupt": "checkpoint", "v1-released": "checkpoint",
    "safetensors": "container", "npz": "container", "safetensors-revision-v9": "container",
    "safetensors-dialect-xl": "container", "npz-revision-v9": "container",
    "npz-dialect-xl": "container", "safetensors-garbage": "container",
    "safetensors-huge-header": "container", "safetensors-bf16": "container",
    "safetensors-overlap": "container", "npz-garbage": "container",
    "npz-object-array": "container", "npz-bomb": "container",
    "model": "model", "model-truncated": "model", "model-garbage": "model",
    "model-reference-bomb": "model",
}
CORRUPT = [name for name in FAMILY_KINDS if name.endswith("-corrupt")]

MIB = 1 << 20
ERROR_LINE = re.compile(r"^onert-ckpt: error: ([a-z][a-z0-9_]*): \S")
INVALID_LINE = re.compile(r": invalid: ([a-z][a-z0-9_]*)\b")


@pytest.fixture(scope="session")
def families(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Family]:
    return surface.build_families(tmp_path_factory.mktemp("families"))


# The list is complete --------------------------------------------------------------------------


def _public_callables() -> list[str]:
    return [n for n in oc.__all__ if not n.startswith("_") and callable(getattr(oc, n))]


def test_every_public_function_is_in_the_matrix() -> None:
    missing = [n for n in _public_callables() if n not in PUBLIC_API and n not in NOT_IO_API]
    assert not missing, (
        f"public names {missing} are not in the matrix of tests/public_surface.py. Add each to "
        "PUBLIC_API as ApiPath(name, reads=CHECKPOINT|MODEL|CONTAINER, run=lambda family, out: "
        "<call it as a user would, writing into out>), or, if it touches no file, model or "
        "container, to NOT_IO_API with the reason"
    )
    stale = [n for n in [*PUBLIC_API, *NOT_IO_API] if n not in oc.__all__]
    assert not stale, f"{stale} are in tests/public_surface.py but not public any more"


def _commands() -> list[str]:
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return list(sub.choices)  # type: ignore[arg-type]


def test_every_command_is_in_the_matrix() -> None:
    missing = [c for c in _commands() if c not in CLI_COMMANDS and c not in NOT_IO_COMMANDS]
    assert not missing, (
        f"onert-ckpt commands {missing} are not in the matrix of tests/public_surface.py. Add "
        "each to CLI_COMMANDS as a list of CliVariant(label, reads=CHECKPOINT|MODEL|CONTAINER, "
        "argv=lambda family, out: [command, ...], output=<file it writes in out, if any>), or, "
        "if it touches no file, model or container, to NOT_IO_COMMANDS with the reason"
    )
    stale = [c for c in [*CLI_COMMANDS, *NOT_IO_COMMANDS] if c not in _commands()]
    assert not stale, f"{stale} are in tests/public_surface.py but not commands any more"


def test_every_command_line_code_is_in_the_table_and_documented() -> None:
    """The command line's own codes: each one raised in src/ is in cli.CLI_CODES, and each one
    of the table is in docs/cli.md's (a reader of an error line can look every code up)."""
    root = Path(__file__).resolve().parents[2]
    raised = {
        m.group(1)
        for f in (root / "src" / "onert_checkpoint").rglob("*.py")
        for m in re.finditer(r'CliError\(\s*"([a-z_]+)"', f.read_text())
    }
    assert raised, "no CliError found: the pattern no longer matches how codes are raised"
    assert raised <= set(cli.CLI_CODES), (
        f"codes {sorted(raised - set(cli.CLI_CODES))} are raised but not in CLI_CODES "
        "(src/onert_checkpoint/tools/cli.py): add each with when it is used, and to docs/cli.md"
    )
    # one name in both tables, for the same fault: a dtype the format (status 1) or an option
    # (status 2) names that does not exist
    assert set(cli.CLI_CODES) & set(ERROR_CODES) == {"bad_dtype"}
    doc = (root / "docs" / "cli.md").read_text()
    assert [c for c in cli.CLI_CODES if f"`{c}`" not in doc] == []


def test_families_are_what_they_say(families: dict[str, Family]) -> None:
    assert {n: f.kind for n, f in families.items()} == FAMILY_KINDS
    expected = {"v1-onert": ("v1", None), "v1-onert-micro": ("v1", "onert-micro"),
                "wof": ("wof", None), "v2": ("v2", None), "v3": ("v3", None)}
    for name, (revision, dialect) in expected.items():
        ckpt = oc.load(families[name].path)
        ckpt.verify()
        assert ckpt.revision == revision, name
        if dialect:
            assert ckpt.dialect == dialect, name
    assert oc.load(families["v3-named"].path)[0].dtype == "float32"
    for name in CORRUPT:  # load takes them (the data check is deferred); the check fails
        assert _verdict(families[name]).code in DATA_CHECKS, name
    # the hand-made many-entry file is exactly what the library's writer gives
    zeros = oc.Checkpoint(
        tensors=[oc.Tensor(index=i, data=np.zeros(0, np.uint8)) for i in range(5)], revision="v3"
    )
    assert oc.to_bytes(zeros) == surface.v3_zero_length(5)


# Only the project's errors, and nothing unverified goes out: the API ----------------------------


#: The codes of the data checks that load defers to the first data access (SPEC 6.3).
DATA_CHECKS = {"section_checksum", "block_checksum"}


def _verdict(family: Family) -> CheckpointError:
    """What validate says of a family with a corrupt data byte: load takes it, the data check
    refuses it."""
    try:
        oc.load(family.path).verify()
    except CheckpointError as err:
        return err
    raise AssertionError(f"{family.name}: the data check passes")


def _api_cases() -> list[tuple[str, str]]:
    return [(p, f) for p, path in PUBLIC_API.items() for f, kind in FAMILY_KINDS.items()
            if kind == path.reads]


_OUTCOMES: dict[tuple[str, str], Exception | None] = {}
#: (path, family) -> the peak of Python and NumPy allocations while the path ran (tracemalloc:
#: deterministic, NumPy reports its buffers to it; a mapped file is page cache, not counted)
_PEAKS: dict[tuple[str, str], int] = {}


def _run_api(name: str, family: Family, out: Path) -> Exception | None:
    """The path's outcome: None, or the project's error; anything else fails. Every input here
    is a readable regular file and every output folder writable, so an OSError too would be a
    content problem reported as the file system's."""
    path = PUBLIC_API[name]
    if path.needs is not None:
        pytest.importorskip(path.needs)
    tracemalloc.start()
    try:
        path.run(family, out)
    except CheckpointError as exc:
        # CheckpointError is a ValueError too; a plain ValueError is not the project's
        return exc
    except Exception as exc:
        raise AssertionError(
            f"{name} on {family.name}: {type(exc).__module__}.{type(exc).__name__} reached the "
            f"caller ({exc}); only CheckpointError may"
        ) from exc
    finally:
        _PEAKS[name, family.name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return None


def _outcome(name: str, family: Family, out: Path) -> Exception | None:
    key = (name, family.name)
    if key not in _OUTCOMES:
        _OUTCOMES[key] = _run_api(name, family, out)
    return _OUTCOMES[key]


@pytest.mark.parametrize(("path", "family"), _api_cases())
def test_api_raises_only_project_errors(
    path: str, family: str, families: dict[str, Family], tmp_path: Path
) -> None:
    _outcome(path, families[family], tmp_path)


@pytest.mark.parametrize(
    ("path", "family"), [(p, f) for p, f in _api_cases() if PUBLIC_API[p].bounded]
)
def test_api_memory_is_bounded_by_the_input(
    path: str, family: str, families: dict[str, Family], tmp_path: Path
) -> None:
    """Peak allocations within 64 MiB + 8x the input files (the family's, and the model given
    with it): a compression bomb or a reference bomb is refused, not inflated."""
    fam = families[family]
    _outcome(path, fam, tmp_path)
    size = fam.path.stat().st_size + fam.model_or_default().stat().st_size
    peak = _PEAKS[path, family]
    assert peak <= 64 * MIB + 8 * size, f"{path} on {family}: {peak} bytes for {size}"


@pytest.mark.parametrize("family", CORRUPT)
@pytest.mark.parametrize("path", [p for p, a in PUBLIC_API.items() if a.data_out])
def test_api_hands_out_no_corrupt_data(
    path: str, family: str, families: dict[str, Family], tmp_path: Path
) -> None:
    bad = families[family]
    assert bad.clean is not None
    (tmp_path / "clean").mkdir()
    clean = _outcome(path, families[bad.clean], tmp_path / "clean")
    if clean is not None:
        pytest.skip(f"{path} refuses the intact file too ({clean})")
    (tmp_path / "corrupt").mkdir()
    err = _outcome(path, bad, tmp_path / "corrupt")
    assert isinstance(err, CheckpointError), (
        f"{path} on {family}: went through; a flipped data byte must be refused"
    )
    assert err.code == _verdict(bad).code, f"{path} on {family}: {err}"
    assert not any((tmp_path / "corrupt").iterdir()), f"{path} on {family} wrote a file"


@pytest.mark.parametrize(
    "path", [p for p, a in PUBLIC_API.items() if a.reads == CHECKPOINT and a.takes_object]
)
def test_api_refuses_a_released_checkpoint(
    path: str, families: dict[str, Family], tmp_path: Path
) -> None:
    """No use after release: a checkpoint handed out by an ``open`` block, after the block, is
    refused by every path that takes it (code ``released``), and nothing is written. The path
    runs here, into this test's own folder (not the outcome another test cached), so that an
    empty folder means nothing was written."""
    err = _run_api(path, families["v1-released"], tmp_path)
    assert isinstance(err, CheckpointError) and err.code == "released", f"{path}: {err!r}"
    assert not any(tmp_path.iterdir()), f"{path} wrote a file"


# The command line ---------------------------------------------------------------------------


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = cli.main(argv)
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def check_error_lines(argv: list[str], status: int, stdout: str, stderr: str) -> list[str]:
    """The codes the command reported, after checking I5: each error line carries a code of
    the project's table or the command line's own, and the exit status is the README's."""
    where = " ".join(argv)
    assert "Traceback" not in stderr, f"{where}: {stderr}"
    assert status in (0, 1, 2), f"{where}: exit {status}"
    codes = []
    for line in stderr.splitlines():
        if line.startswith("onert-ckpt: error:"):
            m = ERROR_LINE.match(line)
            assert m, f"{where}: an error line without a code: {line}"
            codes.append(m.group(1))
    known = set(ERROR_CODES) | set(cli.CLI_CODES)
    for code in codes:
        assert code in known, (
            f"{where}: error code {code!r} is in neither spec/error-codes.toml nor cli.CLI_CODES"
        )
        assert code != "internal_error", f"{where}: an unexpected exception: {stderr}"
        # the README: 1 a file is invalid or does not fit its model, 2 usage or I/O
        expected = {1} if code in ERROR_CODES else set()
        expected |= {2} if code in cli.CLI_CODES else set()
        assert status in expected, f"{where}: exit {status}: {stderr}"
    codes += INVALID_LINE.findall(stdout)
    for obj in _json_objects(stdout):
        error = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(error, dict):
            codes.append(error["code"])
    if status and not codes and argv[0] != "diff":  # diff's 1 also says "they differ"
        raise AssertionError(f"{where}: exit {status} without a code: {stdout} {stderr}")
    return codes


def _json_objects(stdout: str) -> list[object]:
    text = stdout.strip()
    if not text.startswith("{"):
        return []
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _cli_cases() -> list[tuple[str, str, str]]:
    return [
        (command, v.label, f)
        for command, variants in CLI_COMMANDS.items()
        for v in variants
        for f, kind in FAMILY_KINDS.items()
        if kind == v.reads and not f.endswith("-released")  # a released object is the API's
    ]


def _variant(command: str, label: str) -> surface.CliVariant:
    return next(v for v in CLI_COMMANDS[command] if v.label == label)


_CLI_RESULTS: dict[tuple[str, str, str], tuple[int, list[str]]] = {}


def _cli_outcome(command: str, label: str, family: Family, out: Path) -> tuple[int, list[str]]:
    key = (command, label, family.name)
    if key not in _CLI_RESULTS:
        out.mkdir(parents=True, exist_ok=True)
        argv = list(_variant(command, label).argv(family, out))
        status, stdout, stderr = _run_cli(argv)
        _CLI_RESULTS[key] = (status, check_error_lines(argv, status, stdout, stderr))
    return _CLI_RESULTS[key]


@pytest.mark.parametrize(("command", "variant", "family"), _cli_cases())
def test_cli_errors_carry_codes(
    command: str, variant: str, family: str, families: dict[str, Family], tmp_path: Path
) -> None:
    _cli_outcome(command, variant, families[family], tmp_path)


@pytest.mark.parametrize("family", CORRUPT)
@pytest.mark.parametrize(
    ("command", "variant"),
    [(c, v.label) for c, vs in CLI_COMMANDS.items() for v in vs
     if v.reads == CHECKPOINT and v.data_out],
)
def test_cli_reports_corrupt_data_as_validate_does(
    command: str, variant: str, family: str, families: dict[str, Family], tmp_path: Path
) -> None:
    bad = families[family]
    assert bad.clean is not None
    status, _ = _cli_outcome(command, variant, families[bad.clean], tmp_path / "clean")
    if status != 0:
        pytest.skip(f"{command} {variant} refuses the intact file too")
    status, codes = _cli_outcome(command, variant, bad, tmp_path / "corrupt")
    assert status == 1, f"{command} {variant} on {family}: exit {status}, codes {codes}"
    assert set(codes) == {_verdict(bad).code}, f"{command} {variant}: {codes}"
    output = _variant(command, variant).output
    if output is not None:
        assert not (tmp_path / "corrupt" / output).exists(), f"{command} wrote {output}"


@pytest.mark.slow
def test_every_command_reports_corrupt_data_through_the_real_entry(
    families: dict[str, Family], tmp_path: Path
) -> None:
    """The same verdict from the installed entry point (``python -m onert_checkpoint``), one
    process per command, on the schema-3 file with a corrupt data byte."""
    bad = families["v3-named-corrupt"]
    for variants in CLI_COMMANDS.values():
        v = next((v for v in variants if v.reads == CHECKPOINT and v.data_out), None)
        if v is None:
            continue
        argv = list(v.argv(bad, tmp_path))
        run = subprocess.run([sys.executable, "-m", "onert_checkpoint", *argv],
                             capture_output=True, text=True, timeout=120)
        codes = check_error_lines(argv, run.returncode, run.stdout, run.stderr)
        assert run.returncode == 1 and set(codes) == {_verdict(bad).code}, (argv, run)


# Findings kept as regressions ---------------------------------------------------------------


@pytest.mark.parametrize("family", CORRUPT)
def test_diagnostics_report_corrupt_data_as_validate_does(
    family: str, families: dict[str, Family]
) -> None:
    """``info`` and ``dump --layout``, text and JSON, give validate's verdict on a file whose
    data fail their CRC-32C: the same error object, exit 1 (the layout still listed)."""
    path = str(families[family].path)
    status, out, _ = _run_cli(["validate", "--json", path])
    expected = json.loads(out)["error"]
    assert status == 1 and expected == _verdict(families[family]).to_dict()

    status, out, _ = _run_cli(["dump", "--layout", "--json", path])
    layout = json.loads(out)
    assert (status, layout["error"]) == (1, expected)
    assert any(f["name"] == "sections[0].kind" for f in layout["fields"])  # still mapped

    status, out, _ = _run_cli(["info", "--json", path])
    assert (status, json.loads(out)) == (1, {"error": expected})

    where = f"at {expected['field']} (offset {expected['offset']})"
    status, out, _ = _run_cli(["dump", "--layout", path])
    assert status == 1 and f": invalid: {expected['code']} {where}: " in out

    status, out, err = _run_cli(["info", path])
    assert status == 1 and out == ""
    assert err.startswith(f"onert-ckpt: error: {expected['code']}: ") and f"[{where}]" in err


def _where(err: CheckpointError | None) -> tuple[object, ...] | None:
    return None if err is None else (err.code, err.field, err.offset)


@pytest.mark.slow
@pytest.mark.parametrize("family", ["v1-onert", "v1-onert-micro", "wof", "v2-named", "v3-named"])
def test_dump_layout_agrees_with_validate_on_every_byte_flip(
    family: str, families: dict[str, Family]
) -> None:
    """Each byte of the file inverted in turn: the layout map reports the rule validate
    reports (code, field, offset), or none when validate finds none (about 4 s of CPU)."""
    from onert_checkpoint.tools.layout_map import layout_map

    data = families[family].path.read_bytes()
    for pos in range(len(data)):
        flipped = bytearray(data)
        flipped[pos] ^= 0xFF
        try:
            oc.load(bytes(flipped)).verify()
            verdict = None
        except CheckpointError as err:
            verdict = err
        mapped = layout_map(bytes(flipped)).error
        assert _where(mapped) == _where(verdict), f"{family}, byte {pos}: {mapped} {verdict}"


def test_to_safetensors_refuses_2m_zero_length_tensors_from_the_counts(tmp_path: Path) -> None:
    """A valid 16 MB schema-3 file of 2M zero-length tensors needs a safetensors header over
    safetensors' 100 MB limit: refused with the project's error before any entry is made
    (it was safetensors' own SafetensorError, after 2.7 GB and 56 s)."""
    from onert_checkpoint.interchange.safetensors_io import HEADER_LIMIT

    ckpt = oc.load(surface.v3_zero_length(2_000_000))
    out = tmp_path / "z.safetensors"
    with pytest.raises(oc.NotRepresentableError) as err:
        oc.to_safetensors(ckpt, out)
    assert (err.value.code, err.value.field) == ("not_representable", "safetensors")
    assert str(HEADER_LIMIT) in err.value.message and "2000000 arrays" in err.value.message
    assert not out.exists()
    assert not list(ckpt.tensors.made())  # decided from the table's length: nothing made


@pytest.mark.slow
def test_export_of_2m_zero_length_tensors_is_one_coded_line(tmp_path: Path) -> None:
    """The command line: exit 1, ``onert-ckpt: error: not_representable: ...``, no file."""
    source = tmp_path / "z.ckpt"
    source.write_bytes(surface.v3_zero_length(2_000_000))
    out = tmp_path / "z.safetensors"
    run = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "export", str(source), str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 1, run
    assert run.stderr.startswith("onert-ckpt: error: not_representable: "), run.stderr
    assert not out.exists()


def test_the_header_bound_never_refuses_an_export_that_fits(
    families: dict[str, Family], tmp_path: Path
) -> None:
    """MIN_HEADER_PER_ARRAY is a lower bound of what each array really costs in the header."""
    from onert_checkpoint.interchange.safetensors_io import MIN_HEADER_PER_ARRAY

    for name, fam in families.items():
        if fam.kind != CHECKPOINT or fam.clean or fam.released:
            continue
        ckpt = oc.load(fam.path)
        count = len(ckpt.tensors) + sum(
            len(e) for e in (ckpt.optimizer.slots.values() if ckpt.optimizer else ())
        )
        out = tmp_path / f"{name}.safetensors"
        oc.to_safetensors(ckpt, out)
        (header,) = struct.unpack("<Q", out.read_bytes()[:8])
        assert header >= count * MIN_HEADER_PER_ARRAY, (name, header, count)


def test_a_safetensors_header_over_the_limit_is_refused_as_not_representable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The writer counts its header before writing: one over safetensors' limit is
    not_representable (what safetensors' readers would refuse), and no file is made."""
    from onert_checkpoint.interchange import safetensors_io

    # above the 64 bytes an array costs at least (checked first), below this header
    monkeypatch.setattr(safetensors_io, "HEADER_LIMIT", 1000)
    out = tmp_path / "x.safetensors"
    with pytest.raises(oc.NotRepresentableError) as err:
        oc.to_safetensors(oc.load(surface.FC2), out)
    assert "header would take" in err.value.message and not out.exists()


@pytest.mark.parametrize(
    ("family", "key"),
    [("safetensors-revision-v9", "revision"), ("safetensors-dialect-xl", "dialect"),
     ("npz-revision-v9", "revision"), ("npz-dialect-xl", "dialect")],
)
def test_import_refuses_an_unknown_revision_or_dialect_naming_the_key(
    family: str, key: str, families: dict[str, Family], tmp_path: Path
) -> None:
    """``revision: v9`` or ``dialect: onert-xl`` in the metadata is refused when read, naming
    the key (it was accepted, then failed in the writer as a bare ValueError)."""
    fam = families[family]
    reader = oc.from_npz if fam.path.suffix == ".npz" else oc.from_safetensors
    with pytest.raises(oc.NotRepresentableError) as err:
        reader(fam.path)
    assert err.value.field == f"metadata.{key}" and repr(key) in err.value.message
    status, _, stderr = _run_cli(["import", str(fam.path), str(tmp_path / "o.ckpt")])
    assert status == 1 and stderr.startswith("onert-ckpt: error: not_representable: ")
    assert f"metadata '{key}'" in stderr and not (tmp_path / "o.ckpt").exists()


HOSTILE_METADATA = ["v9", "", "-1", "null", "[]", "{}", '"x"', "1e999", "4294967296",
                    '{"0": [-1, null]}', '{"0": {"name": 5, "dtype": "nope", "shape": [-1]}}',
                    '[{"kind": 1, "required": true, "data": "AA=="}]', '{"step": {"float": 1}}',
                    '["m", "m"]', "lamb"]


@pytest.mark.parametrize("source", ["v1-onert", "v3-named"])
def test_hostile_metadata_values_raise_only_project_errors(
    source: str, families: dict[str, Family]
) -> None:
    """Every metadata key of an export, and the optional ones, set to values built to break
    the importer: the result is a checkpoint that writes, or the project's error."""
    arrays, meta = oc.to_numpy_dict(oc.load(families[source].path), metadata=True)
    keys = sorted({*meta, "data_order", "quirks", "sections", "origin", "tensors", "slots"})
    for key in keys:
        for value in HOSTILE_METADATA:
            try:
                oc.to_bytes(oc.from_numpy_dict(arrays, {**meta, key: value}))
            except CheckpointError:
                pass
            except Exception as exc:
                raise AssertionError(f"metadata {key}={value!r}: {exc!r}") from exc
