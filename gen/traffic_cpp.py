"""The traffic harness as a C++ program over separately Verilated modules.

Verilator evaluates a whole network model at once: built flat, every router instance gets its
own copy of the code; built with routers as hierarchy blocks, each block is re-evaluated
whenever one of its inputs changes, about 8 times a cycle. This writes a C++ main that
instead Verilates each *distinct* module once (every router kind, the traffic source, the
traffic sink: the same Verilog the harness instantiates) and makes one model object per
instance, joined the way :class:`twinnet.hdl.network.Network` and
:class:`twinnet.hdl.traffic.TrafficHarness` join them: channels by the routers' port
signatures, terminals to sources and sinks, the harness's controls to every source and sink.

Every cycle the program settles the combinational paths between models with the clock low
(it copies each connected output to its input, evaluates the models whose inputs changed, and
again until nothing changes), then raises the clock on every model. The harness's cycle count
``now`` is kept here, as the harness's register is. Counters are summed here when read.

The program reads commands on stdin, one per line, and answers on stdout:

- ``set NAME VALUE``: a control (``enable``, ``measure``, ``rate``, ``pattern``,
  ``hotspot_rate``, ``seed``, ``onoff``, ``turn_on``, ``turn_off``, ``refuse_rate``,
  ``stall_start``, ``stall_max``, ``fault``, ``rst``);
- ``run N``: N clock cycles; answers ``ok``;
- ``read``: answers one line of ``name=value`` pairs, the harness's outputs (and ``hist<i>``,
  its histogram bins, ``stall_<reason>``, the routers' stall counters summed, when they
  have them, ``idle``, the cycles since a flit last moved on any link or terminal port, and
  ``hops``, the head flits that crossed a link between routers since reset);
- ``held``: answers one line with, per router in the netlist's order, the flits it holds
  (flits in minus flits out since reset, counted on its links and terminal ports), for the
  watchdog's report;
- ``links``: answers one line with the flits and the head flits (packets) that crossed each
  link since reset, in the netlist's channel order, then each terminal's injected and
  ejected flits and packets (``flits packets`` pairs: channels, then per terminal injection
  and ejection), for the per-link loads;
- ``quit``.

Of the harness's faults it has ``duplicate`` (a source's own); ``misroute`` and ``corrupt``,
which the harness applies on a link, are not modelled here (:data:`FAULTS`).
"""

from amaranth.hdl import Const, Shape
from amaranth.lib.wiring import Out

from twinnet.hdl.network import DROP_COUNT_WIDTH
from twinnet.hdl.router.stalls import STALL_REASONS
from twinnet.hdl.traffic import FAULTS as HARNESS_FAULTS

#: The faults the C++ harness injects (its ``fault`` control takes their index in
#: :data:`twinnet.hdl.traffic.FAULTS`, as the Verilog harness does).
FAULTS = ("none", "duplicate")
#: Controls of the harness that every source takes, and that every sink takes.
SOURCE_CONTROLS = ("enable", "measure", "rate", "pattern", "hotspot_rate", "seed", "onoff",
                   "turn_on", "turn_off")
SINK_CONTROLS = ("measure", "seed", "refuse_rate", "stall_start", "stall_max")


def cpp_name(port: str) -> str:
    """The C++ member of a Verilog port: Verilator escapes ``__`` as ``___05F``."""
    return port.replace("__", "___05F")


def _port(prefix: str, path) -> str:
    return cpp_name("__".join([prefix, *map(str, path)]))


def _constant(shape, value) -> int:
    return Const.cast(shape.const(value)).value


def _bit(word: str, width: int, offset: int) -> str:
    """C++: bit ``offset`` of Verilator's value ``word`` of ``width`` bits (a word array
    beyond 64 bits)."""
    if width > 64:
        word, offset = f"{word}[{offset // 32}]", offset % 32
    return f"(({word} >> {offset}) & 1)"


def _assign_wide(target: str, width: int, value: int) -> str:
    if width <= 64:
        return f"{target} = {value:#x}ULL;"
    words = (width + 31) // 32
    return " ".join(f"{target}[{i}] = {(value >> (32 * i)) & 0xFFFFFFFF:#x}u;"
                    for i in range(words))


class Program:
    """Lines of C++, indented."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, *lines: str, indent: int = 0) -> None:
        self.lines += ["    " * indent + line for line in lines]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def write_cpp(netlist, modules: dict, fmt, source, sink, harness_modules: dict,
              terminal_constants: list) -> str:
    """The C++ main (see the module docstring) for ``netlist`` (router kind → module name in
    ``modules``) with the harness's ``source`` and ``sink`` for its format ``fmt`` (their
    module names and the network's in ``harness_modules``) and the per-terminal
    ``(source constants, sink constants)`` values."""
    from twinnet.hdl.traffic import TrafficHarness
    from twinnet.sim_tb.traffic_program import MAX_FLIT_WIDTH

    source_module, sink_module = harness_modules["source"], harness_modules["sink"]
    if fmt.flit_width > MAX_FLIT_WIDTH:
        raise ValueError(f"the C++ harness takes flits of up to {MAX_FLIT_WIDTH} bits, not "
                         f"{fmt.flit_width}")
    kinds = sorted({router.kind for router in netlist.routers})
    index = {kind: {} for kind in kinds}  # kind -> router label -> index among its kind
    for router in netlist.routers:
        index[router.kind][router.label] = len(index[router.kind])

    def model(label: str) -> str:
        kind = netlist.by_label[label].kind
        return f"r_{kind}[{index[kind][label]}]"

    def dirty(label: str) -> str:
        kind = netlist.by_label[label].kind
        return f"d_{kind}[{index[kind][label]}]"

    out = Program()
    out("// Generated by twinnet (gen/traffic_cpp.py): the traffic harness of "
        f"{harness_modules['network']} over separately Verilated modules.",
        "#include <cstdint>", "#include <cstdio>", "#include <cstdlib>", "#include <cstring>",
        "#include <iostream>", "#include <string>", '#include "verilated.h"')
    for kind in kinds:
        out(f'#include "V{modules[kind]}.h"')
    out(f'#include "V{source_module}.h"', f'#include "V{sink_module}.h"', "",
        "template <class T> static inline bool put(T& target, const T& value) {",
        "    if (!(target != value)) return false;", "    target = value;", "    return true;",
        "}",
        "template <class T> static inline bool put_value(T& target, uint64_t value) {",
        "    return put(target, (T)value);", "}", "",
        "double sc_time_stamp() { return 0; }", "")
    pes = len(netlist.terminals)
    out("struct Harness {", "    VerilatedContext context;")
    for kind in kinds:
        count = len(index[kind])
        out(f"    V{modules[kind]}* r_{kind}[{count}];", f"    bool d_{kind}[{count}];")
    out(f"    V{source_module}* src[{pes}];", f"    V{sink_module}* snk[{pes}];",
        f"    bool d_src[{pes}], d_snk[{pes}];",
        f"    int64_t held[{len(netlist.routers)}] = {{0}};",
        f"    uint64_t link_flits[{len(netlist.channels)}] = {{0}}, "
        f"link_packets[{len(netlist.channels)}] = {{0}};",
        f"    uint64_t pe_flits[{2 * pes}] = {{0}}, pe_packets[{2 * pes}] = {{0}};",
        "    uint64_t now = 0, last_move = 0, hops = 0;", "    int rst = 0, fault = 0;", "")

    # Construction: models, per-node constants, per-terminal constants.
    out("    Harness() {")
    for kind in kinds:
        router = netlist.kinds[kind]
        layout = router.signature.members["node_static"].shape \
            if "node_static" in router.signature.members else None
        for router_instance in netlist.routers:
            if router_instance.kind != kind:
                continue
            name = model(router_instance.label)
            out(f"{name} = new V{modules[kind]}{{&context}};", indent=2)
            if layout is not None and router_instance.static is not None:
                value = _constant(layout, router_instance.static)
                out(_assign_wide(f"{name}->node_static", Shape.cast(layout).width, value),
                    indent=2)
    source_width = Shape.cast(source.constants_layout).width
    sink_width = Shape.cast(sink.constants_layout).width
    for terminal, (source_constants, sink_constants) in enumerate(terminal_constants):
        out(f"src[{terminal}] = new V{source_module}{{&context}};",
            f"snk[{terminal}] = new V{sink_module}{{&context}};", indent=2)
        out(_assign_wide(f"src[{terminal}]->constants", source_width,
                         _constant(source.constants_layout, source_constants)), indent=2)
        out(_assign_wide(f"snk[{terminal}]->constants", sink_width,
                         _constant(sink.constants_layout, sink_constants)), indent=2)
    out("        touch_all();", "    }", "")

    # Marking every model to be evaluated.
    out("    void touch_all() {")
    for kind in kinds:
        out(f"for (bool& d : d_{kind}) d = true;", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) d_src[i] = d_snk[i] = true;", indent=2)
    out("    }", "")

    # Controls.
    out("    void set(const std::string& name, uint64_t value) {")
    out("if (name == \"rst\") { rst = (int)value; set_all_rst(); return; }", indent=2)
    duplicate = HARNESS_FAULTS.index("duplicate")
    out(f"if (name == \"fault\") {{ fault = (int)value; src[0]->replay = fault == {duplicate}; "
        "d_src[0] = true; return; }", indent=2)
    for control in dict.fromkeys(SOURCE_CONTROLS + SINK_CONTROLS):
        parts = [f"{part}[i]->{control} = value; d_{part}[i] = true;"
                 for part, controls in (("src", SOURCE_CONTROLS), ("snk", SINK_CONTROLS))
                 if control in controls]
        out(f"if (name == \"{control}\") {{ for (int i = 0; i < {pes}; i++) {{ "
            f"{' '.join(parts)} }} return; }}", indent=2)
    out('std::fprintf(stderr, "unknown control %s\\n", name.c_str()); std::exit(2);', indent=2)
    out("    }", "", "    void set_all_rst() {")
    for kind in kinds:
        out(f"for (auto* m : r_{kind}) m->rst = rst;", indent=2)
    out("for (auto* m : src) m->rst = rst;", "for (auto* m : snk) m->rst = rst;", indent=2)
    out("if (rst) { for (auto& h : held) h = 0; last_move = hops = 0; "
        "for (auto& c : link_flits) c = 0; for (auto& c : link_packets) c = 0; "
        "for (auto& c : pe_flits) c = 0; for (auto& c : pe_packets) c = 0; }",
        "touch_all();", indent=2)
    out("    }", "")

    # Propagation: every connection, marking the receiving model when its input changes.
    out("    bool propagate() {", "        bool changed = false;")
    for channel in netlist.channels:
        member = netlist.kind_of(channel.source).signature.members[f"out_{channel.source_port}"]
        sender, receiver = model(channel.source), model(channel.target)
        for path, port in member.signature.members.flatten():
            if not port.is_port:
                continue
            sent = _port(f"out_{channel.source_port}", path)
            received = _port(f"in_{channel.target_port}", path)
            if port.flow == Out:
                out(f"if (put({receiver}->{received}, {sender}->{sent})) "
                    f"{dirty(channel.target)} = changed = true;", indent=2)
            else:
                out(f"if (put({sender}->{sent}, {receiver}->{received})) "
                    f"{dirty(channel.source)} = changed = true;", indent=2)
    for terminal, attached in enumerate(netlist.terminals):
        router, port = model(attached.router), attached.port
        kind = netlist.kind_of(attached.router)
        layout = kind.signature.members[f"in_{port}"].signature.members["payload"].shape
        fields = {name: field.offset for name, field in layout}
        src, snk = f"src[{terminal}]", f"snk[{terminal}]"
        payload = " | ".join([f"((uint64_t){src}->data << {fields['data']})",
                              f"((uint64_t){src}->first << {fields['first']})",
                              f"((uint64_t){src}->last << {fields['last']})"])
        dirty_router = dirty(attached.router)
        out(f"if (put_value({router}->{_port(f'in_{port}', ['valid'])}, {src}->valid)) "
            f"{dirty_router} = changed = true;", indent=2)
        out(f"if (put_value({router}->{_port(f'in_{port}', ['payload'])}, {payload})) "
            f"{dirty_router} = changed = true;", indent=2)
        out(f"if (put_value({src}->ready, {router}->{_port(f'in_{port}', ['ready'])})) "
            f"d_src[{terminal}] = changed = true;", indent=2)
        out_layout = kind.signature.members[f"out_{port}"].signature.members["payload"].shape
        out_fields = {name: (field.offset, field.width) for name, field in out_layout}
        word = f"{router}->{_port(f'out_{port}', ['payload'])}"
        for name in ("data", "first", "last"):
            offset, width = out_fields[name]
            mask = (1 << width) - 1
            out(f"if (put_value({snk}->{name}, ((uint64_t){word} >> {offset}) & {mask:#x}ULL)) "
                f"d_snk[{terminal}] = changed = true;", indent=2)
        out(f"if (put_value({snk}->valid, {router}->{_port(f'out_{port}', ['valid'])})) "
            f"d_snk[{terminal}] = changed = true;", indent=2)
        out(f"if (put_value({router}->{_port(f'out_{port}', ['ready'])}, {snk}->ready)) "
            f"{dirty_router} = changed = true;", indent=2)
    out("        return changed;", "    }", "")

    # Evaluation of the marked models.
    out("    void evaluate() {")
    for kind in kinds:
        out(f"for (int i = 0; i < {len(index[kind])}; i++) if (d_{kind}[i]) "
            f"{{ d_{kind}[i] = false; r_{kind}[i]->eval(); }}", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) {{ if (d_src[i]) {{ d_src[i] = false; "
        "src[i]->eval(); } if (d_snk[i]) { d_snk[i] = false; snk[i]->eval(); } }", indent=2)
    out("    }", "")

    # Flits moving this cycle, per router (the watchdog's ``idle`` and ``held``).
    number = {router.label: i for i, router in enumerate(netlist.routers)}
    out("    void count_moves() {", "        bool moved = false;")
    for position, channel in enumerate(netlist.channels):
        receiver = model(channel.target)
        flit = netlist.kind_of(channel.target).signature.members[f"in_{channel.target_port}"] \
            .signature.members["flit"].signature.members["payload"].shape
        head = _bit(f"{receiver}->{_port(f'in_{channel.target_port}', ['flit', 'payload'])}",
                    Shape.cast(flit).width, flit["first"].offset)
        valid = _port(f"in_{channel.target_port}", ["flit", "valid"])
        out(f"if ({receiver}->{valid}) {{ held[{number[channel.source]}]--; "
            f"held[{number[channel.target]}]++; hops += {head}; moved = true; "
            f"link_flits[{position}]++; link_packets[{position}] += {head}; }}", indent=2)
    for terminal, attached in enumerate(netlist.terminals):
        router = number[attached.router]
        out(f"if (src[{terminal}]->valid && src[{terminal}]->ready) "
            f"{{ held[{router}]++; moved = true; pe_flits[{2 * terminal}]++; "
            f"pe_packets[{2 * terminal}] += src[{terminal}]->first; }}", indent=2)
        out(f"if (snk[{terminal}]->valid && snk[{terminal}]->ready) "
            f"{{ held[{router}]--; moved = true; pe_flits[{2 * terminal + 1}]++; "
            f"pe_packets[{2 * terminal + 1}] += snk[{terminal}]->first; }}", indent=2)
    out("if (moved) last_move = now;", indent=2)
    out("    }", "")

    # One clock cycle.
    out("    void cycle() {")
    for kind in kinds:
        out(f"for (auto* m : r_{kind}) m->clk = 0;", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) {{ src[i]->clk = 0; snk[i]->clk = 0; "
        "src[i]->now = (uint32_t)now; snk[i]->now = (uint32_t)now; }", indent=2)
    # The outputs the last rising edge changed reach their inputs before the first
    # evaluation (evaluating first and propagating after costs every model a second
    # evaluation: 3DT 4x4x4 ran 8,000 instead of 10,500 cycles/s).
    out("touch_all();", "propagate();", "for (int round = 0;; round++) {", indent=2)
    out("evaluate();", "if (!propagate()) break;",
        "if (round > 1000) { std::fprintf(stderr, \"combinational loop between models\\n\"); "
        "std::exit(3); }", indent=3)
    out("}", indent=2)
    out("count_moves();", indent=2)
    for kind in kinds:
        out(f"for (auto* m : r_{kind}) {{ m->clk = 1; m->eval(); }}", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) {{ src[i]->clk = 1; src[i]->eval(); "
        "snk[i]->clk = 1; snk[i]->eval(); }", indent=2)
    out("now = rst ? 0 : now + 1;", indent=2)
    out("    }", "")

    # Reading the harness's outputs.
    out("    void read() {")
    sums = list(TrafficHarness.SUMS)
    out("uint64_t " + ", ".join(f"{name} = 0" for name in sums) + ";", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) {{", indent=2)
    for name in sums:
        part = "src" if name in source.signature.members else "snk"
        out(f"{name} += {part}[i]->{name};", indent=3)
    out("}", indent=2)
    out("uint64_t drop_count = 0, latency_max = 0, replayed = src[0]->replayed;", indent=2)
    for kind in kinds:
        out(f"for (auto* m : r_{kind}) drop_count += m->drop_count;", indent=2)
    limit = (1 << DROP_COUNT_WIDTH) - 1
    out(f"if (drop_count > {limit:#x}ULL) drop_count = {limit:#x}ULL;",
        "for (auto* m : snk) if (m->latency_max > latency_max) latency_max = m->latency_max;",
        indent=2)
    histogram = sink.signature.members["histogram"].shape
    bins = histogram.length
    if Shape.cast(histogram.elem_shape).width != 32:
        raise ValueError("the C++ harness reads 32-bit histogram bins (one word each)")
    out(f"uint64_t hist[{bins}] = {{0}};",
        f"for (auto* m : snk) for (int b = 0; b < {bins}; b++) hist[b] += m->histogram[b];",
        indent=2)
    out("uint64_t idle = now - last_move;", indent=2)
    fields = " ".join(f"{name}=%llu" for name in [*sums, "drop_count", "latency_max",
                                                  "faults", "now", "idle", "hops"])
    values = ", ".join(f"(unsigned long long){name}"
                       for name in [*sums, "drop_count", "latency_max", "replayed", "now",
                                    "idle", "hops"])
    if all("stalls" in netlist.kinds[kind].signature.members for kind in kinds):
        # The routers' stall counters, summed (each 48 bits: no sum wraps).
        for reason in STALL_REASONS:
            out(f"uint64_t stall_{reason} = 0;", indent=2)
            for kind in kinds:
                out(f"for (auto* m : r_{kind}) stall_{reason} += "
                    f"m->{_port('stalls', [reason])};", indent=2)
        fields += "".join(f" stall_{reason}=%llu" for reason in STALL_REASONS)
        values += "".join(f", (unsigned long long)stall_{reason}" for reason in STALL_REASONS)
    out(f'std::printf("{fields}", {values});',
        f'for (int b = 0; b < {bins}; b++) std::printf(" hist%d=%llu", b, '
        "(unsigned long long)hist[b]);", 'std::printf("\\n");', "std::fflush(stdout);",
        indent=2)
    out("    }", "")
    out("    void print_held() {",
        f"        for (int i = 0; i < {len(netlist.routers)}; i++) "
        "std::printf(i ? \" %lld\" : \"%lld\", (long long)held[i]);",
        '        std::printf("\\n");', "        std::fflush(stdout);", "    }")
    out("    void print_links() {",
        f"        for (int i = 0; i < {len(netlist.channels)}; i++) "
        "std::printf(i ? \" %llu %llu\" : \"%llu %llu\", (unsigned long long)link_flits[i], "
        "(unsigned long long)link_packets[i]);",
        f"        for (int i = 0; i < {2 * pes}; i++) std::printf(\" %llu %llu\", "
        "(unsigned long long)pe_flits[i], (unsigned long long)pe_packets[i]);",
        '        std::printf("\\n");', "        std::fflush(stdout);", "    }", "};", "")

    out("int main(int argc, char** argv) {", "    Harness h;", "    std::string command;",
        "    while (std::cin >> command) {",
        "        if (command == \"set\") { std::string name; uint64_t value; "
        "std::cin >> name >> value; h.set(name, value); }",
        "        else if (command == \"run\") { uint64_t n; std::cin >> n; "
        "for (uint64_t i = 0; i < n; i++) h.cycle(); std::printf(\"ok\\n\"); "
        "std::fflush(stdout); }",
        "        else if (command == \"read\") h.read();",
        "        else if (command == \"held\") h.print_held();",
        "        else if (command == \"links\") h.print_links();",
        "        else if (command == \"quit\") break;",
        "        else { std::fprintf(stderr, \"unknown command %s\\n\", command.c_str()); "
        "return 2; }",
        "    }", "    return 0;", "}")
    return out.text()
