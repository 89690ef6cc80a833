"""Writing in one forward pass (docs/saving.md, "Writing in one forward pass"): ``save_stream``
to a pipe or a file object that cannot seek, and ``save(..., forward_only=True)``.

Every checksum is computed in a read pass over the data before the first byte is written, then
each byte goes out once, in order: the bytes equal ``to_bytes`` for schema 1, WOF, schema 2 and
schema 3 with its per-block checksums; nothing is written at an offset (``seek``, ``tell``,
``fileno`` and ``os.pwrite`` raise here); content errors come before the first byte.
"""

from __future__ import annotations

import io
import os
import threading

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.container import write as container_write

#: (revision, dialect, data_block_size): every layout, schema 3 with many blocks (4 KiB) and
#: a range_index section of groups of 16 (SPEC.md 7.5), the default blocks and none
LAYOUTS = [
    ("v1", "onert", None),
    ("v1", "onert-micro", None),
    ("wof", None, None),
    ("v2", None, None),
    ("v3", None, 4096),
    ("v3", None, None),
    ("v3", None, 0),
]
IDS = [
    "v1-onert",
    "v1-micro",
    "wof",
    "v2",
    "v3-blocks-4k-index",
    "v3-blocks-default",
    "v3-no-blocks",
]


def content(revision: str, block_size: int | None) -> oc.Checkpoint:
    """About 700 KB (more than a pipe's buffer): tensors of mixed sizes, Adam's m and v but for
    WOF (weights only), step and epoch."""
    rng = np.random.default_rng(7)
    sizes = [3, 70_000, 16, 100_000, 1, 4096, 51_000, 0, 2]
    tensors = [oc.Tensor(i, rng.standard_normal(n).astype(np.float32).view(np.uint8))
               for i, n in enumerate(sizes)]  # bytes: no dtype for v1 and WOF to drop
    opt = None
    if revision != "wof":
        opt = oc.Optimizer("adam")
        for s, slot in enumerate(("m", "v")):
            opt.slots[slot] = {
                t.index: oc.Buffer(t.index, (t.raw.view(np.float32) * (s + 2)).copy())
                for t in tensors
            }
    state = oc.TrainingState() if revision == "wof" else oc.TrainingState(step=9, epoch=2)
    ckpt = oc.Checkpoint(tensors, opt, state)
    ckpt.layout.data_block_size = block_size
    if block_size == 4096:
        ckpt.layout.range_index_group = 16
    return ckpt


def options(revision: str, dialect: str | None) -> dict[str, object]:
    return {"revision": revision} if dialect is None else {"revision": revision, "dialect": dialect}


class NoSeek:
    """A file object that only appends, taking at most 5,000 bytes per call (as a raw file
    may); everything positional raises."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.flushed = 0

    def write(self, b: object) -> int:
        view = memoryview(b).cast("B")[:5000]  # type: ignore[arg-type]
        self.data += view
        return len(view)

    def flush(self) -> None:
        self.flushed += 1

    def _positional(self, *args: object) -> None:
        raise AssertionError("a forward-only write moved the file position")

    seek = tell = fileno = truncate = pwrite = _positional


@pytest.mark.parametrize(("revision", "dialect", "block_size"), LAYOUTS, ids=IDS)
def test_save_stream_through_a_pipe_equals_to_bytes(revision, dialect, block_size):
    ckpt = content(revision, block_size)
    want = oc.to_bytes(ckpt, **options(revision, dialect))
    r, w = os.pipe()
    received = bytearray()

    def drain() -> None:
        with os.fdopen(r, "rb", buffering=0) as src:
            while piece := src.read(1 << 16):
                received.extend(piece)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        with os.fdopen(w, "wb") as sink:
            written = oc.save_stream(ckpt, sink, **options(revision, dialect))
    finally:
        reader.join()
    assert len(want) > 1 << 16  # the pipe filled: the writer waited for the reader
    assert written == len(want)
    assert bytes(received) == want


@pytest.mark.parametrize(("revision", "dialect", "block_size"), LAYOUTS, ids=IDS)
def test_save_stream_to_a_file_object_that_cannot_seek(revision, dialect, block_size, monkeypatch):
    ckpt = content(revision, block_size)
    want = oc.to_bytes(ckpt, **options(revision, dialect))
    monkeypatch.setattr(os, "pwrite", NoSeek._positional)
    out = NoSeek()
    seen: list[int] = []
    assert oc.save_stream(ckpt, out, progress=seen.append, **options(revision, dialect)) == len(
        want
    )
    assert bytes(out.data) == want
    assert sum(seen) == len(want) and out.flushed == 1


@pytest.mark.parametrize(("revision", "dialect", "block_size"), LAYOUTS, ids=IDS)
def test_save_forward_only_writes_no_byte_at_an_offset(
    revision, dialect, block_size, tmp_path, monkeypatch
):
    """save(..., forward_only=True): the temporary file is written in order, never at an
    offset, and replaces the target atomically as any save does."""
    ckpt = content(revision, block_size)
    want = oc.to_bytes(ckpt, **options(revision, dialect))
    target = tmp_path / "out.ckpt"
    target.write_bytes(b"old")
    monkeypatch.setattr(os, "pwrite", NoSeek._positional)
    oc.save(ckpt, target, forward_only=True, **options(revision, dialect))
    assert target.read_bytes() == want


def test_the_normal_save_patches_so_the_forward_checks_can_fail(tmp_path, monkeypatch):
    """The check above is not vacuous: the normal save of schema 3 writes its header (and the
    per-block checksums) at offsets once the data are out."""
    monkeypatch.setattr(os, "pwrite", NoSeek._positional)
    with pytest.raises(AssertionError, match="moved the file position"):
        oc.save(content("v3", 4096), tmp_path / "out.ckpt")


@pytest.mark.parametrize(
    ("forward", "passes"), [(True, 2), (False, 1)], ids=["forward-only", "patching"]
)
def test_passes_over_the_data(tmp_path, monkeypatch, forward, passes):
    """Forward only, schema 3's data are gone over twice: one read for the data section's and
    every block's checksum (summed together), one write; the patching save once, its
    checksums summed beside the write."""
    calls = []
    pieces = container_write._pieces

    def counted(*args, **kwargs):
        calls.append(1)
        return pieces(*args, **kwargs)

    monkeypatch.setattr(container_write, "_pieces", counted)
    oc.save(content("v3", 4096), tmp_path / "out.ckpt", forward_only=forward)
    assert len(calls) == passes


def test_content_errors_come_before_the_first_byte():
    named = oc.Checkpoint([oc.Tensor(0, np.zeros(4, np.float32), name="w")])
    out = NoSeek()
    with pytest.raises(oc.CheckpointError) as err:
        oc.save_stream(named, out, revision="v1")
    assert err.value.code == "not_representable"
    assert out.data == b"" and out.flushed == 0


def test_a_failed_data_check_of_the_source_comes_before_the_first_byte(tmp_path):
    """An unverified load whose data are corrupt: the check runs, and fails, before a byte of
    the new file is written."""
    good = oc.to_bytes(content("v3", None), revision="v3")
    bad = bytearray(good)
    bad[-5] ^= 1  # a data byte
    path = tmp_path / "bad.ckpt"
    path.write_bytes(bad)
    out = NoSeek()
    with pytest.raises(oc.CheckpointError):
        oc.save_stream(oc.load(path, verify_data=False), out)
    assert out.data == b""


class Quiet:
    """A file-like whose write takes everything and returns nothing."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, b: object) -> None:
        self.data += memoryview(b).cast("B")  # type: ignore[arg-type]


class Stuck(io.RawIOBase):
    """A raw file that takes nothing: non-blocking (None) or refusing (0)."""

    def __init__(self, result: int | None) -> None:
        self.result = result

    def writable(self) -> bool:
        return True

    def write(self, b: object) -> int | None:  # type: ignore[override]
        return self.result


def test_a_file_like_that_returns_nothing_took_everything():
    ckpt = content("v3", None)
    out = Quiet()
    assert oc.save_stream(ckpt, out) == len(out.data)  # type: ignore[arg-type]
    assert bytes(out.data) == oc.to_bytes(ckpt)


@pytest.mark.parametrize(("result", "error"), [(None, BlockingIOError), (0, OSError)])
def test_a_raw_file_that_takes_nothing_raises_not_hangs(result, error):
    with pytest.raises(error):
        oc.save_stream(content("v2", None), Stuck(result), revision="v2")


def test_a_closed_pipe_raises(tmp_path):
    """The reader went away: the error reaches the caller (what was sent stays sent)."""
    r, w = os.pipe()
    os.close(r)
    with os.fdopen(w, "wb", buffering=0) as sink, pytest.raises(BrokenPipeError):
        oc.save_stream(content("v2", None), sink, revision="v2")


@pytest.mark.parametrize(("revision", "dialect", "block_size"), LAYOUTS, ids=IDS)
def test_what_a_reader_makes_of_a_prefix(revision, dialect, block_size):
    """A stream cut short (docs/saving.md): schema 2 and 3 record the file's length in the
    header and schema 1 its footer's place, so a prefix is refused; WOF records neither, and a
    prefix that ends inside its last entry reads as a shorter last entry (the count
    ``save_stream`` returns is the receiver's check)."""
    whole = oc.to_bytes(content(revision, block_size), **options(revision, dialect))
    last = oc.load(whole).tensors[-1]
    assert last.offset is not None
    cuts = [0, 1, 63, 64, 65, len(whole) // 3, len(whole) // 2, len(whole) - 9, len(whole) - 1]
    for cut in cuts:
        if revision == "wof" and cut > last.offset:
            shorter = oc.load(whole[:cut]).tensors[-1]
            assert shorter.nbytes == cut - last.offset < last.nbytes
            continue
        with pytest.raises(oc.CheckpointError):
            oc.load(whole[:cut])
