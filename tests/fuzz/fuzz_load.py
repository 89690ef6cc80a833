#!/usr/bin/env python3
"""Coverage-guided fuzzing of ``onert_checkpoint.load`` with atheris (libFuzzer for Python).

Every input must keep the properties of tests/fuzz/structure.py ``check_load``: load returns a
checkpoint that saves back byte for byte, or raises a CheckpointError with a documented code,
field and offset. Anything else (another exception, a failed assertion) is a crash, and
libFuzzer writes the input to ``crash-<sha1>``.

Run it through the runner, which seeds it from tests/corpus and time-boxes it::

    python tests/fuzz/run.py --seconds 600            # python target, 10 minutes
    python tests/fuzz/run.py --target c --seconds 600 # the C reference reader (clang)

or directly, with any libFuzzer flags::

    python tests/fuzz/fuzz_load.py WORK_DIR tests/corpus/files -max_total_time=60

Besides libFuzzer's own byte mutations, half of the mutations are structure-aware: a u32 header
field or table entry is set to an edge value (0, 1, the file size +-1, 2**31, 2**32-1, its own
position, another field's value), or the file is cut at a structural boundary.
"""

from __future__ import annotations

import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import atheris  # noqa: E402

with atheris.instrument_imports(include=["onert_checkpoint", "onert_checkpoint_generated",
                                         "kaitaistruct", "construct"]):
    import onert_checkpoint  # noqa: F401

from tests.fuzz.structure import boundaries, check_load, field_map, u32_at  # noqa: E402

U32_MAX = 2**32 - 1


def test_one_input(data: bytes) -> None:
    check_load(data)


def _edges(data: bytes, at: int) -> list[int]:
    size = len(data)
    return [0, 1, 4, 8, 20, size - 8, size - 1, size, size + 1, 2**31, U32_MAX, at, at + 4]


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if not data or rng.random() < 0.5:
        return atheris.Mutate(data, max_size)
    try:
        fields = [f for f in field_map(data) if f.size == 4]
    except Exception:  # a mutator must never stop the fuzzer
        fields = []
    choice = rng.random()
    if fields and choice < 0.6:
        f = rng.choice(fields)
        if rng.random() < 0.3:
            value = u32_at(data, rng.choice(fields).at)
        else:
            value = rng.choice(_edges(data, f.at)) & U32_MAX
        out = data[: f.at] + value.to_bytes(4, "little") + data[f.at + 4 :]
    elif choice < 0.85:
        out = data[: rng.choice(boundaries(data))]
    else:
        out = data + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
    return out[:max_size]


def main() -> None:
    atheris.Setup(sys.argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
