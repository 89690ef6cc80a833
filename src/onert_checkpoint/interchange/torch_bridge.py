"""PyTorch bridge (the ``[torch]`` extra): checkpoints from and to ``state_dict`` objects.

A ``torch.nn.Module``'s parameters and a ``torch.optim.Adam`` (or ``SGD``) state become a
checkpoint of the circle model that names the tensors: Adam's ``exp_avg`` is the ``m`` slot,
``exp_avg_sq`` the ``v`` slot, and its ``step`` the training state's step.

Pairing: a parameter goes to the circle tensor of the same name, or to the one ``names`` pairs
it with; otherwise parameters and the model's trainable tensors are paired in order (the constant
inputs of FULLY_CONNECTED and CONV_2D operators, operator by operator, which is the order of
``Module.parameters()`` for a network built layer by layer). Layouts: circle FULLY_CONNECTED
weights are ``[out, in]`` like ``torch.nn.Linear``; circle CONV_2D weights are ``[O, H, W, I]``
where ``torch.nn.Conv2d`` has ``[O, I, H, W]``, so those are permuted both ways.

``names`` maps circle tensor name -> parameter name (``{"w0": "0.weight"}``) both ways (a map
the other way round, ``from_torch``'s earlier convention, is read with a DeprecationWarning).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..circle.binding import bind
from ..circle.dialect_convert import to_dialect
from ..circle.initial import checkpoint_from_arrays
from ..circle.model import CircleModel, as_circle_model, has_numpy_dtype, not_representable
from ..circle.model import model_mismatch as _mismatch
from ..format.model import Checkpoint

__all__ = ["from_torch", "to_torch"]

#: torch.optim.Adam state names -> checkpoint slot names
ADAM_SLOTS = {"exp_avg": "m", "exp_avg_sq": "v"}

ModelLike = CircleModel | str | os.PathLike | bytes


def _by_parameter(names: Mapping[str, str] | None, params: Sequence[str],
                  model: CircleModel) -> dict[str, str]:
    """``names`` (circle tensor name -> parameter name) as parameter -> circle tensor name; a
    map that fits only the other way round (the earlier convention) is taken as it is, warned."""
    names = dict(names or {})
    if not names:
        return {}
    tensors = {t.name for t in model.tensors if t.name}
    known = set(params)
    documented = all(k in tensors for k in names) and all(v in known for v in names.values())
    reversed_ = all(k in known for k in names) and all(v in tensors for v in names.values())
    if reversed_ and not documented:
        warnings.warn("from_torch's names map circle tensor names to parameter names, as "
                      "to_torch's do; this one maps parameter names to circle tensor names and "
                      "was read that way: give it the other way round", DeprecationWarning,
                      stacklevel=3)
        return names
    out: dict[str, str] = {}
    for circle, param in names.items():
        if param not in known:
            raise _mismatch(f"names maps circle tensor {circle!r} to {param!r}, which is not a "
                            "parameter (names run circle tensor name -> parameter name)")
        if param in out:
            raise _mismatch(f"names gives parameter {param!r} two circle tensors")
        out[param] = circle
    return out


def _pair(params: Sequence[str], model: CircleModel,
          names: Mapping[str, str] | None) -> dict[str, int]:
    """torch parameter name -> circle tensor index (``names``: circle name -> parameter)."""
    by_name = {t.name: t.index for t in model.tensors if t.name}
    names = _by_parameter(names, params, model)
    if names or all(p in by_name for p in params):
        out = {}
        for p in params:
            target = names.get(p, p)
            if target not in by_name:
                raise _mismatch(f"parameter {p!r}: the model has no tensor {target!r}")
            out[p] = by_name[target]
        return out
    order = model.trainable_inputs()
    if len(order) != len(params):
        raise _mismatch(f"{len(params)} parameters but {len(order)} trainable tensors in the "
                        "model; pass names={circle tensor name: parameter name}")
    return dict(zip(params, order))


def _to_circle(value: np.ndarray, shape: tuple[int, ...], what: str) -> np.ndarray:
    if value.shape == shape:
        return value
    if value.ndim == 4 and tuple(np.transpose(value, (0, 2, 3, 1)).shape) == shape:
        return np.ascontiguousarray(np.transpose(value, (0, 2, 3, 1)))  # OIHW -> OHWI
    if value.size == int(np.prod(shape)) and value.ndim <= 1:
        return value.reshape(shape)
    raise _mismatch(f"{what} has shape {list(value.shape)}; the circle tensor has {list(shape)}")


def _from_circle(value: np.ndarray, torch_shape: tuple[int, ...] | None) -> np.ndarray:
    if torch_shape is None or value.shape == torch_shape:
        return value
    if value.ndim == 4 and tuple(np.transpose(value, (0, 3, 1, 2)).shape) == torch_shape:
        return np.transpose(value, (0, 3, 1, 2))  # OHWI -> OIHW
    return value.reshape(torch_shape)


def _numpy(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().contiguous().numpy()


def from_torch(model_state: Any, optim_state: Mapping[str, Any] | None, circle_model: ModelLike, *,
               names: Mapping[str, str] | None = None, dialect: str = "onert",
               epoch: int = 0) -> Checkpoint:
    """A checkpoint of ``circle_model`` from PyTorch parameters and optimizer state.

    ``model_state`` is a ``torch.nn.Module`` (its parameters, in order) or a mapping of
    parameter name to tensor (a ``state_dict`` holding only parameters). ``optim_state`` is
    ``optimizer.state_dict()`` of ``torch.optim.Adam`` or ``SGD`` over those parameters in the
    same order, or None (SGD). ``names`` maps a circle tensor name to a parameter name, as
    [`to_torch`][onert_checkpoint.to_torch]'s does (one dict serves both).
    """
    model = as_circle_model(circle_model)
    params = dict(getattr(model_state, "named_parameters", lambda: model_state)())
    pairs = _pair(list(params), model, names)
    weights = {i: _to_circle(_numpy(params[p]), model.tensors[i].shape, p)
               for p, i in pairs.items()}
    kind = "sgd"
    slots: dict[str, dict[int, np.ndarray]] = {}
    state = {"step": 0, "epoch": epoch}
    if optim_state is not None:
        groups = optim_state.get("param_groups", [])
        ids = [i for g in groups for i in g["params"]]
        per_param = optim_state.get("state", {})
        if any("betas" in g for g in groups):
            kind = "adam"
        if any("momentum_buffer" in s and s["momentum_buffer"] is not None
               for s in per_param.values()):
            raise not_representable(
                None, "SGD momentum buffers have no place in a checkpoint of this family")
        if len(ids) != len(params):
            raise _mismatch(f"the optimizer has {len(ids)} parameters; the model {len(params)}")
        steps = []
        if kind == "adam":
            slots = {slot: {} for slot in ADAM_SLOTS.values()}
            for pid, p in zip(ids, params):
                s = per_param.get(pid, {})
                for torch_name, slot in ADAM_SLOTS.items():
                    if torch_name in s:
                        slots[slot][pairs[p]] = _to_circle(_numpy(s[torch_name]),
                                                           model.tensors[pairs[p]].shape, p)
                if "step" in s:
                    steps.append(int(float(s["step"])))
        state["step"] = max(steps, default=0)
    return checkpoint_from_arrays(model, weights, optimizer=kind, slots=slots, state=state,
                                  dialect=dialect)


def to_torch(ckpt: Checkpoint, circle_model: ModelLike, *, names: Mapping[str, str] | None = None,
             param_groups: Sequence[Mapping[str, Any]] | None = None,
             shapes: Mapping[str, Sequence[int]] | None = None
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two state dicts, ``(model_state_dict, optim_state_dict)``: the first for
    ``module.load_state_dict``, the second for ``optimizer.load_state_dict`` (a module and an
    optimizer are the caller's to build).

    Parameters come in the model's trainable order, named after the circle tensors or as
    ``names`` maps them (circle name -> parameter name). ``param_groups`` gives the optimizer's
    hyper-parameters (e.g. ``optimizer.state_dict()["param_groups"]``; its ``params`` are
    replaced); ``shapes`` the torch shapes where they differ beyond CONV_2D's layout.
    """
    try:
        import torch
    except ImportError as exc:
        raise ImportError("the PyTorch bridge needs torch: pip install "
                          "'onert-checkpoint[torch]'") from exc

    model = as_circle_model(circle_model)
    if not _bound_to(ckpt, model):
        bind(ckpt, model.source)  # names the entries that do not fit the model
    indices = [t.model_index for t in ckpt.tensors]
    if None in indices or len(set(indices)) < len(indices):
        # onert's copies of a shared constant (SPEC B.9), or schema-2 records naming one tensor
        # twice: one parameter per tensor, as onert-micro holds them; copies that differ are
        # not_representable, copies onert does not make are model_mismatch
        ckpt = to_dialect(ckpt, "onert-micro", model, rescale=False)  # re-indexed only
    # every entry of an onert-micro checkpoint names its tensor (converted above if needed)
    by_model = {t.model_index: t for t in ckpt.tensors if t.model_index is not None}
    order = [i for i in model.trainable_inputs() if i in by_model]
    ordered = set(order)
    missing = [model.tensors[i].name for i in by_model if i not in ordered]
    if missing:
        raise _mismatch(f"tensors {missing} are not inputs of trainable operators")
    names = dict(names or {})
    shapes = dict(shapes or {})
    model_state: dict[str, Any] = {}
    optim: dict[int, dict[str, Any]] = {}
    kind = ckpt.optimizer.kind if ckpt.optimizer is not None else "sgd"
    step = ckpt.step or 0
    for k, index in enumerate(order):
        entry = by_model[index]
        ct = model.tensors[index]
        if entry.nbytes != ct.nbytes or not has_numpy_dtype(ct.dtype):
            # onert-micro's 4-byte elements of an integer tensor, or a circle type numpy
            # lacks: no torch tensor of the circle shape holds these bytes
            raise not_representable(
                f"weights[{entry.index}]", f"entry {entry.index} holds {entry.nbytes} bytes; as "
                f"tensor {index} ({ct.name!r}, {ct.dtype}{list(ct.shape)}, {ct.nbytes} bytes) "
                "torch cannot hold them")
        name = names.get(ct.name, ct.name)
        oihw = (ct.shape[0], ct.shape[3], *ct.shape[1:3]) if len(ct.shape) == 4 else None
        torch_shape = tuple(shapes[name]) if name in shapes else oihw

        def tensor(raw: np.ndarray, ct: Any = ct, torch_shape: Any = torch_shape) -> Any:
            arr = raw.view(np.dtype(ct.dtype).newbyteorder("<")).reshape(ct.shape)
            return torch.from_numpy(np.array(_from_circle(arr, torch_shape), copy=True))

        model_state[name] = tensor(entry.raw)
        if kind == "adam" and ckpt.optimizer is not None:
            s: dict[str, Any] = {"step": torch.tensor(float(step))}
            for torch_name, slot in ADAM_SLOTS.items():
                buf = ckpt.optimizer.slots.get(slot, {}).get(entry.index)
                if buf is not None and buf.nbytes == entry.nbytes:
                    s[torch_name] = tensor(buf.raw)
            optim[k] = s
    groups = [dict(g) for g in (param_groups or [_default_group(kind)])]
    if len(groups) != 1:
        raise ValueError("to_torch builds one parameter group; pass one in param_groups")
    groups[0]["params"] = list(range(len(order)))
    return model_state, {"state": optim, "param_groups": groups}


def _bound_to(ckpt: Checkpoint, model: CircleModel) -> bool:
    """True when every entry already names a tensor of ``model`` of its own size (bound by the
    caller, perhaps with an explicit ``order``). A schema-2 record's index comes from the file,
    and a checkpoint may have been bound to another model: those are bound again."""
    n = len(model.tensors)
    return all(
        t.model_index is not None and 0 <= t.model_index < n
        and model.tensors[t.model_index].nbytes == t.nbytes
        for t in ckpt.tensors
    )


def _default_group(kind: str) -> dict[str, Any]:
    if kind == "adam":
        return {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0,
                "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                "differentiable": False, "fused": None}
    return {"lr": 1e-3, "momentum": 0.0, "dampening": 0.0, "weight_decay": 0.0, "nesterov": False,
            "maximize": False, "foreach": None, "differentiable": False, "fused": None}
