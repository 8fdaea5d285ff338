"""``twinnet trace``: write a packet trace from one of the patterns, for ``twinnet sim --trace``
or the user's own analysis (:mod:`twinnet.model.trace`)."""

import sys

from twinnet.errors import UsageError
from twinnet.families import family_for
from twinnet.gen import output
from twinnet.model import checks
from twinnet.model.trace import MAX_TRACE_PACKETS, RateError, generate_trace, trace_text
from twinnet.model.traffic import PATTERNS

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag
from .sim_cmd import (
    MAX_SEED,
    add_length_args,
    hotspot_fraction,
    length_settings,
    network_for_lengths,
)

#: The patterns a trace can be made of (all-pairs is one packet per pair, no rate).
TRACE_PATTERNS = tuple(p for p in PATTERNS if p != "all-pairs")


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
    parser.add_argument("--traffic", choices=TRACE_PATTERNS, default="uniform",
                        help="pattern (default uniform)")
    parser.add_argument("--rate", type=parse.number, default=0.02,
                        help="packets created per PE per cycle, above 0 and at most 1 "
                             "(default 0.02)")
    parser.add_argument("--packets", type=parse.integer, default=1000,
                        help=f"packets in the trace, 1 to {MAX_TRACE_PACKETS:,} (default 1000)")
    parser.add_argument("--hotspot-fraction", type=parse.number, default=0.1,
                        help="--traffic hotspot: share of packets sent to PE 0, 0 to 1 "
                             "(default 0.1)")
    add_length_args(parser)
    parser.add_argument("--seed", type=parse.integer, default=1,
                        help=f"seed of the draws, 0 to {MAX_SEED} (default 1)")
    parser.add_argument("--out", type=parse.path, required=True, metavar="FILE",
                        help="the trace file to write")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def run(args) -> Report:
    out = output.file(args.out, "--out")
    network = network_for_lengths(args)
    family = family_for(network)
    mix = length_settings(network, args)
    packets = checks.check_int("--packets", args.packets, minimum=1, maximum=MAX_TRACE_PACKETS)
    seed = checks.check_int("--seed", args.seed, minimum=0, maximum=MAX_SEED)
    terminals = family.terminal_count(network)
    try:
        made = generate_trace(args.traffic, terminals, args.rate, packets, mix, seed=seed,
                              hotspot_fraction=hotspot_fraction(args.hotspot_fraction))
    except RateError as error:
        raise UsageError(f"--rate {args.rate}: {error}") from None
    except ValueError as error:
        raise UsageError(f"--traffic {args.traffic}: {error}") from None
    lengths, weights = mix.text()
    try:
        output.replace_file(out, trace_text(
            made, comment=f"{network.name}: {args.traffic}, rate {args.rate}, lengths "
                          f"{lengths} (weights {weights}), seed {seed}"))
    except OSError as error:
        raise UsageError(f"--out {out}: cannot be written: {error.strerror}") from None
    print(f"twinnet trace: {len(made)} packets over {made[-1].cycle + 1} cycles to {out}",
          file=sys.stderr)
    return Report(f"{out}: {len(made)} packets of {network.name} ({terminals} PEs), "
                  f"{args.traffic} at {args.rate} packets/PE/cycle, cycles 0 to "
                  f"{made[-1].cycle}",
                  {"trace": str(out), "network": network.name, "packets": len(made),
                   "cycles": made[-1].cycle + 1, "pattern": args.traffic, "rate": args.rate,
                   "seed": seed})
