"""What ``save`` does with the path it is given (docs/saving.md).

* a directory, FIFO, socket or device is refused with an OSError naming the path and left
  exactly as it was (as root, saving to a device used to replace the node with a file);
* a symbolic link is followed: the file it names is replaced atomically, the link kept;
* a new file gets 0666 less the umask without the process umask ever being changed (another
  thread creating files meanwhile used to get 0666 under umask 077);
* every OSError names the caller's path, never the internal temporary; an empty path is a
  ValueError.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import atomic_file

ROOT = Path(__file__).resolve().parents[2]


def ckpt(seed: int = 1) -> oc.Checkpoint:
    rng = np.random.default_rng(seed)
    return oc.Checkpoint([oc.Tensor(i, rng.integers(0, 256, 40 + i, dtype=np.uint8))
                          for i in range(3)], state=oc.TrainingState(step=seed, epoch=0))


def node_facts(path: Path) -> tuple[int, int, int]:
    st = os.lstat(path)
    return st.st_mode, st.st_ino, st.st_rdev


def test_a_directory_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "adir"
    folder.mkdir()
    (folder / "inside").write_bytes(b"keep")
    before = node_facts(folder)
    with pytest.raises(IsADirectoryError) as info:
        oc.save(ckpt(), folder)
    assert info.value.filename == str(folder)
    assert "directory" in str(info.value) and ".tmp" not in str(info.value)
    assert node_facts(folder) == before and (folder / "inside").read_bytes() == b"keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    with pytest.raises(IsADirectoryError):
        oc.save(ckpt(), f"{tmp_path / 'new'}{os.sep}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]


def test_a_fifo_is_refused_and_left_alone(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = node_facts(fifo)
    with pytest.raises(OSError, match="FIFO") as info:
        oc.save(ckpt(), fifo)
    assert info.value.filename == str(fifo)
    assert node_facts(fifo) == before and stat.S_ISFIFO(before[0])
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_a_socket_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        before = node_facts(path)
        with pytest.raises(OSError, match="socket"):
            oc.save(ckpt(), path)
        assert node_facts(path) == before
    finally:
        sock.close()


def test_a_device_is_refused_and_left_alone(tmp_path):
    """A character device like /dev/null, made in tmp_path (never the real one)."""
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    before = node_facts(dev)
    with pytest.raises(OSError, match="character device") as info:
        oc.save(ckpt(), dev)
    assert info.value.filename == str(dev)
    assert node_facts(dev) == before and stat.S_ISCHR(before[0])
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_a_symlink_is_followed_and_kept(tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "model.ckpt"
    oc.save(ckpt(1), real)
    real.chmod(0o640)
    link = tmp_path / "latest.ckpt"
    link.symlink_to(Path("real") / "model.ckpt")  # relative, as users make them
    chain = tmp_path / "chain.ckpt"
    chain.symlink_to("latest.ckpt")
    oc.save(ckpt(2), chain)
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "model.ckpt")
    assert chain.is_symlink() and os.readlink(chain) == "latest.ckpt"
    assert real.read_bytes() == oc.to_bytes(ckpt(2))
    assert real.stat().st_mode & 0o777 == 0o640
    # the temporary lived beside the real file, and nothing is left anywhere
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chain.ckpt", "latest.ckpt", "real"]
    assert [p.name for p in real_dir.iterdir()] == ["model.ckpt"]


def test_a_dangling_symlink_creates_the_file_it_names(tmp_path):
    link = tmp_path / "out.ckpt"
    link.symlink_to("target.ckpt")
    oc.save(ckpt(3), link)
    assert link.is_symlink()
    assert (tmp_path / "target.ckpt").read_bytes() == oc.to_bytes(ckpt(3))


def test_errors_name_the_callers_path(tmp_path):
    missing = tmp_path / "no-such-folder" / "out.ckpt"
    with pytest.raises(FileNotFoundError) as info:
        oc.save(ckpt(), missing)
    assert info.value.filename == str(missing) and ".tmp" not in str(info.value)
    afile = tmp_path / "afile"
    afile.write_bytes(b"x")
    under = afile / "out.ckpt"
    with pytest.raises(NotADirectoryError) as info:
        oc.save(ckpt(), under)
    assert info.value.filename == str(under) and ".tmp" not in str(info.value)


@pytest.mark.parametrize("empty", ["", b""])
def test_an_empty_path_is_a_usage_error(empty):
    with pytest.raises(ValueError, match="empty") as info:
        oc.save(ckpt(), empty)
    assert not isinstance(info.value, OSError)


def test_the_process_umask_is_never_touched(tmp_path, monkeypatch):
    """Deterministic: ``save`` never calls os.umask (reading it means setting it)."""

    class NoUmask:
        def __getattr__(self, name):
            if name == "umask":
                raise AssertionError("save changed the process umask")
            return getattr(os, name)

    monkeypatch.setattr(atomic_file, "os", NoUmask())
    oc.save(ckpt(), tmp_path / "new.ckpt")
    oc.save(ckpt(2), tmp_path / "new.ckpt")


UMASK_RACE = textwrap.dedent("""
    import os, sys, threading
    sys.path.insert(0, {root!r})
    from tests.format.test_save_targets import ckpt
    import onert_checkpoint as oc
    folder = sys.argv[1]
    os.umask(0o077)
    stop = threading.Event()
    bad = []
    def creator():
        k = 0
        while not stop.is_set():
            p = os.path.join(folder, "plain-%d" % (k % 50))
            with open(p, "w"):
                pass
            mode = os.stat(p).st_mode & 0o777
            if mode != 0o600:
                bad.append(oct(mode))
            os.unlink(p)
            k += 1
    t = threading.Thread(target=creator)
    t.start()
    small = ckpt()
    try:
        for k in range(300):
            out = os.path.join(folder, "s-%d.ckpt" % (k % 5))
            if os.path.exists(out):
                os.unlink(out)
            oc.save(small, out)
            mode = os.stat(out).st_mode & 0o777
            if mode != 0o600:
                bad.append("saved " + oct(mode))
    finally:
        stop.set()
        t.join()
    print(len(bad), bad[:3])
""")


def test_modes_under_umask_077_with_another_thread_creating_files(tmp_path):
    script = UMASK_RACE.format(root=str(ROOT))
    res = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[0] == "0", res.stdout


def test_a_new_file_gets_0666_less_the_umask(tmp_path):
    script = ("import os, sys; sys.path.insert(0, sys.argv[2]); os.umask(0o027)\n"
              "from tests.format.test_save_targets import ckpt; import onert_checkpoint as oc\n"
              "oc.save(ckpt(), sys.argv[1]); print(oct(os.stat(sys.argv[1]).st_mode & 0o777))")
    res = subprocess.run([sys.executable, "-c", script, str(tmp_path / "n.ckpt"), str(ROOT)],
                         capture_output=True, text=True, timeout=120)
    assert res.stdout.strip() == "0o640", res.stdout + res.stderr
