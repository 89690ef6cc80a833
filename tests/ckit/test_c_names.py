"""The C kit's names and numbers: revisions numbered by their version byte,
one ordered list of result codes (errors negative, normal events positive, as zlib's), and a
version macro equal to the package's version.

A small program built against spec/c/ prints the constants and reads real files (conformance
vectors) with ockpt_read(): what it says must match the files' version bytes and the tables.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.ckit.c_programs import build_probe

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "spec" / "c"
VECTORS = ROOT / "spec" / "vectors"

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "ockpt.h"
#include "ockpt_write.h"

int main(int argc, char **argv) {
  int i;
  printf("{\"version\": \"%s\", \"vernum\": %d, ", OCKPT_VERSION, OCKPT_VERNUM);
  printf("\"rev\": [%d, %d, %d, %d], ", OCKPT_REV_NONE, OCKPT_REV_V1, OCKPT_REV_V2, OCKPT_REV_V3);
  printf("\"target\": [%d, %d, %d, %d], ", OCKPT_W_V1, OCKPT_W_V2, OCKPT_W_V3, OCKPT_W_WOF);
  printf("\"deferred\": [%d, \"%s\"], ", OCKPT_DEFERRED, ockpt_error_name(OCKPT_DEFERRED));
  printf("\"files\": [");
  for (i = 1; i < argc; i++) {
    static unsigned char buf[1 << 20];
    FILE *fp = fopen(argv[i], "rb");
    size_t n = fp ? fread(buf, 1, sizeof buf, fp) : 0;
    ockpt_file f;
    ockpt_result r;
    if (fp) fclose(fp);
    r = ockpt_read(buf, n, &f);
    printf("%s[%d, %d, %d, \"%s\"]", i > 1 ? ", " : "", (int)r.code, (int)f.revision,
           (int)f.format, ockpt_error_name(r.code));
  }
  printf("]}\n");
  return 0;
}
"""


@pytest.fixture(scope="module")
def names_exe(tmp_path_factory) -> Path:
    return build_probe(tmp_path_factory.mktemp("names"), "names", PROGRAM)


def run(exe: Path, *files: Path) -> dict:
    return json.loads(subprocess.run([str(exe), *map(str, files)], capture_output=True,
                                     text=True, check=True).stdout)


def test_version_macro_is_the_package_version(names_exe):
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    got = run(names_exe)
    assert got["version"] == version
    major, minor, patch = (int(x) for x in version.split("."))
    assert got["vernum"] == major << 16 | minor << 8 | patch


def test_revision_numbers_are_version_bytes(names_exe):
    """Every valid vector of each revision reads with f.revision equal to its byte 2, and
    f.format tells a version-1 checkpoint from WOF."""
    got = run(names_exe)
    assert got["rev"] == [0, 1, 2, 3]
    assert got["target"][:3] == [1, 2, 3] and got["target"][3] & 0x7F == 1
    files = sorted(p for p in VECTORS.glob("*.ckpt") if not p.name.startswith("invalid-"))
    assert len(files) > 100
    seen = set()
    for path, (code, revision, fmt, _) in zip(files, run(names_exe, *files)["files"]):
        data = path.read_bytes()
        if code != 0:  # a valid vector that needs its model (model_mismatch cases) or such
            continue
        want_fmt = 1 if path.name.startswith("wof") else 0
        assert (revision, fmt) == (data[2], want_fmt), path.name
        seen.add((revision, fmt))
    assert seen == {(1, 0), (1, 1), (2, 0), (3, 0)}


def test_result_codes_are_one_ordered_list(names_exe):
    """OCKPT_OK 0, OCKPT_DEFERRED positive, every error of error-codes.toml at -number, and an
    invalid vector's code negative with its name."""
    got = run(names_exe)
    assert got["deferred"][0] > 0 and got["deferred"][1] == "deferred"
    header = (C_DIR / "ockpt_errors.h").read_text()
    table = tomllib.loads((ROOT / "spec" / "error-codes.toml").read_text())["error"]
    values = {name: int(v) for name, v in re.findall(r"^\s+(OCKPT_\w+) = (-?\d+),", header, re.M)}
    assert values.pop("OCKPT_OK") == 0 and values.pop("OCKPT_DEFERRED") > 0
    assert values == {f"OCKPT_E_{e['code'].upper()}": -e["number"] for e in table}
    bad = VECTORS / "invalid-bad-magic-swapped.ckpt"
    code, revision, _, name = run(names_exe, bad)["files"][0]
    assert code < 0 and name == "bad_magic" and revision == 0
