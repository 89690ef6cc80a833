"""The reference C writer (spec/c/ockpt_write.c) against the Python library's writer.

For each checkpoint and each target (schema 1 as loaded, as onert, as onert-micro; WOF; schema 2;
schema 3)
the C writer, built with -std=c99 -Wall -Wextra -Werror -pedantic and ASan+UBSan, must write the
file ``onert_checkpoint.to_bytes`` writes, byte for byte, or refuse (exit 1) exactly where the
library raises ``not_representable``. Checkpoints: every valid vector of spec/vectors and random
ones (schema-1 and WOF strategies of tests/strategies.py; a schema-2 strategy below with names,
dtypes, shapes, model indices, shuffled source offsets, NO_STATE slot entries, custom optimizers,
every state type, origin and kept sections).

The checkpoint goes to the C driver ``ockpt-write`` in the "OCKW" input format that
spec/c/ockpt_write_main.c documents; :func:`encode` writes it.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onert_checkpoint as oc
from onert_checkpoint import Buffer, Checkpoint, Optimizer, Tensor, TrainingState
from onert_checkpoint.format.container import constants
from onert_checkpoint.format.container.write import origin_of
from onert_checkpoint.format.dtypes import DTYPE_CODES
from onert_checkpoint.format.layout import Schema1Layout, Schema3Layout
from onert_checkpoint.format.model import OPTIMIZER_SLOTS, Section
from onert_checkpoint.format.revisions.registry import holds
from tests.shared_build import built_once
from tests.strategies import checkpoints, wof_checkpoints

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "spec" / "c"
VECTORS = ROOT / "spec" / "vectors"
VALID = sorted(
    p for p in VECTORS.glob("*.ckpt") if not p.name.startswith("invalid-")
)

NEW = (1 << 64) - 1  # OCKPT_W_NEW and OCKPT_W_ABSENT
NO_BLOCKS = (1 << 32) - 1  # OCKPT_W_NO_BLOCKS
NO_INDEX = (1 << 32) - 1  # OCKPT_W_NO_INDEX
TARGETS = {"v1": 1, "v2": 2, "v3": 3, "wof": 0x81}  # ockpt_w_target
DIALECTS = {None: 0, "onert": 1, "onert-micro": 2}
#: (revision, dialect) pairs written for every checkpoint; "keep" is the loaded dialect.
WRITES = [("v1", "keep"), ("v1", "onert"), ("v1", "onert-micro"), ("wof", "keep"), ("v2", "keep"),
          ("v3", "keep")]


class Unencodable(Exception):
    """The checkpoint holds something the OCKW format cannot carry (never in valid content)."""


@pytest.fixture(scope="session")
def ockpt_write(pytestconfig: pytest.Config, tmp_path_factory) -> Path:
    """spec/c's ``ockpt-write``, built by the Makefile (its sanitizer build) in a copy."""
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc and make are needed to build the C writer (.ci/run installs them)")
    return built_once(pytestconfig, tmp_path_factory, "ockpt-write", _build_ockpt_write)


def _build_ockpt_write(build: Path) -> Path:
    for src in C_DIR.iterdir():
        if src.suffix in (".c", ".h") or src.name == "Makefile":
            shutil.copy(src, build / src.name)
    done = subprocess.run(["make", "-s", "-C", str(build), "CC=gcc", "ockpt-write"],
                          capture_output=True, text=True)
    exe = build / "ockpt-write"
    if done.returncode != 0 or not exe.exists():
        pytest.fail(f"the C writer does not build:\n{done.stdout}\n{done.stderr}")
    return exe


# The OCKW input format ------------------------------------------------------------------------


def _text(value: object) -> bytes:
    if not isinstance(value, str):
        raise Unencodable(f"{value!r} is not a string")
    # Lone surrogates pass through as the (invalid) bytes a C caller could hold: the writer must
    # refuse them, as the library does.
    return value.encode("utf-8", "surrogatepass")


def _u(fmt: str, value: int) -> bytes:
    try:
        return struct.pack("<" + fmt, value)
    except struct.error as err:
        raise Unencodable(str(err)) from None


def _buffer(b: Buffer) -> bytes:
    raw = bytes(b.raw)
    return _u("Q", NEW if b.offset is None else b.offset) + _u("Q", len(raw)) + raw


def _slot_entry(b: Buffer) -> bytes:
    raw = bytes(b.raw)
    return _u("Q", len(raw)) + _u("Q", NEW if b.offset is None else b.offset) + raw


def _slot_names(opt: Optimizer) -> list[str]:
    known = OPTIMIZER_SLOTS.get(opt.kind)
    if known is None:
        return list(opt.slots)
    return list(known) + [n for n in opt.slots if n not in known]


def _optimizer_code(kind: str) -> int:
    if kind in constants.OPTIMIZER_CODES:
        return constants.OPTIMIZER_CODES[kind]
    if kind.startswith("optimizer_") and kind[len("optimizer_"):].isdigit():
        return int(kind[len("optimizer_"):])
    raise Unencodable(kind)


def encode(ckpt: Checkpoint, revision: str, dialect: str | None) -> bytes:
    """The OCKW description of ``ckpt`` to write as ``revision`` in ``dialect``."""
    out = [b"OCKW", bytes([TARGETS[revision], DIALECTS[dialect]])]
    # N, the table length, is schema 1's and WOF's; schema 2 and 3 have no table of N entries
    # (their largest index, 2**32-1, makes N one more than a u32 holds)
    n = ckpt.table_length if revision in ("v1", "wof") else min(ckpt.table_length, 0xFFFFFFFF)
    out += [_u("I", n), bytes([int("footerless" in ckpt.layout.quirks)])]
    tensors = sorted(ckpt.tensors, key=lambda t: t.index)
    out.append(_u("I", len(tensors)))
    # A schema-1 or WOF checkpoint's names, dtypes and shapes are a bound model's, not its
    # content (the model keeps them: format/loss.py); the C writer is given content only, and
    # refuses to drop any (SPEC 9.2).
    bound = not holds(ckpt.revision, "holds_everything") and revision in ("v1", "wof")
    for t in tensors:
        has, dims, dtype, rank = 0, [0] * 8, 0, 0
        if bound:
            t = Tensor(t.index, t.raw, t.offset)
        if t.dtype is not None:
            has |= constants.HAS_DTYPE
            dtype = DTYPE_CODES.get(str(t.dtype), 127)  # 127: no TensorType, refused
        if t.shape is not None:
            has |= constants.HAS_SHAPE
            rank = len(t.shape)
            dims[: min(rank, 8)] = [int(d) for d in t.shape][:8]
        name = b""
        if t.name is not None:
            has |= constants.HAS_NAME
            name = _text(t.name)
        model_index = 0
        if t.model_index is not None:
            has |= constants.HAS_MODEL_INDEX
            model_index = t.model_index
        out += [_u("I", t.index), _buffer(t), _u("H", has), _u("I", model_index), _u("b", dtype),
                _u("B", rank), b"".join(_u("I", d) for d in dims), _u("I", len(name)), name]
    opt = ckpt.optimizer
    if opt is None:
        out.append(b"\0" + _u("I", 0) + _u("I", 0))
    else:
        names = _slot_names(opt)
        out += [b"\1", _u("I", _optimizer_code(opt.kind)), _u("I", len(names))]
        present = {t.index for t in tensors}
        for name in names:
            entries = opt.slots.get(name, {})
            if set(entries) - present:
                raise Unencodable("a slot entry without a tensor")
            raw = _text(name)
            out += [_u("I", len(raw)), raw]
            for t in tensors:
                out.append(_slot_entry(entries[t.index]) if t.index in entries else _u("Q", NEW))
    out.append(_u("I", len(ckpt.state)))
    for key, value in ckpt.state.items():
        raw = _text(key)
        out += [_u("I", len(raw)), raw]
        if isinstance(value, (bool, np.bool_)):
            raise Unencodable("bool")
        if isinstance(value, (int, np.integer)):
            out += [b"\0", _u("q", int(value))]
        elif isinstance(value, (float, np.floating)):
            out += [b"\1", struct.pack("<d", float(value))]
        elif isinstance(value, str):
            payload = _text(value)
            out += [b"\2", _u("Q", len(payload)), payload]
        elif isinstance(value, (bytes, bytearray, memoryview)):
            out += [b"\3", _u("Q", len(bytes(value))), bytes(value)]
        else:
            raise Unencodable(type(value).__name__)
    origin = origin_of(ckpt) if revision in ("v2", "v3") else None
    if origin is None:
        out.append(b"\0" + bytes(20))
    else:
        out += [b"\1", _u("I", constants.ORIGIN_REVISIONS.get(origin.get("revision"), 0)),  # type: ignore[arg-type]
                _u("I", constants.ORIGIN_DIALECTS.get(origin.get("dialect"), 9)),  # type: ignore[arg-type]
                _u("I", constants.FOOTERLESS if origin.get("footerless") else 0),
                _u("Q", int(origin["num_entries"]))]  # type: ignore[call-overload]
    sections = sorted(ckpt.layout.sections, key=lambda s: s.kind)
    out.append(_u("I", len(sections)))
    for s in sections:
        out += [_u("I", s.kind), bytes([int(s.required)]), _u("Q", len(s.data)), bytes(s.data)]
    # Schema 3: a loaded schema-3 file's data order (entry indices), which orders 0-byte
    # tensors that share a source offset (SPEC.md 7.3; the library's Checkpoint.layout.data_order).
    order = [] if ckpt.layout.data_order is None else [int(i) for i in ckpt.layout.data_order]
    out += [_u("I", len(order))] + [_u("I", i) for i in order]
    # Schema 3's data_blocks section (SPEC.md 7.4): the checkpoint's block size as the
    # library reads it (None: its default, 0 in OCKW; 0: none, 2**32-1 in OCKW).
    size = ckpt.layout.data_block_size
    out.append(_u("I", 0 if size is None else NO_BLOCKS if size == 0 else size))
    # and its range_index section (SPEC.md 7.5), the same way (None: the default; 0: none)
    group = ckpt.layout.range_index_group
    out.append(_u("I", 0 if group is None else NO_INDEX if group == 0 else group))
    return b"".join(out)


# The comparison ---------------------------------------------------------------------------------


#: The library refuses to write schema-1 entries of one runtime's indexing as the other's
#: without the model (code not_representable, field "dialect"): a rule about where a Checkpoint came
#: from, which the C writer's caller (who knows its own entries) owns. Such writes are skipped.
PROVENANCE = b"provenance"


def python_file(ckpt: Checkpoint, revision: str, dialect: str) -> bytes | None:
    """What the library writes, None where it refuses the content; schema 3 with the
    checkpoint's own data_blocks choice (SPEC 7.4), the library's default when it has none."""
    kwargs = {} if dialect == "keep" else {"dialect": dialect}
    try:
        return oc.to_bytes(ckpt, revision=revision, **kwargs)
    except oc.CheckpointError as err:
        assert err.code == "not_representable", err
        return PROVENANCE if err.field == "dialect" else None


def c_file(exe: Path, ckpt: Checkpoint, revision: str, dialect: str) -> bytes | None:
    """What the C writer writes, None where it refuses (exit 1)."""
    if dialect == "keep":
        dialect = ckpt.dialect if revision == ckpt.revision else None  # type: ignore[assignment]
    res = subprocess.run([str(exe)], input=encode(ckpt, revision, dialect), capture_output=True)
    assert res.returncode in (0, 1), res.stderr.decode(errors="replace")
    assert b"runtime error" not in res.stderr and b"Sanitizer" not in res.stderr, res.stderr
    return res.stdout if res.returncode == 0 else None


def check_all_writes(exe: Path, ckpt: Checkpoint) -> int:
    """Every target: the C file equals the library's (or both refuse). Returns files compared."""
    compared = 0
    for revision, dialect in WRITES:
        want = python_file(ckpt, revision, dialect)
        if want is PROVENANCE:
            continue
        try:
            got = c_file(exe, ckpt, revision, dialect)
        except Unencodable:
            assert want is None, f"{revision}/{dialect}: the library wrote unencodable content"
            continue
        if want is None:
            assert got is None, f"{revision}/{dialect}: the C writer wrote what the library refuses"
            continue
        assert got is not None, f"{revision}/{dialect}: the C writer refused what the library wrote"
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                     min(len(got), len(want)))
        assert got == want, (
            f"{revision}/{dialect}: {len(got)} vs {len(want)} bytes, first difference at {first}"
        )
        compared += 1
    return compared


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_valid_vector(ockpt_write, path):
    """Each valid vector, loaded and written as every target, the C file equals the library's;
    written as it was loaded, that is the vector itself (with its data_blocks section, SPEC
    7.4, or without, as the vector has it)."""
    data = path.read_bytes()
    ckpt = oc.load(data)
    assert c_file(ockpt_write, ckpt, ckpt.revision, "keep") == data
    assert check_all_writes(ockpt_write, ckpt) >= 1


#: Files the runtimes wrote themselves: onert's exports (tests/data) and onert-micro's saves
#: (the shared reference folder, next to the repository; absent on other machines).
SHARED = ROOT / ".." / "shared" / "reference" / "onert-micro" / "real-files"
RUNTIME_FILES = sorted((ROOT / "tests" / "data" / "real-onert").glob("*.ckpt")) + (
    sorted(SHARED.glob("ckpt_*.bin")) if SHARED.is_dir() else [])


@pytest.mark.parametrize("path", RUNTIME_FILES, ids=[p.name for p in RUNTIME_FILES])
def test_runtime_files_byte_for_byte(ockpt_write, path):
    """Given what a runtime saved, the C writer writes the runtime's own file in its dialect."""
    data = path.read_bytes()
    ckpt = oc.load(data)
    assert ckpt.revision == "v1"
    dialect = "onert-micro" if path.suffix == ".bin" else "onert"
    assert c_file(ockpt_write, ckpt, "v1", dialect) == data


def test_both_runtimes_files_are_checked():
    if not SHARED.is_dir():
        pytest.skip("the onert-micro runtime's files are in ../shared/reference (absent here)")
    assert {p.suffix for p in RUNTIME_FILES} == {".ckpt", ".bin"}


def test_vectors_cover_every_target(ockpt_write):
    """The vectors exercise both dialects, WOF, schema 2 and schema 3 through the C writer."""
    seen = set()
    for path in VALID:
        ckpt = oc.load(path.read_bytes())
        seen.add((ckpt.revision, ckpt.dialect))
    assert {("v1", "onert"), ("v1", "onert-micro"), ("wof", None), ("v2", None),
            ("v3", None)} <= seen


def _one(**kw: object) -> Checkpoint:
    return Checkpoint([Tensor(0, np.arange(4, dtype=np.uint8))], **kw)  # type: ignore[arg-type]


LOSSY = {  # (content, target): what the target cannot hold (SPEC 9.2)
    "names": (lambda: Checkpoint([Tensor(0, np.arange(4, dtype=np.uint8), name="w")],
                                 Optimizer("sgd"), revision="v3"), "v1"),
    "names-wof": (lambda: Checkpoint([Tensor(0, np.arange(4, dtype=np.uint8), model_index=3)],
                                     revision="v3"), "wof"),
    "section": (lambda: _one(optimizer=Optimizer("sgd"),
                             layout=Schema3Layout("v3", sections=[Section(kind=9, data=b"x")])),
                "v1"),
    "section-wof": (lambda: _one(layout=Schema3Layout("v3", sections=[Section(kind=9, data=b"x")])),
                    "wof"),
    "footerless-step": (lambda: _one(optimizer=Optimizer("sgd"), state=TrainingState(step=5),
                                     layout=Schema1Layout("v1", dialect="onert",
                                                          quirks=("footerless",))),
                        "v1"),
    "adam-kind-wof": (lambda: _one(optimizer=Optimizer("adam"), revision="v3"), "wof"),
}


@pytest.mark.parametrize("case", sorted(LOSSY))
def test_both_writers_refuse_what_the_target_cannot_hold(ockpt_write, case):
    """A write that would drop content is refused by the library (not_representable) and by
    the C writer alike (SPEC 9: a lossy write only when asked; in C, by leaving it out)."""
    make, target = LOSSY[case]
    dialect = "onert" if target == "v1" else "keep"
    assert python_file(make(), target, dialect) is None
    assert c_file(ockpt_write, make(), target, dialect) is None


# Random checkpoints -----------------------------------------------------------------------------

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NUMERIC = ["float32", "float16", "int32", "uint8", "int64", "int8", "float64", "int16", "bool"]
names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


@st.composite
def _tensor_payload(draw) -> tuple[np.ndarray, str | None, tuple[int, ...] | None]:
    if draw(st.booleans()):
        return np.frombuffer(draw(st.binary(max_size=90)), np.uint8).copy(), None, None
    dtype = np.dtype(draw(st.sampled_from(NUMERIC)))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    count = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = draw(st.binary(min_size=count, max_size=count))
    arr = np.frombuffer(raw, np.uint8).copy().view(dtype).reshape(shape)
    return arr, dtype.name, (shape if draw(st.booleans()) else None)


@st.composite
def v2_checkpoints(draw) -> Checkpoint:
    """Schema-2 content with every optional part; source offsets drawn so that the writer's
    storage order (SPEC.md 6.10) is exercised, 0-byte ranges included."""
    indices = draw(st.lists(st.integers(0, 30), unique=True, max_size=6))
    tensor_names = draw(st.lists(names, unique=True, min_size=len(indices), max_size=len(indices)))
    model_indices = draw(st.lists(st.integers(0, 1 << 32 - 1), unique=True,
                                  min_size=len(indices), max_size=len(indices)))
    offsets = st.one_of(st.none(), st.integers(0, 12).map(lambda k: 64 * k))
    tensors = []
    for k, i in enumerate(indices):
        data, dtype, shape = draw(_tensor_payload())
        tensors.append(Tensor(index=i, data=data, dtype=dtype, shape=shape, offset=draw(offsets),
                              name=tensor_names[k] if draw(st.booleans()) else None,
                              model_index=model_indices[k] if draw(st.booleans()) else None))
    kind = draw(st.sampled_from([None, "sgd", "sgd_momentum", "adam", "optimizer_9"]))
    optimizer = None
    if kind is not None:
        slots = {}
        if kind == "optimizer_9":
            slots = {n: {} for n in draw(st.lists(names, unique=True, max_size=3))}
        optimizer = Optimizer(kind, slots)
        for entries in optimizer.slots.values():
            for t in tensors:
                if draw(st.booleans()):
                    raw = draw(st.one_of(st.just(bytes(t.nbytes)), st.binary(max_size=20)))
                    entries[t.index] = Buffer(t.index, np.frombuffer(raw, np.uint8).copy(),
                                              offset=draw(offsets))
    state = TrainingState()
    for key, typ in draw(st.lists(st.sampled_from(sorted(constants.WELL_KNOWN_KEYS.items())),
                                  unique=True, max_size=3)):
        state[key] = draw({"int": st.integers(0, (1 << 63) - 1), "float": st.floats(),
                           "string": st.text(max_size=6)}[typ])
    for key in draw(st.lists(names.filter(lambda k: k not in constants.WELL_KNOWN_KEYS),
                             unique=True, max_size=3)):
        state[key] = draw(st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.floats(),
                                    st.text(max_size=6), st.binary(max_size=6)))
    sections = [Section(kind=k, data=draw(st.binary(max_size=40)), required=draw(st.booleans()))
                for k in draw(st.lists(st.integers(6, 1 << 20), unique=True, max_size=2))]
    origin = draw(st.one_of(st.none(), st.fixed_dictionaries({
        "revision": st.sampled_from(["v1", "wof"]),
        "dialect": st.sampled_from([None, "onert", "onert-micro"]),
        "num_entries": st.integers(0, 1 << 40), "footerless": st.booleans()})))
    return Checkpoint(tensors=tensors, optimizer=optimizer, state=state,
                      layout=Schema3Layout("v3", origin=origin, sections=sections))


@SETTINGS
@given(ckpt=st.one_of(checkpoints(max_entries=6), wof_checkpoints(max_entries=6)))
def test_random_schema1_and_wof(ockpt_write, ckpt):
    assert check_all_writes(ockpt_write, ckpt) >= 1


@SETTINGS
@given(ckpt=v2_checkpoints())
def test_random_schema2(ockpt_write, ckpt):
    assert check_all_writes(ockpt_write, ckpt) >= 1


@SETTINGS
@given(ckpt=v2_checkpoints(), data=st.data())
def test_random_schema3_with_a_data_order(ockpt_write, ckpt, data):
    """Schema 3 (in WRITES above for every test) with a loaded file's data order given too:
    0-byte tensors with equal source offsets are placed in that order (the `order` column)."""
    indices = [t.index for t in ckpt.tensors]
    ckpt.layout.data_order = data.draw(st.permutations(indices))
    for t in ckpt.tensors:
        if data.draw(st.booleans()):
            t.offset = 0  # ties, broken by data_order alone
    want = python_file(ckpt, "v3", "keep")
    assert want is not None
    assert c_file(ockpt_write, ckpt, "v3", "keep") == want


def _block_size(file: bytes, kind: int = 0x100008) -> int:
    """The block size of a schema-2-family file's data_blocks section (kind 0x100008; the
    group size of its range_index section, kind 0x100009), 0 without one (read from the
    section table: the file may hold a required section of an unknown kind)."""
    (count,) = struct.unpack_from("<I", file, 24)
    for i in range(count):
        found, _, ofs = struct.unpack_from("<IIQ", file, 64 + 32 * i)
        if found == kind:
            return 1 << struct.unpack_from("<I", file, ofs)[0]
    return 0


#: Block sizes of schema 3's data_blocks section (SPEC.md 7.4): the default (None), none (0),
#: the smallest (several blocks and a shorter last one in a few hundred bytes), the largest.
BLOCK_SIZES = [None, 0, 64, 128, 1024, 1 << 16, 1 << 24]


@SETTINGS
@given(ckpt=v2_checkpoints(), size=st.sampled_from(BLOCK_SIZES),
       above=st.none() | st.integers(0x100010, 0x1000FF), data=st.data())
def test_random_schema3_data_blocks(ockpt_write, ckpt, size, above, data):
    """Schema 3's data_blocks section at every block size the library writes, and none: the
    C file equals the library's, a kept section of a higher kind placed after it (6.4)."""
    ckpt.layout.data_block_size = size
    if above is not None:
        ckpt.layout.sections.append(Section(kind=above, data=data.draw(st.binary(max_size=9))))
    want = python_file(ckpt, "v3", "keep")
    assert want is not None
    got = _block_size(want)
    has_data = any(t.nbytes for t in ckpt.tensors) or (
        ckpt.optimizer is not None
        and any(b.nbytes for s in ckpt.optimizer.slots.values() for b in s.values()))
    assert got == ((1 << 16 if size is None else size) if has_data else 0)
    assert c_file(ockpt_write, ckpt, "v3", "keep") == want


@st.composite
def many_tensor_checkpoints(draw) -> Checkpoint:
    """Schema-3 content of up to 150 small tensors, so that the range_index section (SPEC.md
    7.5) has several groups at every group size: source offsets shuffled or tied (an
    ``order`` column), gaps in the indices (an ``index`` column), slots with absent entries
    (positions that place nothing), the block size and the group size drawn too."""
    n = draw(st.integers(1, 150))
    step = draw(st.sampled_from([1, 3]))
    sizes = st.sampled_from([0, 1, 2, 3, 5, 8, 17, 64, 100])
    place = draw(st.sampled_from(["built", "record", "shuffled", "tied"]))
    perm = draw(st.permutations(range(n))) if place == "shuffled" else list(range(n))
    tensors = []
    for k in range(n):
        offset = {"built": None, "record": 64 * k, "shuffled": 64 * perm[k]}.get(place, 0)
        data = np.full(draw(sizes), k % 251, np.uint8)
        tensors.append(Tensor(index=step * k, data=data, offset=offset))
    kind = draw(st.sampled_from([None, "sgd", "adam", "optimizer_9"]))
    optimizer = None
    if kind is not None:
        custom = ["a", "b", "c"][: draw(st.integers(0, 3))]
        slot_names = {"sgd": [], "adam": ["m", "v"]}.get(kind, custom)
        optimizer = Optimizer(kind, {name: {} for name in slot_names})
        for entries in optimizer.slots.values():
            for t in tensors:
                if draw(st.integers(0, 3)):  # one in four absent
                    raw = np.full(draw(sizes), 7, np.uint8)
                    entries[t.index] = Buffer(t.index, raw, offset=t.offset)
    ckpt = Checkpoint(tensors=tensors, optimizer=optimizer)
    if place == "tied":
        ckpt.layout.data_order = draw(st.permutations([t.index for t in tensors]))
    ckpt.layout.data_block_size = draw(st.sampled_from([None, 0, 64]))
    ckpt.layout.range_index_group = draw(st.sampled_from([None, 0, 16, 32, 64, 1 << 16]))
    if draw(st.booleans()):
        kind = draw(st.integers(0x100010, 0x1000FF))
        ckpt.layout.sections.append(Section(kind=kind, data=b"kept"))
    return ckpt


@SETTINGS
@given(ckpt=many_tensor_checkpoints())
def test_random_schema3_range_index(ockpt_write, ckpt):
    """Schema 3's range_index section at every group size and none, by default only past 64
    tensors: the C file equals the library's."""
    want = python_file(ckpt, "v3", "keep")
    assert want is not None
    n, group = len(ckpt.tensors), ckpt.layout.range_index_group
    assert _block_size(want, 0x100009) == ((64 if n > 64 else 0) if group is None else group)
    assert c_file(ockpt_write, ckpt, "v3", "keep") == want


@pytest.mark.parametrize("n", [64, 65, 129])
def test_default_range_index_from_65_tensors(ockpt_write, n):
    """The library's default: no range_index section for 64 tensors, groups of 64 past that
    (SPEC.md 7.5); the C writer's default is the same."""
    ckpt = Checkpoint([Tensor(i, np.full(i % 5, i, np.uint8)) for i in range(n)])
    want = python_file(ckpt, "v3", "keep")
    assert want is not None and _block_size(want, 0x100009) == (64 if n > 64 else 0)
    assert c_file(ockpt_write, ckpt, "v3", "keep") == want


@pytest.mark.parametrize("bad", [
    "duplicate-name", "bad-utf8-key", "surrogate-name", "shape-mismatch", "reserved-kind",
    "well-known-type", "micro-footerless", "v3-model-index-none", "v3-block-size",
    "v3-kept-data-blocks-kind", "v3-group-size", "v3-kept-range-index-kind",
])
def test_refusals_match(ockpt_write, bad):
    """Content the library refuses, the C writer refuses too (before writing anything)."""
    t0 = Tensor(0, np.arange(3, dtype=np.float32), name="a", dtype="float32", shape=(3,))
    t1 = Tensor(1, np.zeros(2, np.uint8), name="b")
    ckpt = Checkpoint(tensors=[t0, t1])
    revision = "v2"
    if bad == "duplicate-name":
        t1.name = "a"
    elif bad == "bad-utf8-key":
        ckpt.state["\udcff"] = 1
    elif bad == "surrogate-name":
        t1.name = "x\ud800"
    elif bad == "shape-mismatch":
        t0.shape = (4,)
    elif bad == "reserved-kind":
        ckpt.layout.sections.append(Section(kind=3, data=b"x"))
    elif bad == "well-known-type":
        ckpt.state["step"] = -1
    elif bad == "v3-model-index-none":  # 2**32-1 is schema 3's NO_MODEL_INDEX (SPEC.md 7.1)
        t1.model_index = 0xFFFFFFFF
        assert python_file(ckpt, "v2", "keep") is not None
        revision = "v3"
    elif bad == "v3-block-size":  # not a power of two (SPEC.md 7.4: 64 B to 16 MiB)
        ckpt.layout.data_block_size = 100
        revision = "v3"
    elif bad == "v3-kept-data-blocks-kind":  # would collide with the writer's own section
        ckpt.layout.sections.append(Section(kind=0x100008, data=b"x"))
        assert python_file(ckpt, "v2", "keep") is not None
        revision = "v3"
    elif bad == "v3-group-size":  # not a power of two (SPEC.md 7.5: 16 to 65,536)
        ckpt.layout.range_index_group = 48
        revision = "v3"
    elif bad == "v3-kept-range-index-kind":  # would collide with the writer's own section
        ckpt.layout.sections.append(Section(kind=0x100009, data=b"x"))
        assert python_file(ckpt, "v2", "keep") is not None
        revision = "v3"
    elif bad == "micro-footerless":
        ckpt = Checkpoint(tensors=[Tensor(1, np.zeros(2, np.uint8))],
                          layout=Schema1Layout("v1", dialect="onert-micro", quirks=("footerless",)))
        revision = "v1"
    assert python_file(ckpt, revision, "keep") is None
    res = subprocess.run([str(ockpt_write)], input=encode(ckpt, revision, ckpt.dialect),
                         capture_output=True)
    assert res.returncode == 1 and res.stdout == b"", res.stderr


@pytest.fixture(scope="module")
def example_program(tmp_path_factory) -> Path:
    """spec/c/examples/write_checkpoint.c built once for the module (an ASan build takes
    seconds; every layout runs the same program)."""
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.skip("gcc and make are needed to build the example")
    build = tmp_path_factory.mktemp("example") / "c"
    shutil.copytree(C_DIR, build, ignore=shutil.ignore_patterns("ockpt-info*", "ockpt-write",
                                                               "fuzz_ockpt", "write_checkpoint"))
    done = subprocess.run(["make", "-s", "-C", str(build), "CC=gcc", "examples"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return build / "examples" / "write_checkpoint"


@pytest.mark.parametrize("layout", ["v2", "v3", "onert", "onert-micro"])
def test_example_program(tmp_path, example_program, layout):
    """spec/c/examples/write_checkpoint.c writes a checkpoint from arrays in memory; the library
    reads back exactly the arrays, Adam state and training state it holds."""
    out = tmp_path / "example.ckpt"
    res = subprocess.run([str(example_program), str(out), layout],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    ckpt = oc.load(out)
    weight = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2], np.float32)
    bias = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    assert [t.index for t in ckpt.tensors] == [0, 1]
    assert ckpt.tensors[0].raw.tobytes() == weight.tobytes()
    assert ckpt.tensors[1].raw.tobytes() == bias.tobytes()
    assert ckpt.optimizer is not None and ckpt.optimizer.kind == "adam"
    m = ckpt.optimizer.slots["m"]
    assert m[0].raw.tobytes() == (np.arange(12, dtype=np.float32) * np.float32(0.001)).tobytes()
    assert ckpt.optimizer.slots["v"][1].raw.tobytes() == bytes(16)
    assert (ckpt.step, ckpt.epoch) == (120, 3)
    if layout in ("v2", "v3"):
        assert ckpt.revision == layout and ckpt["fc1/weight"].shape == (4, 3)
        assert ckpt.tensors[0].dtype == "float32" and ckpt.state["learning_rate"] == 0.001
    else:
        assert ckpt.revision == "v1"
    assert oc.to_bytes(ckpt) == out.read_bytes()
