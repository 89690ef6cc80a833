"""A safetensors file past 64 MiB is imported from the mapped file (its arrays views of the
mapping, tools/bench/bench_memory.py measures the memory), and gives the same checkpoint as the
library's own reader: the import of an export is the original file byte for byte, through the
command line and the API alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import onert_checkpoint as oc
from onert_checkpoint.interchange import safetensors_io

MIB = 1 << 20


def test_import_of_a_large_export_reads_the_mapping_and_gives_the_file_back(
    tmp_path: Path
) -> None:
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(7 * MIB, dtype=np.float32) if i % 2 else
              rng.integers(-9, 9, 3 * MIB, dtype=np.int16) for i in range(4)]
    tensors = [oc.Tensor(i, v, name=f"t{i}", dtype=str(v.dtype), shape=v.shape)
               for i, v in enumerate(values)]
    opt = oc.Optimizer("adam")
    for slot in opt.slots:
        opt.slots[slot] = {i: oc.Buffer(i, np.abs(np.asarray(t.data, np.float32)[: 1000]))
                           for i, t in enumerate(tensors) if i % 2}
    original = tmp_path / "a.ckpt"
    oc.save(oc.Checkpoint(tensors, opt, oc.TrainingState(step=3, epoch=1)), original,
            revision="v3")
    export = tmp_path / "a.safetensors"
    oc.to_safetensors(oc.load(original), export)
    assert export.stat().st_size > safetensors_io.MAP_FROM
    mapped = safetensors_io._mapped_arrays(str(export))
    assert {str(a.dtype) for a in mapped.values()} == {"float32", "int16", "uint8"}  # m, v raw
    assert mapped and all(not a.flags.owndata and not a.flags.writeable for a in mapped.values())
    from safetensors.numpy import load_file

    for key, arr in load_file(str(export)).items():
        assert np.array_equal(mapped[key], arr) and mapped[key].dtype == arr.dtype, key
    assert oc.to_bytes(oc.from_safetensors(export)) == original.read_bytes()
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", "import", str(export),
                           str(tmp_path / "b.ckpt")], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "b.ckpt").read_bytes() == original.read_bytes()
