"""Bad framing at a PE port, on the generated Verilog of a network on Icarus and Verilator:
each kind is dropped and counted exactly, the packets after it arrive intact, a packet cut
short arrives once with ``abort`` on its tail, and a flit offered during reset waits for it
(the cocotb test ``bad_framing`` of :mod:`twinnet.sim_tb.network_cocotb`)."""

from itertools import product

import pytest
from tiers import default_only
from variants import BUILD, pipeline_of

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for
from twinnet.sim_tb import network_sim, runner

#: 3x3 torus with packets of up to 4 flits; of up to 1 flit (every packet its head and tail);
#: and the compact router; every other family: a king torus with two PEs per router, a fat
#: tree of twin switches, a twisted torus, a twin torus.
CASES = {"torus-3x3": ["torus", "--radix", "3,3"],
         "torus-3x3-l1": ["torus", "--radix", "3,3", "--max-packet-length", "1"],
         "torus-3x3-compact": ["torus", "--radix", "3,3"],
         "king-KT4-p2": ["king", "--kind", "KT", "--side", "4", "--pe-ports", "2"],
         "fat-tree-2x2": ["fat-tree", "--k", "2", "--n", "2"],
         "twisted-4x2": ["twisted", "--radix", "4,2", "--twist", "YX=2"],
         "twin-3x3": ["twin-torus", "--radix", "3,3"]}
#: The default suite's (case, simulator) runs (the split router on Icarus, the compact one on
#: Verilator); the others in the slow tier.
DEFAULT = {("torus-3x3", "icarus"), ("torus-3x3-l1", "icarus"),
           ("torus-3x3-compact", "verilator")}


@pytest.mark.parametrize("name, simulator",
                         default_only(product(sorted(CASES), runner.SIMULATORS), DEFAULT),
                         indirect=["simulator"])
def test_bad_framing_is_dropped_counted_and_harmless(name, simulator):
    network = network_from_words(CASES[name] + ["--pipeline", str(pipeline_of(name))])
    results = network_sim.simulate(network, simulator, BUILD / f"framing-{name}-{simulator}",
                                   {"bad_framing": {"packets": 200}},
                                   family=family_for(network))
    framing = results["bad_framing"]["framing"]
    length = network.max_packet_length
    # By hand, from the test's script: two strays, two heads inside packets (none with L = 1:
    # every head closes its packet), two packets too long.
    assert framing == {"stray": 2, "cut": 2 if length > 1 else 0, "long": 2}
    assert results["bad_framing"]["aborted"] == (4 if length > 1 else 2)
