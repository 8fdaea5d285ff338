"""``--ni axi-stream`` in the generator and the commands: the AXI4-Stream top's ports follow
the AXI4-Stream names per PE, the manifest lists them, and the commands that run the routers'
own PE ports refuse a network with interfaces in one line."""

import json
import re

from twinnet.cli.main import main


def test_3dt_top_has_axi_stream_ports_per_pe_and_the_manifest_lists_them(tmp_path):
    assert main(["gen", "--preset", "3dt-4x4x4", "--ni", "axi-stream", "--out",
                 str(tmp_path)]) == 0
    (folder,) = tmp_path.iterdir()
    manifest = json.loads(next(folder.glob("*.manifest.json")).read_text())
    section = manifest["axi_stream"]
    pes = len(manifest["terminals"])
    assert pes == 128  # 4 x 4 x 4 nodes, 2 PEs each (a twin card per node)
    text = (folder / section["verilog"]).read_text()
    header = re.search(rf"module {section['top']}\((.*?)\);", text, re.S).group(1)
    ports = {name.strip() for name in header.split(",")}
    # 3-byte beats fill the 32-bit flits (27 bits); tdest and tid number 128 PEs in 7 bits.
    widths = {"tvalid": 1, "tready": 1, "tdata": 24, "tkeep": 3, "tlast": 1}
    for pe in range(pes):
        listed = section["pes"][pe]
        slave = {port["name"]: (port["direction"], port["width"]) for port in listed["slave"]}
        master = {port["name"]: (port["direction"], port["width"]) for port in listed["master"]}
        assert slave == {f"s_axis_{pe}_{name}": ("output" if name == "tready" else "input",
                                                 width)
                         for name, width in {**widths, "tdest": 7}.items()}
        assert master == {f"m_axis_{pe}_{name}": ("input" if name == "tready" else "output",
                                                  width)
                          for name, width in {**widths, "tid": 7}.items()}
        assert set(slave) | set(master) <= ports
        assert {port["name"] for port in listed["counters"]} == {f"ni_{pe}_bad_dest",
                                                                f"ni_{pe}_oversize"}
    # Frames of up to L - 1 = 3 beats of 3 bytes.
    assert (section["max_frame_beats"], section["max_frame_bytes"]) == (3, 9)


def test_slave_tid_comes_out_above_the_senders_number(tmp_path):
    """With --ni-id-bits 5 on a 3x3 torus (9 PEs: 4 bits), s_axis_<i>_tid has 5 bits and
    m_axis_<i>_tid 4 + 5."""
    assert main(["gen", "torus", "--radix", "3,3", "--ni", "axi-stream", "--ni-id-bits", "5",
                 "--out", str(tmp_path)]) == 0
    (folder,) = tmp_path.iterdir()
    section = json.loads(next(folder.glob("*.manifest.json")).read_text())["axi_stream"]
    assert section["id_width"] == 5
    for pe, listed in enumerate(section["pes"]):
        tids = {port["name"]: port["width"] for port in listed["slave"] + listed["master"]
                if port["name"].endswith("_tid")}
        assert tids == {f"s_axis_{pe}_tid": 5, f"m_axis_{pe}_tid": 9}


def test_fpga_interface_design_needs_interfaces(capsys):
    assert main(["fpga", "torus", "--design", "interface"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--design interface" in err[0] and "--ni axi-stream" in err[0]


def test_separate_clocks_are_ports_and_the_manifest_names_each_pes(tmp_path):
    assert main(["gen", "torus", "--radix", "3,3", "--ni", "axi-stream", "--ni-clock",
                 "separate", "--out", str(tmp_path)]) == 0
    (folder,) = tmp_path.iterdir()
    manifest = json.loads(next(folder.glob("*.manifest.json")).read_text())
    section = manifest["axi_stream"]
    text = (folder / section["verilog"]).read_text()
    header = re.search(rf"module {section['top']}\((.*?)\);", text, re.S).group(1)
    ports = {name.strip() for name in header.split(",")}
    for pe, listed in enumerate(section["pes"]):
        assert (listed["clock"], listed["reset"]) == (f"ni_{pe}_clk", f"ni_{pe}_rst")
        assert {f"ni_{pe}_clk", f"ni_{pe}_rst"} <= ports
    assert {"clk", "rst"} <= ports  # the network's own
