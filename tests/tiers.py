"""The slow tier of the suite: tests and cases marked ``slow`` run only with ``--slow`` or
``TWINNET_SLOW_TESTS=1`` (see ``conftest.py``). A test whose work grows in the slow tier takes the
``slow_tier`` fixture; no test reads the switch itself."""

import os

import pytest

SLOW_ENV = "TWINNET_SLOW_TESTS"
SLOW_OPTION = "--slow"


def slow_tier_on(config: pytest.Config) -> bool:
    """Whether this run includes the slow tier: ``--slow`` given or ``TWINNET_SLOW_TESTS`` set
    (to anything but the empty string)."""
    return bool(config.getoption(SLOW_OPTION) or os.environ.get(SLOW_ENV))


def marked(cases, slow) -> list:
    """``cases`` for ``pytest.mark.parametrize``, those in ``slow`` marked ``slow`` (a case is
    a tuple of the parameters, or one value for a single parameter)."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)),
                         marks=pytest.mark.slow) if case in slow else case for case in cases]


def default_only(cases, default) -> list:
    """``cases`` for ``pytest.mark.parametrize``, all but those in ``default`` marked ``slow``."""
    cases = list(cases)
    return marked(cases, set(cases) - set(default))
