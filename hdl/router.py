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


def _lowest(value, width: int):
    """One-hot of the lowest set bit of ``value`` (zero when none)."""
    return (value & (~value + 1))[:width]


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
        config = self.config
        port_count, length = config.port_count, config.packet_length
        vmax = config.max_vc_count
        adaptive = self.adaptive_vcs
        fanout = self.broadcast_vc is not None
        extra = {"grade_1": port_count, "grade_2": port_count} if adaptive else {}
        if fanout:
            extra.update(multi=1, targets=port_count, enter=port_count)
        route_layout = data.StructLayout({"port": range(port_count), "mask": vmax,
                                          "bubble": 1, "drop": 1, **extra})
        flit_layout = data.StructLayout({"data": config.flit_width, "first": 1, "last": 1})
        entry_layout = data.StructLayout({"data": config.flit_width, "first": 1, "last": 1,
                                          "route": route_layout})
        header_width = self.flit_format.route_layout.size

        # Constant tables indexed by an output port number.
        valid_vcs = Array(Const((1 << count) - 1, vmax) for count in config.output_vc_counts)
        bubble_ok = Array(Const(int(port.bubble), 1) for port in config.ports)

        # ---- Output VC state: busy (held by a packet until its tail leaves) and credits. ----
        busy, credits, free_one, free_two = [], [], [], []
        for o, port in enumerate(config.ports):
            depth = port.buffer_depth
            busy.append([Signal(name=f"busy_{o}_{w}") for w in range(port.output_vc_count)])
            credits.append([Signal(range(depth + 1), init=depth, name=f"credits_{o}_{w}")
                            for w in range(port.output_vc_count)])
            # Virtual cut-through: a VC is allocated only with room for the whole packet,
            # and a bubble move needs room for two (003 §6.3.2), so a ring never fills.
            one = [~b & (c >= length) for b, c in zip(busy[o], credits[o])]
            two = [~b & (c >= 2 * length) for b, c in zip(busy[o], credits[o])]
            free_one.append(Signal(vmax, name=f"free_one_{o}"))
            free_two.append(Signal(vmax, name=f"free_two_{o}"))
            for w in range(port.output_vc_count):
                m.d.comb += [free_one[o][w].eq(one[w]), free_two[o][w].eq(two[w])]
        free_one_of, free_two_of = Array(free_one), Array(free_two)
        if adaptive:
            # Bit o: output o has an adaptive VC with room for a whole packet.
            adaptive_free = Signal(port_count, name="adaptive_free")
            m.d.comb += adaptive_free.eq(Cat((f & adaptive).any() for f in free_one))
        if fanout:
            # The VC a broadcast copy takes at each output (VC 0 of a single-VC port, e.g. a
            # PE's), and bit o: that VC is free with room for one / two whole packets.
            copy_vc = [min(self.broadcast_vc, port.output_vc_count - 1) for port in config.ports]
            copy_one = Signal(port_count, name="copy_free_one")
            copy_two = Signal(port_count, name="copy_free_two")
            m.d.comb += [copy_one.eq(Cat(free_one[o][w] for o, w in enumerate(copy_vc))),
                         copy_two.eq(Cat(free_two[o][w] for o, w in enumerate(copy_vc)))]

        # ---- Input side: route compute, per-VC FIFOs, per-VC packet state. ----
        vcs = []  # vcs[p][v]: dict of the input VC's signals
        for p, port in enumerate(config.ports):
            vc_count = port.vc_count
            rc = self.route_computes[p]
            m.submodules[f"route_{p}"] = rc
            w_valid = Signal(name=f"w_valid_{p}")
            w_vc = Signal(range(vc_count), name=f"w_vc_{p}")
            # The flit and its route result are separate signals joined only at the FIFO
            # write: as one struct, the route compute (reading the flit, writing the route)
            # looks like a combinational loop to Verilator, which then re-evaluates it.
            w_flit = Signal(flit_layout, name=f"w_flit_{p}")
            w_route = Signal(route_layout, name=f"w_route_{p}")
            fifos = [SyncFIFO(width=entry_layout.size, depth=port.buffer_depth)
                     for _ in range(vc_count)]
            for v, fifo in enumerate(fifos):
                m.submodules[f"fifo_{p}_{v}"] = fifo
            bad_vc = Const(0, 1)
            if port.is_pe:
                stream_in = self.port_in(p)
                # Framing comes from a flit counter, not from the PE's marks: a packet is
                # exactly L flits whatever the PE marks, so the credit reservations made for L
                # flits downstream always hold.
                count = Signal(range(length), name=f"inject_count_{p}")
                cur_vc = Signal(range(vc_count), name=f"inject_vc_{p}")
                head = count == 0
                asked = stream_in.payload.vc
                if vc_count & (vc_count - 1):
                    bad_vc = head & (asked >= vc_count)
                    asked = Mux(bad_vc, vc_count - 1, asked)
                m.d.comb += w_vc.eq(Mux(head, asked, cur_vc))
                m.d.comb += stream_in.ready.eq(Array(f.w_rdy for f in fifos)[w_vc])
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

            m.d.comb += [rc.valid.eq(w_valid & w_flit.first),
                         rc.header.eq(w_flit.data[:header_width]),
                         rc.in_port.eq(p), rc.in_vc.eq(w_vc)]
            if "node_static" in self.signature.members:
                m.d.comb += rc.node_static.eq(self.node_static)
            mask = rc.vc_mask & valid_vcs[rc.out_port]
            unicast_drop = (mask == 0) | (rc.bubble & ~bubble_ok[rc.out_port])
            if port_count & (port_count - 1):
                unicast_drop = unicast_drop | (rc.out_port >= port_count)
            if fanout:
                bubbles = Const(sum(1 << o for o, port in enumerate(config.ports)
                                    if port.bubble), port_count)
                copy_drop = (rc.targets == 0) | (rc.enter & ~bubbles).any()
                unicast_drop = Mux(rc.broadcast, copy_drop, unicast_drop)
            drop = rc.malformed | bad_vc | unicast_drop
            m.d.comb += [w_route.port.eq(rc.out_port), w_route.mask.eq(mask),
                         w_route.bubble.eq(rc.bubble), w_route.drop.eq(drop)]
            if adaptive:
                m.d.comb += [w_route.grade_1.eq(rc.grade_1), w_route.grade_2.eq(rc.grade_2)]
            stored = w_flit.as_value()
            if fanout:
                m.d.comb += [w_route.multi.eq(rc.broadcast), w_route.targets.eq(rc.targets),
                             w_route.enter.eq(rc.enter)]
                # A broadcast's head carries the route compute's rewritten fields on.
                stored = Cat(Mux(w_flit.first & rc.broadcast, rc.header_out.as_value(),
                                 w_flit.data[:header_width]), w_flit.as_value()[header_width:])
            for v, fifo in enumerate(fifos):
                m.d.comb += [fifo.w_en.eq(w_valid & (w_vc == v)),
                             fifo.w_data.eq(Cat(stored, w_route.as_value()))]

            port_vcs = []
            for v, fifo in enumerate(fifos):
                s = {"fifo": fifo}
                s["entry"] = entry = Signal(entry_layout, name=f"head_{p}_{v}")
                m.d.comb += entry.eq(fifo.r_data)
                s["ready"] = fifo.r_rdy
                s["active"] = Signal(name=f"active_{p}_{v}")
                s["dropping"] = Signal(name=f"dropping_{p}_{v}")
                s["out_port"] = Signal(range(port_count), name=f"out_port_{p}_{v}")
                s["out_vc"] = Signal(range(vmax), name=f"out_vc_{p}_{v}")
                # The front flit of an idle VC is a head flit (links and PE framing keep
                # packets whole and in order in each VC FIFO).
                idle_head = fifo.r_rdy & ~s["active"] & ~s["dropping"]
                s["drain"] = Signal(name=f"drain_{p}_{v}")
                m.d.comb += s["drain"].eq(fifo.r_rdy & (s["dropping"] | (idle_head &
                                                                          entry.route.drop)))
                free = Mux(entry.route.bubble, free_two_of[entry.route.port],
                           free_one_of[entry.route.port])
                s["eligible"] = Signal(vmax, name=f"eligible_{p}_{v}")
                m.d.comb += s["eligible"].eq(entry.route.mask & free)
                s["va_req"] = Signal(name=f"va_req_{p}_{v}")
                # One-hot over outputs: the output this VC asks to be allocated on.
                s["va_to"] = Signal(port_count, name=f"va_to_{p}_{v}")
                s["w_sel"] = Signal(vmax, name=f"w_sel_{p}_{v}")
                s["move_port"] = Signal(range(port_count), name=f"move_port_{p}_{v}")
                unicast_head, s["unicast"] = idle_head, s["active"]
                if fanout:
                    # The outputs of the broadcast this VC is sending (zero for a unicast).
                    s["fan"] = Signal(port_count, name=f"fan_{p}_{v}")
                    s["unicast"] = s["active"] & ~s["fan"].any()
                    unicast_head = idle_head & ~entry.route.multi
                    needs = (entry.route.enter & copy_two) | (~entry.route.enter & copy_one)
                    s["copy_req"] = Signal(name=f"copy_req_{p}_{v}")
                    m.d.comb += s["copy_req"].eq(idle_head & entry.route.multi
                                                 & ~entry.route.drop
                                                 & ~(entry.route.targets & ~needs).any())
                if adaptive:
                    # Grade 1 if one of its outputs has a free adaptive VC, else grade 2, else
                    # the escape move (its lowest eligible VC).
                    one = entry.route.grade_1 & adaptive_free
                    two = entry.route.grade_2 & adaptive_free
                    pick = Signal(port_count, name=f"pick_{p}_{v}")
                    m.d.comb += pick.eq(_lowest(Mux(one.any(), one, two), port_count))
                    moves = pick.any()
                    pick_vcs = Const(0, vmax)
                    for o in range(port_count):
                        pick_vcs = pick_vcs | Mux(pick[o], free_one[o] & adaptive, 0)
                    m.d.comb += [
                        s["va_req"].eq(unicast_head & ~entry.route.drop
                                       & (moves | s["eligible"].any())),
                        s["va_to"].eq(Mux(s["va_req"], Mux(moves, pick, 1 << entry.route.port),
                                          0)),
                        s["move_port"].eq(Mux(moves, _encode(pick, port_count),
                                              entry.route.port)),
                        s["w_sel"].eq(Mux(moves, _lowest(pick_vcs, vmax),
                                          _lowest(s["eligible"], vmax))),
                    ]
                else:
                    m.d.comb += [
                        s["va_req"].eq(unicast_head & ~entry.route.drop & s["eligible"].any()),
                        s["va_to"].eq(Mux(s["va_req"], 1 << entry.route.port, 0)),
                        s["move_port"].eq(entry.route.port),
                        s["w_sel"].eq(_lowest(s["eligible"], vmax)),
                    ]
                port_vcs.append(s)
            vcs.append(port_vcs)

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
            copy_arb = m.submodules["va_copy"] = RoundRobinArbiter(len(flat))
            m.d.comb += [copy_arb.requests.eq(Cat(s["copy_req"] for s in flat)),
                         copy_arb.advance.eq(1)]
            take_bits = Const(0, port_count)
            for i, s in enumerate(flat):
                s["copy_grant"] = copy_arb.grant[i]
                take_bits = take_bits | Mux(copy_arb.grant[i], s["entry"].route.targets, 0)
            copy_take = Signal(port_count, name="copy_take")
            m.d.comb += copy_take.eq(take_bits)

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
                m.d.comb += s["sa_req"].eq(s["ready"] & (s["unicast"] | s["va_grant"]))
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
                    m.d.comb += copy_sw.requests[index].eq(s["ready"] & s["active"]
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
        for o, port in enumerate(config.ports):
            select = Signal(port_count, name=f"xbar_select_{o}")
            if fanout:
                m.d.comb += select.eq(Cat(accepted[o][p] | (copy_out[o] & copy_port[p])
                                          for p in range(port_count)))
            else:
                m.d.comb += select.eq(Cat(accepted[o][p] for p in range(port_count)))
            out_entry = Signal(xbar_layout, name=f"xbar_out_{o}")
            m.d.comb += out_entry.eq(Array(xbar_inputs)[_encode(select, port_count)])
            out_valid, out_vc = select.any(), out_entry.vc

            if port.is_pe:
                eject = m.submodules[f"eject_{o}"] = SyncFIFO(
                    width=flit.pe_out_layout(config.flit_width).size, depth=port.buffer_depth)
                stream_out = self.port_out(o)
                m.d.comb += [eject.w_en.eq(out_valid),
                             eject.w_data.eq(out_entry.as_value()[:eject.width]),
                             stream_out.valid.eq(eject.r_rdy),
                             stream_out.payload.eq(eject.r_data),
                             eject.r_en.eq(stream_out.ready)]
                returned = [eject.r_rdy & stream_out.ready]
            else:
                link_out = self.port_out(o)
                m.d.sync += [link_out.flit.valid.eq(out_valid),
                             link_out.flit.payload.data.eq(out_entry.data),
                             link_out.flit.payload.first.eq(out_entry.first),
                             link_out.flit.payload.last.eq(out_entry.last),
                             link_out.flit.payload.vc.eq(out_vc)]
                returned = [link_out.credit.valid & (link_out.credit.payload == w)
                            for w in range(port.output_vc_count)]

            for w in range(port.output_vc_count):
                take = alloc[o][w]
                # Credits for the whole packet are taken at allocation; flits then need no
                # per-flit credit check, and the counter can never go negative.
                count = credits[o][w]
                m.d.sync += count.eq(count + returned[w] - Mux(take, length, 0))
                with m.If(take):
                    m.d.sync += busy[o][w].eq(1)
                # (A single-VC output, e.g. a PE's, carries broadcast copies tagged with the
                # broadcast VC on VC 0.)
                this_vc = (out_vc == w) if port.output_vc_count > 1 else 1
                with m.If(out_valid & out_entry.last & this_vc):
                    m.d.sync += busy[o][w].eq(0)

        # ---- Status: malformed packets dropped (counted at their head flit), saturating. ----
        dropped = sum((head.as_unsigned() for head in drop_heads), Const(0, 1))
        total = self.drop_count + dropped
        limit = (1 << config.drop_count_width) - 1
        m.d.sync += self.drop_count.eq(Mux(total > limit, limit, total))
        return m
