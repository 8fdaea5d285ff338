"""A whole network from a netlist: router kinds converted once, instances joined by signature.

A topology family describes its network as a :class:`Netlist`:

- **kinds**: the distinct router modules, each a :class:`twinnet.hdl.router.Router` (a
  ``RouterConfig`` plus a route compute). The generator converts each kind to Verilog once;
- **routers**: one :class:`RouterInstance` per router of the network, naming its kind and the
  values of its per-node constants (the route compute's ``node_static`` layout, e.g. the node's
  coordinates), tied off through that layout (``layout.const``), not packed by hand;
- **links**: one :class:`Link` per direction of a cable, from a router's output port to a
  router's input port;
- **terminals**: the PE ports, in terminal-number order.

:class:`Network` is the top: one instance per router, instantiating its kind's module by
name, with ports named after the router's own signature; a link joins an output port to an
input port member by member, so a width or direction mismatch between two routers is an error
(:meth:`Network.verilog` writes the top's Verilog). Each PE bus is an ``ArrayLayout`` of P
elements (:meth:`Network.pe_bus`), terminal ``i`` owning element ``i``: bit ``i`` of each 1-bit
bus and bits ``[i*W, (i+1)*W)`` of each data bus; the payload buses carry the fields of the PE
ports' own layouts (:func:`twinnet.hdl.flit.pe_in_layout`, ``pe_out_layout``):

    pe_in_valid, pe_in_first, pe_in_last: In(P)     pe_in_ready: Out(P)     pe_in_data: In(P*W)
    pe_out_valid, pe_out_first, pe_out_last, pe_out_abort: Out(P)
    pe_out_ready: In(P)     pe_out_data: Out(P*W)
    pe_framing_stray, pe_framing_cut, pe_framing_long: Out(P*16) — each PE port's counters of
        bad framing (:class:`twinnet.hdl.router.input_unit.InputUnit`), each saturating.
    drop_count: Out(32) — malformed packets dropped at injection, summed over every router:
        exact until the total reaches 2**32 - 1, where it saturates (each router counts in
        :data:`twinnet.hdl.config.DROP_COUNT_WIDTH` bits too, so none saturates before the
        total does).

With ``trace=True`` the top also shows every link to a testbench: ``trace_valid`` (one bit per
link: a flit is on it this cycle) and ``trace_flit``, an ``ArrayLayout`` of
:attr:`Network.trace_layout` (the link flit's layout, its VC tag wide enough for every link),
one element per link: link ``j``'s flit payload at bits ``[j*S, (j+1)*S)``, S =
:attr:`Network.trace_stride`. The manifest's ``trace.layout`` is this layout's fields.

With ``link_counters`` (a :class:`twinnet.hdl.link_counter.LinkCounters` of the netlist and the
Verilog module it was converted under) the top also instantiates it, fed from every link's
and terminal's wires, and shows its counters: ``link_counts_<k>`` (its ``counts_<k>`` ports).
"""

import itertools
from dataclasses import dataclass, field

from amaranth.hdl import ClockSignal, Const, Instance, Module, ResetSignal, Shape, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from . import flit
from .config import DROP_COUNT_WIDTH, FRAMING_ERRORS
from .router import Router


@dataclass(frozen=True)
class RouterInstance:
    """One router of the network: its ``label`` (unique, used in the manifest, the trace and
    reports, e.g. ``0,1,2/c0``), its ``kind`` (a key of :attr:`Netlist.kinds`) and the values of
    its per-node constants (a dict for the kind's ``node_static`` layout, or ``None``)."""

    label: str
    kind: str
    static: dict | None = None


@dataclass(frozen=True)
class Link:
    """One direction of a cable: from output ``source_port`` of router ``source`` to input
    ``target_port`` of router ``target`` (router labels, router-local port indices).
    ``source_port_label``/``target_port_label`` name the ports in reports (``X+``, ``I``)."""

    index: int
    source: str
    source_port: int
    target: str
    target_port: int
    source_port_label: str
    target_port_label: str
    vc_count: int

    def describe(self) -> dict:
        return {"index": self.index,
                "from": {"router": self.source, "port": self.source_port_label},
                "to": {"router": self.target, "port": self.target_port_label},
                "vc_count": self.vc_count}


@dataclass(frozen=True)
class Terminal:
    """A PE: the router (label) and the router-local PE port it is attached to."""

    router: str
    port: int


@dataclass
class Netlist:
    """Everything :class:`Network` needs; see the module docstring."""

    kinds: dict[str, Router]
    routers: list[RouterInstance]
    links: list[Link]
    terminals: list[Terminal]
    by_label: dict[str, RouterInstance] = field(init=False)

    def __post_init__(self):
        self.by_label = {router.label: router for router in self.routers}
        if len(self.by_label) != len(self.routers):
            raise ValueError("router labels must be unique")
        if [link.index for link in self.links] != list(range(len(self.links))):
            raise ValueError("links must be listed by index, from 0")
        for router in self.routers:
            if router.kind not in self.kinds:
                raise ValueError(f"router {router.label}: unknown kind {router.kind!r}")
        widths = {kind.config.flit_width for kind in self.kinds.values()}
        if len(widths) != 1:
            raise ValueError(f"every router kind must have the same flit width, not {widths}")
        self.flit_width = widths.pop()

    def kind_of(self, label: str) -> Router:
        return self.kinds[self.by_label[label].kind]


def module_ports(component) -> list[tuple[str, str, int]]:
    """``(Verilog name, "i"/"o", width)`` of each port of ``component`` once converted, in
    the order of ``signature.flatten``. Read from the signature's members: creating the
    signals would build the waveform format of every element of the PE buses, which took
    seconds on 4,096 terminals."""
    return [("__".join(str(part) for part in path), "i" if member.flow == In else "o",
             Shape.cast(member.shape).width)
            for path, member in _port_members(component.signature.members)]


def _port_members(members, path=()):
    """``(path, member)`` of each port under ``members``, arrays expanded index by index."""
    for name, member in members.items():
        for index in itertools.product(*(range(size) for size in member.dimensions)):
            where = (*path, name, *index)
            if member.is_port:
                yield where, member
            else:
                yield from _port_members(member.signature.members, where)


def instantiate(m: Module, name: str, module: str, component: wiring.Component):
    """Add submodule ``name``: an ``Instance`` of the Verilog module ``module`` (``component``
    converted once with :func:`twinnet.hdl.verilog.convert`, so with ``clk`` and ``rst``).
    Returns an interface created from ``component``'s signature whose members are the
    instance's ports: connect them with ``wiring.connect`` or assignments."""
    iface = component.signature.create(path=(name,))
    connections = {"i_clk": ClockSignal(), "i_rst": ResetSignal()}
    for path, member, value in component.signature.flatten(iface):
        port = "__".join(str(part) for part in path)
        connections[f"{'i' if member.flow == In else 'o'}_{port}"] = value
    m.submodules[name] = Instance(module, **connections)
    return iface


class Network:
    """The network top (see the module docstring for its ports): its ``signature`` (a
    component's ports, for :func:`instantiate` and :func:`module_ports`) and its Verilog,
    :meth:`verilog`.

    The top is structure only (instances, wires, the PE buses, the trace and a tree of adders
    for ``drop_count``), so it is written as Verilog text directly: Amaranth's netlist, bit
    by bit, took 17 of the 19 s 3DT 8x8x8 needed to generate (1,024 routers), and nearly
    1 GB. Each connection is checked as ``wiring.connect`` checks it: a link joins an
    output port to an input port of the same members, widths and opposite flows, or it is an
    error.

    Parameters:
        netlist: the :class:`Netlist`.
        modules: kind name → the Verilog module name that kind was converted under.
        trace: add the ``trace_valid``/``trace_flit`` outputs.
        link_counters: ``(LinkCounters, module name)`` to add the link counters and their
            ``link_counts_<k>`` outputs, or None.
    """

    def __init__(self, netlist: Netlist, modules: dict[str, str], *, trace: bool = False,
                 link_counters=None):
        self.netlist, self.modules, self.trace = netlist, modules, trace
        self.link_counters = link_counters
        vc_count = max([link.vc_count for link in netlist.links] or [1])
        #: One link's element of ``trace_flit``: the link flit's layout, its VC tag as wide as
        #: the widest link's (a narrower tag is zero-extended).
        self.trace_layout = flit.link_flit_layout(netlist.flit_width, vc_count)
        # The PE ports' payloads (every kind has the same flit width; the injection's ``vc``
        # is not on a bus).
        inject = {name: field.shape for name, field in flit.pe_in_layout(netlist.flit_width, 1)}
        eject = {name: field.shape for name, field in flit.pe_out_layout(netlist.flit_width)}
        members = {
            "pe_in_valid": In(self.pe_bus(1)), "pe_in_first": In(self.pe_bus(inject["first"])),
            "pe_in_last": In(self.pe_bus(inject["last"])),
            "pe_in_data": In(self.pe_bus(inject["data"])), "pe_in_ready": Out(self.pe_bus(1)),
            "pe_out_valid": Out(self.pe_bus(1)),
            "pe_out_first": Out(self.pe_bus(eject["first"])),
            "pe_out_last": Out(self.pe_bus(eject["last"])),
            "pe_out_abort": Out(self.pe_bus(eject["abort"])),
            "pe_out_data": Out(self.pe_bus(eject["data"])), "pe_out_ready": In(self.pe_bus(1)),
            **{f"pe_framing_{kind}": Out(self.pe_bus(flit.framing_layout[kind].shape))
               for kind in FRAMING_ERRORS},
            "drop_count": Out(DROP_COUNT_WIDTH),
        }
        if trace:
            members["trace_valid"] = Out(data.ArrayLayout(1, len(netlist.links)))
            members["trace_flit"] = Out(data.ArrayLayout(self.trace_layout, len(netlist.links)))
        if link_counters is not None:
            counts = link_counters[0].signature.members
            for k in range(len(link_counters[0].chunks)):
                members[f"link_counts_{k}"] = Out(counts[f"counts_{k}"].shape)
        self.signature = wiring.Signature(members)

    def pe_bus(self, shape) -> data.ArrayLayout:
        """A PE bus of elements of ``shape``: element ``i`` belongs to terminal ``i``."""
        return data.ArrayLayout(shape, len(self.netlist.terminals))

    @property
    def trace_stride(self) -> int:
        """Bits of one link's element of ``trace_flit``."""
        return self.trace_layout.size

    def verilog(self, name: str) -> str:
        """The top as Verilog text, module ``name``."""
        return _TopWriter(self).text(name)


class _TopWriter:
    """Writes :class:`Network`'s Verilog: one wire per output port of every router instance
    (``r<index>__<port>``), each input port fed by the output it is joined to, a PE bus bit or
    slice, or its reset value."""

    #: The payload fields of a PE port the top's buses carry, after ``valid`` (a field not
    #: named, the injection's ``vc``, keeps its reset value).
    PE_FIELDS = ("data", "first", "last", "abort")

    def __init__(self, top: Network):
        self.top, self.netlist = top, top.netlist
        self.index = {router.label: index for index, router in enumerate(self.netlist.routers)}
        # Per router kind: port path → (flow, width, reset value, shape), in signature order.
        self.ports = {}
        for kind, router in self.netlist.kinds.items():
            iface = router.signature.create()
            self.ports[kind] = {
                path: (member.flow, len(Value.cast(value)), Value.cast(value).init,
                       member.shape)
                for path, member, value in router.signature.flatten(iface)}
        self.inputs = {}  # (router index, port path) -> the expression that feeds it

    def wire(self, router: int, path: tuple) -> str:
        return f"r{router}__" + "__".join(str(part) for part in path)

    def port(self, router: int, path: tuple):
        kind = self.netlist.routers[router].kind
        return self.ports[kind].get(path)

    def feed(self, router: int, path: tuple, expression: str, width: int, what: str) -> None:
        port = self.port(router, path)
        label = self.netlist.routers[router].label
        name = "__".join(map(str, path))
        if port is None or port[0] != In:
            raise ValueError(f"{what}: router {label} has no input port {name}")
        if port[1] != width:
            raise ValueError(f"{what}: router {label}'s input {name} is {port[1]} bits wide, "
                             f"its source {width}")
        if (router, path) in self.inputs:
            raise ValueError(f"{what}: router {label}'s input {name} is driven twice")
        self.inputs[router, path] = expression

    def element(self, bus: str, terminal: int) -> str:
        """Terminal ``terminal``'s element of the top's PE bus ``bus``, as Verilog."""
        return _bits(bus, self.top.signature.members[bus].shape[terminal])

    def members(self, router: int, prefix: str) -> dict:
        """The ports under ``prefix`` (e.g. ``out_2``) of ``router``: sub-path → port."""
        kind = self.netlist.routers[router].kind
        return {path[1:]: port for path, port in self.ports[kind].items()
                if path[0] == prefix}

    def connect(self, link: Link) -> None:
        """Join ``link``'s output port to its input port, member by member."""
        what = f"link {link.index}"
        source, target = self.index[link.source], self.index[link.target]
        sending = self.members(source, f"out_{link.source_port}")
        receiving = self.members(target, f"in_{link.target_port}")
        if not sending or sending.keys() != receiving.keys():
            raise ValueError(f"{what}: {link.source} out_{link.source_port} and "
                             f"{link.target} in_{link.target_port} do not match")
        for sub, (flow, width, _, _) in sending.items():
            if flow == Out:
                self.feed(target, (f"in_{link.target_port}", *sub),
                          self.wire(source, (f"out_{link.source_port}", *sub)), width, what)
            else:
                self.feed(source, (f"out_{link.source_port}", *sub),
                          self.wire(target, (f"in_{link.target_port}", *sub)), width, what)

    def terminals(self) -> dict[str, list[str]]:
        """Feed every terminal's injection port from the top's PE buses; return the parts of
        the top's output buses (per bus, one Verilog expression per terminal)."""
        netlist = self.netlist
        buses = {bus: [] for bus in ("pe_in_ready", "pe_out_valid", "pe_out_data",
                                     "pe_out_first", "pe_out_last", "pe_out_abort",
                                     *(f"pe_framing_{kind}" for kind in FRAMING_ERRORS))}
        for terminal, attached in enumerate(netlist.terminals):
            router, what = self.index[attached.router], f"terminal {terminal}"
            inject, eject = f"in_{attached.port}", f"out_{attached.port}"
            self.feed(router, (inject, "valid"),
                      f"{self.element('pe_in_valid', terminal)} & ~rst", 1, what)
            self.feed(router, (eject, "ready"), self.element("pe_out_ready", terminal), 1, what)
            _, size, init, layout = self.port(router, (inject, "payload"))
            parts = []  # the payload's fields from the buses, lowest bit first
            for field_name, place in sorted(layout, key=lambda item: item[1].offset):
                if field_name in self.PE_FIELDS:
                    parts.append(self.element(f"pe_in_{field_name}", terminal))
                else:
                    parts.append(_constant(init >> place.offset, place.width))
            self.feed(router, (inject, "payload"), _concatenation(parts), size, what)
            buses["pe_in_ready"].append(f"({self.wire(router, (inject, 'ready'))} & ~rst)")
            buses["pe_out_valid"].append(self.wire(router, (eject, "valid")))
            framing = self.wire(router, (f"framing_{attached.port}",))
            for kind in FRAMING_ERRORS:
                buses[f"pe_framing_{kind}"].append(_bits(framing, flit.framing_layout[kind]))
            payload = self.wire(router, (eject, "payload"))
            for field_name, place in self.port(router, (eject, "payload"))[3]:
                if field_name in self.PE_FIELDS:
                    buses[f"pe_out_{field_name}"].append(_bits(payload, place))
        return buses

    def text(self, name: str) -> str:
        netlist, top = self.netlist, self.top
        for index, instance in enumerate(netlist.routers):
            if instance.static is not None:
                layout = netlist.kinds[instance.kind].signature.members["node_static"].shape
                static = Const.cast(layout.const(instance.static))
                self.feed(index, ("node_static",), _constant(static.value, len(static)),
                          len(static), f"router {instance.label}'s constants")
        for link in netlist.links:
            self.connect(link)
        buses = self.terminals()
        lines = [f"module {name}(clk, rst, " +
                 ", ".join(port for port, _, _ in module_ports(top)) + ");",
                 "  input clk;", "  input rst;"]
        for port, direction, size in module_ports(top):
            lines.append(f"  {'input' if direction == 'i' else 'output'} {_range(size)}{port};")
        for index, instance in enumerate(netlist.routers):
            for path, (flow, size, _, _) in self.ports[instance.kind].items():
                if flow == Out:
                    lines.append(f"  wire {_range(size)}{self.wire(index, path)};")
        for index, instance in enumerate(netlist.routers):
            connections = [".clk(clk)", ".rst(rst)"]
            for path, (flow, size, init, _) in self.ports[instance.kind].items():
                port = "__".join(map(str, path))
                source = self.wire(index, path) if flow == Out else \
                    self.inputs.get((index, path), _constant(init, size))
                connections.append(f".{port}({source})")
            lines.append(f"  {top.modules[instance.kind]} r{index} (" +
                         ", ".join(connections) + ");")
        for bus, parts in buses.items():
            lines.append(f"  assign {bus} = {_concatenation(parts)};")
        if top.trace:
            valid, flits = [], []
            for link in netlist.links:
                out = f"out_{link.source_port}"
                source = self.index[link.source]
                layout = self.port(source, (out, "flit", "payload"))[3]
                payload = self.wire(source, (out, "flit", "payload"))
                valid.append(self.wire(source, (out, "flit", "valid")))
                if layout == top.trace_layout:
                    flits.append(payload)
                    continue
                # Each field of the trace's layout from the same field of the link's flit,
                # zero-extended (a link with fewer VCs has a narrower tag).
                parts = []
                for field_name, place in top.trace_layout:
                    sent = layout[field_name]
                    parts.append(_bits(payload, sent))
                    if sent.width < place.width:
                        parts.append(_constant(0, place.width - sent.width))
                flits.append(_concatenation(parts))
            lines += [f"  assign trace_valid = {_concatenation(valid)};",
                      f"  assign trace_flit = {_concatenation(flits)};"]
        lines += self.drop_count()
        if top.link_counters is not None:
            lines.append(self.link_counters())
        return "\n".join(lines + ["endmodule", ""])

    def link_counters(self) -> str:
        """The instance of the link counters, fed from the wires of every link and
        terminal (see :class:`twinnet.hdl.link_counter.LinkCounters`)."""
        counters, module = self.top.link_counters
        names = {name for name, _, _ in module_ports(counters)}
        taps = {}
        for link in self.netlist.links:
            j = link.index
            source, out = self.index[link.source], f"out_{link.source_port}"
            if self.port(source, ("waits", out)) is None:
                raise ValueError("the link counters read the routers' waits: build the "
                                 "routers with their stall counters")
            taps.update({f"c{j}_valid": self.wire(source, (out, "flit", "valid")),
                         f"c{j}_payload": self.wire(source, (out, "flit", "payload")),
                         f"c{j}_waits": self.wire(source, ("waits", out))})
        for t, attached in enumerate(self.netlist.terminals):
            router = self.index[attached.router]
            taps.update({f"i{t}_valid": self.element("pe_in_valid", t),
                         f"i{t}_first": self.element("pe_in_first", t),
                         f"i{t}_ready": self.wire(router, (f"in_{attached.port}", "ready")),
                         f"e{t}_valid": self.wire(router, (f"out_{attached.port}", "valid")),
                         f"e{t}_payload": self.wire(router, (f"out_{attached.port}", "payload")),
                         f"e{t}_ready": self.element("pe_out_ready", t)})
        taps.update({f"counts_{k}": f"link_counts_{k}"
                     for k in range(len(counters.chunks))})
        if set(taps) != names:
            raise ValueError("the link counters' ports do not match the network's links")
        connections = [".clk(clk)", ".rst(rst)", *(f".{name}({value})"
                                                   for name, value in taps.items())]
        return f"  {module} link_counters (" + ", ".join(connections) + ");"

    def drop_count(self) -> list[str]:
        """``drop_count``: every router's count summed by a balanced tree of adders (each
        level one bit wider, so that no partial sum overflows), saturating at its width's
        largest value."""
        lines, level = [], 0
        sums = [(self.wire(index, ("drop_count",)), DROP_COUNT_WIDTH)
                for index in range(len(self.netlist.routers))]
        while len(sums) > 1:
            level += 1
            paired = []
            for position, ((a, size), (b, _)) in enumerate(zip(sums[::2], sums[1::2])):
                total = f"drop_sum_{level}_{position}"
                lines += [f"  wire {_range(size + 1)}{total};",
                          f"  assign {total} = {a} + {b};"]
                paired.append((total, size + 1))
            sums = paired + ([sums[-1]] if len(sums) % 2 else [])
        total, size = sums[0]
        limit = (1 << DROP_COUNT_WIDTH) - 1
        if size == DROP_COUNT_WIDTH:
            return lines + [f"  assign drop_count = {total};"]
        return lines + [f"  assign drop_count = {total} > {_constant(limit, size)} ? "
                        f"{_constant(limit, DROP_COUNT_WIDTH)} : "
                        f"{total}[{DROP_COUNT_WIDTH - 1}:0];"]


def _bits(wire: str, place: data.Field) -> str:
    """The bits of ``wire`` that field ``place`` of its layout occupies, as Verilog."""
    if place.width == 1:
        return f"{wire}[{place.offset}]"
    return f"{wire}[{place.offset + place.width - 1}:{place.offset}]"


def _range(width: int) -> str:
    return f"[{width - 1}:0] " if width > 1 else ""


def _constant(value: int, width: int) -> str:
    return f"{width}'h{value & ((1 << width) - 1):x}"


def _concatenation(parts: list[str]) -> str:
    """Verilog's concatenation of ``parts``, the first in the least significant bits."""
    return "{ " + ", ".join(reversed(parts)) + " }"
