"""onert-micro's own loader, patched (patch/onert-micro-schema3.patch), reads and writes schema 3.

The runtime's own API, ``OMTrainingInterpreter::loadCheckpoint`` of a schema-3 file (found by
its version byte, read through the micro reader of spec/c/micro) and ``saveCheckpoint(config,
path, 3)`` (written through the C kit's writer), trains from the runtime's own checkpoint
converted to schema 3 and ends with the bits of the unpatched runtime's schema-1 path: on the
five models of tests/interop (four FC chains trained K steps by the runtime, and its shipped
``real-files``), with SGD and Adam, J more steps; the saved schema-3 file converted to schema 1
is byte for byte the runtime's own file. The patched runtime still writes schema 1 as before.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from micro.patched import build_patched, patch_lines
from micro.peer import find_sources
from test_micro_schema3 import KINDS, NAMES, J, _convert, _same_content, _start

import onert_checkpoint as oc
from tests.shared_build import built_once

pytestmark = pytest.mark.interop

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def patched_driver(micro_driver: Path, pytestconfig: pytest.Config,
                   tmp_path_factory: pytest.TempPathFactory) -> Path:
    """driver.cpp with the runtime patched in a temporary copy (micro_driver: its skip
    reasons where the runtime cannot be built)."""
    folder = find_sources(REPO_ROOT)
    assert folder is not None
    return built_once(pytestconfig, tmp_path_factory, "onert-micro-patched",
                      lambda out: build_patched(folder, out))


def _run(exe: Path, folder: Path, model: Path, opt: str, batch: int, load: Path,
         data: tuple[Path, Path], save: Path, schema: int) -> None:
    argv = [str(exe), "--model", str(model), "--opt", opt, "--batch", str(batch), "--lr",
            "0.01", "--steps", str(J), "--train-layers", "0", "--load", str(load), "--x",
            str(data[0]), "--y", str(data[1]), "--save", str(save), "--save-schema", str(schema)]
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", (*NAMES, "real-files"))
def test_the_patched_runtime_trains_from_schema_3_as_from_schema_1(
    micro, patched_driver, name: str, kind: str
) -> None:
    model, batch, data, start = _start(micro, name, kind)
    folder = micro.folder
    theirs = folder / "theirs.ckpt"  # the unpatched runtime: schema 1 in, J steps, schema 1 out
    micro.run(model=model, opt=kind, batch=batch, load=start, data=data, steps=J, save=theirs)
    start3, ours3, ours1 = folder / "start.ckpt3", folder / "ours.ckpt3", folder / "ours.ckpt"
    _convert(start, start3, "v3")
    _run(patched_driver, folder, model, kind, batch, start3, data, ours3, 3)
    assert ours3.read_bytes()[2] == 3 and oc.load(ours3).layout.data_block_size == 256
    _same_content(oc.load(theirs), oc.load(ours3))
    _convert(ours3, ours1, "v1")
    assert ours1.read_bytes() == theirs.read_bytes()
    # the patched runtime's schema-1 path is the runtime's own
    again = folder / "again.ckpt"
    _run(patched_driver, folder, model, kind, batch, start, data, again, 1)
    assert again.read_bytes() == theirs.read_bytes()


def test_the_patch_is_small_and_adds_only():
    added, removed = patch_lines()
    assert removed == 0 and 0 < added < 400
