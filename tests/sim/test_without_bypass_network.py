"""Networks of split routers without their bypass (``--no-bypass``: a head arriving on a
link is allocated a cycle after its write, from its route queue, as a packet waiting behind
another is; the presets' routers) in generated Verilog on Verilator. Every other network
test runs the split router with its bypass, its default.

Small networks through ``twinnet sim`` with its default check (every packet delivered
exactly once, intact, in order per pair, at the right PE; the watchdog stops a deadlock)
beyond saturation: a 4x3 torus with dateline VCs (with packets of 4 flits, and of one) and
a 4x2 twisted torus, and, in the slow tier, a 3x3x3 twin torus under the bubble (its cards'
internal links bypass too), a 2-ary 3-tree of twin switches and a 4x4 king torus with 2S
adaptive routing and broadcast. (The Amaranth test ``tests/hdl/test_router.py`` checks the
3 cycles per link hop without the bypass and 2 with it, and
``tests/sim/test_router_cocotb.py`` single routers without it under random traffic.)
"""

import pytest
from tiers import marked
from variants import BUILD, sim_through_cli

#: name → its flags, the offered load among them (beyond saturation).
NETWORKS = {
    "torus-4x3-vc": ["torus", "--radix", "4,3", "--mode", "vc", "--rate", "0.2"],
    # Packets of one flit: a route allocated as its head arrives never enters its queue.
    "torus-4x3-vc-l1": ["torus", "--radix", "4,3", "--mode", "vc", "--max-packet-length", "1",
                        "--rate", "0.8"],
    "ndt3-k3-D-bubble": ["twin-torus", "--radix", "3,3,3", "--config", "D",
                         "--mode", "bubble", "--rate", "0.2"],
    # Twin switches: the up and down links and the internal link between halves.
    "ft-2x3": ["fat-tree", "--k", "2", "--n", "3", "--rate", "0.2"],
    "twisted-4x2": ["twisted", "--radix", "4,2", "--twist", "YX=2", "--rate", "0.2"],
    "kt4-2s-b": ["king", "--kind", "KT", "--side", "4", "--routing", "2s", "--broadcast",
                 "--broadcast-fraction", "0.1", "--rate", "0.2"],
}


@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("network", marked(NETWORKS, {"ndt3-k3-D-bubble", "ft-2x3",
                                                    "kt4-2s-b"}))
def test_network_traffic_through_the_command_line(network, capsys):
    """``twinnet sim … --no-bypass`` beyond saturation (0.2 packets of 4 flits, or 0.8 of one
    flit, per PE and cycle): it exits 0 (every check passed, no deadlock), and every packet
    created was delivered; with broadcast, every copy of every broadcast."""
    argv = ["sim", *NETWORKS[network], "--no-bypass", "--packets", "1500",
            "--warmup", "300", "--out", str(BUILD / "nobypass"), "--json"]
    data = sim_through_cli(argv, capsys)
    assert data["network"].endswith("_nobypass")
    results = data["results"]
    broadcasts = results.get("broadcasts_sent", 0)
    assert results["packets"] == results["created"] - broadcasts
    if "--broadcast" in argv:
        assert broadcasts > 0
        assert results["broadcast_copies_delivered"] == broadcasts * 15
