"""Schema 2 checkpoints (spec/SPEC.md, section 6): the record; reading and validation, writing.

One module per part of SPEC 6.5's reading order: ``tensors`` (R0-R11), ``optimizer``
(O1-O10), ``data_ranges`` (D0-D4 and the deferred data checks); the header, section table,
state and origin are the container's (format/container); ``reader`` puts them together.
"""

from ...layout import Schema2Layout
from ..record import Revision

REVISION = Revision("v2", 2, "v2.reader", "v2.write", "schema 2", streams=True,
                    holds_annotations=True, holds_sections=True, layout_type=Schema2Layout)
