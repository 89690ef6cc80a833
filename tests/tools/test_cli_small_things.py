"""The small frictions a new user met, each as the user met it: the real
command line (``python -m onert_checkpoint``) on the real onert exports of tests/data/real-onert.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"
MODEL = DATA / "fc2.circle"
DOCS = Path(__file__).parents[2] / "docs" / "cli.md"


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


def test_info_describes_each_of_several_files(tmp_path: Path) -> None:
    done = run("info", ADAM, SGD)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("==>")] == [
        f"==> {ADAM} <==", f"==> {SGD} <=="]
    assert done.stdout.count("revision   v1") == 2 and "optimizer  sgd" in done.stdout
    lines = run("info", "--json", ADAM, SGD).stdout.splitlines()
    assert [json.loads(line)["file"] for line in lines] == [str(ADAM), str(SGD)]
    assert json.loads(lines[0])["tensors"] == json.loads(run("info", "--json", ADAM).stdout)[
        "tensors"]
    junk = tmp_path / "junk.ckpt"
    junk.write_bytes(b"\x00" * 64)
    done = run("info", junk, SGD)
    assert done.returncode == 1 and "optimizer  sgd" in done.stdout
    assert re.match(rf"onert-ckpt: error: [a-z_]+: {re.escape(str(junk))}: ", done.stderr)


def test_edit_replace_of_float64_says_to_save_float32(tmp_path: Path) -> None:
    np.save(tmp_path / "w0.npy", np.full((8, 4), 0.1))  # float64 that float32 rounds
    done = run("edit", ADAM, tmp_path / "e.ckpt", "--model", MODEL,
               "--replace", f"w0={tmp_path / 'w0.npy'}")
    assert done.returncode == 1 and "model_mismatch" in done.stderr
    assert "save them as float32" in done.stderr and "arr.astype('float32')" in done.stderr
    assert not (tmp_path / "e.ckpt").exists()


def test_edit_replace_of_a_name_without_the_model_is_no_such_tensor(tmp_path: Path) -> None:
    np.save(tmp_path / "w0.npy", np.zeros((8, 4), np.float32))
    done = run("edit", ADAM, tmp_path / "e.ckpt", "--replace", f"w0={tmp_path / 'w0.npy'}")
    dumped = run("dump", ADAM, "--tensor", "w0")
    assert done.returncode == dumped.returncode == 2
    assert done.stderr.startswith("onert-ckpt: error: no_such_tensor: no entry 'w0'")
    assert "add --model MODEL.circle" in done.stderr
    assert done.stderr.split(": ", 2)[1] == dumped.stderr.split(": ", 2)[1]


def test_validate_names_the_tensors_of_adam_state_at_step_0_and_says_how_to_reset(
    tmp_path: Path
) -> None:
    zero = tmp_path / "step0.ckpt"
    assert run("edit", ADAM, zero, "--step", "0").returncode == 0
    done = run("validate", "--model", MODEL, zero)
    assert done.returncode == 0
    (warning,) = [line for line in done.stdout.splitlines() if "adam_state_at_step_0" in line]
    assert "m[0] ('w0')" in warning and "v[3] ('b1')" in warning
    assert "onert-ckpt edit --reset-optimizer" in warning
    fixed = tmp_path / "reset.ckpt"
    assert run("edit", zero, fixed, "--reset-optimizer").returncode == 0
    assert "warning" not in run("validate", "--model", MODEL, fixed).stdout


def test_import_of_a_checkpoint_says_to_convert(tmp_path: Path) -> None:
    done = run("import", ADAM, tmp_path / "x.ckpt")
    assert done.returncode == 2 and not (tmp_path / "x.ckpt").exists()
    assert done.stderr.startswith("onert-ckpt: error: unknown_format: ")
    assert "is already a checkpoint (v1): use convert" in done.stderr
    junk = tmp_path / "notes.txt"
    junk.write_text("hello")
    done = run("import", junk, tmp_path / "y.ckpt")
    assert "name the file .safetensors or .npz" in done.stderr and "already" not in done.stderr


def test_the_docs_say_what_dump_json_prints() -> None:
    text = " ".join(DOCS.read_text().split())
    said = re.search(r"`dump --json` without `--layout` (.*?)\.", text)
    assert said and "usage error" not in said.group(1)
    done = run("dump", "--json", "--model", MODEL, ADAM, "--limit", "2")
    assert done.returncode == 0
    entry = json.loads(done.stdout)["entries"][0]
    for key in re.findall(r"`([a-z]+)`", said.group(1) + text[said.end():said.end() + 200]):
        if key not in ("dump", "json", "layout"):
            assert key in entry, key


def test_export_tensor_error_names_the_output(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "w0.npy"
    done = run("export", ADAM, out, "--tensor", "0")
    assert done.returncode == 2 and str(out) in done.stderr
    assert ".tmp" not in done.stderr and "onert-ckpt-" not in done.stderr
    assert oc.load(ADAM).tensors[0].nbytes == 128  # the input is untouched
