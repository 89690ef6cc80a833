"""The PyTorch bridge: Adam/SGD state to a checkpoint of the circle model and back.

Runs with the CPU build of torch (the ``[torch]`` extra); skipped, visibly, without it.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.model import CircleModel
from onert_checkpoint.circle.onert_order import predict_onert_order
from onert_checkpoint.format.layout import Schema1Layout
from onert_checkpoint.interchange.torch_bridge import (
    _from_circle,
    _to_circle,
)

torch = pytest.importorskip("torch", reason="torch is not installed (pip install '.[torch]')")

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "data" / "real-onert" / "fc2.circle"
sys.path.insert(0, str(ROOT / "tests" / "interop"))
from circle_builder import build_fc_model  # noqa: E402

NAMES = {"w0": "0.weight", "b0": "0.bias", "w1": "1.weight", "b1": "1.bias"}


def trained(widths: list[int], optimizer: str = "adam", steps: int = 3):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(a, b) for a, b in itertools.pairwise(widths)]
    net = torch.nn.Sequential(*layers)
    if optimizer == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
    else:
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        net(torch.randn(2, widths[0])).pow(2).mean().backward()
        opt.step()
    return net, opt


def test_linear_weights_are_out_in_in_circle_and_torch() -> None:
    model = CircleModel.load(MODEL)
    assert model.tensors[1].shape == (8, 4)  # FULLY_CONNECTED 4 -> 8
    assert tuple(torch.nn.Linear(4, 8).weight.shape) == (8, 4)


def test_from_torch_adam() -> None:
    net, opt = trained([4, 8, 3])
    ckpt = oc.from_torch(net, opt.state_dict(), MODEL)
    assert ckpt.optimizer.kind == "adam" and ckpt.step == 3 and ckpt.epoch == 0
    back = oc.bind(oc.load(oc.to_bytes(ckpt)), MODEL)
    params = dict(net.named_parameters())
    state = opt.state_dict()["state"]
    for k, (circle, name) in enumerate(NAMES.items()):
        t = back[circle]
        np.testing.assert_array_equal(np.asarray(t.data), params[name].detach().numpy())
        m = back.slot("m", circle).raw.view("<f4").reshape(t.shape)
        v = back.slot("v", circle).raw.view("<f4").reshape(t.shape)
        np.testing.assert_array_equal(m, state[k]["exp_avg"].numpy())
        np.testing.assert_array_equal(v, state[k]["exp_avg_sq"].numpy())


def test_from_torch_sgd_has_no_slots() -> None:
    net, opt = trained([4, 8, 3], "sgd")
    ckpt = oc.from_torch(net, opt.state_dict(), MODEL)
    assert ckpt.optimizer.kind == "sgd"
    assert oc.load(oc.to_bytes(ckpt)).dialect == "onert"


def test_round_trip_through_torch() -> None:
    net, opt = trained([4, 8, 3])
    ckpt = oc.load(oc.to_bytes(oc.from_torch(net, opt.state_dict(), MODEL)))
    model_state, optim_state = oc.to_torch(
        ckpt, MODEL, names=NAMES, param_groups=opt.state_dict()["param_groups"]
    )
    net2 = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 3))
    net2.load_state_dict(model_state)
    opt2 = torch.optim.Adam(net2.parameters(), lr=0.01)
    opt2.load_state_dict(optim_state)
    for a, b in zip(net.parameters(), net2.parameters()):
        assert torch.equal(a, b)
    s1, s2 = opt.state_dict()["state"], opt2.state_dict()["state"]
    for k in s1:
        for key in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(s1[k][key], s2[k][key]), (k, key)


def test_onert_entry_order_of_a_deeper_model(tmp_path: Path) -> None:
    """Three layers: onert's entries are not in tensor order, and the bridge follows it."""
    path = tmp_path / "fc3.circle"
    path.write_bytes(build_fc_model([4, 8, 8, 3]))
    model = CircleModel.load(path)
    net, opt = trained([4, 8, 8, 3])
    ckpt = oc.from_torch(net, opt.state_dict(), model)
    order = [t.model_index for t in ckpt.tensors]
    assert order == predict_onert_order(model)
    params = list(net.parameters())
    position = {t: k for k, t in enumerate(model.trainable_inputs())}
    for t in ckpt.tensors:
        expected = params[position[t.model_index]].detach().numpy()
        np.testing.assert_array_equal(t.raw.view("<f4").reshape(expected.shape), expected)


def test_micro_dialect() -> None:
    net, opt = trained([4, 8, 3])
    ckpt = oc.from_torch(net, opt.state_dict(), MODEL, dialect="onert-micro")
    back = oc.load(oc.to_bytes(ckpt))
    assert back.dialect == "onert-micro" and back.table_length == 7
    assert sorted(t.index for t in back.tensors) == [1, 2, 4, 5]


def test_conv2d_layout_is_permuted_both_ways() -> None:
    torch_weight = np.arange(2 * 3 * 5 * 7, dtype=np.float32).reshape(2, 3, 5, 7)  # O I H W
    circle = _to_circle(torch_weight, (2, 5, 7, 3), "conv.weight")  # O H W I
    assert circle.shape == (2, 5, 7, 3)
    assert circle[1, 4, 6, 2] == torch_weight[1, 2, 4, 6]
    np.testing.assert_array_equal(_from_circle(circle, (2, 3, 5, 7)), torch_weight)


def test_shape_mismatch_is_model_mismatch() -> None:
    net, opt = trained([4, 6, 3])
    with pytest.raises(oc.ModelMismatchError):
        oc.from_torch(net, opt.state_dict(), MODEL)


def test_momentum_is_not_representable() -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Linear(8, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(torch.randn(1, 4)).sum().backward()
    opt.step()
    with pytest.raises(oc.NotRepresentableError):
        oc.from_torch(net, opt.state_dict(), MODEL)


def test_to_torch_checks_the_files_own_model_indices() -> None:
    """A schema-2 record's model index comes from the file, and a checkpoint bound to another
    model carries that model's: to_torch binds them to its own model again, so an index past
    the model, a size that does not fit, or two records of one unshared tensor are a
    ModelMismatchError, never an IndexError or a parameter silently dropped."""
    data = ROOT / "tests" / "data" / "real-onert"
    fc3 = data / "fc3.circle"
    v2 = oc.convert(oc.load(data / "fc3-adam-step12.ckpt", model=fc3), "v2", model=fc3)
    model_state, _ = oc.to_torch(oc.load(oc.to_bytes(v2)), fc3)
    assert len(model_state) == 6
    for index, pattern in ((2**31, "not in the model"), (9, "bytes")):
        bad = oc.load(oc.to_bytes(v2))
        bad.tensors[2].model_index = index
        with pytest.raises(oc.ModelMismatchError, match=pattern):
            oc.to_torch(oc.load(oc.to_bytes(bad)), fc3)  # as a file holds it
    # two records of one tensor, of its size (the writer refuses such a file; built here)
    twice = oc.Checkpoint(tensors=[oc.Tensor(k, np.asarray(v2.tensors[0].raw).copy(),
                                             model_index=v2.tensors[0].model_index)
                                   for k in range(2)], revision="v2")
    with pytest.raises(oc.ModelMismatchError, match="both hold tensor"):
        oc.to_torch(twice, fc3)
    other = oc.load(data / "fc3sq-adam-step12.ckpt", model=data / "fc3sq.circle")
    with pytest.raises(oc.ModelMismatchError):
        oc.to_torch(other, fc3)


def test_micro_four_byte_elements_are_not_representable_in_torch() -> None:
    """onert-micro saves 4 bytes per element whatever the type (the micro_element_size quirk):
    an int8 bias of 2 elements is 8 bytes in the file, which no torch tensor of the circle
    shape holds; to_torch says so, naming the entry, instead of a numpy reshape error."""
    from circle_builder import OpSpec, TensorSpec, build_model

    model = oc.CircleModel.load(build_model(
        [TensorSpec("x", (1, 4)), TensorSpec("w", (2, 4), "float32", np.ones((2, 4), np.float32)),
         TensorSpec("b", (2,), "int8", np.array([1, 2], np.int8)), TensorSpec("y", (1, 2))],
        [OpSpec("FULLY_CONNECTED", (0, 1, 2), (3,))], [0], [3]))
    ckpt = oc.Checkpoint(
        tensors=[oc.Tensor(1, np.ones(8, np.float32)),
                 oc.Tensor(2, np.array([1, 2], np.int32).view(np.uint8))],
        state=oc.TrainingState(step=1, epoch=0),
        layout=Schema1Layout("v1", dialect="onert-micro", num_entries=4))
    loaded = oc.load(oc.to_bytes(ckpt), model=model)
    assert loaded.layout.quirks == ("micro_element_size",)
    with pytest.raises(oc.NotRepresentableError, match="entry 2 holds 8 bytes"):
        oc.to_torch(loaded, model)


def test_one_names_dict_serves_both_directions() -> None:
    """``names`` runs circle tensor name -> parameter name in to_torch and from_torch alike:
    the dict to_torch took builds the checkpoint back."""
    net, opt = trained([4, 8, 3])
    names = {c: f"layer{k}.{NAMES[c].split('.')[1]}" for k, c in enumerate(NAMES)}
    params = {names[c]: dict(net.named_parameters())[NAMES[c]] for c in NAMES}
    ckpt = oc.from_torch(params, opt.state_dict(), MODEL, names=names)
    model_state, _ = oc.to_torch(oc.load(oc.to_bytes(ckpt)), MODEL, names=names)
    assert set(model_state) == set(params)
    for name, value in params.items():
        assert torch.equal(model_state[name], value.detach())


def test_from_torch_reads_a_reversed_map_with_a_deprecation_warning() -> None:
    net, opt = trained([4, 8, 3])
    params = {f"p{k}": p for k, (_, p) in enumerate(net.named_parameters())}
    forward = {c: f"p{k}" for k, c in enumerate(NAMES)}  # circle -> parameter
    reverse = {p: c for c, p in forward.items()}  # the earlier convention
    expected = oc.to_bytes(oc.from_torch(params, opt.state_dict(), MODEL, names=forward))
    with pytest.warns(DeprecationWarning, match="other way round"):
        ckpt = oc.from_torch(params, opt.state_dict(), MODEL, names=reverse)
    assert oc.to_bytes(ckpt) == expected


def test_a_names_value_that_is_no_parameter_is_refused() -> None:
    net, opt = trained([4, 8, 3])
    names = dict(NAMES, w0="nope.weight")
    with pytest.raises(oc.CheckpointError) as err:
        oc.from_torch(net, opt.state_dict(), MODEL, names=names)
    assert err.value.code == "model_mismatch" and "'nope.weight'" in str(err.value)


def test_to_torch_gives_two_state_dicts() -> None:
    net, opt = trained([4, 8, 3])
    ckpt = oc.from_torch(net, opt.state_dict(), MODEL)
    model_state, optim_state = oc.to_torch(oc.load(oc.to_bytes(ckpt)), MODEL, names=NAMES)
    assert set(model_state) == set(dict(net.named_parameters()))
    assert set(optim_state) == {"state", "param_groups"}
