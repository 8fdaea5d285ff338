"""Generate any network from its netlist: Verilog files and a JSON manifest.

:func:`generate` converts each router kind of a :class:`twinnet.hdl.network.Netlist` once
(``<name>_<kind>.v``), then the top (``<name>.v``, instantiating the kinds by name), and writes
``<name>.manifest.json``: the top's ports, the PE protocol, the head-flit layout, the routers,
the links and, in the family's own section, what the family adds (its parameters, how
terminals are numbered, which headers are malformed). The folder is built under a temporary
name and appears whole only when everything is written (:func:`twinnet.gen.output.staged`);
unchanged files keep their time stamps, so a simulator build of the same network is reused.
"""

import json
import multiprocessing
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from twinnet.hdl import flit, verilog
from twinnet.hdl.network import Netlist, Network, module_ports
from twinnet.hdl.terminals import TerminalCodec

from . import output

MANIFEST_VERSION = 2


def generate_network(config, outdir, *, family=None, trace: bool = False,
                     traffic: bool = False, harness: bool = True, stalls: bool = False,
                     link_counters: bool = False, progress=None, components=None
                     ) -> list[Path]:
    """Generate ``config`` (a family's network configuration) into ``outdir``: its family's
    netlist, manifest section and deadlock verdict through :func:`generate`. ``family``
    defaults to the family ``config`` belongs to (:func:`twinnet.families.family_for`).

    The model's channel-dependency check runs in a second process while this one builds the
    Verilog (on 3DT 8×8×8 each takes tens of seconds). ``traffic`` adds the traffic harness
    (:mod:`twinnet.hdl.traffic`) around the network, for the family's terminal digits (its
    sinks let a pair's packets overtake each other where the family does not keep them in
    order, :meth:`~twinnet.families.Family.in_order`, and sum packet hashes instead);
    ``harness=False`` leaves out its Verilog top (``<name>_traffic.v``), which only a Verilog
    simulation of the harness needs: the C++ program runs the same harness over the sources,
    sinks and routers alone, and the top's conversion grows faster than the terminals (144
    PEs: 18 s of the generation). ``stalls`` builds the routers with their stall counters
    (:mod:`twinnet.hdl.router.stalls`); ``link_counters`` adds the link counters
    (:mod:`twinnet.hdl.link_counter`, see :func:`generate`).
    ``components``, a dict, receives the converted components (see :func:`generate`)."""
    from twinnet.families import family_for

    family = family or family_for(config)
    section = family.section(config)
    say = progress or (lambda text: None)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        check = pool.submit(_timed, family.deadlock, config)
        # (A family that cannot count stalls need not take the keyword.)
        # (Link counters read the routers' ``waits``, which come with their stall counters.)
        netlist = (family.netlist(config, stall_counters=True) if stalls or link_counters
                   else family.netlist(config))

        def deadlock() -> dict | None:
            result, seconds = check.result()
            say(f"deadlock check: {_verdict_line(result)} ({seconds:.1f} s)")
            return result

        digits, ordered = None, True
        axi_stream = None
        if getattr(config, "ni", "flits") == "axi-stream":
            axi_stream = {"digits": _digits(family, config, "AXI4-Stream interfaces"),
                          "beat": config.beat, "separate_clock": config.ni_clock == "separate"}
        if traffic:
            digits = _digits(family, config, "traffic in hardware")
            ordered = family.in_order(config)
        return generate(config.name, netlist, outdir, family=section, trace=trace,
                        progress=progress, deadlock=deadlock, traffic=digits,
                        harness=harness, ordered=ordered, components=components,
                        link_counters=link_counters, axi_stream=axi_stream)


def _digits(family, config, what: str):
    """The family's terminal digits (:meth:`~twinnet.families.Family.terminal_digits`), or
    a ``ValueError`` saying that ``what`` needs them."""
    digits = family.terminal_digits(config)
    if digits is None:
        raise ValueError(f"the {family.name} family does not number its terminals by route "
                         f"fields (Family.terminal_digits): no {what} for it")
    return digits


def _timed(function, *args):
    started = time.perf_counter()
    return function(*args), time.perf_counter() - started


def _verdict_line(verdict: dict | None) -> str:
    if verdict is None:
        return "none for this family"
    if verdict["deadlock_free"]:
        return f"deadlock-free: {verdict['rule']} is acyclic"
    return f"can deadlock: {verdict['rule']} has a cycle"


def generate(name: str, netlist: Netlist, outdir, *, family: dict, trace: bool = False,
             progress=None, deadlock=None, traffic=None, harness: bool = True,
             ordered: bool = True, components=None, link_counters: bool = False,
             axi_stream: dict | None = None) -> list[Path]:
    """Write network ``name`` into ``outdir``; return the files written (manifest last).

    ``family`` is the manifest's family section: a dict with at least ``name`` (the family),
    ``parameters`` (what rebuilds the configuration), ``terminal_order`` and ``malformed``
    (sentences for people), plus anything else the family describes. ``trace`` adds the
    link-trace outputs a testbench uses to follow every hop. ``progress``, if given, is called
    with one line of text per step. ``deadlock`` is called for the manifest's deadlock verdict
    once the Verilog is written (None: the manifest says no check was made). ``traffic``, the
    terminal digits (``[(route field name, radix), …]``, least significant first), adds the
    traffic harness: ``<name>_source.v``, ``<name>_sink.v`` and ``<name>_traffic.v`` (unless
    ``harness`` is false), whose top ``<name>_traffic`` wraps the network (manifest key
    ``traffic``), and the C++ program of the same harness; ``ordered`` says
    whether its sinks expect each pair's packets in order
    (:class:`twinnet.hdl.traffic.TrafficFormat`). ``components``, a
    dict if given, receives the components converted: ``top`` (the
    :class:`twinnet.hdl.network.Network`) and, with ``traffic``, ``harness`` (the
    :class:`twinnet.hdl.traffic.TrafficHarness`), for a wrapper that instantiates them.
    ``link_counters`` adds the link counters (:class:`twinnet.hdl.link_counter.LinkCounters`,
    ``<name>_links.v``) to the top, its ``link_counts`` output, and the C++ program (manifest
    key ``link_counters``: the module, the counters of a row and the links in bus order).
    ``axi_stream`` (``digits``, ``beat``: ``RouterSizes.beat``, ``separate_clock``) adds the
    AXI4-Stream top
    ``<name>_axis`` (:class:`twinnet.hdl.axi_stream.AxiStreamNetwork`) and its interfaces'
    modules (manifest key ``axi_stream``).
    """
    outdir = Path(outdir)
    say = progress or (lambda text: None)
    with output.staged(outdir) as stage:
        written = _write(name, netlist, stage, family, trace, say, deadlock or (lambda: None),
                         traffic, harness, ordered, {} if components is None else components,
                         link_counters, axi_stream)
    return [outdir / path.name for path in written]


def _write(name: str, netlist: Netlist, outdir: Path, family: dict, trace: bool,
           say, deadlock, traffic, harness: bool, ordered: bool, components: dict,
           link_counters: bool = False, axi_stream: dict | None = None) -> list[Path]:
    files, modules = [], modules_of(name, netlist)
    for kind, router in netlist.kinds.items():
        started = time.perf_counter()
        module = modules[kind]
        path = outdir / f"{module}.v"
        path.write_text(verilog.convert(router, name=module))
        files.append(path)
        say(f"{kind}: {path.name} ({time.perf_counter() - started:.1f} s)")
    counters = _write_link_counters(name, netlist, outdir, files, say) if link_counters else None
    started = time.perf_counter()
    components["top"] = top = Network(netlist, modules, trace=trace, link_counters=counters)
    path = outdir / f"{name}.v"
    path.write_text(top.verilog(name))
    files.append(path)
    say(f"top: {path.name}, {len(netlist.routers)} routers "
        f"({time.perf_counter() - started:.1f} s)")
    section = _write_harness(name, netlist, top, outdir, files, traffic, harness, ordered,
                             say, components) if traffic is not None else None
    interfaces = (_write_axi_stream(name, netlist, top, outdir, files, say, components,
                                    **axi_stream) if axi_stream is not None else None)
    manifest = outdir / f"{name}.manifest.json"
    description = describe(name, netlist, top, files, family, deadlock())
    description["traffic"] = section
    description["axi_stream"] = interfaces
    description["link_counters"] = None if counters is None else _link_counters_section(*counters)
    manifest.write_text(json.dumps(description, indent=2))
    files.append(manifest)
    return files


def _write_link_counters(name: str, netlist: Netlist, outdir: Path, files: list, say):
    """``<name>_links.v``, the link counters; returns ``(LinkCounters, module name)``."""
    from twinnet.hdl.link_counter import LinkCounters

    started = time.perf_counter()
    counters, module = LinkCounters(netlist), f"{name}_links"
    path = outdir / f"{module}.v"
    path.write_text(verilog.convert(counters, name=module))
    files.append(path)
    say(f"link counters: {path.name} ({time.perf_counter() - started:.1f} s)")
    return counters, module


def _link_counters_section(counters, module: str) -> dict:
    """The manifest's ``link_counters``: how to read the ``link_counts_<k>`` ports (one bus,
    ``ports`` one after the other from bit 0)."""
    from twinnet.hdl.link_counter import COUNTER_WIDTH, COUNTERS

    return {"module": module, "bus_width": counters.bus_width,
            "ports": [{"name": f"link_counts_{k}", "width": width}
                      for k, width in enumerate(counters.chunks)],
            "counter_width": COUNTER_WIDTH, "counters": list(COUNTERS),
            "links": [[kind, index, vcs] for kind, index, vcs in counters.links]}


def traffic_format(name: str, netlist: Netlist, digits, ordered: bool = True):
    """The traffic harness's format for network ``name`` and the family's terminal
    ``digits``, ``ordered`` or not (:class:`twinnet.hdl.traffic.TrafficFormat`), its module
    names and the per-terminal constants: (format, modules, constants)."""
    from twinnet.hdl import traffic

    flit_format = next(iter(netlist.kinds.values())).flit_format
    fmt = traffic.TrafficFormat(
        flit_format.head_layout,
        [(tuple(field.split(".")[1:]), radix) for field, radix in digits],
        len(netlist.terminals), flit_format.config.max_packet_length, ordered)
    modules = {"network": name, "source": f"{name}_source", "sink": f"{name}_sink"}
    return fmt, modules, traffic.terminal_constants(fmt)


def axi_stream_format(netlist: Netlist, digits, beat: dict):
    """The :class:`twinnet.hdl.axi_stream.AxiStreamFormat` of ``netlist``'s interfaces, for
    the family's terminal ``digits`` and the network's ``beat``
    (:attr:`twinnet.model.sizes.RouterSizes.beat`)."""
    from twinnet.hdl.axi_stream import AxiStreamFormat

    flit_format = next(iter(netlist.kinds.values())).flit_format
    codec = TerminalCodec(flit_format.head_layout,
                          [(tuple(field.split(".")[1:]), radix) for field, radix in digits],
                          len(netlist.terminals))
    return AxiStreamFormat(codec, flit_format.config.max_packet_length, **beat)


def _write_axi_stream(name, netlist, top, outdir, files, say, components, *, digits,
                      beat: dict, separate_clock: bool) -> dict:
    """The AXI4-Stream top ``<name>_axis`` and its interfaces' modules; returns the manifest's
    ``axi_stream`` section: the top, the modules, the beat, the frame limits, the error
    counters and every PE's ports."""
    from twinnet.hdl import axi_stream

    started = time.perf_counter()
    fmt = axi_stream_format(netlist, digits, beat)
    modules = {"network": name, "interface": f"{name}_ni"}
    components["axi_stream"] = wrapper = axi_stream.AxiStreamNetwork(
        top, fmt, modules, separate_clock=separate_clock)
    path = outdir / f"{modules['interface']}.v"
    path.write_text(verilog.convert(wrapper.interface, name=modules["interface"]))
    files.append(path)
    path = outdir / f"{name}_axis.v"
    path.write_text(verilog.convert(wrapper, name=f"{name}_axis"))
    files.append(path)
    say(f"AXI4-Stream top: {path.name}, {len(netlist.terminals)} interfaces "
        f"({time.perf_counter() - started:.1f} s)")
    ports = {port: (direction, size) for port, direction, size in module_ports(wrapper)}

    def listed(prefix: str) -> list[dict]:
        return [{"name": port, "direction": "input" if direction == "i" else "output",
                 "width": size} for port, (direction, size) in ports.items()
                if port.startswith(prefix)]

    return {"top": f"{name}_axis", "verilog": path.name,
            "module": modules["interface"],
            "clock": ("ni_<pe>_clk (rising edge) and ni_<pe>_rst (active high) for PE <pe>'s "
                      "ports and counters; clk and rst for the network" if separate_clock
                      else "clk (rising edge) and rst, every interface and the network"),
            "data_bytes": fmt.data_bytes, "user_width": fmt.user_width,
            "id_width": fmt.id_width,
            "tid": (f"m_axis_<pe>_tid: the slave's tid (bits {fmt.number_width} and up) above "
                    f"the sending PE's number (bits 0 to {fmt.number_width - 1})"
                    if fmt.id_width else "m_axis_<pe>_tid: the sending PE's number"),
            "max_frame_beats": fmt.max_beats, "max_frame_bytes": fmt.max_beats * fmt.data_bytes,
            "frame_packets": fmt.frame_packets, "packet_beats": fmt.packet_beats,
            "reassembly_beats": fmt.reassembly_beats,
            "beat": flit.layout_fields(fmt.beat_layout),
            "counters": {name: f"ni_<pe>_{name}" for name in axi_stream.ERRORS},
            "counter_width": axi_stream.COUNT_WIDTH,
            "pes": [{"pe": pe, "clock": f"ni_{pe}_clk" if separate_clock else "clk",
                     "reset": f"ni_{pe}_rst" if separate_clock else "rst",
                     "slave": listed(f"s_axis_{pe}_"),
                     "master": listed(f"m_axis_{pe}_"),
                     "counters": listed(f"ni_{pe}_")} for pe in range(len(netlist.terminals))]}


def _write_harness(name, netlist, top, outdir, files, digits, verilog_top: bool, ordered,
                   say, components) -> dict:
    """The traffic harness's modules (its top, :class:`twinnet.hdl.traffic.TrafficHarness`,
    only if ``verilog_top``) and C++ program; returns the manifest's ``traffic`` section."""
    from twinnet.hdl import traffic
    from twinnet.model.sizes import MAX_PROGRAM_FLIT_WIDTH
    from twinnet.model.traffic import LENGTH_CLASSES, PATTERNS

    started = time.perf_counter()
    fmt, modules, constants = traffic_format(name, netlist, digits, ordered)
    harness = None
    if verilog_top:
        components["harness"] = harness = traffic.TrafficHarness(top, fmt, constants, modules)
        source, sink = harness.source, harness.sink
    else:
        source, sink = traffic.TrafficSource(fmt), traffic.TrafficSink(fmt)
    for part, component in (("source", source), ("sink", sink)):
        path = outdir / f"{modules[part]}.v"
        path.write_text(verilog.convert(component, name=modules[part]))
        files.append(path)
    path = outdir / f"{name}_traffic.v"
    if harness is not None:
        path.write_text(verilog.convert(harness, name=f"{name}_traffic"))
        files.append(path)
    program = None
    if fmt.flit_width <= MAX_PROGRAM_FLIT_WIDTH:
        # The same harness as a C++ program over separately Verilated modules (faster).
        from twinnet.program import ENGINE_HEADER, MAIN_PROGRAM, sources
        from twinnet.program.tables import write_tables

        tables = outdir / f"{name}_traffic.hpp"
        tables.write_text(write_tables(netlist, top.modules, fmt, source, sink, modules,
                                       constants, rtl=outdir,
                                       link_counters=top.link_counters))
        header, program = outdir / ENGINE_HEADER, outdir / MAIN_PROGRAM  # the program's code
        for code in sources():
            shutil.copyfile(code, outdir / code.name)
            files.append(outdir / code.name)
        files.append(tables)
    say(f"traffic harness: {path.name if harness is not None else 'sources, sinks'}"
        f"{' and its program' if program else ''} ({time.perf_counter() - started:.1f} s)")
    return {"top": f"{name}_traffic", "verilog": path.name if harness is not None else None,
            "modules": [modules["source"], modules["sink"]],
            "program": program.name if program else None,
            "engine": header.name if program else None,
            "sources": [code.name for code in sources()] if program else [],
            "tables": tables.name if program else None,
            "patterns": list(PATTERNS), "faults": list(traffic.FAULTS),
            "rate_bits": traffic.RATE_BITS,
            "digits": [[field, radix] for field, radix in digits],
            "length_classes": LENGTH_CLASSES, "ordered": fmt.ordered,
            "ports": [{"name": port, "direction": "input" if d == "i" else "output",
                       "width": size} for port, d, size in
                      (module_ports(harness) if harness is not None else [])]}


def describe(name: str, netlist: Netlist, top: Network, files: list[Path],
             family: dict, deadlock: dict | None = None) -> dict:
    """The manifest: everything another tool needs to drive the generated Verilog."""
    width = netlist.flit_width
    first = next(iter(netlist.kinds.values()))
    layout = first.flit_format.describe()
    return {
        "manifest_version": MANIFEST_VERSION,
        "family": family["name"],
        "top": name,
        "files": [f.name for f in files],
        "clock": "clk (rising edge)", "reset": "rst (synchronous, active high)",
        "parameters": family["parameters"],
        "derived": {"pe_count": len(netlist.terminals), "router_count": len(netlist.routers),
                    "microarchitecture": first.config.microarchitecture,
                    **family.get("derived", {})},
        "ports": [{"name": port, "direction": "input" if d == "i" else "output",
                   "width": size} for port, d, size in module_ports(top)],
        "pe_protocol": {
            "order": family["terminal_order"],
            "bus_slicing": "1-bit buses: bit i belongs to PE i; data buses: bits "
                           f"[i*{width}, (i+1)*{width})",
            "handshake": "valid/ready; a flit moves when valid and ready are both high; "
                         "valid must not wait for ready; ready is low during reset",
            "framing": f"packets of 1 to {layout['max_packet_length']} flits, first on the "
                       "head, last on the tail (both on a one-flit packet); a flit that breaks "
                       "this is dropped or ends its packet, counted on pe_framing_stray, "
                       "pe_framing_cut or pe_framing_long",
            "abort": "pe_out_abort on a packet's tail: its source cut it short for bad "
                     "framing; discard the packet",
        },
        "head_flit": {
            "width": width,
            "fields": layout["head"],
            "route": family["route"],
            "malformed": family["malformed"],
        },
        "body_flit": {"width": width, "fields": [{"name": "payload", "offset": 0,
                                                  "width": width}]},
        "modules": modules_of(name, netlist),
        "routers": [{"label": router.label, "module": f"{name}_{router.kind}"}
                    for router in netlist.routers],
        "links": [link.describe() for link in netlist.links],
        "terminals": [terminal.router for terminal in netlist.terminals],
        # The trace's layout is the top's own (``Network.trace_layout``), field by field.
        "trace": ({"valid": "trace_valid", "flit": "trace_flit", "stride": top.trace_stride,
                   "layout": flit.layout_fields(top.trace_layout)}
                  if top.trace else None),
        "deadlock": deadlock,
        family["name"]: family.get("section", {}),
    }


def modules_of(name: str, netlist: Netlist) -> dict[str, str]:
    """Router kind → the Verilog module it is converted under (also the Verilator hierarchy
    blocks of a simulation build)."""
    return {kind: f"{name}_{kind}" for kind in netlist.kinds}
