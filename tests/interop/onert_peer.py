"""Driving the real onert runtime (the ``onert`` 0.1.0 wheel) from the interop tests.

Everything here works around three properties of that wheel (FORMAT-FACTS section 4,
TOOLCHAIN-FACTS last section):

* a checkpoint path of 16 characters or more is mangled by its binding, so every call runs with
  the working directory inside a scratch folder and uses short relative names (:func:`inside`);
* the train session does not fill output buffers, so a model is run by exporting it with the
  imported weights (``train_export_circle``) and inferring with ``onert.infer.session``
  (:meth:`TrainPeer.outputs`), or by comparing losses (:meth:`TrainPeer.eval_loss`);
* its checkpoint loader is not a validator and can crash the process (a table count of
  2**32-1 sizes vectors of 16 GiB; a count of 0 underflows a loop bound), so malformed files are
  imported in a child process under an address-space limit (:func:`import_in_subprocess`).

Run as a script, this module is that child process (``--worker``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

__all__ = [
    "ONERT_MISSING",
    "ImportOutcome",
    "TrainPeer",
    "fc_forward",
    "import_in_subprocess",
    "infer",
    "inside",
    "onert_available",
]

#: pytest.importorskip's reason when the wheel is missing (it exists for CPython < 3.13 on
#: x86-64 Linux only).
ONERT_MISSING = (
    "the onert wheel is missing (pip install onert==0.1.0: x86-64 Linux, CPython < 3.13 only)"
)

#: Address-space limit of the child that imports malformed files: far above what a session
#: needs, far below the 16 GiB a count of 2**32-1 asks for.
DEFAULT_MEMORY_LIMIT = 4 << 30


def onert_available() -> bool:
    try:
        import onert.experimental.train  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def inside(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Run the block with ``folder`` as the working directory (short relative paths)."""
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)


def _optimizer(kind: str, learning_rate: float) -> object:
    from onert.experimental.train import optimizer

    if kind == "sgd":
        return optimizer.SGD(learning_rate=learning_rate)
    if kind == "adam":
        return optimizer.Adam(learning_rate=learning_rate)
    raise ValueError(f"unknown optimizer {kind!r}")


class TrainPeer:
    """One compiled onert train session of ``model`` (circle bytes), living in ``folder``.

    The folder holds ``m.circle`` and the short-named files the runtime reads and writes.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        model: bytes,
        kind: str,
        *,
        learning_rate: float = 1e-30,
        batch_size: int = 1,
    ) -> None:
        from onert.experimental.train import session

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.kind = kind
        self.batch_size = batch_size
        (self.folder / "m.circle").write_bytes(model)
        with inside(self.folder), contextlib.redirect_stdout(io.StringIO()):
            self.train_session = session("m.circle")
            self.train_session.compile(
                optimizer=_optimizer(kind, learning_rate),
                loss="mean_squared_error",
                batch_size=batch_size,
            )
        self.native = self.train_session.session

    def train(self, xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], epochs: int) -> None:
        """``epochs`` passes over the samples (one optimizer step per batch)."""
        from onert.experimental.train import DataLoader

        loader = DataLoader(list(xs), list(ys), batch_size=self.batch_size)
        with inside(self.folder), contextlib.redirect_stdout(io.StringIO()):
            self.train_session.train(loader, epochs=epochs)

    def export(self, name: str = "e.ckpt") -> bytes:
        """``train_export_checkpoint``: the runtime only exports after a train or eval step."""
        with inside(self.folder):
            self.native.train_export_checkpoint(name)
            return Path(name).read_bytes()

    def import_bytes(self, raw: bytes, name: str = "i.ckpt") -> None:
        """``train_import_checkpoint``; a refused file raises ``OnertError``."""
        with inside(self.folder):
            Path(name).write_bytes(raw)
            self.native.train_import_checkpoint(name)

    def eval_loss(self, x: np.ndarray, y: np.ndarray) -> float:
        """The mean squared error of one batch, forward only (no step counted, no update)."""
        output = np.zeros(y.shape, dtype=np.float32)
        self.native.train_set_input(0, np.ascontiguousarray(x, dtype=np.float32))
        self.native.train_set_expected(0, np.ascontiguousarray(y, dtype=np.float32))
        self.native.train_set_output(0, output)  # required, though never filled
        self.native.train(update_weights=False)
        return float(self.native.train_get_loss(0))

    def export_circle(self, name: str = "o.circle") -> bytes:
        """The model with the session's current weights (``train_export_circle``)."""
        with inside(self.folder):
            self.native.train_export_circle(name)
            return Path(name).read_bytes()

    def outputs(self, x: np.ndarray) -> np.ndarray:
        """Run the model with the session's current weights on ``x`` (first output)."""
        return infer(self.export_circle(), x, self.folder)


def infer(model: bytes, x: np.ndarray, folder: str | os.PathLike[str] | None = None) -> np.ndarray:
    """``onert.infer.session(model).infer([x])[0]`` (cpu backend)."""
    import onert

    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="ockpt-"))
        with inside(folder):
            Path("x.circle").write_bytes(model)
            with contextlib.redirect_stdout(io.StringIO()):
                out = onert.infer.session("x.circle").infer([np.asarray(x, dtype=np.float32)])
    return np.array(out[0])


# numpy forward pass ----------------------------------------------------------------------------


def _fc_activations(model: bytes) -> list[int]:
    """The fused activation code of each operator (None-free: FULLY_CONNECTED only)."""
    from circle_schema.v0_9.circle.BuiltinOptions import BuiltinOptions
    from circle_schema.v0_9.circle.FullyConnectedOptions import FullyConnectedOptions
    from circle_schema.v0_9.circle.Model import Model

    subgraph = Model.GetRootAs(model, 0).Subgraphs(0)
    codes = []
    for k in range(subgraph.OperatorsLength()):
        op = subgraph.Operators(k)
        if op.BuiltinOptionsType() != BuiltinOptions.FullyConnectedOptions:
            raise ValueError(f"operator {k} is not a FULLY_CONNECTED with options")
        table = op.BuiltinOptions()
        options = FullyConnectedOptions()
        options.Init(table.Bytes, table.Pos)
        if options.KeepNumDims() or options.WeightsFormat() != 0:
            raise ValueError(f"operator {k}: only the default FC options are modelled")
        codes.append(int(options.FusedActivationFunction()))
    return codes


_ACTIVATIONS = {
    0: lambda v: v,  # NONE
    1: lambda v: np.maximum(v, np.float32(0)),  # RELU
    3: lambda v: np.clip(v, np.float32(0), np.float32(6)),  # RELU6
}


def fc_forward(model: bytes, weights: Mapping[int, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The output of a chain of FULLY_CONNECTED operators, in float32 numpy.

    ``weights`` maps a circle tensor index to its value (weights ``[out, in]``, bias ``[out]``);
    each operator computes ``act(x @ W.T + b)`` with its fused activation.
    """
    from onert_checkpoint.circle.model import CircleModel

    circle = CircleModel.load(model)
    values: dict[int, np.ndarray] = {circle.inputs[0]: np.asarray(x, dtype=np.float32)}
    for op, act in zip(circle.operators, _fc_activations(model)):
        if op.opcode != "FULLY_CONNECTED" or act not in _ACTIVATIONS:
            raise ValueError(f"cannot model {op.opcode} with activation {act}")
        src, w, b = op.inputs
        y = values[src].astype(np.float32) @ np.asarray(weights[w], np.float32).T
        if b >= 0:
            y = y + np.asarray(weights[b], np.float32)
        values[op.outputs[0]] = _ACTIVATIONS[act](y.astype(np.float32))
    return values[circle.outputs[0]]


# importing risky files in a child process ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ImportOutcome:
    """What onert did with one file: "accepts", "refuses" (an OnertError) or "crashes"."""

    status: str
    detail: str = ""


def _limit_memory(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def import_in_subprocess(
    model: bytes,
    cases: Sequence[tuple[str, bytes]],
    *,
    memory_limit: int = DEFAULT_MEMORY_LIMIT,
    timeout: float = 120.0,
) -> list[ImportOutcome]:
    """Import each ``(session optimizer kind, file bytes)`` into a fresh session of ``model``.

    The imports run in a child Python under an address-space limit; when the child dies, the
    case it was importing is recorded as "crashes" (with the signal or exit status) and a new
    child carries on with the next case.
    """
    outcomes: dict[int, ImportOutcome] = {}
    with tempfile.TemporaryDirectory(prefix="ockpt-parity-") as tmp:
        folder = Path(tmp)
        (folder / "m.circle").write_bytes(model)
        jobs = []
        for k, (kind, raw) in enumerate(cases):
            (folder / f"{k}.ckpt").write_bytes(raw)
            jobs.append(f"{k} {kind}")
        (folder / "jobs").write_text("\n".join(jobs) + "\n")
        start = 0
        while start < len(cases):
            results = folder / "results"
            results.unlink(missing_ok=True)
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--worker", str(start)],
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=timeout,
                preexec_fn=lambda: _limit_memory(memory_limit),
                check=False,
            )
            begun = None
            for line in results.read_text().splitlines() if results.exists() else []:
                tag, index, *rest = line.split(" ", 2)
                if tag == "begin":
                    begun = int(index)
                else:
                    outcomes[int(index)] = ImportOutcome(tag, rest[0] if rest else "")
                    begun = None
            if proc.returncode == 0:
                break
            if begun is None:
                raise RuntimeError(
                    f"onert worker failed outside an import: {proc.returncode}\n"
                    + proc.stderr.decode(errors="replace")[-2000:]
                )
            if proc.returncode < 0:
                how = f"killed by {signal.Signals(-proc.returncode).name}"
            else:
                how = f"exit status {proc.returncode}"
            tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:]
            outcomes[begun] = ImportOutcome("crashes", "; ".join([how, *tail]))
            start = begun + 1
    return [outcomes[k] for k in range(len(cases))]


def _worker(start: int) -> int:
    """The child: import ``<k>.ckpt`` into a fresh ``m.circle`` session per job line."""
    from onert.experimental.train import session

    with open("results", "a", buffering=1) as results:
        for line in Path("jobs").read_text().split("\n"):
            if not line:
                continue
            index, kind = line.split()
            if int(index) < start:
                continue
            results.write(f"begin {index}\n")
            results.flush()
            with contextlib.redirect_stdout(io.StringIO()):
                s = session("m.circle")
                s.compile(
                    optimizer=_optimizer(kind, 1e-30), loss="mean_squared_error", batch_size=1
                )
            # The runtime says why on stderr ("Error during ... : reason"): keep it per file.
            saved = os.dup(2)
            with open(f"{index}.err", "wb") as err:
                os.dup2(err.fileno(), 2)
            try:
                s.session.train_import_checkpoint(f"{index}.ckpt")
            except Exception as exc:
                refused: Exception | None = exc
            else:
                refused = None
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
            said = Path(f"{index}.err").read_text(errors="replace").strip().replace("\n", " | ")
            if refused is not None:
                detail = said or f"{type(refused).__name__}: {refused}".replace("\n", " ")
                results.write(f"refuses {index} {detail}\n")
            else:
                results.write(f"accepts {index} {said}".rstrip() + "\n")
            results.flush()
            del s
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.exit(_worker(int(sys.argv[2])))
    sys.exit("usage: onert_peer.py --worker START (run by import_in_subprocess)")
