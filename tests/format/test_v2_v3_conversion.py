"""Between schemas 2 and 3 (SPEC.md 7.3): everything is kept but the data order, except a
schema-2 model index 0xFFFFFFFF, which schema 3 reserves as NO_MODEL_INDEX and which a
conversion to schema 3 refuses (``not_representable``, field ``tensors[k].model_index``)
instead of dropping; every schema-3 file converts to schema 2.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint import Checkpoint, Tensor

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors"
V3_VALID = sorted(p.stem for p in VECTORS.glob("v3-*.ckpt"))


def v2_with_reserved_model_index() -> bytes:
    return oc.to_bytes(
        Checkpoint(
            tensors=[
                Tensor(0, np.ones(4, np.uint8), model_index=3),
                Tensor(1, np.ones(4, np.uint8), model_index=0xFFFF_FFFF),
            ]
        ),
        revision="v2",
    )


@pytest.mark.parametrize("how", ["convert", "upgrade"])
def test_model_index_0xffffffff_is_not_representable_in_schema_3(how: str) -> None:
    ckpt = oc.load(v2_with_reserved_model_index())
    assert ckpt.tensors[1].model_index == 0xFFFF_FFFF  # valid schema 2
    with pytest.raises(oc.NotRepresentableError) as info:
        oc.convert(ckpt, "v3") if how == "convert" else oc.upgrade(ckpt, to="v3")
    assert (info.value.code, info.value.field) == ("not_representable", "tensors[1].model_index")
    # schema 2 keeps it, and so does the default conversion when it is told to keep v2
    kept = oc.load(oc.to_bytes(oc.convert(ckpt, to=None)))
    assert kept.revision == "v2" and kept.tensors[1].model_index == 0xFFFF_FFFF


def test_the_command_line_refuses_it_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "in.ckpt"
    src.write_bytes(v2_with_reserved_model_index())
    out = tmp_path / "out.ckpt"
    res = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "convert", str(src), str(out), "--to", "v3"],
        capture_output=True, text=True,
    )
    assert res.returncode == 1
    assert "not_representable" in res.stderr and "0xFFFFFFFF" in res.stderr
    assert not out.exists()
    same = subprocess.run(
        [sys.executable, "-m", "onert_checkpoint", "convert", str(src), str(out)],
        capture_output=True, text=True,
    )
    assert same.returncode == 0 and oc.load(out).revision == "v2"  # no --to: the input's


@pytest.mark.parametrize("name", V3_VALID)
def test_every_schema_3_vector_converts_to_schema_2_with_its_content(name: str) -> None:
    ckpt = oc.load((VECTORS / f"{name}.ckpt").read_bytes())
    v2 = oc.load(oc.to_bytes(oc.convert(ckpt, "v2")))
    assert v2.revision == "v2"
    assert v2.content_equal(ckpt)


def _annotations(ckpt: Checkpoint) -> list[tuple[object, ...]]:
    return [(t.index, t.name, t.dtype, t.shape, t.model_index) for t in ckpt.tensors]


@pytest.mark.parametrize("name", V3_VALID)
def test_a_conversion_keeps_every_tensor_record_as_it_was(name: str) -> None:
    """Names, dtypes, shapes and model indices go through schema 2 and back unchanged: a
    record without a shape stays without one (a copy must not take the typed view's shape)."""
    ckpt = oc.load((VECTORS / f"{name}.ckpt").read_bytes())
    v2 = oc.load(oc.to_bytes(oc.convert(ckpt, "v2")))
    assert _annotations(v2) == _annotations(ckpt)
    assert _annotations(oc.load(oc.to_bytes(oc.convert(v2, "v3")))) == _annotations(ckpt)
