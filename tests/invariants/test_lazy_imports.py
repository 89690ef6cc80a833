"""Start-up time: ``import onert_checkpoint`` imports none of its parts, reading a
schema-1 file imports neither schema 2, Construct nor the crc32c package's metadata lookup,
and every public name still resolves. Checked in fresh interpreters (real subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"


def modules_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_every_public_name_resolves():
    for name in oc.__all__:
        assert getattr(oc, name) is not None, name
    assert set(oc.__all__) <= set(dir(oc))


def test_import_of_the_package_imports_none_of_its_parts():
    loaded = modules_after("import onert_checkpoint")
    assert [m for m in loaded if m.startswith("onert_checkpoint.")] == []
    assert "numpy" not in loaded


def test_reading_a_schema_1_file_imports_only_what_it_needs():
    path = DATA / "fc2-adam-step8.ckpt"
    loaded = modules_after(f"import onert_checkpoint as oc\nc = oc.load({str(path)!r})\nc[0].data")
    assert "onert_checkpoint.format.revisions.v1.reader" in loaded
    assert [m for m in loaded if m.startswith(_SCHEMA_2_CODE)] == []
    for heavy in ("construct", "importlib.metadata"):
        assert heavy not in loaded, heavy


#: The codecs of schemas 2 and 3 and their container (a revision package itself is its record).
_SCHEMA_2_CODE = tuple(f"onert_checkpoint.format.{p}" for p in
                       ("revisions.v2.", "revisions.v3.", "container"))


def test_the_revision_records_import_none_of_their_codecs():
    """Each revision package holds only its record (and names its layout class): the registry
    of every revision imports no reader or writer, nor NumPy."""
    loaded = modules_after("from onert_checkpoint.format.revisions import registry")
    revisions = "onert_checkpoint.format.revisions"
    assert "numpy" not in loaded
    assert sorted(m for m in loaded if m.startswith("onert_checkpoint")) == [
        "onert_checkpoint", "onert_checkpoint.format", "onert_checkpoint.format.layout", revisions,
        *(f"{revisions}.{m}" for m in ("record", "registry", "v1", "v2", "v3", "wof"))]


def test_reading_a_schema_2_file_does_not_import_construct():
    v2 = oc.to_bytes(oc.upgrade(oc.load(DATA / "fc2-adam-step8.ckpt"), to="v2"))
    loaded = modules_after(f"import onert_checkpoint as oc\nc = oc.load({v2!r})\nc.verify()")
    assert "onert_checkpoint.format.revisions.v2.reader" in loaded
    assert "construct" not in loaded and "importlib.metadata" not in loaded


def test_the_lazy_table_is_what_type_checkers_are_shown():
    """Each public name is looked up (``_LAZY``) in the module that the ``TYPE_CHECKING``
    imports give type checkers, and ``__all__`` lists exactly those names."""
    import ast

    source = Path(oc.__file__).read_text()
    imported = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            imported.update({alias.name: f".{node.module}" for alias in node.names})
    assert imported == oc._LAZY
    assert sorted(oc.__all__) == sorted([*imported, "__version__"])
