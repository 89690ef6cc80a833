"""``python -m onert_checkpoint``: the ``onert-ckpt`` command line."""

from .tools.entry import main

raise SystemExit(main())
