"""Code size and RAM of the C kit's reader against onert-micro's own schema-1 loader.

    python tests/interop/micro/measure_size.py            # x86-64, and ARM when installed
    python tests/interop/micro/measure_size.py --no-ram   # code sizes only (no runtime build)

Prints the figures of spec/c/README.md ("Size and RAM against onert-micro") as Markdown:

* code: ``.text`` (the sum of the ``.text*`` sections, ``size -A``) of each object compiled at
  -Os, for x86-64 (gcc) and, when ``arm-none-eabi-gcc`` is installed, a Cortex-M4 (Thumb-2);
  the C kit's streaming schema-3 load as a firmware would link it (``ld -r --gc-sections``
  rooted at the functions schema3_driver.cpp calls); onert-micro's loader and saver objects
  (``OMCheckpointLoader.cpp``, ``OMCheckpointSaver.cpp``, compiled with the runtime's flags at
  -Os) and the loader's own functions (``nm -S``), the flatbuffers accessors they inline
  included in the object figure;
* RAM: ``sizeof`` of the reader's state (``ockpt_stream``, ``ockpt_file``, the schema-3 cursor)
  on each target; the largest stack frame at -Os (``-fstack-usage``); and the heap each loader
  takes above what importing the model left (heap_count.h counts every ``new``), loading the
  same checkpoint of a 3-layer FC model (26,122 float32 weights) into the real runtime:
  onert-micro's ``loadCheckpoint`` of the schema-1 file against schema3_driver.cpp's streaming
  load of the same content as schema 3 (per-block checksums of BLOCK bytes, the driver's one
  block buffer), and the bytes each reads from the file (the one-pass load: every rule but the
  block checksums, then each array copied with each block verified on the way).

Needs gcc, g++, binutils; the RAM part also the onert-micro folder and the flatbuffers headers
(as the interop tests). Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))  # tests/interop: micro.*, circle_builder

from micro.peer import _OM, build_peer, find_sources, missing_prerequisite  # noqa: E402
from micro.schema3 import C_KIT, build_load_probe, build_schema3_driver  # noqa: E402

READER = ("ockpt.c", "ockpt_v2.c", "ockpt_v3.c", "ockpt_stream.c", "ockpt_crc32.c")
WRITER = ("ockpt_write.c",)
#: what schema3_driver.cpp calls: the roots of the linked streaming load
LOAD_ROOTS = ("ockpt_stream_init", "ockpt_read_stream_deferred", "ockpt_stream_failed",
              "ockpt_file_copy", "ockpt_sec_slot_at", "ockpt_sec_state", "ockpt_v3_cursor_init",
              "ockpt_v3_next_tensor", "ockpt_v3_slot_entry", "ockpt_v3_block_size",
              "ockpt_v3_copy_verified")
#: the same content through the schema-3-only buffer reader (there is no schema-3-only stream
#: entry: ockpt_read_stream dispatches to every revision, so their rules stay linked)
V3_BUFFER_ROOTS = ("ockpt_read_v3", *LOAD_ROOTS[3:])
ARM_FLAGS = ["-mcpu=cortex-m4", "-mthumb"]
#: the block size of the schema-3 files the heap is measured with (test_micro_schema3.py's)
BLOCK = 256
OM_DEFINES = ["-std=c++17", "-DDIS_QUANT", "-DNDEBUG", "-Wno-narrowing", "-w"]


class Target:
    """One compiler: its gcc/g++/ld/size/nm and flags."""

    def __init__(self, name: str, prefix: str, flags: list[str]) -> None:
        self.name, self.prefix, self.flags = name, prefix, flags

    def tool(self, base: str) -> str:
        return self.prefix + base

    def available(self) -> bool:
        return all(shutil.which(self.tool(t)) for t in ("gcc", "g++", "ld", "size", "nm"))


def run(argv: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def text_bytes(t: Target, obj: Path) -> int:
    """Sum of the .text* sections (size -A, SysV format)."""
    total = 0
    for line in run([t.tool("size"), "-A", str(obj)]).splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].startswith(".text") and words[1].isdigit():
            total += int(words[1])
    return total


def compile_c(t: Target, names: tuple[str, ...], out: Path, extra: list[str] = ()) -> list[Path]:
    objs = []
    out.mkdir(exist_ok=True)
    for name in names:
        obj = out / f"{t.name}-{name}.o"
        run([t.tool("gcc"), "-std=c99", "-Os", *t.flags, *extra, f"-I{C_KIT}", "-c",
             str(C_KIT / name), "-o", str(obj)])
        objs.append(obj)
    return objs


def om_includes(folder: Path, out: Path) -> list[str]:
    # a cross compiler does not search /usr/include: it gets the flatbuffers headers alone
    fb = out / "fb-include"
    if not fb.exists():
        fb.mkdir()
        (fb / "flatbuffers").symlink_to("/usr/include/flatbuffers")
    om = folder / _OM / "include"
    dirs = [om, om / "pal" / "mcu", om / "pal" / "common", om / "optimize", folder / "gen", fb]
    return [f"-I{d}" for d in dirs]


def code_sizes(t: Target, folder: Path | None, out: Path) -> list[tuple[str, int]]:
    rows = []
    reader = compile_c(t, READER, out)
    for obj, name in zip(reader, READER):
        rows.append((f"C kit `{name}`", text_bytes(t, obj)))
    rows.append(("C kit reader, all five objects", sum(text_bytes(t, o) for o in reader)))
    (writer,) = compile_c(t, WRITER, out)
    rows.append(("C kit writer `ockpt_write.c` (+ `ockpt_crc32.c` shared with the reader)",
                 text_bytes(t, writer)))
    # the streaming schema-3 load as a firmware links it: unused functions dropped
    split = compile_c(t, READER, out / "split", ["-ffunction-sections", "-fdata-sections"])
    linked = out / f"{t.name}-stream-load.o"
    roots = [f"-u{s}" for s in LOAD_ROOTS]
    run([t.tool("ld"), "-r", "--gc-sections", *roots, "-o", str(linked), *map(str, split)])
    rows.append(("C kit streaming schema-3 load, linked (`ld -r --gc-sections`)",
                 text_bytes(t, linked)))
    v3_only = out / f"{t.name}-v3-buffer.o"
    run([t.tool("ld"), "-r", "--gc-sections", *[f"-u{s}" for s in V3_BUFFER_ROOTS], "-o",
         str(v3_only), *map(str, split)])
    rows.append(("C kit schema-3-only buffer load (`ockpt_read_v3`), linked the same way",
                 text_bytes(t, v3_only)))
    if folder is None:
        return rows
    src = folder / _OM / "src" / "core" / "train"
    for name in ("OMCheckpointLoader.cpp", "OMCheckpointSaver.cpp"):
        obj = out / f"{t.name}-{name}.o"
        run([t.tool("g++"), *OM_DEFINES, "-Os", *t.flags, *om_includes(folder, out), "-c",
             str(src / name), "-o", str(obj)])
        rows.append((f"onert-micro `{name}` (object, inlined flatbuffers accessors included)",
                     text_bytes(t, obj)))
        if name == "OMCheckpointLoader.cpp":
            own = 0
            for line in run([t.tool("nm"), "-S", "-C", str(obj)]).splitlines():
                words = line.split(maxsplit=3)
                if len(words) == 4 and words[2] in "tTW" and "OMCheckpointLoader::" in words[3]:
                    own += int(words[1], 16)
            rows.append(("onert-micro loader's own functions (`OMCheckpointLoader::*`, nm -S)",
                         own))
    return rows


#: the stream cache cut for a small device (test_micro_schema3.py trains with it too)
SMALL_CACHE = ["-DOCKPT_STREAM_LINES=2u", "-DOCKPT_STREAM_LINE=16u"]


def sizeofs(t: Target, out: Path, defines: list[str] = ()) -> dict[str, int]:
    """sizeof of the reader's state types, read from the compiler's assembly (no need to run
    target code)."""
    names = ("ockpt_stream", "ockpt_file", "ockpt_v3_cursor")
    probe = out / f"{t.name}-sizeof.c"
    probe.write_text('#include "ockpt.h"\nconst unsigned long long ockpt_sizes[] = {'
                     + ", ".join(f"sizeof({n})" for n in names) + "};\n")
    asm = run([t.tool("gcc"), "-std=c99", "-Os", *t.flags, *defines, f"-I{C_KIT}", "-S", "-o",
               "-", str(probe)])
    values = [int(v) for v in re.findall(r"^\s*\.(?:word|quad|long)\s+(\d+)", asm, re.M)]
    # a 64-bit value is one .quad on x86-64, two .words (low, high) on ARM
    if len(values) == 2 * len(names):
        values = values[0::2]
    return dict(zip(names, values))


def largest_frames(t: Target, out: Path) -> list[tuple[str, int]]:
    folder = out / f"{t.name}-su"
    folder.mkdir(exist_ok=True)
    frames = []
    for name in READER:
        run([t.tool("gcc"), "-std=c99", "-Os", *t.flags, "-fstack-usage", f"-I{C_KIT}", "-c",
             str(C_KIT / name), "-o", str(folder / (name + ".o"))], cwd=folder)
    for su in folder.glob("*.su"):
        for line in su.read_text().splitlines():
            where, size, _ = line.rsplit("\t", 2)
            frames.append((where.rsplit(":", 1)[-1], int(size)))
    return sorted(frames, key=lambda f: -f[1])[:3]


def heap(folder: Path, out: Path) -> list[tuple[str, str, int, int, int]]:
    """(loader, optimizer, heap peak, heap kept, file bytes read) of each loader on the same
    checkpoint."""
    import numpy as np
    from circle_builder import build_fc_model
    from micro.peer import MicroPeer

    built = out / "runtime"
    driver = build_peer(folder, built)
    ours = build_schema3_driver(folder, built, out / "schema3")
    probe = build_load_probe(folder, built, out / "probe")
    peer = MicroPeer(driver, out / "work")
    model = peer.file("m.circle", build_fc_model([64, 128, 128, 10], seed=3))
    rng = np.random.default_rng(1)
    data = (peer.file("x.f32", rng.standard_normal((2, 64)).astype(np.float32)),
            peer.file("y.f32", rng.standard_normal((2, 10)).astype(np.float32)))
    rows = []
    for kind in ("sgd", "adam"):
        v1, v3 = peer.folder / f"{kind}.ckpt", peer.folder / f"{kind}.ckpt3"
        peer.run(model=model, opt=kind, data=data, steps=2, save=v1)
        run([sys.executable, "-m", "onert_checkpoint", "convert", "--no-progress", str(v1),
             str(v3), "--to", "v3"])
        import onert_checkpoint as oc

        ckpt = oc.load(v3)
        ckpt.layout.data_block_size = BLOCK
        v3.write_bytes(oc.to_bytes(ckpt, revision="v3"))
        theirs = run([str(probe), "--model", str(model), "--opt", kind, "--load", str(v1)])
        mine = run([str(ours), "--model", str(model), "--opt", kind, "--load", str(v3)])
        for who, text, path in (("onert-micro `loadCheckpoint`, schema 1", theirs, v1),
                                ("C kit streaming reader, schema 3", mine, v3)):
            line = next(x for x in text.splitlines() if x.startswith("load "))
            pairs = dict(w.split("=", 1) for w in line.split()[1:])
            size = path.stat().st_size
            rows.append((f"{who} ({size:,} B file)", kind, int(pairs["heap_peak"]),
                         int(pairs["heap_kept"]), int(pairs.get("read_bytes", size))))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-ram", action="store_true", help="code sizes only")
    args = parser.parse_args()
    folder = find_sources(REPO)
    targets = [Target("x86-64", "", []), Target("arm", "arm-none-eabi-", ARM_FLAGS)]
    targets = [t for t in targets if t.available()]
    gcc = run(["gcc", "-dumpfullversion"]).strip()
    with tempfile.TemporaryDirectory(prefix="ockpt-size-") as tmp:
        out = Path(tmp)
        columns = []
        for t in targets:
            version = run([t.tool("gcc"), "-dumpfullversion"]).strip()
            columns.append((t, f"{t.name} (gcc {version}{', cortex-m4 thumb' if t.flags else ''})",
                            code_sizes(t, folder, out)))
        print("| .text at -Os, bytes | " + " | ".join(c[1] for c in columns) + " |")
        print("|---|" + "---|" * len(columns))
        for k, (label, _) in enumerate(columns[0][2]):
            print(f"| {label} | " + " | ".join(f"{c[2][k][1]:,}" for c in columns) + " |")
        print()
        print("| RAM, bytes | " + " | ".join(c[1] for c in columns) + " |")
        print("|---|" + "---|" * len(columns))
        sizes = [sizeofs(t, out) for t in targets]
        for name in sizes[0]:
            print(f"| `sizeof({name})` | " + " | ".join(f"{s[name]:,}" for s in sizes) + " |")
        small = [sizeofs(t, out, SMALL_CACHE)["ockpt_stream"] for t in targets]
        print(f"| `sizeof(ockpt_stream)` with `{' '.join(SMALL_CACHE)}` | "
              + " | ".join(f"{v:,}" for v in small) + " |")
        frames = [largest_frames(t, out) for t in targets]
        print("| largest stack frames of the reader at -Os | "
              + " | ".join(", ".join(f"`{n}` {b:,}" for n, b in f) for f in frames) + " |")
        print()
        if args.no_ram:
            return 0
        reason = missing_prerequisite(folder)
        if reason is not None:
            print(f"heap: not measured ({reason})")
            return 0
        assert folder is not None
        print(f"| heap above the imported model, bytes (x86-64, gcc {gcc}) | optimizer | "
              "peak during the load | kept after it (Adam m, v) | file bytes read |")
        print("|---|---|---|---|---|")
        for who, kind, peak, kept, read in heap(folder, out):
            print(f"| {who} | {kind} | {peak:,} | {kept:,} | {read:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
