"""A network's tables for the traffic program (:mod:`twinnet.program`): a C++ header of
lists and constants, which the program's main includes. Data only: the model classes, the
ports the program reaches, one row per wire between routers, per terminal and per link, the
controls and sums of the harness, the per-node and per-terminal constants."""

from pathlib import Path

from amaranth.hdl import Shape
from amaranth.lib import data
from amaranth.lib.wiring import Out

from twinnet.hdl.config import DROP_COUNT_WIDTH
from twinnet.hdl.router.stalls import STALL_REASONS
from twinnet.hdl.traffic import FAULTS as HARNESS_FAULTS
from twinnet.hdl.traffic import TrafficHarness

from . import MAIN_PROGRAM, verilog

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


def packed(shape, value) -> int:
    """The bits of ``shape.const(value)`` (a layout's value as a dict, or a list for an array,
    with the fields left out zero; a plain shape's as an integer), read from the layout's
    fields rather than built as Amaranth constants: the 4,096-PE torus's 12,288 terminal
    constants took 29 s that way."""
    if isinstance(shape, data.Layout):
        items = enumerate(value) if isinstance(shape, data.ArrayLayout) else value.items()
        bits = 0
        for key, item in items:
            field = shape[key]
            bits |= packed(field.shape, item) << field.offset
        return bits
    return int(value) & ((1 << Shape.cast(shape).width) - 1)


def _words(value: int, width: int) -> list[int]:
    """``value`` of ``width`` bits as 32-bit words, at least two (see ``assign``)."""
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(max(2, (width + 31) // 32))]


def _table(ctype: str, name: str, rows: list[list[int]], columns: int) -> list[str]:
    """A C++ constant table of ``rows`` (at least one row, as C++ wants)."""
    body = ",".join("{" + ",".join(map(str, row)) + "}" for row in rows or [[0] * columns])
    return [f"static const {ctype} {name}[][{columns}] = {{{body}}};"]


def _define(name: str, items) -> list[str]:
    """A C++ macro ``name`` that lists ``items``, one per line."""
    items = list(items)
    return [f"#define {name}" + (" \\" if items else "")] + [
        f"    {item}" + (" \\" if i + 1 < len(items) else "") for i, item in enumerate(items)]


def _bool(value: bool) -> str:
    return "true" if value else "false"


class _Settling:
    """Whether a port of a module is on a path within a cycle: an input that reaches one of
    its outputs, or an output that one of its inputs reaches; read from the module's Verilog
    in ``rtl`` (every port, for Verilog that cannot be read)."""

    def __init__(self, rtl: Path):
        self.rtl = Path(rtl)
        self.found: dict[str, set[str] | None] = {}

    def __call__(self, module: str, port: str) -> bool:
        if module not in self.found:
            try:
                paths = verilog.paths_within_a_cycle((self.rtl / f"{module}.v").read_text(),
                                                     module)
                self.found[module] = {output for output, inputs in paths.items() if inputs} \
                    | set().union(*paths.values())
            except verilog.UnreadableVerilog:
                self.found[module] = None
        return self.found[module] is None or port in self.found[module]


class _Ports:
    """Each router kind's ports the program reaches, numbered in the order first asked."""

    def __init__(self):
        self.numbers: dict[str, dict[str, int]] = {}

    def __call__(self, kind: str, port: str) -> int:
        numbers = self.numbers.setdefault(kind, {})
        return numbers.setdefault(port, len(numbers))


def locality(netlist) -> list[int]:
    """The routers (their netlist numbers) in an order that keeps neighbours together, whose
    equal runs are the MPI ranks' regions: each router at the mean number of the terminals
    attached to it, a router without terminals at the mean place of its neighbours that have
    one (again, outward), ties in netlist order. On the tori and king networks, whose
    terminals are numbered with their routers, this is the netlist's order (slabs of rows);
    in a fat tree, each leaf switch comes with its terminals and the switches above sit
    between the leaves they join."""
    number = {router.label: i for i, router in enumerate(netlist.routers)}
    place: dict[int, float] = {}
    attached: dict[int, list[int]] = {}
    for t, terminal in enumerate(netlist.terminals):
        attached.setdefault(number[terminal.router], []).append(t)
    for router, terminals in attached.items():
        place[router] = sum(terminals) / len(terminals)
    neighbours: dict[int, set[int]] = {}
    for link in netlist.links:
        neighbours.setdefault(number[link.source], set()).add(number[link.target])
    while len(place) < len(netlist.routers):
        found = {r: [place[n] for n in neighbours.get(r, ()) if n in place]
                 for r in range(len(netlist.routers)) if r not in place}
        found = {r: sum(ps) / len(ps) for r, ps in found.items() if ps}
        if not found:  # (a part with no terminal at all: netlist order)
            found = {r: float(len(netlist.terminals)) for r in range(len(netlist.routers))
                     if r not in place}
        place.update(found)
    return sorted(range(len(netlist.routers)), key=lambda r: (place[r], r))


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
    """The C++ header of the network's tables (see :mod:`twinnet.program`), which
    :data:`MAIN_PROGRAM` includes, for ``netlist`` (router kind → module name in ``modules``)
    with the harness's ``source`` and ``sink`` for its format ``fmt`` (their module names and
    the network's in ``harness_modules``) and the per-terminal ``(source constants, sink
    constants)`` values. ``rtl`` is the folder of the modules' Verilog (``<module>.v``), read
    for the inputs that reach an output within a cycle and the outputs they reach
    (:func:`twinnet.program.verilog.paths_within_a_cycle`; every port when it cannot be
    read).

    It holds data only: the model classes, the ports the program reaches, one row per wire,
    terminal and link, the constants; ``link_counters``, ``(LinkCounters, module name)`` or
    None, adds the link counters as a model."""
    from twinnet.model.sizes import MAX_PROGRAM_FLIT_WIDTH

    source_module, sink_module = harness_modules["source"], harness_modules["sink"]
    if fmt.flit_width > MAX_PROGRAM_FLIT_WIDTH:
        raise ValueError(f"the C++ harness takes flits of up to {MAX_PROGRAM_FLIT_WIDTH} bits, not "
                         f"{fmt.flit_width}")
    kinds = sorted({router.kind for router in netlist.routers})
    number = {router.label: i for i, router in enumerate(netlist.routers)}
    order = locality(netlist)
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
        source_kind = netlist.by_label[link.source].kind
        crossings.append([number[link.source], number[link.target],
                          ports(kind, _port(f"in_{link.target_port}", ["flit", "valid"])),
                          ports(kind, _port(f"in_{link.target_port}", ["flit", "payload"])),
                          flit["first"].offset, flit["data"].offset,
                          ports(source_kind, _port(f"out_{link.source_port}", ["flit", "valid"]))])

    taps, tapped = (_taps(netlist, link_counters[0], number, ports, routers)
                    if link_counters is not None else ([], {}))

    lines = [f"// Generated by twinnet (twinnet.program.tables): the tables of the traffic "
             f"program of {harness_modules['network']},",
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
              "// Per router kind, the ports the tables number: P(member, whether it is on a "
              "path within a cycle: an input that reaches an output, an output an input "
              "reaches)."]
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
              + ",".join(str(kinds.index(instance.kind)) for instance in netlist.routers) + "};",
              "// The routers, neighbours first: each MPI rank takes an equal run of them.",
              "static const int32_t ORDER[] = {" + ",".join(map(str, order)) + "};"]
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
              *_table("int32_t", "CROSSINGS", crossings, 7), *_table("int32_t", "TAPS", taps, 3)]
    for position, kind in enumerate(kinds):
        router = netlist.kinds[kind]
        if "node_static" in router.signature.members:
            layout = router.signature.members["node_static"].shape
            width = Shape.cast(layout).width
            rows = [_words(0 if instance.static is None else packed(layout, instance.static),
                           width)
                    for instance in netlist.routers if instance.kind == kind]
        else:
            rows = []  # (a kind without per-node constants: the table is not read)
        lines += _table("uint32_t", f"STATIC_{position}", rows, len(rows[0]) if rows else 1)
    for part, layout, index in (("SOURCE", fmt.source_constants, 0),
                                ("SINK", fmt.sink_constants, 1)):
        width = Shape.cast(layout).width
        rows = [_words(packed(layout, constants[index]), width)
                for constants in terminal_constants]
        lines += _table("uint32_t", f"{part}_CONSTANTS", rows, len(rows[0]))
    return "\n".join(lines) + "\n"
