"""The command line says what to do in its own words, agrees with the library, and finds the
model by one documented convention.

Every check runs ``python -m onert_checkpoint`` in a subprocess, as a user would, on the real
files in tests/data; the API side of an agreement is called as a user calls it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"
MODEL = DATA / "fc2.circle"
SQ = DATA / "fc3sq-adam-step12.ckpt"
SQ_MODEL = DATA / "fc3sq.circle"


def run(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None):
    base = {k: v for k, v in os.environ.items() if k != "ONERT_CKPT_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", *map(str, args)],
        capture_output=True, text=True, timeout=300, check=False, cwd=cwd,
        env={**base, **(env or {})},
    )


def error_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


# the API and the command line cast new values by one rule ------------------------------------


@pytest.mark.parametrize(
    ("values", "taken"),
    [
        (np.array([1.5, 2.0, 3.0]), True),  # float64 that float32 holds exactly
        (np.array([0.1, 2.0, 3.0]), False),  # float64 that float32 would round
        (np.array([1, 2, 3], np.int64), True),  # int to float: same_kind, exact
        (np.array([1, 2, 3], ">f4"), True),  # the other byte order
        (np.array([1, 2, 3], np.complex64), False),  # complex to float: not same_kind
        (np.array([1.0, 2.0]), False),  # another shape
    ],
    ids=["f64-exact", "f64-rounds", "i64", "big-endian", "complex", "shape"],
)
def test_edit_replace_and_assignment_accept_and_refuse_the_same_values(
    tmp_path: Path, values: np.ndarray, taken: bool
) -> None:
    ckpt = oc.load(SGD, model=MODEL)
    try:
        ckpt["b1"].data = values
        api_takes = True
    except oc.CheckpointError as err:
        api_takes = False
        assert err.code == "model_mismatch"
    np.save(tmp_path / "b1.npy", values)
    done = run("edit", SGD, tmp_path / "o.ckpt", "--model", MODEL, "--replace",
               f"b1={tmp_path / 'b1.npy'}")
    assert api_takes == taken
    assert (done.returncode == 0) == api_takes, done.stderr
    if api_takes:
        back = oc.load(tmp_path / "o.ckpt", model=MODEL)
        assert np.array_equal(np.asarray(back["b1"]), np.asarray(ckpt["b1"]))
        assert back["b1"].data.dtype == np.float32
    else:
        assert "model_mismatch" in error_line(done) and not (tmp_path / "o.ckpt").exists()


def test_the_float64_array_of_the_report_is_taken_by_both() -> None:
    ckpt = oc.load(SGD, model=MODEL)
    ckpt["b1"].data = np.array([1.5, 2, 3])
    edited = oc.edit(oc.load(SGD, model=MODEL), replace={"b1": np.array([1.5, 2, 3])})
    assert np.array_equal(edited["b1"], ckpt["b1"])


# errors in the command line's words ------------------------------------------------------------


def test_import_of_arrays_named_after_tensors_asks_for_the_model_flag(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"w0": np.zeros((8, 4), np.float32)}, str(tmp_path / "plain.safetensors"))
    done = run("import", tmp_path / "plain.safetensors", tmp_path / "plain.ckpt")
    assert done.returncode == 2
    line = error_line(done)
    assert line.startswith("onert-ckpt: error: model_required: ")
    assert "--model" in line and "entries" not in line
    assert not (tmp_path / "plain.ckpt").exists()


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_diff_names_the_file_that_is_a_circle_model(order: str) -> None:
    a, b = (SGD, MODEL) if order == "ab" else (MODEL, SGD)
    done = run("diff", a, b)
    line = error_line(done)
    label = "B" if order == "ab" else "A"
    assert done.returncode == 1 and f"{label} ({MODEL})" in line and "circle model" in line


def test_writing_into_a_missing_folder_says_the_folder_is_missing(tmp_path: Path) -> None:
    done = run("convert", SGD, "nodir/out.ckpt", cwd=tmp_path)
    assert done.returncode == 2
    assert "the folder nodir does not exist" in error_line(done)


def test_a_state_key_on_schema_1_says_what_to_add(tmp_path: Path) -> None:
    done = run("edit", SGD, tmp_path / "o.ckpt", "--set", "lr=0.01")
    assert done.returncode == 1 and "--to v3" in error_line(done)


def test_an_order_error_names_the_order_flag() -> None:
    done = run("info", "--model", SQ_MODEL, "--order", "size", SQ)
    line = error_line(done)
    assert done.returncode == 1 and "ambiguous_entries" in line
    assert "--order predict" in line and "order=" not in line
    fixed = run("info", "--model", SQ_MODEL, "--order", "predict", SQ)
    assert fixed.returncode == 0, fixed.stderr


@pytest.mark.parametrize("to", [["--to", "v3"], ["--to", "v1", "--dialect", "onert-micro",
                                                "--batch-size", "1"]])
def test_convert_takes_the_order_too(tmp_path: Path, to: list[str]) -> None:
    """An onert file of equal-size tensors crossing to schema 3 or onert-micro: the entry
    order by sizes is ambiguous (the error names --order), the predicted one is taken."""
    done = run("convert", SQ, tmp_path / "a.ckpt", "--model", SQ_MODEL, "--order", "size", *to)
    assert done.returncode == 1 and "--order predict" in error_line(done)
    done = run("convert", SQ, tmp_path / "b.ckpt", "--model", SQ_MODEL, "--order", "predict",
               *to)
    assert done.returncode == 0, done.stderr
    micro = to[1] == "v1"
    expected = oc.convert(oc.load(SQ), to[1], dialect="onert-micro" if micro else None,
                          model=SQ_MODEL, order="predict", batch_size=1 if micro else None)
    assert (tmp_path / "b.ckpt").read_bytes() == oc.to_bytes(expected)


def test_a_batch_size_error_names_the_flag(tmp_path: Path) -> None:
    done = run("convert", ADAM, tmp_path / "m.ckpt", "--to", "v1", "--dialect", "onert-micro",
               "--model", MODEL)
    line = error_line(done)
    assert "--batch-size" in line and "batch_size=" not in line


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["info", "--modle", str(MODEL), str(SGD)], "did you mean --model?"),
        (["dump", str(SGD), "--tensr", "0"], "did you mean --tensor?"),
        (["infoo", str(SGD)], "did you mean 'info'?"),
        (["convert", str(SGD), "o.ckpt", "--to", "v33"], "did you mean 'v3'?"),
    ],
)
def test_a_mistyped_flag_or_command_gets_the_nearest_one(argv: list[str], suggestion: str,
                                                         tmp_path: Path) -> None:
    done = run(*argv, cwd=tmp_path)
    assert done.returncode == 2 and suggestion in error_line(done)


def test_an_unknown_flag_with_nothing_near_gets_no_guess() -> None:
    done = run("info", "--zzzzzz", SGD)
    assert done.returncode == 2 and "did you mean" not in error_line(done)


# diff of an onert file against its onert-micro conversion ----------------------------------------


def test_diff_across_dialects_without_the_model_hints_at_it(tmp_path: Path) -> None:
    micro = tmp_path / "micro.ckpt"
    done = run("convert", ADAM, micro, "--to", "v1", "--dialect", "onert-micro", "--model",
               MODEL, "--batch-size", "1")
    assert done.returncode == 0, done.stderr
    plain = run("diff", ADAM, micro)
    assert plain.returncode == 1 and "hint: " in plain.stdout and "--model" in plain.stdout
    as_json = json.loads(run("diff", "--json", ADAM, micro).stdout)
    assert "--model" in as_json["hint"]
    named = run("diff", "--model", MODEL, ADAM, micro)
    assert named.returncode == 0 and "hint" not in named.stdout
    assert "equal" in named.stdout.splitlines()[-1]
    same = run("diff", ADAM, ADAM)  # files that pair up: no hint
    assert same.returncode == 0 and "hint" not in same.stdout


# one tensor out, and values as JSON ----------------------------------------------------------


@pytest.mark.parametrize("source", [ADAM, SGD])
def test_export_one_tensor_to_npy_is_the_inverse_of_edit_replace(
    tmp_path: Path, source: Path
) -> None:
    npy = tmp_path / "w1.npy"
    done = run("export", source, npy, "--tensor", "w1", "--model", MODEL)
    assert done.returncode == 0, done.stderr
    assert "float32[3, 8]" in done.stdout
    arr = np.load(npy)
    assert np.array_equal(arr, np.asarray(oc.load(source, model=MODEL)["w1"]))
    back = tmp_path / "back.ckpt"
    done = run("edit", source, back, "--model", MODEL, "--replace", f"w1={npy}")
    assert done.returncode == 0, done.stderr
    assert back.read_bytes() == source.read_bytes()  # the same values: the same file
    assert [p.name for p in tmp_path.iterdir() if "tmp" in p.name] == []


def test_export_one_slot_entry(tmp_path: Path) -> None:
    done = run("export", ADAM, tmp_path / "m.npy", "--tensor", "b1", "--slot", "m",
               "--model", MODEL)
    assert done.returncode == 0, done.stderr
    m = oc.load(ADAM, model=MODEL).slot("m", "b1")
    assert np.array_equal(np.load(tmp_path / "m.npy"), np.asarray(m))
    missing = run("export", SGD, tmp_path / "x.npy", "--tensor", "3", "--slot", "m")
    assert missing.returncode == 2 and "no_such_slot" in error_line(missing)


@pytest.mark.parametrize(
    "argv",
    [["--tensor", "w1"], ["--slot", "m"]],
)
def test_one_entry_needs_tensor_and_an_npy_name(tmp_path: Path, argv: list[str]) -> None:
    done = run("export", ADAM, tmp_path / "x.safetensors", *argv)
    assert done.returncode == 2 and "--tensor" in error_line(done)


def test_dump_json_prints_values_without_layout() -> None:
    done = run("dump", "--json", SGD, "--model", MODEL, "--tensor", "w1")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (entry,) = out["entries"]
    assert (entry["name"], entry["dtype"], entry["shape"]) == ("w1", "float32", [3, 8])
    expected = np.asarray(oc.load(SGD, model=MODEL)["w1"])
    assert np.array_equal(np.array(entry["values"], np.float32), expected)
    raw = json.loads(run("dump", "--json", SGD, "--tensor", "3", "--limit", "5").stdout)
    assert raw["entries"][0]["raw"] is True and len(raw["entries"][0]["values"]) == 5


# the model found by convention, and said -------------------------------------------------------


def test_the_model_beside_the_checkpoint_is_used_and_named(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "run.ckpt")
    shutil.copy(MODEL, tmp_path / "run.circle")
    done = run("info", tmp_path / "run.ckpt")
    assert done.returncode == 0, done.stderr
    assert f"model      {tmp_path / 'run.circle'} (beside the checkpoint)" in done.stdout
    assert "w1" in done.stdout
    desc = json.loads(run("info", "--json", tmp_path / "run.ckpt").stdout)
    assert desc["model"] == {"path": str(tmp_path / "run.circle"),
                             "found": "beside the checkpoint"}
    assert desc["tensors"][2]["name"] == "w1"


def test_the_environment_names_the_model_when_none_is_beside(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "run.ckpt")
    done = run("dump", tmp_path / "run.ckpt", "--tensor", "w1",
               env={"ONERT_CKPT_MODEL": str(MODEL)})
    assert done.returncode == 0 and "entry 2 w1 weights float32 [3, 8]" in done.stdout
    info = run("info", tmp_path / "run.ckpt", env={"ONERT_CKPT_MODEL": str(MODEL)})
    assert f"model      {MODEL} ($ONERT_CKPT_MODEL)" in info.stdout


def test_the_model_beside_the_checkpoint_wins_over_the_environment(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "run.ckpt")
    shutil.copy(MODEL, tmp_path / "run.circle")
    env = {"ONERT_CKPT_MODEL": str(SQ_MODEL)}  # another checkpoint's model: not used
    done = run("info", tmp_path / "run.ckpt", env=env)
    assert done.returncode == 0, done.stderr
    assert f"model      {tmp_path / 'run.circle'} (beside the checkpoint)" in done.stdout


def test_a_checkpoint_named_circle_is_not_its_own_model(tmp_path: Path) -> None:
    """``run.circle`` holding a checkpoint: the name beside it is its own, so no model is
    found (not the checkpoint read as a circle model)."""
    shutil.copy(ADAM, tmp_path / "run.circle")
    done = run("info", tmp_path / "run.circle")
    assert done.returncode == 0, done.stderr
    assert "model " not in done.stdout and "adam" in done.stdout


def test_the_model_flag_wins_and_no_model_means_none(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "run.ckpt")
    shutil.copy(SQ_MODEL, tmp_path / "run.circle")  # beside, but not this checkpoint's
    done = run("info", "--model", MODEL, tmp_path / "run.ckpt")
    assert done.returncode == 0 and f"model      {MODEL}\n" in done.stdout
    bare = run("info", ADAM)
    assert bare.returncode == 0 and "model " not in bare.stdout
    assert "model" not in json.loads(run("info", "--json", ADAM).stdout)


def test_a_model_found_by_convention_that_does_not_fit_is_named(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "run.ckpt")
    shutil.copy(SQ_MODEL, tmp_path / "run.circle")
    done = run("info", tmp_path / "run.ckpt")
    line = error_line(done)
    assert done.returncode == 1 and "model_mismatch" in line
    assert f"{tmp_path / 'run.circle'} (beside the checkpoint)" in line


def test_no_model_reads_without_the_one_found(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "run.ckpt")
    shutil.copy(SQ_MODEL, tmp_path / "run.circle")  # beside, but another model's
    found = run("info", tmp_path / "run.ckpt")
    assert found.returncode == 1 and "--no-model" in error_line(found)
    done = run("info", "--no-model", tmp_path / "run.ckpt")
    assert done.returncode == 0 and "model " not in done.stdout
    both = run("info", "--no-model", "--model", MODEL, tmp_path / "run.ckpt")
    assert both.returncode == 2 and "usage_error" in error_line(both)


def test_validate_reads_each_file_through_its_own_model(tmp_path: Path) -> None:
    shutil.copy(ADAM, tmp_path / "a.ckpt")
    shutil.copy(MODEL, tmp_path / "a.circle")
    shutil.copy(SQ, tmp_path / "b.ckpt")
    shutil.copy(SQ_MODEL, tmp_path / "b.circle")
    done = run("validate", tmp_path / "a.ckpt", tmp_path / "b.ckpt")
    assert done.returncode == 0, done.stdout + done.stderr
    missing = run("validate", "--model", tmp_path / "absent.circle", tmp_path / "a.ckpt")
    assert missing.returncode == 2 and "absent.circle" in error_line(missing)


# small ones ----------------------------------------------------------------------------------


def test_an_unknown_slot_is_an_error_naming_it() -> None:
    ckpt = oc.load(ADAM, model=MODEL)
    with pytest.raises(oc.CheckpointError) as err:
        ckpt.slot("x", "w1")
    assert err.value.code == "unknown_slot" and "'x'" in str(err.value)
    assert "'m', 'v'" in str(err.value)
    with pytest.raises(oc.CheckpointError) as err:
        oc.load(SGD).slot("m", 0)
    assert err.value.code == "unknown_slot"
    with pytest.raises(KeyError):
        ckpt.slot("m", "nope")  # a tensor no entry has: as ckpt["nope"]


def test_info_text_and_json_say_the_same_dialect() -> None:
    text = run("info", ADAM).stdout
    desc = json.loads(run("info", "--json", ADAM).stdout)
    assert desc["dialect"] is None and "null in --json" in text


def test_the_api_reference_states_the_supported_versions() -> None:
    page = (Path(__file__).parents[2] / "docs" / "api.md").read_text()
    assert f"`{oc.SUPPORTED_VERSIONS}`" in page


def test_readme_and_help_give_one_completion_path() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    done = run("completion", "--help")
    for line in done.stdout.splitlines():
        if "completion bash >" in line:
            assert line.strip().split("> ")[1] in readme
            break
    else:
        raise AssertionError("completion --help shows no bash example")


def test_the_site_folder_is_ignored() -> None:
    ignore = (Path(__file__).parents[2] / ".gitignore").read_text().split()
    assert "site/" in ignore


def test_a_mistyped_tensor_name_in_dump_gets_the_nearest_one() -> None:
    done = run("dump", "--tensor", "w00", "--model", MODEL, ADAM)
    assert done.returncode == 2
    assert "no_such_tensor" in error_line(done) and "did you mean 'w0'?" in error_line(done)
    far = run("dump", "--tensor", "zzzz", "--model", MODEL, ADAM)
    assert "no_such_tensor" in error_line(far) and "did you mean" not in error_line(far)


def test_a_two_character_name_gets_the_names_one_character_away() -> None:
    ckpt = oc.load(ADAM, model=MODEL)
    with pytest.raises(KeyError, match=r"did you mean 'w1' or 'w0'\?"):
        ckpt["w2"]
    with pytest.raises(KeyError, match="none of the 4 names is close"):
        ckpt["zz"]


def test_a_data_checksum_error_gets_no_model_hint(tmp_path: Path) -> None:
    shutil.copy(MODEL, tmp_path / "a.circle")
    assert run("convert", "--model", MODEL, "--to", "v3", ADAM, tmp_path / "a.ckpt").returncode == 0
    body = bytearray((tmp_path / "a.ckpt").read_bytes())
    weights = oc.load(ADAM)[0].raw.tobytes()
    at = body.find(weights)
    assert at > 0
    body[at] ^= 0xFF
    (tmp_path / "b.ckpt").write_bytes(bytes(body))
    done = run("diff", tmp_path / "a.ckpt", tmp_path / "b.ckpt")
    line = error_line(done)
    assert done.returncode == 1 and "checksum" in line
    assert "beside the checkpoint" not in line and "--no-model" not in line
