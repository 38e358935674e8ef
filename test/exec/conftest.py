"""The `corpus` mark (test/corpus_plugin.py)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from corpus_plugin import pytest_configure, pytest_runtest_setup  # noqa: E402,F401
