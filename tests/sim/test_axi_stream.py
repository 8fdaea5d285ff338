"""AXI4-Stream interfaces (``--ni axi-stream``) on the generated Verilog, on Icarus and
Verilator, driven by cocotbext-axi (the cocotb test ``frames`` of
:mod:`twinnet.sim_tb.axi_stream_cocotb`): random frames of 1 byte to the longest to random PEs
(the sender too), pauses on every source and sink, bad destinations and oversize frames among
them; every good frame byte-exact, whole, once, in order per pair, with ``tid`` its source; the
bad ones dropped and counted exactly; the core's ``tid`` and ``tuser`` carried through."""

import json
from itertools import product

import pytest
from tiers import default_only
from variants import BUILD

from twinnet.cli.gen_cmd import network_from_words
from twinnet.cli.main import main
from twinnet.sim_tb import runner
from twinnet.sim_tb.axi_stream_sim import simulate_frames

#: A 3x3 torus (9 PEs: tdest 9 to 15 names none), 3-byte beats, frames of up to 7 beats, a
#: 3-bit s_axis_tid and 2 tuser bits carried through; the
#: same with 1-byte beats and 2-flit packets (frames of one byte only); a king torus with two
#: PEs per router; a twin torus, a fat tree of twin switches and a twisted torus; the 3x3 torus
#: with each PE's interfaces on a clock of its own (periods of 7 to 23 ns, the network's 10).
CASES = {"torus-3x3": ["torus", "--radix", "3,3", "--max-packet-length", "8",
                       "--ni-id-bits", "3", "--ni-user-bits", "2"],
         "torus-3x3-short": ["torus", "--radix", "3,3", "--max-packet-length", "2",
                             "--ni-bytes", "1"],
         "king-KT4-p2": ["king", "--kind", "KT", "--side", "3", "--pe-ports", "2"],
         "twin-3x3": ["twin-torus", "--radix", "3,3"],
         "fat-tree-2x2": ["fat-tree", "--k", "2", "--n", "2"],
         "twisted-4x2": ["twisted", "--radix", "4,2", "--twist", "YX=2"],
         "torus-3x3-cdc": ["torus", "--radix", "3,3", "--max-packet-length", "8",
                           "--ni-clock", "separate"],
         "torus-3x3-frames": ["torus", "--radix", "3,3", "--ni-frame-packets", "4",
                              "--ni-id-bits", "2"],
         "king-KT4-p2-frames": ["king", "--kind", "KT", "--side", "3", "--pe-ports", "2",
                                "--ni-frame-packets", "3"],
         "twin-3x3-frames": ["twin-torus", "--radix", "3,3", "--ni-frame-packets", "3"],
         "fat-tree-2x2-frames": ["fat-tree", "--k", "2", "--n", "2", "--ni-frame-packets", "5"],
         "twisted-4x2-frames": ["twisted", "--radix", "4,2", "--twist", "YX=2",
                                "--ni-frame-packets", "3"],
         "torus-3x3-frames-cdc": ["torus", "--radix", "3,3", "--ni-frame-packets", "4",
                                  "--ni-clock", "separate"]}
#: The default suite's runs: each torus case on Icarus, Verilator on the plain interfaces and
#: on multi-packet frames over separate clocks; the others (the king torus with two PEs a node
#: on the compact router: 65 s) in the slow tier.
DEFAULT = {("torus-3x3", "icarus"), ("torus-3x3", "verilator"),
           ("torus-3x3-short", "icarus"),
           ("torus-3x3-cdc", "icarus"), ("torus-3x3-frames", "icarus"),
           ("fat-tree-2x2-frames", "icarus"), ("torus-3x3-frames-cdc", "verilator")}


@pytest.mark.parametrize("name, simulator",
                         default_only(product(sorted(CASES), runner.SIMULATORS), DEFAULT),
                         indirect=["simulator"])
def test_frames_arrive_whole_once_in_order(name, simulator):
    network = network_from_words(CASES[name] + ["--ni", "axi-stream"])
    result = simulate_frames(network, simulator, BUILD / f"axis-{name}-{simulator}")
    config = result["config"]
    # Every good frame delivered (the cocotb test checks each byte, tid and the order).
    assert result["delivered"] == config["pes"] * config["frames"]
    # Each interface counted its own bad frames, exactly (by hand: the plan's counts).
    for counts in result["counters"].values():
        assert counts == {"bad_dest": config["bad_dest"], "oversize": config["oversize"]}


@pytest.mark.slow
def test_soak_of_100000_frames_with_back_pressure(verilator):
    """Over 100,000 frames through the 3x3 torus on Verilator, cut into up to 4 packets and
    reassembled, pauses on every source and sink, each frame checked as above."""
    network = network_from_words(CASES["torus-3x3-frames"] + ["--ni", "axi-stream"])
    result = simulate_frames(network, verilator, BUILD / "axis-soak", frames=11200,
                             bad_dest=20, oversize=20, seed=7)
    assert result["delivered"] == 9 * 11200 >= 100_000
    for counts in result["counters"].values():
        assert counts == {"bad_dest": 20, "oversize": 20}


def test_sim_command_sends_frames_through_the_interfaces(icarus, tmp_path, capsys):
    """``twinnet sim --ni axi-stream``: --packets frames in all (rounded up to a multiple of
    the PEs), each checked by the cocotb test; the report counts them."""
    assert main(["sim", "torus", "--radix", "3,3", "--ni", "axi-stream", "--packets", "85",
                 "--eject-ready", "0.8", "--simulator", icarus, "--out", str(tmp_path),
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["frames"]["per_pe"] == 10  # ceil(85 / 9)
    assert report["results"]["delivered"] == 90
