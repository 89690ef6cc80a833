"""What a save does to the file system around its target (docs/saving.md, "Owner, mode, links").

* a created file never gains the set-user-ID or set-group-ID bit, whatever the replaced file had;
* the replaced file's owner and group are kept where the process may (root; the same user);
* a hard link to the replaced file is split: the other names keep the old content;
* the stale-temporary cleaner removes only a temporary it can prove this library made: this
  user's, named with the library's tag, with no other name; never another user's file.
"""

from __future__ import annotations

import os
import pwd
import stat
import time
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint.format import saving

DATA = Path(__file__).resolve().parents[1] / "data" / "real-onert"
ADAM = DATA / "fc2-adam-step8.ckpt"
SGD = DATA / "fc2-sgd-step8.ckpt"

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make files of others")


def nobody() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody'")
    return entry.pw_uid, entry.pw_gid


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@root_only
@pytest.mark.parametrize("bits", [stat.S_ISUID, stat.S_ISGID, stat.S_ISUID | stat.S_ISGID])
def test_root_saving_over_a_set_id_file_of_another_user(tmp_path: Path, bits: int) -> None:
    """The attack: root saving over nobody's 4755 file made ``-rwsr-xr-x root root``, a setuid
    root file. Now the new file keeps nobody's ownership and the mode without the set-ID bits."""
    uid, gid = nobody()
    target = tmp_path / "t.ckpt"
    target.write_bytes(SGD.read_bytes())
    os.chown(target, uid, gid)
    os.chmod(target, 0o755 | bits)
    assert stat.S_IMODE(target.stat().st_mode) & bits  # (chown before chmod keeps the bits)
    oc.save(oc.load(ADAM), target)
    st = target.stat()
    assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID), oct(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o755
    assert (st.st_uid, st.st_gid) == (uid, gid)
    assert target.read_bytes() == ADAM.read_bytes()


def test_own_set_id_file_loses_the_bits_keeps_the_rest(tmp_path: Path) -> None:
    target = tmp_path / "t.ckpt"
    target.write_bytes(SGD.read_bytes())
    os.chmod(target, 0o6640)
    oc.save(oc.load(ADAM), target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_hard_link_is_split(tmp_path: Path) -> None:
    """The target is replaced by rename: another name of the old file keeps the old content
    (docs/saving.md says so); the target has one link after the save."""
    target, other = tmp_path / "t.ckpt", tmp_path / "backup.ckpt"
    target.write_bytes(SGD.read_bytes())
    os.link(target, other)
    oc.save(oc.load(ADAM), target)
    assert target.read_bytes() == ADAM.read_bytes()
    assert other.read_bytes() == SGD.read_bytes()
    assert target.stat().st_nlink == 1 and other.stat().st_nlink == 1


# --- the stale-temporary cleaner ----------------------------------------------------------------


def stale(folder: Path, name: str, *, owner: tuple[int, int] | None = None) -> Path:
    path = folder / name
    path.write_bytes(b"someone's data")
    if owner is not None:
        os.chown(path, *owner)
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path


def test_a_dead_writers_tagged_temporary_is_removed(tmp_path: Path) -> None:
    target = tmp_path / "t.ckpt"
    stale(tmp_path, saving._temp_name("t.ckpt"))
    oc.save(oc.load(ADAM), target)
    assert listing(tmp_path) == ["t.ckpt"]


def test_an_untagged_name_of_the_same_pattern_is_kept(tmp_path: Path) -> None:
    """A file that only looks like a temporary (``.t.ckpt.<12 hex>.tmp`` without the library's
    tag) is not the library's: kept."""
    target = tmp_path / "t.ckpt"
    names = [f".t.ckpt.{'0' * 12}.tmp", f".t.ckpt.{'ab' * 6}.tmp"]
    names = [n for n in names if not saving._is_our_temporary(n, "t.ckpt")]
    assert names
    for name in names:
        stale(tmp_path, name)
    oc.save(oc.load(ADAM), target)
    assert listing(tmp_path) == sorted([*names, "t.ckpt"])


@root_only
def test_another_users_file_is_never_removed(tmp_path: Path) -> None:
    """The attack: root's save deleted any unlocked ``.TARGET.<12 hex>.tmp`` older than the
    save, whoever owned it. nobody's file with even the library's own tagged name is kept."""
    target = tmp_path / "t.ckpt"
    theirs = stale(tmp_path, saving._temp_name("t.ckpt"), owner=nobody())
    oc.save(oc.load(ADAM), target)
    assert theirs.exists() and theirs.read_bytes() == b"someone's data"


def test_a_temporary_name_with_another_link_is_kept(tmp_path: Path) -> None:
    """A tagged name that is a hard link to another file is not a temporary of a dead writer
    (those have exactly one name): removing it would be harmless to the data, but it is not
    the library's to remove."""
    target = tmp_path / "t.ckpt"
    keep = tmp_path / "data.bin"
    keep.write_bytes(b"linked")
    name = tmp_path / saving._temp_name("t.ckpt")
    os.link(keep, name)
    old = time.time() - 3600
    os.utime(name, (old, old))
    oc.save(oc.load(ADAM), target)
    assert name.exists()


def test_temporary_names_carry_the_tag() -> None:
    names = {saving._temp_name("x.ckpt") for _ in range(50)}
    assert len(names) == 50
    assert all(saving._is_our_temporary(n, "x.ckpt") for n in names)
    assert not any(saving._is_our_temporary(n, "y.ckpt") for n in names)


@pytest.mark.parametrize("errno_name", ["EPERM", "EINVAL"])
def test_an_owner_that_cannot_be_kept_does_not_fail_the_save(tmp_path: Path, monkeypatch,
                                                              errno_name: str) -> None:
    """A chown refused (no right to that group; an ID this user namespace cannot map) leaves
    the file the process's own; the save completes, the set-ID bits still dropped."""
    import errno

    target = tmp_path / "t.ckpt"
    target.write_bytes(SGD.read_bytes())
    os.chmod(target, 0o4640)

    def refuse(*args: object) -> None:
        raise OSError(getattr(errno, errno_name), "refused")

    monkeypatch.setattr(os, "getegid", lambda: -7)  # so that a same-user save tries too
    monkeypatch.setattr(os, "fchown", refuse)
    oc.save(oc.load(ADAM), target)
    assert target.read_bytes() == ADAM.read_bytes()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
