"""FPGA cost of the router: synthesis and place-and-route with the pip-installed YoWASP tools.

Builds the 5-port, 2-VC, 32-bit-flit router (4 ring links with bubble-sized buffers + 1 PE
port, 4-flit packets, 8 flits per VC; a variant with 4 flits per VC; and the 9-port king-torus
router of KT8, 8 links + 1 PE with 2 VCs each, the dateline escape and Knaive routing from
coordinates, and the same router under 2S hop-by-hop adaptive routing over the bubble escape),
then:

* times its Verilog generation (``twinnet.hdl.verilog.convert``; first call in the process
  and best of three warm calls);
* measures it with the flow of ``twinnet fpga`` (:func:`twinnet.gen.fpga.measure`): the
  router alone synthesised for ECP5 and iCE40 (LUTs, FFs, LUT RAM, block RAM), then placed
  and routed on ECP5-25F, iCE40 UP5K and iCE40 HX8K inside the LFSR/XOR harness (the router
  has ~450 I/O bits, more than the packages have pins; the harness adds 64 FFs, ~70 LUTs and
  1 FF). Fmax and the critical path come from nextpnr's report.

Writes ``bench/results/router_fpga.json`` (override with ``--out``), keyed by configuration,
each entry with the commit and tools it was measured with; configurations not run keep their
entries from an existing file.
A device the design does not fit records nextpnr's utilisation line instead of numbers.
Usage::

    .venv/bin/python bench/router_fpga.py [--configs default,small-buffers,king-kt8,king-kt8-2s]
        [--devices ecp5-25f,ice40-up5k,ice40-hx8k] [--seeds 1,2,3] [--keep DIR]
        [--nextpnr-router router2]

Each placed device records ``ns_per_hop``: the router's zero-load cycles per link hop
(``hop_cycles``: its pipeline's, 2 with the bypass) over its Fmax.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from provenance import provenance

from twinnet.cli.gen_cmd import network_from_words
from twinnet.families import family_for, presets
from twinnet.gen import fpga
from twinnet.hdl import king, verilog
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router
from twinnet.model.king_network import KingNetworkConfig

CONFIG = RouterConfig(
    flit_width=32, max_packet_length=4,
    ports=(*[PortConfig("network", vc_count=2, buffer_depth=8, bubble=True)] * 4,
           PortConfig("pe", vc_count=2, buffer_depth=8)))

# iCE40 has no asynchronous-read RAM, so the input FIFOs become flip-flops there; the
# default configuration (10 FIFOs x 8 flits x 41 bits) needs ~8,700 logic cells, more than
# the HX8K's 7,680. This variant keeps 5 ports, 2 VCs and 32-bit flits with one packet of
# buffer per VC (no bubble ports) to show what fits.
CONFIG_SMALL = RouterConfig(
    flit_width=32, max_packet_length=4,
    ports=(*[PortConfig("network", vc_count=2, buffer_depth=4)] * 4,
           PortConfig("pe", vc_count=2, buffer_depth=4)))

#: The king torus KT8 with two VCs per link (the dateline escape): 9 ports, 8 flits per VC.
KING = KingNetworkConfig.from_dict({"kind": "KT", "side": 8, "escape": "dateline"})

#: KT8 under 2S hop-by-hop adaptive routing over the bubble escape (002 Table 2's settings):
#: two VCs per link, VC 0 the escape, VC 1 adaptive; the route result holds the two grades.
KING_2S = KingNetworkConfig.from_dict({"kind": "KT", "side": 8, "routing": "2s"})

#: The presets that carry the papers' settings, whose first router kind (as ``twinnet fpga
#: --preset NAME`` takes it) is measured as ``preset-NAME``: 002's T16, DT16 and KT16 (4 VCs of
#: 32 flits, 2 PEs, iSLIP: 6, 8 and 10 ports), 003's 3DT 4x4x4 card (one 128-flit VC per
#: link; with 2 dateline VCs of 32 flits, 4 on the internal link) and 2-D torus router (one
#: 128-flit VC per link), the fat trees' first switch half, 004's twisted tori and their
#: untwisted peers (4 bubble VCs of 16 flits).
PRESETS = tuple(name for name in presets() if name.startswith(("002-", "003-", "004-", "ft-")))


def preset_router(preset: str, *flags: str):
    """The first router kind of ``preset``'s network (with ``flags``, e.g. ``--buffer-memory
    block``)."""
    network = network_from_words(["--preset", preset, *flags])
    return fpga.router_kind(network, family_for(network))[1]


#: The split router without its bypass (the ``-p3`` configurations).
SPLIT = {"pipeline": 3, "bypass": False}

#: Name → a function building the router to measure: a name without suffix is the compact
#: router (``pipeline=2``, 2 cycles per hop), as the results recorded under it; ``-p3`` the
#: same router with ``pipeline=3`` and ``bypass=False`` (the split router without its bypass,
#: 3 cycles per hop); ``-islip`` that router with ``allocator="islip"`` (one round); ``-bram``
#: with its input buffers in block RAM (``buffer_memory="block"``); ``-bypass`` the split
#: router with its bypass (a link head allocated in its arrival cycle: 2 cycles per link hop;
#: the default);
#: ``preset-`` a preset's router as its
#: network builds it.
CONFIGS = {"default": lambda: Router(replace(CONFIG, pipeline=2), HeaderRouteCompute),
           "small-buffers": lambda: Router(replace(CONFIG_SMALL, pipeline=2),
                                           HeaderRouteCompute),
           "king-kt8": lambda: king.router(replace(KING, pipeline=2),
                                           king.router_ports(KING, (0, 0))),
           "king-kt8-2s": lambda: king.router(replace(KING_2S, pipeline=2),
                                              king.router_ports(KING_2S, (0, 0))),
           "default-p3": lambda: Router(replace(CONFIG, **SPLIT), HeaderRouteCompute),
           "default-p3-bypass": lambda: Router(replace(CONFIG, pipeline=3, bypass=True),
                                               HeaderRouteCompute),
           "small-buffers-p3": lambda: Router(replace(CONFIG_SMALL, **SPLIT),
                                              HeaderRouteCompute),
           "king-kt8-p3": lambda: king.router(replace(KING, **SPLIT),
                                              king.router_ports(KING, (0, 0))),
           "king-kt8-2s-p3": lambda: king.router(replace(KING_2S, **SPLIT),
                                                 king.router_ports(KING_2S, (0, 0))),
           "default-p3-islip": lambda: Router(replace(CONFIG, **SPLIT, allocator="islip"),
                                              HeaderRouteCompute),
           "king-kt8-2s-p3-islip": lambda: king.router(
               replace(KING_2S, **SPLIT, allocator="islip"),
               king.router_ports(KING_2S, (0, 0))),
           "default-p3-bram": lambda: Router(replace(CONFIG, **SPLIT, buffer_memory="block"),
                                             HeaderRouteCompute),
           **{f"preset-{preset}": lambda preset=preset: preset_router(preset)
              for preset in PRESETS},
           **{f"preset-{preset}-bram": lambda preset=preset: preset_router(
               preset, "--buffer-memory", "block") for preset in PRESETS}}


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (Yosys runs as a child)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def generation_times(make_router) -> dict:
    """Wall and CPU seconds of ``verilog.convert``: the first call in this process, then three
    more. CPU time (this process + the Yosys child) is the steadier figure on a shared machine.
    """
    def timed():
        start_wall, start_cpu = time.perf_counter(), cpu_seconds()
        text = verilog.convert(make_router(), name="router")
        return time.perf_counter() - start_wall, cpu_seconds() - start_cpu, text

    first_wall, first_cpu, _ = timed()
    runs = [timed() for _ in range(3)]
    return {"first_s": round(first_wall, 3), "first_cpu_s": round(first_cpu, 3),
            "warm_best_s": round(min(r[0] for r in runs), 3),
            "warm_best_cpu_s": round(min(r[1] for r in runs), 3),
            "warm_all_s": [round(r[0], 3) for r in runs],
            "verilog_bytes": len(runs[-1][2])}


def measure(name: str, devices: list[str], seed: int, keep: Path | None,
            nextpnr_router: str) -> dict:
    """Generation time, then :func:`twinnet.gen.fpga.measure`: the router alone per device
    family, place-and-route per device (a device it does not fit records nextpnr's line)."""
    make_router = CONFIGS[name]
    router = make_router()
    design = fpga.Design(name, router, "router",
                         {"router.v": verilog.convert(router, name="router")})
    results = {"config": router.config.to_dict(), "hop_cycles": router.config.hop_cycles,
               "routing": type(router.route_computes[0]).__name__,
               "generation": generation_times(make_router)}
    print(f"Verilog generation: {results['generation']}")

    def say(line):
        print(f"{name}: {line}", flush=True)

    workdir = Path(keep or tempfile.mkdtemp(prefix="router_fpga_"))
    try:
        results.update(fpga.measure(design, devices, workdir, seed=seed,
                                    nextpnr_router=nextpnr_router, progress=say,
                                    keep_going=True))
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for family, alone in results["alone"].items():
        say(f"alone, {family}: " + ", ".join(f"{k} {v}" for k, v in alone.items()
                                              if k != "cells"))
    for device, placed in results["placed"].items():
        if "fmax_mhz_min" in placed:
            placed["ns_per_hop"] = round(results["hop_cycles"] * 1000 / placed["fmax_mhz_min"],
                                         1)
        say(f"{device}: {placed.get('error') or placed['utilization']}")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="ecp5-25f,ice40-up5k,ice40-hx8k",
                        help=f"comma-separated, from {', '.join(fpga.DEVICES)}")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "router_fpga.json")
    parser.add_argument("--seeds", default="1",
                        help="comma-separated nextpnr seeds (default 1); with several, each "
                             "configuration's entry holds each seed's placement under "
                             "by_seed, and the first seed's at its top")
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"comma-separated, from {', '.join(CONFIGS)}")
    parser.add_argument("--nextpnr-router", choices=fpga.NEXTPNR_ROUTERS,
                        default=fpga.NEXTPNR_ROUTERS[0],
                        help=f"nextpnr's router (default {fpga.NEXTPNR_ROUTERS[0]})")
    parser.add_argument("--keep", type=Path, help="keep the work files in this folder")
    args = parser.parse_args(argv)
    devices = [d for d in args.devices.split(",") if d]
    configs = args.configs.split(",")
    for kind, given, known in (("configs", configs, CONFIGS), ("devices", devices, fpga.DEVICES)):
        if set(given) - set(known):
            parser.error(f"unknown {kind} {sorted(set(given) - set(known))}; known: "
                         f"{', '.join(known)}")
    try:
        fpga.check_tools(devices)
    except fpga.FpgaError as error:
        parser.error(str(error))
    # Configurations not run this time keep their earlier entries.
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    try:
        seeds = [int(seed) for seed in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds {args.seeds}: give integers separated by commas, e.g. 1,2,3")
    for name in configs:
        keep = args.keep / name if args.keep else None
        runs = {seed: measure(name, devices, seed, keep, args.nextpnr_router)
                for seed in seeds}
        results[name] = {**runs[seeds[0]], "provenance": provenance()}
        if len(seeds) > 1:
            results[name]["by_seed"] = {str(seed): run["placed"] for seed, run in runs.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
