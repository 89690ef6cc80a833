"""The output contract, over every path that writes a file: each public function and each
command variant of tests/public_surface.py that declares an ``output`` (the command line as a
real subprocess), against every kind of target docs/saving.md names:

* a FIFO, a character device (root: ``/dev/null``'s numbers), a socket, a folder, and a
  regular file whose write fails midway (a real ``EFBIG``: the writer runs in a process whose
  ``RLIMIT_FSIZE`` is smaller than the output): refused with an ``OSError`` (the command line:
  its ``io_error`` line, exit 2) naming the path the caller gave and never a temporary, the
  target exactly as it was, nothing left beside it;
* a symbolic link to a good file: the file it names replaced, the link kept, nothing left in
  either folder;
* another user's 0664 file (root: uid 65534): replaced, its owner, group and mode kept.

A new writer joins by declaring its ``output``; :func:`test_every_writer_declares_its_output`
finds one that writes without declaring it.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import onert_checkpoint as oc
from onert_checkpoint.tools import cli
from tests.public_surface import (
    CHECKPOINT,
    CLI_COMMANDS,
    CONTAINER,
    FC2,
    FC2_MODEL,
    MODEL,
    PUBLIC_API,
    ApiPath,
    CliVariant,
    Family,
)

ROOT = Path(__file__).resolve().parents[2]
GOOD = b"a good file that must survive\n" * 8
NOBODY = 65534
#: smaller than every output: the write fails after its first bytes
FSIZE_LIMIT = 64

API_WRITERS = {p.name: p for p in PUBLIC_API.values() if p.output and p.needs is None}
CLI_WRITERS = {
    f"{command}-{v.label}": v for command, variants in CLI_COMMANDS.items()
    for v in variants if v.output
}
#: the inner loop runs each writing command's first variant (a subprocess each); the others
#: share its write path and run in the full suite
FIRST_VARIANTS = {
    f"{command}-{next(v for v in variants if v.output).label}"
    for command, variants in CLI_COMMANDS.items() if any(v.output for v in variants)
}
CLI_NAMES = [
    name if name in FIRST_VARIANTS else pytest.param(name, marks=pytest.mark.slow)
    for name in sorted(CLI_WRITERS)
]
#: writers to a file object the caller opened (not a path): nothing of theirs to replace
STREAMS = {"save_stream"}
REFUSED = ["fifo", "device", "socket", "folder", "fails-midway"]
REPLACED = ["symlink", "foreign-owner"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Family]:
    """One good input of each kind, on which every writer succeeds: the real onert export
    with its model, the model, and a safetensors export of the real SGD run (no Adam state:
    an import into onert-micro needs no batch size)."""
    folder = tmp_path_factory.mktemp("inputs")
    container = folder / "fc2.safetensors"
    oc.to_safetensors(oc.load(FC2.with_name("fc2-sgd-step8.ckpt")), container)
    return {
        CHECKPOINT: Family("v1-onert", CHECKPOINT, FC2, FC2_MODEL),
        MODEL: Family("model", MODEL, FC2_MODEL),
        CONTAINER: Family("safetensors", CONTAINER, container),
    }


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _status(path: Path) -> tuple[int, ...]:
    st = path.lstat()
    return (st.st_mode, st.st_uid, st.st_gid, st.st_rdev, st.st_ino)


def prepare(kind: str, target: Path) -> Callable[[], None]:
    """Make ``target`` of ``kind``; returns the check that it is exactly as it was."""
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("a device node needs root")
        try:
            os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("no device nodes on this file system")
    elif kind == "socket":
        os.mknod(target, stat.S_IFSOCK | 0o600)  # a socket's node, as bind() leaves it
    elif kind == "folder":
        target.mkdir()
        (target / "inside").write_bytes(GOOD)
    else:
        target.write_bytes(GOOD)
    before = _status(target)
    inside = listing(target) if kind == "folder" else None

    def intact() -> None:
        assert _status(target) == before, f"the {kind} was changed"
        if kind == "folder":
            assert listing(target) == inside
        elif stat.S_ISREG(before[0]):
            assert target.read_bytes() == GOOD
    return intact


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death (kept by exec)
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))


def _subprocess(argv: list[str], limited: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, timeout=120, env=env,
        preexec_fn=_limit_file_size if limited else None,
    )


API_CHILD = (
    "import sys; from pathlib import Path; from tests.public_surface import PUBLIC_API, Family\n"
    "name, kind, path, model, out = sys.argv[1:]\n"
    "try:\n"
    "    PUBLIC_API[name].run(Family('f', kind, Path(path), Path(model) if model else None),"
    " Path(out))\n"
    "except OSError as e:\n"
    "    print('OSError', e.filename, '|', e, sep='\\n'); sys.exit(3)\n"
)


def run_api(path: ApiPath, family: Family, out: Path, limited: bool) -> OSError | None:
    """Run the function (in a child whose file size is limited, when ``limited``); the OSError
    it raised (any other outcome but success fails the test)."""
    if not limited:
        try:
            path.run(family, out)
        except OSError as exc:
            return exc
        return None
    done = _subprocess(["-c", API_CHILD, path.name, family.kind, str(family.path),
                        str(family.model or ""), str(out)], limited=True)
    if done.returncode == 0:
        return None
    assert done.returncode == 3, done.stderr
    _, filename, _, text = done.stdout.splitlines()[:4]
    return OSError(0, text, filename)


def run_cli(argv: list[str], limited: bool) -> tuple[int, str]:
    done = _subprocess(["-m", "onert_checkpoint", *argv], limited)
    return done.returncode, done.stderr


def _argv(variant: CliVariant, family: Family, out: Path) -> list[str]:
    return [str(a) for a in variant.argv(family, out)]


def _setup(tmp_path: Path, output: str) -> tuple[Path, Path]:
    out = tmp_path / "out"
    out.mkdir()
    return out, out / output


def _assert_names_the_path(message: str, target: Path) -> None:
    assert str(target) in message, message
    assert ".tmp" not in message and "onert-ckpt-" not in message, message


# --- refused: the target untouched, nothing left, the caller's path named ---------------------


@pytest.mark.parametrize("kind", REFUSED)
@pytest.mark.parametrize("name", sorted(API_WRITERS))
def test_api_writers_refuse_and_leave_the_target(
    inputs: dict[str, Family], tmp_path: Path, name: str, kind: str
) -> None:
    path = API_WRITERS[name]
    out, target = _setup(tmp_path, path.output or "")
    intact = prepare(kind, target)
    err = run_api(path, inputs[path.reads], out, limited=kind == "fails-midway")
    assert err is not None, f"{name} wrote over a {kind}"
    assert err.filename == str(target), (err.filename, str(err))
    _assert_names_the_path(str(err), target)
    intact()
    assert listing(out) == [target.name], f"{name} left {listing(out)}"


@pytest.mark.parametrize("kind", REFUSED)
@pytest.mark.parametrize("name", CLI_NAMES)
def test_commands_refuse_and_leave_the_target(
    inputs: dict[str, Family], tmp_path: Path, name: str, kind: str
) -> None:
    variant = CLI_WRITERS[name]
    out, target = _setup(tmp_path, variant.output or "")
    intact = prepare(kind, target)
    argv = _argv(variant, inputs[variant.reads], out)
    before = listing(out)
    status, stderr = run_cli(argv, kind == "fails-midway")
    assert status == cli.EXIT_USAGE, f"{name} on a {kind}: exit {status}\n{stderr}"
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("onert-ckpt: error: io_error: "), stderr
    _assert_names_the_path(last, target)
    intact()
    assert listing(out) == before, f"{name} left {sorted(set(listing(out)) - set(before))}"


# --- replaced: the link kept, the owner and mode kept ------------------------------------------


def _replaced(kind: str, target: Path, elsewhere: Path) -> Callable[[], None]:
    """Make ``target`` a link to a good file in ``elsewhere``, or another user's 0664 file;
    returns the check of what a success must have kept."""
    if kind == "symlink":
        real = elsewhere / "good.bin"
        real.write_bytes(GOOD)
        target.symlink_to(real)

        def kept() -> None:
            assert target.is_symlink() and Path(os.readlink(target)) == real
            assert real.read_bytes() not in (GOOD, b""), "the linked file was not replaced"
            assert listing(elsewhere) == ["good.bin"]
        return kept
    if os.geteuid() != 0:
        pytest.skip("a file of another user needs root")
    target.write_bytes(GOOD)
    os.chown(target, NOBODY, NOBODY)
    os.chmod(target, 0o664)

    def kept_owner() -> None:
        st = target.lstat()
        assert stat.S_ISREG(st.st_mode) and target.read_bytes() not in (GOOD, b"")
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (NOBODY, NOBODY, 0o664), (
            st.st_uid, st.st_gid, oct(st.st_mode))
    return kept_owner


@pytest.mark.parametrize("kind", REPLACED)
@pytest.mark.parametrize("name", sorted(API_WRITERS))
def test_api_writers_keep_links_and_owners(
    inputs: dict[str, Family], tmp_path: Path, name: str, kind: str
) -> None:
    path = API_WRITERS[name]
    out, target = _setup(tmp_path, path.output or "")
    (tmp_path / "elsewhere").mkdir()
    kept = _replaced(kind, target, tmp_path / "elsewhere")
    assert run_api(path, inputs[path.reads], out, limited=False) is None
    kept()
    assert listing(out) == [target.name]


@pytest.mark.parametrize("kind", REPLACED)
@pytest.mark.parametrize("name", CLI_NAMES)
def test_commands_keep_links_and_owners(
    inputs: dict[str, Family], tmp_path: Path, name: str, kind: str
) -> None:
    variant = CLI_WRITERS[name]
    out, target = _setup(tmp_path, variant.output or "")
    (tmp_path / "elsewhere").mkdir()
    kept = _replaced(kind, target, tmp_path / "elsewhere")
    argv = _argv(variant, inputs[variant.reads], out)
    before = listing(out)
    status, stderr = run_cli(argv, limited=False)
    assert status == cli.EXIT_OK, f"{name}: exit {status}\n{stderr}"
    kept()
    assert listing(out) == before


# --- the list is complete --------------------------------------------------------------------


def _in_process(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return cli.main(argv)


def test_every_writer_declares_its_output(inputs: dict[str, Family], tmp_path: Path) -> None:
    """Every public function and command variant, run on a good input of its kind, creates
    the file it declares and nothing else; one that creates a file undeclared would escape the
    contract above."""
    undeclared = []
    for path in PUBLIC_API.values():
        if path.needs is not None or path.name in STREAMS:
            continue
        out = tmp_path / f"api-{path.name}"
        out.mkdir()
        with contextlib.suppress(oc.CheckpointError):
            path.run(inputs[path.reads], out)
        if listing(out) not in ([], [path.output]):
            undeclared.append(f"{path.name}: {listing(out)} (declared {path.output})")
    for command, variants in CLI_COMMANDS.items():
        for variant in variants:
            out = tmp_path / f"cli-{command}-{variant.label}"
            out.mkdir()
            argv = _argv(variant, inputs[variant.reads], out)
            given = listing(out)  # inputs the variant makes for itself (edit --replace's .npy)
            _in_process(argv)
            made = sorted(set(listing(out)) - set(given))
            if made not in ([], [variant.output]):
                undeclared.append(f"{command} {variant.label}: {made} (declared {variant.output})")
    assert not undeclared, "writers without a declared output:\n" + "\n".join(undeclared)
    assert len(API_WRITERS) >= 5 and len(CLI_WRITERS) >= 15  # the contract covers them all
