"""Loss judged with the model: converting a named schema-3 file to schema 1
with its circle model given drops no content when binding the schema-1 output to that model
gives back every tensor's name, dtype, shape and circle index. Without the model, or with one
that gives back something else, those are still a loss. Run through the real command line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
RUN = DATA / "fc3-adam-step12.ckpt"
MODEL = DATA / "fc3.circle"


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def named_v3(tmp_path: Path) -> Path:
    """run3.ckpt: the real onert export as schema 3, named by its model (the CLI's upgrade)."""
    out = tmp_path / "run3.ckpt"
    done = cli("convert", RUN, out, "--to", "v3", "--model", MODEL, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert oc.load(out)[0].name is not None
    return out


def test_loss_with_model_restored_annotations_are_no_loss(tmp_path: Path) -> None:
    run3 = named_v3(tmp_path)
    run1 = tmp_path / "run1.ckpt"
    done = cli("convert", run3, run1, "--to", "v1", "--model", MODEL, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    assert run1.read_bytes() == RUN.read_bytes()


def test_loss_with_model_found_beside_the_file_is_no_loss(tmp_path: Path) -> None:
    run3 = named_v3(tmp_path)
    shutil.copy(MODEL, tmp_path / "run3.circle")  # the model found beside the checkpoint
    run1 = tmp_path / "run1.ckpt"
    done = cli("convert", run3, run1, "--to", "v1", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert run1.read_bytes() == RUN.read_bytes()


def test_loss_without_model_annotations_are_a_loss(tmp_path: Path) -> None:
    run3 = named_v3(tmp_path)
    run1 = tmp_path / "run1.ckpt"
    done = cli("convert", run3, run1, "--to", "v1", "--no-model", "--no-progress")
    assert done.returncode == 1
    assert "not_representable" in done.stderr and "tensor names" in done.stderr
    assert not run1.exists()


def test_loss_with_model_a_name_it_does_not_give_back_is_a_loss(tmp_path: Path) -> None:
    ckpt = oc.load(named_v3(tmp_path))
    ckpt[0].name = "renamed"
    renamed = tmp_path / "renamed.ckpt"
    oc.save(ckpt, renamed)
    run1 = tmp_path / "run1.ckpt"
    done = cli("convert", renamed, run1, "--to", "v1", "--model", MODEL, "--no-progress")
    assert done.returncode == 1
    assert "not_representable" in done.stderr and "tensor names" in done.stderr
    assert not run1.exists()


def test_loss_with_another_model_annotations_are_a_loss(tmp_path: Path) -> None:
    run3 = named_v3(tmp_path)
    run1 = tmp_path / "run1.ckpt"
    done = cli("convert", run3, run1, "--to", "v1", "--model", DATA / "fc2.circle",
               "--no-progress")
    assert done.returncode == 1
    assert "not_representable" in done.stderr and "tensor names" in done.stderr
    assert not run1.exists()
