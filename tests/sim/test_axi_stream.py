"""AXI4-Stream interfaces (``--ni axi-stream``) on the generated Verilog, on Icarus and
Verilator, driven by cocotbext-axi (the cocotb test ``frames`` of
:mod:`twinnet.sim_tb.axi_stream_cocotb`): random frames of 1 byte to the longest to random PEs
(the sender too), pauses on every source and sink, bad destinations and oversize frames among
them; every good frame byte-exact, whole, once, in order per pair, with ``tid`` its source; the
bad ones dropped and counted exactly."""

import json
from itertools import product

import pytest
from tiers import default_only
from variants import BUILD

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for
from twinnet.gen.generate import generate_network
from twinnet.sim_tb import network_sim, runner

#: A 3x3 torus (9 PEs: tdest 9 to 15 names none), 3-byte beats, frames of up to 7 beats; the
#: same with 1-byte beats and 2-flit packets (frames of one byte only); a king torus with two
#: PEs per router; a twin torus, a fat tree of twin switches and a twisted torus; the 3x3 torus
#: with each PE's interfaces on a clock of its own (periods of 7 to 23 ns, the network's 10).
CASES = {"torus-3x3": ["torus", "--radix", "3,3", "--max-packet-length", "8"],
         "torus-3x3-short": ["torus", "--radix", "3,3", "--max-packet-length", "2",
                             "--ni-bytes", "1"],
         "king-KT4-p2": ["king", "--kind", "KT", "--side", "3", "--pe-ports", "2"],
         "twin-3x3": ["twin-torus", "--radix", "3,3"],
         "fat-tree-2x2": ["fat-tree", "--k", "2", "--n", "2"],
         "twisted-4x2": ["twisted", "--radix", "4,2", "--twist", "YX=2"],
         "torus-3x3-cdc": ["torus", "--radix", "3,3", "--max-packet-length", "8",
                           "--ni-clock", "separate"]}
DEFAULT = {("torus-3x3", "icarus"), ("torus-3x3", "verilator"),
           ("torus-3x3-short", "icarus"), ("king-KT4-p2", "verilator"),
           ("torus-3x3-cdc", "icarus"), ("torus-3x3-cdc", "verilator")}


def run_frames(words: list[str], simulator: str, build, **settings) -> dict:
    """Generate the network of ``words`` with AXI4-Stream interfaces, build its AXI4-Stream
    top on ``simulator`` and run the cocotb test ``frames`` with ``settings``."""
    network = network_from_words(words + ["--ni", "axi-stream"])
    files = generate_network(network, build / "rtl", family=family_for(network))
    manifest = json.loads(files[-1].read_text())
    section = manifest["axi_stream"]
    pes = len(manifest["terminals"])
    dest_width = next(port["width"] for port in section["pes"][0]["slave"]
                      if port["name"].endswith("_tdest"))
    config = {"pes": pes, "data_bytes": section["data_bytes"],
              "max_frame_bytes": section["max_frame_bytes"], "dest_width": dest_width,
              "frames": 12, "bad_dest": 2 if pes < 1 << dest_width else 0, "oversize": 2,
              "pause": 0.3, "seed": 1, "ordered": family_for(network).in_order(network),
              "separate_clocks": network.ni_clock == "separate", **settings}
    runner.run(simulator=simulator, toplevel=section["top"],
               test_module="twinnet.sim_tb.axi_stream_cocotb", build_dir=build, config=config,
               sources=[path for path in files if path.suffix == ".v"],
               hier_blocks=network_sim.hierarchy_blocks(manifest), log=True)
    results = json.loads((build / "results.json").read_text())["frames"]
    return {"config": config, **results}


@pytest.mark.parametrize("name, simulator",
                         default_only(product(sorted(CASES), runner.SIMULATORS), DEFAULT),
                         indirect=["simulator"])
def test_frames_arrive_whole_once_in_order(name, simulator):
    result = run_frames(CASES[name], simulator, BUILD / f"axis-{name}-{simulator}")
    config = result["config"]
    # Every good frame delivered (the cocotb test checks each byte, tid and the order).
    assert result["delivered"] == config["pes"] * config["frames"]
    # Each interface counted its own bad frames, exactly (by hand: the plan's counts).
    for counts in result["counters"].values():
        assert counts == {"bad_dest": config["bad_dest"], "oversize": config["oversize"]}
