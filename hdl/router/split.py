"""The split router (pipeline 3): allocation in the cycle after a flit's buffer write,
crossbar traversal from the next, 3 cycles per hop."""

from amaranth.hdl import Cat, Const, Mux, Signal

from .composition import Composition
from .crossbar import Crossbar
from .onehot import encode
from .packet_allocator import PacketAllocator


class SplitComposition(Composition):
    """Input units, request units, a :class:`PacketAllocator` and a crossbar with one input
    per input VC.

    An allocated packet holds its output (all of a broadcast's outputs) until its last flit
    leaves, and its input VC streams a flit whenever its buffer has one: traversal needs no
    switch allocation, and the crossbar's select is a register (``owner``). Allocation sees
    only registers and buffer fronts; in the cycle a packet's last flit leaves, the output
    and the input VC may already be allocated to the next packets, so back-to-back packets
    lose no cycle."""

    def build(self) -> list:
        # Bit o: output o may be allocated now (adaptive requests consider only those).
        self.avail = Signal(self.config.port_count, name="avail")
        drop_heads = self._vc_state()
        avail = self._output_state()
        grants, copy_take = self._allocation(avail)
        out_vc = self._output_vcs(grants, copy_take, avail)
        self._start(grants)
        self._traverse(out_vc)
        return drop_heads

    def _vc_state(self) -> list:
        """Per input VC: ``active`` (streaming its packet), ``read`` (a flit leaves now),
        ``finishing`` (its last flit leaves now), ``head_read``, and ``drop_go`` (a malformed
        packet starts draining: it needs no allocation, its VC streams it to nowhere).
        Returns the ``drop_go`` signals."""
        m, length = self.m, self.config.packet_length
        drop_heads = []
        for p, port_vcs in enumerate(self.vcs):
            for v, s in enumerate(port_vcs):
                name = f"{p}_{v}"
                s["active"] = Signal(name=f"active_{name}")
                s["read"] = Signal(name=f"read_{name}")
                s["finishing"] = Signal(name=f"finishing_{name}")
                s["head_read"] = Signal(name=f"head_read_{name}")
                m.d.comb += [s["read"].eq(s["active"] & s["in"].valid),
                             s["in"].read.eq(s["read"])]
                # Packets are exactly L flits (links carry whole packets, PE ports are framed
                # by a counter), so a counter marks the last flit without reading the buffer.
                if length > 1:
                    sent = Signal(range(length), name=f"sent_{name}")
                    sent_next = Mux(s["read"], Mux(sent == length - 1, 0, sent + 1), sent)
                    m.d.sync += sent.eq(sent_next)
                    # "The last flit leaves now" is a register too: a packet that starts
                    # now has sent no flit yet, so the next cycle's value does not depend
                    # on this cycle's allocation.
                    m.d.sync += s["finishing"].eq(s["active"] & ~s["finishing"]
                                                  & (sent_next == length - 1)
                                                  & s["in"].valid_next)
                    m.d.comb += s["head_read"].eq(s["read"] & (sent == 0))
                else:
                    m.d.comb += [s["finishing"].eq(s["read"]), s["head_read"].eq(s["read"])]
                ready = s["in"].head & (~s["active"] | s["finishing"])
                s["drop_go"] = Signal(name=f"drop_go_{name}")
                m.d.comb += s["drop_go"].eq(ready & s["in"].route.drop)
                drop_heads.append(s["drop_go"])
                self.requests(s, name, ready, self.avail if self.stage.adaptive_vcs else None)
        return drop_heads

    def _output_state(self):
        """Each output is held by the packet of one input VC (``owner``, one-hot over every
        input VC) from its allocation until its last flit leaves. Returns bit o: output o may
        be allocated now."""
        m, port_count = self.m, self.config.port_count
        self.held = [Signal(name=f"held_{o}") for o in range(port_count)]
        self.owner = [Signal(len(self.flat), name=f"owner_{o}") for o in range(port_count)]
        self.fresh = [Signal(name=f"fresh_{o}") for o in range(port_count)]  # allocated last
        avail = self.avail
        for o in range(port_count):
            ending = Cat(self.owner[o][i] & s["finishing"] for i, s in enumerate(self.flat))
            m.d.comb += avail[o].eq(~self.held[o] | ending.any())
        return avail

    def _allocation(self, avail):
        """Broadcasts first: one per cycle whose outputs are all available, with their copy
        VC free, takes them all; unicast skips those outputs. Then the
        :class:`PacketAllocator`. Returns its grants and the outputs taken by a broadcast."""
        m, config = self.m, self.config
        copy_take = None
        open_ = avail
        if self.fanout:
            copy_take = self.copy_allocation(Cat(
                s["copy_req"] & ~(s["in"].route.targets & ~avail).any() for s in self.flat))
            open_ = avail & ~copy_take
        allocator = m.submodules.packet_allocator = PacketAllocator(config.vc_counts,
                                                                    config.port_count)
        m.d.comb += allocator.open.eq(open_)
        for i, s in enumerate(self.flat):
            m.d.comb += allocator.requests[i].eq(s["va_to"])
        return allocator.grants, copy_take

    def _output_vcs(self, grants, copy_take, avail) -> list:
        """The owner registers, and per output the one-hot VC of its packet: its input VC
        keeps the one it was offered (``chosen``), and the output reads it through its owner
        register from the next cycle on; the cycle after an allocation, that VC's credits are
        taken."""
        m, config = self.m, self.config
        vmax = config.max_vc_count
        for i, s in enumerate(self.flat):
            s["chosen"] = Signal(vmax, name=f"chosen_{i}")
        out_vc = []
        for o in range(config.port_count):
            new_owner = Signal(len(self.flat), name=f"new_owner_{o}")  # one-hot, if any
            bits = grants[o]
            if self.fanout:
                bits = bits | Mux(copy_take[o], Cat(s["copy_grant"] for s in self.flat), 0)
            m.d.comb += new_owner.eq(bits)
            with m.If(new_owner.any()):
                m.d.sync += [self.held[o].eq(1), self.owner[o].eq(new_owner)]
            with m.Elif(avail[o]):
                m.d.sync += self.held[o].eq(0)
            m.d.sync += self.fresh[o].eq(new_owner.any())
            vc_bits = Const(0, vmax)
            for i, s in enumerate(self.flat):
                vc_bits = vc_bits | Mux(self.owner[o][i], s["chosen"], 0)
            if self.fanout:
                # A broadcast copy takes the copy VC of each output.
                copying = Signal(name=f"copying_{o}")
                with m.If(new_owner.any()):
                    m.d.sync += copying.eq(copy_take[o])
                vc_bits = Mux(copying, 1 << self.free["copy_vc"][o], vc_bits)
            out_vc.append(Signal(vmax, name=f"out_vc_{o}"))
            m.d.comb += out_vc[o].eq(vc_bits)
        return out_vc

    def _start(self, grants) -> None:
        """Input VCs start their next packet when granted (or when it is dropped)."""
        m, length = self.m, self.config.packet_length
        for i, s in enumerate(self.flat):
            start = s["drop_go"] | Cat(grant[i] for grant in grants).any()
            if self.fanout:
                start = start | s["copy_grant"]
            # The route leaves its queue when the head flit leaves the buffer (off the
            # allocation's path); in the cycle a packet's last flit leaves, its head has left
            # at least one cycle before, so the queue's front is the next packet's route.
            # With one-flit packets both happen in one cycle: the route leaves at allocation.
            m.d.comb += s["in"].pop.eq(start if length == 1 else s["head_read"])
            with m.If(start):
                m.d.sync += [s["active"].eq(1), s["chosen"].eq(s["w_sel"])]
            with m.Elif(s["finishing"]):
                m.d.sync += s["active"].eq(0)

    def _traverse(self, out_vc) -> None:
        """The crossbar (every input VC's front flit, selected by the owner register) and the
        outputs."""
        m, config = self.m, self.config
        crossbar = m.submodules.crossbar = Crossbar(self.stage.flit_layout, len(self.flat),
                                                    config.port_count)
        for i, s in enumerate(self.flat):
            m.d.comb += crossbar.inputs[i].eq(s["in"].flit)
        for o in range(config.port_count):
            m.d.comb += crossbar.select[o].eq(self.owner[o])
            valid = self.held[o] & Cat(self.owner[o][i] & s["read"]
                                       for i, s in enumerate(self.flat)).any()
            self.drive_output(o, valid, crossbar.outputs[o], encode(out_vc[o], config.max_vc_count),
                              Mux(self.fresh[o], out_vc[o], 0))
