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
position, another field's value), or the file is cut at a structural boundary; schema-2
files are then usually resealed (every CRC-32C recomputed).
"""

from __future__ import annotations

import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import atheris  # noqa: E402

from tests.fuzz.instrumented import import_instrumented  # noqa: E402

import_instrumented()  # before anything imports the package's modules uninstrumented

from tests.fuzz.structure import boundaries, check_load, field_map, reseal_v2  # noqa: E402

U32_MAX = 2**32 - 1


#: Open crash bugs, as (exception type, function where it is raised): ignored here so the
#: time-boxed CI run keeps looking for new ones. Each has an xfail case in tests/corpus.
#: Remove an entry when its corpus case passes.
KNOWN_CRASHES: set[tuple[type[BaseException], str]] = set()


def _is_known_crash(exc: BaseException) -> bool:
    tb = exc.__traceback__
    names = set()
    while tb is not None:
        names.add(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return any(type(exc) is t and name in names for t, name in KNOWN_CRASHES)


def test_one_input(data: bytes) -> None:
    try:
        check_load(data)
    except Exception as exc:
        if not _is_known_crash(exc):
            raise


def _edges(data: bytes, at: int) -> list[int]:
    size = len(data)
    return [0, 1, 4, 8, 20, size - 8, size - 1, size, size + 1, 2**31, U32_MAX, at, at + 4]


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if not data or rng.random() < 0.5:
        return atheris.Mutate(data, max_size)
    try:
        fields = [f for f in field_map(data) if f.size in (4, 8)]
    except Exception:  # a mutator must never stop the fuzzer
        fields = []
    choice = rng.random()
    if fields and choice < 0.6:
        f = rng.choice(fields)
        if rng.random() < 0.3:
            g = rng.choice(fields)
            value = int.from_bytes(data[g.at : g.at + g.size], "little")
        else:
            value = rng.choice(_edges(data, f.at))
        value &= (1 << (8 * f.size)) - 1
        out = data[: f.at] + value.to_bytes(f.size, "little") + data[f.at + f.size :]
    elif choice < 0.85:
        out = data[: rng.choice(boundaries(data))]
    else:
        out = data + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 16)))
    if len(out) > 2 and out[2] in (2, 3) and rng.random() < 0.75:
        out = reseal_v2(out)  # schemas 2 and 3: reach the rules behind the CRC-32C checks
    return out[:max_size]


def main() -> None:
    atheris.Setup(sys.argv, test_one_input, custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
