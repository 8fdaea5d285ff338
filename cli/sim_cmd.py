"""``twinnet sim``: generate a network, simulate uniform random traffic, report the results.

The network comes from the same preset/TOML/flags as ``twinnet gen``; the simulation is
:func:`twinnet.sim_tb.network_sim.simulate` running the ``uniform_traffic`` cocotb test,
whose scoreboard checks every packet (and, with the link trace, every hop) against the
reference model.
"""

import dataclasses
import sys
from pathlib import Path

from twinnet.errors import CheckFailed, UsageError
from twinnet.families import family_for, family_words, presets
from twinnet.gen import output
from twinnet.model.sizes import DEFAULT_MAX_PACKET_LENGTH
from twinnet.model.traffic import LengthMix
from twinnet.program.driver import mpi_missing
from twinnet.sim_tb.settings import SETTINGS, Point

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag
from .run_settings import add_settings, given, resolve

#: The patterns the per-hop scoreboard drives (the harness drives every pattern).
HOPS_TRAFFIC = ("uniform", "all-pairs")
#: The flags that a frames run (--ni axi-stream) cannot honour: given, they are refused.
FRAME_REFUSED = ("check", "pattern", "warmup", "hotspot_fraction", "injection", "burst",
                 "packet_lengths", "packet_length_weights", "rate", "stall_bursts", "no_trace",
                 "broadcast_fraction", "link_loads", "trace", "latencies", "threads", "ranks")
#: Cycles the injection window of one ``twinnet sim`` run may last at the offered rate (see
#: :data:`twinnet.sim_tb.settings.MAX_PACKETS`).
MAX_INJECTION_CYCLES = 1_000_000
#: Payload bits the testbench needs in a head flit for its per-source sequence numbers.
MIN_SEQUENCE_BITS = 4
#: How a run with traffic in hardware was simulated, for the report.
ENGINE_WORDS = {"program": "C++ program over Verilated modules",
                "cocotb": "Verilog harness through cocotb"}
#: The settings of ``twinnet sim`` and ``twinnet demo`` (:mod:`twinnet.sim_tb.settings`).
TRAFFIC_SETTINGS = ("simulator", "check", "pattern", "warmup", "hotspot_fraction",
                    "injection", "burst", "packet_lengths", "packet_length_weights", "packets",
                    "rate", "eject_ready", "stall_bursts", "seed", "no_trace", "waves", "out")


def register(commands) -> None:
    parser = commands.add_parser(
        "sim", help="simulate a network under synthetic traffic",
        description="Generate a network of any family, build it on Verilator or Icarus and "
                    "simulate a traffic pattern. By default the traffic is generated and "
                    "checked in hardware (every packet delivered once, intact, in order per "
                    "pair, to the right PE); with --check hops the cocotb scoreboard also "
                    "checks every hop against the reference model (unless --no-trace). Prints "
                    "packets delivered, latency, throughput and simulation speed. A second run "
                    "of the same network reuses the build.",
        epilog="Network flags as for 'twinnet gen'. " + gen_cmd.limits_help() + " Traffic: at "
               f"most {MAX_INJECTION_CYCLES:,} cycles of injection (packets / (rate x PEs)). "
               "Presets: " + ", ".join(presets()))
    gen_cmd.add_network_args(parser)
    add_settings(parser, TRAFFIC_SETTINGS + ("broadcast_fraction", "threads", "ranks"))
    parser.add_argument("--link-loads", type=parse.path, metavar="FILE",
                        help="--check end-to-end: build the network with link counters, count "
                             "the flits, packets and blocked cycles of every link (per VC) and "
                             "terminal port (over the measured cycles; under all-pairs, the "
                             "whole run), report them (JSON link_loads) and draw "
                             "the network with each link coloured by its load into FILE (.svg "
                             "or .png), with a histogram of the loads beside it")
    parser.add_argument("--trace", type=parse.path, metavar="FILE",
                        help="replay a packet trace instead of a pattern: lines 'cycle source "
                             "destination length' (PEs as the manifest numbers them, in order "
                             "of cycle, '#' comments; docs/traffic.md#traces); every packet is "
                             "checked, and its times written to --latencies (--check "
                             "end-to-end on Verilator, or --check hops)")
    parser.add_argument("--latencies", type=parse.path, metavar="FILE",
                        help="--trace: where each packet's times go, .csv or .json (default "
                             "<network>-latencies.csv in the build folder)")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def network_for_lengths(args):
    """The network of ``args`` (:func:`gen_cmd.network_from_args`), whose longest packet is
    the longest of ``--packet-lengths`` when that is above the default and neither a flag, a
    file nor a preset sets ``max_packet_length``: ``twinnet sim torus --packet-lengths 1,5``
    builds routers for 5-flit packets."""
    word, values, labels = gen_cmd.network_values(args)
    if args.packet_lengths is not None and "max_packet_length" not in values:
        try:
            longest = LengthMix.parse(args.packet_lengths, args.packet_length_weights).longest
        except ValueError:
            longest = 0  # length_settings names the flag and the value
        if longest > DEFAULT_MAX_PACKET_LENGTH:
            values["max_packet_length"] = longest
            labels["max_packet_length"] = f"--packet-lengths {args.packet_lengths}"
    return family_words()[word][0].network(values, labels)


def length_settings(network, args) -> LengthMix:
    """The mix of ``--packet-lengths`` and ``--packet-length-weights``, checked against
    ``network``'s longest packet."""
    lengths, weights = args.packet_lengths, args.packet_length_weights
    if lengths is None:
        if weights is not None:
            raise UsageError(f"--packet-length-weights {weights}: needs --packet-lengths")
        return LengthMix.fixed(network.max_packet_length)
    try:
        mix = LengthMix.parse(lengths, weights)
    except ValueError as error:
        flag = "--packet-length-weights" if "weight" in str(error) else "--packet-lengths"
        value = weights if flag == "--packet-length-weights" else lengths
        raise UsageError(f"{flag} {value}: {error}") from None
    if mix.longest > network.max_packet_length:
        raise UsageError(f"--packet-lengths {lengths}: {mix.longest} flits is longer than the "
                         f"network's longest packet; each length must be from 1 to "
                         f"{network.max_packet_length} (--max-packet-length)")
    return mix


def check_ranks(args, flit_width: int, settings: dict) -> int:
    """``--ranks``, checked: more than one only where the program runs (with what it
    needs)."""
    from twinnet.program.driver import chosen

    ranks = getattr(args, "ranks", 1)  # (demo has no --ranks)
    if ranks == 1:
        return ranks
    if getattr(args, "check", "end-to-end") != "end-to-end":
        raise UsageError(f"--ranks {ranks}: applies only to --check end-to-end (the C++ "
                         "traffic program)")
    if not chosen("auto", args.simulator, getattr(args, "waves", False), flit_width, [settings]):
        raise UsageError(f"--ranks {ranks}: applies only to the C++ traffic program "
                         "(--simulator verilator without --waves, flits of up to 61 bits, "
                         "faults it injects)")
    missing = mpi_missing(ranks)
    if missing:
        raise UsageError(missing)
    return ranks


def backpressure_settings(args) -> dict:
    """The point keys of ``--eject-ready`` and ``--stall-bursts``."""
    return {"eject_ready": float(args.eject_ready), "stall_bursts": args.stall_bursts}


def injection_settings(args, rate: float, length: float) -> dict:
    """The point keys of ``--injection`` and ``--burst`` at ``rate`` packets per PE per cycle,
    checked: bursts are sent at one packet per ``length`` (the mean length) cycles, so the
    average rate must stay below that."""
    if args.injection == "onoff" and rate * length >= 1:
        raise UsageError(f"--injection onoff: the offered load {rate * length:g} flits per PE "
                         "per cycle must be below 1 (bursts are sent at the port's full "
                         "rate, with pauses between them)")
    return {"injection": args.injection, "burst": args.burst}


def run(args) -> Report:
    resolve(args)
    return simulate_uniform(network_for_lengths(args), args)


def trace_settings(network, args) -> dict:
    """The settings of a ``--trace`` run, checked: the trace's every line, and no pattern
    flag beside it."""
    from twinnet.model.trace import TraceError, read_trace

    family = family_for(network)
    given_flags = [flag for flag, name in (("--packets", "packets"), ("--rate", "rate"),
                                           ("--packet-lengths", "packet_lengths"),
                                           ("--broadcast-fraction", "broadcast_fraction"))
                   if given(args, name)]
    if getattr(args, "link_loads", None) is not None:
        given_flags.append("--link-loads")
    if args.pattern != "uniform":
        given_flags.append("--traffic")
    if args.injection != "bernoulli":
        given_flags.append("--injection")
    if given_flags:
        raise UsageError(f"--trace {args.trace}: the trace gives the packets; "
                         f"{', '.join(given_flags)} cannot be given with it")
    if args.latencies is not None:
        output.file(args.latencies, "--latencies", (".csv", ".json"))
    try:
        packets = read_trace(args.trace, family.terminal_count(network),
                             network.max_packet_length)
    except TraceError as error:
        raise UsageError(f"--trace {error}") from None
    if args.check == "end-to-end" and (args.simulator != "verilator" or args.waves):
        raise UsageError(f"--trace {args.trace}: --check end-to-end replays a trace with the C++ "
                         "program on Verilator (without --waves); use --check hops on Icarus "
                         "or with waveforms")
    backpressure = backpressure_settings(args)
    if args.check == "hops" and backpressure["stall_bursts"]:
        raise UsageError(f"--stall-bursts {backpressure['stall_bursts']}: applies to --check "
                         "end-to-end")
    return {"trace": str(args.trace.resolve()), "packets": len(packets), "seed": args.seed,
            "eject_ready": backpressure["eject_ready"]}


def check_traffic(network, args, mix: LengthMix) -> None:
    """The rules between a run's settings and with ``network`` (each setting's own range is
    its declaration's, checked by :func:`resolve`)."""
    family = family_for(network)
    header = family.header_width(network)
    if network.flit_width < header + MIN_SEQUENCE_BITS:
        raise UsageError(f"--flit-width {network.flit_width}: twinnet sim numbers packets in the "
                         f"head flit's payload and needs at least {MIN_SEQUENCE_BITS} bits "
                         f"there; this network's header takes {header}, so the flit width must "
                         f"be at least {header + MIN_SEQUENCE_BITS}")
    if args.check == "hops" and args.pattern not in HOPS_TRAFFIC:
        raise UsageError(f"--traffic {args.pattern}: --check hops drives "
                         f"{' and '.join(HOPS_TRAFFIC)} only; leave out --check hops (the "
                         "hardware end-to-end check drives every pattern)")
    if args.pattern == "all-pairs":
        for flag, name in (("--packets", "packets"), ("--rate", "rate")):
            if given(args, name):
                raise UsageError(f"{flag} {getattr(args, name)}: does not apply to --traffic "
                                 "all-pairs (which sends one packet per pair)")
    _check_rate(args, mix.mean(), family.terminal_count(network))
    fraction = getattr(args, "broadcast_fraction", 0.0)
    if fraction and family.broadcast_route(network, 0) is None:
        raise UsageError(f"--broadcast-fraction {fraction}: needs routers that replicate "
                         f"broadcasts, which {network.name} lacks; build them with "
                         "--broadcast (king family, KM and KT)")
    if fraction and args.pattern != "uniform":
        raise UsageError(f"--broadcast-fraction {fraction}: applies only to --traffic "
                         f"uniform, not {args.pattern}")
    _check_engine(args)


def _check_rate(args, length: float, pes: int) -> None:
    """``--rate`` against the mean packet ``length`` and the injection window on ``pes``."""
    rate, packets = args.rate, args.packets
    if rate > 1 / length:
        raise UsageError(f"--rate {rate}: must be above 0 and at most 1/{length:g} = "
                         f"{1 / length:g} packets per PE per cycle (a PE port takes one flit "
                         f"per cycle and a packet has {length:g} flits on average)")
    lowest = packets / (pes * MAX_INJECTION_CYCLES)
    if rate < lowest:
        raise UsageError(f"--rate {rate}: {packets} packets on {pes} PEs would need more than "
                         f"{MAX_INJECTION_CYCLES:,} cycles of injection; the rate must be at "
                         f"least {lowest:.3g} packets per PE per cycle (or send fewer --packets)")


def _check_engine(args) -> None:
    """The settings that only the hardware's end-to-end check (and its engine) takes."""
    if args.check == "hops" and args.injection != "bernoulli":
        raise UsageError(f"--injection {args.injection}: applies only to --check end-to-end "
                         "(the per-hop scoreboard injects by Bernoulli trials)")
    if args.check == "hops" and args.stall_bursts:
        raise UsageError(f"--stall-bursts {args.stall_bursts}: applies to --check "
                         "end-to-end (the per-hop scoreboard's PEs push back with "
                         "--eject-ready only)")
    loads = getattr(args, "link_loads", None)
    if loads is not None:
        from .draw_cmd import picture

        picture("--link-loads", loads)
        if args.check != "end-to-end":
            raise UsageError(f"--link-loads {loads}: applies only to --check end-to-end (the "
                             "link counters are read with the traffic harness)")
    threads = getattr(args, "threads", 1)
    if threads > 1 and (args.check != "end-to-end" or args.simulator != "verilator"
                        or args.waves):
        raise UsageError(f"--threads {threads}: applies to --check end-to-end on Verilator "
                         "without --waves (the C++ program's threads)")


def end_to_end_point(network, args, mix: LengthMix) -> Point:
    """The point of an end-to-end run: ``--packets`` at ``--rate`` measured (all-pairs: one
    packet to every other PE, paced at one packet per 8 longest packets' cycles and
    measured from the start)."""
    pes, length = family_for(network).terminal_count(network), mix.mean()
    point = Point(pattern=args.pattern, rate=float(args.rate), seed=args.seed,
                  warmup=args.warmup, measure=max(1, round(args.packets / (args.rate * pes))),
                  hotspot_fraction=args.hotspot_fraction, lengths=point_lengths(mix),
                  count_links=getattr(args, "link_loads", None) is not None,
                  broadcast_fraction=float(getattr(args, "broadcast_fraction", 0.0)),
                  **backpressure_settings(args))
    if args.pattern != "all-pairs":
        return dataclasses.replace(point, **injection_settings(args, args.rate, length))
    longest = network.max_packet_length
    return dataclasses.replace(point, rate=1 / (8 * longest), warmup=0,
                               measure=(pes - 1) * 8 * longest)


def hops_settings(args, mix: LengthMix) -> dict:
    """The settings of the per-hop scoreboard's ``uniform_traffic`` test."""
    settings = {"packets": args.packets, "rate": float(args.rate),
                "eject_ready": float(args.eject_ready), "seed": args.seed,
                "lengths": point_lengths(mix)}
    fraction = getattr(args, "broadcast_fraction", 0.0)
    return {**settings, "broadcast_fraction": float(fraction)} if fraction else settings


def _lengths_line(point: dict) -> list[str]:
    """The shares of the packets' lengths, when the engine counted them and there are
    several."""
    counted = {int(length): count
               for length, count in (point.get("injected_lengths") or {}).items()}
    if len(counted) < 2:
        return []
    total = sum(counted.values())
    shares = ", ".join(f"{length}: {100 * count / total:.1f} %"
                       for length, count in sorted(counted.items()))
    return [f"  packet lengths          {shares} of {total} packets injected"]


def point_lengths(mix: LengthMix) -> list:
    """A mix as a point's ``lengths``: ``[[lo, hi, weight], …]``."""
    return [[lo, hi, weight] for (lo, hi), weight in zip(mix.classes, mix.weights)]


def check_simulator(simulator: str) -> None:
    """Stop with one line when ``simulator`` cannot run here."""
    from twinnet.sim_tb import runner  # cocotb only when simulating

    reason = runner.missing(simulator)
    if reason:
        raise UsageError(f"--simulator {simulator}: cannot run here: {reason}")


def build_folder(network, args) -> Path:
    """Where ``network`` is built: one folder per network name (which encodes every
    parameter that changes the Verilog), simulator and check (end to end: the traffic
    harness; per hop: with or without the link trace)."""
    if args.check == "end-to-end":
        # (The link counters are a build of their own.)
        suffix = "-links" if getattr(args, "link_loads", None) is not None else ""
        return output.target(args.out, f"{network.name}-{args.simulator}-traffic{suffix}",
                             "--out")
    name = f"{network.name}-{args.simulator}" + ("-notrace" if args.no_trace else "")
    return output.target(args.out, name, "--out")


def simulate_uniform(network, args) -> Report:
    """Run the ``--traffic`` pattern on ``network`` with the flags in ``args``; report the
    results (the name is kept for ``twinnet demo``)."""
    family = family_for(network)
    traffic = args.pattern
    if network.ni == "axi-stream":
        return _frames(network, args, family)
    if getattr(args, "trace", None) is not None:
        settings = trace_settings(network, args)
        check_ranks(args, network.flit_width, settings)
        return _replay(network, args, family, settings)
    if getattr(args, "latencies", None) is not None:
        raise UsageError(f"--latencies {args.latencies}: writes the times of a --trace run's "
                         "packets; give --trace FILE too")
    mix = length_settings(network, args)
    check_traffic(network, args, mix)
    end_to_end = args.check == "end-to-end"
    settings = (end_to_end_point(network, args, mix).to_dict() if end_to_end
                else hops_settings(args, mix))
    check_ranks(args, network.flit_width, settings)
    build_dir = build_folder(network, args)
    check_simulator(args.simulator)
    print(f"twinnet sim: {network.name} ({family.terminal_count(network)} PEs) on "
          f"{args.simulator}", file=sys.stderr)
    if end_to_end:
        return _end_to_end(network, args, family, settings, build_dir)
    test = "uniform_traffic" if traffic == "uniform" else "all_pairs"
    test_settings = settings if traffic == "uniform" else {
        "seed": settings["seed"], "eject_ready": settings["eject_ready"]}
    logs, results = _simulate(network, args, family, build_dir, {test: test_settings},
                              trace=not args.no_trace)
    measured = results[test]
    from twinnet.sim_tb import network_sim

    manifest = network_sim.manifest_of(build_dir)
    crossings = (family.internal_crossings(manifest, measured["link_heads"])
                 if measured.get("hops_checked") else None)
    measured = {key: value for key, value in measured.items() if key != "link_heads"}
    if crossings is not None:
        measured["internal_crossings"] = crossings
    lines = (_uniform_lines(network, family, settings, measured) if traffic == "uniform"
             else _all_pairs_lines(network, family, measured))
    if crossings is not None:
        by_stage = {}
        for entry in crossings:
            by_stage.setdefault(entry["stage"], set()).add(entry["crossings"])
        lines.append("  internal crossings      " + "; ".join(
            f"stage {stage}: {_span(values)} per twin switch"
            for stage, values in sorted(by_stage.items())))
    lines.append(f"  build and logs          {logs}")
    return Report("\n".join(lines), {
        "network": network.name, "family": family.name, "parameters": network.to_dict(),
        "simulator": args.simulator, "check": "hops",
        "traffic": {"pattern": traffic, **test_settings},
        "results": measured, "build_dir": str(logs)})


def refuse_traffic_flags(args, refused, instead: str) -> None:
    """A run through the AXI4-Stream interfaces refuses, in one line, the flags of
    ``refused`` (settings, or other flags' argparse destinations) given with a value other
    than the default: they drive the routers' own traffic; ``instead`` says what the command
    does and takes."""
    shown = []
    for name in refused:
        each = SETTINGS.get(name)
        if getattr(args, name, None) in (None, args.setting_defaults.get(name)):
            continue
        flag = each.flag if each is not None and each.flag else "--" + name.replace("_", "-")
        value = getattr(args, name)
        shown.append(flag if value is True else f"{flag} {value}")
    if shown:
        raise UsageError(f"{', '.join(shown)}: drives the routers' own traffic; with --ni "
                         f"axi-stream {instead}")


def _frames(network, args, family) -> Report:
    """``--ni axi-stream``: frames of 1 byte to the longest from every PE to PEs drawn
    uniformly (itself included) through the AXI4-Stream interfaces, driven by cocotbext-axi
    (:func:`twinnet.sim_tb.axi_stream_sim.simulate_frames`), each checked; ``--packets`` frames
    in all, ``--eject-ready`` the chance that a master's core takes a beat in a cycle."""
    from twinnet.sim_tb.axi_stream_sim import simulate_frames

    refuse_traffic_flags(args, FRAME_REFUSED, "twinnet sim sends frames through the "
                         "interfaces and takes only --packets (frames), --eject-ready, --seed, "
                         "--simulator, --waves, --out and --json (see 'twinnet sim --help')")
    frames, eject, seed = args.packets, args.eject_ready, args.seed
    check_simulator(args.simulator)
    pes = family.terminal_count(network)
    build_dir = output.target(args.out, f"{network.name}-{args.simulator}-frames", "--out")
    print(f"twinnet sim: {network.name} ({pes} PEs, AXI4-Stream) on {args.simulator}",
          file=sys.stderr)
    per_pe = -(-frames // pes)
    try:
        result = simulate_frames(network, args.simulator, build_dir, family=family,
                                 frames=per_pe, bad_dest=0, oversize=0, pause=0.0,
                                 sink_pause=1.0 - eject, seed=seed, waves=args.waves)
    except AssertionError as error:
        raise CheckFailed(f"{network.name} on {args.simulator}: {' '.join(str(error).split())}"
                          f"; details in {build_dir / 'test.log'}") from None
    delivered, cycles = result["delivered"], result["cycles"]
    size = result["config"]["sizes"]
    lines = [f"{network.name}: {delivered} frames of {size[0]} to {size[1]} bytes through the "
             f"AXI4-Stream interfaces, each delivered once, whole and byte for byte with tid "
             "its sender" + (", in order per pair" if result["config"]["ordered"] else ""),
             f"  cycles                  {cycles}",
             f"  frames per PE per cycle {delivered / pes / cycles:.4f}",
             f"  build and logs          {build_dir}"]
    return Report("\n".join(lines), {
        "network": network.name, "family": family.name, "parameters": network.to_dict(),
        "simulator": args.simulator, "frames": {"per_pe": per_pe, "eject_ready": eject,
                                                "seed": seed},
        "results": {key: value for key, value in result.items() if key != "config"},
        "build_dir": str(build_dir)})


def _simulate(network, args, family, build_dir: Path, tests: dict, *, trace: bool = True,
              link_counters: bool = False):
    """Run ``tests`` through :func:`twinnet.sim_tb.network_sim.simulate`; return the folder of
    the logs (a build with waveforms sits beside the plain one) and the results. A failed
    check stops with one line (exit status 1)."""
    from twinnet.sim_tb import network_sim

    logs = build_dir.with_name(build_dir.name + "-waves") if args.waves else build_dir
    try:
        return logs, network_sim.simulate(
            network, args.simulator, build_dir, tests, family=family, trace=trace,
            waves=args.waves, log=True, run_dir=logs, link_counters=link_counters,
            progress=lambda line: print(f"  {line}", file=sys.stderr))
    except network_sim.SimulationFailed as failure:
        raise CheckFailed(f"{network.name} on {args.simulator}: {failure.summary}; "
                          f"details in {logs / 'test.log'}") from None


def _replay(network, args, family, settings: dict) -> Report:
    """``--trace``: the trace on either engine; each packet's times to ``--latencies``."""
    from twinnet.sim_tb import network_sim

    build_dir = build_folder(network, args)
    check_simulator(args.simulator)
    latencies = (args.latencies or build_dir / f"{network.name}-latencies.csv").resolve()
    print(f"twinnet sim: {network.name} ({family.terminal_count(network)} PEs) on "
          f"{args.simulator}, replaying {args.trace} ({settings['packets']} packets)",
          file=sys.stderr)
    settings = {**settings, "latencies": str(latencies)}
    if args.check == "end-to-end":
        logs, results = _simulate(network, args, family, build_dir, {
            network_sim.TRAFFIC_TEST: {"points": [settings], "threads": args.threads,
                                       "ranks": getattr(args, "ranks", 1)}})
        measured = results[network_sim.TRAFFIC_TEST]["points"][0]
    else:
        logs, results = _simulate(network, args, family, build_dir, {"trace_replay": settings},
                                  trace=not args.no_trace)
        measured = results["trace_replay"]
    lines = [
        f"{network.name}: trace {args.trace}, checked "
        + ("in hardware" if args.check == "end-to-end" else "hop by hop"),
        f"  packets delivered       {measured['packets']} of {measured['trace_packets']}, "
        f"{_checked(family, network)}, at the right PE",
        f"  mean latency            {measured['mean_packet_latency']:.2f} cycles created to "
        f"tail out (largest {measured['max_packet_latency']}); "
        f"{measured['mean_latency']:.2f} head in to head out",
        f"  per packet              {measured['latencies']}",
        f"  simulated               {measured['cycles']} cycles in "
        f"{measured['wall_seconds']:.1f} s",
        f"  build and logs          {logs}",
    ]
    return Report("\n".join(lines), {"network": network.name, "trace": str(args.trace),
                                      "results": measured})


def _end_to_end(network, args, family, settings: dict, build_dir: Path) -> Report:
    """The run with traffic generated and checked in hardware (``--check end-to-end``)."""
    from twinnet.sim_tb import network_sim

    logs, results = _simulate(network, args, family, build_dir, {network_sim.TRAFFIC_TEST: {
        "points": [settings], "threads": getattr(args, "threads", 1),
        "ranks": getattr(args, "ranks", 1)}},
        link_counters=bool(settings.get("count_links")))
    point = results[network_sim.TRAFFIC_TEST]["points"][0]
    lengths = ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi, _ in point["lengths"])
    lines = [
        f"{network.name}: {settings['pattern']} traffic, seed {settings['seed']}, checked in "
        "hardware",
        f"  packets delivered       {point['packets']}, {_checked(family, network)}, "
        "at the right PE",
        *([f"  broadcasts              {point['broadcasts_sent']} sent, "
           f"{point['broadcast_copies_delivered']} copies delivered: one at every other router "
           f"({point['copies_per_broadcast']} each), once, intact, in order per source"]
          if point.get("broadcasts_sent") else []),
        f"  offered load            {point['offered_flits_per_pe_cycle']:.3f} flits/PE/cycle"
        f" ({point['overflowed']} packets refused by full source queues)",
        f"  accepted throughput     {point['accepted_flits_per_pe_cycle']:.3f} flits/PE/cycle "
        f"over the {settings['measure']} measured cycles",
        f"  mean latency            {point['mean_latency']:.2f} cycles in the network, "
        f"{point['mean_total_latency']:.2f} with source queueing ("
        + (f"max {point['max_latency']}; " if point["max_latency"] is not None else "")
        + f"{point['measured_packets']} measured packets of {lengths} flits, "
        f"{point['mean_length']:.2f} on average)"
        if point["mean_latency"] is not None else
        "  mean latency            no measured unicast packet"
        + (" (every packet was a broadcast)" if point.get("broadcasts_sent") else ""),
        *_lengths_line(point),
        *_hops_line(point),
        *_backpressure_line(point),
        *_link_load_lines(network, family, point, getattr(args, "link_loads", None)),
        f"  simulated               {point['cycles']} cycles in {point['wall_seconds']:.1f} s "
        f"({point['cycles_per_second']:.0f} cycles/s, {ENGINE_WORDS[point['engine']]})",
        f"  build and logs          {logs}",
    ]
    return Report("\n".join(lines), {
        "network": network.name, "family": family.name, "parameters": network.to_dict(),
        "simulator": args.simulator, "check": "end-to-end", "traffic": settings,
        "results": point, "build_dir": str(logs)})


def _link_load_lines(network, family, point: dict, picture) -> list[str]:
    """The loads of ``point``'s links in a few lines, and its load map drawn into
    ``picture``."""
    loads = point.get("link_loads")
    if not loads:  # (a point that counted none, or a point's setting: false)
        return []
    from .draw_cmd import load_map

    lines = []
    for channel in ("network", "internal", "injection", "ejection"):
        busy = [load["busy"] for load in loads if load["channel"] == channel]
        if busy:
            blocked = sum(load["blocked"] for load in loads if load["channel"] == channel)
            lines.append(f"  {channel + ' channels':<24}{len(busy)}: mean "
                         f"{sum(busy) / len(busy):.3f}, max {max(busy):.3f} flits/cycle, "
                         f"blocked {blocked} cycles")
    channels = [load for load in loads if "link" in load]
    if channels:
        top = max(channels, key=lambda load: load["busy"])
        lines.append(f"  busiest link            {top['router']} {top['port']} -> "
                     f"{top['to']['router']} {top['to']['port']}: {top['packets']} packets, "
                     f"{top['flits']} flits")
    histogram = load_map(network, family, loads, Path(picture),
                         f"{network.name}: {point['pattern']} at {point['rate']:g}")
    lines.append(f"  load map                {picture} (histogram: {histogram})")
    return lines


def _backpressure_line(point: dict) -> list[str]:
    if point["eject_ready"] == 1 and not point["stall_bursts"]:
        return []
    bursts = (f", stall bursts of up to {point['stall_bursts']} cycles"
              if point["stall_bursts"] else "")
    return [f"  back-pressure           PEs take a flit with probability "
            f"{point['eject_ready']:g}{bursts}: {point['refused']} flits refused"]


def _span(values) -> str:
    return str(min(values)) if min(values) == max(values) else f"{min(values)}–{max(values)}"


def _hops_line(measured: dict) -> list[str]:
    if measured.get("mean_hops") is None:
        return []
    return [f"  mean hops               {measured['mean_hops']:.4f} router-to-router links per "
            f"packet (largest {measured['max_hops']})"]


def _checked(family, network) -> str:
    """What was checked of every packet: in order per pair only where the routing keeps it."""
    if family.in_order(network):
        return "each once, intact, in order per pair"
    return "each once, intact (a pair's packets may pass each other: checked by hash sums)"


def _uniform_lines(network, family, settings: dict, uniform: dict) -> list[str]:
    accepted = uniform["accepted_flits_per_pe_cycle"]
    return [
        f"{network.name}: uniform random traffic, seed {settings['seed']}",
        f"  packets delivered       {uniform['packets']} of {uniform['packets']} "
        f"({uniform['flits']} flits), {_checked(family, network)}"
        + (", every hop as the model says" if uniform["hops_checked"] else ""),
        f"  offered load            {uniform['offered_flits_per_pe_cycle']:.3f} flits/PE/cycle",
        "  accepted throughput     " + (
            f"{accepted:.3f} flits/PE/cycle (over the {uniform['injection_cycles']} injection "
            "cycles)" if accepted is not None else
            "not measured: no unicast packet" if not uniform["packets"] else
            f"not measured: the {uniform['injection_cycles']}-cycle injection window is too "
            f"short against the latency (send more packets)"),
        f"  delivered               {uniform['delivered_flits_per_pe_cycle']:.4f} "
        f"flits/PE/cycle over the whole run ({uniform['cycles']} cycles)",
        f"  mean latency            {uniform['mean_latency']:.2f} cycles in the network, "
        f"{uniform['mean_total_latency']:.2f} with source queueing (max "
        f"{uniform['max_latency']})" if uniform["packets"] else
        "  mean latency            no unicast packet (every packet was a broadcast)",
        *_lengths_line(uniform),
        *_hops_line(uniform),
        *([f"  broadcasts              {uniform['broadcasts_sent']} sent, "
           f"{uniform['broadcast_copies_delivered']} copies delivered: one at every other "
           "router, intact, along the forwarding rule"]
          if uniform.get("broadcasts_sent") else []),
        f"  simulated               {uniform['cycles']} cycles in {uniform['wall_seconds']:.1f} s "
        f"({uniform['cycles_per_second']:.0f} cycles/s)",
    ]


def _all_pairs_lines(network, family, pairs: dict) -> list[str]:
    return [
        f"{network.name}: all pairs (every PE sends one packet to every other PE)",
        f"  packets delivered       {pairs['packets']}, {_checked(family, network)}"
        + (", every hop as the model says" if pairs["hops_checked"] else ""),
        *_hops_line(pairs),
    ]
