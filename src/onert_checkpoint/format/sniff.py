"""What a file that is not a checkpoint looks like, for the ``bad_magic`` error.

Users hand the tools the circle model or an export instead of the checkpoint: :func:`looks_like`
names the format from its signature and says what to do instead.
"""

from __future__ import annotations

__all__ = ["looks_like"]

_DO_MODEL = (
    "give it as the model of a checkpoint (--model MODEL.circle on the command line, model= "
    "in Python), or make a checkpoint from its initial weights with `onert-ckpt new --model`"
)
_DO_IMPORT = ("`onert-ckpt import` (oc.from_{fn} in Python) builds a checkpoint from it")

#: (signature at offset 0, what it is, what to do) for formats with a fixed leading magic.
_SIGNATURES: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image", ""),
    (b"\xff\xd8\xff", "a JPEG image", ""),
    (b"GGUF", "a GGUF model file (llama.cpp)", ""),
    (b"\x93NUMPY", "a NumPy .npy array", ""),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file (Keras .h5?)", ""),
    (b"\x1f\x8b", "a gzip-compressed file", "decompress it first"),
    (b"\x7fELF", "an ELF executable or library", ""),
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
    if head[4:8] == b"CIR0":
        return f"it looks like a circle model, not a checkpoint: {_DO_MODEL}"
    if head[4:8] == b"TFL3":
        return ("it looks like a TensorFlow Lite model, not a checkpoint: convert it to circle "
                "(one-import-tflite), then use it as the model (--model)")
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return ("it looks like a ZIP archive (a NumPy .npz or a PyTorch .pt file?), not a "
                "checkpoint: " + _DO_IMPORT.format(fn="npz") + " when it is an .npz "
                "(PyTorch: oc.from_torch)")
    if _safetensors(head, size):
        return ("it looks like a safetensors file, not a checkpoint: "
                + _DO_IMPORT.format(fn="safetensors"))
    for magic, what, todo in _SIGNATURES:
        if head.startswith(magic):
            return f"it looks like {what}, not a checkpoint" + (f": {todo}" if todo else "")
    return ""
