"""The model-side walks are linear in the model's size.

Each walk is timed against a plain pass over the same operators and their input tensors (the
least any walk does), on one model of 10,000 FULLY_CONNECTED operators: a linear walk costs a
few such passes, a membership test on a list per tensor (what these walks did) hundreds. The
ratio of two timings in one process, each the fastest of several runs, stays meaningful on a
busy machine where 4x-the-size ratios of millisecond timings did not. The models are built as
objects (each operator with its own weight and bias constants), so no flatbuffer is needed.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from onert_checkpoint.circle.model import CircleModel, CircleOperator, CircleTensor
from tests.cpu_timing import cpu_times

LAYERS = 10_000  # operators; twice as many constant tensors
#: walk time / plain pass time; a linear walk measured 2-5, a list membership test per tensor
#: several hundred
LIMIT = 25.0


def fc_chain(layers: int) -> CircleModel:
    """``layers`` FULLY_CONNECTED operators: activation 3k, weight 3k+1, bias 3k+2."""
    tensors, operators = [], []
    for k in range(layers):
        for j, constant in enumerate((False, True, True)):
            tensors.append(CircleTensor(3 * k + j, f"t{3 * k + j}", "float32", 0, (1,), 4,
                                        constant))
        out = 3 * (k + 1) if k + 1 < layers else 3 * k
        operators.append(CircleOperator("FULLY_CONNECTED", (3 * k, 3 * k + 1, 3 * k + 2),
                                        (out,)))
    return CircleModel(tensors, operators, (0,), (3 * (layers - 1),), {}, b"")


def fastest(action: Callable[[], object], repeat: int = 5) -> float:
    """The least CPU time of ``repeat`` runs (a walk has no faulting-in to skew its minimum)."""
    return min(cpu_times(action, repeat))


def plain_pass(model: CircleModel) -> int:
    """The least work of any walk: every operator's inputs, each tensor looked at once."""
    return sum(1 for op in model.operators for i in op.inputs
               if i >= 0 and model.tensors[i].is_constant)


WALKS: dict[str, Callable[[CircleModel], list[int]]] = {
    "micro_saved_indices": lambda m: m.micro_saved_indices(),
    "trainable_inputs": lambda m: m.trainable_inputs(),
}


@pytest.fixture(scope="module")
def model() -> CircleModel:
    return fc_chain(LAYERS)


@pytest.mark.parametrize("walk", list(WALKS))
def test_walk_is_linear(model, walk):
    act = WALKS[walk]
    got = act(model)
    expected = sorted(3 * k + j for k in range(LAYERS) for j in (1, 2))
    assert sorted(got) == expected and len(set(got)) == len(got)
    ratio = fastest(lambda: act(model)) / max(fastest(lambda: plain_pass(model)), 1e-5)
    assert ratio < LIMIT, f"{walk}: {ratio:.0f}x a plain pass over {LAYERS} operators"


def test_micro_saved_order_is_last_operator_first():
    """The order onert-micro saves in (OMCheckpointSaver.cpp): operators from the last, each
    one's constant inputs in input order; a tensor read twice is saved once."""
    model = fc_chain(3)
    assert model.micro_saved_indices() == [7, 8, 4, 5, 1, 2]
    assert model.trainable_inputs() == [1, 2, 4, 5, 7, 8]
    shared = CircleModel(
        model.tensors, [*model.operators, CircleOperator("FULLY_CONNECTED", (6, 1, 2), (6,))],
        (0,), (6,), {}, b"",
    )
    assert shared.micro_saved_indices() == [1, 2, 7, 8, 4, 5]
    assert shared.trainable_inputs() == [1, 2, 4, 5, 7, 8]
