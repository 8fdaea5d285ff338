"""The slow tier: tests marked ``slow`` run only with ``TWINNET_SLOW_TESTS=1``
(:mod:`tiers`)."""

import pytest
from tiers import SLOW_ENV, slow_tier


def pytest_configure(config):
    config.addinivalue_line("markers", f"slow: a slow case, run only with {SLOW_ENV}=1")


def pytest_collection_modifyitems(config, items):
    if slow_tier():
        return
    skip = pytest.mark.skip(reason=f"slow case: set {SLOW_ENV}=1 to run it")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)
