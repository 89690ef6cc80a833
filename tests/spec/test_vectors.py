"""The conformance vectors of spec/vectors/ (spec/make_vectors.py, spec/SPEC.md).

Every vector gives its expected output with the Python library and, when it builds, with the
reference C reader of spec/c/ under ASan and UBSan; the vectors cover every error code a file can
trigger; and spec/make_vectors.py reproduces the committed vectors byte for byte.
"""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

import onert_checkpoint as oc

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
VECTORS = SPEC / "vectors"
C_DIR = SPEC / "c"
NAMES = sorted(p.stem for p in VECTORS.glob("*.ckpt"))

#: Vectors on which the Python library disagrees with spec/SPEC.md (reported to the lead; the
#: library, not the vector, is to change). Strict: a fix makes the test fail until the entry
#: is removed here.
PYTHON_DISAGREEMENTS: dict[str, str] = {}

#: Vectors on which the C reader is known to disagree (none: disagreements are fixed at source).
C_DISAGREEMENTS: dict[str, str] = {}


def expected(name: str) -> dict:
    return json.loads((VECTORS / f"{name}.json").read_text())


def python_output(data: bytes) -> dict:
    try:
        return oc.describe(oc.load(data))
    except oc.CheckpointError as err:
        return {"error": {"code": err.code, "field": err.field, "offset": err.offset}}


def _params(known: dict[str, str], strict: bool) -> list:
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=strict, reason=known[n]))
        if n in known
        else n
        for n in NAMES
    ]


# ------------------------------------------------------------------------------------------------
# The vectors themselves


def test_vectors_exist_in_pairs():
    jsons = sorted(p.stem for p in VECTORS.glob("*.json"))
    assert NAMES, "no vectors: run python spec/make_vectors.py"
    assert jsons == NAMES


def test_enough_vectors_of_each_kind():
    kinds = [("error" not in expected(n), expected(n).get("revision")) for n in NAMES]
    assert sum(valid for valid, _ in kinds) >= 30
    assert sum(not valid for valid, _ in kinds) >= 60
    revisions = {rev for valid, rev in kinds if valid}
    assert {"v1", "wof"} <= revisions
    dialects = {expected(n)["dialect"] for n in NAMES if expected(n).get("revision") == "v1"}
    assert dialects == {"onert", "onert-micro", None}


def test_real_onert_exports_are_vectors():
    for real in (ROOT / "tests" / "data" / "real-onert").glob("*.ckpt"):
        assert any((VECTORS / f"{n}.ckpt").read_bytes() == real.read_bytes() for n in NAMES), real


def test_make_vectors_reproduces_the_committed_vectors(tmp_path):
    """Determinism: two runs give identical bytes, equal to what is committed."""
    for run in ("a", "b"):
        subprocess.run(
            [sys.executable, str(SPEC / "make_vectors.py"), "--out", str(tmp_path / run)],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
    files = sorted(p.name for p in VECTORS.iterdir() if p.is_file())
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == files
    _, mismatch, errors = filecmp.cmpfiles(VECTORS, tmp_path / "a", files, shallow=False)
    assert (mismatch, errors) == ([], []), "spec/vectors/ is stale: run python spec/make_vectors.py"
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "a", tmp_path / "b", files, shallow=False)
    assert (mismatch, errors) == ([], [])


def test_readme_indexes_every_vector():
    text = (VECTORS / "README.md").read_text()
    for name in NAMES:
        assert f"`{name}`" in text


def _error_codes() -> list[dict]:
    with open(SPEC / "error-codes.toml", "rb") as f:
        return tomllib.load(f)["error"]


def _produced_codes() -> set[str]:
    return {expected(n)["error"]["code"] for n in NAMES if "error" in expected(n)}


@pytest.mark.parametrize("revision", ["v1", "wof"])
def test_every_file_error_code_is_produced(revision):
    """Every code a file alone can trigger (not category model or write) has a vector."""
    wanted = {
        e["code"]
        for e in _error_codes()
        if revision in e["applies"] and e["category"] not in ("model", "write")
    }
    assert sorted(wanted - _produced_codes()) == []


def test_every_v2_error_code_is_produced():
    if not any(expected(n).get("revision") == "v2" for n in NAMES):
        pytest.skip("no schema-2 vectors yet (spec/SPEC.md section 6)")
    wanted = {
        e["code"]
        for e in _error_codes()
        if "v2" in e["applies"] and e["category"] not in ("model", "write")
    }
    assert sorted(wanted - _produced_codes()) == []


def test_every_v3_error_code_is_produced_by_a_v3_vector():
    """Every format code that applies to schema 3 is produced by an invalid-v3-* vector (the
    version codes are detection's, shared by every revision)."""
    wanted = {
        e["code"] for e in _error_codes() if "v3" in e["applies"] and e["category"] == "format"
    }
    produced = {expected(n)["error"]["code"] for n in NAMES if n.startswith("invalid-v3-")}
    assert sorted(wanted - produced) == []
    assert {"redundant_column", "bad_data_order"} <= produced


def test_v3_rules_each_have_a_vector():
    """SPEC.md 7's rules C0-C13 and P0-P4 each name at least one invalid-v3 vector."""
    names = [n for n in NAMES if n.startswith("invalid-v3-")]
    for rule in [f"c{i}" for i in range(14)] + [f"p{i}" for i in range(5)] + ["o4", "o7"]:
        assert any(n.startswith(f"invalid-v3-{rule}-") for n in names), rule


def test_v3_vectors_are_the_writer_s_canonical_bytes():
    """Schema 3 is canonical (SPEC.md 6.1): writing a loaded v3 vector gives its bytes, and a
    v3-X vector is what the writer makes of the v2-X vector's content (without per-block
    checksums: those vectors predate the data_blocks section, SPEC.md 7.4)."""
    v3 = [n for n in NAMES if n.startswith("v3-")]
    assert len(v3) >= 40
    for name in v3:
        data = (VECTORS / f"{name}.ckpt").read_bytes()
        assert oc.to_bytes(oc.load(data)) == data, name
        twin = VECTORS / f"v2-{name[3:]}.ckpt"
        if twin.exists():
            content = oc.load(twin.read_bytes())
            content.revision = "v3"  # laid out as schema 3, without per-block checksums
            content.layout.data_block_size = 0
            assert oc.to_bytes(content) == data, name


def test_version_3_is_schema_3_and_4_is_unsupported():
    assert expected("invalid-version-4")["error"]["code"] == "unsupported_version"
    assert expected("invalid-v3-v1-bytes-version-3")["error"]["code"] == "header_checksum"
    assert not (VECTORS / "invalid-version-3.ckpt").exists()


def test_error_vectors_name_field_and_offset():
    for name in NAMES:
        err = expected(name).get("error")
        if err is not None:
            assert set(err) == {"code", "field", "offset"}, name
            assert isinstance(err["field"], str) and isinstance(err["offset"], int), name


# ------------------------------------------------------------------------------------------------
# The Python library on every vector


@pytest.mark.parametrize("name", _params(PYTHON_DISAGREEMENTS, strict=True))
def test_python_library(name):
    data = (VECTORS / f"{name}.ckpt").read_bytes()
    assert python_output(data) == expected(name)


# ------------------------------------------------------------------------------------------------
# The reference C reader on every vector


@pytest.mark.parametrize("name", _params(C_DISAGREEMENTS, strict=False))
def test_c_reader(ockpt_info, name):
    env = dict(
        os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="halt_on_error=1"
    )
    done = subprocess.run(
        [str(ockpt_info), str(VECTORS / f"{name}.ckpt")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert "Sanitizer" not in done.stderr and "runtime error" not in done.stderr, done.stderr
    want = expected(name)
    assert done.returncode == (1 if "error" in want else 0), done.stderr
    got = json.loads(done.stdout)
    if "error" in got:
        got["error"].pop("message", None)
    assert got == want
