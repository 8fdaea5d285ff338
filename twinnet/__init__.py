"""twinnet: generate and verify interconnection-network routers and networks.

Subpackages: :mod:`twinnet.model` (pure-Python reference model), :mod:`twinnet.hdl` (Amaranth
gateware), :mod:`twinnet.gen` (generators and the command line), :mod:`twinnet.sim_tb` (cocotb
testbench library) and :mod:`twinnet.boards` (FPGA board targets).
"""

__version__ = "0.1.0"
