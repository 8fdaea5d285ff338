"""The router: input-queued, virtual cut-through, credit flow control, pluggable route compute.

One :class:`Router` module serves every node of a network (twin-torus cards, twin-switch
halves, king routers): the configuration sets the ports, VCs and buffers, the route compute
factory sets the routing function, and the routing function's per-node constants enter through
the ``node_static`` input, which the network top ties off per node.

Pipeline (see ``docs/router.md``)::

    cycle 0   flit on the input link/stream; route compute on the head flit (combinational);
              at the clock edge flit + route result enter the input VC FIFO
    cycle 1   FIFO head → VC allocation → switch allocation → crossbar; at the edge the flit
              enters the output register (links) or the ejection FIFO (PE ports)
    cycle 2   flit valid on the output link/stream

Zero-load latency: 2 cycles per hop (input valid in cycle t, output valid in cycle t + 2).
"""

from amaranth.hdl import Array, Cat, Const, Elaboratable, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from . import flit
from .arbiter import RoundRobinArbiter
from .config import RouterConfig
from .route_compute import RouteCompute
from .shift_fifo import ShiftFIFO


def _lowest(value, width: int):
    """One-hot of the lowest set bit of ``value`` (zero when none). A prefix OR in LUTs rather
    than ``value & -value``: a carry chain would stop the synthesiser from merging the
    priority logic with the requests in front of it."""
    return Cat(value[i] & ~value[:i].any() if i else value[0] for i in range(width))


def _encode(onehot, width: int):
    """Index of the set bit of a one-hot ``onehot`` (zero when none)."""
    bits = max(1, (width - 1).bit_length())
    return Cat(Cat(onehot[i] for i in range(width) if i >> k & 1).any() if width > (1 << k)
               else Const(0, 1) for k in range(bits))


class Router(wiring.Component):
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
        static: In(route compute's static_layout) — per-node constants for the route compute
            (absent when the layout is empty).
        drop_count: Out(config.drop_count_width) — packets dropped as malformed since reset
            (saturates at its largest value).

    Raises ``TypeError`` for a wrong config or factory and ``ValueError`` when the routing
    header does not fit in a flit, before anything is elaborated.
    """

    def __init__(self, config: RouterConfig, route_compute):
        try:
            self._setup(config, route_compute)
        except (TypeError, ValueError):
            # A rejected component (and its route computes) is not an unused one.
            for item in [self, *getattr(self, "route_computes", [])]:
                if isinstance(item, Elaboratable):
                    item._MustUse__silence = True
            raise

    def _setup(self, config: RouterConfig, route_compute):
        if not isinstance(config, RouterConfig):
            raise TypeError(f"config must be a RouterConfig, not {config!r}")
        if not callable(route_compute):
            raise TypeError(f"route_compute must be a factory (config, in_port) -> "
                            f"RouteCompute, not {route_compute!r}")
        self.config = config
        self.route_computes = [route_compute(config, port) for port in range(config.port_count)]
        first = self.route_computes[0]
        for port, rc in enumerate(self.route_computes):
            if not isinstance(rc, RouteCompute):
                raise TypeError(f"route_compute({port}) must return a RouteCompute, not {rc!r}")
            if (rc.header_layout != first.header_layout or rc.static_layout != first.static_layout
                    or rc.adaptive_vcs != first.adaptive_vcs
                    or rc.broadcast_vc != first.broadcast_vc):
                raise ValueError(f"route_compute({port}) has a different header or static "
                                 f"layout, adaptive VCs or broadcast VC than route_compute(0); "
                                 f"all ports must agree")
        self.adaptive_vcs, self.broadcast_vc = first.adaptive_vcs, first.broadcast_vc
        if self.broadcast_vc is not None:
            for port in config.ports:
                if not port.is_pe and port.output_vc_count <= self.broadcast_vc:
                    raise ValueError(f"broadcast VC {self.broadcast_vc} is not a VC of port "
                                     f"{port.name} ({port.output_vc_count} VCs)")
        self.flit_format = flit.FlitFormat(config, first.header_layout)

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
        members["drop_count"] = Out(config.drop_count_width)
        super().__init__(members)

    def port_in(self, index: int):
        return getattr(self, f"in_{index}")

    def port_out(self, index: int):
        return getattr(self, f"out_{index}")

    def elaborate(self, platform):
        m = Module()
        layouts = self._layouts()
        outputs = self._output_state(m)
        vcs = [self._input_port(m, p, layouts) for p in range(self.config.port_count)]
        if self.config.pipeline == 2:
            drop_heads = self._combined(m, vcs, outputs, layouts)
        else:
            drop_heads = self._split(m, vcs, outputs, layouts)

        # ---- Status: malformed packets dropped (counted at their head flit), saturating. ----
        dropped = sum((head.as_unsigned() for head in drop_heads), Const(0, 1))
        total = self.drop_count + dropped
        limit = (1 << self.config.drop_count_width) - 1
        m.d.sync += self.drop_count.eq(Mux(total > limit, limit, total))
        return m

    # ---- Parts both microarchitectures share. ----

    def _layouts(self) -> dict:
        """The route result, a flit, and (compact router) a FIFO entry: a flit and its route."""
        config = self.config
        port_count = config.port_count
        extra = {"grade_1": port_count, "grade_2": port_count} if self.adaptive_vcs else {}
        if self.broadcast_vc is not None:
            extra.update(multi=1, targets=port_count, enter=port_count)
        if self._needs_per_output:
            # Per output, the VCs the packet may take there with room for one packet / for
            # two: a split router's requests need no decoding of the route.
            width = port_count * config.max_vc_count
            extra.update(need_one=width, need_two=width)
        route = data.StructLayout({"port": range(port_count), "mask": config.max_vc_count,
                                   "bubble": 1, "drop": 1, **extra})
        flit_fields = {"data": config.flit_width, "first": 1, "last": 1}
        return {"route": route, "flit": data.StructLayout(flit_fields),
                "entry": data.StructLayout({**flit_fields, "route": route})}

    @property
    def _needs_per_output(self) -> bool:
        """The split router with a deterministic unicast routing stores its route result as
        per-output VC masks (see :meth:`_requests`)."""
        return (self.config.pipeline == 3 and not self.adaptive_vcs
                and self.broadcast_vc is None)

    def _output_state(self, m) -> dict:
        """Per output VC: a credit counter (and, compact router, a busy flag), and the masks of
        output VCs free for one / two whole packets."""
        config = self.config
        length, vmax = config.packet_length, config.max_vc_count
        state = {"spare": [], "busy": [], "free_one": [], "free_two": []}
        for o, port in enumerate(config.ports):
            depth = port.buffer_depth
            # The credit counter holds credits - L, so that "room for a packet" is its sign
            # bit, not a comparator in front of the allocators.
            spare = [Signal(range(-length, depth - length + 1), init=depth - length,
                            name=f"spare_credits_{o}_{w}") for w in range(port.output_vc_count)]
            # The split router holds an output for a whole packet, so packets never
            # interleave on an output VC and need no busy flag. It takes an allocated VC's
            # credits one cycle after the allocation (off the allocator's path): with one-flit
            # packets the output may be allocated again in that cycle, so the VC taken last
            # cycle counts as busy.
            if config.pipeline == 2:
                busy = [Signal(name=f"busy_{o}_{w}") for w in range(port.output_vc_count)]
            else:
                taken = Signal(vmax, name=f"taken_{o}")
                state.setdefault("taken", []).append(taken)
                busy = [taken[w] if length == 1 else Const(0, 1)
                        for w in range(port.output_vc_count)]
            # Virtual cut-through: a VC is allocated only with room for the whole packet,
            # and a bubble move needs room for two (003 §6.3.2), so a ring never fills.
            free_one = Signal(vmax, name=f"free_one_{o}")
            free_two = Signal(vmax, name=f"free_two_{o}")
            for w, (b, c) in enumerate(zip(busy, spare)):
                m.d.comb += [free_one[w].eq(~b & (c >= 0)), free_two[w].eq(~b & (c >= length))]
            for key, value in (("spare", spare), ("busy", busy), ("free_one", free_one),
                               ("free_two", free_two)):
                state[key].append(value)
        state["free_one_of"], state["free_two_of"] = Array(state["free_one"]), \
            Array(state["free_two"])
        if self.adaptive_vcs:
            # Bit o: output o has an adaptive VC with room for a whole packet.
            state["adaptive_free"] = Signal(config.port_count, name="adaptive_free")
            m.d.comb += state["adaptive_free"].eq(
                Cat((f & self.adaptive_vcs).any() for f in state["free_one"]))
        if self.broadcast_vc is not None:
            # The VC a broadcast copy takes at each output (VC 0 of a single-VC port, e.g. a
            # PE's), and bit o: that VC is free with room for one / two whole packets.
            copy_vc = [min(self.broadcast_vc, port.output_vc_count - 1) for port in config.ports]
            state["copy_vc"] = copy_vc
            state["copy_one"] = Signal(config.port_count, name="copy_free_one")
            state["copy_two"] = Signal(config.port_count, name="copy_free_two")
            m.d.comb += [
                state["copy_one"].eq(Cat(state["free_one"][o][w] for o, w in enumerate(copy_vc))),
                state["copy_two"].eq(Cat(state["free_two"][o][w] for o, w in enumerate(copy_vc)))]
        return state

    def _input_port(self, m, p: int, layouts: dict) -> list[dict]:
        """Input port ``p``: PE framing, route compute, one FIFO per VC. Returns one dict per
        input VC: ``fifo`` (its flits), ``entry`` (the front flit), ``route`` (the route result
        of the packet whose allocation is next) and ``head`` (that route is there).

        The compact router stores the route result beside every flit; the split router keeps
        it once per packet, in a second FIFO per VC (popped when the packet is allocated)."""
        config = self.config
        port = config.ports[p]
        length, vc_count, split = config.packet_length, port.vc_count, config.pipeline == 3
        rc = self.route_computes[p]
        m.submodules[f"route_{p}"] = rc
        w_valid = Signal(name=f"w_valid_{p}")
        w_vc = Signal(range(vc_count), name=f"w_vc_{p}")
        # The flit and its route result are separate signals joined only at the FIFO write: as
        # one struct, the route compute (reading the flit, writing the route) looks like a
        # combinational loop to Verilator, which then re-evaluates it.
        w_flit = Signal(layouts["flit"], name=f"w_flit_{p}")
        w_route = Signal(layouts["route"], name=f"w_route_{p}")
        entry_layout = layouts["flit"] if split else layouts["entry"]
        fifos = [SyncFIFO(width=entry_layout.size, depth=port.buffer_depth)
                 for _ in range(vc_count)]
        # A VC holds at most ceil(depth / L) packets whose allocation is still to come. The
        # route queue's front is a register, so allocation starts from flip-flops.
        routes = [ShiftFIFO(layouts["route"].size, -(-port.buffer_depth // length))
                  for _ in range(vc_count)] if split else []
        for v, fifo in enumerate(fifos):
            m.submodules[f"fifo_{p}_{v}"] = fifo
        for v, fifo in enumerate(routes):
            m.submodules[f"routes_{p}_{v}"] = fifo
        bad_vc = Const(0, 1)
        if port.is_pe:
            stream_in = self.port_in(p)
            # Framing comes from a flit counter, not from the PE's marks: a packet is exactly L
            # flits whatever the PE marks, so the credit reservations made for L flits
            # downstream always hold.
            count = Signal(range(length), name=f"inject_count_{p}")
            cur_vc = Signal(range(vc_count), name=f"inject_vc_{p}")
            head = count == 0
            asked = stream_in.payload.vc
            if vc_count & (vc_count - 1):
                bad_vc = head & (asked >= vc_count)
                asked = Mux(bad_vc, vc_count - 1, asked)
            m.d.comb += w_vc.eq(Mux(head, asked, cur_vc))
            room = Array(f.w_rdy for f in fifos)[w_vc]
            if split:
                room = room & (~head | Array(f.w_rdy for f in routes)[w_vc])
            m.d.comb += stream_in.ready.eq(room)
            m.d.comb += w_valid.eq(stream_in.valid & stream_in.ready)
            with m.If(w_valid):
                m.d.sync += count.eq(Mux(count == length - 1, 0, count + 1))
                with m.If(head):
                    m.d.sync += cur_vc.eq(w_vc)
            m.d.comb += [w_flit.data.eq(stream_in.payload.data),
                         w_flit.first.eq(head), w_flit.last.eq(count == length - 1)]
        else:
            link_in = self.port_in(p)
            m.d.comb += [w_valid.eq(link_in.flit.valid), w_vc.eq(link_in.flit.payload.vc),
                         w_flit.data.eq(link_in.flit.payload.data),
                         w_flit.first.eq(link_in.flit.payload.first),
                         w_flit.last.eq(link_in.flit.payload.last)]

        header_width = self.flit_format.route_layout.size
        m.d.comb += [rc.valid.eq(w_valid & w_flit.first),
                     rc.header.eq(w_flit.data[:header_width]),
                     rc.in_port.eq(p), rc.in_vc.eq(w_vc)]
        if "node_static" in self.signature.members:
            m.d.comb += rc.node_static.eq(self.node_static)
        valid_vcs = Array(Const((1 << count) - 1, config.max_vc_count)
                          for count in config.output_vc_counts)
        bubble_ok = Array(Const(int(port.bubble), 1) for port in config.ports)
        mask = rc.vc_mask & valid_vcs[rc.out_port]
        unicast_drop = (mask == 0) | (rc.bubble & ~bubble_ok[rc.out_port])
        port_count = config.port_count
        if port_count & (port_count - 1):
            unicast_drop = unicast_drop | (rc.out_port >= port_count)
        if self.broadcast_vc is not None:
            bubbles = Const(sum(1 << o for o, port in enumerate(config.ports) if port.bubble),
                            port_count)
            copy_drop = (rc.targets == 0) | (rc.enter & ~bubbles).any()
            unicast_drop = Mux(rc.broadcast, copy_drop, unicast_drop)
        m.d.comb += [w_route.port.eq(rc.out_port), w_route.mask.eq(mask),
                     w_route.bubble.eq(rc.bubble), w_route.drop.eq(rc.malformed | bad_vc
                                                                   | unicast_drop)]
        if self.adaptive_vcs:
            m.d.comb += [w_route.grade_1.eq(rc.grade_1), w_route.grade_2.eq(rc.grade_2)]
        if self._needs_per_output:
            vmax = config.max_vc_count
            for o in range(port_count):
                here = (rc.out_port == o) & ~w_route.drop
                m.d.comb += [
                    w_route.need_one[o * vmax:(o + 1) * vmax].eq(Mux(here & ~rc.bubble, mask, 0)),
                    w_route.need_two[o * vmax:(o + 1) * vmax].eq(Mux(here & rc.bubble, mask, 0))]
        stored = w_flit.as_value()
        if self.broadcast_vc is not None:
            m.d.comb += [w_route.multi.eq(rc.broadcast), w_route.targets.eq(rc.targets),
                         w_route.enter.eq(rc.enter)]
            # A broadcast's head carries the route compute's rewritten fields on.
            stored = Cat(Mux(w_flit.first & rc.broadcast, rc.header_out.as_value(),
                             w_flit.data[:header_width]), w_flit.as_value()[header_width:])
        for v, fifo in enumerate(fifos):
            m.d.comb += [fifo.w_en.eq(w_valid & (w_vc == v)),
                         fifo.w_data.eq(stored if split else Cat(stored, w_route.as_value()))]
        for v, fifo in enumerate(routes):
            m.d.comb += [fifo.w_en.eq(w_valid & w_flit.first & (w_vc == v)),
                         fifo.w_data.eq(w_route.as_value())]

        port_vcs = []
        for v, fifo in enumerate(fifos):
            entry = Signal(entry_layout, name=f"head_{p}_{v}")
            m.d.comb += entry.eq(fifo.r_data)
            s = {"fifo": fifo, "entry": entry}
            if split:
                s["routes"] = routes[v]
                s["route"] = Signal(layouts["route"], name=f"route_{p}_{v}")
                s["head"] = routes[v].r_rdy
                m.d.comb += s["route"].eq(routes[v].r_data)
            else:
                s["route"], s["head"] = entry.route, fifo.r_rdy
            port_vcs.append(s)
        return port_vcs

    def _requests(self, m, s: dict, name: str, idle_head, outputs: dict) -> None:
        """The allocation requests of input VC ``s`` whose next packet's route is ``s["route"]``
        and may be allocated when ``idle_head``. Sets ``s``'s ``eligible`` (its free output
        VCs), ``va_req``, ``va_to`` (one-hot: the output it asks for), ``move_port`` and
        ``w_sel`` (one-hot: the output VC it would get), and with broadcast ``copy_req``."""
        port_count, vmax = self.config.port_count, self.config.max_vc_count
        route = s["route"]
        free = Mux(route.bubble, outputs["free_two_of"][route.port],
                   outputs["free_one_of"][route.port])
        s["eligible"] = Signal(vmax, name=f"eligible_{name}")
        m.d.comb += s["eligible"].eq(route.mask & free)
        s["va_req"] = Signal(name=f"va_req_{name}")
        s["va_to"] = Signal(port_count, name=f"va_to_{name}")
        s["w_sel"] = Signal(vmax, name=f"w_sel_{name}")
        s["move_port"] = Signal(range(port_count), name=f"move_port_{name}")
        unicast_head = idle_head & ~route.drop
        if self.broadcast_vc is not None:
            unicast_head = unicast_head & ~route.multi
            needs = ((route.enter & outputs["copy_two"])
                     | (~route.enter & outputs["copy_one"]))
            s["copy_req"] = Signal(name=f"copy_req_{name}")
            m.d.comb += s["copy_req"].eq(idle_head & route.multi & ~route.drop
                                         & ~(route.targets & ~needs).any())
        if self.adaptive_vcs:
            # Grade 1 if one of its outputs has a free adaptive VC, else grade 2, else the
            # escape move (its lowest eligible VC).
            one = route.grade_1 & outputs["adaptive_free"]
            two = route.grade_2 & outputs["adaptive_free"]
            pick = Signal(port_count, name=f"pick_{name}")
            m.d.comb += pick.eq(_lowest(Mux(one.any(), one, two), port_count))
            moves = pick.any()
            pick_vcs = Const(0, vmax)
            for o in range(port_count):
                pick_vcs = pick_vcs | Mux(pick[o], outputs["free_one"][o] & self.adaptive_vcs, 0)
            m.d.comb += [
                s["va_req"].eq(unicast_head & (moves | s["eligible"].any())),
                s["va_to"].eq(Mux(s["va_req"], Mux(moves, pick, 1 << route.port), 0)),
                s["move_port"].eq(Mux(moves, _encode(pick, port_count), route.port)),
                s["w_sel"].eq(Mux(moves, _lowest(pick_vcs, vmax), _lowest(s["eligible"], vmax))),
            ]
        elif self._needs_per_output:
            # From the stored per-output masks and each output's own free masks: the route
            # needs no decoding in front of the allocators.
            fits = [((route.need_one[o * vmax:(o + 1) * vmax] & outputs["free_one"][o])
                     | (route.need_two[o * vmax:(o + 1) * vmax] & outputs["free_two"][o]))
                    for o in range(port_count)]
            eligible = Const(0, vmax)
            for fit in fits:
                eligible = eligible | fit
            m.d.comb += [
                s["va_to"].eq(Cat(idle_head & fit.any() for fit in fits)),
                s["va_req"].eq(s["va_to"].any()),
                s["move_port"].eq(route.port),
                s["w_sel"].eq(_lowest(eligible, vmax)),
            ]
        else:
            # Per output, from that output's own free masks: no multiplexer indexed by the
            # route's port in front of the allocators.
            m.d.comb += [
                s["va_to"].eq(Cat(unicast_head & (route.port == o) & (route.mask & Mux(
                    route.bubble, outputs["free_two"][o], outputs["free_one"][o])).any()
                    for o in range(port_count))),
                s["va_req"].eq(s["va_to"].any()),
                s["move_port"].eq(route.port),
                s["w_sel"].eq(_lowest(s["eligible"], vmax)),
            ]

    def _drive_output(self, m, o: int, valid, entry, vc, take, outputs: dict) -> None:
        """Output ``o``: ``entry`` (data, first, last) on VC ``vc`` leaves when ``valid``, into
        the link register or the ejection FIFO; ``take`` (one-hot) is the output VC allocated
        this cycle, whose L credits it takes."""
        config = self.config
        port = config.ports[o]
        length = config.packet_length
        if port.is_pe:
            eject = m.submodules[f"eject_{o}"] = SyncFIFO(
                width=flit.pe_out_layout(config.flit_width).size, depth=port.buffer_depth)
            stream_out = self.port_out(o)
            m.d.comb += [eject.w_en.eq(valid),
                         eject.w_data.eq(Cat(entry.data, entry.first, entry.last)),
                         stream_out.valid.eq(eject.r_rdy),
                         stream_out.payload.eq(eject.r_data),
                         eject.r_en.eq(stream_out.ready)]
            returned = [eject.r_rdy & stream_out.ready]
        else:
            link_out = self.port_out(o)
            m.d.sync += [link_out.flit.valid.eq(valid),
                         link_out.flit.payload.data.eq(entry.data),
                         link_out.flit.payload.first.eq(entry.first),
                         link_out.flit.payload.last.eq(entry.last),
                         link_out.flit.payload.vc.eq(vc)]
            returned = [link_out.credit.valid & (link_out.credit.payload == w)
                        for w in range(port.output_vc_count)]
        for w in range(port.output_vc_count):
            # Credits for the whole packet are taken at allocation; flits then need no
            # per-flit credit check, and the counter can never go negative.
            # Both sums are formed before the late allocation result picks one.
            count = outputs["spare"][o][w]
            m.d.sync += count.eq(Mux(take[w], count + returned[w] - length,
                                     count + returned[w]))
            busy = outputs["busy"][o][w]
            if self.config.pipeline == 2:
                with m.If(take[w]):
                    m.d.sync += busy.eq(1)
                # (A single-VC output, e.g. a PE's, carries broadcast copies tagged with the
                # broadcast VC on VC 0.)
                this_vc = (vc == w) if port.output_vc_count > 1 else 1
                with m.If(valid & entry.last & this_vc):
                    m.d.sync += busy.eq(0)

    # ---- The compact router: 2 cycles per hop. ----

    def _combined(self, m, vcs: list[list[dict]], outputs: dict, layouts: dict) -> list:
        """VC allocation, switch allocation and the crossbar in the cycle after the FIFO write.
        Returns the per-port signals that a malformed packet's head was drained."""
        config = self.config
        port_count, vmax = config.port_count, config.max_vc_count
        fanout = self.broadcast_vc is not None
        for p in range(port_count):
            for v, s in enumerate(vcs[p]):
                entry = s["entry"]
                s["active"] = Signal(name=f"active_{p}_{v}")
                s["dropping"] = Signal(name=f"dropping_{p}_{v}")
                s["out_port"] = Signal(range(port_count), name=f"out_port_{p}_{v}")
                s["out_vc"] = Signal(range(vmax), name=f"out_vc_{p}_{v}")
                # The front flit of an idle VC is a head flit (links and PE framing keep
                # packets whole and in order in each VC FIFO).
                idle_head = s["fifo"].r_rdy & ~s["active"] & ~s["dropping"]
                s["drain"] = Signal(name=f"drain_{p}_{v}")
                m.d.comb += s["drain"].eq(s["fifo"].r_rdy & (s["dropping"] | (
                    idle_head & entry.route.drop)))
                self._requests(m, s, f"{p}_{v}", idle_head, outputs)
                s["unicast"] = s["active"]
                if fanout:
                    # The outputs of the broadcast this VC is sending (zero for a unicast).
                    s["fan"] = Signal(port_count, name=f"fan_{p}_{v}")
                    s["unicast"] = s["active"] & ~s["fan"].any()

        # ---- VC allocation, one packet per output and per input port each cycle (enough:
        # a port moves one flit per cycle and a packet has L >= 1 flits). Each input port
        # puts forward one of its VCs that has a head flit and a free, credited output VC
        # (round-robin over its VCs), then each output picks one of the ports that ask for it
        # (round-robin over ports), so packets win an output port by port in turn. A VC that
        # is put forward but loses keeps its turn. The output VC is the lowest eligible one
        # in the packet's mask. ----
        asks, offers, vc_arbs = [], [], []
        for p in range(port_count):
            vc_arb = m.submodules[f"va_vc_{p}"] = RoundRobinArbiter(config.vc_counts[p])
            vc_arbs.append(vc_arb)
            ask = Signal(port_count, name=f"va_ask_{p}")  # one-hot: the output asked for
            offer = Signal(vmax, name=f"va_offer_{p}")  # one-hot: the output VC it would get
            ask_bits, offer_bits = Const(0, port_count), Const(0, vmax)
            for v, s in enumerate(vcs[p]):
                m.d.comb += vc_arb.requests[v].eq(s["va_req"])
                ask_bits = ask_bits | Mux(vc_arb.grant[v], s["va_to"], 0)
                offer_bits = offer_bits | Mux(vc_arb.grant[v], s["w_sel"], 0)
            m.d.comb += [ask.eq(ask_bits), offer.eq(offer_bits)]
            asks.append(ask)
            offers.append(offer)

        # ---- Broadcast allocation, before unicast: one broadcast per cycle (round-robin over
        # every input VC) whose outputs all have their copy VC free takes them all; unicast
        # allocation skips those outputs this cycle. ----
        flat = [s for port_vcs in vcs for s in port_vcs]
        if fanout:
            copy_vc = outputs["copy_vc"]
            copy_take = self._copy_allocation(m, flat, Cat(s["copy_req"] for s in flat))

        alloc = []  # alloc[o]: one-hot of the output VC allocated this cycle
        won_bits = Const(0, port_count)
        for o in range(port_count):
            port_arb = m.submodules[f"va_port_{o}"] = RoundRobinArbiter(port_count)
            requests = Cat(asks[p][o] for p in range(port_count))
            if fanout:
                requests = Mux(copy_take[o], 0, requests)
            m.d.comb += [port_arb.requests.eq(requests), port_arb.advance.eq(1)]
            alloc_bits = Const(0, vmax)
            for p in range(port_count):
                alloc_bits = alloc_bits | Mux(port_arb.grant[p], offers[p], 0)
            won_bits = won_bits | port_arb.grant
            if fanout:
                alloc_bits = alloc_bits | Mux(copy_take[o], 1 << copy_vc[o], 0)
            alloc.append(Signal(vmax, name=f"alloc_{o}"))
            m.d.comb += alloc[o].eq(alloc_bits)

        won = Signal(port_count, name="va_won")  # bit p: port p's offered VC was allocated
        m.d.comb += won.eq(won_bits)
        for p in range(port_count):
            m.d.comb += vc_arbs[p].advance.eq(won[p])
            for v, s in enumerate(vcs[p]):
                s["va_grant"] = Signal(name=f"va_grant_{p}_{v}")
                m.d.comb += s["va_grant"].eq(vc_arbs[p].grant[v] & won[p])

        for p in range(port_count):
            for v, s in enumerate(vcs[p]):
                # A packet may cross the switch in the cycle its VC is allocated.
                s["sa_req"] = Signal(name=f"sa_req_{p}_{v}")
                m.d.comb += s["sa_req"].eq(s["fifo"].r_rdy & (s["unicast"] | s["va_grant"]))
                s["cur_port"] = Signal(range(port_count), name=f"cur_port_{p}_{v}")
                m.d.comb += s["cur_port"].eq(Mux(s["active"], s["out_port"], s["move_port"]))
                s["cur_vc"] = Signal(range(vmax), name=f"cur_vc_{p}_{v}")
                m.d.comb += s["cur_vc"].eq(Mux(s["active"], s["out_vc"],
                                               _encode(s["w_sel"], vmax)))

        # ---- Draining malformed packets: a port with a draining VC reads that VC (lowest
        # first) instead of raising switch requests, so each port reads at most one flit and
        # returns at most one credit per cycle. ----
        drain_sel, draining = [], []
        for p in range(port_count):
            bits = Signal(config.vc_counts[p], name=f"drain_bits_{p}")
            m.d.comb += bits.eq(Cat(s["drain"] for s in vcs[p]))
            sel = Signal(config.vc_counts[p], name=f"drain_sel_{p}")
            m.d.comb += sel.eq(_lowest(bits, config.vc_counts[p]))
            drain_sel.append(sel)
            draining.append(bits.any())

        # ---- Broadcast switching, before unicast: one broadcast flit per cycle (round-robin
        # over the input VCs sending one) crosses to all its outputs at once; unicast switch
        # allocation skips those outputs and that input port this cycle. ----
        if fanout:
            copy_sw = m.submodules["sa_copy"] = RoundRobinArbiter(len(flat))
            index = 0
            for p in range(port_count):
                for s in vcs[p]:
                    m.d.comb += copy_sw.requests[index].eq(s["fifo"].r_rdy & s["active"]
                                                           & s["fan"].any() & ~draining[p])
                    s["copy_go"] = copy_sw.grant[index]
                    index += 1
            m.d.comb += copy_sw.advance.eq(1)
            copy_out = Signal(port_count, name="copy_out")
            out_bits = Const(0, port_count)
            for s in flat:
                out_bits = out_bits | Mux(s["copy_go"], s["fan"], 0)
            m.d.comb += copy_out.eq(out_bits)
            copy_port = [Cat(s["copy_go"] for s in vcs[p]).any() for p in range(port_count)]

        # ---- Switch allocation (separable, output first): per output a round-robin over
        # input ports with a flit for it, then over that port's VCs; then per input port a
        # round-robin accept over the outputs that chose it (one crossbar input per port).
        # Output arbiters advance only on accepted grants so a refused port keeps its turn. ----
        for p in range(port_count):
            for v, s in enumerate(vcs[p]):
                s["sa_to"] = Signal(port_count, name=f"sa_to_{p}_{v}")
                wants = s["sa_req"] & ~draining[p]
                to = Mux(wants, 1 << s["cur_port"], 0)
                if fanout:
                    to = Mux(wants & ~copy_port[p], 1 << s["cur_port"], 0) & ~copy_out
                m.d.comb += s["sa_to"].eq(to)
        sa_port, sa_vc = [], []
        for o in range(port_count):
            port_arb = m.submodules[f"sa_port_{o}"] = RoundRobinArbiter(port_count)
            sa_port.append(port_arb)
            sa_vc.append([])
            for p in range(port_count):
                vc_arb = m.submodules[f"sa_vc_{o}_{p}"] = RoundRobinArbiter(config.vc_counts[p])
                sa_vc[o].append(vc_arb)
                for v, s in enumerate(vcs[p]):
                    m.d.comb += vc_arb.requests[v].eq(s["sa_to"][o])
                m.d.comb += port_arb.requests[p].eq(vc_arb.requests.any())

        accepted = [[None] * port_count for _ in range(port_count)]  # accepted[o][p]
        for p in range(port_count):
            accept = m.submodules[f"sa_accept_{p}"] = RoundRobinArbiter(port_count)
            m.d.comb += accept.advance.eq(1)
            for o in range(port_count):
                m.d.comb += accept.requests[o].eq(sa_port[o].grant[p])
                accepted[o][p] = accept.grant[o]
        for o in range(port_count):
            m.d.comb += sa_port[o].advance.eq(
                Cat(accepted[o][p] for p in range(port_count)).any())
            for p in range(port_count):
                m.d.comb += sa_vc[o][p].advance.eq(accepted[o][p])

        # ---- Input reads, crossbar inputs, credits back upstream, state updates. ----
        xbar_layout = data.StructLayout({"data": config.flit_width, "first": 1, "last": 1,
                                         "vc": range(vmax)})
        xbar_inputs, drop_heads = [], []
        for p, port in enumerate(config.ports):
            vc_count = port.vc_count
            read_sw = Signal(vc_count, name=f"read_sw_{p}")  # one-hot: VC sent this cycle
            accepted_by = Cat(accepted[o][p] for o in range(port_count))
            unicast_read = Mux(accepted_by.any(), Array(
                sa_vc[o][p].grant for o in range(port_count))[_encode(accepted_by, port_count)],
                0)
            if fanout:
                unicast_read = unicast_read | Cat(s["copy_go"] for s in vcs[p])
            m.d.comb += read_sw.eq(unicast_read)
            # The crossbar carries data, first, last and the output VC tag.
            read_index = _encode(read_sw, vc_count)
            xbar_in = Signal(xbar_layout, name=f"xbar_in_{p}")
            m.d.comb += xbar_in.eq(Array(
                Cat(s["entry"].data, s["entry"].first, s["entry"].last, s["cur_vc"])
                for s in vcs[p])[read_index])
            xbar_inputs.append(xbar_in)

            read = Signal(vc_count, name=f"read_{p}")
            m.d.comb += read.eq(read_sw | drain_sel[p])
            for v, s in enumerate(vcs[p]):
                m.d.comb += s["fifo"].r_en.eq(read[v])
                with m.If(s["va_grant"]):
                    m.d.sync += [s["active"].eq(1), s["out_port"].eq(s["move_port"]),
                                 s["out_vc"].eq(s["cur_vc"])]
                if fanout:
                    with m.If(s["copy_grant"]):
                        m.d.sync += [s["active"].eq(1), s["fan"].eq(s["entry"].route.targets),
                                     s["out_vc"].eq(self.broadcast_vc)]
                with m.If(read_sw[v] & s["entry"].last):
                    m.d.sync += s["active"].eq(0)
                    if fanout:
                        m.d.sync += s["fan"].eq(0)
                with m.If(drain_sel[p][v]):
                    m.d.sync += s["dropping"].eq(~s["entry"].last)
            # A drained flit is a head when its VC was not already dropping a packet.
            dropping = Cat(s["dropping"] for s in vcs[p])
            drop_heads.append((drain_sel[p] & ~dropping).any())

            if not port.is_pe:
                # Every flit leaving an input FIFO (switched or drained) frees one slot.
                credit = self.port_in(p).credit
                m.d.sync += [credit.valid.eq(read.any()), credit.payload.eq(_encode(read,
                                                                                    vc_count))]

        # ---- Crossbar, output registers / ejection FIFOs, output VC state. ----
        for o in range(port_count):
            select = Signal(port_count, name=f"xbar_select_{o}")
            if fanout:
                m.d.comb += select.eq(Cat(accepted[o][p] | (copy_out[o] & copy_port[p])
                                          for p in range(port_count)))
            else:
                m.d.comb += select.eq(Cat(accepted[o][p] for p in range(port_count)))
            out_entry = Signal(xbar_layout, name=f"xbar_out_{o}")
            m.d.comb += out_entry.eq(Array(xbar_inputs)[_encode(select, port_count)])
            self._drive_output(m, o, select.any(), out_entry, out_entry.vc, alloc[o], outputs)
        return drop_heads

    def _copy_allocation(self, m, flat: list[dict], requests):
        """Broadcast allocation, before unicast: one broadcast per cycle (round-robin over
        every input VC, ``flat``) among ``requests`` takes all its outputs; sets each VC's
        ``copy_grant`` and returns the outputs taken (bit o)."""
        port_count = self.config.port_count
        copy_arb = m.submodules["va_copy"] = RoundRobinArbiter(len(flat))
        m.d.comb += [copy_arb.requests.eq(requests), copy_arb.advance.eq(1)]
        take_bits = Const(0, port_count)
        for i, s in enumerate(flat):
            s["copy_grant"] = copy_arb.grant[i]
            take_bits = take_bits | Mux(copy_arb.grant[i], s["route"].targets, 0)
        copy_take = Signal(port_count, name="copy_take")
        m.d.comb += copy_take.eq(take_bits)
        return copy_take

    # ---- The split router: 3 cycles per hop. ----

    def _split(self, m, vcs: list[list[dict]], outputs: dict, layouts: dict) -> list:
        """Allocation in the cycle after the FIFO write, crossbar traversal from the next.

        An allocated packet holds its output (all of a broadcast's outputs) until its last flit
        leaves, and its input VC streams a flit whenever its FIFO has one: every input VC has
        its own crossbar input, so traversal needs no switch allocation, and its select is a
        register. Allocation sees only registers and FIFO heads; in the cycle a packet's last
        flit leaves, the output and the input VC may already be allocated to the next packets,
        so back-to-back packets lose no cycle. Returns the signals that a malformed packet's
        head was taken for draining."""
        config = self.config
        port_count, vmax, length = config.port_count, config.max_vc_count, config.packet_length
        fanout = self.broadcast_vc is not None
        flat = [s for port_vcs in vcs for s in port_vcs]
        drop_heads = []
        for p in range(port_count):
            for v, s in enumerate(vcs[p]):
                name = f"{p}_{v}"
                s["active"] = Signal(name=f"active_{name}")  # streaming its current packet
                s["read"] = Signal(name=f"read_{name}")
                s["finishing"] = Signal(name=f"finishing_{name}")  # its last flit leaves now
                # "The FIFO has a flit" as a register (the FIFO's own r_rdy decodes its level).
                fifo = s["fifo"]
                nonempty = Signal(name=f"nonempty_{name}")
                nonempty_next = fifo.w_en | Mux(s["read"], fifo.level > 1, fifo.r_rdy)
                m.d.sync += nonempty.eq(nonempty_next)
                m.d.comb += s["read"].eq(s["active"] & nonempty)
                # Packets are exactly L flits (links carry whole packets, PE ports are framed
                # by a counter), so a counter marks the last flit without reading the FIFO.
                s["head_read"] = Signal(name=f"head_read_{name}")
                if length > 1:
                    sent = Signal(range(length), name=f"sent_{name}")
                    sent_next = Mux(s["read"], Mux(sent == length - 1, 0, sent + 1), sent)
                    m.d.sync += sent.eq(sent_next)
                    # "The last flit leaves now" is a register too: a packet that starts
                    # now has sent no flit yet, so the next cycle's value does not depend
                    # on this cycle's allocation.
                    m.d.sync += s["finishing"].eq(s["active"] & ~s["finishing"]
                                                  & (sent_next == length - 1) & nonempty_next)
                    m.d.comb += s["head_read"].eq(s["read"] & (sent == 0))
                else:
                    m.d.comb += [s["finishing"].eq(s["read"]), s["head_read"].eq(s["read"])]
                idle_head = s["head"] & (~s["active"] | s["finishing"])
                # A malformed packet needs no allocation: its VC streams it to nowhere.
                s["drop_go"] = Signal(name=f"drop_go_{name}")
                m.d.comb += s["drop_go"].eq(idle_head & s["route"].drop)
                drop_heads.append(s["drop_go"])
                self._requests(m, s, name, idle_head, outputs)

        # ---- Output state: held by the packet of one input VC (``owner``, one-hot over every
        # input VC) from its allocation until its last flit leaves. ----
        held = [Signal(name=f"held_{o}") for o in range(port_count)]
        owner = [Signal(len(flat), name=f"owner_{o}") for o in range(port_count)]
        fresh = [Signal(name=f"fresh_{o}") for o in range(port_count)]  # allocated last cycle
        avail = Signal(port_count, name="avail")  # bit o: output o may be allocated now
        for o in range(port_count):
            ending = Cat(owner[o][i] & s["finishing"] for i, s in enumerate(flat)).any()
            m.d.comb += avail[o].eq(~held[o] | ending)

        # ---- Broadcast allocation first: one broadcast per cycle whose outputs are all
        # available, with their copy VC free, takes them all; unicast skips those outputs. ----
        if fanout:
            copy_vc = outputs["copy_vc"]
            copy_take = self._copy_allocation(m, flat, Cat(
                s["copy_req"] & ~(s["route"].targets & ~avail).any() for s in flat))

        # ---- Unicast allocation, per output: a round-robin over the input ports asking for
        # it and, in parallel, one over each port's VCs asking for it; an available output
        # grants the pair. Each port gets its turn in every (ports) grants of an output; a VC
        # of a port that did not win keeps its turn. ----
        grants = [[Signal(name=f"grant_{o}_{i}") for i in range(len(flat))]
                  for o in range(port_count)]
        for o in range(port_count):
            open_ = avail[o] & ~copy_take[o] if fanout else avail[o]
            port_arb = m.submodules[f"va_port_{o}"] = RoundRobinArbiter(port_count)
            m.d.comb += port_arb.advance.eq(open_)
            index = 0
            for p in range(port_count):
                vc_arb = m.submodules[f"va_vc_{o}_{p}"] = RoundRobinArbiter(config.vc_counts[p])
                for v, s in enumerate(vcs[p]):
                    m.d.comb += [vc_arb.requests[v].eq(s["va_to"][o]),
                                 grants[o][index].eq(open_ & port_arb.grant[p]
                                                     & vc_arb.grant[v])]
                    index += 1
                m.d.comb += [port_arb.requests[p].eq(vc_arb.requests.any()),
                             vc_arb.advance.eq(open_ & port_arb.grant[p])]

        # The output VC of a packet: its input VC keeps the one it was offered (``chosen``),
        # and the output reads it through its owner register from the next cycle on; the
        # cycle after an allocation, that VC's credits are taken.
        for s in flat:
            s["chosen"] = Signal(vmax, name=f"chosen_{flat.index(s)}")
        out_vc = []  # out_vc[o]: one-hot of the output VC of output o's packet
        for o in range(port_count):
            new_owner = Signal(len(flat), name=f"new_owner_{o}")  # one-hot, if any
            bits = Cat(grants[o])
            if fanout:
                bits = bits | Mux(copy_take[o], Cat(s["copy_grant"] for s in flat), 0)
            m.d.comb += new_owner.eq(bits)
            with m.If(new_owner.any()):
                m.d.sync += [held[o].eq(1), owner[o].eq(new_owner)]
            with m.Elif(avail[o]):
                m.d.sync += held[o].eq(0)
            m.d.sync += fresh[o].eq(new_owner.any())
            vc_bits = Const(0, vmax)
            for i, s in enumerate(flat):
                vc_bits = vc_bits | Mux(owner[o][i], s["chosen"], 0)
            if fanout:
                # A broadcast copy takes the copy VC of each output.
                copying = Signal(name=f"copying_{o}")
                with m.If(new_owner.any()):
                    m.d.sync += copying.eq(copy_take[o])
                vc_bits = Mux(copying, 1 << copy_vc[o], vc_bits)
            out_vc.append(Signal(vmax, name=f"out_vc_{o}"))
            m.d.comb += [out_vc[o].eq(vc_bits),
                         outputs["taken"][o].eq(Mux(fresh[o], out_vc[o], 0))]

        # ---- Input VCs: start the next packet, stream, hand credits back upstream. ----
        for p, port in enumerate(config.ports):
            for s in vcs[p]:
                index = flat.index(s)
                start = s["drop_go"] | Cat(grants[o][index] for o in range(port_count)).any()
                if fanout:
                    start = start | s["copy_grant"]
                # The route leaves its queue when the head flit leaves the FIFO (off the
                # allocation's path); in the cycle a packet's last flit leaves, its head has left
                # at least one cycle before, so the queue's front is the next packet's route.
                # With one-flit packets both happen in one cycle: the route leaves at allocation.
                pop = start if length == 1 else s["head_read"]
                m.d.comb += [s["routes"].r_en.eq(pop), s["fifo"].r_en.eq(s["read"])]
                with m.If(start):
                    m.d.sync += [s["active"].eq(1), s["chosen"].eq(s["w_sel"])]
                with m.Elif(s["finishing"]):
                    m.d.sync += s["active"].eq(0)
            if not port.is_pe:
                self._return_credits(m, p, Cat(s["read"] for s in vcs[p]))

        # ---- Crossbar (an AND-OR of every input VC's front flit, selected by the owner
        # register), output registers / ejection FIFOs, credits. ----
        for o in range(port_count):
            valid = held[o] & Cat(owner[o][i] & s["read"] for i, s in enumerate(flat)).any()
            bits = Const(0, layouts["flit"].size)
            for i, s in enumerate(flat):
                bits = bits | Mux(owner[o][i], s["entry"].as_value(), 0)
            out_entry = Signal(layouts["flit"], name=f"xbar_out_{o}")
            m.d.comb += out_entry.eq(bits)
            self._drive_output(m, o, valid, out_entry, _encode(out_vc[o], vmax),
                               outputs["taken"][o], outputs)
        return drop_heads

    def _return_credits(self, m, p: int, reads) -> None:
        """Link input ``p``: one credit per flit read (``reads``: bit v, VC v read this cycle).
        The split router may read several VCs of a port in one cycle, and the link returns
        one credit per cycle, so credits not yet sent wait in a counter per VC; the lowest VC
        with one goes first. Upstream needs at most (VCs - 1) more cycles per burst."""
        port = self.config.ports[p]
        credit = self.port_in(p).credit
        pending = [Signal(range(port.buffer_depth + 1), name=f"credit_wait_{p}_{v}")
                   for v in range(port.vc_count)]
        due = Signal(port.vc_count, name=f"credit_due_{p}")
        send = Signal(port.vc_count, name=f"credit_send_{p}")
        m.d.comb += [due.eq(Cat((w != 0) | reads[v] for v, w in enumerate(pending))),
                     send.eq(_lowest(due, port.vc_count))]
        m.d.sync += [credit.valid.eq(due.any()), credit.payload.eq(_encode(send, port.vc_count))]
        for v, w in enumerate(pending):
            m.d.sync += w.eq(w + reads[v] - send[v])
