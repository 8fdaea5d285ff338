"""FPGA board targets wrapping :mod:`twinnet.hdl` for amaranth-boards platforms."""
