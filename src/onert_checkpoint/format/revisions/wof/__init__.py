"""The weight-only format (spec/SPEC.md 5): its record; ``reader`` validates a file, ``write``
writes it."""

from ...layout import WofLayout
from ..record import BY_CIRCLE_INDEX, Revision

REVISION = Revision("wof", 1, "wof.reader", "wof.write", "WOF", optimizers={}, state_keys=(),
                    keyed_by=BY_CIRCLE_INDEX, layout_type=WofLayout)
