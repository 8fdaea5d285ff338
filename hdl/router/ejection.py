"""The ejection merger: a PE port's ejection lanes onto its one stream, packet by packet."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib.wiring import In, Out

from twinnet.model import checks

from .. import flit
from ..checked import CheckedComponent
from ..onehot import lowest


class EjectionMerger(CheckedComponent):
    """Several ejection lanes of one PE port merged onto the PE's stream.

    Each lane is the ejection stream of an output unit whose buffer holds one packet
    (:class:`~.output_unit.OutputUnit` with several lanes), so that packets from several input
    VCs eject in the same cycle. The merger passes whole packets, one after the other, in the
    order their head flits reached the lanes' fronts (lanes whose heads arrived in the same
    cycle: the lower lane first): a packet that left its input VC before another started keeps
    its place, so a pair whose packets share an input VC stays in order. A packet streams as
    its flits arrive; when its last flit leaves, the next one starts in the following cycle.

    Parameters:
        flit_width: bits of a flit's data.
        lanes: ejection lanes, 2 to 8 (:data:`twinnet.model.sizes.MAX_EJECTION_LANES`).

    Ports:
        lanes: In(pe_out_signature).array(lanes) — the lanes' streams (the merger is their
            sink).
        out: Out(pe_out_signature) — the PE's stream.

    Its registers, for the formal proofs to relate to the lanes: ``waiting`` (bit i: lane i's
    packet has reached its front and not started), ``streaming`` (one-hot: the lane whose
    packet is under way) and ``before[i, j]`` (i < j: lane i's packet reached its front
    first; meaningful while both wait).
    """

    @classmethod
    def check(cls, flit_width: int, lanes: int):
        from twinnet.model.sizes import MAX_EJECTION_LANES

        checks.check_int("flit_width", flit_width, minimum=1)
        checks.check_int("lanes", lanes, minimum=2, maximum=MAX_EJECTION_LANES)

    def __init__(self, flit_width: int, lanes: int):
        self.flit_width, self.lane_count = flit_width, lanes
        stream = flit.pe_out_signature(flit_width)
        super().__init__({"lanes": In(stream).array(lanes), "out": Out(stream)})
        self.waiting = Signal(lanes, name="waiting")
        self.streaming = Signal(lanes, name="streaming")
        self.before = {(i, j): Signal(name=f"before_{i}_{j}")
                       for i in range(lanes) for j in range(i + 1, lanes)}

    def elaborate(self, platform):
        m = Module()
        count = self.lane_count
        heads = Cat(lane.valid & lane.payload.first for lane in self.lanes)
        waiting, streaming, before = self.waiting, self.streaming, self.before
        arrived = Signal(count, name="arrived")
        m.d.comb += arrived.eq(heads & ~waiting & ~streaming)
        chosen = Signal(count, name="chosen")
        m.d.comb += chosen.eq(self._chosen(arrived))
        moved = self._pass(m, chosen)
        started = Mux(moved, chosen, 0)
        m.d.sync += [streaming.eq(Mux(moved & self.out.payload.last, 0,
                                      Mux(moved, chosen, streaming))),
                     waiting.eq((waiting | arrived) & ~started)]
        for (i, j), bit in before.items():
            with m.If(arrived[i] & arrived[j]):
                m.d.sync += bit.eq(1)
            with m.Elif(arrived[j]):
                m.d.sync += bit.eq(waiting[i])
            with m.Elif(arrived[i]):
                m.d.sync += bit.eq(~waiting[j])
        return m

    def _chosen(self, arrived):
        """The lane passed now (one-hot): the one whose packet is under way, else
        :meth:`_next`."""
        return Mux(self.streaming.any(), self.streaming, self._next(arrived))

    def _next(self, arrived):
        """With no packet under way, the lane to start (one-hot): the oldest waiting packet,
        with none waiting one that arrives now (the lowest lane)."""
        count, waiting, before = self.lane_count, self.waiting, self.before

        def older(i: int, j: int):
            return before[i, j] if i < j else ~before[j, i]

        oldest = lowest(Cat(
            waiting[i] & ~Cat(waiting[j] & older(j, i) for j in range(count) if j != i).any()
            for i in range(count)), count)
        return Mux(waiting.any(), oldest, lowest(arrived, count))

    def _pass(self, m, chosen):
        """The ``chosen`` lane's flits onto the PE's stream; returns "a flit moves now"."""
        out, lanes = self.out, self.lanes
        payload = lanes[0].payload
        for k in range(1, self.lane_count):
            payload = Mux(chosen[k], lanes[k].payload, payload)
        valid = Cat(chosen[k] & lanes[k].valid for k in range(self.lane_count)).any()
        m.d.comb += [out.valid.eq(valid), out.payload.eq(payload)]
        m.d.comb += [lanes[k].ready.eq(chosen[k] & out.ready) for k in range(self.lane_count)]
        return valid & out.ready
