"""``diff`` within the bound of every public path (tests/invariants/test_bounded_cost.py): its
peak memory over the same command on two tiny files stays within 64 MiB + 8x the two inputs'
size, whatever their entry count, with and without ``--json``.

Two schema-3 files of 200,000 entries (1.6 MB each, 8 bytes a tensor): pairing the entries
through a dict of every tensor of both files, a row object per entry and the whole JSON text
built at once took the command to 288 MiB over the baseline, with or without ``--json``; the
bound here is 88 MiB. The rows are kept as columns, the tensors made and dropped a chunk at a
time, the JSON written in pieces: 47 MiB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.invariants.test_bounded_cost import MIB, bound, cli, peaks_of
from tests.large_files import v3_many_entries

ENTRIES = 200_000


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("diff-many")
    out = {}
    for name, n in (("a", ENTRIES), ("b", ENTRIES), ("tiny-a", 4), ("tiny-b", 4)):
        out[name] = folder / f"{name}.ckpt"
        out[name].write_bytes(v3_many_entries(n))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["text", "json"])
def test_diff_of_many_entries_stays_within_the_bound(files, extra):
    (base, base_status, base_err), (peak, got, err) = peaks_of(
        cli("diff", *extra, files["tiny-a"], files["tiny-b"]),
        cli("diff", *extra, files["a"], files["b"]),
    )
    assert base_status == 0 and got == 0, (base_err + err)[-2000:]
    size = files["a"].stat().st_size + files["b"].stat().st_size
    assert peak - base <= bound(size), (
        f"diff {' '.join(extra)}: {(peak - base) / MIB:.0f} MiB over the tiny files' peak for "
        f"two files of {ENTRIES} entries ({size} bytes); bound {bound(size) / MIB:.0f} MiB"
    )
