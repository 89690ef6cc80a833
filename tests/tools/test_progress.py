"""Every long write shows a progress bar on a terminal, and its first estimate is sane.

The commands run as ``python -m onert_checkpoint`` with stderr on a pseudo-terminal (what a
user's terminal is to them), on a checkpoint past the 64 MiB threshold; the bar tqdm draws is
read back from the terminal: its estimates of the time left must be those of the write (seconds
on any machine for 80 MiB), never the hundreds of hours a rate measured from before the first
byte gives. Off a terminal no bar is drawn.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

MIB = 1 << 20


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(1)
    tensors = [oc.Tensor(i, rng.standard_normal(5 * MIB, dtype=np.float32)) for i in range(4)]
    ckpt = folder / "big.ckpt"
    # schema 1 keeps no dtype or shape (the arrays give both): dropped, as the test means
    oc.save(oc.Checkpoint(tensors, oc.Optimizer("sgd"), dialect="onert"), ckpt, revision="v1",
            allow_lossy=True)
    st = folder / "big.safetensors"
    oc.to_safetensors(oc.load(ckpt), st)
    return {"ckpt": ckpt, "safetensors": st, "folder": folder}


@pytest.fixture(scope="module")
def big_model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A circle model of four 2,300 x 2,300 float32 layers (81 MiB of weights) and a fresh
    SGD checkpoint of it, for new, edit and bake."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "interop"))
    from circle_builder import build_fc_model

    folder = tmp_path_factory.mktemp("big-model")
    model = folder / "big.circle"
    model.write_bytes(build_fc_model([2300] * 5, seed=1))
    ckpt = folder / "big.ckpt"
    oc.save(oc.new_checkpoint(model, optimizer="sgd"), ckpt)
    return {"model": model, "ckpt": ckpt}


def on_terminal(*args: object) -> tuple[int, str]:
    """Run the command with stderr on a pseudo-terminal: (exit status, what it drew)."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                            stdout=subprocess.DEVNULL, stderr=secondary, stdin=subprocess.DEVNULL)
    os.close(secondary)
    drawn = bytearray()
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(primary)
    return proc.wait(timeout=300), drawn.decode(errors="replace")


def estimates(drawn: str) -> list[int]:
    """The seconds left that each drawing of the bar shows (``[elapsed<left, rate]``)."""
    out = []
    for left in re.findall(r"<((?:\d+:)?\d+:\d+),", drawn):
        parts = [int(p) for p in left.split(":")]
        out.append(sum(p * 60**k for k, p in enumerate(reversed(parts))))
    return out


@pytest.mark.parametrize("command", ["convert", "export-safetensors", "export-npz", "import"])
def test_long_writes_draw_a_bar_with_sane_estimates(
    big: dict[str, Path], tmp_path: Path, command: str
) -> None:
    argv = {
        "convert": ["convert", big["ckpt"], tmp_path / "c.ckpt", "--to", "v3"],
        "export-safetensors": ["export", big["ckpt"], tmp_path / "e.safetensors"],
        "export-npz": ["export", big["ckpt"], tmp_path / "e.npz"],
        "import": ["import", big["safetensors"], tmp_path / "i.ckpt"],
    }[command]
    status, drawn = on_terminal(*argv)
    assert status == 0, drawn
    assert "writing:" in drawn and "100%" not in drawn.split("writing:")[0], drawn
    # every estimate drawn (a fast write may finish before tqdm draws one): the write's own,
    # the first included, never hours
    assert all(left < 120 for left in estimates(drawn)), drawn
    assert "?B/s" in drawn.split("writing:")[1] or estimates(drawn), drawn  # drawn from 0


@pytest.mark.parametrize("command", ["new", "edit", "bake"])
def test_new_edit_and_bake_draw_a_bar(
    big_model: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """The writes of new, edit and bake (81 MiB each) draw the bar as convert's does; off a
    terminal they stay silent."""
    argv = {
        "new": ["new", "--model", big_model["model"], "--optimizer", "sgd", tmp_path / "n.ckpt"],
        "edit": ["edit", big_model["ckpt"], tmp_path / "e.ckpt", "--step", "3", "--no-model"],
        "bake": ["bake", big_model["ckpt"], "--model", big_model["model"], tmp_path / "b.circle"],
    }[command]
    status, drawn = on_terminal(*argv)
    assert status == 0, drawn
    assert "writing:" in drawn and "100%" not in drawn.split("writing:")[0], drawn
    assert all(left < 120 for left in estimates(drawn)), drawn
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, argv)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_no_bar_off_a_terminal(big: dict[str, Path], tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", "export", str(big["ckpt"]),
                           str(tmp_path / "e.safetensors")], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0 and done.stderr == ""


def test_diff_of_big_files_draws_a_comparing_bar(big: dict[str, Path]) -> None:
    status, drawn = on_terminal("diff", big["ckpt"], big["ckpt"])
    assert status == 0, drawn
    assert "comparing:" in drawn, drawn
    assert all(left < 120 for left in estimates(drawn)), drawn
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", "diff", str(big["ckpt"]),
                           str(big["ckpt"])], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0 and done.stderr == ""
