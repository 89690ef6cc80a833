"""The ``onert-ckpt`` entry point: answers ``--version`` before anything heavy is imported,
then hands over to :mod:`onert_checkpoint.tools.cli` (start-up time: the command
line imports NumPy and the format modules only for commands that use them)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from .. import __version__

        print(f"onert-ckpt {__version__}")
        return 0
    from .cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
