"""Building this project's schema-3 driver (schema3_driver.cpp) for the real onert-micro runtime.

The driver links three parts: the runtime's objects (compiled from the shared sources by
:func:`micro.peer.build_peer`, or here when only a prebuilt driver was given), the C kit of
spec/c (the streaming reader and the writer, compiled as C99 with the kit's own warnings), and
the driver. Nothing of the runtime is copied into the repository.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .peer import _CXXFLAGS, _OM, _includes

__all__ = [
    "C_KIT",
    "KIT_SOURCES",
    "LOAD_PROBE_SOURCE",
    "SCHEMA3_DRIVER_SOURCE",
    "build_load_probe",
    "build_schema3_driver",
]

SCHEMA3_DRIVER_SOURCE = Path(__file__).resolve().parent / "schema3_driver.cpp"
#: onert-micro's own loader, measured (heap_count.h): om_load_probe.cpp
LOAD_PROBE_SOURCE = Path(__file__).resolve().parent / "om_load_probe.cpp"
C_KIT = Path(__file__).resolve().parents[3] / "spec" / "c"
#: The streaming reader (ockpt.c .. ockpt_crc32.c) and the writer, as spec/c/Makefile lists them.
KIT_SOURCES = ("ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c",
               "ockpt_write.c")
_CFLAGS = ["-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-3:])} failed:\n{done.stderr[-3000:]}")


def _runtime_objects(folder: Path, built: Path, out: Path) -> list[Path]:
    """The runtime's objects: those build_peer left beside its driver, else compiled here."""
    objects = sorted(p for p in built.glob("*.o") if p.name != "driver.o")
    if objects:
        return objects
    src = folder / _OM / "src"
    commands = []
    for cpp in sorted(src.rglob("*.cpp")):
        obj = out / (str(cpp.relative_to(src)).replace(os.sep, "_") + ".o")
        objects.append(obj)
        commands.append(["g++", *_CXXFLAGS, *_includes(folder), "-c", str(cpp), "-o", str(obj)])
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(_run, commands))
    return objects


def build_schema3_driver(folder: Path, built: Path, out: Path,
                         defines: tuple[str, ...] = ()) -> Path:
    """Link schema3_driver.cpp with the runtime (objects in ``built`` or compiled from ``folder``)
    and the C kit into ``out``; the executable's path. ``defines`` (``-DNAME=VALUE``) go to the
    kit and the driver alike, e.g. the stream cache's ``OCKPT_STREAM_LINES``/``_LINE``."""
    out.mkdir(parents=True, exist_ok=True)
    runtime = _runtime_objects(folder, built, out)
    kit = []
    for name in KIT_SOURCES:
        obj = out / (name + ".o")
        _run(["gcc", *_CFLAGS, *defines, "-c", str(C_KIT / name), "-o", str(obj)])
        kit.append(obj)
    driver = out / "schema3_driver.o"
    _run(["g++", *_CXXFLAGS, *defines, *_includes(folder), f"-I{C_KIT}", "-c",
          str(SCHEMA3_DRIVER_SOURCE), "-o", str(driver)])
    exe = out / "schema3_driver"
    _run(["g++", str(driver), *map(str, runtime), *map(str, kit), "-o", str(exe)])
    return exe


def build_load_probe(folder: Path, built: Path, out: Path) -> Path:
    """Link om_load_probe.cpp (onert-micro's own loadCheckpoint, its heap counted) with the
    runtime into ``out``; the executable's path."""
    out.mkdir(parents=True, exist_ok=True)
    runtime = _runtime_objects(folder, built, out)
    probe = out / "om_load_probe.o"
    _run(["g++", *_CXXFLAGS, *_includes(folder), "-c", str(LOAD_PROBE_SOURCE), "-o", str(probe)])
    exe = out / "om_load_probe"
    _run(["g++", str(probe), *map(str, runtime), "-o", str(exe)])
    return exe
