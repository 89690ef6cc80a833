"""Schema 3 checkpoints: schema 2's container with compact tables (spec/SPEC.md 7).

What is the same as schema 2 (header, section table, state, origin, the optimizer's head,
descriptors and names) is read by schema 2's modules (revisions/v2). Schema 3's own parts:
``tensor_columns`` (the tensors section as columns, C0-C13), ``slot_entries`` (8-byte slot
entries, O1-O9 of 7.2), ``placement`` (data ranges placed by rule, P0-P4, and the deferred
data checks); ``constants`` the numbers of SPEC 7, ``reader`` puts them together.
"""

from .placement import place
from .reader import read

__all__ = ["place", "read"]
