"""``twinnet gen``: configuration sources, errors, and the files it writes."""

import gc
import json
import re

import pytest

from twinnet.cli.gen_cmd import network_from_args
from twinnet.cli.main import build_parser, main
from twinnet.families import presets


def parse(*argv):
    """``twinnet gen``'s arguments, parsed as :func:`twinnet.cli.main.main` does."""
    return build_parser("gen").parse_args(["gen", *argv])


def test_the_parser_is_shared_and_keeps_nothing_of_a_parse():
    """One parser per command in a process (building one takes longer than most commands'
    checks); a parse leaves no value behind for the next."""
    first = parse("torus", "--radix", "5,3", "--trace", "--out", "elsewhere")
    second = parse("torus")
    assert (first.radices, first.trace, str(first.out)) == ((5, 3), True, "elsewhere")
    assert (second.radices, second.trace, str(second.out)) == (None, False, "out")
    assert build_parser("gen") is build_parser("gen")


def test_presets_are_the_papers_instances_in_configuration_d():
    assert {"3dt-4x4x2", "3dt-4x4x4", "3dt-5x5x5", "3dt-6x6x6", "3dt-8x8x8"} <= set(presets())
    network = network_from_args(parse("--preset", "3dt-6x6x6"))
    assert network.topology.radices == (6, 6, 6)
    assert network.topology.configuration.label == "D"
    assert network.topology.pe_count == 432


@pytest.mark.parametrize("preset, kind, routing", [
    ("002-t16", "T", "hop-by-hop"), ("002-dt16", "DT", "hop-by-hop"), ("002-kt16", "KT", "2s")])
def test_002_presets_carry_table_3s_settings(preset, kind, routing):
    # 002 Table 2 and §4.2: 16x16, 8-phit packets, the bubble escape on VC 0 and "enough"
    # adaptive VCs (three), 32 phits per VC; two PEs per router so that KT can exceed one flit
    # per node.
    network = network_from_args(parse("king", "--preset", preset))
    assert (network.topology.kind, network.topology.side, network.routing) == (kind, 16, routing)
    assert (network.escape, network.vcs, network.max_packet_length, network.buffer_depth,
            network.pe_ports, network.allocator) == ("bubble", 4, 8, 32, 2, "islip")


def test_flags_override_toml_which_overrides_preset(tmp_path):
    toml = tmp_path / "net.toml"
    toml.write_text('preset = "3dt-4x4x2"\nmode = "vc"\nflit_width = 40\n')
    network = network_from_args(parse("--toml", str(toml), "--max-packet-length", "2"))
    assert network.topology.radices == (4, 4, 2)
    assert (network.topology.mode, network.flit_width, network.max_packet_length) == ("vc", 40, 2)
    network = network_from_args(parse("--toml", str(toml), "--k", "3", "--n", "3"))
    assert network.topology.radices == (3, 3, 3)


@pytest.mark.parametrize("text, message", [
    ('radices = [3, 3, 3]\nwidth = 3\n', r"net.toml: unknown key 'width'; allowed keys: "),
    ('radices = [3, 3\n', r"--toml \S*net.toml: is not valid TOML"),
    ('radices = [3, 1, 3]\n', r"net.toml: radices\[1\] must be an integer >= 2, not 1"),
    ('n = 3\nk = 3\nradices = [3, 3, 3]\n',
     r"net.toml: radices and \S*net.toml: n both give the size: give either radices or n and k"),
    ('radices = [3, 3, 3]\nbuffer_depth = 4\n',
     r"net.toml: buffer_depth must be >= 8 flits to hold two packets"),
    ('radices = [8, 8, 8]\nflit_width = 16\n', r"flit_width must be >= 20 bits"),
])
def test_bad_toml_names_file_and_key(tmp_path, capsys, text, message):
    toml = tmp_path / "net.toml"
    toml.write_text(text)
    assert main(["gen", "--toml", str(toml), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("twinnet: ") and err.count("\n") == 1
    assert re.search(message, err), err


def test_unknown_preset(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["gen", "--preset", "3dt-9x9x9"])
    assert exit_info.value.code == 2
    assert "argument --preset: invalid choice: '3dt-9x9x9'" in capsys.readouterr().err


def test_generates_verilog_and_manifest(tmp_path, capsys):
    status = main(["gen", "--n", "2", "--k", "3", "--config", "C_Best", "--mode", "vc",
                   "--out", str(tmp_path), "--json"])
    assert status == 0
    data = json.loads(capsys.readouterr().out)
    names = sorted(p.rsplit("/", 1)[-1] for p in data["files"])
    assert names == ["ndt2_k3_C_Best_vc.manifest.json", "ndt2_k3_C_Best_vc.v",
                     "ndt2_k3_C_Best_vc_card0.v", "ndt2_k3_C_Best_vc_card1.v"]
    folder = tmp_path / "ndt2_k3_C_Best_vc"
    top = (folder / "ndt2_k3_C_Best_vc.v").read_text()
    # One module per distinct card, instantiated by name 9 times each.
    assert top.count("ndt2_k3_C_Best_vc_card0 ") == 9 and top.count("ndt2_k3_C_Best_vc_card1 ") == 9
    manifest = json.loads((folder / "ndt2_k3_C_Best_vc.manifest.json").read_text())
    assert manifest["top"] == "ndt2_k3_C_Best_vc" and manifest["derived"]["pe_count"] == 18
    # The knobs as given (none) and the router as built: the split router's own, with the
    # bypass (docs/router.md).
    assert manifest["parameters"]["bypass"] is None
    assert manifest["derived"]["microarchitecture"] == {
        "pipeline": 3, "allocator": "round-robin", "iterations": 1, "switch_inputs": "vc",
        "hold": "packet", "ejection_lanes": 1, "buffer_memory": "lut", "bypass": True}
    widths = {port["name"]: port["width"] for port in manifest["ports"]}
    assert widths["pe_in_valid"] == 18 and widths["pe_in_data"] == 18 * 32
    # 9 nodes x (2 cards x (2 external ports + internal link)) links.
    assert len(manifest["links"]) == 9 * 2 * 3
    fields = {f["name"]: (f["offset"], f["width"]) for f in manifest["head_flit"]["fields"]}
    assert fields["route.node.o0"] == (0, 2) and fields["route.node.o1"] == (2, 2)
    assert fields["route.pe"] == (4, 1)
    assert fields["source"] == (5, 5)


def test_2d_presets_are_the_plain_tori_of_the_comparison():
    """003 §7.4 compares 3DT networks with plain 2D tori of the same PE count."""
    sizes = {"2d-8x8": 64, "2d-16x8": 128, "2d-16x16": 256, "2d-24x18": 432, "2d-21x21": 441,
             "2d-32x32": 1024}
    for preset, pes in sizes.items():
        network = network_from_args(parse("--preset", preset))
        assert network.topology.card_count == 1 and network.topology.pe_count == pes
    assert network_from_args(parse("--preset", "3dt-4x4x4")).topology.pe_count == \
        network_from_args(parse("--preset", "2d-16x8")).topology.pe_count


def test_generates_a_plain_torus(tmp_path, capsys):
    assert main(["gen", "--radix", "4,3", "--config", "torus", "--mode", "vc", "--no-bypass",
                 "--out", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = sorted(p.rsplit("/", 1)[-1] for p in data["files"])
    top = "torus2_4x3_vc_nobypass"
    assert names == [f"{top}.manifest.json", f"{top}.v", f"{top}_card0.v"]
    folder = tmp_path / top
    assert (folder / f"{top}.v").read_text().count(f"{top}_card0 ") == 12
    manifest = json.loads((folder / f"{top}.manifest.json").read_text())
    assert manifest["derived"]["pe_count"] == 12
    assert manifest["parameters"]["bypass"] is False
    assert manifest["derived"]["microarchitecture"]["bypass"] is False
    assert len(manifest["links"]) == 12 * 4  # 4 external ports per router, no internal link


def test_preset_sizes_change_within_its_shape():
    """``--k`` alone keeps the preset's dimension count; the name encodes non-default sizes
    (and a preset's router without the bypass: ``_nobypass``)."""
    network = network_from_args(parse("--preset", "2d-8x8", "--k", "3"))
    assert network.topology.radices == (3, 3) and network.topology.card_count == 1
    network = network_from_args(parse("--preset", "3dt-4x4x4", "--flit-width", "64",
                                      "--max-packet-length", "8", "--buffer-depth", "24"))
    assert network.name == "ndt3_k4_D_bubble_w64_l8_d24_nobypass"
    compact = network_from_args(parse("--pipeline", "2"))
    assert compact.name == "ndt3_k4_D_bubble_compact"
    # A buffer of the default depth (2 x packet length) gives the same Verilog, the same name.
    assert network_from_args(parse("--buffer-depth", "8")).name == "ndt3_k4_D_bubble"


def _snapshot(folder):
    return {path.relative_to(folder): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_regenerating_keeps_unchanged_files_and_their_time_stamps(tmp_path, capsys):
    argv = ["gen", "--radix", "3,2", "--config", "torus", "--out", str(tmp_path)]
    assert main(argv) == 0
    before = _snapshot(tmp_path)
    assert main(argv) == 0
    assert _snapshot(tmp_path) == before  # same bytes, same time stamps, nothing else
    assert [p.name for p in tmp_path.iterdir()] == ["torus2_3x2_bubble"]


@pytest.mark.filterwarnings("ignore:.*created but never used")  # the routers of the failure
def test_a_failed_generation_leaves_nothing_half_written(tmp_path, capsys, monkeypatch):
    """The network folder appears whole or not at all: a failure after the first card
    leaves no folder (and no parent folders it created), and an earlier network of the same
    name stays as it was."""
    from twinnet.hdl import verilog

    real, calls = verilog.convert, []

    def failing(component, *, name):
        calls.append(name)
        if len(calls) == 2:
            raise RuntimeError("conversion failed")
        return real(component, name=name)

    argv = ["gen", "--radix", "3,2", "--config", "C_Best", "--out", str(tmp_path / "a" / "b")]
    monkeypatch.setattr(verilog, "convert", failing)
    with pytest.raises(RuntimeError):
        main(argv)
    assert calls and not any(tmp_path.iterdir())
    monkeypatch.setattr(verilog, "convert", real)
    assert main(argv) == 0
    before = _snapshot(tmp_path)
    calls.clear()
    monkeypatch.setattr(verilog, "convert", failing)
    with pytest.raises(RuntimeError):
        main(argv)
    assert _snapshot(tmp_path) == before
    gc.collect()  # the failed generations' routers: reported (and ignored) here, not later
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["ndt2_3x2_C_Best_bubble"]


def _gen(capsys, tmp_path, *argv):
    """Run ``twinnet gen … --json``; return (stderr, manifest)."""
    assert main(["gen", *argv, "--out", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    manifest = next(p for p in json.loads(captured.out)["files"] if p.endswith(".json"))
    return captured.err, json.loads(open(manifest).read())


def test_mode_none_is_generated_with_a_warning_naming_one_cycle(tmp_path, capsys):
    """Plain DOR with one VC on a 4x4 torus: the wrap-around closes each ring, so the cycle
    named must be the four same-direction links of one ring (hand calculation)."""
    err, manifest = _gen(capsys, tmp_path, "torus", "--radix", "4,4", "--mode", "none")
    verdict = manifest["deadlock"]
    assert verdict["deadlock_free"] is False
    cycle = verdict["cycle"]
    assert len(cycle) == 4
    nodes = [label.split("/")[0] for label in cycle]
    ports = {label.split(" ")[1] for label in cycle}
    assert len(ports) == 1 and ports <= {"X+", "X-", "Y+", "Y-"}
    assert len(set(nodes)) == 4
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("twinnet gen: warning: torus2_k4_none can deadlock: ")
    assert " -> ".join(cycle) in warnings[0]


@pytest.mark.parametrize("argv", [("twin-torus", "--radix", "3,3,3", "--mode", "bubble"),
                                  ("twin-torus", "--radix", "3,3,3", "--mode", "vc"),
                                  ("fat-tree", "--k", "2", "--n", "3")])
def test_deadlock_free_modes_are_generated_without_a_warning(tmp_path, capsys, argv):
    err, manifest = _gen(capsys, tmp_path, *argv)
    assert manifest["deadlock"]["deadlock_free"] is True
    assert manifest["deadlock"]["cycle"] is None
    assert manifest["deadlock"]["channels"] > 0
    assert "warning" not in err


def test_the_manifest_verdict_is_the_models_check(tmp_path, capsys):
    """A split that lets both directions share internal port 0 (as ``twinnet analyze
    fat-tree`` finds cyclic) is generated with the model's cycle and a warning."""
    from twinnet.model.fat_tree import TwinFatTree, TwinSwitch, dependency_graph

    err, manifest = _gen(capsys, tmp_path, "fat-tree", "--k", "4", "--n", "2",
                         "--split", "0,1,6,7")
    twin = TwinFatTree.uniform(4, 2, TwinSwitch(4, frozenset({0, 1, 6, 7})))
    graph = dependency_graph(twin.tree, twin=twin)
    expected = graph.find_cycle()
    assert expected is not None
    assert manifest["deadlock"]["cycle"] == [str(channel) for channel in expected]
    assert "can deadlock" in err


def test_003_router_presets():
    """003 §7.1: 4-flit packets; bubble flow control with 128-flit buffers, or VCs of 32 flits;
    §7.3 studies them on 3DT 4x4x4 (128 PEs) in configuration D."""
    for preset, mode, depth in (("003-bubble", "bubble", 128), ("003-vc", "vc", 32)):
        network = network_from_args(parse("--preset", preset))
        assert (network.topology.mode, network.buffer_depth, network.max_packet_length) == \
            (mode, depth, 4)
        assert network.topology.pe_count == 128
        assert network.topology.configuration.name == "D"
    # 003 §7.4's 2D torus of the same 128 PEs, with the same router settings.
    torus = network_from_args(parse("--preset", "003-torus"))
    assert (torus.topology.radices, torus.topology.mode, torus.buffer_depth,
            torus.max_packet_length, torus.topology.pe_count) == ((16, 8), "bubble", 128, 4, 128)


@pytest.mark.parametrize("dx, dy", [(8, 4), (16, 8), (24, 12), (48, 12)])
def test_004_presets(dx, dy):
    """004's rectangular tori with t_YX = d_x / 2 (the twist 004 finds best for these
    shapes) and their untwisted twins, 4 bubble VCs per link, 4-flit packets, four packets
    per VC."""
    twisted = network_from_args(parse("--preset", f"004-{dx}x{dy}"))
    plain = network_from_args(parse("--preset", f"004-{dx}x{dy}-untwisted"))
    assert twisted.to_dict()["twists"] == {"YX": dx // 2}
    assert not plain.to_dict()["twists"]
    for network in (twisted, plain):
        assert network.topology.radices == (dx, dy)
        assert (network.escape, network.vc_count, network.max_packet_length,
                network.buffer_depth) == ("bubble", 4, 4, 16)
        # 8x4 twisted can carry more than one flit per node and cycle: two PEs per router.
        assert network.pe_ports == (2 if (dx, dy) == (8, 4) else 1)


def test_an_output_folder_that_cannot_be_replaced_is_one_line(tmp_path, capsys, monkeypatch):
    """An existing network folder without write permission cannot be moved aside: refused in
    one line before generating (permission is simulated: the tests may run as root, who may
    write anywhere), and the old folder stays as it was."""
    import os

    from twinnet.gen import output

    final = tmp_path / "torus2_k3_bubble"
    final.mkdir()
    (final / "old.v").write_text("// old\n")
    real_access = os.access
    monkeypatch.setattr(output.os, "access", lambda path, mode: False
                        if os.fspath(path) == os.fspath(final) else real_access(path, mode))
    assert main(["gen", "torus", "--radix", "3,3", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot replace {final}" in err, err
    assert sorted(p.name for p in final.iterdir()) == ["old.v"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torus2_k3_bubble"]


# (runpy warns that the module was imported before it runs as __main__: the case in point.)
@pytest.mark.filterwarnings("ignore:'twinnet.cli.main' found in sys.modules:RuntimeWarning")
@pytest.mark.parametrize("module", ["twinnet", "twinnet.cli.main"])
def test_run_as_a_module_a_failed_check_is_one_line(module, monkeypatch, capsys):
    """``python -m twinnet`` and ``python -m twinnet.cli.main``: a command's failed check
    (CheckFailed) is one line and exit status 1, as with the ``twinnet`` script, not a
    traceback."""
    import runpy
    import sys

    from twinnet.cli import gen_cmd
    from twinnet.errors import CheckFailed

    def fails(args):
        raise CheckFailed("the check failed")

    # (What gen_cmd.run calls, looked up when it runs: the parser may be built already.)
    monkeypatch.setattr(gen_cmd, "network_from_args", fails)
    monkeypatch.setattr(sys, "argv", ["twinnet", "gen", "torus"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module(module, run_name="__main__")
    assert stop.value.code == 1
    assert capsys.readouterr().err.strip().splitlines() == ["twinnet: the check failed"]
