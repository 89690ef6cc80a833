"""What a file that is not a checkpoint looks like, for the ``bad_magic`` error.

Users hand the tools the circle model or an export instead of the checkpoint: :func:`looks_like`
names the format from its signature and says what to do instead.
"""

from __future__ import annotations

__all__ = ["looks_like"]

_DO_IMPORT = "`onert-ckpt import` (oc.from_{fn} in Python) builds a checkpoint from it"
_ZIP = "a ZIP archive (a NumPy .npz or a PyTorch .pt file?)"
_DO_ZIP = _DO_IMPORT.format(fn="npz") + " when it is an .npz (PyTorch: oc.from_torch)"

#: (offset, signature, what it is, what to do), in the order they are tried; the signature
#: None is safetensors' header (:func:`_safetensors`).
_SIGNATURES: tuple[tuple[int, bytes | None, str, str], ...] = (
    (4, b"CIR0", "a circle model", "give it as the model of a checkpoint (--model MODEL.circle "
     "on the command line, model= in Python), or make a checkpoint from its initial weights "
     "with `onert-ckpt new --model`"),
    (4, b"TFL3", "a TensorFlow Lite model", "convert it to circle (one-import-tflite), then use "
     "it as the model (--model)"),
    (0, b"PK\x03\x04", _ZIP, _DO_ZIP),
    (0, b"PK\x05\x06", _ZIP, _DO_ZIP),
    (0, None, "a safetensors file", _DO_IMPORT.format(fn="safetensors")),
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image", ""),
    (0, b"\xff\xd8\xff", "a JPEG image", ""),
    (0, b"GGUF", "a GGUF model file (llama.cpp)", ""),
    (0, b"\x93NUMPY", "a NumPy .npy array", ""),
    (0, b"\x89HDF\r\n\x1a\n", "an HDF5 file (Keras .h5?)", ""),
    (0, b"\x1f\x8b", "a gzip-compressed file", "decompress it first"),
    (0, b"\x7fELF", "an ELF executable or library", ""),
)


def _safetensors(head: bytes, size: int) -> bool:
    """safetensors: u64 little-endian header length, then that many bytes of JSON (``{``)."""
    if len(head) < 9:
        return False
    n = int.from_bytes(head[:8], "little")
    return 2 <= n <= size - 8 and head[8:9] == b"{"


def looks_like(data: bytes | memoryview, size: int | None = None) -> str:
    """A sentence naming what ``data`` (a file's first bytes, 16 are enough) looks like and
    what to do with it, or "" when it resembles nothing known. ``size`` is the file's size
    (default ``len(data)``).

        >>> looks_like(b"\\x1c\\x00\\x00\\x00CIR0")
        'it looks like a circle model, not a checkpoint: give it as the model ...'
    """
    head = bytes(data[:16])
    size = len(data) if size is None else size
    for at, magic, what, todo in _SIGNATURES:
        if _safetensors(head, size) if magic is None else head.startswith(magic, at):
            return f"it looks like {what}, not a checkpoint" + (f": {todo}" if todo else "")
    return ""
