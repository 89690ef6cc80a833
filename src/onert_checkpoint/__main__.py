"""``python -m onert_checkpoint``: the ``onert-ckpt`` command line."""

from .tools.cli import main

raise SystemExit(main())
