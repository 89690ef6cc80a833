"""Edit jobs (onert_checkpoint.tools.edit and ``onert-ckpt edit``) on real onert exports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.format.errors import CheckpointError

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"
MODEL = DATA / "fc2.circle"


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *argv], cwd=cwd,
                          capture_output=True, text=True, check=False)


def _differing_bytes(a: bytes, b: bytes) -> list[int]:
    assert len(a) == len(b)
    return [k for k in range(len(a)) if a[k] != b[k]]


def test_set_step_and_epoch_changes_the_footer_only(tmp_path) -> None:
    ckpt = oc.edit_file(ADAM, tmp_path / "o.ckpt", step=123456, epoch=7)
    raw, out = ADAM.read_bytes(), (tmp_path / "o.ckpt").read_bytes()
    assert ckpt.step == 123456
    assert _differing_bytes(raw, out) and min(_differing_bytes(raw, out)) >= len(raw) - 8
    back = oc.load(out)
    assert (back.step, back.epoch, back.revision, back.dialect) == (123456, 7, "v1", None)


def test_step_out_of_schema_1_range_is_refused_before_anything_is_written(tmp_path) -> None:
    with pytest.raises(CheckpointError) as info:
        oc.edit_file(ADAM, tmp_path / "o.ckpt", step=1 << 32)
    assert info.value.code == "not_representable"
    assert not (tmp_path / "o.ckpt").exists()
    ckpt = oc.load(ADAM)
    with pytest.raises(CheckpointError, match="u32"):  # in memory already, not at save
        oc.edit(ckpt, epoch=-1)
    assert ckpt.epoch == 0
    with pytest.raises(CheckpointError, match="needs schema 3 or 2"):
        oc.edit(oc.load(ADAM), state={"lr": 0.01})


def test_state_keys_in_schema_2(tmp_path) -> None:
    v2 = tmp_path / "a.ckpt2"
    oc.save(oc.upgrade(oc.load(ADAM), to="v2"), v2)
    oc.edit_file(v2, tmp_path / "b.ckpt2", state={"lr": 0.01, "note": "fine-tune"}, step=3)
    back = oc.load(tmp_path / "b.ckpt2")
    assert back.revision == "v2"
    assert (back.state["lr"], back.state["note"], back.step) == (0.01, "fine-tune", 3)


def test_drop_optimizer_turns_adam_into_sgd_with_the_same_weights(tmp_path) -> None:
    oc.edit_file(ADAM, tmp_path / "o.ckpt", drop_optimizer=True)
    before, after = oc.load(ADAM), oc.load(tmp_path / "o.ckpt")
    assert after.optimizer is not None and after.optimizer.kind == "sgd"
    assert all(np.array_equal(a.raw, b.raw) for a, b in zip(before.tensors, after.tensors))
    assert after.step == before.step
    # the same weights and state as onert's own SGD file of this model would hold
    assert len(after.tensors) == len(oc.load(SGD).tensors)


def test_reset_optimizer_zeroes_m_and_v_and_keeps_the_layout(tmp_path) -> None:
    oc.edit_file(ADAM, tmp_path / "o.ckpt", reset_optimizer=True)
    raw, out = ADAM.read_bytes(), (tmp_path / "o.ckpt").read_bytes()
    assert len(raw) == len(out)
    after = oc.load(out)
    for slot in ("m", "v"):
        assert all(not buf.raw.any() for buf in after.optimizer.slots[slot].values())
    before = oc.load(raw)
    assert all(np.array_equal(a.raw, b.raw) for a, b in zip(before.tensors, after.tensors))
    assert any(buf.raw.any() for buf in before.optimizer.slots["m"].values())


def test_replace_a_tensor_checked_against_the_model(tmp_path) -> None:
    new = np.arange(32, dtype=np.float32).reshape(8, 4)
    oc.edit_file(ADAM, tmp_path / "o.ckpt", model=MODEL, replace={"w0": new})
    after = oc.load(tmp_path / "o.ckpt", model=MODEL)
    assert np.array_equal(after["w0"].data, new)
    before = oc.load(ADAM, model=MODEL)
    for name in ("b0", "w1", "b1"):
        assert np.array_equal(after[name].data, before[name].data)
    # the API's casting rule: float64 values float32 holds exactly are taken, as by
    # ``tensor.data = x``; values it would round are not
    converted = oc.edit(oc.load(ADAM, model=MODEL), replace={"w0": new.astype(np.float64)})
    assert converted["w0"].data.dtype == np.float32
    for bad in (new.astype(np.float64) + 0.1, new.reshape(4, 8), new[:4], new.astype(np.complex64)):
        with pytest.raises(CheckpointError) as info:
            oc.edit(oc.load(ADAM, model=MODEL), replace={"w0": bad})
        assert info.value.code == "model_mismatch"
    with pytest.raises(CheckpointError, match="give the circle model"):
        oc.edit(oc.load(ADAM), replace={0: new})  # no model: nothing to check against
    with pytest.raises(CheckpointError, match="no entry 'nope'"):
        oc.edit(oc.load(ADAM, model=MODEL), replace={"nope": new})


def test_a_failed_edit_changes_nothing() -> None:
    ckpt = oc.load(ADAM, model=MODEL)
    before = ckpt["w0"].raw.copy()
    with pytest.raises(CheckpointError):
        oc.edit(ckpt, step=5, replace={"w0": np.zeros((8, 4), np.float32), "b0": np.zeros(3)})
    assert ckpt.step == 8 and np.array_equal(ckpt["w0"].raw, before)


def test_edit_command(tmp_path) -> None:
    np.save(tmp_path / "b1.npy", np.ones(3, np.float32))
    done = _cli("edit", str(SGD), "o.ckpt", "--model", str(MODEL), "--replace", "b1=b1.npy",
                "--step", "0", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "step 0" in done.stdout
    after = oc.load(tmp_path / "o.ckpt", model=MODEL)
    assert np.array_equal(after["b1"].data, np.ones(3, np.float32)) and after.step == 0
    # in place, to schema 2, with a state key
    done = _cli("edit", "o.ckpt", "o.ckpt", "--to", "v2", "--set", "lr=0.005", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert oc.load(tmp_path / "o.ckpt").state["lr"] == 0.005
    # errors: a state key schema 1 cannot hold, a bad pair, a missing array, exclusive options
    assert _cli("edit", str(SGD), "x.ckpt", "--set", "lr=1", cwd=tmp_path).returncode == 1
    assert _cli("edit", str(SGD), "x.ckpt", "--set", "lr", cwd=tmp_path).returncode == 2
    assert _cli("edit", str(SGD), "x.ckpt", "--replace", "w0=no.npy",
                cwd=tmp_path).returncode == 2
    assert _cli("edit", str(ADAM), "x.ckpt", "--drop-optimizer", "--reset-optimizer",
                cwd=tmp_path).returncode == 2
    assert not (tmp_path / "x.ckpt").exists()


def test_edit_command_reads_its_input_once(tmp_path, monkeypatch) -> None:
    """``onert-ckpt edit`` reads its input once, whatever it checks before writing (the model a
    --dialect needs, the entry a --replace names), and its output once for the summary line;
    with --allow-lossy once more, unbound, for what it says was dropped."""
    from onert_checkpoint.format import dispatch
    from onert_checkpoint.tools import cli

    np.save(tmp_path / "w0.npy", np.ones((8, 4), np.float32))
    real, read = dispatch.load, []

    def counted(source, *args, **kwargs):
        read.append(Path(source).name)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(dispatch, "load", counted)
    monkeypatch.chdir(tmp_path)
    argv = ["edit", str(ADAM), "o.ckpt", "--model", str(MODEL), "--replace", "w0=w0.npy",
            "--dialect", "onert-micro", "--batch-size", "2"]
    assert cli.main(argv) == 0
    assert read == [ADAM.name, "o.ckpt"]
    read.clear()
    assert cli.main([*argv, "--allow-lossy"]) == 0
    assert read == [ADAM.name, ADAM.name, "o.ckpt"]


def _npy(header: str, data: bytes = b"") -> bytes:
    """A version 1.0 .npy file with ``header`` (the dict text) and ``data``."""
    text = header + " " * (63 - (len(header) + 10) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode() + data


def test_edit_replace_npy_header_is_checked_before_allocating(tmp_path) -> None:
    """A .npy header claiming more data than its file holds (4 TiB here) is a usage error
    naming the file, not a MemoryError; nor is an .npz, an object array or a bad header."""
    files = {
        "huge.npy": _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }",
                         bytes(16)),
        "short.npy": _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", bytes(16)),
        "neg.npy": _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }",
                        bytes(16)),
        "descr.npy": _npy("{'descr': 5, 'fortran_order': False, 'shape': (2,), }", bytes(8)),
    }
    for name, raw in files.items():
        (tmp_path / name).write_bytes(raw)
    np.savez(tmp_path / "a.npz", b1=np.ones(3, np.float32))
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for name in [*files, "a.npz", "obj.npy"]:
        done = _cli("edit", str(SGD), "x.ckpt", "--model", str(MODEL), "--replace",
                    f"b1={name}", cwd=tmp_path)
        assert done.returncode == 2, (name, done.stderr)
        assert done.stderr.startswith("onert-ckpt: error: usage_error: ") and name in done.stderr
        assert "MemoryError" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "(4398046511104 bytes) but the file holds 16 bytes" in _cli(
        "edit", str(SGD), "x.ckpt", "--replace", "b1=huge.npy", cwd=tmp_path).stderr
    # exactly the data the header claims: accepted
    (tmp_path / "ok.npy").write_bytes(
        _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
             np.arange(3, dtype=np.float32).tobytes()))
    done = _cli("edit", str(SGD), "x.ckpt", "--model", str(MODEL), "--replace", "b1=ok.npy",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert np.array_equal(oc.load(tmp_path / "x.ckpt", model=MODEL)["b1"].data, np.arange(3))


def test_edit_survives_its_input_truncated_after_the_load(tmp_path) -> None:
    """A truncated input cannot fault ``edit``: another process truncates the input right
    after it was loaded (made deterministic: the child's load truncates the file once it
    returns). A small
    input is read into private memory (``mmap="auto"``), so the edit completes on the bytes it
    read; a mapped read would die of SIGBUS."""
    import textwrap

    victim = tmp_path / "victim.ckpt"
    victim.write_bytes(ADAM.read_bytes())
    code = textwrap.dedent(f"""
        import os, sys
        from onert_checkpoint.format import dispatch
        from onert_checkpoint.tools import cli
        real = dispatch.load
        def load_then_truncate(*args, **kwargs):
            ckpt = real(*args, **kwargs)
            if str(args[0]) == {str(victim)!r}:
                os.truncate(args[0], 0)
            return ckpt
        dispatch.load = load_then_truncate
        sys.exit(cli.main(["edit", {str(victim)!r}, "out.ckpt", "--step", "3"]))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-500:]}"
    out = oc.load(tmp_path / "out.ckpt")
    assert out.step == 3 and oc.to_bytes(out)[:-8] == ADAM.read_bytes()[:-8]
