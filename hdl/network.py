"""A whole network from a netlist: router kinds converted once, instances joined by signature.

A topology family describes its network as a :class:`Netlist`:

- **kinds**: the distinct router modules, each a :class:`twinnet.hdl.router.Router` (a
  ``RouterConfig`` plus a route compute). The generator converts each kind to Verilog once;
- **routers**: one :class:`RouterInstance` per router of the network, naming its kind and the
  values of its per-node constants (the route compute's ``node_static`` layout, e.g. the node's
  coordinates), tied off through that layout (``layout.const``), not packed by hand;
- **channels**: one :class:`Channel` per direction of a cable, from a router's output port to a
  router's input port;
- **terminals**: the PE ports, in terminal-number order.

:class:`Network` is the top: one ``Instance`` per router, instantiating its kind's module by
name. Each instance's ports are an interface made from the router's own signature
(``signature.create()``), and channels are joined with ``wiring.connect``, so a width or direction
mismatch between two routers is an elaboration error. Terminal ``i`` owns bit ``i`` of each 1-bit
PE bus and bits ``[i*W, (i+1)*W)`` of each data bus:

    pe_in_valid, pe_in_first, pe_in_last: In(P)     pe_in_ready: Out(P)     pe_in_data: In(P*W)
    pe_out_valid, pe_out_first, pe_out_last: Out(P) pe_out_ready: In(P)     pe_out_data: Out(P*W)
    drop_count: Out(32) — malformed packets dropped at injection, summed over every router:
        exact until the total reaches 2**32 - 1, where it saturates (each router counts in
        :data:`DROP_COUNT_WIDTH` bits too, so none saturates before the total does).

With ``trace=True`` the top also shows every channel to a testbench: ``trace_valid`` (one bit per
channel: a flit is on it this cycle) and ``trace_flit`` (channel ``j``'s flit payload at bits
``[j*S, (j+1)*S)``, S = :attr:`Network.trace_stride`: data, first, last, then the VC).
"""

from dataclasses import dataclass, field

from amaranth.hdl import C, Cat, ClockSignal, Instance, Module, Mux, ResetSignal, Shape
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .adders import sum_tree
from .router import Router

#: Width of every router's drop counter in a network, and of the network's total.
DROP_COUNT_WIDTH = 32


@dataclass(frozen=True)
class RouterInstance:
    """One router of the network: its ``label`` (unique, used in the manifest, the trace and
    reports, e.g. ``0,1,2/c0``), its ``kind`` (a key of :attr:`Netlist.kinds`) and the values of
    its per-node constants (a dict for the kind's ``node_static`` layout, or ``None``)."""

    label: str
    kind: str
    static: dict | None = None


@dataclass(frozen=True)
class Channel:
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
    channels: list[Channel]
    terminals: list[Terminal]
    by_label: dict[str, RouterInstance] = field(init=False)

    def __post_init__(self):
        self.by_label = {router.label: router for router in self.routers}
        if len(self.by_label) != len(self.routers):
            raise ValueError("router labels must be unique")
        if [channel.index for channel in self.channels] != list(range(len(self.channels))):
            raise ValueError("channels must be listed by index, from 0")
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
    """``(Verilog name, "i"/"o", width)`` of each port of ``component`` once converted."""
    ports = []
    for path, member, _ in component.signature.flatten(component):
        name = "__".join(str(part) for part in path)
        ports.append((name, "i" if member.flow == In else "o", Shape.cast(member.shape).width))
    return ports


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


class Network(wiring.Component):
    """The network top (see the module docstring for its ports).

    Parameters:
        netlist: the :class:`Netlist`.
        modules: kind name → the Verilog module name that kind was converted under.
        trace: add the ``trace_valid``/``trace_flit`` outputs.
    """

    def __init__(self, netlist: Netlist, modules: dict[str, str], *, trace: bool = False):
        self.netlist, self.modules, self.trace = netlist, modules, trace
        vc_counts = [channel.vc_count for channel in netlist.channels] or [1]
        self.vc_bits = max(1, max(vc_counts) - 1).bit_length()
        self.trace_stride = netlist.flit_width + 2 + self.vc_bits
        pes, width = len(netlist.terminals), netlist.flit_width
        members = {
            "pe_in_valid": In(pes), "pe_in_first": In(pes), "pe_in_last": In(pes),
            "pe_in_data": In(pes * width), "pe_in_ready": Out(pes),
            "pe_out_valid": Out(pes), "pe_out_first": Out(pes), "pe_out_last": Out(pes),
            "pe_out_data": Out(pes * width), "pe_out_ready": In(pes),
            "drop_count": Out(DROP_COUNT_WIDTH),
        }
        if trace:
            members["trace_valid"] = Out(len(netlist.channels))
            members["trace_flit"] = Out(len(netlist.channels) * self.trace_stride)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        netlist, width = self.netlist, self.netlist.flit_width
        ports = {}  # router label -> the interface of its instance's ports
        for index, instance in enumerate(netlist.routers):
            router = netlist.kinds[instance.kind]
            iface = instantiate(m, f"r{index}", self.modules[instance.kind], router)
            if instance.static is not None:
                layout = router.signature.members["node_static"].shape
                m.d.comb += iface.node_static.eq(layout.const(instance.static))
            ports[instance.label] = iface

        # Each wide output is assigned once, from the concatenation of its parts: Amaranth
        # checks every bit of a statement's target, so a statement per part would cost the
        # width of the whole bus each time (quadratic in the network's size).
        trace_valid, trace_flit = [], []
        for channel in netlist.channels:
            sender = getattr(ports[channel.source], f"out_{channel.source_port}")
            receiver = getattr(ports[channel.target], f"in_{channel.target_port}")
            wiring.connect(m, sender, receiver)
            payload = sender.flit.payload.as_value()
            trace_valid.append(sender.flit.valid)
            trace_flit.append(Cat(payload, C(0, self.trace_stride - len(payload))))
        if self.trace:
            m.d.comb += [self.trace_valid.eq(Cat(trace_valid)),
                         self.trace_flit.eq(Cat(trace_flit))]

        outputs = {name: [] for name in ("pe_in_ready", "pe_out_valid", "pe_out_data",
                                         "pe_out_first", "pe_out_last")}
        for index, terminal in enumerate(netlist.terminals):
            stream_in = getattr(ports[terminal.router], f"in_{terminal.port}")
            stream_out = getattr(ports[terminal.router], f"out_{terminal.port}")
            data = slice(index * width, (index + 1) * width)
            m.d.comb += [
                stream_in.valid.eq(self.pe_in_valid[index]),
                stream_in.payload.data.eq(self.pe_in_data[data]),
                stream_in.payload.first.eq(self.pe_in_first[index]),
                stream_in.payload.last.eq(self.pe_in_last[index]),
                stream_out.ready.eq(self.pe_out_ready[index]),
            ]
            outputs["pe_in_ready"].append(stream_in.ready)
            outputs["pe_out_valid"].append(stream_out.valid)
            outputs["pe_out_data"].append(stream_out.payload.data)
            outputs["pe_out_first"].append(stream_out.payload.first)
            outputs["pe_out_last"].append(stream_out.payload.last)
        m.d.comb += [getattr(self, name).eq(Cat(parts)) for name, parts in outputs.items()]

        total = sum_tree([ports[router.label].drop_count for router in netlist.routers])
        limit = (1 << DROP_COUNT_WIDTH) - 1
        m.d.comb += self.drop_count.eq(Mux(total > limit, limit, total))
        return m
