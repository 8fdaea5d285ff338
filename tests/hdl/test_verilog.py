"""Verilog of the router: port declarations. (Generation time is measured in
``bench/router_fpga.py``, not in a timed test.)"""

import re

from twinnet.hdl import verilog
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router

# The benchmark router: 5 ports (4 ring links, 1 PE), 2 VCs, 32-bit flits.
CONFIG = RouterConfig(
    flit_width=32, max_packet_length=4,
    ports=(*[PortConfig("network", vc_count=2, buffer_depth=8, bubble=True)] * 4,
           PortConfig("pe", vc_count=2, buffer_depth=8)))


def test_ports():
    text = verilog.convert(Router(CONFIG, HeaderRouteCompute), name="router")
    module = text[text.index("module router("):]
    module = module[:module.index("endmodule")]
    ports = {}
    for width, name in re.findall(r"^\s*(?:input|output)\s*(?:\[(-?\d+):0\])?\s*(\S+);", module,
                                  re.M):
        ports[name] = int(width) + 1 if width else 1
    assert all(width >= 1 for width in ports.values()), "zero-width port written as [-1:0]"
    # Link: 32 data + first + last + 1-bit VC tag; credit: valid + 1-bit VC tag.
    assert ports["in_0__flit__payload"] == 36 and ports["out_3__flit__payload"] == 36
    assert ports["in_0__credit__payload"] == 1 and ports["out_0__credit__valid"] == 1
    # PE: injection payload carries the VC, ejection does not.
    assert ports["in_4__payload"] == 35 and ports["out_4__payload"] == 35
    assert {"in_4__ready", "out_4__ready", "drop_count", "clk", "rst"} <= set(ports)
    assert ports["drop_count"] == 32  # the default: a network's total is as wide
