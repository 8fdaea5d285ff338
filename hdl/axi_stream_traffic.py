"""Frames made and checked in hardware through a network's AXI4-Stream interfaces: the board
self-test's traffic when the network is built with ``--ni axi-stream``.

:class:`FrameTraffic` instantiates the AXI4-Stream top (``<network>_axis``,
:class:`twinnet.hdl.axi_stream.AxiStreamNetwork`) and puts on every PE a
:class:`FrameSource` on its slave and a :class:`FrameChecker` on its master.

**A frame** from PE ``s`` to PE ``d`` has 1 to the interfaces' longest frame of beats, all
bytes kept. Its first beat carries, low bits first, ``d``, the frame's beat count and ``seq``,
the number of frames ``s`` sent to ``d`` before it (modulo ``2^k``, ``k`` the rest of the
beat's bits, at most 16); beat ``i`` >= 1 carries :func:`pattern` of ``(seq, i, s)``.

**A source** draws, in every cycle it is idle and enabled, whether to start a frame
(``rate`` in units of 2^-16 per cycle), its destination (uniform over the PEs, itself
included) and its length (uniform over 1 to the longest), from an xorshift generator seeded
by its PE number; it counts a frame ``created`` when it draws it and ``injected`` once its
last beat is taken.

**A checker** takes beats with back-pressure (``tready`` low in one cycle of four, drawn from
its own generator) and counts an error for a beat that is not what the frame's sender made:
a first beat naming another PE, a frame whose ``tlast`` is not on its counted last beat, a
beat whose data differs from the pattern or whose ``tkeep`` is not all ones, and, where the
routing keeps a pair's frames in order (``ordered``), a ``seq`` other than the next from that
sender. It counts each frame ``received`` at its ``tlast`` and each beat in ``flits``.

``errors`` adds the checkers' errors, the interfaces' own counters (bad destinations and
oversize frames, which a correct source never makes) and the network's ``drop_count``.
"""

from amaranth.hdl import Array, Cat, ClockSignal, Const, Module, Mux, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from twinnet.model.widths import index_width

from .axi_stream import ERRORS, AxiStreamFormat
from .network import instantiate

#: The most bits of a frame's ``seq``.
MAX_SEQ_BITS = 16
#: The fewest bits of ``seq`` a first beat must hold (else the beat is too narrow).
MIN_SEQ_BITS = 4
#: The most PEs: every checker keeps the next ``seq`` of every sender.
MAX_PES = 16
#: Faults a source may inject once (to see the self-test fail): ``corrupt`` makes PE 0 flip
#: the lowest bit of the second frame's first beat it sends (the frame names another PE).
FRAME_FAULTS = ("none", "corrupt")


def _xorshift(state):
    """The next state of a 32-bit xorshift generator (Marsaglia's 13, 17, 5)."""
    a = state ^ (state << 13)[:32]
    b = a ^ (a >> 17)
    return b ^ (b << 5)[:32]


def _random(m, seed: int):
    """A 32-bit xorshift generator's state, stepping every cycle from ``seed``."""
    state = Signal(32, init=seed & 0xFFFFFFFF)
    m.d.sync += state.eq(_xorshift(state))
    return state


def pattern(seq, index, source, width: int):
    """Beat ``index`` (>= 1) of frame ``seq`` from PE ``source``: their bits repeated over
    ``width`` bits, inverted every other copy."""
    word = Cat(index, seq, source)
    copies = -(-width // len(word))
    return Cat(*(word if k % 2 == 0 else ~word for k in range(copies)))[:width]


class FrameLayout:
    """Where a first beat keeps its fields, for ``pes`` PEs, frames of up to ``max_beats``
    beats of ``data_bytes`` bytes. Raises ``ValueError`` when the beat cannot hold them."""

    def __init__(self, pes: int, max_beats: int, data_bytes: int):
        self.pes = pes
        self.dest_bits = max(1, index_width(pes))
        self.beats_bits = index_width(max_beats + 1)
        self.data_bits = 8 * data_bytes
        self.seq_bits = min(MAX_SEQ_BITS, self.data_bits - self.dest_bits - self.beats_bits)
        if self.seq_bits < MIN_SEQ_BITS:
            raise ValueError(f"the self-test's frames need beats of at least "
                             f"{self.dest_bits + self.beats_bits + MIN_SEQ_BITS} bits (a PE "
                             f"number, a beat count and a sequence number), not "
                             f"{self.data_bits}: give --ni-bytes "
                             f"{-(-(self.dest_bits + self.beats_bits + MIN_SEQ_BITS) // 8)} or "
                             f"more")
        if self.pes > MAX_PES:
            raise ValueError(f"the self-test's frame checkers keep a sequence number per "
                             f"sender: at most {MAX_PES} PEs through the AXI4-Stream "
                             f"interfaces, not {self.pes}")

    def first(self, dest, beats, seq):
        return Cat(dest[:self.dest_bits], beats[:self.beats_bits], seq[:self.seq_bits])

    def fields(self, data):
        """``dest``, ``beats`` and ``seq`` of a first beat's ``data``."""
        beats_at = self.dest_bits + self.beats_bits
        return (data[:self.dest_bits], data[self.dest_bits:beats_at],
                data[beats_at:beats_at + self.seq_bits])


class FrameSource(wiring.Component):
    """A PE's frames into its slave (see the module docstring)."""

    def __init__(self, fmt: AxiStreamFormat, layout: FrameLayout, pe: int, *,
                 fault: str = "none"):
        self.fmt, self.layout, self.pe, self.fault = fmt, layout, pe, fault
        super().__init__({
            "s_axis": Out(fmt.signature(dest=True)), "enable": In(1), "rate": In(16),
            "created": Out(32), "injected": Out(32)})

    def elaborate(self, platform):
        m, layout = Module(), self.layout
        fmt, axis = self.fmt, self.s_axis
        state = _random(m, 0x9E3779B9 ^ (self.pe * 0x2545F491 + 1))
        seqs = Array(Signal(layout.seq_bits, name=f"seq_to_{d}") for d in range(layout.pes))
        sending = Signal()
        dest = Signal(layout.dest_bits)
        beats = Signal(range(fmt.max_beats + 1))
        index = Signal(range(fmt.max_beats + 1))
        seq = Signal(layout.seq_bits)
        # A uniform draw over n values from 8 random bits: (bits * n) >> 8.
        drawn_dest = (state[16:24] * layout.pes)[8:]
        drawn_beats = (state[24:32] * fmt.max_beats)[8:] + 1
        with m.If(~sending & self.enable & (state[:16] < self.rate)):
            m.d.sync += [sending.eq(1), dest.eq(drawn_dest), beats.eq(drawn_beats),
                         index.eq(0), seq.eq(seqs[drawn_dest]),
                         self.created.eq(self.created + 1)]
        data = Mux(index == 0, layout.first(dest, beats, seq),
                   pattern(seq, index, Const(self.pe, layout.dest_bits), layout.data_bits))
        if self.fault == "corrupt" and self.pe == 0:
            frames = Signal(2)  # frames sent, up to 2
            data = data ^ ((index == 0) & (frames == 1))
            with m.If(axis.tvalid & axis.tready & axis.tlast & (frames != 2)):
                m.d.sync += frames.eq(frames + 1)
        last = index == beats - 1
        m.d.comb += [axis.tvalid.eq(sending), axis.tdata.eq(data),
                     axis.tkeep.eq((1 << fmt.data_bytes) - 1), axis.tlast.eq(last),
                     axis.tdest.eq(dest)]
        with m.If(axis.tvalid & axis.tready):
            m.d.sync += index.eq(index + 1)
            with m.If(last):
                m.d.sync += [sending.eq(0), seqs[dest].eq(seq + 1),
                             self.injected.eq(self.injected + 1)]
        return m


class FrameChecker(wiring.Component):
    """A PE's frames out of its master, checked (see the module docstring)."""

    def __init__(self, fmt: AxiStreamFormat, layout: FrameLayout, pe: int, *, ordered: bool):
        self.fmt, self.layout, self.pe, self.ordered = fmt, layout, pe, ordered
        super().__init__({"m_axis": In(fmt.signature(dest=False)), "received": Out(32),
                          "flits": Out(32), "errors": Out(32)})

    def elaborate(self, platform):
        m, layout = Module(), self.layout
        fmt, axis = self.fmt, self.m_axis
        state = _random(m, 0x6A09E667 ^ (self.pe * 0x9E3779B1 + 7))
        m.d.comb += axis.tready.eq(state[:2] != 0)
        expected = Array(Signal(layout.seq_bits, name=f"seq_from_{s}")
                         for s in range(layout.pes))
        inside = Signal()  # past a frame's first beat
        source = Signal(layout.dest_bits)
        beats = Signal(range(fmt.max_beats + 1))
        index = Signal(range(fmt.max_beats + 1))
        seq = Signal(layout.seq_bits)
        sender = axis.tid[:layout.dest_bits]
        dest, counted, got_seq = layout.fields(axis.tdata)
        keep_ok = axis.tkeep == (1 << fmt.data_bytes) - 1
        wrong = Signal()
        with m.If(~inside):
            bad_seq = (got_seq != expected[sender]) if self.ordered else Const(0)
            m.d.comb += wrong.eq((dest != self.pe) | (counted == 0) | (counted > fmt.max_beats)
                                 | bad_seq | (axis.tlast != (counted == 1)) | ~keep_ok)
        with m.Else():
            m.d.comb += wrong.eq(
                (axis.tdata != pattern(seq, index, source, layout.data_bits))
                | (axis.tlast != (index == beats - 1)) | ~keep_ok)
        with m.If(axis.tvalid & axis.tready):
            m.d.sync += self.flits.eq(self.flits + 1)
            with m.If(wrong):
                m.d.sync += self.errors.eq(self.errors + 1)
            with m.If(~inside):
                m.d.sync += [source.eq(sender), beats.eq(counted), seq.eq(got_seq),
                             index.eq(1), expected[sender].eq(got_seq + 1)]
            with m.Else():
                m.d.sync += index.eq(index + 1)
            m.d.sync += inside.eq(~axis.tlast)
            with m.If(axis.tlast):
                m.d.sync += self.received.eq(self.received + 1)
        return m


class FrameTraffic(wiring.Component):
    """The AXI4-Stream top (instantiated as Verilog module ``module``; ``top`` is its
    :class:`twinnet.hdl.axi_stream.AxiStreamNetwork`, for its signature and format) with a
    :class:`FrameSource` and a :class:`FrameChecker` on every PE. Per-PE clocks, where the
    interfaces have them, are the network's.

    Ports: ``enable`` (sources start frames), ``rate`` (per cycle, in 2^-16), and the sums
    ``created``, ``injected``, ``received``, ``flits`` (beats received) and ``errors``.
    """

    def __init__(self, top, module: str, *, ordered: bool, fault: str = "none"):
        if fault not in FRAME_FAULTS:
            raise ValueError(f"fault must be one of {', '.join(FRAME_FAULTS)} through the "
                             f"AXI4-Stream interfaces, not {fault!r}")
        self.top, self.module, self.ordered, self.fault = top, module, ordered, fault
        fmt = top.fmt
        self.layout = FrameLayout(fmt.codec.terminals, fmt.max_beats, fmt.data_bytes)
        super().__init__({"enable": In(1), "rate": In(16),
                          **{name: Out(32) for name in ("created", "injected", "received",
                                                        "flits", "errors")}})

    def elaborate(self, platform):
        m, layout = Module(), self.layout
        net = instantiate(m, "network", self.module, self.top)
        totals = {name: [] for name in ("created", "injected", "received", "flits", "errors")}
        totals["errors"].append(net.drop_count)
        for pe in range(layout.pes):
            fmt = self.top.fmt
            source = m.submodules[f"source_{pe}"] = FrameSource(fmt, layout, pe,
                                                                fault=self.fault)
            checker = m.submodules[f"checker_{pe}"] = FrameChecker(fmt, layout, pe,
                                                                   ordered=self.ordered)
            m.d.comb += [source.enable.eq(self.enable), source.rate.eq(self.rate)]
            if self.top.interface.separate_clock:
                m.d.comb += [getattr(net, f"ni_{pe}_clk").eq(ClockSignal()),
                             getattr(net, f"ni_{pe}_rst").eq(ResetSignal())]
            for side, port in (("s", source.s_axis), ("m", checker.m_axis)):
                for name, member in port.signature.members.items():
                    outer = getattr(net, f"{side}_axis_{pe}_{name}")
                    if member.flow == Out:  # driven by the source or checker
                        m.d.comb += outer.eq(getattr(port, name))
                    else:
                        m.d.comb += getattr(port, name).eq(outer)
            totals["created"].append(source.created)
            totals["injected"].append(source.injected)
            for name in ("received", "flits", "errors"):
                totals[name].append(getattr(checker, name))
            totals["errors"] += [getattr(net, f"ni_{pe}_{name}") for name in ERRORS]
        for name, values in totals.items():
            m.d.comb += getattr(self, name).eq(sum(values))
        return m
