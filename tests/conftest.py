"""The slow tier: tests marked ``slow`` run only with ``TWINNET_SLOW_TESTS=1``."""

import os

import pytest

SLOW_ENV = "TWINNET_SLOW_TESTS"


def pytest_configure(config):
    config.addinivalue_line("markers", f"slow: a slow case, run only with {SLOW_ENV}=1")


def pytest_collection_modifyitems(config, items):
    if os.environ.get(SLOW_ENV):
        return
    skip = pytest.mark.skip(reason=f"slow case: set {SLOW_ENV}=1 to run it")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)
