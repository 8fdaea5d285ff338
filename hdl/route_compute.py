"""The route-compute interface: what a routing function implements to plug into the router.

A route compute is a :class:`RouteCompute` component. The router builds one per input port by
calling ``factory(config, in_port)`` (a subclass whose ``__init__`` takes those two arguments
is such a factory; bind other parameters with ``functools.partial``) and evaluates it on every
head flit as the flit enters the input buffer. Its result is stored with the flit, so route
computation adds no pipeline stage.

Inputs (driven by the router):
    valid: In(1) — a head flit is being written this cycle (a stateful route compute, e.g. one
        with an LFSR for tie-breaks, advances on it; a combinational one ignores it).
    header: In(header_layout) — the head flit's route fields: the lowest
        ``header_layout.size`` bits of its data (see :mod:`twinnet.hdl.flit`).
    in_port: In(range(max(2, port_count))) — the input port (constant per instance; also passed to
        the factory so that an implementation can specialise at elaboration).
    in_vc: In(range(max(2, max_vc_count))) — the VC the packet arrived on. (Index fields are at
        least 1 bit wide: Yosys writes zero-width ports as ``[-1:0]``.)
    node_static: In(static_layout) — per-node constants declared by the routing function (e.g. the
        node's coordinates). The router exposes one top-level input ``node_static`` of this layout
        and wires it to every instance; a network top ties it off per node, so one router
        module serves every node.

Outputs (combinational):
    out_port: Out(range(max(2, port_count))) — the output port.
    vc_mask: Out(max_vc_count) — bit w set: output VC w of ``out_port`` may be allocated
        (the router allocates the lowest free one).
    bubble: Out(1) — the move enters a ring: admission needs room for two whole packets
        downstream instead of one. Only allowed toward ports configured with ``bubble=True``.
    malformed: Out(1) — the header is invalid (e.g. a destination digit out of range); the
        router drops the packet and counts it on its ``drop_count`` status output.

The router also drops (and counts) packets whose result it cannot honour: ``out_port`` out of
range, no ``vc_mask`` bit below the output's VC count, or ``bubble`` toward a port without
``bubble=True``.

Adaptive routing (a route compute built with ``adaptive_vcs`` non-zero) adds two outputs:

    grade_1, grade_2: Out(port_count) — bit o set: output o is a candidate of that grade; the
        packet may take any VC of ``adaptive_vcs`` there with room for a whole packet.

Then ``out_port``, ``vc_mask`` and ``bubble`` describe the *escape* move. Each cycle a waiting
head flit asks for a free adaptive VC of a grade-1 output if there is one, else of a grade-2
output, else for its escape move; ``vc_mask`` should name escape VCs only, outside
``adaptive_vcs``. A deterministic route compute (``adaptive_vcs`` 0) has neither output and
its router no logic for them.

Broadcast (a route compute built with ``broadcast_vc``, a VC index) adds four outputs:

    broadcast: Out(1) — the head flit is a broadcast copy: the router forwards it through every
        output of ``targets`` at once, on VC ``broadcast_vc`` of each link output (VC 0 of a
        PE port), and ``out_port``, ``vc_mask``, ``bubble``, ``grade_1``, ``grade_2`` do not
        apply.
    targets: Out(port_count) — bit o set: a copy leaves through output o (a PE port for the
        copy the node consumes).
    enter: Out(port_count) — bit o set: the copy through output o enters a ring, so its
        admission needs room for two whole packets (``bubble=True`` ports only).
    header_out: Out(header_layout) — the route fields the copies carry on (e.g. the TTL less
        one); the router stores them in place of ``header`` for a broadcast.

The router allocates all of a broadcast's outputs in one cycle (one broadcast per router and
cycle) and sends each of its flits through all of them in one cycle, before unicast requests
(see :class:`twinnet.hdl.router.Router`). A route compute without ``broadcast_vc`` has none of
these outputs and its router no logic for them.
"""

from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from .checked import CheckedComponent
from .config import RouterConfig


class RouteCompute(CheckedComponent):
    """Base class of route computes (see the module docstring for the contract).

    Parameters:
        config: the router's configuration (sizes the port and VC fields).
        in_port: the input port this instance serves.
        header_layout: the routing function's head-flit fields (``data.StructLayout``).
        static_layout: the per-node static inputs (``data.StructLayout``, default empty).
        adaptive_vcs: bit mask of the VCs adaptive moves may take (0, the default: a
            deterministic route compute without the ``grade_1``/``grade_2`` outputs).
        broadcast_vc: the link VC of broadcast copies (None, the default: no broadcast and no
            ``broadcast``/``targets``/``enter``/``header_out`` outputs).

    Subclasses implement ``elaborate``.
    """

    def __init__(self, config: RouterConfig, in_port: int, *, header_layout: data.StructLayout,
                 static_layout: data.StructLayout | None = None, adaptive_vcs: int = 0,
                 broadcast_vc: int | None = None):
        if not isinstance(config, RouterConfig):
            raise TypeError(f"config must be a RouterConfig, not {config!r}")
        if static_layout is None:
            static_layout = data.StructLayout({})
        for name, layout in (("header_layout", header_layout), ("static_layout", static_layout)):
            if not isinstance(layout, data.StructLayout):
                raise TypeError(f"{name} must be an amaranth data.StructLayout, not {layout!r}")
        if not isinstance(adaptive_vcs, int) or not 0 <= adaptive_vcs < 1 << config.max_vc_count:
            raise ValueError(f"adaptive_vcs must be a mask of the router's "
                             f"{config.max_vc_count} VCs, not {adaptive_vcs!r}")
        if broadcast_vc is not None and (not isinstance(broadcast_vc, int)
                                         or not 0 <= broadcast_vc < config.max_vc_count):
            raise ValueError(f"broadcast_vc must be one of the router's {config.max_vc_count} "
                             f"VCs, not {broadcast_vc!r}")
        self.config, self.port_index = config, in_port
        self.header_layout, self.static_layout = header_layout, static_layout
        self.adaptive_vcs, self.broadcast_vc = adaptive_vcs, broadcast_vc
        extra = ({"grade_1": Out(config.port_count), "grade_2": Out(config.port_count)}
                 if adaptive_vcs else {})
        if broadcast_vc is not None:
            extra.update(broadcast=Out(1), targets=Out(config.port_count),
                          enter=Out(config.port_count), header_out=Out(header_layout))
        super().__init__({
            "valid": In(1),
            "header": In(header_layout),
            "in_port": In(range(max(2, config.port_count))),
            "in_vc": In(range(max(2, config.max_vc_count))),
            "node_static": In(static_layout),
            "out_port": Out(range(max(2, config.port_count))),
            "vc_mask": Out(config.max_vc_count),
            "bubble": Out(1),
            "malformed": Out(1),
            **extra,
        })
