"""The split router's property set: a lone router between its neighbours
(:mod:`.environment`), its observed stages (:mod:`.stages`) and the properties below.

Outputs are the crossbar's (a PE port with several ejection lanes is one per lane, and its
merger onto the PE's stream is proven here too); with a routing that broadcasts, an input VC
may hold several outputs at once, as a broadcast's copies.

Packets have 1 to L flits (L: ``RouterConfig.max_packet_length``), framed by their marks; a
PE may send anything (stray flits, heads inside packets, packets longer than L), the link
neighbours send whole packets of 1 to L flits. The properties speak of the router's own
logic, its buffers included: the flit buffers (:class:`~twinnet.hdl.flit_buffer.FlitBuffer`)
are read through further ports of their memory, one per slot, and the route queues
(:class:`~twinnet.hdl.router.route_queue.RouteQueue`) likewise, so that induction relates
what a buffer holds to what was written into it. A flit is followed through the router by a
tracker per buffer that the prover starts on any write it likes (a free input): every flit
is, in some run, the tracked one. Registers of the proof's own (``ghosts``) follow the
framing each buffer is written and read with, and the framing of each PE's stream.
"""

import itertools

from amaranth.hdl import Assume, Cat, Const, Elaboratable, Module, Mux, Signal, Value
from amaranth.lib import data
from amaranth.lib.wiring import In

from .. import onehot
from ..config import FRAMING_ERRORS
from .allocator import first_in_turn, first_of_mask, turns_before
from .environment import downstream, upstream
from .properties import Property, PropertySet
from .route_spec import check_spec
from .stages import FormalRouter

#: The properties of :class:`RouterProof`, in report order.
PROPERTIES = [
    Property("input_buffers_never_overflow",
             "no flit or route is written into a full input buffer or route queue"),
    Property("packets_framed",
             "every input buffer is written whole packets of 1 to L flits: a head only after "
             "a tail, a tail by the L-th flit, an abort mark only on a tail"),
    Property("pe_framing_checked",
             "a PE's flit is written as sent where its packet is well framed (a head with no "
             "packet open, a body or tail before the L-th flit); a stray flit or the rest of "
             "a packet cut at L flits is dropped; a packet still open at its L-th flit ends "
             "there with an aborting tail; a head inside a packet closes that packet with an "
             "aborting tail and is written next, as a head"),
    Property("bad_framing_counted",
             "the framing counters of a PE port are zero from reset; each stray flit, each "
             "head inside a packet and each packet longer than L adds one to its own counter "
             "(saturating), and nothing else changes them"),
    Property("pe_ready_with_room",
             "a PE port takes a flit exactly when no head waits in its register and the "
             "buffer the flit goes to has room: the open packet's VC's for a body or tail, "
             "else the VC the flit asks for (the last, for one the port does not have), whose "
             "route queue must have room too"),
    Property("credit_counter_range",
             "every output VC's credit counter stays within [0, depth]"),
    Property("downstream_never_overflows",
             "a flit is sent on an output VC only when the downstream buffer has room for it"),
    Property("allocation_has_room",
             "an output VC is allocated only with room for a whole longest packet downstream, "
             "for two where the move enters a ring (bubble), once the flit leaving on it now "
             "is counted"),
    Property("room_offered",
             "an output VC is offered for one (two) longest packets exactly when it is "
             "free with room downstream for them: its credit counter (the downstream "
             "buffer's free slots less the flits on the link), and on a bubble port its "
             "packets held downstream or on the link counted as L flits each, less the "
             "credits already back of the oldest"),
    Property("requests_made",
             "a packet ready to be allocated asks for its route's output exactly when a VC "
             "its route allows there is free with room for it (for two packets where the "
             "move enters a ring), and for nothing else; a broadcast asks for its copies "
             "exactly when every copy's VC is free with the room it needs; under adaptive "
             "routing (the split router) a packet asks for the open outputs of its best "
             "grade with a free adaptive VC, waits while all of them are held, and asks for "
             "its escape move only when neither grade has one, exactly when the escape's "
             "VC is free with the room it needs"),
    Property("credits_returned",
             "while an input port owes its upstream router credits (flits read, their "
             "credits not yet sent), it sends one every cycle, for the lowest VC it owes one "
             "(whose credit therefore never waits)"),
    Property("whole_packets_per_output",
             "between two allocations of an output the flits of one packet of one input VC "
             "leave on it, on the VC allocated: its head first, at most L flits, its tail "
             "last; an output is allocated again only as that tail leaves or after"),
    Property("route_honoured",
             "a packet is allocated only an output and a VC its route compute allowed, and a "
             "malformed packet none: the route stored with a head is the route compute's "
             "result, its VCs those of the output; it is marked dropped exactly when the "
             "header is malformed, asks for a VC its port does not have or names no VC of "
             "an output (a bubble toward a port without one); the route compute gives what "
             "the family's specification says for the head's header, input port and VC, as "
             "wired into the router; each route reaches the front of its queue unchanged, "
             "after the routes written before it; and allocation follows the route at the "
             "front"),
    Property("malformed_drained_and_counted_once",
             "a malformed packet is drained from its buffer to no output and counted once "
             "on drop_count, which is zero from reset"),
    Property("fair_allocation",
             "an input VC that keeps asking for an output is granted it before that output "
             "is granted P * V - 1 times to others (P input ports, V VCs of its port): within "
             "P * V - 1 cycles in which its output is open; an open output that is asked for "
             "is granted; an output no packet holds is open; a round-robin arbiter's turn "
             "is the lowest requester's in the cycle after a reset; with iSLIP, its first "
             "round's matches stand, and each grant and accept pointer is zero after a reset "
             "and moves only with a first-round match, to the requesters after the one "
             "matched"),
    Property("flits_conserved",
             "every flit written into an input buffer was accepted there (from a link, "
             "unchanged), every flit read "
             "from a buffer leaves on exactly one output in that cycle or is drained, and "
             "every flit an output sends was read from the input VC that owns it"),
    Property("flits_intact_in_order",
             "every buffer gives back each flit unchanged, after the flits written before it "
             "and before those written after it; a flit read from an input VC leaves "
             "unchanged on the output its packet holds (or is drained, malformed), and a link "
             "output's register sends it unchanged in the next cycle"),
    Property("broadcast_copied",
             "a broadcast is allocated at once every output its route names for a copy, open "
             "ones only, with no unicast grant beside, and then holds exactly those, each on "
             "its copy VC (its flits leave on all of them together: flits_conserved, "
             "flits_intact_in_order)"),
    Property("lanes_merged_whole",
             "a PE port with several ejection lanes gives its PE whole packets of 1 to L "
             "flits, each flit as its lane held it, one lane's packet at a time; the PE is "
             "offered a flit whenever the lane whose packet is under way holds one or, with "
             "none under way, any lane does"),
    Property("lanes_merged_in_order",
             "of the packets at the ejection lanes' fronts, the PE gets first the one whose "
             "head reached its lane's front first (on a tie, the lower lane's)"),
    Property("credit_accounting", "each credit counter plus the flits downstream or on the "
             "link equals the buffer depth; each upstream credit count plus its buffer's "
             "level and the credits waiting to be returned equals the buffer depth (the split "
             "router's credit leaves in the cycle of its read)", invariant=True),
    Property("router_state", "the router's registers are consistent with each other and with "
             "the buffers' contents (framing, route queues, owners, the room an output's "
             "packet may still need, arbiter priorities)", invariant=True),
]


class RouterProof(Elaboratable):
    """The top of a router's proof.

    Parameters:
        router: a :class:`FormalRouter` (or a mutant) of the split microarchitecture with
            packets of 2 to :data:`twinnet.hdl.formal.suite.PROVE_LENGTH_LIMIT` flits at most
            and at most two longest packets per buffer.
        unit: its name in reports.
        invariants: assert the strengthening invariants too (induction needs them; without
            them only the base case is meaningful, and a bug may show in a property that the
            invariants would have preceded).
        spec: the specification of the router's route computes (as
            :class:`~.route_spec.RouteComputeProof` takes it), checked on every head's route
            in the router (``route_honoured``); None: the stored route is checked against the
            route compute's result only.

    ``properties`` is its :class:`PropertySet`; :meth:`ports` lists the router's inputs and
    ``track`` (bit b: start following the flit written into buffer b now; input VCs first,
    then the ejection buffers), which the prover leaves free within the assumptions.
    """

    def __init__(self, router: FormalRouter, unit: str = "router", *, invariants: bool = True,
                 spec=None):
        self.router, self.spec = router, spec
        config = router.config
        ejection = sum(len(config.lanes_of(p)) for p in config.pe_ports)
        self.track = Signal(sum(config.vc_counts) + ejection, name="track")
        left_out = frozenset() if invariants else frozenset(
            prop.name for prop in self.property_list if prop.invariant)
        self.properties = PropertySet(unit, self.property_list, left_out)

    #: The properties, in report order.
    property_list = PROPERTIES

    def make_checks(self, m, seen) -> "RouterChecks":
        """The assertions of :attr:`property_list` on the observed router ``seen``."""
        return RouterChecks(m, self.router, seen, self.properties, self.spec)

    def ports(self) -> list:
        """The router's input signals (free, within the neighbours' assumptions)."""
        return [Value.cast(value) for path, member, value
                in self.router.signature.flatten(self.router) if member.flow == In] + [self.track]

    def elaborate(self, platform):
        m = Module()
        seen = self.router.observe(platform)
        m.submodules.router = seen.fragment
        checks = self.make_checks(m, seen)
        checks.inputs()
        checks.framing()
        checks.buffers(self.track)
        checks.outputs()
        checks.allocation()
        checks.drops()
        checks.fairness()
        checks.merged()
        return m


class Ghost:
    """The proof's own view of a stream of flits framed into packets: ``open`` (a packet's
    head has passed and its tail not yet) and ``count`` (its flits so far), updated from the
    flits that pass (``step``)."""

    def __init__(self, m, length: int, name: str):
        self.m = m
        self.open = Signal(name=f"{name}_open")
        self.count = Signal(range(length + 2), name=f"{name}_count")

    def position(self, first):
        """The place in its packet of a flit that passes now with mark ``first``."""
        return Mux(first, 1, self.count + 1)

    def step(self, passes, first, last) -> None:
        with self.m.If(passes):
            self.m.d.sync += [self.open.eq(~last), self.count.eq(Mux(last, 0,
                                                                     self.position(first)))]


def lowest_index(bits, width: int):
    """The index of the lowest set bit of ``bits`` (0 when none), ``width`` bits wide."""
    index = Const(0, width)
    for k in reversed(range(len(bits))):
        index = Mux(bits[k], k, index)
    return index


def chosen(select, values: list, width: int):
    """Of ``values``, the one whose bit of ``select`` (at most one set) is set; zero when
    none is."""
    total = Const(0, width)
    for k, value in enumerate(values):
        total = total | Mux(select[k], value, 0)
    return total


class RouterChecks:
    """The assertions of :data:`PROPERTIES` on one observed router."""

    def __init__(self, m, router, seen, properties, spec):
        self.m, self.router, self.seen, self.props = m, router, seen, properties
        self.spec = spec
        self.config = router.config
        self.length = self.config.max_packet_length
        comp = seen.composition
        self.comp, self.flat = comp, comp.flat
        # Input VC i of the composition is VC v of port p.
        self.place = [(p, v) for p, count in enumerate(self.config.vc_counts)
                      for v in range(count)]
        # Output o is port output_ports[o]: the ports, then PE ports' further ejection lanes.
        self.output_ports = [p for p, _ in self.config.outputs]
        self.fanout = router.broadcast_vc is not None
        self.upstream = {p: upstream(m, router, p) for p in self.config.link_ports}
        self.downstream = {o: downstream(m, router, o, packets=seen.outputs[o].slotted)
                           for o in self.config.link_ports}
        # Low in the cycle after a reset (and the first), high from the next on: a register
        # of the proof's own that the reset clears.
        self.started = Signal(name="started")
        m.d.sync += self.started.eq(1)
        self.views()
        # Per input VC: the framing its buffer is written with and read with.
        self.writer, self.reader = [], []
        for i, vc in enumerate(self.flat):
            p, v = self.place[i]
            fifo = seen.inputs[p].buffers[v]
            written = self.flit_view(fifo.w_data)
            writer = Ghost(m, self.length, f"written_{i}")
            writer.step(fifo.w_en & fifo.w_rdy, written.first, written.last)
            reader = Ghost(m, self.length, f"read_{i}")
            reader.step(self.reads(vc), vc.port.flit.first, vc.port.flit.last)
            self.writer.append(writer)
            self.reader.append(reader)

    def views(self) -> None:
        """What the checks read of the composition: per input VC and output, the VC owns the
        output (``owns``); per output, it is allocated now (``taken``; ``copy_take``: to a
        broadcast); per input VC, it drains a malformed packet (``draining``)."""
        m, comp = self.m, self.comp
        self.owns = [[comp.held[o] & comp.owner[o][i] for o in range(len(self.output_ports))]
                     for i in range(len(self.flat))]
        self.copy_take = comp.copy_take if self.fanout else Const(0, len(self.output_ports))
        self.grants = comp.grants
        self.taken = [comp.grants[o].any() | self.copy_take[o]
                      for o in range(len(self.output_ports))]
        self.draining = []
        for i, vc in enumerate(self.flat):
            draining = Signal(name=f"draining_{i}")
            m.d.sync += draining.eq(vc.control.drop_go
                                    | (draining & ~vc.control.finishing))
            self.draining.append(draining)

    @staticmethod
    def reads(vc):
        """Input VC ``vc`` reads its front flit now."""
        return vc.control.read

    @staticmethod
    def ready(vc):
        """Input VC ``vc``'s next packet may be allocated now."""
        return vc.control.ready

    @staticmethod
    def offer(vc):
        """The output VC (one-hot) input VC ``vc``'s packet takes if granted now."""
        return vc.control.chosen

    def leaving(self, o: int, w: int):
        """A flit of another packet leaves on VC ``w`` of output ``o`` now, which an
        allocation of that VC must count (the split router allocates an output again as its
        packet's last flit leaves)."""
        unit = self.seen.outputs[o]
        return unit.flit.valid & (unit.flit.payload.vc == w)

    def flit_view(self, value) -> data.View:
        """The flit (:attr:`StageConfig.flit_layout`) at the bottom of a buffer entry
        ``value`` (the compact router's entry holds its route above it)."""
        layout = self.router.stage.flit_layout
        return data.View(layout, value if len(value) == layout.size else value[:layout.size])

    def check(self, name, test, part: str | None = None):
        self.props.check(self.m, name, test, src_loc_at=1, part=part)

    def inputs(self) -> None:
        """Per input VC: its buffer and what stores its routes never overflow (:meth:`room`),
        the routes stored are legal and the route compute's, its buffer is written whole
        packets and holds what :meth:`held` says; route computes against the specification;
        credits back upstream."""
        self.routes_written = {}  # per input VC, the route written now
        for i in range(len(self.flat)):
            p, v = self.place[i]
            unit = self.seen.inputs[p]
            self.check("input_buffers_never_overflow", self.room(unit, v))
            stored, route = self.route_written(i, unit, v)
            self.routes_written[i] = route
            self.check("route_honoured", ~stored | self.legal(route))
            self.check("route_honoured", ~stored | self.computed(unit, route))
            self._written_framing(i, unit.buffers[v])
            self.held(i, unit, v)
        if self.spec is not None:
            self._specified()
        self._credits_back()

    @staticmethod
    def room(unit, v: int):
        """No write overflows the buffer or the route queue of VC ``v`` of ``unit``."""
        fifo, queue = unit.buffers[v], unit.route_queues[v]
        return ~(fifo.w_en & ~fifo.w_rdy) & ~(queue.w_en & ~queue.w_rdy)

    def route_written(self, i: int, unit, v: int):
        """Input VC ``i`` (VC ``v`` of ``unit``): whether a route is computed now (a route
        queue's write; with the bypass on a link, a head's write, whose route a packet of one
        flit allocated at once never queues), and the route."""
        queue = unit.route_queues[v]
        written = Signal(self.router.stage.route_layout, name=f"route_written_{i}")
        self.m.d.comb += written.eq(self.router.stage.expand_route(self.m, queue.w_data))
        if self.bypasses(unit):
            return self.head_written(unit, v), written
        return queue.w_en, written

    def bypasses(self, unit) -> bool:
        """``unit`` offers a head arriving now to the allocators (``RouterConfig.bypass``, on
        a link)."""
        return self.config.bypasses and not self.config.ports[unit.port_index].is_pe

    def head_written(self, unit, v: int):
        """A head is written into the buffer of VC ``v`` of ``unit`` now."""
        fifo = unit.buffers[v]
        return fifo.w_en & fifo.w_rdy & self.flit_view(fifo.w_data).first

    def held(self, i: int, unit, v: int) -> None:
        """What input VC ``i`` (VC ``v`` of ``unit``) holds: queued routes, buffer contents,
        the outputs it owns, and a flit read only for its owned outputs or to drain."""
        fifo, queue = unit.buffers[v], unit.route_queues[v]
        self._queued_routes(queue, i)
        self._contents(i, fifo, queue)
        owned = Cat(self.owns[i])
        copies = Cat(own & copying for own, copying in zip(self.owns[i], self.comp.copying))
        self.check("router_state", ((owned & (owned - 1)) == 0) | (owned == copies))
        self.check("flits_conserved", ~self.flat[i].control.read | owned.any()
                   | self.draining[i])

    def _specified(self) -> None:
        """Each input port's route compute, as wired into the router, gives what the
        specification says for every head it computes a route for."""
        m = self.m
        for unit in self.seen.inputs:
            rc = unit.route_compute
            check = lambda name, test: self.props.check(  # noqa: E731
                m, "route_honoured", test, src_loc_at=1)
            assumptions = check_spec(m, rc, unit.port_index, self.spec, check, when=rc.valid)
            m.d.comb += [Assume(test) for test in assumptions]

    def _written_framing(self, i: int, fifo) -> None:
        """Input VC ``i`` is written whole packets of 1 to L flits."""
        flit = self.flit_view(fifo.w_data)
        writer = self.writer[i]
        place = writer.position(flit.first)
        write = fifo.w_en & fifo.w_rdy
        self.check("packets_framed", ~write | (
            (flit.first == ~writer.open) & (place <= self.length)
            & ((place < self.length) | flit.last) & (~flit.abort | flit.last)))

    def _contents(self, i: int, fifo, queue) -> None:
        """What input VC ``i``'s buffer holds, slot by slot: packets whose marks chain (a
        head exactly after a tail) from the reader's place in the front packet to the
        writer's in the last one, none longer than L; one queued route per head of a packet
        not yet started; the VC streams only a started packet."""
        length = self.length
        vc = self.flat[i]
        writer, reader = self.writer[i], self.reader[i]
        layout = self.router.stage.flit_layout
        state = vc.state
        self.check("router_state", (vc.port.valid == fifo.r_rdy)
                   & (reader.open == (reader.count != 0)) & (writer.open == (writer.count != 0))
                   & (writer.count < length) & (reader.count < length)
                   & (~reader.open | state.active))
        heads = self._held_packets(fifo, layout, reader, writer.open, writer.count)
        # The started packet's head, while still in the buffer, is the front flit; a route
        # leaves its queue as its head is read (with L = 1, as its packet starts).
        started_head = state.active & ~reader.open
        self.check("router_state", ~started_head | (fifo.level != 0))
        queued = heads - started_head if length == 1 else heads
        self.check("router_state", queue.level == queued)
        head = queue.r_rdy
        p, v = self.place[i]
        if self.bypasses(self.seen.inputs[p]):
            # The bypass: a head written now while no route is queued is offered at once,
            # with the route written; else the queue's front is.
            arriving = ~queue.r_rdy & self.head_written(self.seen.inputs[p], v)
            head = head | arriving
            self.check("route_honoured", ~arriving | (
                vc.port.route.as_value() == self.routes_written[i].as_value()))
            self.check("route_honoured", ~queue.r_rdy | (
                vc.port.route.as_value() == queue.r_data.as_value()))
        self.check("router_state", vc.port.head == head)
        # The split router's registers of "the front flit is a tail", "a flit of the packet
        # was read" and "a last flit that is not its head leaves now".
        front = data.View(layout, fifo.slots[0])
        tail = state.active & vc.port.valid & front.last
        self.check("router_state", (~fifo.r_rdy | (fifo.r_flag == front.last))
                   & (state.begun == reader.open) & (state.ending == (tail & state.begun)))

    def _held_packets(self, fifo, layout, reader, written_open, written_count):
        """The flits ``fifo`` holds (of ``layout``) chain into packets of at most L flits (a
        head exactly after a tail) from the ``reader``'s place in the front packet (a
        :class:`Ghost`) to the writer's in the last (its packet open, its flits so far);
        returns the number of heads held."""
        length = self.length
        closed, place = ~reader.open, reader.count  # before slot j
        heads = Const(0, 1)
        for j, slot in enumerate(fifo.slots):
            entry = data.View(layout, slot)
            here = fifo.level > j
            at = Mux(entry.first, 1, place + 1)
            self.check("router_state", ~here | ((entry.first == closed) & (at <= length)
                                                & ((at < length) | entry.last)
                                                & (~entry.abort | entry.last)))
            if fifo.flags:
                self.check("router_state", ~here | (fifo.flags[j] == entry.last))
            closed = Mux(here, entry.last, closed)
            place = Mux(here, Mux(entry.last, 0, at), place)
            heads = heads + (here & entry.first)
        # The last flit written is the last one held (or, with none held, the reader's).
        self.check("router_state", (closed == ~written_open) & (place == written_count))
        return heads

    def _queued_routes(self, queue, i: int) -> None:
        """Input VC ``i``'s route queue holds legal routes only, the front in its register and
        the rest in its memory, whose pointers agree with its level."""
        self.check("router_state", self.legal(queue.r_data) | ~queue.r_rdy)
        behind = queue.behind
        self.check("router_state", (behind < queue.depth) & (queue.front_valid | (behind == 0)))
        for j, slot in enumerate(queue.behind_slots):
            route = Signal(self.router.stage.route_layout, name=f"route_queued_{i}_{j}")
            self.m.d.comb += route.eq(self.router.stage.expand_route(self.m, slot))
            self.check("router_state", (behind <= j) | self.legal(route))
        if queue.memory is not None:
            size = queue.depth - 1
            self.check("router_state", (queue.consume < size) & (queue.produce < size) & (
                queue.produce == _wrap(queue.consume + behind, size)))

    def framing(self) -> None:
        """Each PE port against the framing of the PE's own stream (a ghost of the PE's
        packets), the flit written for each flit taken, and the counters."""
        m, length = self.m, self.length
        for p in self.config.pe_ports:
            unit, stream = self.seen.inputs[p], self.router.port_in(p)
            state = unit.framing_state
            fifos = unit.buffers
            # The PE's stream as the spec frames it: a packet open after its head, closed by
            # its tail or its L-th flit; after a packet cut at L, flits are dropped to its
            # tail (``dropping``); a head inside a packet waits (``waiting``).
            pe = Ghost(m, length, f"pe_{p}")
            dropping = Signal(name=f"pe_dropping_{p}")
            waiting = Signal(name=f"pe_waiting_{p}")
            held = Signal(stream.payload.shape(), name=f"pe_held_{p}")
            taken = stream.valid & stream.ready
            flit = stream.payload
            place = pe.position(flit.first)
            stray = taken & ~flit.first & ~pe.open & ~dropping
            cut = taken & flit.first & pe.open
            long = taken & ~flit.last & pe.open & ~flit.first & (place == length)
            if length == 1:
                long = long | (taken & flit.first & ~flit.last & ~pe.open)
            kept = taken & ~cut & (pe.open | flit.first)  # written this cycle as it came
            writes = Cat(fifo.w_en & fifo.w_rdy for fifo in fifos)
            flits = [self.flit_view(fifo.w_data) for fifo in fifos]
            wrote = Signal(self.router.stage.flit_layout, name=f"pe_wrote_{p}")
            for k, fifo in enumerate(fifos):
                with m.If(fifo.w_en & fifo.w_rdy):
                    m.d.comb += wrote.eq(flits[k])
            vc_of = Signal(range(len(fifos)), name=f"pe_wrote_vc_{p}")
            for k in range(len(fifos)):
                with m.If(writes[k]):
                    m.d.comb += vc_of.eq(k)
            one = (writes & (writes - 1)) == 0
            self.check("pe_framing_checked", one & (~waiting | ~taken))
            self.check("pe_framing_checked", ~kept | (
                writes.any() & (wrote.data == self.carried(unit, flit.data, flit.first))
                & (wrote.first == flit.first)
                & (wrote.last == (flit.last | long)) & (wrote.abort == long)))
            self.check("pe_framing_checked", ~(stray | (taken & dropping & ~flit.first))
                       | ~writes.any())
            self.check("pe_framing_checked", ~cut | (
                writes.any() & wrote.last & wrote.abort & ~wrote.first
                & (vc_of == state.packet_vc)))
            self.check("pe_framing_checked", ~(waiting & writes.any()) | (
                (wrote.data == self.carried(unit, held.data, 1)) & wrote.first & ~wrote.abort
                & (wrote.last == held.last)))
            self.check("pe_framing_checked", waiting | taken | ~writes.any())
            self._ready_with_room(p, flit, pe, waiting)
            # The ghost moves with the flits the PE sends; a waiting head counts when it is
            # written.
            with m.If(cut):
                m.d.sync += [waiting.eq(1), held.eq(flit), pe.open.eq(0), pe.count.eq(0)]
            with m.Elif(waiting & writes.any()):
                m.d.sync += [waiting.eq(0), pe.open.eq(~held.last), pe.count.eq(1)]
            with m.Elif(taken & (pe.open | flit.first)):
                ends = flit.last | (place == length)
                m.d.sync += [pe.open.eq(~ends), pe.count.eq(Mux(ends, 0, place)),
                             dropping.eq(ends & ~flit.last)]
            with m.Elif(taken):
                m.d.sync += dropping.eq(dropping & ~flit.last)
            self._framing_state(p, pe, dropping, waiting, held)
            self._counted(p, {"stray": stray, "cut": cut, "long": long})

    def _ready_with_room(self, p: int, flit, pe, waiting) -> None:
        """PE port ``p`` takes the PE's ``flit`` exactly when no head waits in its register
        (``waiting``) and the buffer it goes to has room: the open packet's VC's while the
        PE's stream has a packet open (``pe``), else the VC the flit asks for (the last, for
        one the port does not have), with room in its route queue too."""
        unit, stream = self.seen.inputs[p], self.router.port_in(p)
        base = sum(self.config.vc_counts[:p])
        room = [fifo.level < fifo.depth for fifo in unit.buffers]
        head_room = ([r & (queue.level < queue.depth) for r, queue in zip(room, unit.route_queues)]
                     if unit.route_queues else room)
        open_room = Cat(self.writer[base + v].open & r for v, r in enumerate(room)).any()
        asked_room = head_room[-1]
        for v in range(len(head_room) - 1):
            asked_room = Mux(flit.vc == v, head_room[v], asked_room)
        self.check("pe_ready_with_room",
                   stream.ready == (~waiting & Mux(pe.open, open_room, asked_room)))

    def _framing_state(self, p: int, pe, dropping, waiting, held) -> None:
        """PE port ``p``'s framing registers agree with the PE's stream and with what its
        buffers were written."""
        unit = self.seen.inputs[p]
        state = unit.framing_state
        base = sum(self.config.vc_counts[:p])
        writers = [self.writer[base + v] for v in range(self.config.vc_counts[p])]
        self.check("router_state", (state.pending == waiting) & (state.open == pe.open)
                   & (state.discard == dropping) & (~state.open | (state.count == pe.count))
                   & (~waiting | ((state.held_data == held.data)
                                  & (state.held_last == held.last)
                                  & (state.held_vc == held.vc))))
        self.check("router_state", state.open + state.pending + state.discard <= 1)
        if self.length == 1:  # every flit ends its packet: none is open, no head waits
            self.check("router_state", ~pe.open & ~waiting)
        for v, writer in enumerate(writers):
            mine = state.open & (state.packet_vc == v)
            self.check("router_state", (writer.open == mine)
                       & (~mine | (writer.count == state.count)))

    def _counted(self, p: int, events: dict) -> None:
        """PE port ``p``'s framing counters add exactly the events of this cycle."""
        m = self.m
        counts = getattr(self.router, f"framing_{p}")
        for error in FRAMING_ERRORS:
            count = getattr(counts, error)
            before = Signal.like(count, name=f"{error}_before_{p}")
            event = Signal(name=f"{error}_event_{p}")
            m.d.sync += [before.eq(count), event.eq(events[error])]
            limit = (1 << len(count)) - 1
            expected = Mux(before == limit, limit, before + event)
            self.check("bad_framing_counted", ~self.started | (count == expected))
            self.check("bad_framing_counted", self.started | (count == 0))

    def buffers(self, track) -> None:
        """Every flit buffer gives back what was written, in order (:meth:`_follow`); a flit
        read from an input VC crosses to the output its packet holds (to each output a
        broadcast's copies hold), unchanged; every route queue gives back the routes written,
        in order (:meth:`_follow_route`)."""
        starts = iter(track)
        for i, (p, v) in enumerate(self.place):
            start = next(starts)
            unit = self.seen.inputs[p]
            leaving, value = self._follow(unit.buffers[v], start, f"{i}")
            self.check("flits_intact_in_order", self.crossed(i, leaving, self.flit_view(value)))
            if unit.route_queues:
                self._follow_route(unit.route_queues[v], start, f"{i}")
        for o, p in enumerate(self.output_ports):
            if self.config.ports[p].is_pe:
                self._follow(self.seen.outputs[o].eject, next(starts), f"eject_{o}")
            else:
                self._link_register(o, p)

    def _link_register(self, o: int, p: int) -> None:
        """Output ``o``, link port ``p``: its link register sends, in the cycle after, exactly
        the flits its output unit is given, unchanged."""
        m = self.m
        given = self.seen.outputs[o].flit
        before = Signal(given.payload.shape(), name=f"link_given_{o}")
        before_valid = Signal(name=f"link_given_valid_{o}")
        m.d.sync += [before.eq(given.payload), before_valid.eq(given.valid)]
        link = self.router.port_out(p).flit
        self.check("flits_intact_in_order", (link.valid == before_valid) & (~before_valid | (
            (link.payload.data == before.data) & (link.payload.first == before.first)
            & (link.payload.last == before.last) & (link.payload.abort == before.abort))))

    def crossed(self, i: int, leaving, flit):
        """Where ``leaving`` (read from input VC ``i`` now), ``flit`` is drained or leaves
        unchanged on every output the VC owns."""
        crossed = Cat(self.owns[i]).any()
        for o, unit in enumerate(self.seen.outputs):
            sent = unit.flit
            crossed = crossed & (~self.owns[i][o] | (
                sent.valid & (sent.payload.data == flit.data)
                & (sent.payload.first == flit.first) & (sent.payload.last == flit.last)
                & (sent.payload.abort == flit.abort)))
        return ~leaving | self.draining[i] | crossed

    def _follow_route(self, queue, start, name: str) -> None:
        """Follow the route written into route queue ``queue`` when ``start`` (and no route
        is followed): it reaches the front, after the routes written before it, as the front
        register holds it (expanded); the memory holds it in the meantime."""
        m = self.m
        tracking = Signal(name=f"route_tracking_{name}")
        ahead = Signal(range(queue.depth), name=f"route_ahead_{name}")
        value = Signal(queue.width, name=f"route_tracked_{name}")
        write, pop = queue.w_en & queue.w_rdy, queue.r_en & queue.r_rdy
        with m.If(start & ~tracking & write):
            m.d.sync += [tracking.eq(1), value.eq(queue.w_data), ahead.eq(queue.level - pop)]
        with m.Elif(tracking & pop & (ahead == 0)):
            m.d.sync += tracking.eq(0)
        with m.Elif(tracking & pop):
            m.d.sync += ahead.eq(ahead - 1)
        expanded = self.router.stage.expand_route(m, value)
        self.check("route_honoured", ~(tracking & (ahead == 0)) | (
            queue.r_rdy & (queue.r_data.as_value() == expanded.as_value())))
        held = ahead < queue.level
        for j, slot in enumerate(queue.behind_slots):
            held = held & ((ahead != j + 1) | (slot == value))
        self.check("router_state", ~tracking | held)

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
        if fifo.prefetch is not None:  # in block RAM: the front register and the prefetch
            same = (fifo.level == 0) | (fifo.r_data == fifo.slots[0])
            if depth > 1:
                same = same & (fifo.ahead[0] == _wrap(fifo.consume + 1, depth)) & (
                    fifo.ahead[1] == _wrap(fifo.consume + 2, depth)) & (
                    (fifo.level < 2) | (fifo.prefetch == fifo.slots[1]))
            self.check("router_state", same)
        return leaving, value

    def _credits_back(self) -> None:
        """Link inputs: upstream credits, buffer level and credits on their way back add up to
        the buffer depth; the upstream router's place in its packet is the writer's; a flit
        written came from the link (unchanged) or the PE."""
        config = self.config
        for p in config.link_ports:
            up, unit, link = self.upstream[p], self.seen.inputs[p], self.router.port_in(p)
            depth = config.ports[p].buffer_depth
            base = sum(config.vc_counts[:p])
            for v in range(config.ports[p].vc_count):
                fifo = unit.buffers[v]
                writer = self.writer[base + v]
                self.check("credit_accounting",
                           up.credits[v] + fifo.level + self.credits_due(p, v) == depth)
                self.check("router_state", up.position[v] == writer.count)
                sent = link.flit.valid & (link.flit.payload.vc == v)
                self.check("flits_conserved", sent == fifo.w_en)
                written, arrived = self.flit_view(fifo.w_data), link.flit.payload
                self.check("flits_conserved", ~sent | (
                    (written.data == self.carried(unit, arrived.data, arrived.first))
                    & (written.first == arrived.first)
                    & (written.last == arrived.last) & (written.abort == arrived.abort)))
            self._credits_owed(p, base)
        for p in config.pe_ports:
            stream = self.router.port_in(p)
            state = self.seen.inputs[p].framing_state
            written = Cat(fifo.w_en & fifo.w_rdy for fifo in self.seen.inputs[p].buffers)
            self.check("flits_conserved", ~written.any() | (stream.valid & stream.ready)
                       | state.pending)

    def credits_due(self, p: int, v: int):
        """Credits of input VC ``v`` of link port ``p`` not yet back upstream: those waiting
        in its counter (the split router's credit leaves in the cycle of its read)."""
        return self.seen.inputs[p].credit_waits[v]

    def _credits_owed(self, p: int, base: int) -> None:
        """Link input ``p`` (its input VCs from ``base``), where credits may wait (switch
        inputs per VC): one credit leaves every cycle while any is owed, for a VC owed one."""
        waits = self.seen.inputs[p].credit_waits
        if not waits:
            return
        owed = Cat((wait != 0) | self.flat[base + v].control.read
                   for v, wait in enumerate(waits))
        credit = self.router.port_in(p).credit
        self.check("credits_returned", credit.valid == owed.any())
        self.check("credits_returned", ~credit.valid
                   | (credit.payload == lowest_index(owed, len(credit.payload))))
        self.check("router_state", waits[0] == 0)

    def carried(self, unit, value, first):
        """Flit data ``value`` as input ``unit`` writes it: with broadcast, a broadcast's head
        (``first``) carries its route compute's rewritten route fields (``header_out``, e.g.
        the TTL less one) on; anything else unchanged."""
        if not self.fanout:
            return value
        rc = unit.route_compute
        carried = Signal(len(value), name=f"carried_{unit.port_index}")
        self.m.d.comb += carried.eq(value)
        with self.m.If(first & rc.broadcast):
            self.m.d.comb += data.View(self.router.stage.head_layout, carried).route.eq(
                rc.header_out)
        return carried

    def legal(self, route):
        """``route`` is one the input unit stores: a packet that is not dropped has an output
        of the router, VCs of that output (escape VCs under adaptive routing) and a bubble
        only toward a bubble port, or, a broadcast, some outputs for its copies, entering a
        ring only at bubble ports; the per-output masks say the same."""
        config, stage = self.config, self.router.stage
        ports = config.port_count
        vcs = [(1 << count) - 1 for count in config.output_vc_counts]
        bubbles = sum(1 << o for o, port in enumerate(config.ports) if port.bubble)
        fits = Const(0, 1)
        for o in range(ports):
            fits = fits | ((route.port == o) & (route.mask != 0) & ((route.mask & ~vcs[o]) == 0)
                           & (~route.bubble | bool(bubbles >> o & 1)))
        if self.router.adaptive_vcs:
            # Adaptive routing: the escape move names escape VCs only.
            fits = fits & ((route.mask & self.router.adaptive_vcs) == 0)
        if self.fanout:
            fits = Mux(route.multi, (route.targets != 0) & ((route.enter & ~bubbles) == 0), fits)
        legal = route.drop | fits
        if stage.per_output_route:
            for o in range(ports):
                here = (route.port == o) & ~route.drop
                legal = legal & (route.need_one[o] == Mux(here & ~route.bubble, route.mask, 0))
                legal = legal & (route.need_two[o] == Mux(here & route.bubble, route.mask, 0))
        return legal

    def computed(self, unit, route):
        """``route`` (written with a head flit) is what ``unit``'s route compute gave for it:
        dropped exactly when the header is malformed, the head asks for a VC its port does
        not have (:meth:`_bad_vc`) or the result names no VC of an output (a bubble toward a
        port without one, an output out of range; a broadcast: no copy, or a copy entering a
        ring at a port without a bubble); a packet that is not dropped keeps the output, the
        bubble flag, the grades and the route compute's VCs of that output, or, a broadcast,
        its copies' outputs and the rings they enter."""
        config, rc = self.config, unit.route_compute
        bubbles = sum(1 << o for o, port in enumerate(config.ports) if port.bubble)
        port_vcs, fits = Const(0, config.max_vc_count), Const(0, 1)
        for o, count in enumerate(config.output_vc_counts):
            vcs = rc.vc_mask & ((1 << count) - 1)
            port_vcs = port_vcs | Mux(rc.out_port == o, vcs, 0)
            fits = fits | ((rc.out_port == o) & (vcs != 0) & (~rc.bubble | bool(bubbles >> o & 1)))
        unfit = ~fits
        same = ((route.port == rc.out_port) & (route.mask == port_vcs)
                & (route.bubble == rc.bubble))
        if self.router.adaptive_vcs:
            same = same & (route.grade_1 == rc.grade_1) & (route.grade_2 == rc.grade_2)
        if self.fanout:
            copies = (route.targets == rc.targets) & (route.enter == rc.enter)
            same = (route.multi == rc.broadcast) & Mux(rc.broadcast, copies, same)
            unfit = Mux(rc.broadcast, (rc.targets == 0) | ((rc.enter & ~bubbles) != 0), unfit)
        return (route.drop == (rc.malformed | self._bad_vc(unit) | unfit)) & (route.drop | same)

    def _bad_vc(self, unit):
        """The head ``unit`` writes now asks for a VC its port does not have: a PE port's head
        (the one in the framing register, or the PE's) asks for a VC above its VCs, which
        only a count of VCs other than a power of two leaves room for."""
        count = self.config.ports[unit.port_index].vc_count
        if not self.config.ports[unit.port_index].is_pe or not count & (count - 1):
            return Const(0, 1)
        state, payload = unit.framing_state, self.router.port_in(unit.port_index).payload
        return Mux(state.pending, state.held_vc, payload.vc) >= count

    def owner_sum(self, o: int, values: list, width: int):
        """Of ``values`` (one per input VC), output ``o``'s owner's (zero when none)."""
        return chosen(self.comp.owner[o], values, width)

    def outputs(self) -> None:
        """Credit counters against the downstream buffers; whole packets per output."""
        config, length = self.config, self.length
        self.runs = []
        for o, p in enumerate(self.output_ports):
            port, unit = config.ports[p], self.seen.outputs[o]
            run, done = self._packets(o)
            self.runs.append((run, done))
            holding = self.comp.holding[o]
            for w in range(port.output_vc_count):
                self.credits_out(o, w, run)
                # Virtual cut-through: the packet that holds the output has room downstream
                # for the rest of its longest length.
                self.check("router_state", ~(self.comp.held[o] & holding[w])
                           | (unit.spare[w] + run >= length))

    def credits_out(self, o: int, w: int, run) -> None:
        """Output VC ``w`` of output ``o``: its credit counter against the buffer downstream,
        and the room it offers (``run``: as :meth:`_room` takes it)."""
        p = self.output_ports[o]
        port, unit = self.config.ports[p], self.seen.outputs[o]
        depth, spare = unit.depth, unit.spare[w]
        self.check("credit_counter_range", (spare >= 0) & (spare <= depth))
        if port.is_pe:
            eject = unit.eject
            occupancy, on_link = eject.level, 0
            self.check("downstream_never_overflows", ~(eject.w_en & ~eject.w_rdy))
        else:
            link = self.router.port_out(p).flit
            occupancy = self.downstream[o].occupancy[w]
            on_link = link.valid & (link.payload.vc == w)
            self.check("downstream_never_overflows", occupancy <= depth)
        self.check("credit_accounting", spare + occupancy + on_link == depth)
        self._room(o, w, on_link, run)

    def _room(self, o: int, w: int, on_link, run) -> None:
        """Output VC ``w`` of port ``o`` is offered exactly when it has room (``on_link``: a
        flit of the VC is on the link; ``run``: the flits sent since the output's last
        allocation); on a bubble port, the packets it counts downstream are the downstream
        buffer's, and the queue of their marks holds the marks of the flits downstream,
        oldest first, then the link's."""
        unit, length = self.seen.outputs[o], self.length
        depth, spare = unit.depth, unit.spare[w]
        fits = [spare >= need * length for need in (1, 2)]
        if unit.slotted:
            down = self.downstream[o]
            occupancy, link = down.occupancy[w], self.router.port_out(o).flit.payload
            marks, (packets, drained) = unit.packets_out[w]
            self.check("router_state", (marks.level == occupancy + on_link)
                       & (marks.consume < depth)
                       & (marks.produce == _wrap(marks.consume + marks.level, depth)))
            for j, slot in enumerate(marks.slots):
                self.check("router_state", ~(j < occupancy) | (slot == down.last_marks[w][j]))
                self.check("router_state", ~(on_link & (occupancy == j)) | (slot == link.last))
            held = down.packets[w] + (on_link & link.first)
            self.check("router_state", (packets == held) & (drained == down.drained[w]))
            # The packets counted are those whose tails are downstream or on the link, and
            # the one holding the output on this VC once its head has left; the credits back
            # of the oldest and its flits still out are at most L, fewer while its tail has
            # not left.
            down_marks, back = down.last_marks[w], down.drained[w]
            tails = sum(((j < occupancy) & down_marks[j] for j in range(depth + 1)),
                        start=on_link & link.last)
            started = self.under_way(o, w, run)
            self.check("router_state", (back < length) & (held == tails + started)
                       & ((held != 0) | ((occupancy == 0) & ~on_link & (back == 0))))
            # The newest flit out is a tail exactly when no packet on this VC is under way.
            newest = Mux(on_link, link.last, Cat((occupancy == j + 1) & down_marks[j]
                                                 for j in range(depth + 1)).any())
            self.check("router_state", ~(on_link | (occupancy != 0)) | (newest == ~started))
            # The flits out chain into packets of at most L (the oldest's credits back
            # included), the link's flit after those downstream.
            place = back  # flits of the packet before slot j
            for j in range(depth + 1):
                here = (j < occupancy) | (on_link & (occupancy == j))
                last = Mux(j < occupancy, down_marks[j], link.last)
                self.check("router_state", ~here | (place + 1 <= length)
                           & (last | (place + 1 < length)))
                place = Mux(here, Mux(last, 0, place + 1), place)
            # ... the last of them the packet under way, with the flits it has sent.
            self.check("router_state", place == Mux(started, run, 0))
            counted = held * length - down.drained[w]
            fits = [fit & (counted <= depth - need * length)
                    for need, fit in zip((1, 2), fits)]
        free = ~unit.busy[w]
        self.check("room_offered", unit.free_one[w] == (free & fits[0]))
        if self.config.ports[self.output_ports[o]].bubble:
            self.check("room_offered", unit.free_two[w] == (free & fits[1]))

    def under_way(self, o: int, w: int, run):
        """A packet is under way on VC ``w`` of output ``o`` (its head has left, its tail not
        yet), ``run`` the flits the output sent since its last allocation."""
        return self.comp.held[o] & self.comp.holding[o][w] & (run != 0)

    def _packets(self, o: int):
        """Output ``o`` carries one packet of its owner per allocation, on the VC allocated:
        its head first, at most L flits, its tail last. Returns the flits sent on it since its
        last allocation and "its packet's tail has left"."""
        m, length, comp = self.m, self.length, self.comp
        vmax = self.config.max_vc_count
        sent = self.seen.outputs[o].flit
        valid = sent.valid
        granted = self.taken[o]
        run = Signal(range(length + 1), name=f"run_{o}")  # flits since the allocation
        done = Signal(init=1, name=f"done_{o}")  # the packet's tail has left
        with m.If(granted):
            m.d.sync += [run.eq(0), done.eq(0)]
        with m.Elif(valid):
            m.d.sync += [run.eq(run + 1), done.eq(sent.payload.last)]
        self.check("whole_packets_per_output", ~valid | (
            ~done & (sent.payload.first == (run == 0)) & (run < length)
            & ((run < length - 1) | sent.payload.last)))
        self.check("whole_packets_per_output", ~granted | comp.avail[o])
        self.check("whole_packets_per_output",
                   ~granted | done | (valid & sent.payload.last))
        # An output no packet holds may be allocated (the campaign's survivor a33bafe96940
        # never opened an idle output: every safety property held).
        self.check("fair_allocation", comp.held[o] | comp.avail[o])
        owner, holding = comp.owner[o], comp.holding[o]
        read_count = self.owner_sum(o, [reader.count for reader in self.reader],
                                    len(self.reader[0].count))
        read_open = self.owner_sum(o, [reader.open for reader in self.reader], 1)
        active = Cat(owner[i] & vc.state.active for i, vc in enumerate(self.flat))
        p = self.output_ports[o]
        vcs = (1 << self.config.output_vc_counts[p]) - 1
        self.check("router_state", Mux(comp.held[o], ~done & (run == read_count)
                                       & (read_open == (run != 0)), done))
        self.check("router_state", ~comp.held[o] | (
            (owner != 0) & ((owner & (owner - 1)) == 0) & active.any() & (holding != 0)
            & ((holding & (holding - 1)) == 0) & ((holding & ~vcs) == 0)))
        self.check("router_state", comp.held[o] | (holding == 0))
        if comp.reopens_ahead:
            # The output reopens as its owner's last flit (not its head) leaves, unless the
            # VC it holds has room for exactly one or two longest packets.
            spare = self.seen.outputs[o].spare
            tight = Cat(holding[w] & ((spare[w] == length) | (spare[w] == 2 * length))
                        for w in range(len(spare))).any()
            ending = Cat(owner[i] & vc.state.ending for i, vc in enumerate(self.flat)).any()
            self.check("router_state", comp.reopen[o] == (comp.held[o] & ending & ~tight))
        reading = Cat(owner[i] & vc.control.read for i, vc in enumerate(self.flat))
        self.check("flits_conserved", valid == (comp.held[o] & reading.any()))
        if not self.config.ports[p].is_pe:
            tag = Signal(range(max(2, vmax)), name=f"tag_{o}")
            m.d.sync += tag.eq(sum(Mux(holding[w], w, 0) for w in range(vmax)))
            link = self.router.port_out(p).flit
            self.check("whole_packets_per_output", ~link.valid | (link.payload.vc == tag))
        return run, done

    def allocation(self) -> None:
        """Grants: to an output and VC the route allows, with room downstream once the flit
        leaving on that VC now is counted."""
        comp, length = self.comp, self.length
        adaptive = self.router.adaptive_vcs
        for o, p in enumerate(self.output_ports):
            port, unit = self.config.ports[p], self.seen.outputs[o]
            spare = unit.spare
            for i, vc in enumerate(self.flat):
                granted, route, offer = self.grants[o][i], vc.port.route, self.offer(vc)
                escape = (route.port == p) & (offer & route.mask).any()
                allowed = escape
                if adaptive:
                    grades = route.grade_1 | route.grade_2
                    allowed = allowed | (grades[p] & (offer & adaptive).any())
                if self.fanout:
                    allowed = allowed & ~route.multi
                self.check("route_honoured", ~granted | (~route.drop & allowed))
                need = Mux(route.bubble & escape, 2 * length, length)
                for w in range(self.config.max_vc_count):
                    if w < port.output_vc_count:
                        room = spare[w] >= need + self.leaving(o, w)
                    else:
                        room = Const(0, 1)
                    self.check("allocation_has_room", ~(granted & offer[w]) | room)
                if self.fanout:
                    # A copy takes the output's copy VC, with room for two packets where it
                    # enters a ring.
                    w = comp.free.copy_vc[o]
                    leaving = unit.flit.valid & (unit.flit.payload.vc == w)
                    need = Mux(route.enter[p], 2 * length, length)
                    self.check("allocation_has_room", ~(vc.control.copy_grant & route.targets[p])
                               | (spare[w] >= need + leaving))
        if self.fanout:
            self._copies()
        if not adaptive:
            self._requests()
        elif self.router.stage.split and len(self.config.outputs) == self.config.port_count:
            self._adaptive_requests()

    def _free(self) -> dict:
        """(port, packets) -> per output VC of the port, that VC is free for that many whole
        packets, from the output units' flags (a PE port with several lanes offers what any
        lane offers)."""
        config, free = self.config, {}
        for p in range(config.port_count):
            units = [self.seen.outputs[o] for o in config.lanes_of(p)]
            for packets, name in ((1, "free_one"), (2, "free_two")):
                flags = [Const(0, 1)] * config.output_vc_counts[p]
                for unit in units:
                    flags = [flag | bit for flag, bit in zip(flags, getattr(unit, name))]
                free[p, packets] = flags
        return free

    def _route_fits(self, route, free):
        """One of the VCs ``route`` allows at its port (the escape move's, under adaptive
        routing) is free with the room it needs."""
        fits = Const(0, 1)
        for p in range(self.config.port_count):
            for w in range(self.config.output_vc_counts[p]):
                fits = fits | ((route.port == p) & route.mask[w] & Mux(
                    route.bubble, free[p, 2][w], free[p, 1][w]))
        return fits

    def _adaptive_requests(self) -> None:
        """Adaptive routing on the split router (002 §3.3.2, one lane per port): a unicast
        packet ready to be allocated takes the best grade among its outputs with a free
        adaptive VC (grade 1 if one has one, else grade 2) and asks for that grade's outputs
        open this cycle (every one with iSLIP, else the lowest-numbered); while all of them
        are held it waits and asks for nothing; only when no output of either grade has a
        free adaptive VC does it ask for its escape move, exactly when the escape's VC is
        free with the room it needs."""
        config, comp, free = self.config, self.comp, self._free()
        adaptive = self.router.adaptive_vcs
        ports = config.port_count
        adaptive_free = Cat(Cat(flag for w, flag in enumerate(free[p, 1])
                                if adaptive >> w & 1).any() for p in range(ports))
        open_ = Cat(comp.avail[self.output_ports.index(p)] for p in range(ports))
        for vc in self.flat:
            request, route = vc.request, vc.port.route
            ready = self.ready(vc) & ~route.drop
            if self.fanout:
                ready = ready & ~route.multi
            first = route.grade_1 & adaptive_free
            grade = Mux(first.any(), first, route.grade_2 & adaptive_free)
            best = grade & open_
            if not self.router.stage.multiple_requests:
                best = onehot.lowest(best, ports)
            escape = ~grade.any() & self._route_fits(route, free)
            self.check("requests_made", request.to == Mux(
                ready & best.any(), best, Mux(ready & escape, Const(1, ports) << route.port, 0)))

    def _requests(self) -> None:
        """Deterministic routing: each input VC's request against the output units' free
        flags (a PE port with several lanes offers what any lane offers)."""
        free = self._free()
        for vc in self.flat:
            request, route = vc.request, vc.port.route
            ready = self.ready(vc) & ~route.drop
            fits = self._route_fits(route, free)
            if self.fanout:
                copy_free = Const(1, 1)
                for p, w in enumerate(self.comp.free.copy_vc):
                    copy_free = copy_free & (~route.targets[p] | Mux(
                        route.enter[p], free[p, 2][w], free[p, 1][w]))
                self.check("requests_made",
                           request.copy == (ready & route.multi & copy_free))
                ready = ready & ~route.multi
            self.check("requests_made", request.to == Mux(ready & fits,
                                                          Const(1, len(request.to))
                                                          << route.port, 0))

    def _copies(self) -> None:
        """A broadcast is allocated every output its route names for a copy at once, open
        ones only, and then holds exactly those, each on its copy VC."""
        m, comp = self.m, self.comp
        outputs = len(self.output_ports)
        for i, vc in enumerate(self.flat):
            copy, route = vc.control.copy_grant, vc.port.route
            self.check("broadcast_copied", ~copy | (route.multi & ~route.drop & vc.control.ready
                                                   & ~(route.targets & ~comp.avail).any()
                                                   & ~Cat(comp.grants[o][i]
                                                          for o in range(outputs)).any()))
            copied = Signal(name=f"copied_{i}")
            targets = Signal(outputs, name=f"copy_targets_{i}")
            m.d.sync += [copied.eq(copy), targets.eq(route.targets)]
            owned = Cat(self.owns[i])
            copies = Cat(own & copying for own, copying in zip(self.owns[i], comp.copying))
            self.check("broadcast_copied", ~copied | ((owned == targets) & (copies == owned)))

    def drops(self) -> None:
        """A malformed packet streams to no output; drop_count counts it once."""
        for i, vc in enumerate(self.flat):
            control = vc.control
            self.check("malformed_drained_and_counted_once",
                       ~control.drop_go | (vc.port.route.drop & control.ready))
            self.check("malformed_drained_and_counted_once", self.draining[i] == (
                vc.state.active & ~Cat(self.owns[i]).any()))
        self._drop_count(sum(vc.control.drop_go for vc in self.flat))

    def _drop_count(self, drops) -> None:
        """drop_count adds ``drops`` (malformed packets whose dropping starts now) in the next
        cycle, saturating, from zero at reset."""
        m, config = self.m, self.config
        before = Signal.like(self.router.drop_count, name="drop_count_before")
        counted = Signal(range(len(self.flat) + 1), name="drops_before")
        m.d.sync += [before.eq(self.router.drop_count), counted.eq(drops)]
        limit = (1 << config.drop_count_width) - 1
        expected = Mux(before + counted > limit, limit, before + counted)
        self.check("malformed_drained_and_counted_once",
                   ~self.started | (self.router.drop_count == expected))
        self.check("malformed_drained_and_counted_once",
                   self.started | (self.router.drop_count == 0))

    def fairness(self) -> None:
        """Per output and input VC, the grants of the output to others while the VC keeps
        asking for it, bounded through the arbiters' priorities (see :mod:`.allocator`)."""
        if self.comp.stage.islip:
            comp = self.comp
            # Each input VC asks for one output unless adaptive packets or ejection lanes
            # ask for several.
            self.islip_fairness(comp.allocator, comp.grants, comp.allocator.one_request)
            return
        m, comp, ports = self.m, self.comp, self.config.port_count
        allocator = comp.allocator
        for o in range(len(self.output_ports)):
            port_first = self.turn(allocator.port_arbiters[o], f"first_port_{o}")
            vc_firsts = [self.turn(arbiter, f"first_vc_{o}_{p}")
                         for p, arbiter in enumerate(allocator.vc_arbiters[o])]
            grants = comp.grants[o]
            # Work-conserving: an open output some input VC asks for is granted, so the bound
            # below in grants to others is one in cycles in which the output is open.
            asked = Cat(request[o] for request in allocator.requests).any()
            self.check("fair_allocation", ~(allocator.open[o] & asked) | grants.any())
            for i in range(len(self.flat)):
                p, v = self.place[i]
                count = self.config.vc_counts[p]
                vc_first = vc_firsts[p]
                bound = ports * count - 1
                asks, granted = allocator.requests[i][o], grants[i]
                wait = Signal(range(bound + 2), name=f"wait_{o}_{i}")
                m.d.sync += wait.eq(Mux(asks & ~granted, wait + (grants.any() & ~granted), 0))
                self.check("fair_allocation", wait <= bound)
                position = (turns_before(port_first, p, ports)
                            + ports * turns_before(vc_first, v, count))
                # The strong form: fewer grants to others remain than requesters ahead.
                self.check("fair_allocation", wait + position <= bound)

    def turn(self, arbiter, name: str):
        """The requester round-robin ``arbiter`` (an :class:`~.stages.ObservedArbiter`) serves
        first; its priority state is one it can reach (``router_state``) and, in the cycle
        after a reset, the lowest requester's turn (``fair_allocation``)."""
        first, ok = first_in_turn(self.m, arbiter, name)
        self.check("router_state", ok)
        if arbiter.priority is not None:
            self.check("fair_allocation", self.started | (arbiter.priority == 0))
        return first

    def islip_fairness(self, allocator, matches, single: bool, prefix: str = "") -> None:
        """iSLIP's form of :meth:`fairness` on ``allocator`` (an
        :class:`~.stages.ObservedIslipAllocator`; ``matches[o]``: the inputs matched to
        output o), on its pointers. Always: its first round's matches stand among
        ``matches`` (later rounds only add matches), its pointers move as that round says
        (:meth:`_islip_pointer`, :meth:`_islip_accept_pointers`), and an input that asks for
        an open output alone, and that no input asking for it precedes from the output's
        pointer, is matched to it (it is offered the output in the first round and nothing
        else). Where ``single`` (each input asks for one output: in the split router, no
        adaptive packet asks for several, nor a packet for a PE port with several ejection
        lanes), an open output some input asks for is matched, and an input that keeps asking
        sees fewer matches of its output to others than the inputs ahead of it from the
        pointer; with several requests per input that bound holds for one round, where every
        match moves the pointer, and is not claimed for more. ``prefix``: of the names of the
        proof's signals."""
        m = self.m
        inputs = allocator.input_count
        bounded = single or allocator.iterations == 1
        self._islip_accept_pointers(allocator, prefix)
        for o in range(allocator.output_count):
            first, ok = first_of_mask(m, allocator.grant_pointers[o], inputs,
                                      f"{prefix}first_{o}")
            self.check("router_state", ok)
            grants = matches[o]
            asks = [request[o] for request in allocator.requests]
            turns = [turns_before(first, i, inputs) for i in range(inputs)]
            # One part per output: with one induction step per property, each output's
            # allocation is a job (the 002 king torus router's 10 outputs of 34 inputs).
            part = f"{prefix}output_{o}"
            first_match = allocator.first_match[o]
            self._islip_pointer(allocator.grant_pointers[o], first_match, inputs,
                                f"{prefix}grant_pointer_{o}", part)
            self.check("fair_allocation", (first_match & ~grants) == 0, part)
            if single:
                self.check("fair_allocation",
                           ~(allocator.open[o] & Cat(asks).any()) | grants.any(), part)
            bound = inputs - 1
            for i in range(inputs):
                alone = asks[i] & (allocator.requests[i] == (1 << o))
                ahead = Cat(asks[j] & (turns[j] < turns[i]) for j in range(inputs) if j != i)
                self.check("fair_allocation",
                           ~(allocator.open[o] & alone & ~ahead.any()) | grants[i], part)
                if not bounded:
                    continue
                wait = Signal(range(bound + 2), name=f"{prefix}wait_{o}_{i}")
                m.d.sync += wait.eq(Mux(asks[i] & ~grants[i],
                                        wait + (grants.any() & ~grants[i]), 0))
                self.check("fair_allocation", wait <= bound, part)
                self.check("fair_allocation", wait + turns[i] <= bound, part)

    def _islip_accept_pointers(self, allocator, prefix: str) -> None:
        """Each of ``allocator``'s accept pointers is a mask its input can hold, and moves
        only as :meth:`_islip_pointer` says, with the output its input accepted in the first
        round."""
        outputs = allocator.output_count
        for i, pointer in enumerate(allocator.accept_pointers):
            _, ok = first_of_mask(self.m, pointer, outputs, f"{prefix}accept_first_{i}")
            self.check("router_state", ok)
            self._islip_pointer(pointer, allocator.first_accepted[i], outputs,
                                f"{prefix}accept_pointer_{i}", None)

    def _islip_pointer(self, pointer, chosen, count: int, name: str, part) -> None:
        """An iSLIP pointer over ``count`` requesters moves only with a first-round match
        (``chosen``, one-hot, or zero), to the requesters after the one matched: a ghost
        register follows that rule from reset, and the pointer must equal it."""
        if count == 1:
            return
        ghost = Signal(count, name=name)
        self.m.d.sync += ghost.eq(Mux(chosen.any(), onehot.after(chosen, count), ghost))
        self.check("fair_allocation", pointer == ghost, part)

    def merged(self) -> None:
        """Each PE port with several ejection lanes: its merger's stream to the PE."""
        for p, merger in self.seen.mergers.items():
            self._merged(p, self.config.lanes_of(p), merger)

    def _merged(self, p: int, lanes, merger) -> None:
        """PE port ``p``'s ``merger`` against ghosts of each lane's reading (its packet under
        way) and of the PE's stream, and of the order in which the lanes' heads reached
        their fronts; each lane's ejection buffer holds the packets its output was sent."""
        m, length = self.m, self.length
        out, count = self.router.port_out(p), len(lanes)
        streams = [self.seen.outputs[o].port for o in lanes]
        moves = Cat(stream.valid & stream.ready for stream in streams)
        valids = Cat(stream.valid for stream in streams)
        taken = out.valid & out.ready
        readers = []
        for k, (o, stream) in enumerate(zip(lanes, streams)):
            reader = Ghost(m, length, f"lane_read_{o}")
            reader.step(moves[k], stream.payload.first, stream.payload.last)
            readers.append(reader)
            run, done = self.runs[o]
            written = ~done & (run != 0)
            self._held_packets(self.seen.outputs[o].eject, stream.payload.shape(), reader,
                               written, Mux(written, run, 0))
        under_way = Cat(reader.open for reader in readers)
        pe = Ghost(m, length, f"pe_out_{p}")
        pe.step(taken, out.payload.first, out.payload.last)
        place = pe.position(out.payload.first)
        self.check("lanes_merged_whole", ~taken | (
            (out.payload.first == ~pe.open) & (place <= length)
            & ((place < length) | out.payload.last)))
        self.check("lanes_merged_whole", ((moves & (moves - 1)) == 0) & (taken == moves.any()))
        for k, stream in enumerate(streams):
            others = Cat(under_way[j] for j in range(count) if j != k).any()
            self.check("lanes_merged_whole", ~moves[k] | (
                (out.payload.as_value() == stream.payload.as_value()) & ~others))
        self.check("lanes_merged_whole", out.valid == Mux(under_way.any(),
                                                          (under_way & valids).any(),
                                                          valids.any()))
        # The order the heads reached the lanes' fronts: ``seen`` (bit k: lane k's head has
        # been at its front since an earlier cycle) and ``earlier[i, j]`` (i < j: lane i's
        # head got there first; meaningful while both are seen).
        fronts = Cat(stream.valid & stream.payload.first for stream in streams)
        seen = Signal(count, name=f"lane_heads_seen_{p}")
        m.d.sync += seen.eq(fronts & ~moves)
        arriving = fronts & ~seen
        earlier = {}
        for i in range(count):
            for j in range(i + 1, count):
                bit = earlier[i, j] = Signal(name=f"lane_earlier_{p}_{i}_{j}")
                with m.If(arriving[i] & arriving[j]):
                    m.d.sync += bit.eq(1)
                with m.Elif(arriving[j]):
                    m.d.sync += bit.eq(seen[i])
                with m.Elif(arriving[i]):
                    m.d.sync += bit.eq(~seen[j])

        def ahead(j: int, k: int):
            """Lane j's head reached its front before lane k's (both there now)."""
            order = earlier[j, k] if j < k else ~earlier[k, j]
            return ((seen[j] & ~seen[k]) | (seen[j] & seen[k] & order)
                    | (~seen[j] & ~seen[k] & (j < k)))

        for k in range(count):
            first = Cat(fronts[j] & ahead(j, k) for j in range(count) if j != k)
            self.check("lanes_merged_in_order", ~(moves[k] & ~readers[k].open) | ~first.any())
        # The merger's registers are the ghosts'.
        self.check("router_state", ((under_way & (under_way - 1)) == 0)
                   & (merger.streaming == under_way) & (pe.open == under_way.any())
                   & (pe.count == sum(Mux(reader.open, reader.count, 0) for reader in readers)))
        self.check("router_state", ((seen & ~fronts) == 0) & (merger.waiting == seen))
        for (i, j), bit in earlier.items():
            self.check("router_state", ~(seen[i] & seen[j]) | (merger.before[i, j] == bit))
        # The heads seen are in one order: "got there first" is transitive.
        for a, b, c in itertools.permutations(range(count), 3):
            self.check("router_state", ~(seen[a] & seen[b] & seen[c] & ahead(a, b) & ahead(b, c))
                       | ahead(a, c))


def _wrap(index, depth: int):
    """``index mod depth`` for ``index`` in ``[0, 2 * depth)``."""
    return Mux(index >= depth, index - depth, index)
