"""Generators: a network configuration to files (Verilog, manifest, the traffic program's C++,
FPGA reports)."""
