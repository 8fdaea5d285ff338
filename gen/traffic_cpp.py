"""The traffic harness as a C++ program over separately Verilated modules.

Verilator evaluates a whole network model at once: built flat, every router instance gets its
own copy of the code; built with routers as hierarchy blocks, each block is re-evaluated
whenever one of its inputs changes, about 8 times a cycle. This writes a C++ main that
instead Verilates each *distinct* module once (every router kind, the traffic source, the
traffic sink: the same Verilog the harness instantiates) and makes one model object per
instance, joined the way :class:`twinnet.hdl.network.Network` and
:class:`twinnet.hdl.traffic.TrafficHarness` join them: links by the routers' port
signatures, terminals to sources and sinks, the harness's controls to every source and sink.

Its code is the same for every network of the same router kinds; the network is in its
tables (one row per wire between routers, per terminal and per link), so a 4,096-router
network compiles as fast as a small one. Each router kind has a port table (where Verilator
keeps each port of a model), and the wires copy values between those places.

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

With link counters (``write_cpp(..., link_counters=...)``) their module is one more model,
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


class Program:
    """Lines of C++, indented."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, *lines: str, indent: int = 0) -> None:
        self.lines += ["    " * indent + line for line in lines]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


#: The generic part of the program, a C++ header shipped with this package (:func:`engine`):
#: models, their activity, the settling of the paths between them, the clock, the counters.
#: What depends on the network follows it (tables and the ``Harness``, which knows the types
#: of its models).
ENGINE_HEADER = "twinnet_traffic_engine.hpp"


def engine() -> Path:
    """The path of :data:`ENGINE_HEADER`, which the generated program includes (copied beside
    it)."""
    return Path(__file__).with_name(ENGINE_HEADER)


def _words(value: int, width: int) -> list[int]:
    """``value`` of ``width`` bits as 32-bit words, at least two (see ``assign``)."""
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(max(2, (width + 31) // 32))]


def _table(kind: str, name: str, rows: list[list[int]], columns: int) -> list[str]:
    """A C++ constant table of ``rows`` (at least one row, as C++ wants)."""
    body = ",".join("{" + ",".join(map(str, row)) + "}" for row in rows or [[0] * columns])
    return [f"static const {kind} {name}[][{columns}] = {{{body}}};"]


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


def write_cpp(netlist, modules: dict, fmt, source, sink, harness_modules: dict,
              terminal_constants: list, *, rtl: Path, link_counters=None) -> str:
    """The C++ main (see the module docstring) for ``netlist`` (router kind → module name in
    ``modules``) with the harness's ``source`` and ``sink`` for its format ``fmt`` (their
    module names and the network's in ``harness_modules``) and the per-terminal
    ``(source constants, sink constants)`` values. ``rtl`` is the folder of the modules'
    Verilog (``<module>.v``), read for the inputs that reach an output within a cycle
    (:func:`twinnet.gen.program_verilog.inputs_reaching_outputs`; every input when it cannot
    be read).

    Its size grows with the network only in its tables (one row per wire, terminal and link):
    the code is the same for every network of the same router kinds. ``link_counters``,
    ``(LinkCounters, module name)`` or None, adds the link counters as a model (the module
    docstring)."""
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

    out = Program()
    out("// Generated by twinnet (gen/traffic_cpp.py): the traffic harness of "
        f"{harness_modules['network']} over separately Verilated modules.",
        f'#include "{ENGINE_HEADER}"')
    extra = [link_counters[1]] if link_counters is not None else []
    for module in [*(modules[kind] for kind in kinds), source_module, sink_module, *extra]:
        out(f'#include "V{module}.h"', f'#include "V{module}___024root.h"')
    out("")
    out(*_table("int32_t", "WIRES", wires, 4), *_table("int32_t", "TERMINALS", terminals, 15),
        *_table("int32_t", "CROSSINGS", crossings, 6), *_table("int32_t", "TAPS", taps, 3))
    statics = {}
    for kind in kinds:
        router = netlist.kinds[kind]
        if "node_static" not in router.signature.members:
            continue
        layout = router.signature.members["node_static"].shape
        width = Shape.cast(layout).width
        statics[kind] = [_words(0 if instance.static is None
                                else _constant(layout, instance.static), width)
                         for instance in netlist.routers if instance.kind == kind]
        out(*_table("uint32_t", f"STATIC_{kind}", statics[kind], len(statics[kind][0])))
    for part, component, index in (("SOURCE", source, 0), ("SINK", sink, 1)):
        width = Shape.cast(component.constants_layout).width
        rows = [_words(_constant(component.constants_layout, constants[index]), width)
                for constants in terminal_constants]
        out(*_table("uint32_t", f"{part}_CONSTANTS", rows, len(rows[0])))
    out("")

    # The port tables of each router kind.
    settles = _Settling(rtl)
    for kind in kinds:
        module = modules[kind]
        members = ", ".join(
            f"{{&m->{cpp_name(name)}, (int)sizeof m->{cpp_name(name)}, "
            f"{_bool(settles(module, name))}}}" for name in ports.numbers.get(kind, {}))
        out(f"static std::vector<Port> ports_{kind}(V{module}* m) {{",
            f"    return {{{members}}};", "}")
    if link_counters is not None:
        members = ", ".join(f"{{&m->{name}, (int)sizeof m->{name}}}" for name in tapped)
        out(f"static std::vector<Port> ports_links(V{link_counters[1]}* m) {{",
            f"    return {{{members}}};", "}")
    out("")

    out(f"struct Harness : Engine<V{source_module}, V{sink_module}> {{")
    for kind in kinds:
        out(f"    std::vector<V{modules[kind]}*> r_{kind};")
    if link_counters is not None:
        out(f"    V{link_counters[1]}* counters = nullptr;")
    out("", "    Harness(int threads, bool plain) {")
    out("this->plain = plain;", indent=2)
    for part, module, component in (("source", source_module, source),
                                    ("sink", sink_module, sink)):
        flags = ", ".join(_bool(name in component.signature.members and settles(module, name))
                          for name in ("valid", "data", "first", "last", "ready", "now",
                                       "cut_short"))
        out(f"{part}_settles = {{{flags}}};", indent=2)
    out("static const uint16_t KINDS[] = {"
        + ",".join(str(kinds.index(instance.kind)) for instance in netlist.routers) + "};",
        indent=2)
    out(f"for (int r = 0; r < {routers}; r++) {{", indent=2)
    for position, kind in enumerate(kinds):
        module = f"V{modules[kind]}"
        out(f"if (KINDS[r] == {position}) {{", indent=3)
        out(f"auto* model = new Of<{module}>(&context, !plain);",
            f"model->ports = ports_{kind}(model->v);", indent=4)
        if kind in statics:
            out(f"assign(model->v->node_static, STATIC_{kind}[r_{kind}.size()]);", indent=4)
        out(f"r_{kind}.push_back(model->v);", "models.push_back(model);", indent=4)
        out("}", indent=3)
    out("}", indent=2)
    counters_model = "nullptr"
    if link_counters is not None:
        out(f"auto* counting = new Of<V{link_counters[1]}>(&context, false);",
            "counting->ports = ports_links(counting->v);", "counters = counting->v;", indent=2)
        counters_model = "counting"
    out(f"join(threads, WIRES, {len(wires)}, TERMINALS, CROSSINGS, {len(crossings)}, "
        f"{pes}, {counters_model}, TAPS, {len(taps)});", indent=2)
    mask = (1 << fmt.flit_width) - 1
    out(f"data_mask = {mask:#x}ULL;", indent=2)
    payload = fmt.head_layout["payload"]
    out(f"measured_bit = {payload.offset + fmt.payload_layout['measured'].offset};", indent=2)
    if fmt.broadcast:
        route = fmt.head_layout["route"]
        out(f"broadcast_bit = {route.offset + route.shape['broadcast'].offset};", indent=2)
    out(f"for (int t = 0; t < {pes}; t++) {{", "assign(src[t]->constants, SOURCE_CONSTANTS[t]);",
        "assign(snk[t]->constants, SINK_CONSTANTS[t]);", "}", indent=2)
    out("    }", "")

    # Controls.
    out("    void set(const std::string& name, uint64_t value) {")
    out("if (name == \"rst\") { set_rst((int)value); return; }", indent=2)
    duplicate = HARNESS_FAULTS.index("duplicate")
    out(f"if (name == \"fault\") {{ fault = (int)value; src[0]->replay = fault == {duplicate}; "
        f"mark({routers}, true); return; }}", indent=2)
    for control in dict.fromkeys(SOURCE_CONTROLS + SINK_CONTROLS):
        parts = [f"{part}[i]->{control} = value; mark({offset} + i, true);"
                 for part, component, controls, offset in (
                     ("src", source, SOURCE_CONTROLS, routers),
                     ("snk", sink, SINK_CONTROLS, routers + pes))
                 if control in controls and control in component.signature.members]
        if not parts:
            continue
        out(f"if (name == \"{control}\") {{ for (int i = 0; i < {pes}; i++) {{ "
            f"{' '.join(parts)} }} return; }}", indent=2)
    out('std::fprintf(stderr, "unknown control %s\\n", name.c_str()); std::exit(2);', indent=2)
    out("    }", "")

    # Reading the harness's outputs.
    out("    void read() {")
    sums = list(TrafficHarness.sums(fmt))
    out("uint64_t " + ", ".join(f"{name} = 0" for name in sums) + ";", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) {{", indent=2)
    for name in sums:
        part = "src" if name in source.signature.members else "snk"
        out(f"{name} += {part}[i]->{name};", indent=3)
    out("}", indent=2)
    out("uint64_t drop_count = 0, replayed = src[0]->replayed;", indent=2)
    for kind in kinds:
        out(f"for (auto* m : r_{kind}) drop_count += m->drop_count;", indent=2)
    limit = (1 << DROP_COUNT_WIDTH) - 1
    out(f"if (drop_count > {limit:#x}ULL) drop_count = {limit:#x}ULL;", indent=2)
    out("uint64_t idle = now - last_move, asleep = 0;",
        "for (Model* model : models) asleep += !model->awake;", indent=2)
    fields = " ".join(f"{name}=%llu" for name in [*sums, "drop_count", "latency_max",
                                                  "faults", "now", "idle", "hops",
                                                  "max_hops", "asleep"])
    values = ", ".join(f"(unsigned long long){name}"
                       for name in [*sums, "drop_count", "latency_max", "replayed", "now",
                                    "idle", "hops", "max_hops", "asleep"])
    if all("stalls" in netlist.kinds[kind].signature.members for kind in kinds):
        # The routers' stall counters, summed (each 48 bits: no sum wraps).
        for reason in STALL_REASONS:
            out(f"uint64_t stall_{reason} = 0;", indent=2)
            for kind in kinds:
                out(f"for (auto* m : r_{kind}) stall_{reason} += "
                    f"m->{cpp_name(_port('stalls', [reason]))};", indent=2)
        fields += "".join(f" stall_{reason}=%llu" for reason in STALL_REASONS)
        values += "".join(f", (unsigned long long)stall_{reason}" for reason in STALL_REASONS)
    out(f'std::printf("{fields}", {values});',
        'for (int b = 0; b < BINS; b++) std::printf(" hist%d=%llu", b, '
        "(unsigned long long)histogram[b]);",
        "for (int k = 0; k < LENGTHS; k++) {",
        "    uint64_t count = 0;",
        "    for (const Lane& lane : lanes) count += lane.lengths[k];",
        '    if (count) std::printf(" len%d=%llu", k, (unsigned long long)count);',
        "}", 'std::printf("\\n");', "std::fflush(stdout);", indent=2)
    out("    }", "")
    out("    void print_counts() {")
    if link_counters is not None:
        # Each port holds whole rows of 96 bits: whole 32-bit words, read one port after the
        # other, separated by spaces.
        for k, width in enumerate(link_counters[0].chunks):
            separator = '(i ? " " : "")' if k == 0 else '" "'
            out(f'for (int i = 0; i < {width // 32}; i++) std::printf("%s%u", {separator}, '
                f"(unsigned)counters->counts_{k}[i]);", indent=2)
    out('std::printf("\\n");', "std::fflush(stdout);", indent=2)
    out("    }", "};", "")

    out("int main(int argc, char** argv) {",
        "    int threads = argc > 1 ? std::atoi(argv[1]) : 1;",
        "    bool plain = argc > 2 && std::string(argv[2]) == \"plain\";",
        "    if (threads < 1) { std::fprintf(stderr, \"threads must be at least 1\\n\"); "
        "return 2; }",
        "    Harness h(threads, plain);", "    std::string command;",
        "    while (std::cin >> command) {",
        "        if (command == \"set\") { std::string name; uint64_t value; "
        "std::cin >> name >> value; h.set(name, value); }",
        "        else if (command == \"run\") { uint64_t n; std::cin >> n; "
        "for (uint64_t i = 0; i < n; i++) h.cycle(); std::printf(\"ok\\n\"); "
        "std::fflush(stdout); }",
        "        else if (command == \"read\") h.read();",
        "        else if (command == \"held\") h.print_held();",
        "        else if (command == \"links\") h.print_links();",
        "        else if (command == \"counts\") h.print_counts();",
        "        else if (command == \"trace\") { std::string path; std::cin >> path; "
        "h.load_trace(path); std::printf(\"ok\\n\"); std::fflush(stdout); }",
        "        else if (command == \"record\") { std::string path; std::cin >> path; "
        "h.open_record(path); std::printf(\"ok\\n\"); std::fflush(stdout); }",
        "        else if (command == \"quit\") { if (h.record) std::fclose(h.record); break; }",
        "        else { std::fprintf(stderr, \"unknown command %s\\n\", command.c_str()); "
        "return 2; }",
        "    }", "    return 0;", "}")
    return out.text()
