"""Ejection lanes (``--ejection-lanes``) in generated networks on Verilator, through
``twinnet sim`` and its default check: every packet delivered exactly once, intact, at the
right PE, in order per pair where the routing keeps one path per pair (the merger passes a
PE's packets in the order they reached its lanes), and the watchdog stops a deadlock.

The default suite runs the 4x4 bubble torus with three lanes beyond saturation; the fat tree
and the king torus under 2S are the slow tier's. (``tests/hdl/test_ejection.py`` holds the
merger against its model; ``tests/sim/test_router_cocotb.py`` a lone router with lanes under
random traffic.)
"""

import pytest
from tiers import marked
from variants import BUILD, sim_through_cli

#: name → (flags, lanes).
NETWORKS = {
    "torus-4x4": (["torus", "--radix", "4,4"], 3),
    "ft-4x2": (["fat-tree", "--k", "4", "--n", "2"], 2),
    "kt4-2s": (["king", "--kind", "KT", "--side", "4", "--routing", "2s", "--pe-ports", "2"], 4),
}


@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("network", marked(list(NETWORKS), {"ft-4x2", "kt4-2s"}))
def test_every_packet_once_and_in_order_with_ejection_lanes(network, capsys):
    """Beyond saturation (0.2 packets of 4 flits per PE and cycle), with PEs that take a flit
    in half the cycles, so that the lanes fill and the merger waits: the harness's checks
    (once, intact, right PE, in order per pair where the family keeps it) found nothing."""
    flags, lanes = NETWORKS[network]
    argv = ["sim", *flags, "--ejection-lanes", str(lanes), "--rate", "0.2", "--packets", "3000",
            "--warmup", "300", "--eject-ready", "0.5", "--out", str(BUILD / "ejection-lanes"),
            "--json"]
    data = sim_through_cli(argv, capsys)
    assert data["network"].endswith(f"_ej{lanes}")
    assert data["results"]["packets"] == data["results"]["created"]
