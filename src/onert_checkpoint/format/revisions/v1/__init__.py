"""Schema 1 (spec/SPEC.md 4): its record; ``reader`` validates a file, ``write`` writes it as
each runtime does."""

from ...layout import Schema1Layout
from ..record import BY_RUNTIME, Revision

REVISION = Revision("v1", 1, "v1.reader", "v1.write", "schema 1",
                    optimizers={"sgd": (), "adam": ("m", "v")}, state_keys=("step", "epoch"),
                    dialects=("onert", "onert-micro"), keyed_by=BY_RUNTIME,
                    layout_type=Schema1Layout)
