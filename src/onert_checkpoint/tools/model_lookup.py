"""Which circle model a command reads a checkpoint through, when ``--model`` is not given.

A checkpoint names no model (schema 1 cannot), so the command line looks in three places, in
this order, and says which model it used (``info`` prints it):

1. ``--model MODEL.circle``;
2. the checkpoint's own name with ``.circle`` (``run/fc2.ckpt`` -> ``run/fc2.circle``), beside it;
3. the file the environment variable ``ONERT_CKPT_MODEL`` names.

Nothing else is guessed: a model that does not fit the checkpoint is an error naming where the
model came from, never silently skipped.
"""

from __future__ import annotations

import os
from typing import NamedTuple

__all__ = ["MODEL_ENV", "ModelChoice", "find_model"]

#: The environment variable naming the circle model for commands given no ``--model`` and
#: whose checkpoint has no ``<name>.circle`` beside it.
MODEL_ENV = "ONERT_CKPT_MODEL"


class ModelChoice(NamedTuple):
    """The model path a command uses and how it was found."""

    path: str
    #: "--model", "beside the checkpoint" or "$ONERT_CKPT_MODEL"
    how: str

    def describe(self) -> str:
        return self.path if self.how == "--model" else f"{self.path} ({self.how})"


def find_model(given: str | None, *checkpoints: str) -> ModelChoice | None:
    """The model for ``checkpoints`` (the first with a model beside it wins), or None."""
    if given is not None:
        return ModelChoice(given, "--model")
    for path in checkpoints:
        candidate = os.path.splitext(path)[0] + ".circle"
        if path and candidate != path and os.path.isfile(candidate):
            return ModelChoice(candidate, "beside the checkpoint")
    named = os.environ.get(MODEL_ENV)
    return ModelChoice(named, f"${MODEL_ENV}") if named else None
