"""The input unit: one input port's framing, route compute, VC buffers and credits."""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .. import flit, onehot
from ..flit_buffer import FlitBuffer
from .route_queue import RouteQueue
from .stage_config import StageConfig


class InputVCSignature(wiring.Signature):
    """One input VC as its input unit offers it to the allocators (seen from the unit).

    Members:
        flit: Out(flit layout) — the front flit of the VC's buffer.
        valid: Out(1) — there is a front flit (a register).
        valid_next: Out(1) — there will be one in the next cycle.
        route: Out(route layout) — the route of the VC's next packet to allocate.
        head: Out(1) — ``route`` is there (the compact router: the front flit is that
            packet's head whenever its VC is idle).
        read: In(1) — the front flit leaves this cycle (only when ``valid``).
        tail: Out(1) — the split router only: the front flit is a packet's last (a
            register).
        tail_next: Out(1) — the split router only: what ``tail`` will be in the next cycle.
        pop: In(1) — the split router only: ``route`` is used up (only when ``head``).
    """

    def __init__(self, stage: StageConfig):
        members = {"flit": Out(stage.flit_layout), "valid": Out(1), "valid_next": Out(1),
                   "route": Out(stage.route_layout), "head": Out(1), "read": In(1)}
        if stage.split:
            members.update(tail=Out(1), tail_next=Out(1), pop=In(1))
        super().__init__(members)


class InputUnit(wiring.Component):
    """Input port ``port_index`` of a router: the link or PE stream in, the route compute on
    every head flit, one buffer per VC, and credits back upstream.

    A packet has 1 to L flits, framed by its first and last marks (L:
    ``RouterConfig.max_packet_length``). A link carries whole packets (its sender is a
    router). A PE port checks the PE's framing and drops what breaks it, counting each error on
    ``framing`` (:data:`twinnet.hdl.config.FRAMING_ERRORS`), so that nothing after it is
    disturbed and every buffered packet is whole and at most L flits long:

    - a body or tail flit with no packet open (``stray``) is dropped;
    - a head while a packet is open (``cut``): the open packet is closed by a tail flit of
      the router's own with ``abort`` set (its data 0), written in the cycle the head is
      taken; the head waits in a one-flit register and is written from there in a following
      cycle, while ``ready`` is low;
    - a packet still open after L flits (``long``): its L-th flit is written as its tail with
      ``abort`` set, and the rest of it is dropped, up to and with the PE's tail (or up to
      the next head, which starts a packet).

    The router cannot call back the flits of a cut packet that already left, so the packet is
    closed instead and its receiver discards it (:mod:`twinnet.hdl.flit`). ``ready`` depends on
    registers only (and, on a PE port with several VCs, on the VC a head asks for): not on
    ``valid`` or the marks.

    A head flit's route is computed as it enters its buffer. The compact router stores the
    route beside every flit; the split router once per packet, in a :class:`RouteQueue` per VC
    whose front is a register, so that allocation starts from registers.

    Parameters:
        stage: the router's :class:`StageConfig`.
        port_index: the port.
        route_compute: this port's :class:`twinnet.hdl.route_compute.RouteCompute`.

    Ports:
        port: In(LinkSignature) on a link port (flits in, credits out), In(pe_in_signature)
            on a PE port (the injection stream).
        node_static: In(route compute's static layout) — absent when the layout is empty.
        vcs: Out(:class:`InputVCSignature`).array(VC count).
        framing: Out(:data:`twinnet.hdl.flit.framing_layout`) — a PE port only: its framing
            counters since reset, each saturating.

    Credits: one per flit read. When one VC of the port is read per cycle (the compact
    router) the credit leaves in the next cycle; when several are (a crossbar input per VC),
    credits wait in a counter per VC and the lowest VC with one goes first, since a link
    returns one credit per cycle. The split router's reads depend on registers only, so its
    credit leaves in the cycle of the read (combinationally, to the upstream router's credit
    counter).

    The buffers are of classes :attr:`flit_buffer` and :attr:`route_queue` (a subclass may
    replace them).
    """

    flit_buffer = FlitBuffer
    route_queue = RouteQueue

    def __init__(self, stage: StageConfig, port_index: int, route_compute):
        self.stage, self.port_index, self.route_compute = stage, port_index, route_compute
        config = stage.config
        port = config.ports[port_index]
        if port.is_pe:
            members = {"port": In(flit.pe_in_signature(config.flit_width, port.vc_count))}
        else:
            members = {"port": In(flit.LinkSignature(config.flit_width, port.vc_count))}
        if route_compute.static_layout.size:
            members["node_static"] = In(route_compute.static_layout)
        members["vcs"] = Out(InputVCSignature(stage)).array(port.vc_count)
        if port.is_pe:
            members["framing"] = Out(flit.framing_layout)
        super().__init__(members)

    @property
    def _port(self):
        return self.stage.config.ports[self.port_index]

    def elaborate(self, platform):
        m = Module()
        stage = self.stage
        m.submodules.route = rc = self.route_compute
        fifos, route_queues = self._make_buffers(m)
        written = Signal(stage.flit_layout)
        valid, vc = Signal(), Signal(range(self._port.vc_count))
        if self._port.is_pe:
            bad_vc = self._frame(m, written, valid, vc, fifos, route_queues)
        else:
            bad_vc = self._receive(m, written, valid, vc)
        route = self._route(m, written, valid, vc, bad_vc)
        stored = Signal(stage.flit_layout)
        m.d.comb += stored.eq(written)
        if stage.broadcast_vc is not None:
            # A broadcast's head carries the route compute's rewritten fields on.
            head = data.View(stage.head_layout, stored.data)
            with m.If(written.first & rc.broadcast):
                m.d.comb += head.route.eq(rc.header_out)
        for v, vc_port in enumerate(self.vcs):
            write = valid & (vc == v)
            if route_queues:
                self._per_packet_route(m, vc_port, fifos[v], route_queues[v], write, stored,
                                       route)
            else:
                self._per_flit_route(m, vc_port, fifos[v], write, stored, route)
            self._front(m, vc_port, fifos[v])
        if not self._port.is_pe:
            self._return_credits(m)
        return m

    def _make_buffers(self, m):
        """One flit buffer per VC and, in the split router, one route queue per VC (a VC
        holds at most depth - L + 1 packets: see :class:`RouteQueue`)."""
        stage, port = self.stage, self._port
        per_packet = stage.split
        width = (stage.flit_layout if per_packet else stage.entry_layout).size
        # The split router reads "the front flit is a tail" from a register of the buffer.
        last = stage.flit_layout["last"].offset if per_packet else None
        memory = stage.config.buffer_memory
        fifos = [self.flit_buffer(width, port.buffer_depth, last, memory) for _ in self.vcs]
        queue_depth = port.buffer_depth - stage.config.max_packet_length + 1
        route_queues = ([self.route_queue(stage, queue_depth) for _ in self.vcs]
                        if per_packet else [])
        for v, fifo in enumerate(fifos):
            m.submodules[f"fifo_{v}"] = fifo
        for v, queue in enumerate(route_queues):
            m.submodules[f"routes_{v}"] = queue
        return fifos, route_queues

    def _receive(self, m, written, valid, vc):
        """A link port: the flit written this cycle (``written``, ``valid``, on VC ``vc``).
        Returns "a head asks for a VC the port does not have" (never, from a router)."""
        link = self.port.flit
        m.d.comb += [valid.eq(link.valid), vc.eq(link.payload.vc),
                     written.data.eq(link.payload.data), written.first.eq(link.payload.first),
                     written.last.eq(link.payload.last), written.abort.eq(link.payload.abort)]
        return Const(0, 1)

    def _frame(self, m, written, valid, vc, fifos, route_queues):
        """A PE port: the PE's flits framed (see the class docstring) into the flit written
        this cycle (``written``, ``valid``, on VC ``vc``). Returns "the head written now asks
        for a VC the port does not have" (its packet is then dropped as malformed)."""
        port, length = self._port, self.stage.config.max_packet_length
        vc_count = port.vc_count
        stream_in = self.port
        payload = stream_in.payload
        state = self._framing_state()
        # A flit can be written on VC v: a body or tail, and a head (the split router also
        # needs room in the VC's route queue for it).
        room_body = [fifo.w_rdy for fifo in fifos]
        room_head = ([fifo.w_rdy & queue.w_rdy for fifo, queue in zip(fifos, route_queues)]
                     if route_queues else room_body)
        # The head in question: the one waiting in the register, or the PE's.
        asked = Mux(state.pending, state.held_vc, payload.vc)
        bad_vc = Const(0, 1)
        if vc_count & (vc_count - 1):
            bad_vc = asked >= vc_count
            asked = Mux(bad_vc, vc_count - 1, asked)
        # Not while the register holds a head; else room for the open packet's next flit (or
        # for the tail that closes it), or for a head.
        m.d.comb += stream_in.ready.eq(~state.pending & Mux(
            state.open, _pick(room_body, state.packet_vc), _pick(room_head, asked)))
        taken = stream_in.valid & stream_in.ready
        counts = self.framing
        errors = {error: Signal(name=f"{error}_now") for error in ("stray", "cut", "long")}
        full = self._packet_full(state)
        with m.If(state.pending):
            # The head that cut the last packet goes in now (a head: its route is computed).
            m.d.comb += [vc.eq(asked), valid.eq(_pick(room_head, asked)),
                         written.data.eq(state.held_data), written.first.eq(1),
                         written.last.eq(state.held_last)]
            with m.If(valid):
                m.d.sync += [state.pending.eq(0), state.packet_vc.eq(asked),
                             state.open.eq(~state.held_last), state.count.eq(1)]
        with m.Elif(taken & state.open & payload.first):
            # A head cuts the open packet: close it with an aborting tail, keep the head.
            m.d.comb += [vc.eq(state.packet_vc), valid.eq(1), written.data.eq(0),
                         written.last.eq(1), written.abort.eq(1), errors["cut"].eq(1)]
            m.d.sync += [state.pending.eq(1), state.open.eq(0), state.held_vc.eq(payload.vc),
                         state.held_data.eq(payload.data), state.held_last.eq(payload.last)]
        with m.Elif(taken & state.open):
            # The open packet's next flit; its L-th ends it, aborted if it is not its tail.
            cut_long = full & ~payload.last
            m.d.comb += [vc.eq(state.packet_vc), valid.eq(1), written.data.eq(payload.data),
                         written.last.eq(payload.last | full), written.abort.eq(cut_long),
                         errors["long"].eq(cut_long)]
            m.d.sync += state.count.eq(state.count + 1)
            with m.If(payload.last | full):
                m.d.sync += [state.open.eq(0), state.discard.eq(cut_long)]
        with m.Elif(taken & payload.first):
            # A head (also one that ends the dropping of a packet that was too long); with
            # L = 1 every packet is its head, and a head that is not a tail is too long.
            single = Const(1, 1) if length == 1 else payload.last
            cut_long = ~payload.last if length == 1 else Const(0, 1)
            m.d.comb += [vc.eq(asked), valid.eq(1), written.data.eq(payload.data),
                         written.first.eq(1), written.last.eq(single),
                         written.abort.eq(cut_long), errors["long"].eq(cut_long)]
            m.d.sync += [state.open.eq(~single), state.discard.eq(cut_long),
                         state.packet_vc.eq(asked), state.count.eq(1)]
        with m.Elif(taken):
            # A body or tail flit outside a packet: the rest of a packet too long (ends with
            # its tail), or a stray.
            m.d.comb += errors["stray"].eq(~state.discard)
            with m.If(payload.last):
                m.d.sync += state.discard.eq(0)
        limit = (1 << len(counts.stray)) - 1
        for error, now in errors.items():
            count = getattr(counts, error)
            with m.If(now & (count != limit)):
                m.d.sync += count.eq(count + 1)
        return bad_vc

    def _packet_full(self, state):
        """The open packet's next flit is its L-th (``state``: :meth:`_framing_state`)."""
        return state.count == self.stage.config.max_packet_length - 1

    def _framing_state(self):
        """A PE port's framing registers: ``open`` (a packet is open), ``count`` (its flits
        written), ``packet_vc`` (its VC), ``discard`` (the rest of a packet cut at L flits is
        dropped), ``pending`` (a head that cut a packet waits in the register: ``held_data``,
        ``held_last``, ``held_vc``)."""
        config, port = self.stage.config, self._port
        return Signal(data.StructLayout({
            "open": 1, "count": range(config.max_packet_length + 1),
            "packet_vc": range(port.vc_count), "discard": 1, "pending": 1,
            "held_data": config.flit_width, "held_last": 1,
            "held_vc": flit.vc_shape(port.vc_count)}), name="framing_state")

    def _route(self, m, written, valid, vc, bad_vc):
        """The route compute on the written head flit, and its result as the router stores
        it (:attr:`StageConfig.stored_route_layout`): a result the router cannot honour (no VC
        of the output, a bubble toward a port without one, an output out of range) marks the
        packet for dropping."""
        stage, config = self.stage, self.stage.config
        port_count, vmax = config.port_count, config.max_vc_count
        rc = self.route_compute
        header = data.View(stage.head_layout, written.data)
        m.d.comb += [rc.valid.eq(valid & written.first), rc.header.eq(header.route),
                     rc.in_port.eq(self.port_index), rc.in_vc.eq(vc)]
        if "node_static" in self.signature.members:
            m.d.comb += rc.node_static.eq(self.node_static)
        valid_vcs = Array(Const((1 << count) - 1, vmax) for count in config.output_vc_counts)
        bubble_ok = Array(Const(int(port.bubble), 1) for port in config.ports)
        mask = rc.vc_mask & valid_vcs[rc.out_port]
        unicast_drop = (mask == 0) | (rc.bubble & ~bubble_ok[rc.out_port])
        if port_count & (port_count - 1):
            unicast_drop = unicast_drop | (rc.out_port >= port_count)
        if stage.broadcast_vc is not None:
            bubbles = Const(sum(1 << o for o, port in enumerate(config.ports) if port.bubble),
                            port_count)
            copy_drop = (rc.targets == 0) | (rc.enter & ~bubbles).any()
            unicast_drop = Mux(rc.broadcast, copy_drop, unicast_drop)
        route = Signal(stage.stored_route_layout)
        m.d.comb += [route.port.eq(rc.out_port), route.mask.eq(mask), route.bubble.eq(rc.bubble),
                     route.drop.eq(rc.malformed | bad_vc | unicast_drop)]
        if stage.adaptive_vcs:
            m.d.comb += [route.grade_1.eq(rc.grade_1), route.grade_2.eq(rc.grade_2)]
        if stage.broadcast_vc is not None:
            m.d.comb += [route.multi.eq(rc.broadcast), route.targets.eq(rc.targets),
                         route.enter.eq(rc.enter)]
        return route

    def _per_flit_route(self, m, vc_port, fifo, write, stored, route):
        """The compact router: the route rides beside every flit of its packet (its route
        layout is the stored one: it derives no per-output masks)."""
        entry_in, entry_out = Signal(self.stage.entry_layout), Signal(self.stage.entry_layout)
        m.d.comb += [entry_in.data.eq(stored.data), entry_in.first.eq(stored.first),
                     entry_in.last.eq(stored.last), entry_in.abort.eq(stored.abort),
                     entry_in.route.eq(route),
                     fifo.w_en.eq(write), fifo.w_data.eq(entry_in), entry_out.eq(fifo.r_data),
                     vc_port.flit.data.eq(entry_out.data), vc_port.flit.first.eq(entry_out.first),
                     vc_port.flit.last.eq(entry_out.last), vc_port.flit.abort.eq(entry_out.abort),
                     vc_port.route.eq(entry_out.route), vc_port.head.eq(fifo.r_rdy)]

    def _per_packet_route(self, m, vc_port, fifo, queue, write, stored, route):
        """The split router: the route waits once per packet in a queue whose front is a
        register. With ``RouterConfig.bypass``, a link port offers a head arriving now while
        its queue is empty (the VC has no packet waiting) with the route just computed: it may
        be allocated in this cycle. Its route enters the queue all the same and leaves as its
        head is read, in the next cycle at the earliest, as for any other packet (with packets
        of one flit, whose routes leave as they are allocated, it is not queued then)."""
        front, head, queued = queue.r_data, queue.r_rdy, write & stored.first
        if self.stage.config.bypasses and not self._port.is_pe:
            front = Mux(head, front, self.stage.expand_route(m, route))
            if self.stage.config.max_packet_length == 1:
                # A route leaves as its packet is allocated (``pop``): one allocated in its
                # arrival cycle is never queued. Longer packets pop as their head is read,
                # never while the queue is empty.
                queued = queued & ~(vc_port.pop & ~head)
            head = head | (write & stored.first)
        m.d.comb += [fifo.w_en.eq(write), fifo.w_data.eq(stored), vc_port.flit.eq(fifo.r_data),
                     queue.w_en.eq(queued), queue.w_data.eq(route),
                     queue.r_en.eq(vc_port.pop), vc_port.route.eq(front),
                     vc_port.head.eq(head), vc_port.tail.eq(fifo.r_flag),
                     vc_port.tail_next.eq(fifo.r_flag_next)]

    def _front(self, m, vc_port, fifo):
        """The VC's front flit leaves on ``read``; "the buffer has a flit" is a register (the
        FIFO's own ``r_rdy`` decodes its level)."""
        m.d.comb += fifo.r_en.eq(vc_port.read)
        valid_next = fifo.w_en | Mux(vc_port.read, fifo.level > 1, fifo.r_rdy)
        m.d.comb += vc_port.valid_next.eq(valid_next)
        m.d.sync += vc_port.valid.eq(valid_next)

    def _credit_waits(self) -> list:
        """A crossbar input per VC (the split router; the compact one with
        ``switch_inputs="vc"``): per VC, the credits waiting to go upstream."""
        port = self._port
        return [Signal(range(port.buffer_depth + 1), name=f"credit_wait_{v}")
                for v in range(port.vc_count)]

    def _return_credits(self, m):
        """One credit per flit read, back upstream (see the class docstring)."""
        port = self._port
        credit = self.port.credit
        reads = [vc_port.read for vc_port in self.vcs]
        if not self.stage.config.switch_inputs_per_vc:
            read = Cat(reads)
            m.d.sync += [credit.valid.eq(read.any()),
                         credit.payload.eq(onehot.encode(read, port.vc_count))]
            return
        pending = self._credit_waits()
        due = Signal(port.vc_count)
        send = Signal(port.vc_count)
        m.d.comb += [due.eq(self._owed(pending, reads)),
                     send.eq(self._credit_first(due, port.vc_count))]
        # The split router reads from registers only (a VC streams while it is active and
        # its buffer has a flit), so its credit may leave in the cycle of the read: the slot
        # is free upstream a cycle sooner, which bubble rings (room for two packets) feel.
        returning = m.d.comb if self.stage.split else m.d.sync
        returning += [credit.valid.eq(due.any()),
                      credit.payload.eq(onehot.encode(send, port.vc_count))]
        for v, w in enumerate(pending):
            m.d.sync += w.eq(w + reads[v] - send[v])


    @staticmethod
    def _owed(pending: list, reads: list):
        """Per VC, a credit is owed upstream: one waits, or a flit is read now."""
        return Cat((wait != 0) | read for wait, read in zip(pending, reads))

    @staticmethod
    def _credit_first(due, count: int):
        """Of the VCs owed a credit (``due``, one bit per VC of ``count``), the one whose
        credit goes now (one-hot): the lowest."""
        return onehot.lowest(due, count)


def _pick(values: list, index):
    """``values[index]`` in hardware; with one value, that value (no selector in the netlist,
    so that ``ready`` of a one-VC port depends on no input)."""
    return values[0] if len(values) == 1 else Array(values)[index]
