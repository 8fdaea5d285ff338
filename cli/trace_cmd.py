"""``twinnet trace``: write a packet trace from one of the patterns, for ``twinnet sim --trace``
or the user's own analysis (:mod:`twinnet.model.trace`)."""

import sys

from twinnet.errors import UsageError
from twinnet.families import family_for
from twinnet.gen import output
from twinnet.model.trace import RateError, generate_trace, trace_text

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag
from .run_settings import add_settings, refuse_unrated, resolve
from .sim_cmd import length_settings, network_for_lengths

#: The settings of ``twinnet trace`` (:mod:`twinnet.sim_tb.settings`).
TRACE_SETTINGS = ("pattern", "rate", "packets", "hotspot_fraction", "packet_lengths",
                  "packet_length_weights", "seed")


def register(commands) -> None:
    parser = commands.add_parser(
        "trace", help="write a packet trace from a traffic pattern",
        description="Write a packet trace ('cycle source destination length' per line, "
                    "docs/traffic.md#traces) for a network: each cycle each PE creates a "
                    "packet with probability --rate to a destination the pattern gives, of a "
                    "length drawn from --packet-lengths. 'twinnet sim --trace FILE' replays "
                    "it on the same network.",
        epilog="Network flags as for 'twinnet gen' (the trace's PEs and longest packet are "
               "the network's).")
    gen_cmd.add_network_args(parser, interfaces=False)
    add_settings(parser, TRACE_SETTINGS, packets=1000)
    parser.add_argument("--out", type=parse.path, required=True, metavar="FILE",
                        help="the trace file to write")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args) -> Report:
    resolve(args)
    refuse_unrated(args, "rate to draw a trace at", "a trace")
    out = output.file(args.out, "--out")
    network = network_for_lengths(args)
    family = family_for(network)
    mix = length_settings(network, args)
    packets, seed = args.packets, args.seed
    terminals = family.terminal_count(network)
    try:
        made = generate_trace(args.pattern, terminals, args.rate, packets, mix, seed=seed,
                              hotspot_fraction=args.hotspot_fraction)
    except RateError as error:
        raise UsageError(f"--rate {args.rate}: {error}") from None
    except ValueError as error:
        raise UsageError(f"--traffic {args.pattern}: {error}") from None
    lengths, weights = mix.text()
    try:
        output.replace_file(out, trace_text(
            made, comment=f"{network.name}: {args.pattern}, rate {args.rate}, lengths "
                          f"{lengths} (weights {weights}), seed {seed}"))
    except OSError as error:
        raise UsageError(f"--out {out}: cannot be written: {error.strerror}") from None
    print(f"twinnet trace: {len(made)} packets over {made[-1].cycle + 1} cycles to {out}",
          file=sys.stderr)
    return Report(f"{out}: {len(made)} packets of {network.name} ({terminals} PEs), "
                  f"{args.pattern} at {args.rate} packets/PE/cycle, cycles 0 to "
                  f"{made[-1].cycle}",
                  {"trace": str(out), "network": network.name, "packets": len(made),
                   "cycles": made[-1].cycle + 1, "pattern": args.pattern, "rate": args.rate,
                   "seed": seed})
