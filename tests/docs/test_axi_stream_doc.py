"""The Verilog example of docs/axi-stream.md (``docs/examples/axi_stream_two_cores.v``), run as
the document says: a generated 2x2 torus with AXI4-Stream interfaces and two cores, on
Icarus; core B checks the bytes, the frame ends and ``tid`` of core A's two frames."""

import subprocess
from pathlib import Path

import pytest

from twinnet.cli.main import main as twinnet_main
from twinnet.sim_tb import runner

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "axi_stream_two_cores.v"


def test_two_cores_exchange_frames(tmp_path):
    if runner.missing("icarus"):
        pytest.skip(runner.missing("icarus"))
    assert twinnet_main(["gen", "torus", "--radix", "2,2", "--ni", "axi-stream", "--out",
                         str(tmp_path)]) == 0
    (folder,) = tmp_path.iterdir()
    assert folder.name == "torus2_k2_bubble_axis3"  # the module the example instantiates
    simulation = tmp_path / "two_cores"
    subprocess.run(["iverilog", "-g2005", "-o", str(simulation), *sorted(folder.glob("*.v")),
                    str(EXAMPLE)], check=True, capture_output=True)
    done = subprocess.run(["vvp", "-n", str(simulation)], capture_output=True, text=True,
                          timeout=120, check=True)
    assert "PASS: two frames from PE 0, 6 bytes" in done.stdout, done.stdout
