"""The version-dispatching loader: which revision a file is, and which reader reads it.

spec/SPEC.md, "Reading a file: revision detection": magic, then the version byte at offset 2
(3: schema 3, 2: schema 2), then for version 1 the structure decides between a schema-1
checkpoint and WOF.
"""

from __future__ import annotations

from typing import Literal

from .errors import CheckpointError, error_for
from .model import Checkpoint
from .revisions.registry import REVISIONS, with_version
from .revisions.v1 import reader as v1
from .revisions.wof import reader as wof
from .sniff import looks_like
from .source import Source, open_source

__all__ = ["MAGIC", "SUPPORTED_VERSIONS", "load", "read_view"]

MAGIC = 429


def _read_version_1(view: memoryview, *, verify_data: bool = True) -> Checkpoint:
    """SPEC section 3, step 5: checkpoint (5.1), else WOF (5.2), else which error (5.3, 5.4)."""
    try:
        return v1.read(view, verify_data=verify_data)
    except CheckpointError as checkpoint_error:
        try:
            return wof.read(view, verify_data=verify_data)
        except CheckpointError as wof_error:
            if _is_checkpoint_with_appended_bytes(view, checkpoint_error):
                raise checkpoint_error from None
            raise (wof_error if wof.is_wof_shaped(view) else checkpoint_error) from None


def _is_checkpoint_with_appended_bytes(view: memoryview, error: CheckpointError) -> bool:
    """Step 5.3: the checkpoint error is rule 4's ``trailing_bytes`` and the file cut after its
    footer (``ofs_other + 8`` bytes) is a valid checkpoint. Appended bytes can make a checkpoint
    WOF-shaped, and its WOF error would hide the helpful one."""
    if error.code != "trailing_bytes":
        return False
    other = v1.V1Header.ofs_other
    cut = int.from_bytes(view[other.offset : other.offset + other.size], "little")
    cut += v1.FOOTER_SIZE  # rule 4 failed: cut < S
    try:
        layout = v1.read_layout(view[:cut])
    except CheckpointError:
        return False
    layout.header._io.close()  # release the buffer (see BufferReader)
    return True


#: The version bytes of the revisions this library ships (registry.py).
SUPPORTED_VERSIONS = tuple(sorted({r.version for r in REVISIONS}))


def read_view(view: memoryview, *, verify_data: bool = True) -> Checkpoint:
    """Detect the revision of the bytes in ``view`` and read them."""
    size = len(view)
    if size < 2:
        raise error_for("truncated_header", "header", 0, f"the file has only {size} bytes")
    magic = view[0] | (view[1] << 8)
    if magic != MAGIC:
        hint = looks_like(view[:16], size)  # what the file is instead, and what to do with it
        raise error_for("bad_magic", "magic", 0,
                        f"magic is {magic} (bytes {bytes(view[:2]).hex(' ')}), not 429"
                        + (f"; {hint}" if hint else ""))
    if size < 3:
        raise error_for("truncated_header", "header", 0, "the file ends before the version byte")
    version = view[2]
    # A version byte of one revision is read by its reader (imported on first use,
    # registry.py); version 1's two revisions are told apart by structure.
    revisions = with_version(version)
    if not revisions:
        raise error_for("unsupported_version", "version", 2,
                        f"schema version {version} is not supported (this reader implements "
                        f"{', '.join(map(str, SUPPORTED_VERSIONS))})")
    if len(revisions) > 1:
        return _read_version_1(view, verify_data=verify_data)
    return revisions[0].read(view, verify_data=verify_data)


def load(source: Source, *, verify_data: bool = True,
         mmap: bool | Literal["auto"] = True) -> Checkpoint:
    """Read a checkpoint of any supported revision from a path, bytes or any buffer.

    Tensor data are read-only NumPy views on the (memory-mapped) source, never copies, as
    bytes (uint8): this layer knows no circle model. The public
    [`load`][onert_checkpoint.load] adds the ``model`` that types, shapes and names them
    (``onert_checkpoint.api``, the layer above both the format and the model).

    Every rule of the specification is checked; what is checked when (the deferred data checks,
    ``verify_data``, ``mmap``) is documented once, on [`load`][onert_checkpoint.load].

        >>> load("tests/data/real-onert/fc2-adam-step8.ckpt").revision
        'v1'
    """
    try:
        view = open_source(source, copy="auto" if mmap == "auto" else not mmap)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cannot read a checkpoint from {type(source).__name__}: {exc}") from None
    # The data checks are always prepared; verify_data=False only lets data out before they
    # ran. A save still runs them before it writes a fresh checksum over those bytes.
    ckpt = read_view(view)
    if not verify_data and ckpt._store is not None:
        ckpt._store.enforce = False
    return ckpt
