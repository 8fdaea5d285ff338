"""Traffic generation and checking in hardware, around any generated network.

:class:`TrafficHarness` wraps a network top (:class:`twinnet.hdl.network.Network`, instantiated
by module name) with one :class:`TrafficSource` and one :class:`TrafficSink` per terminal, so
that a simulation only configures, runs and reads counters: no simulator callback per cycle.

A **source** creates packets by Bernoulli trials (``rate``/65536 packets per cycle) into a
queue of creation times (``queue_depth`` packets; a packet created while it is full is counted
on ``overflowed`` and not sent), and injects them one after the other. Destinations follow the
runtime-selected pattern of :mod:`twinnet.model.traffic` (``pattern`` is the index in
``PATTERNS``): uniform picks every destination digit by multiply-shift of 16 random bits (a
draw equal to the source is retried the next cycle); the fixed patterns, the hot spot and the
first all-pairs destination are per-terminal constants computed from the model; all-pairs steps
a mixed-radix counter. Random bits come from xorshift32 generators seeded from ``seed`` and the
terminal number at reset.

A packet has 1 to L flits (L: the routers' ``max_packet_length``), its length drawn per
packet as it is created from a mix of up to :data:`twinnet.model.traffic.LENGTH_CLASSES`
classes, each a range of lengths (controls ``length_lo_<k>``, ``length_hi_<k>``: uniform
within; ``length_cut_<k>``: class k is taken when 16 random bits fall below it and below no
earlier class's, so the cuts are cumulative shares × 65,536), as BookSim's ``packet_size`` and
``packet_size_rate``. It carries, in its head flit, the destination's route fields, the source
and a payload of the sequence number of the packet among those from its source to its
destination, a ``measured`` bit (packets created while ``measure`` is high) and its length
less one; flits 1… hold a word derived from (source, sequence, flit).

A **sink** checks every packet it receives: its route fields are the sink's terminal
(``wrong_destination``), its sequence number is the next one from that source
(``out_of_order``: a lost, duplicated or overtaken packet; one memory entry per terminal at
each source and sink, kept across resets so that runs can follow each other once the network
has drained; under adaptive routing, where a pair's packets may overtake each other, see
below), flits 2… are intact (``corrupt``),
first/last marks are where the packet's length puts them (``framing``), and no packet was cut
short on its way (``aborted``: its tail's abort mark, which a source here never causes).
Latencies need no time stamps in the packets: for its measured unicast packets each source
sums the cycles their heads were accepted (``injected_time_sum``) and the cycles they queued
before (``queued_sum``), each sink the cycles their heads were ejected (``ejected_time_sum``),
all modulo 2**48: once every measured packet has arrived, the network latencies sum to
``ejected_time_sum - injected_time_sum`` (head accepted → head ejected) and the total
latencies to that plus ``queued_sum`` (created → head ejected), whatever the packets'
lengths. (Each packet's own latency is what an engine that sees the terminals measures: the
C++ program of :mod:`twinnet.program`.) Exactly once, in order per pair: every
packet's sequence number is the next of its pair, and ``received == injected``.

Where a pair's packets may pass each other (``ordered=False``: adaptive routing, a fat tree
with several VCs) the sinks do not expect an order. Instead every
source adds a 32-bit hash of (source, destination, sequence number) of each packet it
creates to ``sent_hash``, and every sink adds the hash of (source, its own terminal,
sequence number) of each packet it receives to ``received_hash``: once the network has
drained, the two sums (mod 2³²) are equal when every packet arrived once at its destination.
A lost, duplicated or misdelivered packet changes one sum (several errors could cancel only
if their hashes summed alike: about one chance in 2³²).

A sink can push back, as a PE that is busy does: each cycle it refuses the flit offered to
it with probability ``refuse_rate``/65536 (``--eject-ready`` is one minus that), and, when
``stall_max`` is not 0, a sink that is not stalled starts a stall with probability
``stall_start``/65536, refusing every flit for a burst of 1 to ``stall_max`` cycles (uniform).
Its random bits come from its own xorshift32 generators, seeded from ``seed`` and the
terminal. ``refused`` counts the cycles a sink refused a flit the network offered. Both
controls at 0 (their reset value): the sink takes every flit at once.

Broadcasts (only when the routers replicate them: the head's route has a ``broadcast`` field,
as the king family's routers built with ``--broadcast``; otherwise none of this is built):
each packet a source takes from its queue is a broadcast instead of a unicast packet with
probability ``broadcast_rate``/65536 (65536: every one). A broadcast's head has
``route.broadcast`` = 1 and every other route field 0 (its copies leave at PE 0 of every
router but the source's; the routers fill in the TTL), and carries the next number of the
source's own broadcast sequence. Its copies follow the forwarding rule's fixed tree on one VC,
so each sink sees a source's broadcasts in order: a sink checks each copy's number against the
next one it expects from that source (``out_of_order``: a lost or duplicated copy), its PE
field against its own (``wrong_destination``), its flits as any packet's (``corrupt``,
``framing``, ``aborted``), and counts it on ``copies`` instead of ``received``; sources count the
broadcasts they inject on ``broadcasts`` (also on ``injected``; the measured ones also on
``broadcasts_measured``). Once the network has
drained, ``copies`` must be ``broadcasts`` times the copies of one broadcast (a copy at the
wrong router or a missing one changes it). Copies add nothing to the latency sums.

The harness sums every terminal's counters (balanced adder trees) onto its outputs.
"""

from amaranth.hdl import Cat, Const, Module, Mux, ResetSignal, Signal, unsigned
from amaranth.lib import data, fifo, memory, wiring
from amaranth.lib.wiring import In, Out

from twinnet.model.traffic import FIXED, LENGTH_CLASSES, PATTERNS
from twinnet.model.widths import index_width

from .adders import sum_tree
from .config import DROP_COUNT_WIDTH
from .network import Network, instantiate
from .terminals import TerminalCodec, field

#: Width of every per-terminal counter, and of the harness's sums.
COUNT_WIDTH = 32
SUM_WIDTH = 48
RATE_BITS = 16
#: Width of ``stall_max``: a sink's stall bursts last at most 2**16 - 1 cycles.
STALL_BITS = 16
#: The faults the harness can inject, once per reset, at terminal 0 (its ``fault`` input is
#: the index here), to show that the sinks catch them: ``misroute`` rewrites the destination
#: of the first packet ejected there to terminal 1's (a packet delivered at the wrong
#: terminal), ``duplicate`` makes its source send its first packet twice, ``corrupt`` flips a
#: bit of flit 1 of the first packet of two flits or more ejected there.
FAULTS = ("none", "misroute", "duplicate", "corrupt")
_HASH = (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D)


def body_word(source, seq, index, width: int):
    """Flit ``index`` (>= 1) of a packet: a word derived from its source and sequence number,
    so that a corrupted, lost or swapped flit is noticed (the same expression in Python and in
    hardware)."""
    return ((source * _HASH[0]) ^ (seq * _HASH[1]) ^ (index * _HASH[2])) & ((1 << width) - 1)


def packet_hash(source, destination, seq):
    """The 32-bit hash of a packet that the unordered checks sum (the same expression in Python
    and in hardware)."""
    mixed = ((source * _HASH[0]) ^ (destination * _HASH[1]) ^ (seq * _HASH[2])) & 0xFFFFFFFF
    return (mixed ^ (mixed >> 15)) * 0x2C1B3C6D & 0xFFFFFFFF


def _xorshift(state):
    """One step of Marsaglia's xorshift32 (an expression of a 32-bit value)."""
    state = state ^ (state << 13)[:32]
    state = state ^ (state >> 17)
    return state ^ (state << 5)[:32]


class TrafficFormat(TerminalCodec):
    """What a source and a sink agree on: the head flit's layout (of the network's routers),
    the terminal digits (:class:`twinnet.hdl.terminals.TerminalCodec`), the longest packet,
    the sequence and length field widths, and whether packets may be broadcasts
    (``broadcast``: the route has a ``broadcast`` field; see the module docstring).

    Parameters:
        head_layout: the routers' head flit layout (``FlitFormat.head_layout``).
        digits: the route fields that number the terminals, least significant first, as
            ``(path, radix)`` (e.g. ``(("pe",), 2)``, ``(("node", "o2"), 4)``): terminal
            ``t = d0 + r0 * (d1 + r1 * (d2 + …))``.
        terminals: P.
        max_packet_length: L, the routers' longest packet (>= 1).
        ordered: each pair's packets arrive in order (one path on one VC per hop); False:
            they may overtake each other and the sums of packet hashes are kept instead.
    """

    def __init__(self, head_layout: data.StructLayout, digits, terminals: int,
                 max_packet_length: int, ordered: bool = True):
        super().__init__(head_layout, digits, terminals)
        self.max_packet_length = max_packet_length
        payload = head_layout["payload"].shape.width
        #: Bits of a packet's length less one (0 … L - 1), and of a length (1 … L).
        self.length_bits = index_width(max_packet_length)
        self.size_bits = index_width(max_packet_length + 1)
        self.seq_bits = payload - 1 - self.length_bits
        if self.seq_bits < 4:
            raise ValueError(f"the head flit leaves {payload} payload bits; traffic in "
                             f"hardware needs at least {5 + self.length_bits} (a 4-bit "
                             f"sequence number, the measured bit and {self.length_bits} of "
                             "length)")
        self.ordered = ordered
        #: The head flit's ``payload``: the packet's sequence number, its measured bit and its
        #: length less one.
        self.payload_layout = data.StructLayout({"seq": unsigned(self.seq_bits),
                                                 "measured": unsigned(1),
                                                 "length": unsigned(self.length_bits)})
        #: An entry of a source's queue: the cycle the packet was created, whether it is
        #: measured, its length less one and (a trace's packet) its destination's route.
        self.queue_entry = data.StructLayout({"birth": unsigned(32), "measured": unsigned(1),
                                              "length": unsigned(self.length_bits),
                                              "route": self.route_layout})
        self.index_bits = self.length_bits
        self.broadcast = "broadcast" in self.route_layout.members
        # A copy must arrive at the PE a broadcast's route names (the king family's
        # ``route.pe``, with several PEs per router).
        self.broadcast_digits = [path for path, _ in self.digits
                                 if path == ("pe",)] if self.broadcast else []
        route = self.route_layout
        #: A source's constants: its terminal number, its own route, the fixed pattern's
        #: destinations, the hotspot and the first of its pair.
        self.source_constants = data.StructLayout({
            "source": unsigned(self.source_width), "own": route,
            "fixed_valid": unsigned(len(FIXED)), "fixed": data.ArrayLayout(route, len(FIXED)),
            "hotspot": route, "first_pair": route})
        #: A sink's constants: its own route and terminal number.
        self.sink_constants = data.StructLayout({"own": route,
                                                 "terminal": unsigned(self.source_width)})

    def broadcast_route(self):
        """The route-field value of a broadcast (copies at PE 0; the TTL left 0)."""
        return self.route_layout.const({"broadcast": 1})


class TrafficSource(wiring.Component):
    """One terminal's packet source; see the module docstring. Converted once per network
    and instantiated per terminal with its constants on ``constants``."""

    def __init__(self, fmt: TrafficFormat, queue_depth: int = 8):
        self.fmt, self.queue_depth = fmt, queue_depth
        super().__init__({
            "constants": In(fmt.source_constants),
            "enable": In(1), "measure": In(1), "rate": In(RATE_BITS), "pattern": In(4),
            "hotspot_rate": In(RATE_BITS), "seed": In(32), "now": In(32),
            "onoff": In(1), "turn_on": In(RATE_BITS), "turn_off": In(RATE_BITS),
            **{f"length_{bound}_{k}": In(fmt.size_bits) for k in range(LENGTH_CLASSES)
               for bound in ("lo", "hi")},
            **{f"length_cut_{k}": In(RATE_BITS + 1) for k in range(LENGTH_CLASSES)},
            "from_trace": In(1), "trace_valid": In(1), "trace_ready": Out(1),
            "trace_route": In(fmt.route_layout), "trace_length": In(fmt.length_bits),
            "trace_birth": In(32),
            "replay": In(1),
            "valid": Out(1), "ready": In(1), "first": Out(1), "last": Out(1),
            "data": Out(fmt.flit_width),
            "created": Out(COUNT_WIDTH), "created_measured": Out(COUNT_WIDTH),
            "overflowed": Out(COUNT_WIDTH), "injected": Out(COUNT_WIDTH),
            "injected_time_sum": Out(SUM_WIDTH), "queued_sum": Out(SUM_WIDTH),
            "sent_hash": Out(32), "replayed": Out(1),
            **({"broadcast_rate": In(RATE_BITS + 1), "broadcasts": Out(COUNT_WIDTH),
                "broadcasts_measured": Out(COUNT_WIDTH)} if fmt.broadcast else {}),
        })

    def elaborate(self, platform):
        m = Module()
        random = self._random(m)
        create, queue, fixed, fixed_index, pairs_left = self._creation(m, random)
        chosen, usable, pair = self._destination(m, random, fixed, fixed_index)
        # Broadcasts: the draw that makes the next packet one (bits no other draw uses).
        broadcast = (random[1][16:32] < self.broadcast_rate) if self.fmt.broadcast else None
        self._injection(m, create, queue, chosen, usable, pair, pairs_left, broadcast)
        return m

    def _pattern_is(self, name: str):
        return self.pattern == PATTERNS.index(name)

    def _random(self, m) -> list:
        """The xorshift lanes, seeded per source at reset."""
        constants, fmt = self.constants, self.fmt
        # Lanes 0 and 1: creation, on/off, hot spot, broadcast; then the destination digits;
        # the last: the packet's length.
        lanes = 3 + (len(fmt.digits) * 16 + 31) // 32
        random = []
        for lane in range(lanes):
            state = Signal(32, name=f"random{lane}", reset_less=True)
            mixed = (self.seed ^ ((constants.source * 0x9E3779B9)[:32] + 0x6A09E667 * (lane + 1))
                     [:32])[:32]
            seeded = Mux(mixed == 0, 0x6A09E667, mixed)
            m.d.sync += state.eq(Mux(ResetSignal(), seeded, _xorshift(state)))
            random.append(state)
        return random

    def _creation(self, m, random):
        """Packet creation into the source queue. Returns (create, the queue, "the pattern
        has a fixed destination", the index of that pattern in :data:`FIXED`, the all-pairs
        count of packets left)."""
        constants, pattern_is = self.constants, self._pattern_is
        fixed_index = Signal(range(len(FIXED) + 1))
        for index, name in enumerate(FIXED):
            with m.If(pattern_is(name)):
                m.d.comb += fixed_index.eq(index)
        fixed = Cat(*[pattern_is(name) for name in FIXED]).any()
        pairs_left = Signal(range(self.fmt.terminals), reset_less=True)
        may_create = Mux(pattern_is("all-pairs"), pairs_left != 0,
                         Mux(fixed, constants.fixed_valid.bit_select(fixed_index, 1), 1))
        # On/off injection: a two-state Markov chain per source (BookSim's ``onoff``), which
        # turns on with probability turn_on/65536 per cycle and off with turn_off/65536;
        # packets are created only while it is on. Bernoulli: always on.
        on = Signal(reset_less=True)
        flip = random[1][:16] < Mux(on, self.turn_off, self.turn_on)
        m.d.sync += on.eq(Mux(ResetSignal(), 0, on ^ flip))
        create = (self.enable & may_create & (random[0][:16] < self.rate)
                  & (on | ~self.onoff) & ~self.from_trace)
        queue = m.submodules.queue = fifo.SyncFIFOBuffered(width=self.fmt.queue_entry.size,
                                                           depth=self.queue_depth)
        entry = data.View(self.fmt.queue_entry, queue.w_data)
        m.d.comb += [entry.birth.eq(self.now), entry.measured.eq(self.measure),
                     entry.length.eq(self._length(m, random[-1]) - 1),
                     queue.w_en.eq(create)]
        # A trace's packets come from the driver, one per cycle at most, each with its
        # creation cycle, length and destination.
        m.d.comb += self.trace_ready.eq(self.from_trace & queue.w_rdy)
        with m.If(self.from_trace):
            m.d.comb += [entry.birth.eq(self.trace_birth), entry.length.eq(self.trace_length),
                         entry.route.eq(self.trace_route), queue.w_en.eq(self.trace_valid)]
        create = Mux(self.from_trace, self.trace_valid, create)
        with m.If(create & queue.w_rdy):
            m.d.sync += [self.created.eq(self.created + 1),
                         self.created_measured.eq(self.created_measured + self.measure)]
        with m.If(create & ~queue.w_rdy):
            m.d.sync += self.overflowed.eq(self.overflowed + 1)
        return create, queue, fixed, fixed_index, pairs_left

    def _length(self, m, bits):
        """A packet's length: the class of the first cut above 16 random bits of ``bits``
        (the last class if none), then a length of its range from 16 more."""
        lo, span = Signal(self.fmt.size_bits), Signal(self.fmt.size_bits)
        for k in reversed(range(LENGTH_CLASSES)):
            low, high = getattr(self, f"length_lo_{k}"), getattr(self, f"length_hi_{k}")
            last = k == LENGTH_CLASSES - 1
            with m.If(Const(1, 1) if last else bits[:16] < getattr(self, f"length_cut_{k}")):
                m.d.comb += [lo.eq(low), span.eq(high - low + 1)]
        # (The statements of lower classes come later and win.)
        chosen = Signal(self.fmt.size_bits)
        m.d.comb += chosen.eq(lo + ((bits[16:32] * span) >> 16))
        return chosen

    def _destination(self, m, random, fixed, fixed_index):
        """The destination of the next packet. Returns (it, "it is not the source itself",
        the all-pairs register)."""
        constants, fmt, pattern_is = self.constants, self.fmt, self._pattern_is
        bits = Cat(*random[2:])
        route = fmt.route_layout
        uniform = Signal(route)
        for index, (path, radix) in enumerate(fmt.digits):
            draw = bits[16 * index:16 * (index + 1)]
            m.d.comb += field(uniform, path).eq((draw * radix) >> 16)
        pair = Signal(route, reset_less=True)
        hot = (random[0][16:32] < self.hotspot_rate) & ~fmt.same_terminal(constants.hotspot,
                                                                          constants.own)
        chosen = Signal(route)
        random_choice = Signal()
        with m.If(pattern_is("all-pairs")):
            m.d.comb += chosen.eq(pair)
        with m.Elif(pattern_is("hotspot") & hot):
            m.d.comb += chosen.eq(constants.hotspot)
        with m.Elif(fixed):
            m.d.comb += chosen.eq(constants.fixed[fixed_index])
        with m.Else():
            m.d.comb += [chosen.eq(uniform), random_choice.eq(1)]
        usable = ~(random_choice & fmt.same_terminal(uniform, constants.own))
        return chosen, usable, pair

    def _injection(self, m, create, queue, chosen, usable, pair, pairs_left,
                   broadcast) -> None:
        """Injection. A replayed packet (``replay``: the first packet after reset is sent
        twice, the fault the harness injects to show the sinks catch a duplicate) counts twice
        on ``injected``. ``broadcast``: None (no broadcasts), or "the next packet is a
        broadcast"."""
        constants, fmt, pattern_is = self.constants, self.fmt, self._pattern_is
        busy = Signal()
        replaying = Signal()
        destination = Signal(fmt.route_layout)
        seq = Signal(fmt.seq_bits)
        packet = Signal(fmt.queue_entry)  # the packet being sent: birth, measured, length
        # Per destination, the sequence number of the next packet (kept across resets, as the
        # sinks keep theirs).
        m.submodules.next_seq = next_seq = memory.Memory(shape=fmt.seq_bits,
                                                         depth=fmt.terminals, init=[])
        read, write = next_seq.read_port(domain="comb"), next_seq.write_port()
        taken = data.View(fmt.queue_entry, queue.r_data)
        # A trace's packet goes where the trace says.
        traced = Signal(fmt.route_layout)
        m.d.comb += traced.eq(Mux(self.from_trace, taken.route, chosen))
        chosen, usable = traced, usable | self.from_trace
        m.d.comb += [read.addr.eq(fmt.terminal_of(chosen)), write.addr.eq(read.addr),
                     write.data.eq(read.data + 1)]
        if broadcast is not None:
            broadcast = broadcast & ~self.from_trace
        unicast = Const(1, 1) if broadcast is None else ~broadcast
        take = ~busy & queue.r_rdy & (usable if broadcast is None else usable | broadcast)
        with m.If(take):
            m.d.comb += [queue.r_en.eq(1), write.en.eq(unicast)]
            if not fmt.ordered:
                with m.If(unicast):
                    m.d.sync += self.sent_hash.eq(self.sent_hash + packet_hash(
                        constants.source, read.addr, read.data)[:32])
            m.d.sync += [busy.eq(1), destination.eq(chosen), seq.eq(read.data),
                         packet.eq(taken), replaying.eq(self.replay & ~self.replayed)]
            with m.If(pattern_is("all-pairs") & unicast):
                m.d.sync += pair.eq(self._next_terminal(pair, m))
        sending = Const(0, 1)  # the packet being sent is a broadcast
        if broadcast is not None:
            sending = self._broadcast(m, take & broadcast, destination, seq, busy,
                                      packet.measured)
        with m.If(create & queue.w_rdy & pattern_is("all-pairs")):
            m.d.sync += pairs_left.eq(pairs_left - 1)
        with m.If(ResetSignal()):
            m.d.sync += [pairs_left.eq(fmt.terminals - 1), pair.eq(constants.first_pair)]
        self._flits(m, busy, replaying, destination, seq, packet, sending)

    def _broadcast(self, m, taken, destination, seq, busy, measured) -> None:
        """``taken``: the packet taken from the queue now is a broadcast: its route and the
        next number of the source's broadcast sequence (a register kept across resets, as the
        sinks keep theirs); ``broadcasts`` (and ``broadcasts_measured`` if ``measured``)
        counts it once sent. (Its statements follow the unicast ones, so they win.) Returns
        "the packet being sent is a broadcast"."""
        fmt = self.fmt
        next_broadcast = Signal(fmt.seq_bits, reset_less=True)
        sending = Signal()  # the packet being sent is a broadcast
        with m.If(~busy):
            m.d.sync += sending.eq(taken)
        with m.If(taken):
            m.d.sync += [destination.eq(fmt.broadcast_route()), seq.eq(next_broadcast),
                         next_broadcast.eq(next_broadcast + 1)]
        with m.If(busy & self.ready & self.last & sending):
            m.d.sync += [self.broadcasts.eq(self.broadcasts + 1),
                         self.broadcasts_measured.eq(self.broadcasts_measured + measured)]
        return sending

    def _flits(self, m, busy, replaying, destination, seq, packet, sending) -> None:
        """The flits of the packet being sent (``packet``: its queue entry): the head, then
        the body words; as its head is accepted, a measured unicast packet's time and wait
        into the sums."""
        constants, fmt = self.constants, self.fmt
        index = Signal(fmt.index_bits)
        head = Signal(fmt.head_layout)
        tag = data.View(fmt.payload_layout, head.payload)
        m.d.comb += [head.route.eq(destination), head.source.eq(constants.source),
                     tag.seq.eq(seq), tag.measured.eq(packet.measured),
                     tag.length.eq(packet.length)]
        m.d.comb += [
            self.valid.eq(busy),
            self.first.eq(index == 0),
            self.last.eq(index == packet.length),
        ]
        with m.If(index == 0):
            m.d.comb += self.data.eq(head)
        with m.Else():
            m.d.comb += self.data.eq(body_word(constants.source, seq, index, fmt.flit_width))
        with m.If(~busy):
            m.d.sync += index.eq(0)
        with m.If(busy & self.ready):
            m.d.sync += index.eq(index + 1)
            with m.If((index == 0) & packet.measured & ~sending):
                m.d.sync += [
                    self.injected_time_sum.eq(self.injected_time_sum + self.now),
                    self.queued_sum.eq(self.queued_sum + (self.now - packet.birth)[:32])]
            with m.If(self.last):
                m.d.sync += [busy.eq(0), self.injected.eq(self.injected + 1)]
                with m.If(replaying):
                    m.d.sync += [busy.eq(1), index.eq(0), replaying.eq(0),
                                 self.replayed.eq(1)]

    def _next_terminal(self, route, m):
        """The route of the next terminal number (mod P): a mixed-radix increment."""
        result = Signal(self.fmt.route_layout)
        carry = Const(1)
        for path, radix in self.fmt.digits:
            digit = field(route, path)
            wraps = carry & (digit == radix - 1)
            m.d.comb += field(result, path).eq(Mux(wraps, 0, digit + carry))
            carry = wraps
        return result


class TrafficSink(wiring.Component):
    """One terminal's packet checker; see the module docstring."""

    def __init__(self, fmt: TrafficFormat):
        self.fmt = fmt
        super().__init__({
            "constants": In(fmt.sink_constants), "measure": In(1), "now": In(32),
            "seed": In(32), "refuse_rate": In(RATE_BITS), "stall_start": In(RATE_BITS),
            "stall_max": In(STALL_BITS), "refused": Out(COUNT_WIDTH),
            "valid": In(1), "ready": Out(1), "first": In(1), "last": In(1),
            # (The abort mark; a port named ``abort`` would clash with C's in Verilator's model.)
            "cut_short": In(1),
            "data": In(fmt.flit_width),
            "received": Out(COUNT_WIDTH), "received_measured": Out(COUNT_WIDTH),
            "flits_measured": Out(COUNT_WIDTH), "ejected_time_sum": Out(SUM_WIDTH),
            "wrong_destination": Out(COUNT_WIDTH), "out_of_order": Out(COUNT_WIDTH),
            "corrupt": Out(COUNT_WIDTH), "framing": Out(COUNT_WIDTH),
            "aborted": Out(COUNT_WIDTH),
            "received_hash": Out(32),
            **({"copies": Out(COUNT_WIDTH)} if fmt.broadcast else {}),
        })

    def elaborate(self, platform):
        m, fmt = Module(), self.fmt
        # Per source, the sequence number of the next packet expected (kept across resets).
        m.submodules.expected = expected = memory.Memory(shape=fmt.seq_bits,
                                                         depth=fmt.terminals, init=[])
        read, write = expected.read_port(domain="comb"), expected.write_port()
        self._back_pressure(m)
        with m.If(self.valid & ~self.ready):
            m.d.sync += self.refused.eq(self.refused + 1)
        # A flit moves when the network offers it and the sink takes it.
        valid = self.valid & self.ready

        head = data.View(fmt.head_layout, self.data)
        tag = data.View(fmt.payload_layout, head.payload)
        seq = tag.seq
        m.d.comb += [read.addr.eq(head.source), write.addr.eq(head.source),
                     write.data.eq(seq + 1)]
        in_order = seq == read.data if fmt.ordered else Const(1, 1)
        right = fmt.same_terminal(head.route, self.constants.own)
        # A broadcast's copy: its own sequence, its own checks (see the module docstring).
        copy, in_order, right = (self._copy_checks(m, head, seq, valid & self.first, in_order,
                                                   right, write)
                                 if fmt.broadcast else (None, in_order, right))
        is_copy = head.route.broadcast if fmt.broadcast else Const(0, 1)

        with m.If(valid & self.measure):
            m.d.sync += self.flits_measured.eq(self.flits_measured + 1)
        packet = Signal(data.StructLayout({
            "open": 1, "index": fmt.index_bits, "length": fmt.length_bits,
            "source": fmt.source_width, "seq": fmt.seq_bits, "measured": 1}))
        with m.If(valid & self.first):
            if copy is None:
                m.d.comb += write.en.eq(1)
            m.d.sync += [
                packet.open.eq(~self.last), packet.index.eq(1), packet.length.eq(tag.length),
                packet.source.eq(head.source), packet.seq.eq(seq),
                packet.measured.eq(tag.measured),
                # A head inside a packet, or a head whose tail mark its length does not put.
                self.framing.eq(self.framing + (packet.open | (self.last != (tag.length == 0)))),
                self.wrong_destination.eq(self.wrong_destination + ~right),
                self.out_of_order.eq(self.out_of_order + ~in_order),
            ]
            with m.If(tag.measured & ~is_copy):
                m.d.sync += self.ejected_time_sum.eq(self.ejected_time_sum + self.now)
            with m.If(self.last):
                self._count(m, is_copy, tag.measured)
            if not fmt.ordered:
                own = fmt.terminal_of(self.constants.own)
                hashed = self.received_hash + packet_hash(head.source, own, seq)[:32]
                m.d.sync += self.received_hash.eq(Mux(is_copy, self.received_hash, hashed))
        with m.Elif(valid):
            with m.If(~packet.open):
                m.d.sync += self.framing.eq(self.framing + 1)
            with m.Else():
                m.d.sync += packet.index.eq(packet.index + 1)
                with m.If(self.last != (packet.index == packet.length)):
                    m.d.sync += self.framing.eq(self.framing + 1)
                with m.If(self.last):
                    m.d.sync += packet.open.eq(0)
                    self._count(m, copy if copy is not None else Const(0, 1), packet.measured)
                word = body_word(packet.source, packet.seq, packet.index, fmt.flit_width)
                m.d.sync += self.corrupt.eq(self.corrupt + (self.data != word))
        return m

    def _count(self, m, copy, measured) -> None:
        """A packet's last flit: a packet cut short on its way (``cut_short``, its abort
        mark) counts on ``aborted``, else a unicast packet on ``received`` (and
        ``received_measured``), a broadcast's copy (``copy``) on ``copies``."""
        kept = ~self.cut_short
        m.d.sync += [self.aborted.eq(self.aborted + self.cut_short),
                     self.received.eq(self.received + (kept & ~copy)),
                     self.received_measured.eq(self.received_measured
                                               + (kept & measured & ~copy))]
        if self.fmt.broadcast:
            m.d.sync += self.copies.eq(self.copies + (kept & copy))

    def _copy_checks(self, m, head, seq, arrives, in_order, right, write):
        """With broadcasts: the register ``copy`` (the packet being received is a broadcast's
        copy), and the order and destination checks of the head ``head`` arriving now
        (``arrives``) either way: a copy's sequence number is the next of its source's
        broadcasts (one memory entry per source, kept across resets), its PE the sink's own
        (the unicast memory's ``write`` is left alone)."""
        fmt = self.fmt
        m.submodules.expected_broadcast = expected = memory.Memory(
            shape=fmt.seq_bits, depth=fmt.terminals, init=[])
        read, write_copy = expected.read_port(domain="comb"), expected.write_port()
        is_copy = head.route.broadcast
        m.d.comb += [read.addr.eq(head.source), write_copy.addr.eq(head.source),
                     write_copy.data.eq(seq + 1), write_copy.en.eq(arrives & is_copy),
                     write.en.eq(arrives & ~is_copy)]
        copy = Signal()
        with m.If(arrives):
            m.d.sync += copy.eq(is_copy)
        at_pe = Cat(Const(1, 1), *[field(head.route, path) == field(self.constants.own, path)
                                   for path in fmt.broadcast_digits]).all()
        return copy, Mux(is_copy, seq == read.data, in_order), Mux(is_copy, at_pe, right)

    def _back_pressure(self, m) -> None:
        """``ready``: refused with probability ``refuse_rate``/65536 each cycle, and during a
        stall burst (see the module docstring)."""
        terminal = self.constants.terminal
        lanes = []
        for lane in range(2):
            state = Signal(32, name=f"random{lane}", reset_less=True)
            mixed = (self.seed ^ ((terminal * 0x85EBCA77)[:32] + 0x3C6EF372 * (lane + 1))
                     [:32])[:32]
            m.d.sync += state.eq(Mux(ResetSignal(), Mux(mixed == 0, 0x3C6EF372, mixed),
                                     _xorshift(state)))
            lanes.append(state)
        stall_left = Signal(STALL_BITS)
        starts = (self.stall_max != 0) & (lanes[1][:RATE_BITS] < self.stall_start)
        length = ((lanes[1][RATE_BITS:] * self.stall_max) >> RATE_BITS) + 1
        with m.If(stall_left != 0):
            m.d.sync += stall_left.eq(stall_left - 1)
        with m.Elif(starts):
            m.d.sync += stall_left.eq(length)
        m.d.comb += self.ready.eq((stall_left == 0) & (lanes[0][:RATE_BITS] >= self.refuse_rate))


class TrafficHarness(wiring.Component):
    """A network with a :class:`TrafficSource` and a :class:`TrafficSink` on every terminal.

    Parameters:
        network: the network top (only its signature is used: it is instantiated as module
            ``modules["network"]``).
        fmt: the :class:`TrafficFormat`.
        statics: per terminal, ``(source constants, sink constants)`` values (dicts for the format's
            ``source_constants`` and ``sink_constants``), from :func:`terminal_constants`.
        modules: Verilog module names of ``"network"``, ``"source"`` and ``"sink"``.

    Ports: the controls ``enable``, ``measure``, ``rate``, ``pattern``, ``hotspot_rate``,
    ``seed`` (sampled at reset), ``onoff``, ``turn_on``, ``turn_off`` (the injection process,
    see :class:`TrafficSource`), ``length_lo_<k>``, ``length_hi_<k>``, ``length_cut_<k>``
    (the mix of packet lengths), ``broadcast_rate`` (with broadcasts), ``refuse_rate``,
    ``stall_start``, ``stall_max`` (the sinks' back-pressure, see :class:`TrafficSink`) and
    ``fault`` (an index of :data:`FAULTS`); the sums of every terminal's counters
    (:meth:`sums`) plus ``now`` (the cycle count), ``drop_count`` and
    ``faults`` (faults injected since reset: 0 or 1); ``link_counts_<k>``, the network's link
    counters (:mod:`twinnet.hdl.link_counter`), when the network has them.
    """

    SUMS = ("created", "created_measured", "overflowed", "injected", "received",
            "received_measured", "flits_measured", "injected_time_sum", "queued_sum",
            "ejected_time_sum", "wrong_destination", "out_of_order", "corrupt", "framing",
            "aborted", "sent_hash", "received_hash", "refused")
    #: The controls every source takes, as the harness's inputs of the same name.
    LENGTH_CONTROLS = tuple([f"length_{bound}_{k}" for k in range(LENGTH_CLASSES)
                             for bound in ("lo", "hi")]
                            + [f"length_cut_{k}" for k in range(LENGTH_CLASSES)])
    #: The sums added with broadcasts (:attr:`TrafficFormat.broadcast`).
    BROADCAST_SUMS = ("broadcasts", "broadcasts_measured", "copies")

    @classmethod
    def sums(cls, fmt: TrafficFormat) -> tuple[str, ...]:
        """The counters summed over the terminals for format ``fmt``."""
        return cls.SUMS + (cls.BROADCAST_SUMS if fmt.broadcast else ())

    def __init__(self, network: Network, fmt: TrafficFormat, statics, modules: dict):
        self.network, self.fmt, self.statics, self.modules = network, fmt, statics, modules
        self.source, self.sink = TrafficSource(fmt), TrafficSink(fmt)
        members = {"enable": In(1), "measure": In(1), "rate": In(RATE_BITS),
                   "pattern": In(4), "hotspot_rate": In(RATE_BITS), "seed": In(32),
                   "onoff": In(1), "turn_on": In(RATE_BITS), "turn_off": In(RATE_BITS),
                   "refuse_rate": In(RATE_BITS), "stall_start": In(RATE_BITS),
                   "stall_max": In(STALL_BITS),
                   "fault": In(range(len(FAULTS))), "faults": Out(2),
                   "now": Out(32), "drop_count": Out(DROP_COUNT_WIDTH),
                   **{name: In(self.source.signature.members[name].shape)
                      for name in self.LENGTH_CONTROLS}}
        if fmt.broadcast:
            members["broadcast_rate"] = In(RATE_BITS + 1)
        members.update({name: Out(SUM_WIDTH) for name in self.sums(fmt)})
        #: The link counters' ports (none when the network has no link counters).
        self.link_ports = [name for name in network.signature.members
                           if name.startswith("link_counts_")]
        members.update({name: network.signature.members[name] for name in self.link_ports})
        super().__init__(members)

    def elaborate(self, platform):
        m, fmt = Module(), self.fmt
        m.d.sync += self.now.eq(self.now + 1)
        net = instantiate(m, "network", self.modules["network"], self.network)
        m.d.comb += self.drop_count.eq(net.drop_count)
        for name in self.link_ports:
            m.d.comb += getattr(self, name).eq(getattr(net, name))
        sources, sinks = [], []
        for terminal, (source_constants, sink_constants) in enumerate(self.statics):
            source = instantiate(m, f"source{terminal}", self.modules["source"], self.source)
            sink = instantiate(m, f"sink{terminal}", self.modules["sink"], self.sink)
            m.d.comb += [
                source.constants.eq(fmt.source_constants.const(source_constants)),
                sink.constants.eq(fmt.sink_constants.const(sink_constants)),
                source.enable.eq(self.enable), source.measure.eq(self.measure),
                source.rate.eq(self.rate), source.pattern.eq(self.pattern),
                source.hotspot_rate.eq(self.hotspot_rate), source.seed.eq(self.seed),
                source.now.eq(self.now), sink.measure.eq(self.measure), sink.now.eq(self.now),
                source.onoff.eq(self.onoff), source.turn_on.eq(self.turn_on),
                source.turn_off.eq(self.turn_off), sink.seed.eq(self.seed),
                sink.refuse_rate.eq(self.refuse_rate), sink.stall_start.eq(self.stall_start),
                sink.stall_max.eq(self.stall_max),
                source.replay.eq((self.fault == FAULTS.index("duplicate")) & (terminal == 0)),
                source.ready.eq(net.pe_in_ready[terminal]),
                sink.valid.eq(net.pe_out_valid[terminal]),
                sink.first.eq(net.pe_out_first[terminal]),
                sink.last.eq(net.pe_out_last[terminal]),
                sink.cut_short.eq(net.pe_out_abort[terminal]),
                *(getattr(source, name).eq(getattr(self, name))
                  for name in self.LENGTH_CONTROLS),
            ]
            if fmt.broadcast:
                m.d.comb += source.broadcast_rate.eq(self.broadcast_rate)
            ejected = net.pe_out_data[terminal]
            if terminal == 0:
                ejected, damaged = self._damage(m, ejected,
                                                net.pe_out_valid[0] & sink.ready,
                                                net.pe_out_first[0])
            m.d.comb += sink.data.eq(ejected)
            sources.append(source)
            sinks.append(sink)
        # Each network input is assigned once, from the concatenation of every terminal's
        # element in terminal order (the bus's ``ArrayLayout``, ``Network.pe_bus``): Amaranth
        # checks every bit of a statement's target, so a statement per element would cost the
        # width of the whole bus each time (quadratic in the terminals).
        m.d.comb += [net.pe_in_valid.eq(Cat(source.valid for source in sources)),
                     net.pe_in_first.eq(Cat(source.first for source in sources)),
                     net.pe_in_last.eq(Cat(source.last for source in sources)),
                     net.pe_in_data.eq(Cat(source.data for source in sources)),
                     net.pe_out_ready.eq(Cat(sink.ready for sink in sinks))]
        for name in self.sums(fmt):
            parts = sources if hasattr(sources[0], name) else sinks
            m.d.comb += getattr(self, name).eq(
                sum_tree([getattr(part, name) for part in parts], SUM_WIDTH))
        m.d.comb += self.faults.eq(sources[0].replayed + damaged)
        return m

    def _damage(self, m, flit, valid, first):
        """Terminal 0's ejected flits, with the ``misroute`` or ``corrupt`` fault applied to
        the first packet after reset when ``fault`` asks for it; also the signal that says it
        was applied."""
        fmt = self.fmt
        done = Signal()
        position = Signal(range(fmt.max_packet_length + 1))  # of the flit in its packet
        with m.If(valid):
            m.d.sync += position.eq(Mux(first, 1, position + 1))
        damaged = Signal(fmt.flit_width)
        rewritten = data.View(fmt.head_layout, damaged)
        m.d.comb += damaged.eq(flit)
        with m.If(valid & ~done):
            with m.If(first & (self.fault == FAULTS.index("misroute"))):
                m.d.comb += rewritten.route.eq(fmt.route_layout.const(fmt.route_of(1)))
                m.d.sync += done.eq(1)
            with m.If(~first & (position == 1) & (self.fault == FAULTS.index("corrupt"))):
                m.d.comb += damaged.eq(flit ^ 1)
                m.d.sync += done.eq(1)
        return damaged, done


def terminal_constants(fmt: TrafficFormat, *, hotspot: int = 0, permutation_seed: int = 0):
    """Per terminal, the (source, sink) static values: its number and route, the destination
    of each fixed pattern (:func:`twinnet.model.traffic.fixed_destination`), the hot spot's
    route and the first all-pairs destination."""
    from twinnet.model.traffic import fixed_destination

    terminals = fmt.terminals
    constants = []
    for terminal in range(terminals):
        own = fmt.route_of(terminal)
        fixed = [fixed_destination(name, terminals, terminal, seed=permutation_seed)
                 for name in FIXED]
        source = {"source": terminal, "own": own,
                  "fixed_valid": sum(1 << i for i, d in enumerate(fixed) if d is not None),
                  "fixed": [fmt.route_of(d) if d is not None else own for d in fixed],
                  "hotspot": fmt.route_of(hotspot),
                  "first_pair": fmt.route_of((terminal + 1) % terminals)}
        constants.append((source, {"own": own, "terminal": terminal}))
    return constants
