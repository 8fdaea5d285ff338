"""The traffic harness as a C++ program over separately Verilated modules.

Verilator evaluates a whole network model at once: built flat, every router instance gets its
own copy of the code; built with routers as hierarchy blocks, each block is re-evaluated
whenever one of its inputs changes, about 8 times a cycle. The traffic program instead
Verilates each *distinct* module once (every router kind, the traffic source, the traffic
sink: the same Verilog the harness instantiates) and makes one model object per instance,
joined the way :class:`twinnet.hdl.network.Network` and
:class:`twinnet.hdl.traffic.TrafficHarness` join them: links by the routers' port
signatures, terminals to sources and sinks, the harness's controls to every source and sink.

Its code is C++ shipped with this package (:data:`ENGINE_HEADER`, :data:`MAIN_PROGRAM`), the
same for every network; this module writes only the network's tables, as a C++ header
(:func:`write_tables`): the model classes, the ports the program reaches (a port table per
router kind: where Verilator keeps each port of a model), one row per wire between routers,
per terminal and per link, and the constants. So a 4,096-router network compiles as fast as
a small one, and the wires copy values between the places the port tables name.

The models are Verilated from the modules' Verilog with every register on both clock edges
(:func:`twinnet.gen.program_verilog.both_edges`, done when the program is built), so that one
evaluation with the clock input flipped is one clock cycle. Every cycle the program first
carries what the last edge changed to the inputs it drives, then settles the combinational
paths between models: it evaluates, without an edge, the models whose changed inputs reach an
output within a cycle (read from the Verilog by
:func:`twinnet.gen.program_verilog.inputs_reaching_outputs`: on twinnet's routers none does,
so routers are evaluated once a cycle), carries their outputs, and again until nothing
changes. Then the clock edge comes to every awake model. A router whose whole state
(Verilator's root of the model: registers, ports and its scheduler's flags), but for the bytes
that follow the clock, is the same after an edge as after the one before is asleep: with
unchanged inputs it would stay so, so it is left out until an input changes. Sources and sinks
never sleep (their random generators move every cycle). The results are those of evaluating
every model before every edge, cycle for cycle.

The program's first argument is the number of threads (default 1); the results do not depend
on it. Each model belongs to one thread for the whole run (each thread owns a run of
neighbouring routers, sources and sinks), which evaluates it, carries its outputs and counts
the flits moving into it, so that a model's state stays in one core's caches; the threads
meet between the phases of a cycle (carrying, evaluating between edges, counting, the edge).
A second argument ``plain`` keeps every model awake and evaluates each before every edge, as if
every input reached an output (the reference the shortcuts are tested against). The harness's
cycle count ``now`` is kept here, as the harness's register is. Counters are summed here when
read.

The program reads commands on stdin, one per line, and answers on stdout:

- ``set NAME VALUE``: a control (``enable``, ``measure``, ``rate``, ``pattern``,
  ``hotspot_rate``, ``seed``, ``onoff``, ``turn_on``, ``turn_off``, ``length_lo_<k>``,
  ``length_hi_<k>``, ``length_cut_<k>``, ``refuse_rate``, ``stall_start``, ``stall_max``,
  ``fault``, ``rst``);
- ``run N``: N clock cycles; answers ``ok``;
- ``read``: answers one line of ``name=value`` pairs, the harness's outputs (and
  ``latency_max`` and ``hist<i>``, the largest network latency of a measured unicast packet
  and those latencies by significant bits, measured here from the terminals' wires,
  ``len<k>``, the packets of k flits injected since reset (those of more than 64 on
  ``len0``), ``stall_<reason>``, the routers' stall counters summed, when they
  have them, ``idle``, the cycles since a flit last moved on any link or terminal port,
  ``hops``, the head flits of unicast packets that crossed a link between routers since
  reset, ``max_hops``, the most links a unicast packet delivered since reset crossed, and
  ``asleep``, the routers asleep now);
- ``held``: answers one line with, per router in the netlist's order, the flits it holds
  (flits in minus flits out since reset, counted on its links and terminal ports), for the
  watchdog's report;
- ``links``: answers one line with the flits and the head flits (packets) that crossed each
  link since reset, in the netlist's link order, then each terminal's injected and
  ejected flits and packets (``flits packets`` pairs: links, then per terminal injection
  and ejection), counted where the program copies them: the check of the link counters;
- ``trace PATH``: loads a trace to inject (lines ``terminal cycle route length-1``, in order
  of cycle, the route as the head's route field holds it): with ``from_trace`` set, each
  source takes its packets from it once created, one per cycle when its queue has room;
  answers ``ok``;
- ``record PATH``: from now on, writes a line to PATH per unicast packet delivered, as its
  tail leaves the network: its terminal, head word, the cycles its head was accepted, its
  head ejected and its tail ejected, and its hops; answers ``ok`` (``record -`` closes the
  file, as ``quit`` does);
- ``counts``: answers one line with the 32-bit words of the link counters' ``counts_<k>``
  ports, lowest first, one port after the other (:mod:`twinnet.hdl.link_counter`; an empty
  line without them);
- ``quit``.

With link counters (``write_tables(..., link_counters=...)``) their module is one more model,
never asleep: after the paths settle each cycle, the wires of every link and terminal are
copied to its inputs (the ``TAPS`` table) before the clock rises, as the network top feeds them.

A packet's hops are counted on its head: each head flit of a unicast packet crossing a link
adds one to the count kept for its head word (route, source, sequence number: unique among
the packets in flight unless a pair has 2**seq_bits of them, or a packet is duplicated), and
the sink that receives the head takes the count out. Broadcast copies (the head's
``route.broadcast`` bit) are not counted.

Of the harness's faults it has ``duplicate`` (a source's own); ``misroute`` and ``corrupt``,
which the harness applies on a link, are not modelled here (:data:`FAULTS`).
"""

from pathlib import Path

from amaranth.hdl import Const, Shape
from amaranth.lib.wiring import Out

from twinnet.hdl.config import DROP_COUNT_WIDTH
from twinnet.hdl.router.stalls import STALL_REASONS
from twinnet.hdl.traffic import FAULTS as HARNESS_FAULTS
from twinnet.hdl.traffic import TrafficHarness

from . import program_verilog

#: The faults the C++ harness injects (its ``fault`` control takes their index in
#: :data:`twinnet.hdl.traffic.FAULTS`, as the Verilog harness does).
FAULTS = ("none", "duplicate")
#: Controls of the harness that every source takes, and that every sink takes.
SOURCE_CONTROLS = ("enable", "measure", "rate", "pattern", "hotspot_rate", "seed", "onoff",
                   "turn_on", "turn_off", "broadcast_rate", "from_trace",
                   *TrafficHarness.LENGTH_CONTROLS)
SINK_CONTROLS = ("measure", "seed", "refuse_rate", "stall_start", "stall_max")


def cpp_name(port: str) -> str:
    """The C++ member of a Verilog port: Verilator escapes ``__`` as ``___05F``."""
    return port.replace("__", "___05F")


def _port(prefix: str, path) -> str:
    """The Verilog name of a port of a router's ``prefix`` member at ``path``."""
    return "__".join([prefix, *map(str, path)])


def _constant(shape, value) -> int:
    return Const.cast(shape.const(value)).value


#: The program's code, C++ shipped with this package (:func:`sources`): the generic engine
#: (models, their activity, the settling of the paths between them, the clock, the counters)
#: and the main (the ``Harness`` over the network's model classes, the commands), which
#: includes the network's generated tables (:func:`write_tables`) that ``TWINNET_NETWORK``
#: names.
ENGINE_HEADER = "twinnet_traffic_engine.hpp"
MAIN_PROGRAM = "twinnet_traffic_main.cpp"


def sources() -> list[Path]:
    """The paths of :data:`ENGINE_HEADER` and :data:`MAIN_PROGRAM` (copied beside the
    generated tables)."""
    return [Path(__file__).with_name(name) for name in (ENGINE_HEADER, MAIN_PROGRAM)]


def network_define(tables: str) -> str:
    """The compiler option that makes :data:`MAIN_PROGRAM` include ``tables`` (a file name),
    as one argument."""
    return f'-DTWINNET_NETWORK="{tables}"'


def _words(value: int, width: int) -> list[int]:
    """``value`` of ``width`` bits as 32-bit words, at least two (see ``assign``)."""
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(max(2, (width + 31) // 32))]


def _table(kind: str, name: str, rows: list[list[int]], columns: int) -> list[str]:
    """A C++ constant table of ``rows`` (at least one row, as C++ wants)."""
    body = ",".join("{" + ",".join(map(str, row)) + "}" for row in rows or [[0] * columns])
    return [f"static const {kind} {name}[][{columns}] = {{{body}}};"]


def _define(name: str, items) -> list[str]:
    """A C++ macro ``name`` that lists ``items``, one per line."""
    items = list(items)
    return [f"#define {name}" + (" \\" if items else "")] + [
        f"    {item}" + (" \\" if i + 1 < len(items) else "") for i, item in enumerate(items)]


def _bool(value: bool) -> str:
    return "true" if value else "false"


class _Settling:
    """Whether an input of a module reaches one of its outputs within a cycle, read from the
    module's Verilog in ``rtl`` (every input, for Verilog that cannot be read)."""

    def __init__(self, rtl: Path):
        self.rtl = Path(rtl)
        self.found: dict[str, set[str] | None] = {}

    def __call__(self, module: str, port: str) -> bool:
        if module not in self.found:
            try:
                self.found[module] = program_verilog.inputs_reaching_outputs(
                    (self.rtl / f"{module}.v").read_text(), module)
            except program_verilog.UnreadableVerilog:
                self.found[module] = None
        return self.found[module] is None or port in self.found[module]


class _Ports:
    """Each router kind's ports the program reaches, numbered in the order first asked."""

    def __init__(self):
        self.numbers: dict[str, dict[str, int]] = {}

    def __call__(self, kind: str, port: str) -> int:
        numbers = self.numbers.setdefault(kind, {})
        return numbers.setdefault(port, len(numbers))


def _taps(netlist, counters, number: dict, ports, routers: int) -> tuple[list, dict]:
    """The ``TAPS`` table (from model, its port, the link counters' port) and the link
    counters' port numbers (see :class:`twinnet.hdl.link_counter.LinkCounters`)."""
    own: dict[str, int] = {}

    def to(name: str) -> int:
        return own.setdefault(name, len(own))

    rows, pes = [], len(netlist.terminals)
    for link in netlist.links:
        j = link.index
        source = number[link.source]
        source_kind = netlist.by_label[link.source].kind
        out = f"out_{link.source_port}"
        rows += [[source, ports(source_kind, _port(out, ["flit", "valid"])), to(f"c{j}_valid")],
                 [source, ports(source_kind, _port(out, ["flit", "payload"])),
                  to(f"c{j}_payload")],
                 [source, ports(source_kind, _port("waits", [out])), to(f"c{j}_waits")]]
    # A source's and a sink's ports: valid, data, first, last, ready (in ``join``).
    for t, attached in enumerate(netlist.terminals):
        router, kind = number[attached.router], netlist.by_label[attached.router].kind
        rows += [[routers + t, 0, to(f"i{t}_valid")], [routers + t, 2, to(f"i{t}_first")],
                 [router, ports(kind, _port(f"in_{attached.port}", ["ready"])),
                  to(f"i{t}_ready")],
                 [router, ports(kind, _port(f"out_{attached.port}", ["valid"])),
                  to(f"e{t}_valid")],
                 [router, ports(kind, _port(f"out_{attached.port}", ["payload"])),
                  to(f"e{t}_payload")],
                 [routers + pes + t, 4, to(f"e{t}_ready")]]
    return rows, own


def write_tables(netlist, modules: dict, fmt, source, sink, harness_modules: dict,
                 terminal_constants: list, *, rtl: Path, link_counters=None) -> str:
    """The C++ header of the network's tables (see the module docstring), which
    :data:`MAIN_PROGRAM` includes, for ``netlist`` (router kind → module name in ``modules``)
    with the harness's ``source`` and ``sink`` for its format ``fmt`` (their module names and
    the network's in ``harness_modules``) and the per-terminal ``(source constants, sink
    constants)`` values. ``rtl`` is the folder of the modules' Verilog (``<module>.v``), read
    for the inputs that reach an output within a cycle
    (:func:`twinnet.gen.program_verilog.inputs_reaching_outputs`; every input when it cannot
    be read).

    It holds data only: the model classes, the ports the program reaches, one row per wire,
    terminal and link, the constants; ``link_counters``, ``(LinkCounters, module name)`` or
    None, adds the link counters as a model (the module docstring)."""
    from twinnet.model.sizes import MAX_PROGRAM_FLIT_WIDTH

    source_module, sink_module = harness_modules["source"], harness_modules["sink"]
    if fmt.flit_width > MAX_PROGRAM_FLIT_WIDTH:
        raise ValueError(f"the C++ harness takes flits of up to {MAX_PROGRAM_FLIT_WIDTH} bits, not "
                         f"{fmt.flit_width}")
    kinds = sorted({router.kind for router in netlist.routers})
    number = {router.label: i for i, router in enumerate(netlist.routers)}
    routers, pes = len(netlist.routers), len(netlist.terminals)
    ports = _Ports()

    # Wires between routers: each port of a link, from the model driving it.
    wires = []
    for link in netlist.links:
        member = netlist.kind_of(link.source).signature.members[f"out_{link.source_port}"]
        source_kind = netlist.by_label[link.source].kind
        target_kind = netlist.by_label[link.target].kind
        ends = [(number[link.source], source_kind, f"out_{link.source_port}"),
                (number[link.target], target_kind, f"in_{link.target_port}")]
        for path, port in member.signature.members.flatten():
            if not port.is_port:
                continue
            (sender, sender_kind, sent), (receiver, receiver_kind, received) = \
                ends if port.flow == Out else ends[::-1]
            wires.append([sender, ports(sender_kind, _port(sent, path)),
                          receiver, ports(receiver_kind, _port(received, path))])

    # Terminals: the router's ports and where the fields sit in their payloads.
    terminals = []
    for attached in netlist.terminals:
        kind, port = netlist.by_label[attached.router].kind, attached.port
        signature = netlist.kinds[kind].signature
        fields = {name: field.offset for name, field in
                  signature.members[f"in_{port}"].signature.members["payload"].shape}
        out_fields = {name: (field.offset, field.width) for name, field in
                      signature.members[f"out_{port}"].signature.members["payload"].shape}
        terminals.append([number[attached.router],
                          *(ports(kind, _port(f"{side}_{port}", [name]))
                            for side, name in (("in", "valid"), ("in", "payload"),
                                               ("in", "ready"), ("out", "valid"),
                                               ("out", "payload"), ("out", "ready"))),
                          fields["data"], fields["first"], fields["last"],
                          out_fields["data"][0], out_fields["first"][0],
                          out_fields["last"][0], out_fields["data"][1],
                          out_fields["abort"][0]])

    # Links, for the counts: the flit's valid and payload at the receiving input.
    crossings = []
    for link in netlist.links:
        kind = netlist.by_label[link.target].kind
        flit = netlist.kinds[kind].signature.members[f"in_{link.target_port}"] \
            .signature.members["flit"].signature.members["payload"].shape
        crossings.append([number[link.source], number[link.target],
                          ports(kind, _port(f"in_{link.target_port}", ["flit", "valid"])),
                          ports(kind, _port(f"in_{link.target_port}", ["flit", "payload"])),
                          flit["first"].offset, flit["data"].offset])

    taps, tapped = (_taps(netlist, link_counters[0], number, ports, routers)
                    if link_counters is not None else ([], {}))

    lines = [f"// Generated by twinnet (gen/traffic_cpp.py): the tables of the traffic program of "
             f"{harness_modules['network']},",
             f"// which {MAIN_PROGRAM} includes (-DTWINNET_NETWORK='\"<this file>\"').",
             "#pragma once", ""]
    extra = [link_counters[1]] if link_counters is not None else []
    for module in [*(modules[kind] for kind in kinds), source_module, sink_module, *extra]:
        lines += [f'#include "V{module}.h"', f'#include "V{module}___024root.h"']
    lines += ["", f"#define TWINNET_SOURCE V{source_module}",
              f"#define TWINNET_SINK V{sink_module}",
              "// The router kinds: X(number, model class).",
              *_define("TWINNET_KINDS(X)", (f"X({position}, V{modules[kind]})"
                                            for position, kind in enumerate(kinds))),
              "// Per router kind, the ports the tables number: P(member, whether it reaches "
              "an output within a cycle)."]
    settles = _Settling(rtl)
    for position, kind in enumerate(kinds):
        lines += _define(f"TWINNET_PORTS_{position}(P)", (
            f"P({cpp_name(name)}, {_bool(settles(modules[kind], name))})"
            for name in ports.numbers.get(kind, {})))
    if link_counters is not None:
        lines += ["// The link counters: their model, the ports TAPS numbers, and their counts "
                  "ports C(number, 32-bit words).",
                  f"#define TWINNET_COUNTERS V{link_counters[1]}",
                  *_define("TWINNET_COUNTER_PORTS(P)", (f"P({name})" for name in tapped)),
                  *_define("TWINNET_COUNTS(C)", (f"C({k}, {width // 32})" for k, width
                                                 in enumerate(link_counters[0].chunks)))]
    lines += ["// The controls every source and every sink takes: C(name)."]
    for part, component, controls in (("SOURCE", source, SOURCE_CONTROLS),
                                       ("SINK", sink, SINK_CONTROLS)):
        lines += _define(f"TWINNET_{part}_CONTROLS(C)", (
            f"C({control})" for control in controls if control in component.signature.members))
    sums = list(TrafficHarness.sums(fmt))
    lines += ["// The harness's outputs, summed over the terminals: S(name, src or snk).",
              *_define("TWINNET_SUMS(S)", (
                  f"S({name}, {'src' if name in source.signature.members else 'snk'})"
                  for name in sums))]
    stalls = all("stalls" in netlist.kinds[kind].signature.members for kind in kinds)
    lines += ["// The routers' stall counters, where every kind has them: S(reason, member).",
              *_define("TWINNET_STALLS(S)", (
                  f"S({reason}, {cpp_name(_port('stalls', [reason]))})"
                  for reason in (STALL_REASONS if stalls else ()))), ""]
    lines += [f"static const int ROUTERS = {routers}, PES = {pes};",
              f"static const int WIRE_COUNT = {len(wires)}, CROSSING_COUNT = {len(crossings)}, "
              f"TAP_COUNT = {len(taps)};",
              "static const uint16_t KINDS[] = {"
              + ",".join(str(kinds.index(instance.kind)) for instance in netlist.routers) + "};"]
    for part, module, component in (("SOURCE", source_module, source),
                                    ("SINK", sink_module, sink)):
        flags = ", ".join(_bool(name in component.signature.members and settles(module, name))
                          for name in ("valid", "data", "first", "last", "ready", "now",
                                       "cut_short"))
        lines.append(f"static const Settles {part}_SETTLES = {{{flags}}};")
    payload = fmt.head_layout["payload"]
    broadcast = -1
    if fmt.broadcast:
        route = fmt.head_layout["route"]
        broadcast = route.offset + route.shape["broadcast"].offset
    lines += [f"static const uint64_t DATA_MASK = {(1 << fmt.flit_width) - 1:#x}ULL;",
              f"static const uint64_t DROP_LIMIT = {(1 << DROP_COUNT_WIDTH) - 1:#x}ULL;",
              f"static const int MEASURED_BIT = "
              f"{payload.offset + fmt.payload_layout['measured'].offset};",
              f"static const int BROADCAST_BIT = {broadcast};",
              f"static const int DUPLICATE_FAULT = {HARNESS_FAULTS.index('duplicate')};", ""]
    lines += [*_table("int32_t", "WIRES", wires, 4), *_table("int32_t", "TERMINALS", terminals, 15),
              *_table("int32_t", "CROSSINGS", crossings, 6), *_table("int32_t", "TAPS", taps, 3)]
    for position, kind in enumerate(kinds):
        router = netlist.kinds[kind]
        if "node_static" in router.signature.members:
            layout = router.signature.members["node_static"].shape
            width = Shape.cast(layout).width
            rows = [_words(0 if instance.static is None else _constant(layout, instance.static),
                           width)
                    for instance in netlist.routers if instance.kind == kind]
        else:
            rows = []  # (a kind without per-node constants: the table is not read)
        lines += _table("uint32_t", f"STATIC_{position}", rows, len(rows[0]) if rows else 1)
    for part, component, index in (("SOURCE", source, 0), ("SINK", sink, 1)):
        width = Shape.cast(component.constants_layout).width
        rows = [_words(_constant(component.constants_layout, constants[index]), width)
                for constants in terminal_constants]
        lines += _table("uint32_t", f"{part}_CONSTANTS", rows, len(rows[0]))
    return "\n".join(lines) + "\n"
