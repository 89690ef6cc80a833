"""The Python examples of the user guide run, in order, and their assertions hold (so the docs
cannot drift from the library). Each ```python block of docs/guide.md runs in one namespace,
in a temporary folder whose tests/data is the repository's."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "guide.md", ROOT / "docs" / "index.md",
         ROOT / "docs" / "schema-3.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_blocks_run(page: Path, tmp_path: Path, monkeypatch) -> None:
    blocks = BLOCK.findall(page.read_text())
    assert blocks, f"{page.name} has no Python example"
    (tmp_path / "tests").mkdir()
    os.symlink(ROOT / "tests" / "data", tmp_path / "tests" / "data")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for k, code in enumerate(blocks):
        try:
            exec(compile(code, f"{page.name}[block {k}]", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"{page.name}, block {k}:\n{code}") from exc
