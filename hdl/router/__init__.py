"""The router: input-queued, virtual cut-through, credit flow control, pluggable route compute.

One :class:`Router` module serves every node of a network (twin-torus cards, twin-switch
halves, king routers): the configuration sets the ports, VCs and buffers, the route compute
factory sets the routing function, and the routing function's per-node constants enter through
the ``node_static`` input, which the network top ties off per node.

The router is composed of stages, each a component of its own module:

- :class:`~.input_unit.InputUnit`, one per port: framing, route compute, VC buffers, credits;
- the allocators and per-VC control of a microarchitecture (below);
- :class:`~.crossbar.Crossbar`;
- :class:`~.output_unit.OutputUnit`, one per port: credit counters, free VCs, link register or
  ejection buffer; with several ejection lanes (``RouterConfig.ejection_lanes``), one per lane
  of a PE port, whose lanes an :class:`~.ejection.EjectionMerger` joins.

Two microarchitectures (``RouterConfig.pipeline``, see ``docs/router.md``):

- **compact** (pipeline 2, 2 cycles per hop): the head flit's route is computed as it enters
  its buffer; in the next cycle VC allocation, switch allocation and the crossbar; at the
  clock edge the flit enters the output register (links) or the ejection buffer (PE ports);
- **split** (pipeline 3, 3 cycles per hop): allocation in the cycle after the buffer write,
  crossbar traversal from the next; an allocated packet holds its output from head to tail
  and every input VC has its own crossbar input.
"""

from amaranth.hdl import Const, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .. import flit
from ..checked import CheckedComponent
from ..config import RouterConfig
from ..route_compute import RouteCompute
from .compact import CompactComposition
from .ejection import EjectionMerger
from .input_unit import InputUnit
from .output_unit import OutputUnit
from .split import SplitComposition
from .stage_config import StageConfig
from .stalls import StallCounters, StallSignature


class Router(CheckedComponent):
    """A router built from a :class:`RouterConfig` and a route compute factory.

    Parameters:
        config: the router's :class:`RouterConfig`.
        route_compute: a factory ``(config, in_port) -> RouteCompute`` called once per input
            port (see :mod:`twinnet.hdl.route_compute`), e.g.
            :class:`twinnet.hdl.header_route.HeaderRouteCompute`.

    Ports (``i`` is the port index; see :mod:`twinnet.hdl.flit` for the layouts):
        in_i: In(LinkSignature(flit_width, vc_count_i)) on a link port — flits in, credits out;
            In(pe_in_signature(...)) on a PE port — the injection stream (valid/ready).
        out_i: Out(LinkSignature(...)) on a link port — flits out, credits in;
            Out(pe_out_signature(...)) on a PE port — the ejection stream (valid/ready).
        node_static: In(route compute's static_layout) — per-node constants for the route
            compute (absent when the layout is empty).
        framing_i: Out(:data:`twinnet.hdl.flit.framing_layout`) on a PE port — its counters
            of bad framing since reset (:class:`~.input_unit.InputUnit`), each saturating.
        drop_count: Out(config.drop_count_width) — packets dropped as malformed since reset
            (saturates at its largest value).
        stalls: Out(:class:`~.stalls.StallSignature`) — with ``config.stall_counters`` only:
            why waiting packets were not allocated (:mod:`.stalls`).
        waits: Out(``out_<o>``: one bit per VC of output o) — with ``config.stall_counters``
            only: this cycle, a packet that could have been allocated and was not takes that
            VC of that output by its route (the link counters' ``blocked``,
            :mod:`twinnet.hdl.link_counter`).

    Raises ``TypeError`` for a wrong config or factory (before anything is built) and
    ``ValueError`` when the route computes of the ports disagree or the routing header does
    not fit in a flit.

    The stage classes are class attributes, so that a subclass can replace one (the formal
    mutants do).
    """

    input_unit = InputUnit
    output_unit = OutputUnit
    ejection_merger = EjectionMerger
    compact_composition = CompactComposition
    split_composition = SplitComposition

    @classmethod
    def check(cls, config, route_compute):
        """The route computes, one per port, once they are known to agree with each other and
        with the configuration."""
        if not isinstance(config, RouterConfig):
            raise TypeError(f"config must be a RouterConfig, not {config!r}")
        if not callable(route_compute):
            raise TypeError(f"route_compute must be a factory (config, in_port) -> "
                            f"RouteCompute, not {route_compute!r}")
        computes = [route_compute(config, port) for port in range(config.port_count)]
        # Route computes rejected below were built and never elaborated: Amaranth reports
        # them as unused when they are collected.
        cls._check_agreement(config, computes)
        return computes

    @staticmethod
    def _check_agreement(config: RouterConfig, computes: list) -> None:
        """Raise when the route computes disagree with each other or with the configuration."""
        first = computes[0]
        for port, rc in enumerate(computes):
            if not isinstance(rc, RouteCompute):
                raise TypeError(f"route_compute({port}) must return a RouteCompute, not {rc!r}")
            if (rc.header_layout != first.header_layout or rc.static_layout != first.static_layout
                    or rc.adaptive_vcs != first.adaptive_vcs
                    or rc.broadcast_vc != first.broadcast_vc):
                raise ValueError(f"route_compute({port}) has a different header or static "
                                 f"layout, adaptive VCs or broadcast VC than route_compute(0); "
                                 f"all ports must agree")
        if first.broadcast_vc is not None and config.ejection_lanes > 1:
            raise ValueError(f"ejection_lanes {config.ejection_lanes}: takes unicast routing "
                             "only, and this routing broadcasts")
        if first.broadcast_vc is not None:
            for port in config.ports:
                if not port.is_pe and port.output_vc_count <= first.broadcast_vc:
                    raise ValueError(f"broadcast VC {first.broadcast_vc} is not a VC of port "
                                     f"{port.name} ({port.output_vc_count} VCs)")
        flit.FlitFormat(config, first.header_layout)  # the header fits in a flit

    def __init__(self, config: RouterConfig, route_compute):
        self.config = config
        self.route_computes = self.checked
        first = self.route_computes[0]
        self.adaptive_vcs, self.broadcast_vc = first.adaptive_vcs, first.broadcast_vc
        self.flit_format = flit.FlitFormat(config, first.header_layout)
        self.stage = StageConfig(config, self.flit_format.head_layout, self.adaptive_vcs,
                                 self.broadcast_vc)

        members = {}
        for index, port in enumerate(config.ports):
            if port.is_pe:
                members[f"in_{index}"] = In(flit.pe_in_signature(config.flit_width,
                                                                 port.vc_count))
                members[f"out_{index}"] = Out(flit.pe_out_signature(config.flit_width))
            else:
                link = flit.LinkSignature(config.flit_width, port.vc_count)
                members[f"in_{index}"] = In(link)
                members[f"out_{index}"] = Out(link)
        if first.static_layout.size:
            members["node_static"] = In(first.static_layout)
        for index in config.pe_ports:
            members[f"framing_{index}"] = Out(flit.framing_layout)
        members["drop_count"] = Out(config.drop_count_width)
        if config.stall_counters:
            members["stalls"] = Out(StallSignature())
            members["waits"] = Out(wiring.Signature({
                f"out_{o}": Out(count) for o, count in enumerate(config.output_vc_counts)}))
        super().__init__(members)

    def port_in(self, index: int):
        return getattr(self, f"in_{index}")

    def port_out(self, index: int):
        return getattr(self, f"out_{index}")

    def elaborate(self, platform):
        m = Module()
        config = self.config
        vcs, outputs = [], []
        for p in range(config.port_count):
            unit = self.input_unit(self.stage, p, self.route_computes[p])
            m.submodules[f"input_{p}"] = unit
            wiring.connect(m, wiring.flipped(self.port_in(p)), unit.port)
            if "node_static" in unit.signature.members:
                m.d.comb += unit.node_static.eq(self.node_static)
            if "framing" in unit.signature.members:
                m.d.comb += getattr(self, f"framing_{p}").eq(unit.framing)
            vcs.append(list(unit.vcs))
        for o, (p, lane) in enumerate(config.outputs):
            unit = m.submodules[f"output_{o}"] = self.output_unit(self.stage, p, lane)
            outputs.append(unit)
        for p in range(config.port_count):
            lanes = config.lanes_of(p)
            if len(lanes) == 1:
                wiring.connect(m, wiring.flipped(self.port_out(p)), outputs[p].port)
                continue
            merger = m.submodules[f"ejection_{p}"] = self.ejection_merger(config.flit_width,
                                                                          len(lanes))
            for k, o in enumerate(lanes):
                wiring.connect(m, outputs[o].port, merger.lanes[k])
            wiring.connect(m, wiring.flipped(self.port_out(p)), merger.out)
        composition = (self.split_composition if self.stage.split
                       else self.compact_composition)
        composed = composition(self.stage, m, vcs, outputs)
        drop_heads = composed.build()
        if config.stall_counters:
            counters = m.submodules.stall_counters = StallCounters(len(composed.flat))
            m.d.comb += [bits.eq(composed.stall_bits(vc))
                         for bits, vc in zip(counters.reasons, composed.flat)]
            wiring.connect(m, counters.counts, wiring.flipped(self.stalls))
            for o, bits in enumerate(composed.waits()):
                m.d.comb += getattr(self.waits, f"out_{o}").eq(bits)

        # Malformed packets dropped (counted at their head flit), saturating.
        dropped = sum((head.as_unsigned() for head in drop_heads), Const(0, 1))
        total = self.drop_count + dropped
        limit = (1 << config.drop_count_width) - 1
        m.d.sync += self.drop_count.eq(Mux(total > limit, limit, total))
        return m
