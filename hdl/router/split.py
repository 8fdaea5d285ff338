"""The split router (pipeline 3): allocation in the cycle after a flit's buffer write,
crossbar traversal from the next, 3 cycles per hop."""

from amaranth.hdl import Cat, Const, Mux, Signal
from amaranth.lib import data

from ..onehot import encode, lowest
from .composition import Composition
from .crossbar import Crossbar
from .islip import IslipAllocator
from .packet_allocator import PacketAllocator


class SplitComposition(Composition):
    """Input units, request units, a :class:`PacketAllocator` and a crossbar with one input
    per input VC.

    An allocated packet holds its output (all of a broadcast's outputs) until its last flit
    leaves, and its input VC streams a flit whenever its buffer has one: traversal needs no
    switch allocation, and the crossbar's select is a register (``owner``). Allocation sees
    only registers and buffer fronts; in the cycle a packet's last flit leaves, the output
    and the input VC may already be allocated to the next packets, so back-to-back packets
    lose no cycle.

    A PE port with several ejection lanes (``RouterConfig.ejection_lanes``) is several outputs
    of the allocators and the crossbar, one per lane; a packet for it asks for its lanes with
    room for the packet (with iSLIP all of them, else the lowest that may be allocated), and
    as many packets as lanes eject at once."""

    packet_allocator = PacketAllocator
    islip_allocator = IslipAllocator

    def state_layout(self) -> data.StructLayout:
        """``active``: streaming its packet; ``last``: its last flit leaves now (with packets
        of several flits, see :meth:`_stream`); ``sent``: flits of the packet sent;
        ``chosen``: the output VC it was granted (one-hot)."""
        length = self.config.packet_length
        return data.StructLayout({"active": 1, "last": 1,
                                  "sent": range(length) if length > 1 else 0,
                                  "chosen": self.config.max_vc_count})

    def control_layout(self) -> data.StructLayout:
        """``read``: a flit leaves now; ``head_read``: it is a head; ``finishing``: it is the
        packet's last; ``ready``: the next packet may be allocated now; ``drop_go``: a
        malformed packet starts draining (it needs no allocation: its VC streams it to
        nowhere); ``start``: the next packet starts; ``copy_grant``: broadcast only, its
        broadcast takes its outputs."""
        fields = {"read": 1, "head_read": 1, "finishing": 1, "ready": 1, "drop_go": 1,
                  "start": 1}
        if self.fanout:
            fields["copy_grant"] = 1
        return data.StructLayout(fields)

    def build(self) -> list:
        # Bit o: output o may be allocated now; per port, one of its outputs may (adaptive
        # requests consider only those).
        self.avail = Signal(len(self.config.outputs), name="avail")
        self.port_avail = Signal(self.config.port_count, name="port_avail")
        for vc in self.flat:
            self._stream(vc)
        self._output_state()
        grants, copy_take = self._allocation()
        out_vc = self._output_vcs(grants, copy_take)
        for i, vc in enumerate(self.flat):
            self._start(vc, Cat(grant[i] for grant in grants))
        self._traverse(out_vc)
        return [vc.control.drop_go for vc in self.flat]

    def head_waiting(self, vc):
        return vc.control.ready & ~vc.port.route.drop

    def head_granted(self, vc):
        return vc.control.start

    def head_asked(self, vc):
        route = vc.port.route
        asked = (vc.request.to & self.port_avail).any()
        if self.fanout:
            asked = asked | (vc.request.copy & ~(route.targets & ~self.port_avail).any())
        return asked

    def route_held(self, vc):
        route = vc.port.route
        held = ~self.port_avail.bit_select(route.port, 1)
        if self.fanout:
            held = Mux(route.multi, (route.targets & ~self.port_avail).any(), held)
        return held

    def switch_lost(self, vc):
        return Const(0, 1)

    def _stream(self, vc) -> None:
        """An input VC streams its packet's flits, and asks for the next packet's output."""
        m, length = self.m, self.config.packet_length
        state, control = vc.state, vc.control
        m.d.comb += [control.read.eq(state.active & vc.port.valid),
                     vc.port.read.eq(control.read)]
        # Packets are exactly L flits (links carry whole packets, PE ports are framed by a
        # counter), so a counter marks the last flit without reading the buffer.
        if length > 1:
            sent_next = Mux(control.read, Mux(state.sent == length - 1, 0, state.sent + 1),
                            state.sent)
            # "The last flit leaves now" is a register too: a packet that starts now has sent
            # no flit yet, so the next cycle's value does not depend on this cycle's
            # allocation.
            m.d.sync += [state.sent.eq(sent_next),
                         state.last.eq(state.active & ~state.last & (sent_next == length - 1)
                                       & vc.port.valid_next)]
            m.d.comb += [control.head_read.eq(control.read & (state.sent == 0)),
                         control.finishing.eq(state.last)]
        else:
            m.d.comb += [control.finishing.eq(control.read), control.head_read.eq(control.read)]
        m.d.comb += [control.ready.eq(vc.port.head & (~state.active | control.finishing)),
                     control.drop_go.eq(control.ready & vc.port.route.drop)]
        self.ask(vc, control.ready, self.port_avail if self.stage.adaptive_vcs else None)

    def _output_state(self) -> None:
        """Each output is held by the packet of one input VC (``owner``, one-hot over every
        input VC) from its allocation until its last flit leaves; ``avail``: it may be
        allocated now; ``port_avail``: per port, one of its outputs may (an ejection lane
        with room for a packet); ``lanes``: per output, it may be asked for (see
        :meth:`_requests`)."""
        m, config = self.m, self.config
        outputs = len(config.outputs)
        self.held = [Signal(name=f"held_{o}") for o in range(outputs)]
        self.owner = [Signal(len(self.flat), name=f"owner_{o}") for o in range(outputs)]
        self.fresh = [Signal(name=f"fresh_{o}") for o in range(outputs)]  # allocated last
        for o in range(outputs):
            ending = Cat(self.owner[o][i] & vc.control.finishing
                         for i, vc in enumerate(self.flat))
            m.d.comb += self.avail[o].eq(~self.held[o] | ending.any())
        self.lanes = [Const(1, 1)] * outputs
        for p in range(config.port_count):
            lanes = config.lanes_of(p)
            if len(lanes) == 1:
                m.d.comb += self.port_avail[p].eq(self.avail[p])
                continue
            room = Cat(self.outputs[o].free_one[0] for o in lanes)
            usable = Cat(self.avail[o] for o in lanes) & room
            pick = Signal(len(lanes), name=f"lanes_{p}")
            m.d.comb += [self.port_avail[p].eq(usable.any()),
                         pick.eq(room if self.stage.islip else lowest(usable, len(lanes)))]
            for k, o in enumerate(lanes):
                self.lanes[o] = pick[k]

    def _allocation(self):
        """Broadcasts first: one per cycle whose outputs are all available, with their copy
        VC free, takes them all; unicast skips those outputs. Then the
        :class:`PacketAllocator` (with ``allocator="islip"``, the :class:`IslipAllocator` over
        every input VC). Returns its grants and the outputs taken by a broadcast."""
        m, config = self.m, self.config
        outputs = len(config.outputs)
        copy_take = None
        open_ = self.avail
        if self.fanout:
            copy_take = self.copy_allocation(Cat(
                vc.request.copy & ~(vc.port.route.targets & ~self.avail).any()
                for vc in self.flat))
            open_ = self.avail & ~copy_take
        if self.stage.islip:
            allocator = self.islip_allocator(len(self.flat), outputs, config.iterations)
        else:
            allocator = self.packet_allocator(config.vc_counts, outputs)
        m.submodules.packet_allocator = allocator
        m.d.comb += allocator.open.eq(open_)
        for i, vc in enumerate(self.flat):
            m.d.comb += allocator.requests[i].eq(self._requests(vc))
        return allocator.grants, copy_take

    def _requests(self, vc):
        """``vc``'s request over the outputs: a request for a PE port with several ejection
        lanes asks for its lanes with room for the packet (iSLIP matches one; otherwise the
        lowest that may be allocated now, so that each input VC asks for one output)."""
        if len(self.config.outputs) == self.config.port_count:
            return vc.request.to
        return Cat(vc.request.to[p] & self.lanes[o]
                   for o, (p, _) in enumerate(self.config.outputs))

    def _output_vcs(self, grants, copy_take) -> list:
        """The owner registers, and per output the one-hot VC of its packet: its input VC
        keeps the one it was offered (``chosen``), and the output reads it through its owner
        register from the next cycle on; the cycle after an allocation, that VC's credits are
        taken."""
        m, config = self.m, self.config
        vmax = config.max_vc_count
        out_vc = []
        for o in range(len(config.outputs)):
            new_owner = Signal(len(self.flat), name=f"new_owner_{o}")  # one-hot, if any
            bits = grants[o]
            if self.fanout:
                bits = bits | Mux(copy_take[o], Cat(vc.control.copy_grant for vc in self.flat),
                                  0)
            m.d.comb += new_owner.eq(bits)
            with m.If(new_owner.any()):
                m.d.sync += [self.held[o].eq(1), self.owner[o].eq(new_owner)]
            with m.Elif(self.avail[o]):
                m.d.sync += self.held[o].eq(0)
            m.d.sync += self.fresh[o].eq(new_owner.any())
            vc_bits = Const(0, vmax)
            for i, vc in enumerate(self.flat):
                vc_bits = vc_bits | Mux(self.owner[o][i], vc.state.chosen, 0)
            if self.fanout:
                # A broadcast copy takes the copy VC of each output.
                copying = Signal(name=f"copying_{o}")
                with m.If(new_owner.any()):
                    m.d.sync += copying.eq(copy_take[o])
                vc_bits = Mux(copying, 1 << self.free.copy_vc[o], vc_bits)
            out_vc.append(Signal(vmax, name=f"out_vc_{o}"))
            m.d.comb += out_vc[o].eq(vc_bits)
        return out_vc

    def _start(self, vc, granted) -> None:
        """Input VC ``vc`` starts its next packet when an output is ``granted`` (bit o: output
        o; at most one) or when it is dropped."""
        m, length = self.m, self.config.packet_length
        state, control = vc.state, vc.control
        start = control.drop_go | granted.any()
        if self.fanout:
            start = start | control.copy_grant
        m.d.comb += control.start.eq(start)
        # The route leaves its queue when the head flit leaves the buffer (off the
        # allocation's path); in the cycle a packet's last flit leaves, its head has left at
        # least one cycle before, so the queue's front is the next packet's route. With
        # one-flit packets both happen in one cycle: the route leaves at allocation.
        m.d.comb += vc.port.pop.eq(control.start if length == 1 else control.head_read)
        chosen = vc.request.vc
        if self.stage.multiple_requests:
            moved = Const(0, self.config.max_vc_count)
            for o, vc_bits in enumerate(self.free.adaptive_vc):
                moved = moved | Mux(granted[o], vc_bits, 0)
            chosen = Mux(vc.request.adaptive, moved, chosen)
        with m.If(control.start):
            m.d.sync += [state.active.eq(1), state.chosen.eq(chosen)]
        with m.Elif(control.finishing):
            m.d.sync += state.active.eq(0)

    def _traverse(self, out_vc) -> None:
        """The crossbar (every input VC's front flit, selected by the owner register) and the
        outputs."""
        m, config = self.m, self.config
        crossbar = m.submodules.crossbar = Crossbar(self.stage.flit_layout, len(self.flat),
                                                    len(config.outputs))
        for i, vc in enumerate(self.flat):
            m.d.comb += crossbar.inputs[i].eq(vc.port.flit)
        for o in range(len(config.outputs)):
            m.d.comb += crossbar.select[o].eq(self.owner[o])
            valid = self.held[o] & Cat(self.owner[o][i] & vc.control.read
                                       for i, vc in enumerate(self.flat)).any()
            self.drive_output(o, valid, crossbar.outputs[o], encode(out_vc[o], config.max_vc_count),
                              Mux(self.fresh[o], out_vc[o], 0))
