"""``twinnet sim``: generate a network, simulate uniform random traffic, report the results.

The network comes from the same preset/TOML/flags as ``twinnet gen``; the simulation is
:func:`twinnet.sim_tb.twin_network_sim.simulate` running the ``uniform_traffic`` cocotb test,
whose scoreboard checks every packet (and, with the link trace, every hop) against the
reference model.
"""

import sys
from pathlib import Path

from twinnet.model import checks

from . import gen_cmd
from .cli import CheckFailed, Report, add_json_flag

SIMULATORS = ("verilator", "icarus")


def register(commands) -> None:
    parser = commands.add_parser(
        "sim", help="simulate a network under uniform random traffic",
        description="Generate a twin-torus network, build it on Verilator or Icarus and "
                    "simulate uniform random traffic: every packet is checked against the "
                    "reference model (delivered once, intact, in order, and hop by hop unless "
                    "--no-trace). Prints packets delivered, latency and throughput.",
        epilog="network flags as for 'twinnet gen'; presets: " + ", ".join(gen_cmd.PRESETS))
    gen_cmd.add_network_args(parser)
    add_traffic_args(parser)
    parser.set_defaults(func=run)


def add_traffic_args(parser, *, packets: int = 2000, rate: float = 0.02) -> None:
    """Simulation flags (also used by ``twinnet demo``)."""
    parser.add_argument("--simulator", choices=SIMULATORS, default="verilator",
                        help="simulator (default verilator)")
    parser.add_argument("--packets", type=int, default=packets,
                        help=f"packets to send (default {packets})")
    parser.add_argument("--rate", type=float, default=rate,
                        help=f"packets offered per PE per cycle, in (0, 1] (default {rate})")
    parser.add_argument("--eject-ready", type=float, default=1.0,
                        help="probability a PE accepts an ejected flit in a cycle (default 1)")
    parser.add_argument("--seed", type=int, default=1, help="traffic seed (default 1)")
    parser.add_argument("--no-trace", action="store_true",
                        help="leave out the link trace (faster; hops are then not checked)")
    parser.add_argument("--waves", action="store_true",
                        help="dump waveforms (FST on Icarus, VCD on Verilator)")
    parser.add_argument("--out", type=Path, default=Path("build"),
                        help="build folder (default ./build/<network>-<simulator>)")
    add_json_flag(parser)


def run(args) -> Report:
    return simulate_uniform(gen_cmd.network_from_args(args), args)


def simulate_uniform(network, args) -> Report:
    """Run ``uniform_traffic`` on ``network`` with the flags in ``args``; report the results."""
    settings = {"packets": checks.check_int("packets", args.packets, minimum=1),
                "rate": checks.check_fraction("rate", args.rate),
                "eject_ready": checks.check_fraction("eject-ready", args.eject_ready),
                "seed": checks.check_int("seed", args.seed)}
    from twinnet.sim_tb import runner, twin_network_sim  # cocotb only when simulating

    reason = runner.missing(args.simulator)
    if reason:
        raise ValueError(f"simulator {args.simulator!r} cannot run here: {reason}")
    build_dir = args.out / f"{network.name}-{args.simulator}"
    print(f"twinnet sim: {network.name} ({network.topology.pe_count} PEs, "
          f"{network.topology.router_count} cards) on {args.simulator}", file=sys.stderr)
    # The simulator's build, logs and waveform: a traced build sits beside the plain one.
    logs = build_dir.with_name(build_dir.name + "-waves") if args.waves else build_dir
    try:
        results = twin_network_sim.simulate(
            network, args.simulator, build_dir, {"uniform_traffic": settings},
            trace=not args.no_trace, waves=args.waves, log=True,
            progress=lambda line: print(f"  {line}", file=sys.stderr))
    except AssertionError as error:
        raise CheckFailed(f"{network.name} on {args.simulator}: {error}; the scoreboard's "
                          f"errors are in {logs / 'test.log'}") from None
    uniform = results["uniform_traffic"]
    text = "\n".join([
        f"{network.name} on {args.simulator}: uniform random traffic, seed {settings['seed']}",
        f"  packets delivered       {uniform['packets']} of {uniform['packets']} "
        f"({uniform['flits']} flits), each once, intact, in order"
        + (", every hop as the model says" if uniform["hops_checked"] else ""),
        f"  offered load            {uniform['offered_flits_per_pe_cycle']:.3f} flits/PE/cycle",
        f"  accepted throughput     {uniform['accepted_flits_per_pe_cycle']:.3f} flits/PE/cycle "
        f"(over the {uniform['injection_cycles']} injection cycles)",
        f"  mean latency            {uniform['mean_latency']:.2f} cycles in the network, "
        f"{uniform['mean_total_latency']:.2f} with source queueing (max "
        f"{uniform['max_latency']})",
        f"  simulated               {uniform['cycles']} cycles in {uniform['wall_seconds']:.1f} s "
        f"({uniform['cycles_per_second']:.0f} cycles/s)",
        f"  build and logs          {logs}",
    ])
    return Report(text, {"network": network.name, "parameters": network.to_dict(),
                         "simulator": args.simulator, "traffic": settings,
                         "results": uniform, "build_dir": str(logs)})
