"""What the command modules of ``onert-ckpt`` share: the exit statuses and the error a command
raises to be reported as one line (:mod:`.cli` reports it; :mod:`.conformance` and
:mod:`.jobs_cli` raise it without importing :mod:`.cli`, which imports them)."""

from __future__ import annotations

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "CliError"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """A failure the command line reports as one line: ``code`` and exit status."""

    def __init__(self, code: str, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
