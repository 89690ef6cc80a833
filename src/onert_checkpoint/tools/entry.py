"""The ``onert-ckpt`` entry point: ``--version`` answered before NumPy and the format modules
are imported (start-up time), anything else handed over to :mod:`onert_checkpoint.tools.cli`."""

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
