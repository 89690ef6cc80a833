"""Promises of the front-page README.md that no other test checked (docs/claims.md lists every
promise and the test that proves it).

* The command list of "Command line" is the command line's own, and every command's ``--help``
  has examples (tests/tools/test_cli.py checked a fixed list that lacked ``bake`` and ``edit``).
* The values written in the comments of the Python example are what the lines evaluate to
  (tests/project/test_readme.py only runs the block).
* "Python 3.10 or newer" is what the package declares.
* The tools the test-suite paragraph names are the ones ``.ci/run`` installs.
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PY_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_commands(text: str) -> list[str]:
    """The commands of the sentence "One tool, one command per task: ...", in its order."""
    match = re.search(r"one command per task:(.*?)\. Every command", text, re.DOTALL)
    assert match, "README.md no longer lists the commands"
    names = []
    for quoted in re.findall(r"`([^`]+)`", match.group(1)):
        if quoted.startswith("-"):
            continue  # an option, as `--layout`
        names += quoted.split("/")
    return names


def parser_commands() -> list[str]:
    from onert_checkpoint.tools.cli import build_parser

    parser = build_parser()
    return [name for action in parser._subparsers._group_actions for name in action.choices]


def test_the_readme_lists_the_commands_of_the_command_line() -> None:
    assert readme_commands(README.read_text()) == parser_commands()


def test_the_command_list_check_can_fail() -> None:
    text = README.read_text().replace("`new`, `bake`, ", "`new`, ")
    assert readme_commands(text) != parser_commands()


@pytest.mark.parametrize("command", parser_commands())
def test_every_command_has_help_with_examples(command: str) -> None:
    """README: "Every command has --help with examples"."""
    done = subprocess.run([sys.executable, "-m", "onert_checkpoint", command, "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "examples:" in done.stdout
    assert f"onert-ckpt {command} " in done.stdout.split("examples:", 1)[1]


def commented_values(code: str) -> list[tuple[int, str, str]]:
    """(line, expression, comment) of every expression statement of ``code`` whose trailing
    comment is a Python literal: the example's claim of what the expression gives."""
    comments = {tok.start[0]: tok.string[1:].strip()
                for tok in tokenize.generate_tokens(io.StringIO(code).readline)
                if tok.type == tokenize.COMMENT}
    out = []
    for stmt in ast.parse(code).body:
        comment = comments.get(stmt.end_lineno)
        if not isinstance(stmt, ast.Expr) or comment is None:
            continue
        try:
            ast.literal_eval(comment)
        except (ValueError, SyntaxError):
            continue
        out.append((stmt.lineno, ast.get_source_segment(code, stmt), comment))
    return out


def check_commented_values(code: str) -> int:
    """Run ``code`` statement by statement; assert each commented value; return how many."""
    namespace: dict = {}
    checked = 0
    wanted = {line: (expr, comment) for line, expr, comment in commented_values(code)}
    for stmt in ast.parse(code).body:
        if stmt.lineno in wanted:
            expr, comment = wanted[stmt.lineno]
            got = eval(compile(ast.Expression(stmt.value), "README.md", "eval"), namespace)
            assert got == ast.literal_eval(comment), f"README.md: {expr} is {got!r}, not {comment}"
            checked += 1
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), "README.md", "exec"), namespace)
    return checked


def test_the_values_in_the_python_examples_comments_are_what_it_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = PY_BLOCK.findall(README.read_text())
    assert blocks
    (tmp_path / "tests").mkdir()
    os.symlink(ROOT / "tests" / "data", tmp_path / "tests" / "data")
    monkeypatch.chdir(tmp_path)
    assert sum(check_commented_values(code) for code in blocks) >= 1


def test_a_wrong_value_in_a_comment_fails() -> None:
    code = "x = (3, 8)\nx, len(x)   # ((3, 8), 2)\nx[0]   # 4\nx   # not a literal\n"
    assert [c for _, _, c in commented_values(code)] == ["((3, 8), 2)", "4"]
    with pytest.raises(AssertionError, match=r"x\[0\] is 3, not 4"):
        check_commented_values(code)


def test_the_python_version_is_the_packages() -> None:
    """README: "Python 3.10 or newer"; pyproject.toml declares it, ruff checks the sources
    against it."""
    match = re.search(r"Python (3\.\d+) or newer", README.read_text())
    assert match, "README.md no longer states the Python version"
    version = match.group(1)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(rf'^requires-python = ">={re.escape(version)}"$', pyproject, re.MULTILINE)
    assert re.search(rf'^target-version = "py{version.replace(".", "")}"$', pyproject,
                     re.MULTILINE)


#: The suite's tools as README.md names them, and the Debian package .ci/run installs for each.
SUITE_TOOLS = {
    "Node.js 20": "nodejs", "npm": "npm", "Graphviz `dot`": "graphviz", "gcc": "gcc",
    "clang": "clang", "g++": "g++", "`libflatbuffers-dev`": "libflatbuffers-dev",
}


def ci_packages() -> set[str]:
    text = (ROOT / ".ci" / "run").read_text()
    return {p for group in re.findall(r"need\+=\(([^)]*)\)", text) for p in group.split()}


def test_ci_installs_every_tool_the_readme_names() -> None:
    """README: the suite needs Node.js 20 and npm, Graphviz dot, gcc, clang, g++ and
    libflatbuffers-dev, and ".ci/run installs all of them from Debian's packages"."""
    text = README.read_text()
    paragraph = text[text.index("What the suite needs"):text.index("## The format family")]
    for named, package in SUITE_TOOLS.items():
        assert named in paragraph, f"README.md no longer names {named}"
        assert package in ci_packages(), f".ci/run does not install {package} ({named})"
    assert "apt-get install" in (ROOT / ".ci" / "run").read_text()


def _find_sources():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "readme_micro_peer", ROOT / "tests" / "interop" / "micro" / "peer.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.find_sources


def test_the_onert_micro_folder_is_found_where_the_readme_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """README: the onert-micro peer is built from ``../shared/reference/onert-micro`` beside
    the checkout, or ``ONERT_MICRO_DIR``."""
    find_sources = _find_sources()
    repo = tmp_path / "checkout"
    repo.mkdir()
    beside = tmp_path / "shared" / "reference" / "onert-micro"
    named = tmp_path / "elsewhere"
    for folder in (beside, named):
        (folder / "src" / "onert-micro" / "onert-micro" / "src").mkdir(parents=True)
    monkeypatch.delenv("ONERT_MICRO_DIR", raising=False)
    assert find_sources(repo) == beside.resolve()
    monkeypatch.setenv("ONERT_MICRO_DIR", str(named))
    assert find_sources(repo) == named.resolve()
    monkeypatch.setenv("ONERT_MICRO_DIR", str(tmp_path / "missing"))
    assert find_sources(repo) is None


def layout_paths(text: str) -> list[str]:
    """The paths of the first column of the "Repository layout" table."""
    section = text.split("## Repository layout", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.MULTILINE)


def test_the_repository_layout_names_folders_that_exist() -> None:
    paths = layout_paths(README.read_text())
    assert len(paths) >= 5
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == [], f"README.md's layout table names missing paths: {missing}"
    for folder in ("tests/data/", "tests/corpus/", "tests/fuzz/", "tests/interop/",
                   "tests/bench/", "spec/c/"):
        assert (ROOT / folder).is_dir(), folder


def _quick_start() -> tuple[str, str]:
    """The command and output of the README's first transcript (after ``pip install .``)."""
    from tests.project.test_readme import sessions

    command, output = sessions()[0]
    assert command.startswith("onert-ckpt info ")
    return command, output


def _build_requires() -> str:
    match = re.search(r"^requires = \[(.*)\]$", (ROOT / "pyproject.toml").read_text(),
                      re.MULTILINE)
    assert match, "pyproject.toml has no [build-system] requires"
    return match.group(1)


#: What pip prints when the isolated build environment cannot be installed because no index
#: serves the build requirements (as opposed to a build that fails on the sources).
#: A reachable index that lacks a satisfying version ("from versions: 0.6b1, ...") is a real
#: failure: the build requirement is wrong.
_NO_BUILD_REQUIREMENTS = re.compile(
    r"install build dependencies.*(\(from versions: none\)|Failed to establish a new "
    r"connection|Network is unreachable|Temporary failure in name resolution)",
    re.IGNORECASE | re.DOTALL)


def _build_requirements_unavailable(output: str) -> bool:
    return _NO_BUILD_REQUIREMENTS.search(output) is not None


def test_a_build_that_fails_on_the_sources_is_not_skipped() -> None:
    """The skip above is for an unreachable index only: a setup error still fails the test."""
    pip_says = ("error: subprocess-exited-with-error\n  x pip subprocess to install build "
                "dependencies did not run successfully.\n  ERROR: Could not find a version "
                "that satisfies the requirement setuptools>=68 (from versions: {})")
    assert _build_requirements_unavailable(pip_says.format("none"))
    assert not _build_requirements_unavailable(pip_says.format("67.8.0, 68.0.0"))
    assert not _build_requirements_unavailable("error: invalid command 'bdist_wheel'")


def test_pip_install_dot_gives_the_quick_start(tmp_path: Path) -> None:
    """README, "Install and try it": ``pip install .`` then ``onert-ckpt info ...`` prints the
    transcript. The suite itself runs from an editable install, which finds every module in
    src/ whatever pyproject.toml lists; a plain install holds only the listed packages. So:
    build the wheel from a copy of the sources as a user's pip does (in an isolated build
    environment holding pyproject.toml's build requirements), install it into a folder, and run
    the transcript's command from that copy alone. Where the build requirements cannot be
    fetched (no index reachable), the test skips and says so."""
    import importlib.util
    import shlex
    import shutil

    if importlib.util.find_spec("pip") is None:
        pytest.skip("pip is needed to build the wheel")
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=ignore)
    shutil.copytree(ROOT / "generated" / "python", source / "generated" / "python", ignore=ignore)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = subprocess.run([*pip, "wheel", "--no-deps", "-w", str(tmp_path / "wheel"),
                            str(source)], capture_output=True, text=True, timeout=600)
    if built.returncode != 0 and _build_requirements_unavailable(built.stdout + built.stderr):
        pytest.skip("pip cannot fetch the build requirements of pyproject.toml "
                    f"({_build_requires()}): no package index is reachable")
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    site = tmp_path / "site"
    done = subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    command, output = _quick_start()
    run = tmp_path / "run"
    (run / "tests").mkdir(parents=True)
    os.symlink(ROOT / "tests" / "data", run / "tests" / "data")
    program = (
        "import sys; sys.path.insert(0, sys.argv[1]); import onert_checkpoint as oc\n"
        "assert oc.__file__.startswith(sys.argv[1]), oc.__file__\n"
        "from onert_checkpoint.tools.cli import main; raise SystemExit(main(sys.argv[2:]))\n"
    )
    res = subprocess.run([sys.executable, "-c", program, str(site),
                          *shlex.split(command)[1:]], cwd=run, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout + res.stderr == output
