"""Building and driving the real onert-micro training runtime (a test peer, like the onert wheel).

The runtime's sources live outside this repository (``../shared/reference/onert-micro`` next to
the checkout, or the folder named by ``ONERT_MICRO_DIR``); nothing of them is copied here. The
library is compiled from those sources with this module's own command line into a temporary
folder (the shared folder may be read-only) and linked with this project's own driver,
``driver.cpp`` beside this file.

The build defines ``NDEBUG`` as a release build for a device would: the runtime's loaders then
return their status codes (``FailReadCheckpointFile`` = 11) instead of stopping at the
``assert`` that precedes every refusal, so a refused file is told from a crash.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

__all__ = [
    "DRIVER_SOURCE",
    "LoadOutcome",
    "MicroPeer",
    "RunResult",
    "build_peer",
    "find_sources",
    "missing_prerequisite",
]

DRIVER_SOURCE = Path(__file__).resolve().parent / "driver.cpp"

#: Path of the runtime inside its folder (the ONE repository's layout).
_OM = Path("src") / "onert-micro" / "onert-micro"

#: The runtime's status codes (OMStatus.h), for messages.
STATUS = {
    0: "Ok",
    1: "UnsupportedType",
    4: "UnsupportedOp",
    5: "UnknownError",
    6: "ModelNotImport",
    7: "FailedCheckCondition",
    10: "FailReadWOFFile",
    11: "FailReadCheckpointFile",
}

_CXXFLAGS = ["-std=c++17", "-O1", "-DDIS_QUANT", "-DNDEBUG", "-Wno-narrowing", "-w"]


def find_sources(repo_root: Path) -> Path | None:
    """The onert-micro folder: ``ONERT_MICRO_DIR``, else ``<repo>/../shared/reference/...``."""
    named = os.environ.get("ONERT_MICRO_DIR")
    folder = Path(named) if named else repo_root / ".." / "shared" / "reference" / "onert-micro"
    return folder.resolve() if (folder / _OM / "src").is_dir() else None


def _includes(folder: Path) -> list[str]:
    om = folder / _OM / "include"
    dirs = [om, om / "pal" / "mcu", om / "pal" / "common", om / "optimize", folder / "gen"]
    return [f"-I{d}" for d in dirs]


def missing_prerequisite(folder: Path | None) -> str | None:
    """Why the peer cannot be built here, or None."""
    if folder is None:
        return (
            "the onert-micro sources are missing (../shared/reference/onert-micro next to the "
            "checkout, or ONERT_MICRO_DIR)"
        )
    if shutil.which("g++") is None:
        return "g++ is missing (.ci/run installs it)"
    probe = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-"],
        input="#include <flatbuffers/flatbuffers.h>\n",
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return "the flatbuffers C++ headers are missing (Debian libflatbuffers-dev)"
    return None


def build_peer(folder: Path, out: Path, jobs: int = 2) -> Path:
    """Compile the runtime's sources and ``driver.cpp`` into ``out``; the driver's path."""
    out.mkdir(parents=True, exist_ok=True)
    src = folder / _OM / "src"
    includes = _includes(folder)
    objects = []
    commands = []
    for cpp in sorted(src.rglob("*.cpp")):
        obj = out / (str(cpp.relative_to(src)).replace(os.sep, "_") + ".o")
        objects.append(obj)
        commands.append(["g++", *_CXXFLAGS, *includes, "-c", str(cpp), "-o", str(obj)])
    driver_obj = out / "driver.o"
    commands.append(["g++", *_CXXFLAGS, *includes, "-c", str(DRIVER_SOURCE), "-o", str(driver_obj)])

    def compile_one(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, check=False)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for argv, done in zip(commands, pool.map(compile_one, commands)):
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(argv[-3:])} failed:\n{done.stderr[-3000:]}")
    exe = out / "driver"
    done = subprocess.run(
        ["g++", str(driver_obj), *map(str, objects), "-o", str(exe)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"linking the driver failed:\n{done.stderr[-3000:]}")
    return exe


@dataclasses.dataclass(frozen=True)
class RunResult:
    """One driver run: exit status (negative: killed by that signal) and its output lines."""

    returncode: int
    stdout: str
    stderr: str

    def value(self, key: str, field: str) -> int:
        """``field`` of the last stdout line starting with ``key`` (e.g. ``load``, ``step``)."""
        for line in reversed(self.stdout.splitlines()):
            words = line.split()
            if words and words[0] == key:
                pairs = dict(w.split("=", 1) for w in words[1:])
                return int(pairs[field])
        raise KeyError(f"no {key!r} line in the driver's output:\n{self.stdout}")


@dataclasses.dataclass(frozen=True)
class LoadOutcome:
    """What the runtime's loader did with one file: accepts, refuses or crashes."""

    status: str
    detail: str = ""


def _limits(memory: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class MicroPeer:
    """The built driver, working in ``folder`` (models, data and checkpoints are files there)."""

    def __init__(self, exe: Path, folder: Path) -> None:
        self.exe = exe
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._count = 0

    def file(self, name: str, raw: bytes | np.ndarray) -> Path:
        """Write ``raw`` (bytes, or an array written as little-endian float32) as ``name``."""
        path = self.folder / name
        if isinstance(raw, np.ndarray):
            raw = np.ascontiguousarray(raw, dtype="<f4").tobytes()
        path.write_bytes(raw)
        return path

    def run(
        self,
        *,
        model: Path,
        opt: str,
        batch: int = 1,
        lr: float = 0.01,
        train_layers: int = 0,
        wof: Path | None = None,
        load: Path | None = None,
        data: tuple[Path, Path] | None = None,
        steps: int = 0,
        save: Path | None = None,
        save_model: Path | None = None,
        infer: Path | None = None,
        out: Path | None = None,
        memory: int = 1 << 30,
        cpu_seconds: int = 20,
        timeout: float = 60.0,
        check: bool = True,
    ) -> RunResult:
        """Run the driver once (in a child with address-space and CPU limits)."""
        argv = [str(self.exe), "--model", str(model), "--opt", opt, "--batch", str(batch)]
        argv += ["--lr", repr(lr), "--steps", str(steps), "--train-layers", str(train_layers)]
        for flag, value in (("wof", wof), ("load", load), ("save", save),
                            ("save-model", save_model), ("infer", infer), ("out", out)):
            if value is not None:
                argv += [f"--{flag}", str(value)]
        if data is not None:
            argv += ["--x", str(data[0]), "--y", str(data[1])]
        done = subprocess.run(
            argv,
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=lambda: _limits(memory, cpu_seconds),
            check=False,
        )
        result = RunResult(done.returncode, done.stdout, done.stderr)
        if check and done.returncode != 0:
            raise AssertionError(
                f"driver failed ({done.returncode}): {' '.join(argv)}\n{done.stdout}{done.stderr}"
            )
        return result

    def load_outcome(self, model: Path, opt: str, raw: bytes, name: str) -> LoadOutcome:
        """Import ``model`` and ``loadCheckpoint`` the bytes ``raw``, in a limited child."""
        path = self.file(name, raw)
        try:
            result = self.run(model=model, opt=opt, load=path, memory=512 << 20, cpu_seconds=10,
                              timeout=30.0, check=False)
        except subprocess.TimeoutExpired:
            return LoadOutcome("crashes", "timeout")
        if result.returncode == 0:
            return LoadOutcome("accepts", f"step={result.value('load', 'step')}")
        if result.returncode == 4:
            code = result.value("load", "status")
            return LoadOutcome("refuses", STATUS.get(code, str(code)))
        if result.returncode < 0:
            return LoadOutcome("crashes", signal.Signals(-result.returncode).name)
        return LoadOutcome("crashes", f"exit status {result.returncode}: {result.stderr[-200:]}")

    def load_outcomes(self, model: Path, cases: Sequence[tuple[str, str, bytes]]
                      ) -> list[LoadOutcome]:
        """:meth:`load_outcome` of each ``(name, optimizer, bytes)``."""
        return [self.load_outcome(model, opt, raw, f"{name}.ckpt") for name, opt, raw in cases]
