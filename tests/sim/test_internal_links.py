"""The packets the RTL carries on each twin node's internal link under all-pairs, counted by
the link counters in the gateware (and checked against the C++ traffic program's own count),
equal a brute-force count written from 003's DOR (``tests/twin_crossings.py``, not the model),
on every link, exactly.

3DT 3x3x3 in configuration D is checked in the default suite by
``test_traffic_network.py::test_3dt_under_saturation_on_verilator`` (on its own build); the
cases here, each on a build of its own, are the slow tier.
"""

import pytest
from twin_crossings import crossings, measured_internal_packets, packets_per_link
from variants import BUILD, PIPELINE

from twinnet.model.twin_network import TwinNetworkConfig
from twinnet.sim_tb import network_sim

#: k = 3 A (every dimension split) and H (X split, Z on card 0's side), k = 4 D and E (even
#: k: the tie goes +, and the two directions of a link carry different loads).
CASES = [(3, "A"), (3, "H"), (4, "D"), (4, "E")]


@pytest.mark.slow
@pytest.mark.parametrize("k, configuration", CASES)
def test_internal_link_packets_equal_the_brute_force_count(k, configuration, verilator):
    """3DT k x k x k, bubble mode, on the C++ program: every PE sends one packet to every
    other, and each direction of each node's internal link carries the packets the brute
    force walks across it (at the source node, in transit, at the destination node, and
    between the node's two PEs)."""
    network = TwinNetworkConfig.from_dict({"radices": [k, k, k], "configuration": configuration,
                                      "mode": "bubble", "pipeline": PIPELINE})
    pes = network.topology.pe_count
    assert pes == 2 * k**3  # one PE per card, as the brute force walks
    case = f"internal-links-3dt-k{k}-{configuration}"
    point = {"pattern": "all-pairs", "rate": 1 / 32, "warmup": 0, "measure": (pes - 1) * 32,
             "count_links": True}
    results = network_sim.simulate(
        network, verilator, BUILD / f"{case}-verilator",
        {network_sim.TRAFFIC_TEST: {"points": [point], "engine": "program"}},
        run_dir=BUILD / "internal-links-runs" / f"3dt-k{k}-{configuration}")
    (result,) = results[network_sim.TRAFFIC_TEST]["points"]
    assert result["packets"] == pes * (pes - 1)
    measured = measured_internal_packets(result["link_loads"])
    expected = packets_per_link(crossings(k, configuration))
    assert measured == expected
