"""The error hierarchy; every ``code`` comes from spec/error-codes.toml (the generated table).

Each error names the ``field`` in the spec's words (``weights[3]``) and the byte ``offset``, None
when the problem is not located in a file.
"""

from __future__ import annotations

from onert_checkpoint_generated.error_codes import ERROR_CODES

__all__ = ["ERROR_CODES", "CheckpointError", "FormatError", "ModelMismatchError",
           "NotRepresentableError", "UnsupportedFormatError", "error_for", "released_error"]


class CheckpointError(ValueError):
    """Base class of every error this package raises about a checkpoint."""

    category = "format"

    def __init__(self, code: str, field: str | None, offset: int | None, message: str) -> None:
        if code not in ERROR_CODES:
            raise AssertionError(f"undocumented error code {code!r}")
        self.code = code
        self.field = field
        self.offset = offset
        self.message = message
        where = ", ".join(f"{k} {v}" for k, v in (("field", field), ("offset", offset))
                          if v is not None)
        super().__init__(f"{code}: {message} ({where})" if where else f"{code}: {message}")

    def to_dict(self) -> dict[str, object]:
        """The ``{"code", "field", "offset", "message"}`` object of the JSON contract."""
        return {"code": self.code, "field": self.field, "offset": self.offset,
                "message": self.message}


class FormatError(CheckpointError):
    """The bytes violate the layout of their revision."""


class UnsupportedFormatError(CheckpointError):
    """Not a checkpoint of this family, or a version this reader does not implement."""

    category = "version"


class ModelMismatchError(CheckpointError):
    """The checkpoint does not fit the circle model given with it."""

    category = "model"


class NotRepresentableError(CheckpointError):
    """The content cannot be written in the requested revision or dialect without loss."""

    category = "write"


_CLASSES: dict[str, type[CheckpointError]] = {
    cls.category: cls
    for cls in (FormatError, UnsupportedFormatError, ModelMismatchError, NotRepresentableError)
}
# A misuse of a checkpoint object (no file is involved): the base class, told apart by its code.
_CLASSES["usage"] = CheckpointError


def error_for(code: str, field: str | None, offset: int | None, message: str) -> CheckpointError:
    """Build the error of the class that the spec's category for ``code`` names."""
    return _CLASSES[ERROR_CODES[code]["category"]](code, field, offset, message)


def released_error(what: str = "the checkpoint") -> CheckpointError:
    """``released``: a checkpoint or entry used after its ``open`` block ended (an empty answer
    would let a save write a valid file of 0-byte tensors over the real one)."""
    return error_for("released", None, None,
                     f"{what}: the storage of this checkpoint was released when its `open` block "
                     "ended; copy what must outlive the block inside it (np.array(t.data)), or "
                     "use load()")
