"""The output unit: one output port's credits, its free VCs, and the link register or the
ejection buffer."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .. import flit
from ..flit_buffer import FlitBuffer
from .stage_config import StageConfig


class OutputUnit(wiring.Component):
    """Output port ``port_index`` of a router.

    Per output VC it keeps a credit counter: the free slots of the downstream buffer (of the
    ejection buffer toward a PE), less one for every flit sent and plus one for every credit
    back. Packets have 1 to L flits (L: ``RouterConfig.max_packet_length``) and their length
    is not known before their tail, so virtual cut-through reserves the longest: a VC is free
    only with room for L flits, and free for a bubble move only with room for 2L (003
    §6.3.2), so that a ring never fills. Once allocated, a packet's flits need no credit
    check; an output VC carries one packet at a time, so the room checked at its allocation
    is still there for each of its flits.

    On a bubble port (``PortConfig.bubble``) flits alone are not enough: packets of several
    lengths can leave every buffer of a ring with some room, none with L (say 4 of 10 free
    in each, for packets of 1 and 5 flits), and the ring deadlocks although it holds more than
    a packet's room in all. So there every packet also counts as L flits downstream, whatever
    its length, until it drains: the room a VC offers is the buffer less L per packet with
    flits downstream or on their way, less nothing for the flits of the oldest that have
    already left (it is draining, and will leave whole). A ring at rest then holds whole
    slots of L, as with packets of exactly L flits, for which the two counts agree (and
    fixed-length traffic sees no change). A packet counts from its head's leaving until the
    credit of its tail comes back: the output keeps, per VC, the last marks of the flits on
    their way downstream in a one-bit queue (credits come back in the order the flits left),
    the packets with flits there, and the credits back of the oldest.

    In the compact router packets may interleave on an output, so a VC is busy (``busy``)
    from its allocation (``take``) until its packet's last flit has left. The split router
    holds an output for a whole packet, and may allocate it again in the cycle the packet's
    last flit leaves, which is not yet off the counter then: where that would change the
    VC's free flags (its room is exactly one or two longest packets, ``tight``), the output
    waits a cycle. (A one-flit packet's output is not allocated again in the cycle it leaves:
    its head would count downstream as a packet the flags do not see yet on a bubble port.)
    The free flags are registers, worked out a cycle ahead from the counters' next values, and
    so is ``tight_next``, which lets the router decide a cycle ahead whether an output can be
    allocated again as its packet's last flit leaves.

    Parameters:
        stage: the router's :class:`StageConfig`.
        port_index: the port.
        lane: the ejection lane of a PE port (:attr:`RouterConfig.outputs`): with more than
            one lane, each is a unit of its own whose ejection buffer holds one packet.

    Ports:
        port: Out(LinkSignature) on a link port (flits out, credits in), Out(pe_out_signature)
            on a PE port (the ejection stream).
        flit: In(valid and crossbar layout) — the flit leaving this cycle, on VC ``vc``.
        take: In(max VCs) — the compact router: one-hot, the output VC allocated this cycle.
        holding: In(max VCs) — the split router: one-hot, the VC of the packet that holds the
            output (zero when none does).
        tight: Out(1) — the split router: that VC has room for exactly one or two longest
            packets, not counting the flit leaving now: the output is not allocated in the
            cycle its packet's last flit leaves (see above).
        tight_next: Out(1) — the split router: the same in the next cycle, for the VC held now
            (the counters' next values: this cycle's flit and credit counted).
        free_one, free_two: Out(max VCs) — bit w: VC w is free with room for one / two
            longest packets.
        busy: Out(max VCs) — bit w: VC w carries a packet (free or not by its credits).

    The ejection buffer is of class :attr:`flit_buffer` (a subclass may replace it).
    """

    flit_buffer = FlitBuffer

    def __init__(self, stage: StageConfig, port_index: int, lane: int = 0):
        self.stage, self.port_index, self.lane = stage, port_index, lane
        config = stage.config
        port = config.ports[port_index]
        if port.is_pe:
            out = Out(flit.pe_out_signature(config.flit_width))
        else:
            out = Out(flit.LinkSignature(config.flit_width, port.vc_count))
        vmax = config.max_vc_count
        super().__init__({"port": out, "flit": In(flit.valid_signature(stage.crossbar_layout)),
                          "take": In(vmax), "holding": In(vmax),
                          "tight": Out(1), "tight_next": Out(1),
                          "free_one": Out(vmax),
                          "free_two": Out(vmax), "busy": Out(vmax)})

    def elaborate(self, platform):
        m = Module()
        config = self.stage.config
        port = config.ports[self.port_index]
        length = config.max_packet_length
        returned = self._drive(m)
        exact, coming = [], []
        for w in range(port.output_vc_count):
            _, following = self._credit_counter(m, w, returned[w])
            busy = self._busy(m, w)
            at_most = self._counted(m, w, returned[w]) if self.slotted else None
            # Registers worked out from the counters' next values, so that allocation starts
            # from single flip-flops: room for one and for two longest packets (counted as
            # above on a bubble port), and room for exactly that (``tight``).
            free = []
            for packets in (1, 2):
                room = following >= packets * length
                if at_most is not None:
                    room = room & at_most(self.depth - packets * length)
                flag = Signal(init=self.depth >= packets * length, name=f"room_{packets}_{w}")
                m.d.sync += flag.eq(room)
                free.append(~busy & flag)
            edge = Signal(name=f"next_exact_{w}")
            at_edge = Signal(init=self.depth in (length, 2 * length), name=f"exact_{w}")
            m.d.comb += edge.eq((following == length) | (following == 2 * length))
            m.d.sync += at_edge.eq(edge)
            exact.append(at_edge)
            coming.append(edge)
            m.d.comb += [self.busy[w].eq(busy), self.free_one[w].eq(free[0]),
                         self.free_two[w].eq(free[1])]
        m.d.comb += [
            self.tight.eq(Cat(self.holding[w] & bit for w, bit in enumerate(exact)).any()),
            self.tight_next.eq(Cat(self.holding[w] & bit for w, bit in enumerate(coming)).any())]
        return m

    def _credit_counter(self, m, w: int, returned):
        """Output VC ``w``'s credit counter (see the class docstring), given ``returned``, "a
        credit came back this cycle". Returns the counter and its next value."""
        spare = Signal(range(self.depth + 1), init=self.depth, name=f"spare_credits_{w}")
        sent = self.flit.valid
        if self.stage.config.ports[self.port_index].output_vc_count > 1:
            sent = sent & (self.flit.payload.vc == w)
        following = Signal(range(self.depth + 1), name=f"next_spare_credits_{w}")
        m.d.comb += following.eq(spare + returned - sent)
        m.d.sync += spare.eq(following)
        return spare, following

    @property
    def slotted(self) -> bool:
        """Packets count as L flits downstream (a bubble port, packets of several lengths:
        see the class docstring)."""
        config = self.stage.config
        return config.ports[self.port_index].bubble and config.max_packet_length > 1

    def _counted(self, m, w: int, returned):
        """Output VC ``w``'s flits downstream as a bubble port counts them (see the class
        docstring), given ``returned``, "a credit came back this cycle". Returns a function
        of a constant ``c``: "their next value is at most ``c``"."""
        length = self.stage.config.max_packet_length
        _, _, (packets_next, drained_next) = self._packets_out(m, w, returned)

        def at_most(c: int):
            # packets * L - drained <= c, with 0 <= drained < L, never negative; for
            # c = q L + r (0 <= r < L): packets <= q, or packets = q + 1 with drained >= L - r.
            # Small comparisons, no product or difference on the path to the room flags.
            if c < 0:
                return Const(0, 1)
            q, r = divmod(c, length)
            fits = packets_next <= q
            if r:
                fits = fits | ((packets_next == q + 1) & (drained_next >= length - r))
            return fits

        return at_most

    def _packets_out(self, m, w: int, returned):
        """Output VC ``w``'s packets with flits downstream or on their way, and the credits
        back of the oldest (see the class docstring), given ``returned``, "a credit came back
        this cycle". Returns the queue of the last marks of those flits, the registers
        ``(packets, drained)`` and their next values."""
        length = self.stage.config.max_packet_length
        sent = self.flit.valid
        if self.stage.config.ports[self.port_index].output_vc_count > 1:
            sent = sent & (self.flit.payload.vc == w)
        marks = m.submodules[f"last_marks_{w}"] = self.flit_buffer(1, self.depth)
        m.d.comb += [marks.w_en.eq(sent), marks.w_data.eq(self.flit.payload.last),
                     marks.r_en.eq(returned)]
        tail_back = returned & marks.r_data
        packets = Signal(range(self.depth + 1), name=f"packets_out_{w}")
        drained = Signal(range(length), name=f"oldest_drained_{w}")  # its credits back
        packets_next = Signal.like(packets, name=f"next_packets_out_{w}")
        drained_next = Signal.like(drained, name=f"next_oldest_drained_{w}")
        m.d.comb += [packets_next.eq(packets + (sent & self.flit.payload.first) - tail_back),
                     drained_next.eq(Mux(tail_back, 0, drained + returned))]
        m.d.sync += [packets.eq(packets_next), drained.eq(drained_next)]
        return marks, (packets, drained), (packets_next, drained_next)

    @property
    def depth(self) -> int:
        """Flits of the buffer downstream: the partner's input VC buffer, or the ejection
        buffer (one packet per lane where a PE port has several)."""
        config = self.stage.config
        port = config.ports[self.port_index]
        if port.is_pe and len(config.lanes_of(self.port_index)) > 1:
            return config.max_packet_length
        return port.buffer_depth

    def _ejection_buffer(self):
        """The ejection buffer of a PE port: whole flits with their marks."""
        config = self.stage.config
        return self.flit_buffer(flit.pe_out_layout(config.flit_width).size, self.depth)

    def _drive(self, m) -> list:
        """The flit into the link register or the ejection buffer. Returns, per output VC,
        "a credit came back this cycle"."""
        config = self.stage.config
        port = config.ports[self.port_index]
        sent = self.flit
        if port.is_pe:
            eject = m.submodules.eject = self._ejection_buffer()
            stream_out = self.port
            written = data.View(stream_out.payload.shape(), eject.w_data)
            m.d.comb += [eject.w_en.eq(sent.valid), written.data.eq(sent.payload.data),
                         written.first.eq(sent.payload.first),
                         written.last.eq(sent.payload.last),
                         written.abort.eq(sent.payload.abort),
                         stream_out.valid.eq(eject.r_rdy), stream_out.payload.eq(eject.r_data),
                         eject.r_en.eq(stream_out.ready)]
            return [eject.r_rdy & stream_out.ready]
        link = self.port
        m.d.sync += [link.flit.valid.eq(sent.valid), link.flit.payload.data.eq(sent.payload.data),
                     link.flit.payload.first.eq(sent.payload.first),
                     link.flit.payload.last.eq(sent.payload.last),
                     link.flit.payload.abort.eq(sent.payload.abort),
                     link.flit.payload.vc.eq(sent.payload.vc)]
        return [link.credit.valid & (link.credit.payload == w)
                for w in range(port.output_vc_count)]

    def _busy(self, m, w: int):
        """Output VC ``w`` carries a packet that may still have flits to come (see the class
        docstring)."""
        port = self.stage.config.ports[self.port_index]
        if self.stage.split:
            return Const(0, 1)
        busy = Signal(name=f"busy_{w}")
        with m.If(self.take[w]):
            m.d.sync += busy.eq(1)
        # (A single-VC output, e.g. a PE's, carries broadcast copies tagged with the broadcast
        # VC on VC 0.)
        this_vc = (self.flit.payload.vc == w) if port.output_vc_count > 1 else 1
        with m.If(self.flit.valid & self.flit.payload.last & this_vc):
            m.d.sync += busy.eq(0)
        return busy
