"""twinnet: generate and verify interconnection-network routers and networks.

Subpackages: :mod:`twinnet.model` (pure-Python reference model), :mod:`twinnet.hdl` (Amaranth
gateware, :mod:`twinnet.hdl.formal` its proofs), :mod:`twinnet.families` (the topology
families' registry), :mod:`twinnet.gen` (generators: Verilog, manifests, FPGA reports),
:mod:`twinnet.sim_tb` (simulation: cocotb test benches and their runners),
:mod:`twinnet.program` (the C++ traffic program), :mod:`twinnet.boards` (FPGA board targets)
and :mod:`twinnet.cli` (the command line).
"""

__version__ = "0.1.0"
