"""What the default suite's short soaks and deadlock reports must show (one definition for
every family's network tests).

A short soak is one point of traffic in hardware on the fast engine, offered beyond
saturation to PEs that push back (they take a flit with probability 0.3 and stop for bursts
of up to 32 cycles), long enough for :data:`SOAK_PACKETS` packets: every packet arrives once,
intact, at the right PE, in order per pair under deterministic routing (the sinks' counters,
checked by the point itself), and the PEs did refuse flits.
"""

import re

#: Packets a family's short soak delivers at least.
SOAK_PACKETS = 20_000
#: The watchdog's one line on the fast engine (:class:`twinnet.sim_tb.traffic_phases.Watchdog`).
DEADLOCK_REPORT = re.compile(
    r"nothing moved for (\d+) cycles with (\d+) packets in flight and (\d+) queued at their "
    r"sources \(cycle (\d+)\); (\d+) routers hold (\d+) flits: \S")


def soak_point(rate: float, cycles: int) -> dict:
    """A short soak: uniform traffic at ``rate`` packets per PE per cycle for ``cycles``."""
    return {"pattern": "uniform", "rate": rate, "warmup": 0, "measure": cycles,
            "drain_limit": 0, "eject_ready": 0.3, "stall_bursts": 32}


def assert_soaked(point: dict) -> None:
    assert point["packets"] == point["created"] >= SOAK_PACKETS, point["packets"]
    assert not point["errors"]
    assert point["refused"] > point["packets"]  # the PEs pushed back, often


def assert_deadlock_report(summary: str) -> None:
    """One line naming the cycle, the packets in flight and the routers that hold flits."""
    assert "\n" not in summary
    found = DEADLOCK_REPORT.search(summary)
    assert found, summary
    idle, in_flight, _, _, routers, flits = map(int, found.groups())
    assert idle >= 1000 and routers > 0 and flits > 0
