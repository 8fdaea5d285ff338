"""``twinnet fpga``: synthesis and place-and-route of a router or a small network.

The network comes from the same preset/TOML/flags as ``twinnet gen`` (any family); the design
is one of its router kinds (``--design router``, the default; ``--router-kind`` picks one) or
the whole network (``--design network``, at most
:data:`twinnet.gen.fpga.MAX_NETWORK_ROUTERS` routers). The flow
is :func:`twinnet.gen.fpga.measure`: LUTs, FFs, LUT RAM, block RAM of the design alone, then
utilisation, Fmax and the critical path from nextpnr on each ``--device``.
"""

import sys
import tempfile
from pathlib import Path

from twinnet.errors import CheckFailed, UsageError
from twinnet.families import family_for
from twinnet.gen import output
from twinnet.model import checks

from . import args as parse
from . import gen_cmd
from .report import Report, add_json_flag

DESIGNS = ("router", "network", "interface")
MAX_SEED = 2**31 - 1


def register(commands) -> None:
    from twinnet.gen.fpga import DEVICES, MAX_NETWORK_ROUTERS, NEXTPNR_ROUTERS

    parser = commands.add_parser(
        "fpga", help="synthesise, place and route a router or a small network",
        description="Synthesise a router kind of a network (or the whole network) with Yosys "
                    "and place and route it with nextpnr (the pip-installed YoWASP tools) on "
                    "one or more FPGAs; report LUTs, FFs, LUT RAM, block RAM, Fmax and the "
                    "critical path. The design is placed inside a harness (an LFSR drives "
                    "its inputs, an XOR of its outputs drives one pin). Progress goes to "
                    "stderr.",
        epilog="Network flags as for 'twinnet gen'. " + gen_cmd.limits_help() +
               f" Devices: {', '.join(DEVICES)}. A network design has at most "
               f"{MAX_NETWORK_ROUTERS} routers. A design that does not fit a device is "
               "reported with nextpnr's utilisation figure (exit status 1).")
    gen_cmd.add_network_args(parser)
    parser.add_argument("--design", choices=DESIGNS, default="router",
                        help="router: one router kind of the network (default); network: "
                             "the whole network (with --ni axi-stream, with its interfaces); "
                             "interface: one PE's AXI4-Stream interfaces (--ni axi-stream)")
    parser.add_argument("--router-kind", type=parse.name, metavar="KIND",
                        help="with --design router: which router kind (default the first; "
                             "'twinnet gen' lists them in the manifest)")
    parser.add_argument("--device", default="ecp5-25f", metavar="LIST",
                        help=f"comma-separated, from {', '.join(DEVICES)} (default ecp5-25f)")
    parser.add_argument("--seed", type=parse.integer, default=1,
                        help=f"nextpnr's placement seed, 0 to {MAX_SEED} (default 1)")
    parser.add_argument("--nextpnr-router", choices=NEXTPNR_ROUTERS,
                        default=NEXTPNR_ROUTERS[0],
                        help=f"nextpnr's router (default {NEXTPNR_ROUTERS[0]}, nextpnr's own); "
                             f"{NEXTPNR_ROUTERS[1]}, its other, for large, congested designs "
                             f"that {NEXTPNR_ROUTERS[0]} routes slowly")
    parser.add_argument("--keep", type=parse.path, metavar="DIR",
                        help="keep the Verilog, netlists, logs and nextpnr reports in DIR")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def devices_of(text: str) -> list[str]:
    from twinnet.gen.fpga import DEVICES

    devices = [device.strip() for device in text.split(",")]
    for device in devices:
        if device not in DEVICES:
            raise UsageError(f"--device {device or repr(text)}: unknown device; allowed: "
                             f"{', '.join(DEVICES)}")
    if len(set(devices)) != len(devices):
        raise UsageError(f"--device {text}: a device is named twice; allowed: each of "
                         f"{', '.join(DEVICES)} once")
    return devices


def say(line: str) -> None:
    print(f"  {line}", file=sys.stderr, flush=True)


def run(args) -> Report:
    from twinnet.gen.fpga import (
        FpgaError,
        check_tools,
        interface_design,
        measure,
        network_design,
        router_design,
    )

    devices = devices_of(args.device)
    checks.check_int("--seed", args.seed, minimum=0, maximum=MAX_SEED)
    if args.router_kind is not None and args.design != "router":
        raise UsageError("--router-kind: only with --design router")
    network = gen_cmd.network_from_args(args)
    family = family_for(network)
    if args.keep:
        output.folder(args.keep, "--keep")
    try:
        check_tools(devices)
    except FpgaError as error:
        raise UsageError(str(error)) from None
    if args.design == "interface" and network.ni != "axi-stream":
        raise UsageError(f"--design interface: measures the AXI4-Stream interfaces; give --ni "
                         f"axi-stream (not {network.ni})")
    if args.design == "network":
        design = network_design(network, family)
    elif args.design == "interface":
        design = interface_design(network, family)
    else:
        design = router_design(network, family, args.router_kind)
    print(f"twinnet fpga: {network.name} ({args.design}) on {', '.join(devices)}",
          file=sys.stderr, flush=True)
    say(f"Verilog: {', '.join(design.sources)}")
    nextpnr = {"seed": args.seed, "nextpnr_router": args.nextpnr_router}
    try:
        if args.keep:
            results = measure(design, devices, args.keep, progress=say, **nextpnr)
        else:
            with tempfile.TemporaryDirectory(prefix="twinnet-fpga-") as folder:
                results = measure(design, devices, Path(folder), progress=say, **nextpnr)
    except FpgaError as error:
        raise CheckFailed(f"fpga: {network.name}: {error}") from None
    results["parameters"] = network.to_dict()
    return Report(describe(results), results)


def describe(results: dict) -> str:
    """The text report: one block per family synthesised alone, one line per device placed."""
    lines = [f"{results['design']} (module {results['module']})"]
    for family, alone in results["alone"].items():
        lines.append(f"  {family}, alone: {alone['lut4']} LUT4, {alone['ff']} FF, "
                     f"{alone['lutram_dpr16x4']} LUT RAM (DPR16X4), {alone['bram']} block RAM, "
                     f"{alone['carry']} carry")
    for device, placed in results["placed"].items():
        used = ", ".join(f"{kind} {count}/{placed['available'][kind]}"
                         for kind, count in sorted(placed["utilization"].items()))
        lines.append(f"  {device}: Fmax {placed['fmax_mhz_min']} MHz; used {used}")
        path = placed["critical_path"]
        if path:
            lines.append(f"    critical path {path['delay_ns']} ns ({path['logic_ns']} ns "
                         f"logic in {path['logic_steps']} steps, {path['routing_ns']} ns "
                         f"routing): {path['from']} -> {path['to']}")
    return "\n".join(lines)
