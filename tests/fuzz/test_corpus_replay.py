"""Replay the fuzz regression corpus (tests/corpus/) on every run.

Each case of tests/corpus/manifest.json names a file and its expected outcome: valid (with
revision and dialect) or refused (with error code, field and offset), optionally read through a
circle model. The library must give exactly that outcome and keep the fuzz properties on it
(tests/fuzz/structure.py, ``check_load``). The reference C reader (built from spec/c/ by the
``ockpt_info`` fixture, or the program named by ``OCKPT_INFO``) is replayed against the same
corpus. How to replay another
implementation: tests/corpus/README.md.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.errors import ERROR_CODES
from tests.fuzz.structure import check_load

CORPUS = Path(__file__).parents[1] / "corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
CASES = MANIFEST["cases"]
ROOT = Path(__file__).parents[2]


def _ids(cases):
    return [c["name"] for c in cases]


def test_manifest_and_folder_agree():
    names = [c["file"] for c in CASES]
    assert len(names) == len(set(names)), "a file is listed twice"
    on_disk = sorted(p.name for p in (CORPUS / "files").iterdir())
    assert on_disk == sorted(names), "files without a manifest entry, or entries without a file"
    codes = {c["expect"].get("error") for c in CASES} - {None}
    assert codes <= set(ERROR_CODES)


def _marked(cases):
    """A case with ``known_bug`` is an open bug's regression case: strict xfail until fixed."""
    return [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=c["known_bug"]))
            if c.get("known_bug") else c for c in cases]


@pytest.mark.parametrize("case", _marked(CASES), ids=_ids(CASES))
def test_replay(case):
    data = (CORPUS / "files" / case["file"]).read_bytes()
    model = str(CORPUS / case["model"]) if case.get("model") else None
    outcome = check_load(data, model=model)
    if case["expect"].get("pending"):  # added by tests/fuzz/run.py --add: properties only
        return
    assert outcome == case["expect"], case["why"]


C_CASES = [c for c in CASES if not c.get("model") and not c["expect"].get("pending")]


@pytest.mark.parametrize("case", C_CASES, ids=_ids(C_CASES))
def test_replay_reference_c_reader(ockpt_info, case):
    """The C reader gives the same outcome, and for valid files the same JSON description."""
    path = CORPUS / "files" / case["file"]
    res = subprocess.run([str(ockpt_info), str(path)], capture_output=True, text=True,
                         timeout=60)
    if res.returncode == 1 and "error" not in case["expect"] and '"error"' not in res.stdout:
        pytest.fail(res.stderr)
    obj = json.loads(res.stdout)
    expect = case["expect"]
    if "error" in expect:
        assert res.returncode == 1
        assert (obj["error"]["code"], obj["error"]["field"], obj["error"]["offset"]) == (
            expect["error"], expect["field"], expect["offset"])
    else:
        assert res.returncode == 0, res.stdout
        assert obj == json.loads(json.dumps(oc.describe(oc.load(path.read_bytes()))))
