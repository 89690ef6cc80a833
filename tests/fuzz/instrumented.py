"""Import the package under atheris' instrumentation, every module of it.

``import onert_checkpoint`` imports none of its parts (the package's ``__init__`` is lazy, for
start-up time), so instrumenting only that import leaves every module the fuzz targets run
uninstrumented: libFuzzer then sees 2 edges and mutates blind. This walks the packages and
imports each module inside the instrumentation block.
"""

from __future__ import annotations

import importlib
import pkgutil

import atheris

#: Modules not imported here: they import an optional heavy dependency at the top.
SKIP = ("onert_checkpoint.interchange.torch_bridge",)


def import_instrumented() -> list[str]:
    """Import (instrumented) every module of onert_checkpoint and its generated parsers;
    returns their names."""
    names: list[str] = []
    with atheris.instrument_imports(include=["onert_checkpoint", "onert_checkpoint_generated",
                                             "kaitaistruct", "construct"]):
        for top in ("onert_checkpoint", "onert_checkpoint_generated"):
            package = importlib.import_module(top)
            names.append(top)
            for info in pkgutil.walk_packages(package.__path__, f"{top}."):
                if info.name in SKIP or info.name.endswith("__main__"):
                    continue
                importlib.import_module(info.name)
                names.append(info.name)
    return names
