"""The dm_control suite's model files for the corpus tests: fetched once into the pytest
cache (tests/corpus/dm_control_suite.py). Without them the tests skip, but fail when
CI=true."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.corpus.dm_control_suite import SuiteUnavailable, suite_folder


@pytest.fixture(scope="session")
def dm_control_suite(request: pytest.FixtureRequest) -> Path:
    try:
        return suite_folder(Path(request.config.cache.mkdir("dm_control")))
    except (SuiteUnavailable, OSError) as exc:
        message = f"the dm_control suite's model files could not be had: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
