"""``twinnet board``: a network's self-test on an FPGA board.

``twinnet board list`` names the boards (:data:`twinnet.boards.targets.BOARDS`) and the
network each runs by default; ``twinnet board build --board NAME`` builds the self-test top
(:class:`twinnet.hdl.selftest.SelfTest`: traffic generators and checkers on every PE, a
pass/fail LED pair and a UART report) for the board's default network, or for the network the
FAMILY, preset, TOML file and flags describe (as for ``twinnet gen``), into
``OUT/<board>-<network>/``, with the pip-installed YoWASP tools.
"""

import sys
from pathlib import Path

from twinnet.errors import CheckFailed
from twinnet.families import family_for
from twinnet.gen import output

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag


def register(commands) -> None:
    from twinnet.boards.targets import BOARDS

    parser = commands.add_parser(
        "board", help="build a network's self-test for an FPGA board",
        description="Build a network's self-test for an FPGA board: every PE gets a traffic "
                    "generator and a checker; LEDs show pass and fail and the UART repeats "
                    "'twinnet sent … recv … err … PASS'. 'board list' names the boards.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the boards and their default networks",
                                 description="The boards and the network each runs by "
                                             "default.")
    add_json_flag(listing)
    listing.set_defaults(func=run_list)
    build = actions.add_parser(
        "build", help="build a board's self-test bitstream",
        description="Build the self-test of a network for a board: the network's Verilog "
                    "with traffic generators and checkers, the board's clock, LEDs and UART, "
                    "synthesis, place-and-route and the bitstream (several minutes). Without "
                    "network flags the board's default network; progress on stderr.",
        epilog="Network flags as for 'twinnet gen'. " + gen_cmd.limits_help() +
               f" Boards: {', '.join(BOARDS)}.")
    build.add_argument("--board", required=True, choices=BOARDS, metavar="NAME",
                       help=f"one of {', '.join(BOARDS)}")
    gen_cmd.add_network_args(build, interfaces=True)
    build.add_argument("--out", type=parse.path, default=Path("out"),
                       help="parent folder: the build goes to OUT/<board>-<network>/ "
                            "(default ./out)")
    build.add_argument("--no-bitstream", action="store_true",
                       help="write the Verilog, constraints and build script only")
    add_json_flag(build)
    build.set_defaults(func=run_build)


def run_list(args) -> Report:
    from twinnet.boards.targets import BOARDS, default_network

    rows = {name: {"platform": board.platform, "clock_mhz": board.test_mhz,
                   "network": default_network(name).name}
            for name, board in BOARDS.items()}
    text = "\n".join(f"{name}: {row['network']} at {row['clock_mhz']} MHz ({row['platform']})"
                     for name, row in rows.items())
    return Report(text, {"boards": rows})


def _network_given(args) -> bool:
    """Whether the command line describes a network (else the board's default is built)."""
    return gen_cmd.flags_given(args)


def run_build(args) -> Report:
    from twinnet.boards.targets import board_build, check_frames, default_network
    from twinnet.gen.fpga import FpgaError, check_placeable

    network = gen_cmd.network_from_args(args) if _network_given(args) \
        else default_network(args.board)
    # A network that cannot be placed is refused in seconds, not after synthesis.
    check_placeable(network, family_for(network), f"--board {args.board}",
                    "give a smaller network")
    if network.ni == "axi-stream":
        try:
            check_frames(network, family_for(network))
        except ValueError as error:
            raise ValueError(f"--ni axi-stream: {error}") from None
    outdir = output.target(args.out, f"{args.board}-{network.name}", "--out")
    print(f"twinnet board: {network.name} on {args.board} -> {outdir}", file=sys.stderr,
          flush=True)
    try:
        built = board_build(args.board, outdir, network, do_build=not args.no_bitstream,
                            progress=lambda line: print(f"  {line}", file=sys.stderr,
                                                        flush=True))
    except FpgaError as error:
        raise CheckFailed(f"board: {error}") from None
    lines = [f"{args.board}: {network.name} in {outdir}"]
    if "bitstream" in built:
        used = ", ".join(f"{kind} {count}/{built['available'][kind]}"
                         for kind, count in sorted(built["utilization"].items()))
        lines += [f"  bitstream {outdir / built['bitstream']}",
                  f"  Fmax {built['fmax_mhz_min']} MHz (runs at {built['clock_mhz']} MHz); "
                  f"used {used}"]
    else:
        lines.append(f"  {len(built['files'])} files (no bitstream: --no-bitstream)")
    return Report("\n".join(lines), built)
