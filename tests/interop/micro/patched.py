"""onert-micro with this project's loader patch (patch/onert-micro-schema3.patch), built.

The patch makes ``OMTrainingInterpreter::loadCheckpoint`` read schema 3 (by the file's version
byte) through the micro reader of spec/c/micro, and adds ``saveCheckpoint(config, path, 3)``,
which writes schema 3 through the C kit's writer; schema 1 stays as it was. The runtime's
sources are copied into a temporary folder, patched there and compiled with driver.cpp
(``-DOCKPT_SCHEMA3_PATCH``: its ``--save-schema``); nothing of the runtime enters the repository.
"""

from __future__ import annotations

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .peer import _CXXFLAGS, _OM, DRIVER_SOURCE

__all__ = ["PATCH", "build_patched", "patch_lines"]

HERE = Path(__file__).resolve().parent
PATCH = HERE / "patch" / "onert-micro-schema3.patch"
C_KIT = HERE.parents[2] / "spec" / "c"
KIT = (C_KIT / "micro" / "ockpt_micro.c", C_KIT / "ockpt_write.c", C_KIT / "ockpt_crc32.c")


def patch_lines() -> tuple[int, int]:
    """Lines the patch adds and removes (its unit of change)."""
    text = PATCH.read_text().splitlines()
    added = sum(1 for line in text if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in text if line.startswith("-") and not line.startswith("---"))
    return added, removed


def _run(argv: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} ... failed:\n{done.stdout}{done.stderr[-3000:]}")


def build_patched(folder: Path, out: Path) -> Path:
    """The patched runtime and driver.cpp linked into ``out``; the driver's path."""
    out.mkdir(parents=True, exist_ok=True)
    tree = out / "om"
    shutil.copytree(folder / "src", tree / "src", dirs_exist_ok=True)
    for path in tree.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    with PATCH.open() as patch:
        done = subprocess.run(["patch", "-p1", "--forward", "--silent"], stdin=patch, cwd=tree,
                              capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the patch does not apply:\n{done.stdout}{done.stderr}")
    om = tree / _OM
    includes = [f"-I{d}" for d in (om / "include", om / "include" / "pal" / "mcu",
                                   om / "include" / "pal" / "common", om / "include" / "optimize",
                                   folder / "gen", C_KIT / "micro", C_KIT)]
    commands, objects = [], []
    for cpp in sorted((om / "src").rglob("*.cpp")):
        obj = out / (str(cpp.relative_to(om / "src")).replace("/", "_") + ".o")
        objects.append(obj)
        commands.append(["g++", *_CXXFLAGS, *includes, "-c", str(cpp), "-o", str(obj)])
    driver = out / "driver.o"
    commands.append(["g++", *_CXXFLAGS, "-DOCKPT_SCHEMA3_PATCH", *includes, "-c",
                     str(DRIVER_SOURCE), "-o", str(driver)])
    for c in KIT:
        obj = out / (c.name + ".o")
        objects.append(obj)
        commands.append(["gcc", "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-pedantic",
                         f"-I{C_KIT / 'micro'}", "-c", str(c), "-o", str(obj)])
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(_run, commands))
    exe = out / "driver"
    _run(["g++", str(driver), *map(str, objects), "-o", str(exe)])
    return exe


ARM = ["-mcpu=cortex-m4", "-mthumb"]
_TRAIN = Path("src") / "core" / "train"


def _text(obj: Path) -> int:
    out = subprocess.run(["arm-none-eabi-size", "-A", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    return sum(int(w[1]) for w in (line.split() for line in out.splitlines())
               if len(w) >= 2 and w[0].startswith(".text") and w[1].isdigit())


def arm_sizes(folder: Path, out: Path) -> dict[str, int]:
    """``.text`` (Cortex-M4 Thumb-2, -Os, the runtime's defines) of onert-micro's schema-1
    loader and saver, unpatched, and of what the patch adds for schema 3: its loader and saver
    (OMCheckpointSchema3.cpp), the micro reader, the C writer and its CRC file."""
    tree = out / "om"
    if not tree.exists():
        build_tree = out / "sizes"
        shutil.copytree(folder / "src", build_tree / "src")
        for path in build_tree.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
        with PATCH.open() as patch:
            subprocess.run(["patch", "-p1", "--forward", "--silent"], stdin=patch,
                           cwd=build_tree, check=True)
        tree = build_tree
    fb = out / "fb"  # a cross compiler does not search /usr/include: the flatbuffers headers
    fb.mkdir(exist_ok=True)
    if not (fb / "flatbuffers").exists():
        (fb / "flatbuffers").symlink_to("/usr/include/flatbuffers")
    om = tree / _OM
    includes = [f"-I{d}" for d in (om / "include", om / "include" / "pal" / "mcu",
                                   om / "include" / "pal" / "common", om / "include" / "optimize",
                                   folder / "gen", fb, C_KIT / "micro", C_KIT)]
    sizes = {}
    for name in ("OMCheckpointLoader.cpp", "OMCheckpointSaver.cpp", "OMCheckpointSchema3.cpp"):
        obj = out / f"arm-{name}.o"
        _run(["arm-none-eabi-g++", *_CXXFLAGS, "-Os", *ARM, *includes, "-c",
              str(om / _TRAIN / name), "-o", str(obj)])
        sizes[name] = _text(obj)
    for c in KIT:
        obj = out / f"arm-{c.name}.o"
        _run(["arm-none-eabi-gcc", "-std=c99", "-Os", *ARM, f"-I{C_KIT / 'micro'}", "-c", str(c),
              "-o", str(obj)])
        sizes[c.name] = _text(obj)
    return sizes


if __name__ == "__main__":  # python -m micro.patched (from tests/interop): the size rows
    import sys
    import tempfile

    from .peer import find_sources

    src = find_sources(HERE.parents[2])
    if src is None:
        sys.exit("the onert-micro folder is missing (ONERT_MICRO_DIR)")
    with tempfile.TemporaryDirectory() as tmp:
        found = arm_sizes(src, Path(tmp))
    added, removed = patch_lines()
    print(f"patch: {added} lines added, {removed} removed")
    for name, size in found.items():
        print(f"| `{name}` | {size:,} |")
