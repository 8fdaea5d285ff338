"""cocotb tests of the generated router Verilog on Icarus and Verilator.

Each (configuration, simulator) case builds once in its own directory under ``build/sim`` and
runs the cocotb tests of :mod:`twinnet.sim_tb.router_cocotb`; the configuration reaches the
cocotb module as JSON, so the scoreboard uses the same parameters as the hardware.
"""

import dataclasses
import os
from itertools import product
from pathlib import Path

import pytest
from tiers import marked

from twinnet.hdl import verilog
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router
from twinnet.sim_tb import runner

BUILD = Path(__file__).resolve().parents[2] / "build" / "sim"

CONFIGS = {
    # The 5-port router of 003 §7.1: four ring links (bubble-capable: 2 packets of buffer per VC),
    # one PE port, 2 VCs everywhere.
    "r5-vc2": RouterConfig(
        flit_width=32, max_packet_length=4, source_width=3,
        ports=(*[PortConfig("network", vc_count=2, buffer_depth=8, bubble=True)] * 4,
               PortConfig("pe", vc_count=2, buffer_depth=8))),
    # 7 ports with unequal VC counts and depths, two PE ports, 3-flit packets.
    "r7-mixed": RouterConfig(
        flit_width=32, max_packet_length=3, source_width=3,
        ports=(PortConfig("network", vc_count=1, buffer_depth=6, bubble=True),
               PortConfig("network", vc_count=2, buffer_depth=4),
               PortConfig("network", vc_count=3, buffer_depth=5),
               PortConfig("internal", vc_count=4, buffer_depth=3),
               PortConfig("internal", vc_count=3, buffer_depth=7, bubble=True),
               PortConfig("pe", vc_count=1, buffer_depth=3),
               PortConfig("pe", vc_count=2, buffer_depth=5))),
}

# The same designs as compact routers (pipeline 2), and as split routers with ejection lanes
# (three per PE port of r5-vc2, two per PE port of r7-mixed).
CONFIGS.update({f"{name}-p2": dataclasses.replace(config, pipeline=2)
                for name, config in list(CONFIGS.items())})
CONFIGS.update({"r5-vc2-ej3": dataclasses.replace(CONFIGS["r5-vc2"], ejection_lanes=3),
                "r7-mixed-ej2": dataclasses.replace(CONFIGS["r7-mixed"], ejection_lanes=2)})
# And as split routers without their bypass (a head arriving on a link allocated a cycle
# after its write, from its route queue).
CONFIGS.update({f"{name}-nobypass": dataclasses.replace(CONFIGS[name], bypass=False)
                for name in ("r5-vc2", "r7-mixed")})

# The admission, fairness and throughput tests need one design; random traffic runs on both.
TESTS = {
    "r5-vc2": ["random_traffic", "bubble_admission", "fairness", "throughput"],
    "r7-mixed": ["random_traffic"],
}
TESTS.update({f"{name}-p2": tests for name, tests in list(TESTS.items())})
TESTS.update({name: ["random_traffic"] for name in ("r5-vc2-ej3", "r7-mixed-ej2",
                                                     "r5-vc2-nobypass", "r7-mixed-nobypass")})


#: The default suite runs r5-vc2 on Icarus, and on Verilator r7-mixed and r5-vc2 on the
#: compact router and without the bypass; the slow tier the rest (ejection lanes run in a network
#: in tests/sim/test_ejection_lanes_network.py).
SLOW = {(name, "icarus") for name in CONFIGS
        if name.endswith(("-p2", "-ej3", "-ej2", "-nobypass"))}
SLOW |= {("r7-mixed", "icarus"), ("r5-vc2", "verilator")}
SLOW |= {(name, "verilator") for name in ("r7-mixed-ej2", "r7-mixed-p2", "r7-mixed-nobypass",
                                         "r5-vc2-ej3")}


@pytest.mark.parametrize("name, simulator",
                         marked(list(product(sorted(CONFIGS), runner.SIMULATORS)), SLOW),
                         indirect=["simulator"])
def test_router_cocotb(name, simulator):
    config = CONFIGS[name]
    router = Router(config, HeaderRouteCompute)
    settings = {
        "name": name,
        "router": config.to_dict(),
        "format": router.flit_format.describe(),
        "cycles": int(os.environ.get("TWINNET_TB_CYCLES", 20000)),
        "fairness_grants": 2000,
        "seed": 1,
    }
    tests, failures = runner.run(
        simulator=simulator, verilog=verilog.convert(router, name="router"), toplevel="router",
        test_module="twinnet.sim_tb.router_cocotb", build_dir=BUILD / f"router-{name}-{simulator}",
        config=settings, testcase=TESTS[name],
        public=("clk", "rst", "in_*", "out_*", "drop_count"))
    assert (tests, failures) == (len(TESTS[name]), 0)
