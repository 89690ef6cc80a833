"""The real onert-micro runtime trains from schema 3 through the C kit, bit for bit as from its own
checkpoint.

Two paths from one checkpoint the runtime wrote (schema 1, onert-micro dialect: K steps of its
own training, or the shipped ``real-files/ckpt_*.bin``):

* the runtime's own: ``loadCheckpoint`` of the schema-1 file, J training steps,
  ``saveCheckpoint`` (this project's driver.cpp);
* ours: the file converted to schema 3 (``onert-ckpt convert --to v3``), read by the C kit's
  streaming reader straight into the runtime's training buffers (the weights in the model
  buffer, Adam's m and v in the runtime's Adam object, step and epoch), the same J steps, saved
  through the C kit's writer as schema 3 (schema3_driver.cpp).

Both must end with the same bits: ours converted back to schema 1 is byte for byte the runtime's
file, and the library reads the same weights, m, v, step and epoch from both. The stream never
hands the driver more than its small state holds at a time, the load's heap is Adam's state
and a few bytes per record (no copy of the file), and a file with one corrupt data
byte is refused before a byte reaches the runtime.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from micro.peer import MicroPeer, RunResult, find_sources
from micro.scenarios import MODELS
from micro.schema3 import build_schema3_driver

import onert_checkpoint as oc
from tests.shared_build import built_once

pytestmark = pytest.mark.interop

REPO_ROOT = Path(__file__).resolve().parents[2]
KINDS = ("sgd", "adam")
K, J = 3, 4  # the runtime's steps before the checkpoint, and the steps after it
NAMES = ("fc2", "fc3", "fc6", "fc3r")


@pytest.fixture(scope="session")
def schema3_driver(
    micro_driver: Path, pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """schema3_driver.cpp linked with the runtime (the objects built for ``micro_driver``) and
    the C kit's reader and writer."""
    folder = find_sources(REPO_ROOT)
    if folder is None:
        pytest.skip(
            "the onert-micro folder is missing (../shared/reference/onert-micro next "
            "to the checkout, or ONERT_MICRO_DIR)"
        )
    return built_once(
        pytestconfig,
        tmp_path_factory,
        "schema3",
        lambda out: build_schema3_driver(folder, micro_driver.parent, out),
    )


#: a cache for a small device: 2 lines of 16 bytes (the default is 8 lines of 64)
SMALL_CACHE = ("-DOCKPT_STREAM_LINES=2u", "-DOCKPT_STREAM_LINE=16u")


@pytest.fixture(scope="session")
def small_cache_driver(
    micro_driver: Path, pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """schema3_driver.cpp with the kit's stream cache cut to SMALL_CACHE."""
    folder = find_sources(REPO_ROOT)
    if folder is None:
        pytest.skip("the onert-micro folder is missing")
    return built_once(
        pytestconfig,
        tmp_path_factory,
        "schema3-small",
        lambda out: build_schema3_driver(folder, micro_driver.parent, out, SMALL_CACHE),
    )


#: The per-block checksums' block size of the schema-3 files the driver loads: a buffer a small
#: device affords (the library's default is 64 KiB), the driver's one block buffer.
BLOCK = 256


def _convert(src: Path, dst: Path, to: str, block: int | None = BLOCK) -> None:
    """``onert-ckpt convert``; a schema-3 result is then written with ``block``-byte blocks."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "onert_checkpoint",
            "convert",
            "--no-progress",
            str(src),
            str(dst),
            "--to",
            to,
        ],
        check=True,
        capture_output=True,
    )
    if to == "v3" and block is not None:
        ckpt = oc.load(dst)
        ckpt.layout.data_block_size = block
        dst.write_bytes(oc.to_bytes(ckpt, revision="v3"))


def _ours(
    exe: Path,
    folder: Path,
    *,
    model: Path,
    opt: str,
    batch: int,
    load: Path,
    data: tuple[Path, Path] | None = None,
    steps: int = 0,
    save: Path | None = None,
    check: bool = True,
) -> RunResult:
    argv = [
        str(exe),
        "--model",
        str(model),
        "--opt",
        opt,
        "--batch",
        str(batch),
        "--load",
        str(load),
        "--steps",
        str(steps),
    ]
    if data is not None:
        argv += ["--x", str(data[0]), "--y", str(data[1])]
    if save is not None:
        argv += ["--save", str(save)]
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60, check=False)
    result = RunResult(done.returncode, done.stdout, done.stderr)
    if check and done.returncode != 0:
        raise AssertionError(
            f"schema3_driver failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return result


def _same_content(theirs: oc.Checkpoint, ours: oc.Checkpoint) -> None:
    """Weights, m, v (by entry index, bit for bit), step and epoch."""
    assert [t.index for t in theirs.tensors] == [t.index for t in ours.tensors]
    for a, b in zip(theirs.tensors, ours.tensors):
        assert a.raw.tobytes() == b.raw.tobytes(), f"weights of entry {a.index} differ"
    assert (theirs.optimizer is None) == (ours.optimizer is None)
    if theirs.optimizer is not None and ours.optimizer is not None:
        assert theirs.optimizer.kind == ours.optimizer.kind
        for slot in theirs.optimizer.slots:
            mine = ours.optimizer.slots[slot]
            for i, buf in theirs.optimizer.slots[slot].items():
                assert buf.raw.tobytes() == mine[i].raw.tobytes(), f"{slot}[{i}] differs"
    assert theirs.state == ours.state


def _start(micro: MicroPeer, name: str, kind: str) -> tuple[Path, int, tuple[Path, Path], Path]:
    """The model, batch and data of ``name``, and a schema-1 checkpoint the runtime wrote: K steps
    of its own training, or its shipped file (``real-files``)."""
    if name == "real-files":
        files = find_sources(REPO_ROOT)
        assert files is not None
        model = micro.file("m.circle", (files / "real-files" / "fc2.circle").read_bytes())
        rng = np.random.default_rng(5)
        data = (
            micro.file("x.f32", rng.standard_normal((6, 4)).astype(np.float32)),
            micro.file("y.f32", rng.standard_normal((6, 2)).astype(np.float32)),
        )
        start = micro.file("start.ckpt", (files / "real-files" / f"ckpt_{kind}.bin").read_bytes())
        return model, 2, data, start
    sc = MODELS[name]
    model, data = sc.files(micro)
    start = micro.folder / "start.ckpt"
    micro.run(model=model, opt=kind, batch=sc.batch, data=data, steps=K, save=start)
    return model, sc.batch, data, start


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", (*NAMES, "real-files"))
def test_trains_from_schema_3_as_from_its_own_checkpoint(
    micro, schema3_driver, name: str, kind: str
) -> None:
    model, batch, data, start = _start(micro, name, kind)
    folder = micro.folder
    # the runtime's own path
    theirs = folder / "theirs.ckpt"
    micro.run(model=model, opt=kind, batch=batch, load=start, data=data, steps=J, save=theirs)
    # ours: schema 3 in, streamed into the runtime, trained, written by the C kit
    start3, ours3, ours1 = folder / "start.ckpt3", folder / "ours.ckpt3", folder / "ours.ckpt"
    _convert(start, start3, "v3")
    done = _ours(
        schema3_driver,
        folder,
        model=model,
        opt=kind,
        batch=batch,
        load=start3,
        data=data,
        steps=J,
        save=ours3,
    )
    assert oc.load(ours3).revision == "v3"
    _convert(ours3, ours1, "v1")
    assert ours1.read_bytes() == theirs.read_bytes()
    _same_content(oc.load(theirs), oc.load(ours3))

    # what went through the stream: every rule but B6 without a data byte, then each trained
    # array copied once, each block verified on the way, never more than the reader's fixed
    # state at a time: the file read about once (the blocks at the ends of a range twice at
    # most, when the copies jump between the weights, m and v)
    expected = oc.load(start3)
    arrays = sum(t.raw.nbytes for t in expected.tensors)
    size = start3.stat().st_size
    assert done.value("load", "block_size") == BLOCK
    assert done.value("load", "copied") == arrays * (3 if kind == "adam" else 1)
    assert done.value("load", "largest_read") <= done.value("load", "stream_state")
    ranges = 3 * len(expected.tensors)
    copied, data_bytes = done.value("load", "copied"), done.value("load", "data_bytes")
    # every range is copied, so the data section less the copies is the padding between them:
    # the read itself reads of the data section at most that, where a read that checks every
    # block reads all of it
    assert done.value("load", "validation_data_bytes") <= data_bytes - copied < data_bytes
    # the whole load: each data byte once, the blocks at the ends of a range at most twice
    assert copied <= done.value("load", "load_data_bytes") <= data_bytes + 2 * BLOCK * ranges
    assert size >= data_bytes
    # and no copy of the file: the load's heap is Adam's m and v (the runtime's state, as its own
    # loader allocates them) plus the driver's per-record bookkeeping and its block buffer
    moments = 2 * arrays if kind == "adam" else 0
    assert moments <= done.value("load", "heap_peak") <= moments + 4096


@pytest.mark.parametrize("kind", KINDS)
def test_saved_straight_back_is_the_same_file(micro, schema3_driver, kind: str) -> None:
    """Loaded and written again without training: the C kit's writer gives back the file the
    library wrote (records, data order, slots, state, origin, the per-block checksums at the
    loaded file's block size), so nothing is lost on the way."""
    model, batch, _, start = _start(micro, "fc6", kind)
    start3, again = micro.folder / "start.ckpt3", micro.folder / "again.ckpt3"
    _convert(start, start3, "v3")
    _ours(schema3_driver, micro.folder, model=model, opt=kind, batch=batch, load=start3, save=again)
    written = oc.load(start3)
    assert written.layout.data_block_size == BLOCK
    assert again.read_bytes() == oc.to_bytes(written) == start3.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_a_corrupt_data_byte_is_refused_before_training(micro, schema3_driver, kind: str) -> None:
    """One flipped bit in the first weight's data: the verifying copy refuses the file with the
    code, field and offset the library reports (block_checksum, the block's CRC, its first byte)
    before a byte of that block reaches the runtime, and nothing is trained or saved."""
    model, batch, data, start = _start(micro, "fc2", kind)
    start3 = micro.folder / "start.ckpt3"
    _convert(start, start3, "v3")
    raw = bytearray(start3.read_bytes())
    weights = oc.load(start).tensors[0].raw.tobytes()
    at = raw.find(weights)
    assert at > 0
    raw[at] ^= 1
    bad = micro.file("bad.ckpt3", bytes(raw))
    with pytest.raises(oc.CheckpointError) as caught:
        ckpt = oc.load(bytes(raw))
        for t in ckpt.tensors:
            t.raw.tobytes()
    out = micro.folder / "never.ckpt3"
    done = _ours(
        schema3_driver,
        micro.folder,
        model=model,
        opt=kind,
        batch=batch,
        load=bad,
        data=data,
        steps=J,
        save=out,
        check=False,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    refused = done.stdout.splitlines()[-1].split()
    assert refused[:2] == ["load", "refused"]
    fields = dict(w.split("=", 1) for w in refused[2:])
    error = caught.value
    assert (fields["code"], fields["field"], int(fields["offset"])) == (
        error.code,
        error.field,
        error.offset,
    )
    assert "train" not in done.stdout and not out.exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_small_cache_trains_the_same(
    micro, schema3_driver, small_cache_driver, kind: str
) -> None:
    """The stream cache is the load's only buffer and a compile-time choice: with 2 lines of 16
    bytes (a state of a few hundred bytes) the load asks the callback for at most 16 bytes at a
    time and the run ends with the same file as with the default cache; the file's blocks are
    the smallest the format allows (64 bytes), the driver's block buffer with them."""
    model, batch, data, start = _start(micro, "fc3", kind)
    start3 = micro.folder / "start.ckpt3"
    _convert(start, start3, "v3", block=64)
    outs = []
    for exe, name in ((schema3_driver, "default"), (small_cache_driver, "small")):
        out = micro.folder / f"{name}.ckpt3"
        done = _ours(
            exe,
            micro.folder,
            model=model,
            opt=kind,
            batch=batch,
            load=start3,
            data=data,
            steps=J,
            save=out,
        )
        outs.append((done, out.read_bytes()))
    (default, default_bytes), (small, small_bytes) = outs
    assert small_bytes == default_bytes
    assert small.value("load", "largest_read") <= 16
    assert small.value("load", "stream_state") <= default.value("load", "stream_state") - 448
