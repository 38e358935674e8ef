"""The `corpus` mark for pytest files: a test so marked reads the real torch-spyre corpus (OPCHECK_FIXTURES, default
../shared/fixtures) and is skipped with the reason when it is absent, or fails when OPCHECK_REQUIRE_CORPUS=1 says it
must be there (CI). ctest runs a file's corpus tests as their own test, NAME_corpus (test/CMakeLists.txt). A
conftest.py imports the two hooks below."""
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("OPCHECK_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[1]))
FIXTURES = pathlib.Path(os.environ.get("OPCHECK_FIXTURES", SOURCE_DIR.parent / "shared" / "fixtures"))


def pytest_configure(config):
    config.addinivalue_line("markers", "corpus: reads the real torch-spyre corpus (OPCHECK_FIXTURES); skipped without it")


def pytest_runtest_setup(item):
    if item.get_closest_marker("corpus") and not FIXTURES.is_dir():
        if os.environ.get("OPCHECK_REQUIRE_CORPUS") == "1":
            pytest.fail(f"no torch-spyre corpus at {FIXTURES}, and OPCHECK_REQUIRE_CORPUS=1 says it must be there",
                        pytrace=False)
        pytest.skip(f"no torch-spyre corpus at {FIXTURES}. Fix: set OPCHECK_FIXTURES=DIR to run it")
