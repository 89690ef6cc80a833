"""Fixtures of the interop tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.shared_build import built_once

if TYPE_CHECKING:
    from micro.peer import MicroPeer

REPO_ROOT = Path(__file__).resolve().parents[2]
# The interop tests import their helpers by short name (circle_builder, onert_peer, micro.*,
# as the scripts of this folder do when run alone): this folder on sys.path before any test
# module of it is imported, whichever file pytest is given (not only when the doctest import
# of micro/measure_size.py happened to put it there first).
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def micro_driver(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This project's onert-micro driver (tests/interop/micro/driver.cpp) linked with the real
    onert-micro training runtime, built once per session into a temporary folder from
    ``../shared/reference/onert-micro`` (or ``ONERT_MICRO_DIR``); skips with the reason where
    the sources, g++ or the flatbuffers headers are missing. ``ONERT_MICRO_DRIVER`` names a
    driver built before (from the same driver.cpp) instead."""
    from micro.peer import build_peer, find_sources, missing_prerequisite

    prebuilt = os.environ.get("ONERT_MICRO_DRIVER")
    if prebuilt:
        return Path(prebuilt)

    folder = find_sources(REPO_ROOT)
    reason = missing_prerequisite(folder)
    if reason is not None:
        pytest.skip(reason)
    assert folder is not None
    return built_once(
        pytestconfig, tmp_path_factory, "onert-micro-build", lambda out: build_peer(folder, out)
    )


@pytest.fixture
def micro(micro_driver: Path, tmp_path: Path) -> MicroPeer:
    """The driver working in this test's temporary folder."""
    from micro.peer import MicroPeer

    return MicroPeer(micro_driver, tmp_path)


@pytest.fixture(scope="session")
def micro_sources() -> Path:
    """The onert-micro folder (its real-files/ hold what the runtime wrote); skips without it."""
    from micro.peer import find_sources

    folder = find_sources(REPO_ROOT)
    if folder is None:
        pytest.skip("the onert-micro folder is missing (../shared/reference/onert-micro next "
                    "to the checkout, or ONERT_MICRO_DIR)")
    return folder
