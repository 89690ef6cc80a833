"""``onert-ckpt conformance``: another reader run on every vector and corpus case, compared as
TOOLKIT.md section 1 says.

The reference C reader (spec/c, ``ockpt-info``) agrees on every case; readers that differ from it
in one field (an error's offset, a checksum, the sign of a zero, an integer written as a float)
are each reported, with the rule the case tests, and the command exits 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from onert_checkpoint.tools.conformance import (
    Case,
    compare,
    corpus_cases,
    vector_cases,
)

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "spec" / "vectors"
MANIFEST = ROOT / "tests" / "corpus" / "manifest.json"


def conformance(
    *args: str, cwd: Path = ROOT, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "conformance", *args],
        capture_output=True, text=True, cwd=cwd, timeout=timeout,
    )


def mutant(tmp_path: Path, reader: Path, change: str) -> Path:
    """A reader that runs ``reader`` and applies ``change`` (Python acting on ``out``, the
    parsed output) before printing it."""
    script = tmp_path / "mutant.py"
    script.write_text(
        "import json, subprocess, sys\n"
        f"res = subprocess.run([{str(reader)!r}, sys.argv[1]], capture_output=True, text=True)\n"
        "out = json.loads(res.stdout)\n"
        f"{change}\n"
        "print(json.dumps(out))\n"
    )
    return script


# ---- the reference C reader ------------------------------------------------------------------


def test_the_reference_c_reader_agrees_on_every_case(ockpt_info: Path) -> None:
    res = conformance("--", str(ockpt_info), "{file}")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    cases = len(vector_cases(VECTORS)) + len(corpus_cases(MANIFEST)[0])
    assert f"{cases} cases: {cases} agree, 0 disagree" in res.stdout


def test_a_reader_with_one_wrong_error_offset_is_caught(ockpt_info: Path, tmp_path: Path) -> None:
    wrong = mutant(
        tmp_path, ockpt_info,
        "if out.get('error', {}).get('code') == 'gap': out['error']['offset'] += 1",
    )
    res = conformance("--select", "invalid-v3-*", "--select", "v3-*", "--",
                      sys.executable, str(wrong), "{file}")
    assert res.returncode == 1, res.stdout
    assert "DISAGREE vector invalid-v3-p3-gap: expected error gap (field data, offset" in res.stdout
    # the rule it tests, from the vectors' table
    rule = next(c.rule for c in vector_cases(VECTORS) if c.name == "vector invalid-v3-p3-gap")
    assert rule.startswith("P3") and f"  rule: {rule}" in res.stdout
    agreeing = [c for c in vector_cases(VECTORS)
                if c.name.startswith(("vector invalid-v3-", "vector v3-"))
                and c.expect.get("error", {}).get("code") != "gap"]
    assert f"{len(agreeing)} agree" in res.stdout


def test_a_reader_with_one_wrong_checksum_is_caught(ockpt_info: Path, tmp_path: Path) -> None:
    wrong = mutant(
        tmp_path, ockpt_info,
        "if out.get('tensors'): out['tensors'][-1]['crc32'] ^= 1",
    )
    res = conformance("--no-corpus", "--select", "v3-adam", "--select", "v3-full", "--json", "--",
                      sys.executable, str(wrong))
    assert res.returncode == 1
    report = json.loads(res.stdout)
    assert report["agree"] == 0 and report["cases"] == len(report["disagree"]) > 0
    for item in report["disagree"]:
        assert item["disagreement"].startswith("$.tensors[")
        assert ".crc32: expected" in item["disagreement"]
        assert item["rule"]  # what the vector shows, from its table


def test_a_schema_3_only_reader_conforms_to_the_microcontroller_profile_only(
    ockpt_info: Path, tmp_path: Path
) -> None:
    """SPEC.md section 10: a reader of schema 3 alone refuses every other version byte with
    unsupported_version; it agrees on the micro profile's cases and not on the full set."""
    only_v3 = tmp_path / "only_v3.py"
    only_v3.write_text(
        "import json, os, sys\n"
        "head = open(sys.argv[1], 'rb').read(3)\n"
        "if len(head) == 3 and head[:2] == b'\\xad\\x01' and head[2] != 3:\n"
        "    print(json.dumps({'error': {'code': 'unsupported_version', 'field': 'version',\n"
        "                                'offset': 2}}))\n"
        "    sys.exit(1)\n"
        f"os.execv({str(ockpt_info)!r}, [{str(ockpt_info)!r}, sys.argv[1]])\n"
    )
    sample = ["--select", "invalid-v2-header*", "--select", "v3-minimal", "--select",
              "invalid-version-*", "--select", "v1-onert-sgd"]
    argv = ["--", sys.executable, str(only_v3), "{file}"]
    micro = conformance("--profile", "micro", *sample, *argv)
    assert micro.returncode == 0, micro.stdout
    full = conformance(*sample, *argv)
    assert full.returncode == 1
    assert "DISAGREE vector v1-onert-sgd: expected a valid file" in full.stdout
    assert "DISAGREE vector invalid-version-" not in full.stdout  # detection: every profile
    detection = len(list(VECTORS.glob("invalid-version-*.ckpt")))
    only_detection = conformance("--profile", "micro", "--no-corpus", "--select",
                                 "invalid-version-*", *argv)
    assert f"{detection} cases: {detection} agree" in only_detection.stdout
    assert conformance("--revisions", "v1", *sample, *argv).returncode == 2  # v1 without wof


# ---- readers that skip an optional section kind (SPEC.md 10, TOOLKIT.md 4) ------------------

DATA_BLOCKS, RANGE_INDEX = 0x100008, 0x100009
SKIPPING = VECTORS / "optional-kinds.ndjson"
SCHEMA_3 = ["--profile", "micro", "--no-corpus"]


def judged(skips: frozenset[int]) -> dict[str, dict]:
    """Vector name -> what a reader that skips ``skips`` must give: the line of
    optional-kinds.ndjson with exactly that set, else the vector's JSON."""
    table = {}
    for line in SKIPPING.read_text().splitlines():
        row = json.loads(line)
        table[row["vector"], frozenset(int(k, 16) for k in row["skips"])] = row["expect"]
    return {c.name.split(" ", 1)[1]: table.get((c.name.split(" ", 1)[1], skips), c.expect)
            for c in vector_cases(VECTORS)}


def disagreeing(stdout: str) -> set[str]:
    return {line.split()[2].rstrip(":") for line in stdout.splitlines()
            if line.startswith("DISAGREE vector ")}


def skipping_reader(tmp_path: Path, reader: Path, kinds: tuple[int, ...]) -> Path:
    """The reference C reader made to skip ``kinds``: it reads a copy of the file whose entries
    of those kinds carry kinds it does not know, sorting at the same place (0x100007 for
    0x100008, 0x10000A for 0x100009), with the table's and header's CRC-32C recomputed where
    they were right."""
    script = tmp_path / "skipping.py"
    script.write_text(
        "import os, struct, sys, tempfile\n"
        "import crc32c\n"
        f"stand_in = {{k: v for k, v in {{0x100008: 0x100007, 0x100009: 0x10000A}}.items() "
        f"if k in {kinds!r}}}\n"
        "b = bytearray(open(sys.argv[1], 'rb').read())\n"
        "n = struct.unpack_from('<I', b, 24)[0] if len(b) >= 64 else 0\n"
        "if b[:3] == b'\\xad\\x01\\x03' and n <= 64 and 64 + 32 * n <= len(b):\n"
        "    crc = lambda at, end: crc32c.crc32c(bytes(b[at:end]))\n"
        "    table_ok = crc(64, 64 + 32 * n) == struct.unpack_from('<I', b, 28)[0]\n"
        "    head = bytearray(b[:64]); head[4:8] = bytes(4)\n"
        "    header_ok = crc32c.crc32c(bytes(head)) == struct.unpack_from('<I', b, 4)[0]\n"
        "    for i in range(n):\n"
        "        kind = struct.unpack_from('<I', b, 64 + 32 * i)[0]\n"
        "        struct.pack_into('<I', b, 64 + 32 * i, stand_in.get(kind, kind))\n"
        "    if table_ok:\n"
        "        struct.pack_into('<I', b, 28, crc(64, 64 + 32 * n))\n"
        "    if header_ok:\n"
        "        b[4:8] = bytes(4); struct.pack_into('<I', b, 4, crc(0, 64))\n"
        "copy = tempfile.NamedTemporaryFile(suffix='.ckpt', delete=False)\n"
        "copy.write(b); copy.close()\n"
        f"res = os.spawnv(os.P_WAIT, {str(reader)!r}, [{str(reader)!r}, copy.name])\n"
        "os.unlink(copy.name)\n"
        "sys.exit(res)\n"
    )
    return script


def test_a_reader_that_skips_the_optional_kinds_conforms_when_it_says_so(
    ockpt_info: Path, tmp_path: Path
) -> None:
    """TOOLKIT.md 4: a reader that skips data_blocks and range_index agrees on every schema-3
    vector with ``--skips-kind`` naming both; without it, it disagrees on exactly the vectors
    optional-kinds.ndjson lists for it; naming one kind only, on those whose result differs
    between the two sets. The reference C reader, which knows both, agrees without the option
    and not with it."""
    both = frozenset({DATA_BLOCKS, RANGE_INDEX})
    argv = ["--", sys.executable, str(skipping_reader(tmp_path, ockpt_info, tuple(both))),
            "{file}"]
    res = conformance(*SCHEMA_3, "--skips-kind", "0x100008", "--skips-kind", "range_index",
                      *argv)
    assert res.returncode == 0, res.stdout[-3000:]
    as_known = judged(frozenset())
    as_skipped = judged(both)
    listed = {n for n in as_known if as_known[n] != as_skipped[n]}
    assert {"invalid-v3-b1-short", "invalid-v3-b6-before-c12", "invalid-v3-i1-short",
            "invalid-v3-i6-before-p4"} <= listed
    assert disagreeing(conformance(*SCHEMA_3, *argv).stdout) == listed
    only_blocks = judged(frozenset({DATA_BLOCKS}))
    res = conformance(*SCHEMA_3, "--skips-kind", "data_blocks", *argv)
    assert disagreeing(res.stdout) == {n for n in listed if only_blocks[n] != as_skipped[n]}
    assert disagreeing(res.stdout) and all("-i" in n for n in disagreeing(res.stdout))
    knowing = conformance(*SCHEMA_3, "--skips-kind", "0x100008", "--skips-kind", "0x100009",
                          "--", str(ockpt_info), "{file}")
    assert disagreeing(knowing.stdout) == listed


def test_only_an_optional_kind_can_be_skipped() -> None:
    for kind in ("0x100007", "4", "1048586", "blocks"):
        res = conformance("--skips-kind", kind, "--", "true")
        assert res.returncode == 2 and "only an optional kind" in res.stderr, kind


def test_vector_cases_take_the_skipping_reader_s_result_for_exactly_its_kinds() -> None:
    plain = {c.name: c for c in vector_cases(VECTORS)}
    for skips in ({DATA_BLOCKS}, {RANGE_INDEX}, {DATA_BLOCKS, RANGE_INDEX}):
        want = judged(frozenset(skips))
        cases = vector_cases(VECTORS, frozenset(skips))
        changed = [c for c in cases if c.expect != plain[c.name].expect]
        assert changed
        for case in cases:
            assert case.expect == want[case.name.split(" ", 1)[1]]
        assert all("optional-kinds.ndjson" in c.rule for c in changed)
    blocks = {c.name: c.expect for c in vector_cases(VECTORS, frozenset({DATA_BLOCKS}))}
    assert blocks["vector invalid-v3-b6-before-c12"]["error"]["code"] == "bad_utf8"
    assert blocks["vector invalid-v3-b6-after-data-bad-data-crc"]["error"]["code"] == (
        "section_checksum"
    )
    assert blocks["vector invalid-v3-i1-short"] == plain["vector invalid-v3-i1-short"].expect


def test_a_corpus_case_listing_a_skipped_kind_is_not_run(tmp_path: Path) -> None:
    """The corpus records one result per file: with ``--skips-kind``, a schema-3 case whose
    section table lists a skipped kind is reported as not run, the others run."""
    (tmp_path / "files").mkdir()
    cases = []
    for name in ("v3-data-blocks", "v3-minimal"):
        (tmp_path / "files" / f"{name}.ckpt").write_bytes((VECTORS / f"{name}.ckpt").read_bytes())
        expect = {"revision": "v3", "dialect": None}
        cases.append({"name": name, "file": f"{name}.ckpt", "expect": expect, "why": "x"})
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"cases": cases}))
    reader = ["--", sys.executable, "-m", "onert_checkpoint", "info", "--json", "{file}"]
    args = ["--no-vectors", "--corpus", str(manifest), "--json"]
    report = json.loads(conformance(*args, "--skips-kind", "data_blocks", *reader).stdout)
    assert (report["cases"], report["agree"]) == (1, 1)
    assert report["not_run"] == ["corpus v3-data-blocks"]
    assert report["skips_kinds"] == ["0x100008"]
    report = json.loads(conformance(*args, "--skips-kind", "range_index", *reader).stdout)
    assert (report["cases"], report["agree"], report["not_run"]) == (2, 2, [])


#: The last commits whose readers knew neither optional kind, and data_blocks but not
#: range_index (tests/format/test_data_blocks.py and tests/format/test_range_index.py read files
#: with them).
BEFORE_DATA_BLOCKS, BEFORE_RANGE_INDEX = "a60f1d3", "aa500ec"


def _old_c_reader(tmp_path: Path, commit: str) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the readers as committed before come from git history")
    res = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "spec/c"],
                         capture_output=True, timeout=120)
    if res.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone: {res.stderr.decode()[:200]}")
    out = tmp_path / commit
    with tarfile.open(fileobj=BytesIO(res.stdout)) as tar:
        tar.extractall(out, filter="data")
    folder = out / "spec" / "c"
    done = subprocess.run(["make", "-s", "-C", str(folder), "CC=gcc", "ockpt-info"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return folder / "ockpt-info"


@pytest.mark.parametrize(
    ("commit", "skips"),
    [(BEFORE_DATA_BLOCKS, ("0x100008", "0x100009")), (BEFORE_RANGE_INDEX, ("0x100009",))],
)
def test_the_c_readers_from_before_each_kind_conform_as_readers_that_skip_it(
    ockpt_info: Path, tmp_path: Path, commit: str, skips: tuple[str, ...]
) -> None:
    """optional-kinds.ndjson is what real readers that skip the kinds give: the C reader as
    committed before data_blocks existed (it skips both kinds) and before range_index existed
    (it knows data_blocks) agree on every schema-3 case, corpus included, when the kinds they
    skip are named, and disagree on exactly the vectors listed for them when not."""
    old = _old_c_reader(tmp_path, commit)
    named = [a for kind in skips for a in ("--skips-kind", kind)]
    res = conformance("--profile", "micro", *named, "--", str(old), "{file}")
    assert res.returncode == 0, res.stdout[-3000:]
    assert " 0 disagree" in res.stdout
    as_known = judged(frozenset())
    as_skipped = judged(frozenset(int(k, 16) for k in skips))
    listed = {n for n in as_known if as_known[n] != as_skipped[n]}
    res = conformance(*SCHEMA_3, "--", str(old), "{file}")
    assert disagreeing(res.stdout) == listed and listed


def test_another_decimal_of_the_same_binary64_conforms(ockpt_info: Path, tmp_path: Path) -> None:
    """TOOLKIT.md 1 and 1.3: conformance compares parsed values; the shortest decimal is only
    recommended. A reader writing every float with 17 digits and an exponent
    (0.1 as 1.00000000000000006e-01) agrees; one that drops the sign of -0.0 does not."""
    long_form = tmp_path / "long_form.py"
    long_form.write_text(
        "import re, subprocess, sys\n"
        f"text = subprocess.run([{str(ockpt_info)!r}, sys.argv[1]], capture_output=True,\n"
        "                      text=True).stdout\n"
        "number = r'(?<![\\w\"])-?\\d+(?:\\.\\d+(?:[eE][-+]?\\d+)?|[eE][-+]?\\d+)'\n"
        "print(re.sub(number, lambda m: '%.17e' % float(m.group(0)), text))\n"
    )
    floats = ["--no-corpus", "--select", "v2-state-number-edges", "--select", "v3-state-types"]
    res = conformance(*floats, "--", sys.executable, str(long_form), "{file}")
    assert res.returncode == 0, res.stdout
    unsigned = mutant(tmp_path, ockpt_info,
                      "out.get('state', {}).update({k: 0.0 for k, v in out.get('state', {})"
                      ".items() if v == 0.0 and isinstance(v, float)})")
    res = conformance(*floats, "--", sys.executable, str(unsigned), "{file}")
    assert res.returncode == 1 and "expected -0.0, got 0.0" in res.stdout


def test_a_reader_that_crashes_or_prints_no_json_disagrees(tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    res = conformance("--no-corpus", "--select", "v3-empty*", "--", sys.executable, str(crash))
    assert res.returncode == 1 and "killed by signal 11" in res.stdout
    words = tmp_path / "words.py"
    words.write_text("print('valid')\n")
    res = conformance("--no-corpus", "--select", "v3-empty*", "--", sys.executable, str(words))
    assert res.returncode == 1 and "the output is not one JSON text" in res.stdout


def test_the_python_reader_agrees_through_the_command(tmp_path: Path) -> None:
    """The library's own ``info --json`` is a reader like any other: a sample of 7 cases, each
    a process of its own (valid schema-2 and schema-3 vectors with optimizer state and number
    edges, invalid schema-3 vectors compared by error code, field and offset, and the corpus's
    real and invalid schema-2 files); tests/spec/test_vectors.py compares the library with every
    vector in one process."""
    sample = ["invalid-v3-c1-*", "v3-adam", "v2-state-number-edges", "v2-real-*",
              "v2-header-crc"]
    res = conformance(*(a for pattern in sample for a in ("--select", pattern)),
                      "--", sys.executable, "-m", "onert_checkpoint", "info", "--json", "{file}")
    assert res.returncode == 0, res.stdout[-3000:]
    assert "7 cases: 7 agree, 0 disagree" in res.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert conformance().returncode == 2
    res = conformance("--vectors", str(tmp_path), "--", "true")
    assert res.returncode == 2 and "no conformance vectors" in res.stderr


# ---- the comparison, as TOOLKIT section 1 states it --------------------------------------------


def _valid(expect: dict) -> Case:
    return Case("vector x", Path("x"), expect, "rule x")


def test_integers_and_binary64_are_compared_by_type_and_bits() -> None:
    case = _valid({"state": {"a": 1, "b": -0.0, "c": 1.0, "d": 18446744073709551615}})
    assert compare(case, {"state": {"a": 1, "b": -0.0, "c": 1.0,
                                    "d": 18446744073709551615}}) is None
    assert compare(case, {"state": {"a": 1.0, "b": -0.0, "c": 1.0,
                                    "d": 18446744073709551615}}) is not None
    assert "$.state.b" in (compare(case, {"state": {"a": 1, "b": 0.0, "c": 1.0,
                                                    "d": 18446744073709551615}}) or "")
    assert compare(case, {"state": {"a": True, "b": -0.0, "c": 1.0,
                                    "d": 18446744073709551615}}) is not None
    # u64 beyond 2^53: compared exactly, not as a binary64
    assert compare(case, {"state": {"a": 1, "b": -0.0, "c": 1.0,
                                    "d": 18446744073709551614}}) is not None


def test_key_order_is_free_and_missing_or_extra_keys_are_not() -> None:
    case = _valid({"revision": "v3", "dialect": None})
    assert compare(case, {"dialect": None, "revision": "v3"}) is None
    assert "missing 'dialect'" in (compare(case, {"revision": "v3"}) or "")
    assert "unexpected 'x'" in (compare(case, {"revision": "v3", "dialect": None, "x": 1}) or "")


def test_an_error_is_compared_by_code_field_and_offset_only() -> None:
    case = Case("vector y", Path("y"), {"error": {"code": "gap", "field": "data",
                                                   "offset": 9}}, "P3")
    assert compare(case, {"error": {"code": "gap", "field": "data", "offset": 9,
                                    "message": "anything"}}) is None
    assert compare(case, {"error": {"code": "gap", "field": "data", "offset": 10}}) is not None
    assert compare(case, {"error": {"code": "gap", "field": "dat", "offset": 9}}) is not None
    assert "found the file valid" in (compare(case, {"revision": "v3"}) or "")


def test_corpus_valid_cases_compare_revision_and_dialect() -> None:
    cases, skipped = corpus_cases(MANIFEST)
    assert skipped  # the cases read through a circle model
    valid = next(c for c in cases if not c.whole)
    assert compare(valid, {**valid.expect, "tensors": []}) is None
    assert compare(valid, {**valid.expect, "revision": "wof"}) is not None


@pytest.mark.parametrize("name", ["invalid-v3-p3-gap", "v3-state-types"])
def test_every_vector_has_its_rule(name: str) -> None:
    case = next(c for c in vector_cases(VECTORS) if c.name == f"vector {name}")
    assert case.rule


# ---- vectors, manifests and options built to break the runner ---------------------------------


def _copy_vector(folder: Path, name: str, as_name: str) -> None:
    for suffix in (".ckpt", ".json"):
        shutil.copyfile(VECTORS / f"{name}{suffix}", folder / f"{as_name}{suffix}")


def test_a_vector_named_like_an_option_reaches_the_reader_as_a_path(tmp_path: Path) -> None:
    """``--vectors .`` with a vector named ``-n.ckpt``: the reader is given a path (absolute),
    never ``-n.ckpt``, which a reader's option parser takes for an option."""
    _copy_vector(tmp_path, "v3-minimal", "-n")
    reader = tmp_path / "reader.py"
    reader.write_text(
        "import pathlib, sys\n"
        "arg = sys.argv[1]\n"
        "if arg.startswith('-'):\n"
        "    sys.exit(f'given the option {arg}')\n"
        "print(pathlib.Path(arg).with_suffix('.json').read_text())\n"
    )
    for template in ([], ["{file}"]):  # appended, and in the place {file} names
        res = conformance("--no-corpus", "--vectors", ".", "--", sys.executable, str(reader),
                          *template, cwd=tmp_path)
        assert res.returncode == 0 and "1 cases: 1 agree" in res.stdout, res.stdout


@pytest.mark.parametrize("where", ["vector", "description", "folder", "corpus file"])
def test_a_fifo_among_the_cases_is_refused_never_read(tmp_path: Path, where: str) -> None:
    """A FIFO named like a vector (or its description, or a corpus file), or a folder named
    like a vector: refused as an I/O error naming it before any reader runs, never opened
    for reading (opening a FIFO blocks until a writer comes: the run hung)."""
    _copy_vector(tmp_path, "v3-minimal", "v3-minimal")
    args = ["--no-corpus", "--vectors", str(tmp_path)]
    if where == "vector":
        os.mkfifo(tmp_path / "odd.ckpt")
        shutil.copyfile(VECTORS / "v3-minimal.json", tmp_path / "odd.json")
    elif where == "description":
        shutil.copyfile(VECTORS / "v3-minimal.ckpt", tmp_path / "odd.ckpt")
        os.mkfifo(tmp_path / "odd.json")
    elif where == "folder":
        (tmp_path / "odd.ckpt").mkdir()
    else:
        (tmp_path / "files").mkdir()
        os.mkfifo(tmp_path / "files" / "odd.bin")
        case = {"name": "odd", "file": "odd.bin", "expect": {"revision": "v3", "dialect": None}}
        (tmp_path / "manifest.json").write_text(json.dumps({"cases": [case]}))
        args = ["--no-vectors", "--corpus", str(tmp_path / "manifest.json")]
    res = conformance(*args, "--", "true", timeout=60)
    assert res.returncode == 2, res
    assert res.stderr.startswith("onert-ckpt: error: io_error: ") and "odd." in res.stderr
    assert "not a regular file" in res.stderr


def _main(argv: list[str]) -> tuple[int, str]:
    """The command line in this process: its status and stderr (no reader runs: every case
    here is refused before)."""
    import contextlib
    import io

    from onert_checkpoint.tools.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            status = int(exc.code or 0)
    return status, err.getvalue()


def _bad_folder(tmp_path: Path, fault: str) -> list[str]:
    """The arguments of a run over a vector folder or corpus manifest with ``fault``."""
    _copy_vector(tmp_path, "v3-minimal", "v3-minimal")
    vectors = ["--no-corpus", "--vectors", str(tmp_path)]
    descriptions = {"not-json": "{not json", "an-array": "[]",
                    "error-without-offset": '{"error": {"code": "gap", "field": "data"}}',
                    "not-utf8": '{"revision": "\xff"}'}
    if fault in descriptions:
        (tmp_path / "v3-minimal.json").write_bytes(descriptions[fault].encode("latin-1"))
        return vectors
    if fault == "skipping-table-line":
        (tmp_path / "optional-kinds.ndjson").write_text('{"vector": "v3-minimal"}\n')
        return [*vectors, "--skips-kind", "data_blocks"]
    manifests = {"manifest-not-json": "{", "manifest-without-cases": "{}",
                 "case-without-expect": '{"cases": [{"name": "x", "file": "x.bin"}]}',
                 "error-case-without-field": '{"cases": [{"name": "x", "file": "x.bin", '
                 '"expect": {"error": "gap", "offset": 3}}]}',
                 "case-not-an-object": '{"cases": [7]}'}
    (tmp_path / "manifest.json").write_text(manifests[fault])
    return ["--no-vectors", "--corpus", str(tmp_path / "manifest.json")]


@pytest.mark.parametrize("fault", [
    "not-json", "an-array", "error-without-offset", "not-utf8", "skipping-table-line",
    "manifest-not-json", "manifest-without-cases", "case-without-expect",
    "error-case-without-field", "case-not-an-object",
])
def test_a_malformed_vector_or_manifest_is_a_usage_error_naming_it(
    tmp_path: Path, fault: str
) -> None:
    status, err = _main(["conformance", *_bad_folder(tmp_path, fault), "--", "true"])
    assert status == 2 and err.startswith("onert-ckpt: error: usage_error: "), err
    assert str(tmp_path) in err and err.count("\n") == 1, err


@pytest.mark.parametrize(("option", "value"), [
    ("--timeout", "nan"), ("--timeout", "inf"), ("--timeout", "-1"), ("--timeout", "0"),
    ("--timeout", "soon"), ("--jobs", "0"), ("--jobs", "-2"), ("--max-output", "0"),
])
def test_an_option_out_of_range_is_a_usage_error(option: str, value: str) -> None:
    status, err = _main(["conformance", option, value, "--", "true"])
    assert status == 2 and err.startswith("onert-ckpt: error: usage_error: "), err
    assert option in err and "internal_error" not in err


def test_a_reader_that_cannot_be_run_is_a_usage_error(tmp_path: Path) -> None:
    """A reader file without the execute bit, a missing one, or ``{file}`` in the program's
    place (each vector would be run as the program): refused before any case."""
    script = tmp_path / "reader.sh"
    script.write_text("#!/bin/sh\necho {}\n")
    for reader in ([str(script)], [str(tmp_path / "missing")], ["{file}"]):
        status, err = _main(["conformance", "--no-corpus", "--", *reader])
        assert status == 2 and err.startswith("onert-ckpt: error: usage_error: the reader "), err


def test_the_json_report_says_which_output_was_cut(tmp_path: Path) -> None:
    flood = tmp_path / "flood.sh"
    flood.write_text("#!/bin/sh\nexec head -c 100000 /dev/zero\n")
    flood.chmod(0o755)
    res = conformance("--no-corpus", "--select", "v3-minimal", "--max-output", "1000", "--json",
                      "--", str(flood))
    (item,) = json.loads(res.stdout)["disagree"]
    assert res.returncode == 1 and item["output_truncated"] is True
    assert "more than 1000 bytes on stdout" in item["disagreement"]


def test_a_disagreement_names_at_most_five_keys_each_cut_short() -> None:
    """A reader's object of 100,000 keys, or a key of 1 MB: the line says how many more."""
    case = _valid({"revision": "v3"})
    said = compare(case, {"revision": "v3", **{f"k{i}": 0 for i in range(100_000)}}) or ""
    assert said.endswith("and 99995 more") and len(said) < 200
    said = compare(case, {"revision": "v3", "x" * (1 << 20): 0}) or ""
    assert 0 < len(said) < 200


def test_registering_the_command_imports_no_schema_2_reader() -> None:
    """Every command line builds the parser, conformance's options included: that imports
    neither the schema-2 and -3 reader nor the micro profile's judge (which reads files with
    the library: imported when a micro line is judged)."""
    code = ("import sys; from onert_checkpoint.tools.cli import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith("
            "('onert_checkpoint.format.revisions.v2.', 'onert_checkpoint.format.revisions.v3.', "
            "'onert_checkpoint.tools.micro_profile'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == "[]", out
