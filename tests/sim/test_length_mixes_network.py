"""Bimodal packets on every family's default network, through ``twinnet sim`` as a user runs
it: ``--packet-lengths 1,5 --packet-length-weights 1,1`` (BookSim's ``packet_size = {{1,5}};
packet_size_rate = {{1,1}}``) makes routers for packets of up to 5 flits, the C++ program on
Verilator offers them, and the hardware sinks check every packet (delivered once, intact, to
its PE, in order per pair). The lengths injected are the mix's: each share within 3 standard
deviations of a half (binomial over the packets sent).

The default networks are large (the 3DT 4 x 4 x 4, the king torus 8 x 8, ...): the slow tier.
Every family also carries length mixes in the default suite, on small networks (the
every-hop tests of each family, the ring's sweep).

On bubble rings packets take slots of the longest length (docs/router.md): the point below
deadlocked when room was counted in flits alone.
"""

import pytest
from variants import BUILD, sim_through_cli

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for
from twinnet.sim_tb import network_sim

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


@pytest.mark.usefixtures("verilator")
def test_bubble_rings_with_bimodal_packets_do_not_deadlock():
    """The 3DT 4 x 4 x 4 with the bubble, 14-flit buffers and packets of 1 and 5 flits, at
    0.35 flits per PE per cycle (beyond saturation), seed 3: with room counted in flits alone
    an X ring deadlocked here after about 4,800 cycles, every buffer of it with some room and
    none with 5 flits (found by bench/packet_sizes.py). With a slot per packet it runs its
    4,000 cycles and drains, every packet checked."""
    network = network_from_words(["twin-torus", "--preset", "3dt-4x4x4", "--buffer-depth", "14",
                                  "--max-packet-length", "5"])
    point = {"pattern": "uniform", "rate": 0.3516 / 3, "seed": 3, "warmup": 1000,
             "measure": 3000, "lengths": [[1, 1, 1.0], [5, 5, 1.0]]}
    results = network_sim.simulate(network, "verilator", BUILD / "bubble-bimodal",
                                   {network_sim.TRAFFIC_TEST: {"points": [point]}},
                                   family=family_for(network))
    [measured] = results[network_sim.TRAFFIC_TEST]["points"]
    assert not measured["errors"] and measured["measured_packets"] > 5000, measured
    assert measured["overflowed"] > 0  # beyond saturation: the sources' queues overflowed
