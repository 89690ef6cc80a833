"""Schema 2 checkpoints: constants, reading and validation (spec/SPEC.md, section 6).

One module per part of SPEC 6.5's reading order: ``header`` (H1-H5), ``section_table``
(T1-T5), ``tensors`` (R0-R11), ``optimizer`` (O1-O10), ``state`` (V1-V9), ``origin``
(G1-G3), ``data_ranges`` (D0-D4 and the deferred data checks); ``rules`` holds what they
share, ``constants`` the numbers of 6.1-6.4, ``reader`` puts them together.
"""

from .reader import read

__all__ = ["read"]
