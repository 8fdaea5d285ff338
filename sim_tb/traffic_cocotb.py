"""cocotb test that runs traffic in hardware: it only configures, waits and reads counters.

The design is the Verilog traffic harness (:mod:`twinnet.hdl.traffic`, top
``<network>_traffic``). The configuration (see :func:`twinnet.sim_tb.runner.run`) holds
``manifest``, ``results`` and, under ``tests.hardware_traffic.points``, the points to run one
after the other, each after a reset; :mod:`twinnet.sim_tb.traffic_phases` says what a point
holds and runs it.
"""

import json
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, Timer

from twinnet.gen.manifest import Manifest

from .runner import load_config
from .traffic_phases import (
    BROADCAST_COUNTERS,
    COUNTERS,
    Deadlock,
    HarnessDriver,
    TrafficError,
    run_point,
)

PERIOD_NS = 10


class CocotbHarness(HarnessDriver):
    """The Verilog harness driven through cocotb: the clock runs in the simulator (a GPI
    clock), so no Python runs between reads."""

    def __init__(self, dut, ports):
        """``ports``: the harness's port names (the manifest's ``traffic.ports``)."""
        self.dut = dut
        self.counters = COUNTERS + tuple(name for name in BROADCAST_COUNTERS if name in ports)

    def set(self, name: str, value: int) -> None:
        getattr(self.dut, name).value = value

    async def reset(self) -> None:
        self.dut.rst.value = 1
        await FallingEdge(self.dut.clk)
        await self.cycles(2)
        self.dut.rst.value = 0

    async def cycles(self, count: int) -> None:
        if count > 0:
            await Timer(count * PERIOD_NS, unit="ns")

    def read(self) -> dict:
        return {name: int(getattr(self.dut, name).value) for name in self.counters}

    def link_counts(self) -> int | None:
        if not hasattr(self.dut, "link_counts_0"):
            return None
        bus, at, k = 0, 0, 0
        while hasattr(self.dut, f"link_counts_{k}"):
            port = getattr(self.dut, f"link_counts_{k}")
            bus |= int(port.value) << at
            at, k = at + len(port), k + 1
        return bus


@cocotb.test()
async def hardware_traffic(dut):
    """Each point of ``tests.hardware_traffic.points`` in turn; results under ``points``."""
    config = load_config()
    manifest = Manifest.read(config["manifest"])
    points = config["tests"]["hardware_traffic"]["points"]
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start())
    harness = CocotbHarness(dut, {port["name"] for port in manifest.traffic.ports})
    results, failure = [], None
    try:
        for point in points:
            results.append({**await run_point(harness, point, manifest), "engine": "cocotb"})
            dut._log.info("point %s", json.dumps(results[-1]))
    except (Deadlock, TrafficError) as error:
        failure = {"failure": "deadlock" if isinstance(error, Deadlock) else "check",
                   "detail": str(error), "errors": 0 if isinstance(error, Deadlock) else 1}
        raise
    finally:
        path = Path(config["results"])
        path.write_text(json.dumps({"hardware_traffic": {"points": results, **(failure or {})}},
                                   indent=1))
