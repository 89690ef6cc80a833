#!/usr/bin/env python3
"""Coverage-guided fuzzing of every public path after a successful load (atheris).

Inputs that load go through tests/fuzz/post_load.py ``check_post_load``: describe and every
JSON output, layout_map, diff (a file equals itself), convert to every revision and dialect,
export/import in both formats, and the command line's renderers. A broken property, or an
exception other than the documented ones, is a crash. Inputs that do not load are skipped
(tests/fuzz/fuzz_load.py fuzzes ``load`` itself). The mutator is fuzz_load's structure-aware
one, which reseals schema-2 files so that mutated files still load.

    python tests/fuzz/run.py --target tools --seconds 600
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import atheris  # noqa: E402

from tests.fuzz.instrumented import import_instrumented  # noqa: E402

import_instrumented()  # before anything imports the package's modules uninstrumented

from tests.fuzz.fuzz_load import custom_mutator  # noqa: E402
from tests.fuzz.post_load import check_post_load  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="ockpt-fuzz-tools-"))


def test_one_input(data: bytes) -> None:
    check_post_load(data, TMP)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
