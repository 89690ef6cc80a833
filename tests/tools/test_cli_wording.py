"""What the command line says agrees with itself and with the loss rule: a count takes the
singular for one, a warning under ``--allow-lossy`` names only what the write really dropped
(content the given model restores is not a loss, as the refusal says), and ``diff`` names a
file's dialect as ``info`` does.

Every check runs ``python -m onert_checkpoint`` in a subprocess on the real files in tests/data.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.tools.sanity import value_warnings

DATA = Path(__file__).parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
MODEL = DATA / "fc2.circle"


def run(*args: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ONERT_CKPT_MODEL"}
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False, env=env)


@pytest.fixture(scope="module")
def named_v3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fc2 as schema 3, its records holding the names, dtypes and shapes fc2.circle gives."""
    path = tmp_path_factory.mktemp("v3") / "named.ckpt"
    oc.save(oc.load(ADAM, model=MODEL), path, revision="v3")
    return path


def test_a_count_of_one_is_singular(tmp_path: Path) -> None:
    """One NaN in a weight, one in m, one negative v: each warning says "1 ... value", two
    say "2 ... values" (the sanity messages, the validate lines and the info summary)."""
    ckpt = oc.load(ADAM, model=MODEL)
    w0, w1 = ckpt.tensors[0], ckpt.tensors[1]
    w0.data = np.where(np.arange(w0.data.size).reshape(w0.data.shape) == 0, np.nan, w0.data)
    w1.data = np.where(np.arange(w1.data.size).reshape(w1.data.shape) < 2, np.inf, w1.data)
    v = ckpt.optimizer.slots["v"][0]
    v.data = np.where(np.arange(v.data.size).reshape(v.data.shape) == 0, -1.0,
                      np.abs(v.data)).astype(np.float32)
    messages = [w.message for w in value_warnings(ckpt)]
    assert any("holds 1 NaN or infinite value (" in m for m in messages), messages
    assert any("holds 2 NaN or infinite values (" in m for m in messages), messages
    assert any("holds 1 negative value (" in m for m in messages), messages
    assert not any(" 1 NaN or infinite values" in m or "1 negative values" in m
                   for m in messages), messages

    one = tmp_path / "one.ckpt"
    oc.save(oc.Checkpoint([oc.Tensor(0, np.zeros(4, np.float32))], oc.Optimizer("sgd"),
                          dialect="onert"), one, revision="v1", allow_lossy=True)
    done = run("validate", one)
    assert done.returncode == 0 and "v1 onert, 1 tensor)" in done.stdout, done
    done = run("info", one)
    assert done.returncode == 0 and "\n1 tensor, 16 B of weights" in done.stdout, done.stdout


@pytest.mark.parametrize("command", ["convert", "edit"])
def test_allow_lossy_warns_of_nothing_the_model_restores(
    named_v3: Path, tmp_path: Path, command: str
) -> None:
    """schema 3 -> schema 1 with the model: the names, dtypes and shapes come back from the
    model, so the write is not lossy (exit 0, no flag needed) and --allow-lossy warns of
    nothing; without the model the same write drops them and says so."""
    extra = ["--step", "9"] if command == "edit" else []
    out = tmp_path / "out.ckpt"
    plain = run(command, named_v3, out, "--to", "v1", "--model", MODEL, *extra)
    assert plain.returncode == 0 and plain.stderr == "", plain
    lossy = run(command, named_v3, out, "--to", "v1", "--model", MODEL, "--allow-lossy", *extra)
    assert lossy.returncode == 0, lossy
    assert lossy.stderr == "", lossy.stderr  # before: four "dropped the tensor ..." lines
    bound = oc.load(out, model=MODEL)
    assert [t.name for t in bound.tensors] == [t.name for t in oc.load(named_v3).tensors]

    blind = run(command, named_v3, out, "--to", "v1", "--no-model", "--allow-lossy", *extra)
    assert blind.returncode == 0, blind
    assert "dropped the tensor names of entries 0, 1, 2, 3 (--allow-lossy)" in blind.stderr


def test_diff_names_the_dialect_as_info_does(named_v3: Path) -> None:
    """A schema-3 file has no dialect: info says "none", and so does the diff header (it said
    "either", the word info keeps for a schema-1 file that fits both runtimes)."""
    def info_dialect(path: Path) -> str:
        done = run("info", "--no-model", path)
        line = next(x for x in done.stdout.splitlines() if x.startswith("dialect "))
        return line.split()[1]

    done = run("diff", "--model", MODEL, ADAM, named_v3)
    header = done.stdout.splitlines()[:2]
    assert header[0].endswith(f"(v1, {info_dialect(ADAM)}, adam)"), header
    assert header[1].endswith(f"(v3, {info_dialect(named_v3)}, adam)"), header
    assert info_dialect(named_v3) == "none"
