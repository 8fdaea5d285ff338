"""Bimodal packets on every family's default network, through ``twinnet sim`` as a user runs
it: ``--packet-lengths 1,5 --packet-length-weights 1,1`` (BookSim's ``packet_size = {{1,5}};
packet_size_rate = {{1,1}}``) makes routers for packets of up to 5 flits, the C++ program on
Verilator offers them, and the hardware sinks check every packet (delivered once, intact, to
its PE, in order per pair). The lengths injected are the mix's: each share within 3 standard
deviations of a half (binomial over the packets sent).

The default networks are large (the 3DT 4 x 4 x 4, the king torus 8 x 8, ...): the slow tier.
Every family also carries length mixes in the default suite, on small networks (the
every-hop tests of each family, the ring's sweep).
"""

import pytest
from variants import BUILD, sim_through_cli

#: twinnet's families, each with its default network.
FAMILIES = ("twin-torus", "torus", "fat-tree", "king", "twisted")


@pytest.mark.slow
@pytest.mark.usefixtures("verilator")
@pytest.mark.parametrize("family", FAMILIES)
def test_bimodal_packets_on_the_default_network(family, capsys):
    data = sim_through_cli(["sim", family, "--packet-lengths", "1,5",
                            "--packet-length-weights", "1,1", "--out",
                            str(BUILD / "length-mixes"), "--json"], capsys)
    assert data["parameters"]["max_packet_length"] == 5
    results = data["results"]
    lengths = {int(length): count for length, count in results["injected_lengths"].items()}
    assert set(lengths) == {1, 5}, lengths
    total = sum(lengths.values())
    assert total >= results["packets"] > 1000
    assert abs(lengths[1] / total - 0.5) <= 3 * (0.25 / total) ** 0.5, lengths
