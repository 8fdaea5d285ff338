"""The slow tier of the suite: tests and cases marked ``slow`` run only with
``TWINNET_SLOW_TESTS=1`` (see ``conftest.py``); some tests also run longer in it."""

import os

import pytest

SLOW_ENV = "TWINNET_SLOW_TESTS"


def slow_tier() -> bool:
    """Whether this run includes the slow tier."""
    return bool(os.environ.get(SLOW_ENV))


def marked(cases, slow) -> list:
    """``cases`` for ``pytest.mark.parametrize``, those in ``slow`` marked ``slow`` (a case is
    a tuple of the parameters, or one value for a single parameter)."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)),
                         marks=pytest.mark.slow) if case in slow else case for case in cases]


def default_only(cases, default) -> list:
    """``cases`` for ``pytest.mark.parametrize``, all but those in ``default`` marked ``slow``."""
    cases = list(cases)
    return marked(cases, set(cases) - set(default))
