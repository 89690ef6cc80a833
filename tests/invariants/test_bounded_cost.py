"""Bounded cost over the public paths: every command's peak memory stays within 64 MiB + 8x its
input's size, for hostile-but-valid inputs as well as ordinary ones, and the work grows
linearly with the input.

Memory is the peak resident set of a child process (its own ``VmHWM``, which the child reports
itself), compared with the same command's peak on a tiny input of the same family measured in
the same run: that baseline holds the interpreter, NumPy and whatever modules the command
imports (about 30 to 60 MiB here), so the bound checked is
``peak(input) <= peak(tiny input) + 64 MiB + 8 * size(input)``. The inputs are built in
milliseconds (tests/large_files.py) and sized so that the unbounded code they guard against
exceeded the bound several times over: 400k empty schema-3 tensors (3.2 MB; ``info`` used to
take 211 MiB over the baseline for half of them), 50k tensors with 16 slots (6.8 MB), a
160 KB circle model naming one 20,000-dimension tensor 20,000 times (``info --model`` took
1.8 GB at this size), a 32 KB model naming one subgraph 4,000 times (bake: 237 MiB), a 204 KB
npz inflating to 200 MiB (import: 210 MiB over the baseline).

Linear time is checked by ratios in one process: the work at 8n entries against the work at n,
below 24 (8x with room for a loaded machine); the quadratic code these tests guard against
gave 64x and more.

Hostile circle models: the reader reads each distinct table once (a repeated reference costs a
lookup); ``bake`` refuses (``not_representable``, field ``model``) a model whose object-API
expansion would exceed the bound (circle/rebuild.py, ``unpack_cost``). An npz whose members
declare more than 24 MiB + 3x its size is refused before anything is inflated
(interchange/tensor_dict.py, ``npz_inflate_limit``).
"""

from __future__ import annotations

import gc
import json
import re
import resource
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc
from onert_checkpoint.circle.rebuild import unpack_budget, unpack_cost
from onert_checkpoint.interchange.tensor_dict import path_safe
from onert_checkpoint.tools.layout_map import layout_map
from tests.cpu_timing import median_cpu_time
from tests.large_files import circle_reference_bomb, npz_bomb, v3_many_entries

MIB = 1 << 20
#: ru_maxrss is in KiB on Linux, in bytes on macOS
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024

#: Runs each code given (argv[1:]) in turn and writes, for each, its exit status and the
#: process's peak RSS while it ran to stderr, as the last lines ``status N`` and ``peak N``, even
#: when the code exits (the command line ends with SystemExit). The peak is the child's own
#: address space's high-water mark (``VmHWM`` of /proc/self/status): Linux folds the RSS
#: high-water mark of the process that spawned the child into the child's ``ru_maxrss`` at
#: exec, so under a pytest process grown to 500 MB every child "peaked" at 500 MB and the
#: bound compared two copies of the parent. Between two codes the high-water mark is reset to
#: what is resident (writing 5 to /proc/self/clear_refs), so the second code's peak counts what
#: the first left resident, as a fresh process would count its imports: one interpreter measures
#: a command on the tiny input, then on the large one. ``ru_maxrss`` where there is no /proc
#: (one code per process there).
_CHILD = (
    "import sys, resource, traceback\n"
    "def _peak():\n"
    "    try:\n"
    "        with open('/proc/self/status') as f:\n"
    "            for line in f:\n"
    "                if line.startswith('VmHWM:'):\n"
    "                    return int(line.split()[1]) * 1024\n"
    "    except OSError:\n"
    "        pass\n"
    f"    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * {_RSS_UNIT}\n"
    "def _run(code):\n"
    "    try:\n"
    "        exec(compile(code, '<measured>', 'exec'), {'__name__': '__measured__'})\n"
    "    except SystemExit as done:\n"
    "        if done.code is None or isinstance(done.code, int):\n"
    "            return done.code or 0\n"
    "        sys.stderr.write('%s\\n' % done.code)\n"
    "        return 1\n"
    "    except Exception:\n"
    "        traceback.print_exc()\n"
    "        return 1\n"
    "    return 0\n"
    "for i, code in enumerate(sys.argv[1:]):\n"
    "    if i:\n"
    "        with open('/proc/self/clear_refs', 'w') as f:\n"
    "            f.write('5')\n"
    "    status = _run(code)\n"
    "    sys.stderr.flush()\n"
    "    sys.stderr.write('\\nstatus %d\\npeak %d\\n' % (status, _peak()))\n"
    "    sys.stderr.flush()\n"
)

#: The high-water mark can be reset (Linux 4.0 and later): one interpreter measures both runs.
_RESETS = Path("/proc/self/clear_refs").exists()


def peaks_of(*codes: str) -> list[tuple[int, int, str]]:
    """(peak RSS in bytes, exit status, stderr) of each of ``codes`` run in turn in a fresh
    interpreter, the high-water mark reset between them (one interpreter per code where it
    cannot be reset)."""
    if not _RESETS and len(codes) > 1:
        return [result for code in codes for result in peaks_of(code)]
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, *codes],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600,
    )
    parts = re.split(r"\nstatus (-?\d+)\npeak (\d+)\n", proc.stderr)
    assert proc.returncode == 0 and len(parts) == 3 * len(codes) + 1, proc.stderr[-2000:]
    return [(int(parts[3 * i + 2]), int(parts[3 * i + 1]), parts[3 * i])
            for i in range(len(codes))]


def peak_of(code: str) -> tuple[int, int, str]:
    """(peak RSS in bytes, exit status, stderr) of ``code`` run in a fresh interpreter."""
    return peaks_of(code)[0]


def cli(*args: object) -> str:
    """The code that runs ``onert-ckpt args`` in the child."""
    argv = ["onert-ckpt", *map(str, args)]
    return (
        f"import runpy, sys; sys.argv = {argv!r}; "
        "runpy.run_module('onert_checkpoint', run_name='__main__')"
    )


def api(path: Path, action: str) -> str:
    """The code that loads ``path`` and runs ``action`` on ``c`` in the child."""
    return f"import onert_checkpoint as oc\nc = oc.load({str(path)!r})\n{action}\n"


def bound(size: int) -> int:
    return 64 * MIB + 8 * size


# -- the inputs ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    one = oc.Checkpoint([oc.Tensor(0, np.zeros(4, np.uint8), model_index=0)])
    made: dict[str, bytes] = {
        "v3-empty": v3_many_entries(400_000),
        "v3-empty-tiny": v3_many_entries(10),
        "v3-slots": v3_many_entries(50_000, 16),
        "v3-slots-tiny": v3_many_entries(10, 16),
        "model-bomb.circle": circle_reference_bomb(20_000, 20_000),
        "model-tiny.circle": circle_reference_bomb(2, 2),
        "subgraph-bomb.circle": circle_reference_bomb(1, 4_000, subgraphs=4_000),
        "one.ckpt": oc.to_bytes(one, revision="v3"),
        "bomb.npz": npz_bomb(200 * MIB),
        "bomb-tiny.npz": npz_bomb(1000),
    }
    out = {}
    for name, data in made.items():
        out[name] = folder / name
        out[name].write_bytes(data)
    out["out"] = folder / "out"
    return out


#: (case, input, the code run on the input, on its tiny sibling, expected exit status)
def _cases(f: dict[str, Path]) -> dict[str, tuple[Path, str, str, int]]:
    out = f["out"]

    def both(big: str, tiny: str, make: Callable[[Path], str], status: int = 0):
        return f[big], make(f[big]), make(f[tiny]), status

    def on_model(model: str, code: Callable[[Path], str], status: int = 0):
        return f[model], code(f[model]), code(f["model-tiny.circle"]), status

    return {
        "info": both("v3-empty", "v3-empty-tiny", lambda p: cli("info", p)),
        "info --json": both("v3-empty", "v3-empty-tiny", lambda p: cli("info", "--json", p)),
        "validate": both("v3-empty", "v3-empty-tiny", lambda p: cli("validate", p)),
        "iterate": both("v3-empty", "v3-empty-tiny",
                        lambda p: api(p, "sum(t.nbytes for t in c.tensors)")),
        "content_equal": both("v3-empty", "v3-empty-tiny", lambda p: api(p, "c.content_equal(c)")),
        "verify": both("v3-empty", "v3-empty-tiny", lambda p: api(p, "c.verify()")),
        "info slots": both("v3-slots", "v3-slots-tiny", lambda p: cli("info", p)),
        "info --json slots": both("v3-slots", "v3-slots-tiny",
                                  lambda p: cli("info", "--json", p)),
        "validate slots": both("v3-slots", "v3-slots-tiny", lambda p: cli("validate", p)),
        "iterate slots": both(
            "v3-slots", "v3-slots-tiny",
            lambda p: api(p, "sum(e.nbytes for s in c.optimizer.slots.values() "
                             "for e in s.values())"),
        ),
        # the schema-3 writer's plan keeps columns and the ranges with bytes, no object per
        # empty entry
        "save": both("v3-empty", "v3-empty-tiny",
                     lambda p: api(p, f"oc.save(c, {str(out.with_suffix('.ckpt'))!r})")),
        "to_bytes": both("v3-empty", "v3-empty-tiny", lambda p: api(p, "oc.to_bytes(c)")),
        "save slots": both("v3-slots", "v3-slots-tiny",
                           lambda p: api(p, f"oc.save(c, {str(out.with_suffix('.ckpt'))!r})")),
        # the layout map's data ranges are columns, printed a field at a time
        "dump --layout --json": both("v3-empty", "v3-empty-tiny",
                                     lambda p: cli("dump", "--layout", "--json", p)),
        # the npz is written a member at a time from the checkpoint, its metadata texts as
        # pieces and its zip directory as packed bytes
        "export npz": both("v3-empty", "v3-empty-tiny",
                           lambda p: cli("export", p, out.with_suffix(".npz"))),
        # one shared object per empty array geometry, no key map or Tensor kept per entry
        "to_numpy_dict": both("v3-empty", "v3-empty-tiny", lambda p: api(p, "oc.to_numpy_dict(c)")),
        # the safetensors file written by this package a tensor at a time: names as fixed-width
        # bytes, the header's tensor part generated twice rather than held
        "export safetensors": both("v3-empty", "v3-empty-tiny",
                                   lambda p: cli("export", p, out.with_suffix(".safetensors"))),
        "info --model bomb": on_model(
            "model-bomb.circle", lambda m: cli("info", "--model", m, f["one.ckpt"])
        ),
        "CircleModel.load bomb": on_model(
            "model-bomb.circle",
            lambda m: f"import onert_checkpoint as oc\noc.CircleModel.load({str(m)!r})",
        ),
        "bake subgraph bomb": (
            f["subgraph-bomb.circle"],
            cli("bake", f["one.ckpt"], out, "--model", f["subgraph-bomb.circle"]),
            cli("bake", f["one.ckpt"], out, "--model", f["model-tiny.circle"]),
            1,
        ),
        "import npz bomb": (
            f["bomb.npz"], cli("import", f["bomb.npz"], out),
            cli("import", f["bomb-tiny.npz"], out), 1,
        ),
    }


CASES = [
    "info", "info --json", "validate", "iterate", "content_equal", "verify", "info slots",
    "info --json slots", "validate slots", "iterate slots", "save", "to_bytes", "save slots",
    "dump --layout --json", "export npz", "to_numpy_dict", "export safetensors",
    "info --model bomb",
    "CircleModel.load bomb", "bake subgraph bomb", "import npz bomb",
]

@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_peak_memory_is_bounded_by_the_input(inputs, case):
    path, code, tiny, status = _cases(inputs)[case]
    size = path.stat().st_size
    (base, base_status, base_err), (peak, got, err) = peaks_of(tiny, code)
    assert base_status == 0, base_err[-2000:]
    assert got == status, err[-2000:]
    if status:
        assert "error: not_representable" in err, err[-2000:]
    assert peak <= base + bound(size), (
        f"{case}: {peak / MIB:.0f} MiB at peak for a {size}-byte input; baseline "
        f"{base / MIB:.0f} MiB, bound {(base + bound(size)) / MIB:.0f} MiB"
    )


#: 2,000,000 empty schema-3 tensors (16 MB, 8 bytes each): an object, a view or a Python int
#: per tensor beyond the columns the reader holds exceeds the bound (``save`` peaked at 265 MiB
#: over the 4-tensor file, the upgrade copy of ``convert`` at 1.1 GiB, iterating the keys at
#: 138 MiB, ``onert-ckpt convert --to v2`` at 558 MiB with the schema-2 tensors section built
#: whole and the output read back; the bound is 186 MiB).
MANY_EMPTY = 2_000_000
MANY_EMPTY_CASES: dict[str, Callable[[Path, Path], str]] = {
    "save": lambda p, out: api(p, f"oc.save(c, {str(out)!r})"),
    "iterate the tensors": lambda p, out: api(p, "sum(t.nbytes for t in c.tensors)"),
    "iterate the keys": lambda p, out: api(p, "for key in c: pass"),
    "upgrade copy": lambda p, out: api(p, "from onert_checkpoint.format.convert import upgrade\n"
                                           "u = upgrade(c, to='v2')"),
    "convert --to v2": lambda p, out: cli("convert", p, out, "--to", "v2"),
}


@pytest.fixture(scope="module")
def many_empty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("many-empty")
    big, tiny = folder / "big.ckpt", folder / "tiny.ckpt"
    big.write_bytes(v3_many_entries(MANY_EMPTY))
    tiny.write_bytes(v3_many_entries(4))
    return big, tiny


@pytest.mark.slow
@pytest.mark.parametrize("case", list(MANY_EMPTY_CASES))
def test_many_empty_tensors_stay_within_the_bound(many_empty, tmp_path, case):
    big, tiny = many_empty
    make = MANY_EMPTY_CASES[case]
    (base, base_status, base_err), (peak, got, err) = peaks_of(
        make(tiny, tmp_path / "tiny-out.ckpt"), make(big, tmp_path / "out.ckpt")
    )
    assert base_status == 0 and got == 0, (base_err + err)[-2000:]
    size = big.stat().st_size
    assert peak - base <= bound(size), (
        f"{case}: {(peak - base) / MIB:.0f} MiB over the 4-tensor file's peak for a "
        f"{size}-byte file; bound {bound(size) / MIB:.0f} MiB"
    )


@pytest.mark.parametrize("writer", ["v2_write", "v3_write"])
def test_the_writers_plans_list_only_the_ranges_with_bytes(writer):
    """Schemas 2 and 3 plan a file of many empty entries (with slots) from columns: the plan
    lists the ranges that have bytes (and, in schema 2, an empty one that ends the section),
    and the file it writes reads back with the same content."""
    from onert_checkpoint.format.container import write as container_write
    from onert_checkpoint.format.revisions.v2 import write as v2_write
    from onert_checkpoint.format.revisions.v3 import write as v3_write

    module = {"v2_write": v2_write, "v3_write": v3_write}[writer]
    ckpt = oc.load(v3_many_entries(5_000, 2))
    assert ckpt.optimizer is not None
    with_bytes = sum(1 for t in ckpt.tensors if t.nbytes) + sum(
        1 for s in ckpt.optimizer.slots.values() for b in s.values() if b.nbytes
    )
    plan = module.plan(ckpt)
    assert with_bytes < 10
    assert len(plan.data) <= with_bytes + 1
    again = oc.load(b"".join(bytes(c) for c in container_write.chunks(plan)))
    assert again.content_equal(ckpt)


def test_the_layout_map_makes_the_data_fields_as_they_are_printed(tmp_path):
    """``dump --layout`` holds the header, table and section fields, not one field object per
    entry: the data ranges' fields are made while they are printed, in the same order and with
    the same values as the complete map."""
    path = tmp_path / "many.ckpt"
    path.write_bytes(v3_many_entries(20_000, 2))
    lazy = layout_map(path, lazy=True)
    assert len(lazy.fields) < 100
    made = list(lazy.iter_fields())
    assert len(made) > 3 * 20_000
    assert made == layout_map(path).fields
    assert "".join(lazy.json_pieces()) == json.dumps(layout_map(path).to_dict())


# -- linear time ---------------------------------------------------------------------------------

LIMIT = 24.0  # 8x the input may cost about 8x; quadratic work gives 64x


def cpu_time(action: Callable[[], object], repeat: int = 3) -> float:
    return median_cpu_time(action, repeat)


def ratio(make: Callable[[int], object], act: Callable[[object], object], n: int) -> float:
    small, large = make(n), make(8 * n)
    times = {k: cpu_time(lambda x=x: act(x)) for k, x in (("small", small), ("large", large))}
    return times["large"] / max(times["small"], 1e-4)


def nan_adam(n: int) -> bytes:
    """n named float32 tensors whose weights and Adam state are all NaN: a finding per entry
    and slot entry, each labelled with its tensor's name."""
    nan = np.full(1, np.nan, np.float32)
    tensors = [oc.Tensor(i, nan, name=f"t{i}", dtype="float32", shape=(1,)) for i in range(n)]
    slots = {s: {i: oc.Buffer(i, nan) for i in range(n)} for s in ("m", "v")}
    ckpt = oc.Checkpoint(tensors, oc.Optimizer("adam", slots), revision="v3")
    return oc.to_bytes(ckpt)


def test_value_checks_are_linear_in_the_findings():
    from onert_checkpoint.tools.sanity import value_warnings

    found = value_warnings(oc.load(nan_adam(3)))
    assert [w.field for w in found] == [
        "weights[0]", "weights[1]", "weights[2]", "m[0]", "m[1]", "m[2]", "v[0]", "v[1]", "v[2]",
    ]
    assert "entry 1 ('t1') holds 1 NaN" in found[1].message
    assert "m of entry 2 ('t2')" in found[5].message
    r = ratio(lambda n: nan_adam(n), lambda data: value_warnings(oc.load(data)), 500)
    assert r < LIMIT, f"validate's value checks: 8x the entries take {r:.0f}x the time"


def test_info_is_linear_in_the_entries():
    from onert_checkpoint.tools.describe import describe_lazy, json_pieces

    def act(data: object) -> None:
        for _ in json_pieces(describe_lazy(oc.load(data))):
            pass

    r = ratio(lambda n: v3_many_entries(n, 4), act, 5_000)
    assert r < LIMIT, f"info --json: 8x the entries take {r:.0f}x the time"


def test_the_circle_reader_is_linear_in_the_model_size():
    """A model naming one tensor of m dimensions m times: 8x the model (m x 8) is 64x the
    dimensions for a reader that expands each reference, 8x for one that reads a table once."""
    r = ratio(lambda m: circle_reference_bomb(m, m), oc.CircleModel.load, 300)
    assert r < LIMIT, f"CircleModel.load: 8x the model takes {r:.0f}x the time"


def test_a_repeated_reference_reads_as_many_tensors_sharing_what_they_read():
    model = oc.CircleModel.load(circle_reference_bomb(1000, 1000))
    assert len(model.tensors) == 1000
    assert {t.index for t in model.tensors} == set(range(1000))
    assert all(t.shape is model.tensors[0].shape for t in model.tensors)
    assert model.tensors[999].shape == (1,) * 1000 and model.tensors[999].nbytes == 4
    assert model.initial_data(999).tobytes() == b"\1\1\1\1"


def test_the_unpack_estimate_is_linear_and_counts_every_reference():
    small = circle_reference_bomb(1, 100, subgraphs=100)
    assert unpack_cost(small) >= 100 * 100 * 4  # every subgraph reference, every dimension
    r = ratio(lambda m: circle_reference_bomb(m, m, subgraphs=m), unpack_cost, 200)
    assert r < LIMIT, f"unpack_cost: 8x the model takes {r:.0f}x the time"


def test_bake_refuses_a_model_whose_expansion_exceeds_the_bound(tmp_path):
    raw = circle_reference_bomb(1, 4_000, subgraphs=4_000)
    assert unpack_cost(raw) > unpack_budget(len(raw))
    ckpt = oc.Checkpoint([oc.Tensor(0, np.zeros(4, np.uint8), model_index=0)], revision="v3")
    with pytest.raises(oc.NotRepresentableError) as err:
        oc.bake(ckpt, raw, tmp_path / "out.circle")
    assert err.value.code == "not_representable" and err.value.field == "model"
    assert "64 MiB + 8x the model's size" in str(err.value)
    assert not (tmp_path / "out.circle").exists()
    # the same structure, small: baked, every reference kept
    ckpt = oc.Checkpoint([oc.Tensor(0, np.zeros(4, np.uint8), model_index=0)], revision="v3")
    baked = oc.bake(ckpt, circle_reference_bomb(1, 2, subgraphs=10))
    assert oc.CircleModel.load(baked).initial_data(0).tobytes() == bytes(4)


# -- npz: declared sizes, member names, .npy files -----------------------------------------------


def test_an_npz_bomb_is_refused_before_it_is_inflated(tmp_path):
    path = tmp_path / "bomb.npz"
    path.write_bytes(npz_bomb(64 * MIB))
    with pytest.raises(oc.NotRepresentableError, match="members inflate to more than"):
        oc.from_npz(path)


def test_an_npy_header_claiming_more_than_its_member_holds_is_refused(tmp_path):
    import io

    header = np.lib.format.header_data_from_array_1_0(np.zeros(0, np.uint8))
    header["shape"] = (10**12,)
    member = io.BytesIO()
    np.lib.format.write_array_header_1_0(member, header)
    path = tmp_path / "liar.npz"
    with zipfile.ZipFile(path, "w") as zf:  # stored: small, and honest about its own size
        zf.writestr("0.npy", member.getvalue() + bytes(16))
    with pytest.raises(oc.NotRepresentableError, match=r"declares uint8\[1000000000000\]"):
        oc.from_npz(path)


def test_a_compressed_npz_within_the_limit_imports(tmp_path):
    arrays = {"0": np.zeros(1 << 20, np.float32), "1": np.arange(8, dtype=np.int64)}
    np.savez_compressed(tmp_path / "ok.npz", **arrays)
    ckpt = oc.from_npz(tmp_path / "ok.npz")
    assert ckpt[0].nbytes == 4 << 20 and ckpt[1].nbytes == 64


TRAVERSING = ["x/../../y", "../y", "/abs", "a//b", "a\\b", "c:/w", "./w", "a/."]


@pytest.mark.parametrize("name", TRAVERSING)
def test_a_name_that_could_traverse_a_path_is_no_npz_member_name(tmp_path, name):
    assert not path_safe(name)
    t = oc.Tensor(0, np.zeros(2, np.float32), name=name, dtype="float32", shape=(2,))
    u = oc.Tensor(1, np.ones(2, np.float32), name="dense/kernel", dtype="float32", shape=(2,))
    ckpt = oc.Checkpoint([t, u], revision="v3")
    oc.to_npz(ckpt, tmp_path / "x.npz")
    members = zipfile.ZipFile(tmp_path / "x.npz").namelist()
    assert all(path_safe(m[: -len(".npy")]) for m in members), members
    assert "0.npy" in members and "1.npy" in members  # entry indices for every array
    back = oc.from_npz(tmp_path / "x.npz")
    assert back[0].name == name and back.content_equal(ckpt)


def test_names_that_cannot_traverse_a_path_are_kept_as_member_names(tmp_path):
    t = oc.Tensor(0, np.zeros(2, np.float32), name="dense/kernel:0", dtype="float32", shape=(2,))
    ckpt = oc.Checkpoint([t], oc.Optimizer("adam", {"m": {0: oc.Buffer(0, np.zeros(8, np.uint8))},
                                                    "v": {0: oc.Buffer(0, np.zeros(8, np.uint8))}}),
                         revision="v3")
    oc.to_npz(ckpt, tmp_path / "x.npz")
    members = zipfile.ZipFile(tmp_path / "x.npz").namelist()
    assert {"dense/kernel:0.npy", "dense/kernel:0.m.npy", "dense/kernel:0.v.npy"} <= set(members)


def test_a_slot_name_that_could_traverse_a_path_is_replaced_by_its_position(tmp_path):
    t = oc.Tensor(0, np.zeros(2, np.float32), name="w", dtype="float32", shape=(2,))
    opt = oc.Optimizer("custom", {"../../s": {0: oc.Buffer(0, np.zeros(8, np.uint8))}})
    ckpt = oc.Checkpoint([t], opt, revision="v3")
    oc.to_npz(ckpt, tmp_path / "x.npz")
    members = zipfile.ZipFile(tmp_path / "x.npz").namelist()
    assert "w.slot0.npy" in members and all(".." not in m for m in members)
    assert oc.from_npz(tmp_path / "x.npz").content_equal(ckpt)


def test_edit_replace_refuses_bytes_after_the_npy_array(tmp_path):
    data = Path(__file__).parents[1] / "data" / "real-onert"
    good = tmp_path / "b1.npy"
    np.save(good, np.zeros(3, np.float32))
    junk = tmp_path / "junk.npy"
    junk.write_bytes(good.read_bytes() + b"junk")
    model = data / "fc2.circle"
    base = [sys.executable, "-m", "onert_checkpoint", "edit", data / "fc2-adam-step8.ckpt",
            tmp_path / "out.ckpt", "--model", model]
    bad = subprocess.run([*base, "--replace", f"b1={junk}"], capture_output=True, text=True)
    assert bad.returncode == 2 and "4 bytes follow the float32[3] array" in bad.stderr
    assert not (tmp_path / "out.ckpt").exists()
    ok = subprocess.run([*base, "--replace", f"b1={good}"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


# -- entries: a pass over every entry keeps none, and loses no edit ------------------------------


def test_a_pass_over_every_tensor_keeps_no_tensor():
    ckpt = oc.load(v3_many_entries(10_000, 2))
    assert sum(t.nbytes for t in ckpt.tensors) == 4
    assert sum(e.nbytes for s in ckpt.optimizer.slots.values() for e in s.values()) == 0
    gc.collect()
    assert ckpt.tensors.made() == []
    assert [s.made() for s in ckpt.optimizer.slots.values()] == [[], []]


def test_an_entry_held_from_a_pass_is_the_entry_and_keeps_its_edits(tmp_path):
    data = Path(__file__).parents[1] / "data" / "real-onert" / "fc2-adam-step8.ckpt"
    ckpt = oc.load(data, mmap=False)
    held = list(ckpt.tensors)
    assert ckpt.tensors[2] is held[2] and ckpt[held[3].index] is held[3]
    first = next(iter(ckpt.tensors))
    assert first is held[0]
    first.data = np.full(first.nbytes, 7, np.uint8)
    entry = next(e for i, e in ckpt.optimizer.slots["m"].items() if i == 1)
    entry.data = np.full(entry.nbytes, 9, np.uint8)
    v = list(ckpt.optimizer.slots["v"].values())[3]
    v.data = np.full(v.nbytes, 5, np.uint8)
    del held, first, entry, v
    gc.collect()  # the edited entries are settled in their list: nothing holds them but it
    oc.save(ckpt, tmp_path / "edited.ckpt")
    back = oc.load(tmp_path / "edited.ckpt")
    assert set(back[0].raw.tolist()) == {7}
    assert set(back.slot("m", 1).raw.tolist()) == {9}
    assert set(back.slot("v", 3).raw.tolist()) == {5}
    assert back[1].raw.tobytes() == oc.load(data)[1].raw.tobytes()


def test_a_renamed_tensor_from_a_pass_is_found_by_its_new_name():
    ckpt = oc.load(v3_many_entries(100))
    for t in ckpt.tensors:
        if t.index == 42:
            t.name = "answer"
    del t
    gc.collect()
    assert ckpt["answer"].index == 42
    assert len(ckpt.tensors.made()) == 1


def test_info_json_is_the_description():
    data = Path(__file__).parents[1] / "data" / "real-onert" / "fc2-adam-step8.ckpt"
    out = subprocess.run([sys.executable, "-m", "onert_checkpoint", "info", "--json", data],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == oc.describe(oc.load(data))


def test_the_baseline_of_this_run_is_stated():
    """The interpreter and NumPy alone stay under 200 MiB whatever the spawning process holds:
    a child's peak is its own, not the parent's high-water mark (which Linux folds into the
    child's ``ru_maxrss`` at exec; a pytest process late in the suite holds about 500 MB)."""
    ballast = bytearray(300 * MIB)
    ballast[::4096] = b"\1" * len(range(0, len(ballast), 4096))  # resident in this process
    peak, status, _ = peak_of("import numpy, onert_checkpoint")
    del ballast
    assert status == 0 and peak < 200 * MIB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


def test_a_second_run_in_the_child_counts_its_own_peak_not_the_first_runs():
    """The tiny and the large run of a command share one interpreter: the high-water mark is
    reset between them, so a first run that held 300 MiB does not raise the second's peak (and
    its exit status and output are its own)."""
    held = "b = bytearray(300 << 20); b[::4096] = b'\\1' * len(range(0, len(b), 4096)); del b"
    (first, status, _), (second, again, err) = peaks_of(held, "import sys; sys.exit(3)")
    assert status == 0 and first >= 300 * MIB
    assert again == 3 and "Traceback" not in err
    assert second < 200 * MIB, f"the second run peaked at {second / MIB:.0f} MiB"
