"""The weight-only format (spec/SPEC.md 5): ``reader`` validates a file, ``write`` writes it."""

from .reader import HEADER_SIZE, is_wof_shaped, read, read_layout

__all__ = ["HEADER_SIZE", "is_wof_shaped", "read", "read_layout"]
