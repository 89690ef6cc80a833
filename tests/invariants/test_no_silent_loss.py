"""No write loses content silently, no released checkpoint is read, nothing unverified goes out.

* one rule for every write (format/loss.py): ``save``, ``to_bytes``, ``convert``, ``import``
  and ``edit`` keep the content (``content_equal``, and schema 2's tensor records) or refuse
  with ``not_representable`` naming what would be lost, unless ``allow_lossy`` /
  ``--allow-lossy``; the command line exits 0 only when nothing was lost unasked;
* a checkpoint whose ``open`` block ended raises ``released`` on every read, copy and save, and
  the file it came from is left as it was;
* a write never puts a fresh checksum over bytes whose own checks did not pass: data loaded with
  ``verify_data=False``, a mapped file changed after its check, and data copied out of either
  (``upgrade``, ``convert``) are checked before anything is written;
* the deferred data check guards every path that hands data out or copies it
  (``to_numpy_dict``, export, ``upgrade``, ``convert``, ``save``), not only ``.data``;
* an edit made through ``ckpt.optimizer.slots[...]`` survives the slot's materialisation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.convert import needs_model
from onert_checkpoint.format.loss import check_lossless, lost_content

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"
MODEL = DATA / "fc2.circle"


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def error_code(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    prefix = "onert-ckpt: error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix):].split(":", 1)[0]


def named_v2() -> oc.Checkpoint:
    """The real onert Adam export as schema 2 with names, dtypes, shapes and model indices."""
    return oc.upgrade(oc.load(ADAM), MODEL, to="v2")


def sgd_with_slots() -> oc.Checkpoint:
    """SGD that carries m and v entries: what an import of ``optimizer: sgd`` metadata with
    ``.m``/``.v`` arrays builds."""
    ckpt = oc.load(ADAM)
    slots = {name: {i: oc.Buffer(i, np.array(b.raw)) for i, b in entries.items()}
             for name, entries in ckpt.optimizer.slots.items()}
    return oc.Checkpoint(
        tensors=[oc.Tensor(t.index, np.array(t.raw)) for t in ckpt.tensors],
        optimizer=oc.Optimizer("sgd", slots), state=dict(ckpt.state), revision="v1",
    )


# --- the one rule of every write --------------------------------------------------------------


def test_to_bytes_v1_of_sgd_with_slots_refuses_naming_the_slots() -> None:
    ckpt = sgd_with_slots()
    with pytest.raises(oc.NotRepresentableError) as info:
        oc.to_bytes(ckpt, revision="v1")
    assert info.value.code == "not_representable" and "'m', 'v'" in info.value.message
    assert "allow_lossy" in info.value.message
    lossy = oc.load(oc.to_bytes(ckpt, revision="v1", allow_lossy=True))
    assert lossy.optimizer.kind == "sgd" and not any(lossy.optimizer.slots.values())


def test_to_bytes_v1_of_named_schema2_refuses_naming_the_records() -> None:
    with pytest.raises(oc.NotRepresentableError) as info:
        oc.to_bytes(named_v2(), revision="v1")
    for what in ("names", "dtypes", "shapes", "circle indices"):
        assert f"tensor {what}" in info.value.message


def test_save_refuses_before_the_target_is_touched(tmp_path: Path) -> None:
    target = tmp_path / "t.ckpt"
    target.write_bytes(b"old")
    with pytest.raises(oc.NotRepresentableError):
        oc.save(named_v2(), target, revision="wof")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.ckpt"]


def _contents() -> dict[str, Callable[[], oc.Checkpoint]]:
    def extra_state() -> oc.Checkpoint:
        ckpt = oc.upgrade(oc.load(ADAM), to="v2")
        ckpt.state["lr"] = 0.5
        return ckpt

    def sections() -> oc.Checkpoint:
        ckpt = oc.upgrade(oc.load(SGD), to="v3")
        ckpt.layout.sections.append(oc.format.model.Section(kind=200, data=b"keep me"))
        return ckpt

    def big_step() -> oc.Checkpoint:
        ckpt = oc.upgrade(oc.load(SGD), to="v2")
        ckpt.state["step"] = 2**40
        return ckpt

    return {
        "v1-adam": lambda: oc.load(ADAM),
        "v1-sgd": lambda: oc.load(SGD),
        "v1-bound": lambda: oc.load(ADAM, model=MODEL),
        "v2-named": named_v2,
        "v3-plain": lambda: oc.upgrade(oc.load(ADAM), to="v3"),
        "sgd-with-slots": sgd_with_slots,
        "v2-extra-state": extra_state,
        "v3-sections": sections,
        "v2-step-beyond-u32": big_step,
    }


def _records(ckpt: oc.Checkpoint) -> list[tuple[object, ...]]:
    return [(t.index, t.name, t.dtype, t.shape, t.model_index) for t in ckpt.tensors]


@pytest.mark.parametrize("revision", ["v1", "wof", "v2", "v3"])
@pytest.mark.parametrize("content", sorted(_contents()))
def test_a_write_keeps_the_content_or_refuses_naming_the_loss(content: str, revision: str) -> None:
    """The rule in both directions: ``lost_content`` empty means the written file holds the
    same content (``content_equal``; schema 2 and 3 also the records and sections); otherwise
    ``to_bytes`` refuses with ``not_representable`` listing each loss."""
    ckpt = _contents()[content]()
    lost = lost_content(ckpt, revision)
    try:
        raw = oc.to_bytes(ckpt, revision=revision)
    except oc.NotRepresentableError as exc:
        # a refusal names the losses, or is a layout the target cannot hold at all, or an
        # entry indexing only the model can translate (field "dialect")
        assert exc.field == "dialect" or all(what in exc.message for what in lost), (
            lost, exc.message)
        return
    assert lost == [], f"wrote {revision} and lost {lost}"
    back = oc.load(raw)
    if revision == "wof" and ckpt.optimizer is not None and ckpt.optimizer.kind == "sgd":
        back.optimizer = oc.Optimizer("sgd")  # WOF has no optimizer: SGD without state
    assert back.content_equal(ckpt)
    if revision in ("v2", "v3") and ckpt.revision in ("v2", "v3"):
        assert _records(back) == _records(ckpt)
        assert [(s.kind, bytes(s.data)) for s in back.layout.sections] == [
            (s.kind, bytes(s.data)) for s in ckpt.layout.sections]


def test_convert_and_save_share_the_rule() -> None:
    """convert (downgrade) refuses exactly what save refuses, with the same list."""
    for make in _contents().values():
        ckpt = make()
        if ckpt.revision not in ("v2", "v3"):
            continue
        for to in ("v1", "wof"):
            lost = lost_content(ckpt, to)
            if not lost or needs_model(ckpt, to, None):
                continue  # (onert entries to WOF are refused first: they need the model)
            for write, kwargs in ((oc.convert, {"to": to}), (oc.to_bytes, {"revision": to})):
                with pytest.raises(oc.NotRepresentableError) as info:
                    write(ckpt, **kwargs)
                assert "; ".join(lost) in info.value.message


def test_check_lossless_returns_what_an_allowed_write_drops() -> None:
    ckpt = named_v2()
    assert check_lossless(ckpt, "v2") == []
    assert check_lossless(ckpt, "wof", allow_lossy=True) == lost_content(ckpt, "wof")
    assert lost_content(ckpt, "safetensors") == []


WRITES: dict[str, tuple[str, Callable[[oc.Checkpoint, Path], object]]] = {
    "save": ("v1", lambda c, d: oc.save(c, d / "o.ckpt")),
    "save --revision": ("v3", lambda c, d: oc.save(c, d / "o.ckpt", revision="v3")),
    "to_bytes": ("wof", lambda c, d: oc.to_bytes(c, revision="wof", allow_lossy=True)),
    "convert v1": ("v1", lambda c, d: oc.convert(oc.upgrade(c), "v1")),
    "convert wof": ("wof", lambda c, d: oc.convert(oc.upgrade(c), "wof", allow_lossy=True)),
    "upgrade": ("v2", lambda c, d: oc.upgrade(c, to="v2")),
    "downgrade": ("v1", lambda c, d: oc.downgrade(oc.upgrade(c))),
    "edit_file": ("v2", lambda c, d: oc.edit_file(ADAM, d / "o.ckpt", revision="v2", step=1)),
    "to_safetensors": ("safetensors", lambda c, d: oc.to_safetensors(c, d / "o.safetensors")),
    "to_npz": ("npz", lambda c, d: oc.to_npz(c, d / "o.npz")),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_every_write_asks_the_one_rule(tmp_path: Path, monkeypatch, write: str) -> None:
    """Each public write reaches ``lost_content`` for its target: a new write path that skips
    the rule (and so could drop content silently) fails here."""
    from onert_checkpoint.format import loss

    asked: list[str] = []
    real = loss.lost_content

    def recording(ckpt: oc.Checkpoint, revision: str | None = None) -> list[str]:
        asked.append(revision or ckpt.revision)
        return real(ckpt, revision)

    monkeypatch.setattr(loss, "lost_content", recording)
    target, run = WRITES[write]
    run(oc.load(ADAM), tmp_path)
    assert target in asked, asked


def test_cli_import_of_a_named_export_to_v1_refuses(tmp_path: Path) -> None:
    """A named, typed schema-2 export imported as schema 1: exit 1 naming what would be lost,
    no file; with --allow-lossy the file is written, exit 0, each loss said on stderr."""
    src = tmp_path / "named.safetensors"
    oc.to_safetensors(named_v2(), src)
    out = tmp_path / "o.ckpt"
    refused = cli("import", src, out, "--revision", "v1")
    assert refused.returncode == 1 and error_code(refused) == "not_representable"
    assert "tensor names" in refused.stderr and "--allow-lossy" in refused.stderr
    assert not out.exists()
    allowed = cli("import", src, out, "--revision", "v1", "--allow-lossy")
    assert allowed.returncode == 0, allowed.stderr
    warnings = allowed.stderr.strip().splitlines()
    assert warnings and all(w.startswith("onert-ckpt: warning: not_representable: dropped ")
                            for w in warnings)
    assert oc.load(out).content_equal(oc.load(ADAM))
    same = cli("import", src, tmp_path / "same.ckpt")  # its own revision: nothing lost
    assert same.returncode == 0 and same.stderr == ""
    assert _records(oc.load(tmp_path / "same.ckpt")) == _records(named_v2())


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_cli_import_of_sgd_metadata_with_moments_refuses(tmp_path: Path, suffix: str) -> None:
    """Metadata saying ``optimizer: sgd`` over ``.m``/``.v`` arrays: schema 1's SGD has no
    state, so the import refuses instead of writing SGD with every slot gone."""
    arrays, meta = oc.to_numpy_dict(oc.load(ADAM), metadata=True)
    meta = dict(meta, optimizer="sgd")
    src = tmp_path / f"x{suffix}"
    if suffix == ".safetensors":
        from safetensors.numpy import save_file

        save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(src),
                  metadata=meta)
    else:
        members = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        members.update({f"__metadata__.{k}": np.array(v) for k, v in meta.items()})
        with open(src, "wb") as f:
            np.savez(f, **members)
    out = tmp_path / "o.ckpt"
    result = cli("import", src, out)
    assert result.returncode == 1 and error_code(result) == "not_representable"
    assert "'m', 'v'" in result.stderr and not out.exists()


def test_cli_edit_to_a_smaller_revision_refuses_unless_allowed(tmp_path: Path) -> None:
    src, out = tmp_path / "named.ckpt", tmp_path / "o.ckpt"
    oc.save(named_v2(), src)
    refused = cli("edit", src, out, "--to", "v1", "--step", "9")
    assert refused.returncode == 1 and error_code(refused) == "not_representable"
    assert not out.exists()
    allowed = cli("edit", src, out, "--to", "v1", "--step", "9", "--allow-lossy")
    assert allowed.returncode == 0, allowed.stderr
    assert "dropped the tensor names" in allowed.stderr
    assert oc.load(out).step == 9


def test_cli_convert_says_what_an_allowed_loss_dropped(tmp_path: Path) -> None:
    out = tmp_path / "o.wof"
    allowed = cli("convert", ADAM, out, "--to", "wof", "--allow-lossy")
    assert allowed.returncode == 0, allowed.stderr
    assert "dropped the adam optimizer state" in allowed.stderr
    assert "dropped the training state" in allowed.stderr


# --- a released checkpoint --------------------------------------------------------------------


def _files(tmp_path: Path) -> dict[str, Path]:
    out = {"v1": tmp_path / "a.ckpt"}
    out["v1"].write_bytes(ADAM.read_bytes())
    for rev in ("v2", "v3"):
        out[rev] = tmp_path / f"a.{rev}"
        oc.save(oc.upgrade(oc.load(ADAM), to=rev), out[rev])
    out["wof"] = tmp_path / "a.wof"
    oc.save(oc.convert(oc.load(oc.to_bytes(oc.convert(oc.load(ADAM), "v1", dialect="onert-micro",
                                                      model=MODEL, batch_size=1))),
                       "wof", allow_lossy=True), out["wof"])
    return out


@pytest.mark.parametrize("revision", ["v1", "wof", "v2", "v3"])
def test_saving_a_released_checkpoint_over_its_file_refuses(tmp_path: Path,
                                                            revision: str) -> None:
    """The attack: ``with oc.open(p) as c: c.step = 9`` then ``oc.save(c, p)`` wrote a valid
    file of 0-byte tensors over the checkpoint. Now: ``released``, the file untouched."""
    path = _files(tmp_path)[revision]
    before = path.read_bytes()
    with oc.open(path) as ckpt:
        if revision != "wof":
            ckpt.step = 9
        touched = ckpt.tensors[0].data  # one entry made inside the block, the others not
    for write in (lambda: oc.save(ckpt, path), lambda: oc.save(ckpt, tmp_path / "other"),
                  lambda: oc.to_bytes(ckpt), lambda: oc.to_bytes(ckpt, revision="v2")):
        with pytest.raises(oc.CheckpointError) as info:
            write()
        assert info.value.code == "released"
    assert path.read_bytes() == before
    assert not (tmp_path / "other").exists()
    assert bytes(touched) == bytes(oc.load(before).tensors[0].raw)  # a kept view stays valid


READS: dict[str, Callable[[oc.Checkpoint], object]] = {
    "tensor data": lambda c: c.tensors[1].data,
    "tensor raw": lambda c: c[1].raw,
    "tensor nbytes": lambda c: c[1].nbytes,
    "entry made in the block": lambda c: c.tensors[0].raw,
    "crc32": lambda c: c[2].crc32(),
    "numpy": lambda c: np.asarray(c[3]),
    "slot made later": lambda c: c.optimizer.slots["v"][1].data,
    "slot made in the block": lambda c: c.slot("m", 0).raw,
    "every slot": lambda c: [b.nbytes for e in c.optimizer.slots.values() for b in e.values()],
    "iterating the tensors": lambda c: [t.data for t in c.tensors],
    "iterating the mapping": lambda c: [c[k].raw for k in c],
    "verify": lambda c: c.verify(),
    "content_equal": lambda c: c.content_equal(oc.load(ADAM)),
    "to_bytes": lambda c: oc.to_bytes(c),
    "to_numpy_dict": lambda c: oc.to_numpy_dict(c),
    "upgrade": lambda c: oc.upgrade(c),
    "convert": lambda c: oc.convert(c, "v3"),
    "downgrade": lambda c: oc.downgrade(oc.upgrade(c)),
    "describe": lambda c: oc.describe(c),
    "diff": lambda c: oc.diff(c, oc.load(ADAM)),
    "to_torch": lambda c: oc.to_torch(c, MODEL),
    "value_warnings": lambda c: oc.value_warnings(c),
    "bind": lambda c: oc.bind(c, MODEL),
    "edit": lambda c: oc.edit(c, step=1, reset_optimizer=True),
    "bake": lambda c: oc.bake(c, MODEL),
}


@pytest.mark.parametrize("revision", ["v1", "v3"])
@pytest.mark.parametrize("read", sorted(READS))
def test_every_read_of_a_released_checkpoint_raises_released(tmp_path: Path, revision: str,
                                                             read: str) -> None:
    if read == "to_torch":
        pytest.importorskip("torch")
    path = _files(tmp_path)[revision]
    with oc.open(path) as ckpt:
        ckpt.tensors[0].raw  # noqa: B018
        ckpt.slot("m", 0).raw  # noqa: B018
    with pytest.raises(oc.CheckpointError) as info:
        READS[read](ckpt)
    assert info.value.code == "released"


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_exporting_a_released_checkpoint_writes_nothing(tmp_path: Path, suffix: str) -> None:
    with oc.open(ADAM) as ckpt:
        pass
    out = tmp_path / f"x{suffix}"
    write = oc.to_safetensors if suffix == ".safetensors" else oc.to_npz
    with pytest.raises(oc.CheckpointError) as info:
        write(ckpt, out)
    assert info.value.code == "released" and not out.exists()


def test_a_released_entry_cannot_be_revived_by_assignment() -> None:
    with oc.open(ADAM) as ckpt:
        entry = ckpt.tensors[3]
    with pytest.raises(oc.CheckpointError) as info:
        entry.data = np.zeros(12, np.uint8)
    assert info.value.code == "released"
    assert "released" in repr(entry)


def test_a_copy_made_inside_the_block_outlives_it(tmp_path: Path) -> None:
    """upgrade copies entries (tensors and slots) instead of sharing them: the copy stays
    whole after the block, and saves the same content."""
    with oc.open(ADAM) as ckpt:
        copy = oc.upgrade(ckpt, to="v2")
    assert oc.load(oc.to_bytes(copy)).content_equal(oc.load(ADAM))


# --- nothing unverified goes out --------------------------------------------------------------


def corrupt(tmp_path: Path, revision: str, name: str = "bad", source: Path = ADAM) -> Path:
    """A schema-2/3 file of a real export with one flipped byte in a tensor's data."""
    good = oc.to_bytes(oc.upgrade(oc.load(source), to=revision))
    at = oc.load(good).tensors[0].offset
    data = bytearray(good)
    data[at + 5] ^= 0x40
    path = tmp_path / f"{name}.{revision}"
    path.write_bytes(bytes(data))
    return path


#: a changed data byte: the data section's CRC, its padding, or (schema 3 with the writer's
#: default per-block checksums, SPEC 7.4) the CRC of the block it lies in
DATA_ERRORS = ("section_checksum", "nonzero_padding", "block_checksum")


@pytest.mark.parametrize("revision", ["v2", "v3"])
def test_save_of_an_unverified_load_runs_the_checks_first(tmp_path: Path, revision: str) -> None:
    """``load(p, verify_data=False)`` hands data out unchecked; a save would have written the
    corrupt bytes under a fresh, valid CRC. It now runs the file's checks and refuses."""
    bad = corrupt(tmp_path, revision)
    ckpt = oc.load(bad, verify_data=False)
    assert ckpt.tensors[0].raw.size  # handed out unchecked, as asked
    out = tmp_path / "out.ckpt"
    exported = tmp_path / "out.safetensors"
    for write in (lambda: oc.save(ckpt, out), lambda: oc.to_bytes(ckpt),
                  lambda: oc.save(ckpt, out, revision="v1", allow_lossy=True),
                  lambda: oc.save(oc.upgrade(ckpt, to="v2"), out),
                  lambda: oc.save(oc.convert(ckpt, "v1"), out),
                  lambda: oc.to_safetensors(ckpt, exported),  # else laundered by an import
                  lambda: oc.to_npz(ckpt, out)):
        with pytest.raises(oc.CheckpointError) as info:
            write()
        assert info.value.code in DATA_ERRORS
    assert not out.exists() and not exported.exists()


@pytest.mark.parametrize("revision", ["v2", "v3"])
def test_save_after_the_mapped_file_changed_runs_the_checks_again(tmp_path: Path,
                                                                  revision: str) -> None:
    """Verified, then a byte of the mapped file changed in place: a save to another path
    checks the bytes again instead of trusting the first check."""
    path = tmp_path / f"good.{revision}"
    oc.save(oc.upgrade(oc.load(ADAM), to=revision), path)
    ckpt = oc.load(path, mmap=True)
    ckpt.verify()
    converted = oc.upgrade(ckpt, to="v2")  # data copied out (views on the mapping)
    at = ckpt.tensors[0].offset
    with open(path, "r+b") as f:
        f.seek(at + 3)
        byte = f.read(1)
        f.seek(at + 3)
        f.write(bytes([byte[0] ^ 1]))
    out = tmp_path / "elsewhere.ckpt"
    for write in (lambda: oc.save(ckpt, out), lambda: oc.save(converted, out)):
        with pytest.raises(oc.CheckpointError) as info:
            write()
        assert info.value.code in DATA_ERRORS
    assert not out.exists()


@pytest.mark.parametrize("mmap", [False, True], ids=["private", "mapped"])
def test_checked_bytes_that_cannot_have_changed_are_not_checked_again(tmp_path: Path,
                                                                      monkeypatch,
                                                                      mmap: bool) -> None:
    """Bytes read into private memory cannot change after their check, nor can a mapped file
    whose fingerprint (inode, size, mtime, ctime) is the same: a save does not pay for a second
    CRC pass over them. A write to the file changes its ctime: checked again (test above)."""
    from onert_checkpoint.format import entries

    path = tmp_path / "good.v3"
    oc.save(oc.upgrade(oc.load(ADAM), to="v3"), path)
    ckpt = oc.load(path, mmap=mmap)
    ckpt.verify()
    runs = []
    real = entries.DataStore.verify

    def counting(self, *, again=False):
        runs.append(again)
        return real(self, again=again)

    monkeypatch.setattr(entries.DataStore, "verify", counting)
    oc.to_bytes(ckpt)
    oc.save(oc.upgrade(ckpt, to="v2"), tmp_path / "out.v2")
    assert runs == []
    unverified = oc.load(path, mmap=mmap, verify_data=False)
    oc.to_bytes(unverified)
    oc.to_bytes(unverified)
    assert runs == [False]  # checked once, at the first write


@pytest.mark.parametrize("source", [ADAM, SGD], ids=["adam", "sgd"])
@pytest.mark.parametrize("revision", ["v2", "v3"])
def test_the_deferred_check_guards_every_copy_of_the_data(tmp_path: Path, revision: str,
                                                          source: Path) -> None:
    """A corrupt data byte is found by every path that hands out or copies the data, not only
    ``.data``: to_numpy_dict (and so export), upgrade, convert, to_bytes, save. (SGD: no slot
    read can run the check in the tensors' stead.)"""
    bad = corrupt(tmp_path, revision, source=source)
    paths: dict[str, Callable[[oc.Checkpoint], object]] = {
        "to_numpy_dict": oc.to_numpy_dict,
        "to_safetensors": lambda c: oc.to_safetensors(c, tmp_path / "x.safetensors"),
        "to_npz": lambda c: oc.to_npz(c, tmp_path / "x.npz"),
        "upgrade": lambda c: oc.upgrade(c, to="v2"),
        "convert v1": lambda c: oc.convert(c, "v1"),
        "convert v3": lambda c: oc.convert(c, "v3"),
        "to_bytes": oc.to_bytes,
        "save": lambda c: oc.save(c, tmp_path / "x.ckpt"),
    }
    if source == ADAM:
        paths["slot values"] = lambda c: [b.raw for b in c.optimizer.slots["m"].values()]
    for name, use in paths.items():
        with pytest.raises(oc.CheckpointError) as info:
            use(oc.load(bad))
        assert info.value.code in DATA_ERRORS, name
    assert sorted(p.name for p in tmp_path.iterdir()) == [bad.name]


@pytest.mark.parametrize("command", ["export", "convert", "edit"])
def test_cli_commands_refuse_a_corrupt_data_byte(tmp_path: Path, command: str) -> None:
    bad = corrupt(tmp_path, "v3")
    out = tmp_path / ("x.safetensors" if command == "export" else "x.ckpt")
    extra = {"export": [], "convert": ["--to", "v2"], "edit": ["--step", "1"]}[command]
    result = cli(command, bad, out, *extra)
    assert result.returncode == 1 and error_code(result) in DATA_ERRORS, result.stderr
    assert not out.exists()


# --- slot entries edited in place -------------------------------------------------------------


@pytest.mark.parametrize("revision", ["v1", "v3"])
def test_a_slot_entry_edited_in_place_survives_materialisation(tmp_path: Path,
                                                               revision: str) -> None:
    """An entry taken from ``ckpt.optimizer.slots["m"]`` and assigned new values: reading the
    whole slot afterwards (which makes every other entry) and saving keep the new values."""
    src = tmp_path / f"a.{revision}"
    oc.save(oc.upgrade(oc.load(ADAM), to=revision) if revision != "v1" else oc.load(ADAM), src)
    ckpt = oc.load(src)
    entry = ckpt.optimizer.slots["m"][2]
    new = np.arange(entry.nbytes, dtype=np.uint8)
    entry.data = new.view(entry.data.dtype).reshape(entry.data.shape)
    slot = ckpt.optimizer.slots["m"]
    assert bytes(dict(slot.items())[2].raw) == new.tobytes()
    assert [bytes(b.raw) for b in slot.values()][2] == new.tobytes()
    assert bytes(ckpt.slot("m", 2).raw) == new.tobytes()
    out = tmp_path / "out"
    oc.save(ckpt, out)
    back = oc.load(out)
    assert bytes(back.optimizer.slots["m"][2].raw) == new.tobytes()
    others = oc.load(src)
    for i in (0, 1, 3):
        assert bytes(back.slot("m", i).raw) == bytes(others.slot("m", i).raw)


def test_metadata_of_an_export_is_json() -> None:
    """(sanity of the fixture used above) the metadata carry the optimizer kind."""
    _, meta = oc.to_numpy_dict(oc.load(ADAM), metadata=True)
    assert meta["optimizer"] == "adam" and json.loads(meta["slots"]) == ["m", "v"]
