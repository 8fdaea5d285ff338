"""cocotb testbench library: drivers, monitors, scoreboards and the runner glue."""
