"""Schema 3 checkpoints: schema 2's container with compact tables (spec/SPEC.md 7): the record.

Schema 3's own parts: ``tensor_columns`` (the tensors section as columns, C0-C13),
``slot_entries`` (8-byte slot entries, O1-O9 of 7.2), ``placement`` (data ranges placed by rule,
P0-P4, and the deferred data checks), ``range_index`` (7.5); ``reader`` puts them together with
the container's (format/container) and schema 2's optimizer head (revisions/v2).
"""

from dataclasses import replace

from ...layout import Schema3Layout
from .. import v2

REVISION = replace(v2.REVISION, name="v3", version=3, reader="v3.reader", writer="v3.write",
                   title="schema 3", reserved_model_index=0xFFFF_FFFF, layout_type=Schema3Layout)
