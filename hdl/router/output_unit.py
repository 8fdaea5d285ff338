"""The output unit: one output port's credits, its free VCs, and the link register or the
ejection buffer."""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .. import flit
from ..flit_buffer import FlitBuffer
from .stage_config import StageConfig


class OutputUnit(wiring.Component):
    """Output port ``port_index`` of a router.

    Per output VC it keeps a credit counter: the free slots of the downstream buffer (of the
    ejection buffer toward a PE) less L, so that "room for a whole packet" is the counter's
    sign bit. Credits for a whole packet are taken when the VC is allocated; flits then need
    no per-flit credit check, and the counter never goes below -L.

    Virtual cut-through: a VC is free only with room for a whole packet, and free for a bubble
    move only with room for two (003 §6.3.2), so that a ring never fills. In the compact
    router packets may interleave on an output, so a VC is also busy from its allocation until
    its packet's last flit has left. The split router holds an output for a whole packet
    (packets never interleave on one of its VCs) and takes an allocated VC's credits one
    cycle after the allocation; with one-flit packets the output may be allocated again in
    that cycle, so the VC taken in that cycle counts as busy.

    Parameters:
        stage: the router's :class:`StageConfig`.
        port_index: the port.
        lane: the ejection lane of a PE port (:attr:`RouterConfig.outputs`): with more than
            one lane, each is a unit of its own whose ejection buffer holds one packet.

    Ports:
        port: Out(LinkSignature) on a link port (flits out, credits in), Out(pe_out_signature)
            on a PE port (the ejection stream).
        flit: In(valid and crossbar layout) — the flit leaving this cycle, on VC ``vc``.
        take: In(max VCs) — one-hot: the output VC whose L credits are taken this cycle.
        free_one, free_two: Out(max VCs) — bit w: VC w is free with room for one / two whole
            packets.
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
                          "take": In(vmax), "free_one": Out(vmax), "free_two": Out(vmax),
                          "busy": Out(vmax)})

    def elaborate(self, platform):
        m = Module()
        config = self.stage.config
        port = config.ports[self.port_index]
        length = config.packet_length
        returned = self._drive(m)
        for w in range(port.output_vc_count):
            spare = self._credit_counter(m, w, returned[w])
            busy = self._busy(m, w)
            m.d.comb += [self.busy[w].eq(busy), self.free_one[w].eq(~busy & (spare >= 0)),
                         self.free_two[w].eq(~busy & (spare >= length))]
        return m

    def _credit_counter(self, m, w: int, returned):
        """Output VC ``w``'s credit counter (see the class docstring), given ``returned``, "a
        credit came back this cycle"."""
        length, depth = self.stage.config.packet_length, self.depth
        spare = Signal(range(-length, depth - length + 1), init=depth - length,
                       name=f"spare_credits_{w}")
        # Both sums are formed before the late allocation result picks one.
        m.d.sync += spare.eq(Mux(self.take[w], spare + returned - length, spare + returned))
        return spare

    @property
    def depth(self) -> int:
        """Flits of the buffer downstream: the partner's input VC buffer, or the ejection
        buffer (one packet per lane where a PE port has several)."""
        config = self.stage.config
        port = config.ports[self.port_index]
        if port.is_pe and len(config.lanes_of(self.port_index)) > 1:
            return config.packet_length
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
                         stream_out.valid.eq(eject.r_rdy), stream_out.payload.eq(eject.r_data),
                         eject.r_en.eq(stream_out.ready)]
            return [eject.r_rdy & stream_out.ready]
        link = self.port
        m.d.sync += [link.flit.valid.eq(sent.valid), link.flit.payload.data.eq(sent.payload.data),
                     link.flit.payload.first.eq(sent.payload.first),
                     link.flit.payload.last.eq(sent.payload.last),
                     link.flit.payload.vc.eq(sent.payload.vc)]
        return [link.credit.valid & (link.credit.payload == w)
                for w in range(port.output_vc_count)]

    def _busy(self, m, w: int):
        """Output VC ``w`` carries a packet that may still have flits to come (see the class
        docstring)."""
        port = self.stage.config.ports[self.port_index]
        if self.stage.split:
            return self.take[w] if self.stage.config.packet_length == 1 else Const(0, 1)
        busy = Signal(name=f"busy_{w}")
        with m.If(self.take[w]):
            m.d.sync += busy.eq(1)
        # (A single-VC output, e.g. a PE's, carries broadcast copies tagged with the broadcast
        # VC on VC 0.)
        this_vc = (self.flit.payload.vc == w) if port.output_vc_count > 1 else 1
        with m.If(self.flit.valid & self.flit.payload.last & this_vc):
            m.d.sync += busy.eq(0)
        return busy
