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
from onert_checkpoint import atomic_file

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
    stale(tmp_path, atomic_file._temp_name("t.ckpt"))
    oc.save(oc.load(ADAM), target)
    assert listing(tmp_path) == ["t.ckpt"]


def test_an_untagged_name_of_the_same_pattern_is_kept(tmp_path: Path) -> None:
    """A file that only looks like a temporary (``.t.ckpt.<12 hex>.tmp`` without the library's
    tag) is not the library's: kept."""
    target = tmp_path / "t.ckpt"
    names = [f".t.ckpt.{'0' * 12}.tmp", f".t.ckpt.{'ab' * 6}.tmp"]
    names = [n for n in names if not atomic_file._is_our_temporary(n, "t.ckpt")]
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
    theirs = stale(tmp_path, atomic_file._temp_name("t.ckpt"), owner=nobody())
    oc.save(oc.load(ADAM), target)
    assert theirs.exists() and theirs.read_bytes() == b"someone's data"


def test_a_temporary_name_with_another_link_is_kept(tmp_path: Path) -> None:
    """A tagged name that is a hard link to another file is not a temporary of a dead writer
    (those have exactly one name): removing it would be harmless to the data, but it is not
    the library's to remove."""
    target = tmp_path / "t.ckpt"
    keep = tmp_path / "data.bin"
    keep.write_bytes(b"linked")
    name = tmp_path / atomic_file._temp_name("t.ckpt")
    os.link(keep, name)
    old = time.time() - 3600
    os.utime(name, (old, old))
    oc.save(oc.load(ADAM), target)
    assert name.exists()


def test_temporary_names_carry_the_tag() -> None:
    names = {atomic_file._temp_name("x.ckpt") for _ in range(50)}
    assert len(names) == 50
    assert all(atomic_file._is_our_temporary(n, "x.ckpt") for n in names)
    assert not any(atomic_file._is_our_temporary(n, "y.ckpt") for n in names)


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


# --- the temporary's mode, and links in shared folders -------------------------------------------


@pytest.mark.parametrize("kind", ["named", "unnamed"])
def test_the_temporary_is_never_more_open_than_the_file_it_replaces(
    tmp_path: Path, monkeypatch, kind: str
) -> None:
    """Shown on the old code: where O_TMPFILE is missing, the named temporary was created 0666
    less the umask (0644) before it was narrowed to the replaced file's 0600, so another user
    could open it in that window and read the data written through the open descriptor later.
    Every mode the temporary has, from its creation on, is within the replaced file's."""
    target = tmp_path / "t.ckpt"
    target.write_bytes(SGD.read_bytes())
    os.chmod(target, 0o600)
    seen: list[int] = []

    class Watch:
        def __getattr__(self, name: str) -> object:
            if name != "open":
                return getattr(os, name)

            def opened(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
                fd = os.open(path, flags, mode, dir_fd=dir_fd)
                if flags & os.O_WRONLY:
                    seen.append(stat.S_IMODE(os.fstat(fd).st_mode))
                return fd

            return opened

    if kind == "named":
        monkeypatch.setattr(atomic_file, "_open_unnamed", lambda dfd, mode: None)
    monkeypatch.setattr(atomic_file, "os", Watch())
    old_umask = os.umask(0o022)
    try:
        oc.save(oc.load(ADAM), target)
    finally:
        os.umask(old_umask)
    assert seen, "the probe saw no temporary"
    assert all(mode & ~0o600 == 0 for mode in seen), [oct(m) for m in seen]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_bytes() == ADAM.read_bytes()


def _shared_link(tmp_path: Path, link_owner: int, folder_owner: int = 0) -> tuple[Path, Path]:
    """A victim file outside a sticky world-writable folder (as the shared temporary folder
    is) and, in the folder, a symbolic link to it owned by ``link_owner``."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, folder_owner, -1)
    os.chmod(shared, 0o1777)
    victim = tmp_path / "victim"
    victim.write_bytes(SGD.read_bytes())
    link = shared / "out.ckpt"
    link.symlink_to(victim)
    os.lchown(link, link_owner, -1)
    return link, victim


@root_only
def test_another_users_link_in_a_sticky_shared_folder_is_not_followed(tmp_path: Path) -> None:
    """Shown on the old code: ``realpath`` in user space followed any link, so nobody's link
    ``out.ckpt -> /etc/passwd`` in the shared temporary folder made root's save replace the
    victim, where the kernel's ``protected_symlinks`` refuses root's ``open`` of that link
    (when the sysctl is 1, as most systems set it). The save now applies the
    kernel's rule itself (whatever the sysctl says on this machine): refused, naming the path
    given, the victim and the link untouched, nothing left in either folder."""
    uid, _ = nobody()
    link, victim = _shared_link(tmp_path, link_owner=uid)
    with pytest.raises(PermissionError) as info:
        oc.save(oc.load(ADAM), link)
    assert info.value.filename == str(link)
    assert victim.read_bytes() == SGD.read_bytes()
    assert link.is_symlink() and listing(link.parent) == ["out.ckpt"]
    assert listing(tmp_path) == ["shared", "victim"]


@root_only
@pytest.mark.parametrize("who", ["the saving user", "the folder's owner"])
def test_a_link_of_the_saver_or_the_folders_owner_is_followed(tmp_path: Path, who: str) -> None:
    """The kernel's rule lets a link be followed when its owner is the follower or the
    folder's owner: both still are."""
    uid, _ = nobody()
    owner = 0 if who == "the saving user" else uid
    link, victim = _shared_link(tmp_path, link_owner=owner, folder_owner=owner)
    oc.save(oc.load(ADAM), link)
    assert victim.read_bytes() == ADAM.read_bytes() and link.is_symlink()
