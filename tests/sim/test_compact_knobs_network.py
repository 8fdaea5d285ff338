"""The compact router's knobs (``--switch-inputs vc``, ``--hold packet``, both, and
``--allocator islip --iterations 2``) in generated Verilog on Verilator.

A single router under random traffic (the cocotb bench of
:mod:`twinnet.sim_tb.router_cocotb`: every packet once, intact, on the port and VC its header
named, in order per flow; malformed ones dropped and counted), and small networks through
``twinnet sim`` with its default check (every packet delivered exactly once, intact, in order
per pair, at the right PE; the watchdog stops a deadlock): a 4x3 torus with dateline VCs
(two VCs per link; with one VC per link, as under the bubble, or on 3x3 rings, the runs came
out the same cycle for cycle with and without the knobs), and a 4x4 king torus with 2S
adaptive routing and broadcast (an escape VC, an adaptive VC and the broadcast VC per link).

The default suite runs the torus with both knobs that change the datapath at once (10 to 20
seconds); the other cases, and the single routers (about 25 seconds each), are the slow
tier's. (The Amaranth tests of ``tests/hdl/test_compact_knobs.py`` tell each knob from the
default on scenarios written by hand.)
"""

import dataclasses
from itertools import product

import pytest
from test_router_cocotb import CONFIGS
from tiers import default_only
from variants import BUILD, sim_through_cli

from twinnet.hdl import verilog
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router
from twinnet.sim_tb import runner

#: name → (RouterConfig fields, command-line flags).
KNOBS = {
    "vcin": ({"switch_inputs": "vc"}, ["--switch-inputs", "vc"]),
    "hold": ({"hold": "packet"}, ["--hold", "packet"]),
    "vcin-hold": ({"switch_inputs": "vc", "hold": "packet"},
                  ["--switch-inputs", "vc", "--hold", "packet"]),
    "islip2": ({"allocator": "islip", "iterations": 2},
               ["--allocator", "islip", "--iterations", "2"]),
}

#: name → its flags.
NETWORKS = {
    "torus-4x3-vc": ["torus", "--radix", "4,3", "--mode", "vc"],
    "kt4-2s-b": ["king", "--kind", "KT", "--side", "4", "--routing", "2s", "--broadcast",
                 "--broadcast-fraction", "0.1"],
}
#: What each knob setting adds to a network's name.
SUFFIXES = {"vcin": "_vcin", "hold": "_hold", "vcin-hold": "_vcin_hold", "islip2": "_islip2"}


@pytest.mark.usefixtures("verilator")
@pytest.mark.slow
@pytest.mark.parametrize("knobs", KNOBS)
def test_router_random_traffic(knobs):
    """The 7-port router of mixed VC counts (1 to 4) and depths, as a compact router with
    the knobs, under random traffic with random back-pressure (20,000 cycles)."""
    config = dataclasses.replace(CONFIGS["r7-mixed-p2"], **KNOBS[knobs][0])
    router = Router(config, HeaderRouteCompute)
    settings = {"name": f"r7-mixed-p2-{knobs}", "router": config.to_dict(),
                "format": router.flit_format.describe(),
                "cycles": 20000, "seed": 1}
    tests, failures = runner.run(
        simulator="verilator", verilog=verilog.convert(router, name="router"),
        toplevel="router", test_module="twinnet.sim_tb.router_cocotb",
        build_dir=BUILD / f"router-r7-mixed-p2-{knobs}-verilator", config=settings,
        testcase=["random_traffic"], public=("clk", "rst", "in_*", "out_*", "drop_count"))
    assert (tests, failures) == (1, 0)


@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("network, knobs", default_only(
    product(NETWORKS, KNOBS), {("torus-4x3-vc", "vcin-hold")}))
def test_network_traffic_through_the_command_line(network, knobs, capsys):
    """``twinnet sim … --pipeline 2 <knobs>`` beyond saturation (0.2 packets of 4 flits per
    PE and cycle): it exits 0 (every check passed, no deadlock), and every packet created
    was delivered; with broadcast, every copy of every broadcast."""
    argv = ["sim", *NETWORKS[network], "--pipeline", "2", *KNOBS[knobs][1], "--rate", "0.2",
            "--packets", "1500", "--warmup", "300", "--out", str(BUILD / "knobs"), "--json"]
    data = sim_through_cli(argv, capsys)
    assert data["network"].endswith(f"_compact{SUFFIXES[knobs]}")
    results = data["results"]
    broadcasts = results.get("broadcasts_sent", 0)
    assert results["packets"] == results["created"] - broadcasts
    if "--broadcast" in argv:
        nodes = 16
        assert broadcasts > 0
        assert results["broadcast_copies_delivered"] == broadcasts * (nodes - 1)
