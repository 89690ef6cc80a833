"""Schema 1 (spec/SPEC.md 4): ``reader`` validates a file, ``write`` writes it as each runtime
does."""

from .reader import FOOTER_SIZE, HEADER_SIZE, V1Header, read, read_layout

__all__ = ["FOOTER_SIZE", "HEADER_SIZE", "V1Header", "read", "read_layout"]
