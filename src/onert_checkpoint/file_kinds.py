"""Which files this package reads or replaces: regular files only. A FIFO would block in
``open``, a device may never end (or, replaced by a rename, lose its node), a folder is not a
file; each is refused with an ``OSError`` naming the caller's path."""

from __future__ import annotations

import errno
import stat

__all__ = ["not_regular"]

_KINDS = (
    (stat.S_ISDIR, errno.EISDIR, "a directory"),
    (stat.S_ISFIFO, errno.EINVAL, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, errno.EINVAL, "a socket"),
    (stat.S_ISCHR, errno.EINVAL, "a character device"),
    (stat.S_ISBLK, errno.EINVAL, "a block device"),
)


def not_regular(mode: int, path: str, doing: str) -> OSError | None:
    """The error for a file of ``mode`` that is not a regular file, or None."""
    if stat.S_ISREG(mode):
        return None
    code, what = next(((code, what) for test, code, what in _KINDS if test(mode)),
                      (errno.EINVAL, "a special file"))
    return OSError(code, f"{what}, not a regular file: refusing to {doing} it", path)
