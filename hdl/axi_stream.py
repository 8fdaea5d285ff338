"""AXI4-Stream network interfaces: a core sends frames to a PE number and receives whole frames.

With ``--ni axi-stream`` every PE of a network gets an AXI4-Stream slave (``s_axis_<pe>_*``,
into the network) and master (``m_axis_<pe>_*``, out of it), in place of the raw flit ports
(:class:`AxiStreamNetwork`, a top around the network top).

**Frames and packets.** A frame of ``B``-byte beats (``tdata``, ``tkeep``, ``tuser`` and the
``tlast`` that ends it) goes through the network as packets of up to ``L - 1`` beats (L: the
routers' ``max_packet_length``): each a head flit (the route fields of ``tdest``'s PE and the
sender's PE number as the head's ``source``) and one flit per beat, whose data is the beat's
``tdata``, ``tkeep`` and ``tuser`` (:attr:`AxiStreamFormat.beat_layout`; ``tkeep`` travels as
it was given, so null bytes stay where they were). A frame has 1 to ``N (L - 1)`` beats, N
being ``frame_packets`` (``--ni-frame-packets``, 1 by default).

- With N = 1 a frame is one packet, and the receiving interface delivers each packet's beats
  as one frame, whole (packets never interleave at a PE port).
- With N > 1 every head carries a mark, ``more``, set on all of a frame's packets but its
  last (:attr:`AxiStreamFormat.head_payload`), and the receiving interface reassembles: each
  sending PE has two slots of a longest frame in its memory, taken in turn; a packet's beats
  go into its sender's slot of the moment, and a frame goes to the core once its last packet
  is in, whole, in the order frames complete. A packet waits only while its slot still holds
  the frame before last from the same PE, which leaves at the core's pace, so the network
  never waits on another packet to move (no deadlock is added). This needs a family whose
  routing keeps each pair's packets in order (:meth:`twinnet.families.Family.network` refuses
  others).

``tid`` is the sending PE. Frames from one PE to another arrive in the order they were sent
wherever the family's routing keeps a pair's packets in order (``Family.in_order``).

**Ingress** (:class:`AxiStreamIngress`): store and forward. The beats of a frame go into a
memory of two longest frames; only once its ``tlast`` is in does the frame go to the network
(so a frame that turns out too long never leaves). ``tdest`` is read on a frame's first beat
(AXI4-Stream keeps it constant within a frame). Bad requests are dropped whole and counted on
the interface's own counters (16 bits, saturating), and never reach the network:

- ``bad_dest``: a frame whose ``tdest`` names no PE (``tdest >= P``);
- ``oversize``: a frame of more than ``N (L - 1)`` beats: its beats already stored are
  discarded, and the rest of it up to its ``tlast``.

**Egress** (:class:`AxiStreamEgress`): the head flit's ``source`` becomes the frame's ``tid``,
each body flit a beat, the frame's last beat the ``tlast`` beat, through a two-beat buffer
(and, with N > 1, the reassembly memory before it).

**The slaves' ``tid``** (``id_width`` bits, ``--ni-id-bits``; none by default) is read on a
frame's first beat with ``tdest``, travels in the low bits of the head flit's ``payload``, and
comes out as the high bits of the master's ``tid``: ``m_axis_tid = {s_axis_tid, source PE}``.

No path is combinational across an interface: ``s_axis_*_tready`` and ``m_axis_*_tvalid``
(and the master's data) come from registers and a memory read at a registered address, and
neither depends on the other side's ``tvalid`` or ``tready`` in the same cycle. Toward the
router, the egress's ``ready`` comes from registers too (with N > 1, whether the slot of the
packet coming in is free). During reset
``s_axis_*_tready`` is low and ``m_axis_*_tvalid`` low.
"""

from amaranth.hdl import (
    Cat,
    ClockDomain,
    DomainRenamer,
    Module,
    Mux,
    ResetSignal,
    Shape,
    Signal,
)
from amaranth.lib import data, wiring
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from twinnet.model.sizes import frame_slot, reassembly_beats
from twinnet.model.widths import index_width

from . import flit
from .flit_buffer import FlitBuffer
from .network import Network, instantiate
from .terminals import TerminalCodec

#: Width of each interface's error counters (they saturate).
COUNT_WIDTH = 16
#: An interface's error counters, in the order of the top's ports.
ERRORS = ("bad_dest", "oversize")
#: The AXI4-Stream signals of a port, in the order of the top's ports (a width of 0 leaves
#: one out).
SIGNALS = ("tvalid", "tready", "tdata", "tkeep", "tlast", "tid", "tdest", "tuser")


class AxiStreamFormat:
    """What the interfaces of a network agree on: the terminal codec of its head flits, the
    longest packet, bytes per beat, ``tuser`` bits per beat and the slaves' ``tid`` bits.

    Raises ``ValueError`` when a beat does not fit in a flit, when the head's ``source`` field
    cannot hold a PE number, when the head's payload cannot hold a ``tid``, or when packets of
    one flit leave no room for a beat."""

    def __init__(self, codec: TerminalCodec, max_packet_length: int, *, data_bytes: int,
                 user_width: int, id_width: int = 0, frame_packets: int = 1):
        self.codec, self.data_bytes, self.user_width = codec, data_bytes, user_width
        self.id_width, self.frame_packets = id_width, frame_packets
        #: A body flit's data: one beat.
        self.beat_layout = data.StructLayout({"data": 8 * data_bytes, "keep": data_bytes,
                                              "user": user_width})
        #: What a head flit's payload carries: the slave's ``tid`` and, where frames are cut
        #: into several packets, ``more``: packets of the same frame follow this one.
        self.head_payload = data.StructLayout({"id": id_width, "more": int(frame_packets > 1)})
        if self.beat_layout.size > codec.flit_width:
            raise ValueError(f"a beat of {data_bytes} bytes and {user_width} user bits takes "
                             f"{self.beat_layout.size} bits of a flit (tdata, tkeep, tuser), "
                             f"more than the flit's {codec.flit_width}")
        if codec.source_width < codec.number_width:
            raise ValueError(f"the head's source field has {codec.source_width} bits, too "
                             f"few for a PE number ({codec.number_width})")
        payload = codec.head_layout["payload"].shape.width
        if self.head_payload.size > payload:
            also = " and the mark of a frame's further packets" if frame_packets > 1 else ""
            raise ValueError(f"a tid of {id_width} bits{also} does not fit the head flit's "
                             f"payload ({payload} bits)")
        if max_packet_length < 2:
            raise ValueError("a frame needs packets of at least 2 flits (a head and a beat)")
        #: The most beats of a packet (its head is not a beat) and of a frame.
        self.packet_beats = max_packet_length - 1
        self.max_beats = frame_packets * self.packet_beats
        #: Bits of ``tdest``: a PE number.
        self.number_width = max(1, codec.number_width)
        #: The frames waiting in an ingress: one being received, one being sent.
        self.depth = 1 << (2 * self.max_beats - 1).bit_length()
        #: Beats of a slot of a master's reassembly memory, and of the memory (two slots per
        #: PE; none when a frame is one packet).
        self.slot = frame_slot(self.max_beats)
        self.reassembly_beats = (reassembly_beats(self.max_beats, codec.terminals)
                                 if frame_packets > 1 else 0)

    def widths(self, *, dest: bool) -> dict:
        """Each AXI4-Stream signal's width (0: left out) on a slave (``dest``: ``tdest`` and
        the core's ``tid``) or a master (no ``tdest``; ``tid`` the core's above the source
        PE's number)."""
        return {"tvalid": 1, "tready": 1, "tdata": 8 * self.data_bytes,
                "tkeep": self.data_bytes, "tlast": 1,
                "tid": self.id_width if dest else self.id_width + self.number_width,
                "tdest": self.number_width if dest else 0, "tuser": self.user_width}

    def signature(self, *, dest: bool) -> wiring.Signature:
        """An AXI4-Stream port seen from its master: ``tready`` in, the rest out (see
        :meth:`widths`)."""
        return wiring.Signature({name: In(width) if name == "tready" else Out(width)
                                 for name, width in self.widths(dest=dest).items() if width})


def _saturating(m, counter, event):
    with m.If(event & (counter != (1 << len(counter)) - 1)):
        m.d.sync += counter.eq(counter + 1)


class AxiStreamIngress(wiring.Component):
    """A PE's AXI4-Stream slave into the network (see the module docstring). Converted once
    per network; ``terminal`` is the PE's own number.

    Ports:
        s_axis: In(AXI4-Stream with ``tdest``): the core's frames.
        pe: Out(:func:`twinnet.hdl.flit.pe_in_signature`): the packets, into the router.
        terminal: In — this PE's number (the head's ``source``).
        bad_dest, oversize: Out(16) — frames dropped (see the module docstring).
    """

    def __init__(self, fmt: AxiStreamFormat):
        self.fmt = fmt
        super().__init__({"s_axis": In(fmt.signature(dest=True)),
                          "pe": Out(flit.pe_in_signature(fmt.codec.flit_width, 1)),
                          "terminal": In(fmt.number_width),
                          **{name: Out(COUNT_WIDTH) for name in ERRORS}})

    def elaborate(self, platform):
        m, fmt = Module(), self.fmt
        depth, pointer = fmt.depth, index_width(fmt.depth) + 1
        m.submodules.beats = beats = Memory(shape=fmt.beat_layout, depth=depth, init=[])
        write, read = beats.write_port(), beats.read_port(domain="comb")
        # Beats are written at ``written``; ``committed`` ends the last whole frame; beats are
        # read at ``taken``. The pointers count modulo twice the depth: written - taken beats
        # are held.
        written, committed, taken = (Signal(pointer, name=name)
                                     for name in ("written", "committed", "taken"))
        # A whole frame waiting: its destination's route fields (worked out as the frame comes
        # in, off the path into the router) and its beats.
        frame = data.StructLayout({"route": fmt.codec.route_layout,
                                   "beats": range(fmt.max_beats + 1), "id": fmt.id_width})
        m.submodules.frames = frames = FlitBuffer(frame.size, 2)
        self._receive(m, write, written, committed, taken, frames, frame)
        self._send(m, read, taken, frames, frame)
        return m

    def _receive(self, m, write, written, committed, taken, frames, frame) -> None:
        """The core's beats into the memory; a whole frame's size and destination into
        ``frames``."""
        fmt, axis = self.fmt, self.s_axis
        depth_bits = index_width(fmt.depth)
        opened = Signal()  # a frame has beats in the memory, its tlast still to come
        dropping = Signal()  # the rest of a dropped frame, up to its tlast
        count = Signal(range(fmt.max_beats + 1))
        dest = Signal(fmt.number_width)
        tid = Signal(fmt.id_width)
        room = (written - taken)[:depth_bits + 1] != fmt.depth
        # (Low during reset, as the network's own PE ports: a beat offered then waits.)
        m.d.comb += axis.tready.eq(~ResetSignal() & (dropping | (room & frames.w_rdy)))
        beat = Signal(fmt.beat_layout)
        m.d.comb += [beat.data.eq(axis.tdata), beat.keep.eq(axis.tkeep)]
        if fmt.user_width:
            m.d.comb += beat.user.eq(axis.tuser)
        took = axis.tvalid & axis.tready
        starts = ~opened & ~dropping
        bad = starts & (axis.tdest >= fmt.codec.terminals)
        over = opened & (count == fmt.max_beats)
        stored = Mux(starts, 1, count + 1)
        to = Mux(starts, axis.tdest, dest)
        sender = Mux(starts, axis.tid, tid) if fmt.id_width else tid
        entry = data.View(frame, frames.w_data)
        m.d.comb += [write.addr.eq(written[:depth_bits]), write.data.eq(beat),
                     write.en.eq(took & ~dropping & ~bad & ~over),
                     entry.route.eq(fmt.codec.route_from(m, to)), entry.beats.eq(stored),
                     entry.id.eq(sender)]
        _saturating(m, self.bad_dest, took & bad)
        _saturating(m, self.oversize, took & over)
        with m.If(took):
            with m.If(dropping):
                m.d.sync += dropping.eq(~axis.tlast)
            with m.Elif(bad):
                m.d.sync += dropping.eq(~axis.tlast)
            with m.Elif(over):
                # Too long: forget its beats; drop the rest of it.
                m.d.sync += [written.eq(committed), opened.eq(0), dropping.eq(~axis.tlast)]
            with m.Else():
                m.d.sync += [written.eq(written + 1), count.eq(stored), dest.eq(to),
                             tid.eq(sender), opened.eq(~axis.tlast)]
                with m.If(axis.tlast):
                    m.d.comb += frames.w_en.eq(1)
                    m.d.sync += committed.eq(written + 1)

    def _send(self, m, read, taken, frames, frame) -> None:
        """Each whole frame out as packets of up to ``packet_beats`` beats: a head, then a flit
        per beat."""
        fmt, pe = self.fmt, self.pe
        codec = fmt.codec
        sending = Signal()  # the packet's head has gone; its beats follow
        sent = Signal(range(fmt.max_beats + 1))  # the frame's beats sent, in earlier packets too
        in_packet = Signal(range(fmt.packet_beats))  # this packet's beats sent
        entry = data.View(frame, frames.r_data)
        head = Signal(codec.head_layout)
        extra = data.View(fmt.head_payload, head.payload[:fmt.head_payload.size])
        m.d.comb += [head.route.eq(entry.route), head.source.eq(self.terminal),
                     extra.id.eq(entry.id), read.addr.eq(taken[:index_width(fmt.depth)])]
        if fmt.frame_packets > 1:
            m.d.comb += extra.more.eq(entry.beats - sent > fmt.packet_beats)
        moves = pe.valid & pe.ready
        with m.If(~sending):
            m.d.comb += [pe.valid.eq(frames.r_rdy), pe.payload.data.eq(head),
                         pe.payload.first.eq(1)]
            with m.If(moves):
                m.d.sync += [sending.eq(1), in_packet.eq(0)]
        with m.Else():
            ends = sent == entry.beats - 1  # the frame's last beat
            last = ends | (in_packet == fmt.packet_beats - 1)
            m.d.comb += [pe.valid.eq(1), pe.payload.data.eq(read.data),
                         pe.payload.last.eq(last)]
            with m.If(moves):
                m.d.sync += [taken.eq(taken + 1), sent.eq(Mux(ends, 0, sent + 1)),
                             in_packet.eq(in_packet + 1), sending.eq(~last)]
                m.d.comb += frames.r_en.eq(ends)


class AxiStreamEgress(wiring.Component):
    """A PE's AXI4-Stream master out of the network (see the module docstring).

    Ports:
        pe: In(:func:`twinnet.hdl.flit.pe_out_signature`): the packets, from the router.
        m_axis: Out(AXI4-Stream with ``tid``): the frames, to the core.
    """

    def __init__(self, fmt: AxiStreamFormat):
        self.fmt = fmt
        super().__init__({"pe": In(flit.pe_out_signature(fmt.codec.flit_width)),
                          "m_axis": Out(fmt.signature(dest=False))})

    def elaborate(self, platform):
        m, fmt, axis = Module(), self.fmt, self.m_axis
        #: What goes to the core: a beat, whether it ends the frame, the frame's tid.
        out = data.StructLayout({"beat": fmt.beat_layout, "last": 1,
                                 "id": fmt.id_width + fmt.number_width})
        # (Two beats; four behind the reassembly memory's read, a cycle late.)
        m.submodules.beats = beats = FlitBuffer(out.size, 2 if fmt.frame_packets == 1 else 4)
        if fmt.frame_packets == 1:
            self._packets(m, beats, out)
        else:
            self._reassemble(m, beats, out)
        front = data.View(out, beats.r_data)
        m.d.comb += [axis.tvalid.eq(beats.r_rdy), beats.r_en.eq(axis.tready),
                     axis.tdata.eq(front.beat.data), axis.tkeep.eq(front.beat.keep),
                     axis.tlast.eq(front.last), axis.tid.eq(front.id)]
        if fmt.user_width:
            m.d.comb += axis.tuser.eq(front.beat.user)
        return m

    def _packets(self, m, beats, out) -> None:
        """A frame is a packet: its beats go straight to the core (packets never interleave
        at a PE port)."""
        fmt, pe = self.fmt, self.pe
        source = Signal(out["id"].shape)  # the frame's tid: the core's above the source PE
        head = data.View(fmt.codec.head_layout, pe.payload.data)
        extra = data.View(fmt.head_payload, head.payload[:fmt.head_payload.size])
        entry = data.View(out, beats.w_data)
        m.d.comb += [pe.ready.eq(beats.w_rdy),
                     beats.w_en.eq(pe.valid & ~pe.payload.first),
                     entry.beat.eq(pe.payload.data[:fmt.beat_layout.size]),
                     entry.last.eq(pe.payload.last), entry.id.eq(source)]
        with m.If(pe.valid & pe.ready & pe.payload.first):
            m.d.sync += source.eq(Cat(head.source[:fmt.number_width], extra.id))

    def _reassemble(self, m, beats, out) -> None:
        """Frames of several packets: each PE's packets are written into a slot of their own
        (two per PE, taken in turn), and a frame goes to the core once its last packet is in,
        in the order frames complete. A packet's beats wait only while its slot still holds
        the frame before last from the same PE, which leaves at the core's pace: the network
        never waits on another packet."""
        fmt = self.fmt
        pes, slot_bits = fmt.codec.terminals, index_width(fmt.slot)
        m.submodules.slots = slots = Memory(shape=fmt.beat_layout, depth=fmt.reassembly_beats,
                                            init=[])
        # Beats of the frame coming in from each PE, in its slot of the moment.
        m.submodules.fill = fill = Memory(shape=range(fmt.max_beats + 1), depth=pes, init=[])
        write, fill_read, fill_write = (slots.write_port(), fill.read_port(domain="comb"),
                                        fill.write_port())
        half = Signal(pes)  # each PE's slot of the moment: its first or second
        full = Signal(2 * pes)  # each slot holds a whole frame the core has yet to take
        frame = data.StructLayout({"source": fmt.number_width, "half": 1,
                                   "beats": range(fmt.max_beats + 1), "id": fmt.id_width})
        m.submodules.whole = whole = FlitBuffer(frame.size, 2 * pes)
        self._collect(m, write, fill_read, fill_write, half, full, whole, frame, slot_bits)
        # Out: the oldest whole frame, beat by beat, read a cycle ahead (a memory read at the
        # clock edge, which an FPGA keeps in block RAM) into the output buffer.
        read = slots.read_port()
        front = data.View(frame, whole.r_data)
        taken = Signal(range(fmt.slot))
        ends = taken == front.beats - 1
        # A read issued in the last cycle, whose beat arrives now.
        pending, pending_last = Signal(), Signal()
        pending_id = Signal(out["id"].shape)
        issue = whole.r_rdy & (beats.level + pending < beats.depth - 1)
        entry = data.View(out, beats.w_data)
        m.d.comb += [read.addr.eq(Cat(taken, front.half, front.source)), read.en.eq(issue),
                     entry.beat.eq(read.data), entry.last.eq(pending_last),
                     entry.id.eq(pending_id), beats.w_en.eq(pending)]
        m.d.sync += [pending.eq(issue), pending_last.eq(ends),
                     pending_id.eq(Cat(front.source, front.id))]
        with m.If(issue):
            m.d.sync += taken.eq(Mux(ends, 0, taken + 1))
            with m.If(ends):
                m.d.comb += whole.r_en.eq(1)
                m.d.sync += full.bit_select(Cat(front.half, front.source), 1).eq(0)

    def _collect(self, m, write, fill_read, fill_write, half, full, whole, frame,
                 slot_bits) -> None:
        """Packets from the router into their PE's slot; a frame's last packet makes it
        whole."""
        fmt, pe = self.fmt, self.pe
        head = data.View(fmt.codec.head_layout, pe.payload.data)
        extra = data.View(fmt.head_payload, head.payload[:fmt.head_payload.size])
        sender = head.source[:fmt.number_width]
        # The packet coming in: its PE, slot, next beat's place, tid and whether more follow.
        body = Signal()
        source, into, more = Signal(fmt.number_width), Signal(), Signal()
        place = Signal(range(fmt.max_beats + 1))
        tid = Signal(fmt.id_width)
        whole_entry = data.View(frame, whole.w_data)
        m.d.comb += [fill_read.addr.eq(sender), fill_write.addr.eq(source),
                     write.addr.eq(Cat(place[:slot_bits], into, source)),
                     write.data.eq(pe.payload.data[:fmt.beat_layout.size]),
                     whole_entry.source.eq(source), whole_entry.half.eq(into),
                     whole_entry.beats.eq(place + 1), whole_entry.id.eq(tid)]
        with m.If(~body):
            # A head is always taken (a packet of one flit carries no beat and is ignored).
            m.d.comb += pe.ready.eq(1)
            with m.If(pe.valid & pe.payload.first & ~pe.payload.last):
                m.d.sync += [body.eq(1), source.eq(sender),
                             into.eq(half.bit_select(sender, 1)), place.eq(fill_read.data),
                             tid.eq(extra.id), more.eq(extra.more)]
        with m.Else():
            # Its beats wait while the slot still holds a frame for the core.
            m.d.comb += [pe.ready.eq(~full.bit_select(Cat(into, source), 1)),
                         write.en.eq(pe.valid & pe.ready)]
            with m.If(pe.valid & pe.ready):
                m.d.sync += place.eq(place + 1)
                with m.If(pe.payload.last):
                    m.d.sync += body.eq(0)
                    m.d.comb += [fill_write.en.eq(1), fill_write.data.eq(Mux(more, place + 1, 0))]
                    with m.If(~more):
                        m.d.comb += whole.w_en.eq(1)
                        m.d.sync += [full.bit_select(Cat(into, source), 1).eq(1),
                                     half.bit_select(source, 1).eq(~into)]


class AxiStreamInterface(wiring.Component):
    """One PE's interfaces: an :class:`AxiStreamIngress` and an :class:`AxiStreamEgress`.

    With ``separate_clock`` both run on a clock of their own (``axis_clk``, ``axis_rst``: the
    domain of the AXI4-Stream ports and of the counters), and an :class:`AsyncFIFO` of 4 flits
    each way crosses between it and the network's clock (``sync``), so that a core at one
    frequency talks to a network at another. Both resets are held together at start.

    Ports:
        s_axis: In(AXI4-Stream with ``tdest``); m_axis: Out(AXI4-Stream with ``tid``).
        pe_in: Out(:func:`twinnet.hdl.flit.pe_in_signature`) — into the router.
        pe_out: In(:func:`twinnet.hdl.flit.pe_out_signature`) — from the router.
        terminal: In — this PE's number.
        bad_dest, oversize: Out(16) — the ingress's counters.
        axis_clk, axis_rst: In(1) — with ``separate_clock`` only.
    """

    #: Flits each asynchronous FIFO holds.
    CROSSING_DEPTH = 4

    def __init__(self, fmt: AxiStreamFormat, *, separate_clock: bool = False):
        self.fmt, self.separate_clock = fmt, separate_clock
        members = {"s_axis": In(fmt.signature(dest=True)),
                   "m_axis": Out(fmt.signature(dest=False)),
                   "pe_in": Out(flit.pe_in_signature(fmt.codec.flit_width, 1)),
                   "pe_out": In(flit.pe_out_signature(fmt.codec.flit_width)),
                   "terminal": In(fmt.number_width),
                   **{name: Out(COUNT_WIDTH) for name in ERRORS}}
        if separate_clock:
            members.update(axis_clk=In(1), axis_rst=In(1))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        ingress, egress = AxiStreamIngress(self.fmt), AxiStreamEgress(self.fmt)
        if self.separate_clock:
            m.domains.axis = axis = ClockDomain(local=True)
            m.d.comb += [axis.clk.eq(self.axis_clk), axis.rst.eq(self.axis_rst)]
            ingress, egress = (DomainRenamer("axis")(part) for part in (ingress, egress))
        m.submodules.ingress, m.submodules.egress = ingress, egress
        wiring.connect(m, wiring.flipped(self.s_axis), ingress.s_axis)
        wiring.connect(m, wiring.flipped(self.m_axis), egress.m_axis)
        if self.separate_clock:
            self._cross(m, ingress.pe, self.pe_in, "to_network", "axis", "sync")
            self._cross(m, self.pe_out, egress.pe, "from_network", "sync", "axis")
        else:
            wiring.connect(m, wiring.flipped(self.pe_in), ingress.pe)
            wiring.connect(m, wiring.flipped(self.pe_out), egress.pe)
        m.d.comb += ingress.terminal.eq(self.terminal)
        for name in ERRORS:
            m.d.comb += getattr(self, name).eq(getattr(ingress, name))
        return m

    def _cross(self, m, source, sink, name: str, w_domain: str, r_domain: str) -> None:
        """Stream ``source`` into stream ``sink`` through an :class:`AsyncFIFO`."""
        fifo = m.submodules[name] = AsyncFIFO(width=Shape.cast(source.payload.shape()).width,
                                              depth=self.CROSSING_DEPTH, w_domain=w_domain,
                                              r_domain=r_domain)
        m.d.comb += [fifo.w_data.eq(source.payload), fifo.w_en.eq(source.valid),
                     source.ready.eq(fifo.w_rdy), sink.valid.eq(fifo.r_rdy),
                     sink.payload.eq(fifo.r_data), fifo.r_en.eq(sink.ready)]


class AxiStreamNetwork(wiring.Component):
    """The top with AXI4-Stream interfaces: the network top (instantiated by module name) and
    per PE an :class:`AxiStreamInterface` (converted once, instantiated by name).

    Ports, per PE ``i`` (signals of width 0 left out, :meth:`AxiStreamFormat.widths`):
        s_axis_<i>_tvalid, _tdata, _tkeep, _tlast, _tid, _tdest, _tuser: In;
            s_axis_<i>_tready: Out.
        m_axis_<i>_tvalid, _tdata, _tkeep, _tlast, _tid, _tuser: Out; m_axis_<i>_tready: In.
        ni_<i>_bad_dest, ni_<i>_oversize: Out(16) — the ingress's counters.
        ni_<i>_clk, ni_<i>_rst: In(1) — with ``separate_clock``: the clock and reset (active
            high, synchronous to it) of PE i's ports and counters.
    and ``drop_count`` (the network's: malformed packets, which interfaces never send).

    Parameters:
        network: the :class:`twinnet.hdl.network.Network` top.
        fmt: the :class:`AxiStreamFormat`.
        modules: ``network`` and ``interface`` → Verilog module names.
        separate_clock: each PE's interfaces on a clock of their own
            (:class:`AxiStreamInterface`).
    """

    def __init__(self, network: Network, fmt: AxiStreamFormat, modules: dict, *,
                 separate_clock: bool = False):
        self.network, self.fmt, self.modules = network, fmt, modules
        self.interface = AxiStreamInterface(fmt, separate_clock=separate_clock)
        members = {}
        for terminal in range(fmt.codec.terminals):
            if separate_clock:
                members.update({f"ni_{terminal}_clk": In(1), f"ni_{terminal}_rst": In(1)})
            for side, dest in (("s", True), ("m", False)):
                port = fmt.signature(dest=dest)
                if side == "s":
                    port = port.flip()
                for name, member in port.members.items():
                    members[f"{side}_axis_{terminal}_{name}"] = member
            for name in ERRORS:
                members[f"ni_{terminal}_{name}"] = Out(COUNT_WIDTH)
        members["drop_count"] = Out(network.signature.members["drop_count"].shape)
        super().__init__(members)

    def elaborate(self, platform):
        m, fmt = Module(), self.fmt
        net = instantiate(m, "network", self.modules["network"], self.network)
        m.d.comb += self.drop_count.eq(net.drop_count)
        nis = []
        for terminal in range(fmt.codec.terminals):
            ni = instantiate(m, f"ni{terminal}", self.modules["interface"], self.interface)
            m.d.comb += ni.terminal.eq(terminal)
            if self.interface.separate_clock:
                m.d.comb += [ni.axis_clk.eq(getattr(self, f"ni_{terminal}_clk")),
                             ni.axis_rst.eq(getattr(self, f"ni_{terminal}_rst"))]
            for side, port in (("s", ni.s_axis), ("m", ni.m_axis)):
                for name, member in port.signature.members.items():
                    outer = getattr(self, f"{side}_axis_{terminal}_{name}")
                    if member.flow == In:  # an input of the interface: from the top's port
                        m.d.comb += getattr(port, name).eq(outer)
                    else:
                        m.d.comb += outer.eq(getattr(port, name))
            for name in ERRORS:
                m.d.comb += getattr(self, f"ni_{terminal}_{name}").eq(getattr(ni, name))
            m.d.comb += ni.pe_out.payload.abort.eq(net.pe_out_abort[terminal])
            nis.append(ni)
        # One assignment per network bus (see :class:`twinnet.hdl.traffic.TrafficHarness`).
        m.d.comb += [
            net.pe_in_valid.eq(Cat(ni.pe_in.valid for ni in nis)),
            net.pe_in_first.eq(Cat(ni.pe_in.payload.first for ni in nis)),
            net.pe_in_last.eq(Cat(ni.pe_in.payload.last for ni in nis)),
            net.pe_in_data.eq(Cat(ni.pe_in.payload.data for ni in nis)),
            net.pe_out_ready.eq(Cat(ni.pe_out.ready for ni in nis)),
            *(ni.pe_in.ready.eq(net.pe_in_ready[t]) for t, ni in enumerate(nis)),
            *(ni.pe_out.valid.eq(net.pe_out_valid[t]) for t, ni in enumerate(nis)),
            *(ni.pe_out.payload.first.eq(net.pe_out_first[t]) for t, ni in enumerate(nis)),
            *(ni.pe_out.payload.last.eq(net.pe_out_last[t]) for t, ni in enumerate(nis)),
            *(ni.pe_out.payload.data.eq(net.pe_out_data[t]) for t, ni in enumerate(nis)),
        ]
        return m
