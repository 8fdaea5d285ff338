"""The split router's property set: a lone router between its neighbours
(:mod:`.environment`), its observed stages (:mod:`.stages`) and the properties below.

The properties speak of the router's own logic, its buffers included: the flit buffers
(:class:`~twinnet.hdl.flit_buffer.FlitBuffer`) are read through a second port of their memory
and the route queues (:class:`~twinnet.hdl.shift_fifo.ShiftFIFO`) through their registers, so
that induction relates what a buffer holds to what was written into it. A flit is followed
through the router by a tracker per buffer that the prover starts on any write it likes (a
free input): every flit is, in some run, the tracked one.
"""

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal, Value
from amaranth.lib import data
from amaranth.lib.wiring import In

from twinnet.model.widths import index_width

from .allocator import first_in_turn, turns_before
from .environment import downstream, upstream
from .properties import Property, PropertySet
from .stages import FormalRouter

#: The properties of :class:`RouterProof`, in report order.
PROPERTIES = [
    Property("input_buffers_never_overflow",
             "no flit or route is written into a full input buffer or route queue"),
    Property("credit_counter_range",
             "every output VC's credit counter stays within [-L, depth - L]"),
    Property("downstream_never_overflows",
             "a flit is sent on an output VC only when the downstream buffer has room for it"),
    Property("allocation_has_room",
             "an output VC is allocated only with room for a whole packet downstream, for "
             "two where the move enters a ring (bubble)"),
    Property("whole_packets_per_output",
             "between two allocations of an output exactly L flits of one input VC leave "
             "on it, on the VC allocated: packets never interleave on an output VC"),
    Property("route_honoured",
             "a packet is allocated only an output and a VC its route compute allowed, and a "
             "malformed packet none: the route stored with a head is the route compute's "
             "result (a malformed header's marked dropped), and allocation follows it"),
    Property("malformed_drained_and_counted_once",
             "a malformed packet is drained from its buffer to no output and counted once "
             "on drop_count"),
    Property("fair_allocation",
             "an input VC that keeps asking for an output is granted it before that output "
             "is granted P * V - 1 times to others (P input ports, V VCs of its port), and an "
             "open output that is asked for is granted: within P * V - 1 cycles in which its "
             "output is open"),
    Property("flits_conserved",
             "every flit accepted is buffered, every flit read from a buffer leaves on "
             "exactly one output in that cycle or is drained, and every flit an output sends "
             "was read from the input VC that owns it"),
    Property("flits_intact_in_order",
             "every buffer gives back each flit unchanged, after the flits written before it "
             "and before those written after it; a flit read from an input VC leaves "
             "unchanged on the output its packet holds (or is drained, malformed)"),
    Property("credit_accounting", "each credit counter equals the buffer depth less L, the "
             "flits downstream or on the link, and the flits reserved but not yet sent; "
             "each upstream credit count plus its buffer's level and the credits waiting to be "
             "returned equals the buffer depth (the split router's credit leaves in the cycle "
             "of its read)", invariant=True),
    Property("router_state", "the router's registers are consistent with each other (framing, "
             "route queues, owners, arbiter priorities)", invariant=True),
]


class RouterProof(Elaboratable):
    """The top of a router's proof.

    Parameters:
        router: a :class:`FormalRouter` (or a mutant) of the split microarchitecture with
            packets of at least two flits and at most two packets per buffer.
        unit: its name in reports.
        invariants: assert the strengthening invariants too (induction needs them; without
            them only the base case is meaningful, and a bug may show in a property that the
            invariants would have preceded).

    ``properties`` is its :class:`PropertySet`; :meth:`ports` lists the router's inputs and
    ``track`` (bit b: start following the flit written into buffer b now; input VCs first,
    then the ejection buffers), which the prover leaves free within the assumptions.
    """

    def __init__(self, router: FormalRouter, unit: str = "router", *, invariants: bool = True):
        self.router = router
        config = router.config
        self.track = Signal(sum(config.vc_counts) + len(config.pe_ports), name="track")
        left_out = frozenset() if invariants else frozenset(
            prop.name for prop in PROPERTIES if prop.invariant)
        self.properties = PropertySet(unit, PROPERTIES, left_out)

    def ports(self) -> list:
        """The router's input signals (free, within the neighbours' assumptions)."""
        return [Value.cast(value) for path, member, value
                in self.router.signature.flatten(self.router) if member.flow == In] + [self.track]

    def elaborate(self, platform):
        m = Module()
        seen = self.router.observe(platform)
        m.submodules.router = seen.fragment
        checks = _Checks(m, self.router, seen, self.properties)
        checks.inputs()
        checks.buffers(self.track)
        checks.outputs()
        checks.allocation()
        checks.drops()
        checks.fairness()
        return m


class _Checks:
    """The assertions of :data:`PROPERTIES` on one observed router."""

    def __init__(self, m, router, seen, properties):
        self.m, self.router, self.seen, self.props = m, router, seen, properties
        self.config = router.config
        self.length = self.config.packet_length
        comp = seen.composition
        self.comp, self.flat = comp, comp.flat
        # Input VC i of the composition is VC v of port p.
        self.place = [(p, v) for p, count in enumerate(self.config.vc_counts)
                      for v in range(count)]
        self.owns = [[comp.held[o] & comp.owner[o][i] for o in range(self.config.port_count)]
                     for i in range(len(self.flat))]
        self.upstream = {p: upstream(m, router, p) for p in self.config.link_ports}
        self.downstream = {o: downstream(m, router, o) for o in self.config.link_ports}
        self.draining = []
        for i, vc in enumerate(self.flat):
            draining = Signal(name=f"draining_{i}")
            m.d.sync += draining.eq(vc.control.drop_go
                                    | (draining & ~vc.control.finishing))
            self.draining.append(draining)

    def check(self, name, test):
        self.props.check(self.m, name, test, src_loc_at=1)

    def inputs(self) -> None:
        """Input buffers, framing, route queues and credits back upstream."""
        m, config, length = self.m, self.config, self.length
        for i, vc in enumerate(self.flat):
            p, v = self.place[i]
            unit = self.seen.inputs[p]
            fifo, queue = unit.buffers[v], unit.route_queues[v]
            state = vc.state
            self.props.check(m, "input_buffers_never_overflow",
                             ~(fifo.w_en & ~fifo.w_rdy) & ~(queue.w_en & ~queue.w_rdy))
            written = Signal(self.router.stage.route_layout, name=f"route_written_{i}")
            m.d.comb += written.eq(queue.w_data)
            self.props.check(m, "route_honoured", ~queue.w_en | self.legal(written))
            self.props.check(m, "route_honoured", ~queue.w_en | self.computed(unit, written))
            self._queued_routes(queue, i)
            self.props.check(m, "router_state", (vc.port.valid == fifo.r_rdy)
                             & (vc.port.head == queue.r_rdy) & (state.active | (state.sent == 0))
                             & (state.last == (state.active & vc.port.valid
                                               & (state.sent == length - 1))))
            heads = sum((fifo.level > j) & (state.sent == (-j) % length)
                        for j in range(config.ports[p].buffer_depth))
            queued = queue.r_rdy + ~queue.w_rdy if queue.depth == 2 else queue.r_rdy
            self.props.check(m, "router_state", (heads == queued) & (queue.r_rdy | queue.w_rdy))
            if config.ports[p].is_pe:
                count, packet_vc = unit.framing
                incoming = Mux(packet_vc == v, count, 0)
            else:
                incoming = self.upstream[p].position[v]
            self.props.check(m, "router_state",
                             (state.sent + fifo.level) % length == incoming)
            owned = Cat(self.owns[i])
            self.props.check(m, "router_state", (owned & (owned - 1)) == 0)
            self.props.check(m, "flits_conserved",
                             ~vc.control.read | owned.any() | self.draining[i])
        self._credits_back()

    def _queued_routes(self, queue, i: int) -> None:
        """Input VC ``i``'s route queue holds legal routes only, front first."""
        for k, (slot, entry) in enumerate(zip(queue.slots, queue.entries)):
            route = Signal(self.router.stage.route_layout, name=f"route_queued_{i}_{k}")
            self.m.d.comb += route.eq(entry)
            self.check("router_state", ~slot | self.legal(route))
            if k:
                self.check("router_state", ~slot | queue.slots[k - 1])

    def buffers(self, track) -> None:
        """Every flit buffer gives back what was written, in order (:meth:`_follow`); a flit
        read from an input VC crosses to the output its packet holds, unchanged."""
        starts = iter(track)
        layout = self.router.stage.flit_layout
        for i, (p, v) in enumerate(self.place):
            leaving, value = self._follow(self.seen.inputs[p].buffers[v], next(starts), f"{i}")
            tracked = data.View(layout, value)
            crossed = self.draining[i]
            for o, unit in enumerate(self.seen.outputs):
                sent = unit.flit
                crossed = crossed | (self.owns[i][o] & sent.valid
                                     & (sent.payload.data == tracked.data)
                                     & (sent.payload.first == tracked.first)
                                     & (sent.payload.last == tracked.last))
            self.check("flits_intact_in_order", ~leaving | crossed)
        for o in self.config.pe_ports:
            self._follow(self.seen.outputs[o].eject, next(starts), f"eject_{o}")

    def _follow(self, fifo, start, name: str):
        """Follow the flit written into ``fifo`` when ``start`` (and no flit is followed):
        its value and the flits ahead of it. Returns "it is read now" and its value."""
        m, depth = self.m, fifo.depth
        tracking = Signal(name=f"tracking_{name}")
        ahead = Signal(range(depth), name=f"ahead_{name}")
        value = Signal(fifo.width, name=f"tracked_{name}")
        leaving = Signal(name=f"leaving_{name}")
        write, read = fifo.w_en & fifo.w_rdy, fifo.r_en & fifo.r_rdy
        m.d.comb += leaving.eq(tracking & read & (ahead == 0))
        with m.If(start & ~tracking & write):
            m.d.sync += [tracking.eq(1), value.eq(fifo.w_data), ahead.eq(fifo.level - read)]
        with m.Elif(leaving):
            m.d.sync += tracking.eq(0)
        with m.Elif(tracking & read):
            m.d.sync += ahead.eq(ahead - 1)
        self.check("flits_intact_in_order", ~leaving | (fifo.r_data == value))
        m.d.comb += fifo.peek.addr.eq(_wrap(fifo.consume + ahead, depth))
        self.check("router_state", ~tracking | ((ahead < fifo.level) & (fifo.peek.data == value)))
        self.check("router_state", (fifo.consume < depth) & (fifo.level <= depth)
                   & (fifo.produce == _wrap(fifo.consume + fifo.level, depth)))
        return leaving, value

    def _credits_back(self) -> None:
        """Link inputs: upstream credits, buffer level and credits on their way back add up to
        the buffer depth; an accepted flit is written. (The split router's credit leaves in
        the cycle of its read: while on the wire it is still counted by the buffer's level or
        its wait counter. A registered credit is counted on the wire.)"""
        config = self.config
        registered = not self.router.stage.split  # (for a compact router's proof)
        for p in config.link_ports:
            up, unit, link = self.upstream[p], self.seen.inputs[p], self.router.port_in(p)
            depth = config.ports[p].buffer_depth
            for v in range(config.ports[p].vc_count):
                on_wire = link.credit.valid & (link.credit.payload == v)
                fifo = unit.buffers[v]
                in_flight = on_wire if registered else 0
                self.check("credit_accounting",
                           up.credits[v] + fifo.level + unit.credit_waits[v] + in_flight
                           == depth)
                sent = link.flit.valid & (link.flit.payload.vc == v)
                self.check("flits_conserved", ~sent | fifo.w_en)
        for p in config.pe_ports:
            stream = self.router.port_in(p)
            written = Cat(fifo.w_en for fifo in self.seen.inputs[p].buffers)
            self.check("flits_conserved", ~(stream.valid & stream.ready) | written.any())


    def legal(self, route):
        """``route`` is one the input unit stores: a packet that is not dropped has an output
        of the router, VCs of that output (escape VCs under adaptive routing) and a bubble
        only toward a bubble port; the per-output masks (when stored) say the same."""
        config, stage = self.config, self.router.stage
        ports = config.port_count
        vcs = [(1 << count) - 1 for count in config.output_vc_counts]
        bubbles = sum(1 << o for o, port in enumerate(config.ports) if port.bubble)
        fits = Const(0, 1)
        for o in range(ports):
            fits = fits | ((route.port == o) & (route.mask != 0) & ((route.mask & ~vcs[o]) == 0)
                           & (~route.bubble | bool(bubbles >> o & 1)))
        legal = route.drop | fits
        if self.router.adaptive_vcs:
            # Adaptive routing: the escape move names escape VCs only.
            legal = legal & (route.drop | ((route.mask & self.router.adaptive_vcs) == 0))
        if stage.per_output_route:
            for o in range(ports):
                here = (route.port == o) & ~route.drop
                legal = legal & (route.need_one[o] == Mux(here & ~route.bubble, route.mask, 0))
                legal = legal & (route.need_two[o] == Mux(here & route.bubble, route.mask, 0))
        return legal

    def computed(self, unit, route):
        """``route`` (written with a head flit) is what ``unit``'s route compute gave for it:
        a malformed header is dropped, and a packet that is not dropped keeps the output, the
        bubble flag, the grades and VCs among those of the route compute."""
        rc = unit.route_compute
        same = ((route.port == rc.out_port) & ((route.mask & ~rc.vc_mask) == 0)
                & (route.bubble == rc.bubble))
        if self.router.adaptive_vcs:
            same = same & (route.grade_1 == rc.grade_1) & (route.grade_2 == rc.grade_2)
        return (~rc.malformed | route.drop) & (route.drop | same)

    def owner_sum(self, o: int, field: str, width: int):
        """The ``field`` of output ``o``'s owner's state (zero when none)."""
        total = Const(0, width)
        for i, vc in enumerate(self.flat):
            total = total | Mux(self.comp.owner[o][i], vc.state[field], 0)
        return total

    def outputs(self) -> None:
        """Credit counters against the downstream buffers; whole packets per output."""
        config, length, comp = self.config, self.length, self.comp
        for o, port in enumerate(config.ports):
            unit, depth = self.seen.outputs[o], port.buffer_depth
            for w in range(port.output_vc_count):
                spare = unit.spare[w]
                self.check("credit_counter_range", (spare >= -length) & (spare <= depth - length))
                owed = sum(Mux(self.owns[i][o] & ~comp.fresh[o] & vc.state.chosen[w],
                               length - vc.state.sent, 0) for i, vc in enumerate(self.flat))
                if port.is_pe:
                    eject = unit.eject
                    occupancy, on_link = eject.level, 0
                    self.check("downstream_never_overflows", ~(eject.w_en & ~eject.w_rdy))
                else:
                    link = self.router.port_out(o).flit
                    occupancy = self.downstream[o].occupancy[w]
                    on_link = link.valid & (link.payload.vc == w)
                    self.check("downstream_never_overflows", occupancy <= depth)
                self.check("credit_accounting",
                           spare + occupancy + on_link + owed == depth - length)
            self._packets(o)

    def _packets(self, o: int) -> None:
        """Output ``o`` carries L flits of its owner per allocation, on the VC allocated."""
        m, length, comp = self.m, self.length, self.comp
        vmax = self.config.max_vc_count
        valid = self.seen.outputs[o].flit.valid
        granted = comp.grants[o].any()
        run = Signal(range(length + 1), init=length, name=f"run_{o}")
        m.d.sync += run.eq(Mux(granted, 0, run + valid))
        self.check("whole_packets_per_output", ~valid | (run < length))
        self.check("whole_packets_per_output", ~granted | (run + valid == length))
        self.check("whole_packets_per_output", ~granted | comp.avail[o])
        owner, chosen = comp.owner[o], self.owner_sum(o, "chosen", vmax)
        sent = self.owner_sum(o, "sent", index_width(length))
        active = Cat(comp.owner[o][i] & vc.state.active for i, vc in enumerate(self.flat))
        vcs = (1 << self.config.output_vc_counts[o]) - 1
        self.check("router_state", Mux(comp.held[o], run == sent, run == length))
        self.check("router_state", ~comp.held[o] | (
            (owner != 0) & ((owner & (owner - 1)) == 0) & active.any() & (chosen != 0)
            & ((chosen & (chosen - 1)) == 0) & ((chosen & ~vcs) == 0)))
        self.check("router_state", ~comp.fresh[o] | (comp.held[o] & (sent == 0)))
        reading = Cat(owner[i] & vc.control.read for i, vc in enumerate(self.flat))
        self.check("flits_conserved", valid == (comp.held[o] & reading.any()))
        if not self.config.ports[o].is_pe:
            tag = Signal(range(max(2, vmax)), name=f"tag_{o}")
            m.d.sync += tag.eq(sum(Mux(chosen[w], w, 0) for w in range(vmax)))
            link = self.router.port_out(o).flit
            self.check("whole_packets_per_output", ~link.valid | (link.payload.vc == tag))

    def allocation(self) -> None:
        """Grants: to an output and VC the route allows, with room downstream."""
        comp, length = self.comp, self.length
        adaptive = self.router.adaptive_vcs
        for o, port in enumerate(self.config.ports):
            spare = self.seen.outputs[o].spare
            for i, vc in enumerate(self.flat):
                granted, route, offer = comp.grants[o][i], vc.port.route, vc.request.vc
                escape = (route.port == o) & (offer & route.mask).any()
                allowed = escape
                if adaptive:
                    grades = route.grade_1 | route.grade_2
                    allowed = allowed | (grades[o] & (offer & adaptive).any())
                self.check("route_honoured", ~granted | (~route.drop & allowed))
                need = Mux(route.bubble & escape, length, 0)
                for w in range(self.config.max_vc_count):
                    room = (spare[w] >= need) if w < port.output_vc_count else Const(0, 1)
                    self.check("allocation_has_room", ~(granted & offer[w]) | room)

    def drops(self) -> None:
        """A malformed packet streams to no output; drop_count counts it once."""
        m, config = self.m, self.config
        for i, vc in enumerate(self.flat):
            control = vc.control
            self.check("malformed_drained_and_counted_once",
                       ~control.drop_go | (vc.port.route.drop & control.ready))
            self.check("malformed_drained_and_counted_once", self.draining[i] == (
                vc.state.active & ~Cat(self.owns[i]).any()))
        started = Signal(name="started")
        before = Signal.like(self.router.drop_count, name="drop_count_before")
        drops = sum(vc.control.drop_go for vc in self.flat)
        counted = Signal(range(len(self.flat) + 1), name="drops_before")
        m.d.sync += [started.eq(1), before.eq(self.router.drop_count), counted.eq(drops)]
        limit = (1 << config.drop_count_width) - 1
        expected = Mux(before + counted > limit, limit, before + counted)
        self.check("malformed_drained_and_counted_once",
                   ~started | (self.router.drop_count == expected))

    def fairness(self) -> None:
        """Per output and input VC, the grants of the output to others while the VC keeps
        asking for it, bounded through the arbiters' priorities (see :mod:`.allocator`)."""
        m, comp, ports = self.m, self.comp, self.config.port_count
        allocator = comp.allocator
        for o in range(ports):
            port_first, port_ok = first_in_turn(m, allocator.port_arbiters[o], f"first_port_{o}")
            self.check("router_state", port_ok)
            grants = comp.grants[o]
            # Work-conserving: an open output some input VC asks for is granted, so the bound
            # below in grants to others is one in cycles in which the output is open.
            asked = Cat(vc.request.to[o] for vc in self.flat).any()
            self.check("fair_allocation", ~(allocator.open[o] & asked) | grants.any())
            for i, vc in enumerate(self.flat):
                p, v = self.place[i]
                count = self.config.vc_counts[p]
                vc_first, vc_ok = first_in_turn(m, allocator.vc_arbiters[o][p],
                                                f"first_vc_{o}_{i}")
                self.check("router_state", vc_ok)
                bound = ports * count - 1
                asks, granted = vc.request.to[o], grants[i]
                wait = Signal(range(bound + 2), name=f"wait_{o}_{i}")
                m.d.sync += wait.eq(Mux(asks & ~granted, wait + (grants.any() & ~granted), 0))
                self.check("fair_allocation", wait <= bound)
                position = (turns_before(port_first, p, ports)
                            + ports * turns_before(vc_first, v, count))
                # The strong form: fewer grants to others remain than requesters ahead.
                self.check("fair_allocation", wait + position <= bound)


def _wrap(index, depth: int):
    """``index mod depth`` for ``index`` in ``[0, 2 * depth)``."""
    return Mux(index >= depth, index - depth, index)
