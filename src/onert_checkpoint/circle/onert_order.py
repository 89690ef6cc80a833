"""Which circle tensor each entry of an onert checkpoint holds.

onert records no tensor index: its entries follow the iteration order of a chain of
``std::unordered_map`` containers (spec/TOOLKIT.md 2), predicted from the model by replaying
them (:func:`predict_onert_order`) or asked of the installed runtime (:func:`probe_onert_order`).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .model import CircleModel, as_circle_model

__all__ = ["LibstdcxxUnorderedMap", "OnertEntry", "copy_names", "predict_onert_entries",
           "predict_onert_order", "probe_cache_path", "probe_onert_order", "trainable_indices"]


# libstdc++'s _Prime_rehash_policy bucket counts (__prime_list from the 14th request on; smaller
# requests use __fast_bkt), as returned by _M_next_bkt; checked against g++ 12's library.
_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
# fmt: off
_PRIMES = (
    17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109, 113, 127,
    137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359, 383, 409,
    439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193, 1289, 1381, 1493,
    1613, 1741, 1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087,
    5503, 5953, 6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173,
    16411, 17749, 19183, 20753, 22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043,
    45481, 49201, 53201, 57557, 62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731,
    126271, 136607, 147793, 159871, 172933, 187091, 202409, 218971, 236897, 256279, 277261, 299951,
    324503, 351061, 379787, 410857, 444487, 480881, 520241, 562841, 608903, 658753, 712697, 771049,
    834181, 902483, 976369, 1056323, 1142821, 1236397,
)
# fmt: on


class LibstdcxxUnorderedMap:
    """The key order of a libstdc++ ``std::unordered_map`` over integer keys (identity hash).

    The rules (node list, bucket growth, rehash) are spec/TOOLKIT.md 2.1's. ``_buckets`` is the
    node list: the bucket filled last first, each with its newest key first.
    """

    def __init__(self, keys: Iterable[int] = ()) -> None:
        self._buckets: dict[int, list[int]] = {}  # in the order filled, each oldest key first
        self._keys: set[int] = set()
        self.bucket_count = 1
        self._next_resize = 0
        for key in keys:
            self.insert(key)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> list[int]:
        """The keys in iteration order (what a range-for over the map visits)."""
        return [k for b in reversed(self._buckets) for k in reversed(self._buckets[b])]

    def _need_rehash(self) -> int | None:
        """The new bucket count (``_M_next_bkt``) when one more key needs one, else None."""
        size = len(self)
        if size + 1 <= self._next_resize:
            return None
        # _M_next_resize == 0 means nothing allocated yet: start from 11 (so 13 buckets)
        min_buckets = max(size + 1, 0 if self._next_resize else 11)
        if min_buckets < self.bucket_count:
            self._next_resize = self.bucket_count
            return None
        n = max(min_buckets + 1, self.bucket_count * 2)
        if n < len(_FAST_BUCKETS):
            self._next_resize = _FAST_BUCKETS[n]
        elif n > _PRIMES[-1]:
            raise OverflowError("more operands than this simulation knows bucket counts for")
        else:
            self._next_resize = _PRIMES[bisect.bisect_left(_PRIMES, n)]
        return self._next_resize

    def insert(self, key: int) -> None:
        """``map[key]`` / ``emplace(key, ...)``: a no-op when the key is present."""
        if key in self._keys:
            return
        count = self._need_rehash()
        if count is not None:
            order = self.keys()
            self._buckets, self.bucket_count = {}, count
            for k in order:
                self._buckets.setdefault(k % count, []).append(k)
        self._keys.add(key)
        self._buckets.setdefault(key % self.bucket_count, []).append(key)

    def erase(self, key: int) -> None:
        """``map.erase(key)``."""
        if key not in self._keys:
            return
        self._keys.remove(key)
        bucket = self._buckets[key % self.bucket_count]
        bucket.remove(key)
        if not bucket:
            del self._buckets[key % self.bucket_count]


def _copy(src: LibstdcxxUnorderedMap) -> LibstdcxxUnorderedMap:
    """``ir::Operands`` copy construction: emplace every key in the source's iteration order."""
    return LibstdcxxUnorderedMap(src.keys())


def trainable_indices(model: CircleModel) -> set[int]:
    """The operands onert turns into trainable tensors: every constant some operator uses
    (backend/train/TensorBuilder.cc, ``registerTensorInfo``)."""
    used = {i for op in model.operators for i in op.inputs if i >= 0}
    return {t.index for t in model.tensors if t.is_constant and t.index in used}


def predict_onert_order(model: CircleModel) -> list[int]:
    """The circle tensor index of each onert checkpoint entry, predicted from the model alone.

    Replays onert 0.1.0's containers step by step as spec/TOOLKIT.md 2.1 lists them; some
    steps were fitted to the runtime, so the probe (:func:`probe_onert_order`) is the authority
    where onert is installed.
    """
    return [entry.tensor for entry in predict_onert_entries(model)]


class OnertEntry(NamedTuple):
    """What one onert checkpoint entry holds."""

    #: the circle tensor index
    tensor: int
    #: the operators (indices in the model) that read this entry's operand
    readers: tuple[int, ...]
    #: True for a copy onert made of a shared constant for one of its readers
    copy: bool


def predict_onert_entries(model: CircleModel) -> list[OnertEntry]:
    """Each onert checkpoint entry: its circle tensor, its readers, whether it is a copy.

    A constant read by several operators is split (spec/TOOLKIT.md 2.1, step 4; SPEC B.9),
    as checked against the runtime's forward pass (tests/interop/test_shared_weights.py).
    """
    trainable = trainable_indices(model)
    count = len(model.tensors)
    num_ops = len(model.operators)
    op_inputs = {k: list(op.inputs) for k, op in enumerate(model.operators)}
    uses: dict[int, list[int]] = {}
    for k, op in enumerate(model.operators):
        for i in dict.fromkeys(op.inputs):
            if i >= 0:
                uses.setdefault(i, []).append(k)

    # step 2, before the first copy: UnusedOperandEliminationPass erases the tensors no operator
    # reads or writes that are neither a model input nor an output (which moves no other key)
    touched = {i for op in model.operators for i in (*op.inputs, *op.outputs)}
    touched.update(model.inputs, model.outputs)
    operands = LibstdcxxUnorderedMap(
        i for i in LibstdcxxUnorderedMap(range(count)).keys() if i in touched)
    y_true, loss = count, count + 1
    operands.insert(y_true)
    operands.insert(loss)
    operands = _copy(operands)
    operations = _copy(LibstdcxxUnorderedMap(range(num_ops)))
    operations.insert(num_ops)  # the loss operation
    operations = _copy(operations)

    origin = {i: i for i in trainable}
    readers = {i: tuple(uses.get(i, ())) for i in trainable}
    next_index = count + 2
    for op_index in operations.keys():
        for i in dict.fromkeys(op_inputs.get(op_index, ())):  # the loss operation has none
            if i not in trainable or len(uses[i]) < 2:
                continue
            # OperationIndexSet is an unordered_set of the readers, filled in operator order
            for reader in LibstdcxxUnorderedMap(uses[i]).keys():
                if reader == op_index:
                    continue
                operands.insert(next_index)
                origin[next_index] = origin[i]
                readers[next_index] = (reader,)
                op_inputs[reader] = [next_index if x == i else x for x in op_inputs[reader]]
                next_index += 1
            uses[i] = [op_index]
            readers[i] = (op_index,)

    graph_inputs = set(model.inputs) | {y_true}
    permuted = graph_inputs | set(model.outputs)
    replaced: dict[int, int] = {}
    for index in operands.keys():
        if index in permuted:
            replaced[index] = next_index
            operands.insert(next_index)
            next_index += 1
    for index, new_index in replaced.items():
        operands.erase(index if index in graph_inputs else new_index)
    operands = _copy(_copy(operands))
    registry = LibstdcxxUnorderedMap(i for i in operands.keys() if i in origin)
    return [OnertEntry(origin[i], readers[i], i >= count) for i in registry.keys()]


def copy_names(model: CircleModel, order: Sequence[int]) -> dict[int, str]:
    """The name of each entry of ``order`` that is onert's copy of a shared constant for
    another reader, ``<tensor name>@op<reader>`` (SPEC B.9): known only when ``order`` is the
    predicted one (:func:`predict_onert_entries`), else empty."""
    if len(set(order)) == len(order):
        return {}
    entries = predict_onert_entries(model)
    if [e.tensor for e in entries] != list(order):
        return {}
    return {k: f"{model.tensors[e.tensor].name or e.tensor}@op{e.readers[0]}"
            for k, e in enumerate(entries) if e.copy}


#: Seconds the child running the runtime may take (probing fc3, a 3-layer model, took 1 s).
PROBE_TIMEOUT = 300
_MARKER_SCALE = 1024.0  # markers (index + 1) / 1024 are exact in float32 and keep activations small


def _identify(entry: bytes, model: CircleModel, marked: set[int], taken: set[int]) -> int:
    if len(entry) % 4 == 0 and entry:
        values = np.frombuffer(entry, dtype="<f4")
        guess = np.rint(values.astype(np.float64) * _MARKER_SCALE) - 1
        index = int(guess[0]) if np.all(guess == guess[0]) else -1
        if index in marked and model.tensors[index].nbytes == len(entry):
            return index
    same = [t.index for t in model.tensors if t.is_constant and t.index not in marked
            and t.nbytes == len(entry) and model._data[t.index] == entry]
    # a shared constant has one entry per reader: a tensor taken is the answer only alone
    fresh = [i for i in same if i not in taken]
    candidates = fresh or same
    return candidates[0] if len(candidates) == 1 else -1


def probe_onert_order(model_path: CircleModel | str | os.PathLike[str] | bytes | memoryview
                      ) -> list[int] | None:
    """Ask the onert runtime which tensor each checkpoint entry holds; None without onert.

    Trains one step (SGD, learning rate 1e-30, zero inputs and targets) on a copy of the model
    whose float32 constants hold markers, exports a checkpoint and reads each entry's marker;
    other entries are matched by their unchanged bytes. -1 marks an entry that could not be told
    apart, ``[-1]`` a model the runtime could not train. The runtime runs in a child process
    (`_probe_child`, at most ``PROBE_TIMEOUT`` s); answers are cached (:func:`probe_cache_path`).
    """
    if importlib.util.find_spec("onert") is None:
        return None
    model = as_circle_model(model_path)
    cache = probe_cache_path(model.source)
    try:
        with open(cache, encoding="utf-8") as f:
            cached = json.load(f)
        if isinstance(cached, list) and all(type(i) is int for i in cached):
            return cached  # anything else (a damaged file) is asked again, never believed
    except (OSError, ValueError):
        pass
    order = _run_probe(model)
    if order != [-1]:  # no answer (a timeout, a model the runtime refused) is asked again
        from ..atomic_file import write_atomic

        with contextlib.suppress(OSError):  # a read-only home costs the next run a probe
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            write_atomic(cache, json.dumps(order).encode())
    return order


def probe_cache_path(model_source: bytes | memoryview) -> str:
    """Where the probe's answer is kept: ``$XDG_CACHE_HOME`` (else ``~/.cache``)
    ``/onert-checkpoint/probe/<model sha-256>-onert-<version>.json`` (per runtime version)."""
    from importlib.metadata import version

    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = f"{hashlib.sha256(model_source).hexdigest()}-onert-{version('onert')}"
    return os.path.join(root, "onert-checkpoint", "probe", key + ".json")


def _run_probe(model: CircleModel) -> list[int]:
    """The probe itself (see :func:`probe_onert_order`): the runtime in a child process, on a
    copy of the model (`rebuild.rebuild`) whose float32 constants hold ``(index + 1) / 1024``."""
    from .rebuild import rebuild

    markers = {
        t.index: np.full(t.nbytes // 4, (t.index + 1) / _MARKER_SCALE, "<f4").view(np.uint8)
        for t in model.tensors
        # a buffer its shape does not describe (which the runtime refuses) keeps its bytes:
        # its shape may claim exabytes, which the marker must not allocate
        if t.is_constant and t.dtype == "float32" and t.nbytes == len(model._data[t.index])
    }
    marked = set(markers)
    shapes = {side: [[list(model.tensors[i].shape), model.tensors[i].dtype] for i in indices]
              for side, indices in (("inputs", model.inputs), ("outputs", model.outputs))}
    with tempfile.TemporaryDirectory(prefix="ockpt-probe-") as tmp:
        with open(os.path.join(tmp, "m.circle"), "wb") as f:
            f.writelines(rebuild(model, markers).pieces())
        Path(tmp, "io.json").write_text(json.dumps(shapes), encoding="utf-8")
        # the child imports this very package, wherever it was imported from here
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        try:
            done = subprocess.run([sys.executable, "-m", "onert_checkpoint.circle.onert_order"],
                                  cwd=tmp, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=PROBE_TIMEOUT, check=False,
                                  env={**os.environ, "PYTHONPATH": path})
            raw = Path(tmp, "c.ckpt").read_bytes() if done.returncode == 0 else b""
        except subprocess.TimeoutExpired:
            raw = b""
    if len(raw) < 20:
        return [-1]  # the runtime cannot train this model: no answer
    from ..format.dispatch import load

    order: list[int] = []
    taken: set[int] = set()
    for tensor in load(raw).tensors:
        order.append(_identify(tensor.raw.tobytes(), model, marked, taken))
        taken.add(order[-1])
    return order


def _probe_child() -> int:
    """The probe's child: one training step on ``m.circle`` (shapes in ``io.json``), exported as
    ``c.ckpt``. A process of its own because the runtime may abort on a model it cannot train
    ("double free or corruption" from a STRING constant); short names because onert 0.1.0
    mangles checkpoint paths of 16 or more characters."""
    import io

    from onert.experimental.train import DataLoader, optimizer, session

    with open("io.json", encoding="utf-8") as f:
        spec = json.load(f)

    def batch(items: list[list]) -> list[np.ndarray]:
        return [np.zeros((1, *shape), dtype=dtype) for shape, dtype in items]

    with contextlib.redirect_stdout(io.StringIO()):
        s = session("m.circle")
        s.compile(optimizer=optimizer.SGD(learning_rate=1e-30), loss="mean_squared_error",
                  batch_size=1)
        s.train(DataLoader(batch(spec["inputs"]), batch(spec["outputs"]), batch_size=1),
                epochs=1, checkpoint_path="c.ckpt")
    return 0


if __name__ == "__main__":
    sys.exit(_probe_child())
