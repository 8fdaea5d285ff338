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

    @property
    def reopens_ahead(self) -> bool:
        """Whether an output's reopening is a register, worked out a cycle ahead (see
        :meth:`_output_state`): with packets of several flits, unless the bypass
        (``RouterConfig.bypass``) puts a longer path in front of the allocation (the route
        compute of a head arriving now), where the register's LUTs pay for the bypass's
        multiplexers instead (docs/router.md)."""
        return self.config.max_packet_length > 1 and not self.config.bypasses

    def state_layout(self) -> data.StructLayout:
        """``active``: streaming its packet; ``begun``: a flit of it has been read (so the
        flit read next is not its head); ``ending``: ``begun`` and a last flit that is not its
        head leaves now (see :meth:`_stream`); ``chosen``: the output VC it was granted
        (one-hot)."""
        return data.StructLayout({"active": 1, "begun": 1, "ending": 1,
                                  "chosen": self.config.max_vc_count})

    def control_layout(self) -> data.StructLayout:
        """``read``: a flit leaves now; ``finishing``: it is the packet's last; ``ready``: the
        next packet may be allocated now; ``drop_go``: a malformed packet starts draining (it
        needs no allocation: its VC streams it to nowhere); ``start``: the next packet starts;
        ``chosen``: the output VC it takes if granted now (one-hot); ``closing``: ``ending``
        in the next cycle; ``copy_grant``: broadcast only, its broadcast takes its outputs."""
        fields = {"read": 1, "finishing": 1, "ready": 1, "drop_go": 1, "start": 1,
                  "chosen": self.config.max_vc_count, "closing": 1}
        if self.fanout:
            fields["copy_grant"] = 1
        return data.StructLayout(fields)

    def build(self) -> list:
        # Bit o: output o may be allocated now; per port, one of its outputs may (adaptive
        # requests consider only those).
        self.avail = Signal(len(self.config.outputs), name="avail")
        # Bit o: output o's packet's last flit leaves now.
        self.release = Signal(len(self.config.outputs), name="release")
        self.port_avail = Signal(self.config.port_count, name="port_avail")
        for vc in self.flat:
            self._stream(vc)
        self._output_state()
        grants, copy_take = self._allocation()
        for i, vc in enumerate(self.flat):
            self._start(vc, Cat(grant[i] for grant in grants))
        out_vc = self._output_vcs(grants, copy_take)
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
        m = self.m
        state, control = vc.state, vc.control
        m.d.comb += [control.read.eq(state.active & vc.port.valid),
                     vc.port.read.eq(control.read),
                     # Packets are framed by their last mark (links carry whole packets, PE
                     # ports frame what their PEs send), which the buffer keeps in a register
                     # for its front flit. (As a register of its own, worked out a cycle ahead,
                     # "a last flit leaves now" would depend on the allocation, a one-flit
                     # packet's starting: three logic steps more after the grant, measured.)
                     control.finishing.eq(control.read & vc.port.tail)]
        # The route leaves its queue when the head flit is read, off the allocation's path:
        # in the cycle a packet's last flit leaves, the queue's front is the next packet's
        # route, unless that flit is also its head (a one-flit packet): the next packet then
        # waits a cycle. With L = 1 every packet is one flit, and the route leaves at the
        # allocation instead.
        # Whether the next packet may go in a cycle is a register, worked out a cycle ahead:
        # "begun" in the next cycle does not depend on this cycle's allocation (a packet that
        # starts now has read no flit then), so neither does ``ending``.
        begun_next = ~control.finishing & (control.read | state.begun)
        m.d.comb += control.closing.eq(begun_next & vc.port.valid_next & vc.port.tail_next)
        m.d.sync += [state.begun.eq(begun_next), state.ending.eq(control.closing)]
        next_ready = control.finishing if self.config.max_packet_length == 1 else state.ending
        m.d.comb += [control.ready.eq(vc.port.head & (~state.active | next_ready)),
                     control.drop_go.eq(control.ready & vc.port.route.drop)]
        self.ask(vc, control.ready, self.port_avail if self.stage.adaptive_vcs else None)

    def _output_state(self) -> None:
        """Each output is held by the packet of one input VC (``owner``, one-hot over every
        input VC) from its allocation until its last flit leaves; ``avail``: it may be
        allocated now; ``reopen``: per output, it may be allocated in the cycle its packet's
        last flit leaves; ``port_avail``: per port, one of its outputs may (an ejection lane
        with room for a packet); ``lanes``: per output, it may be asked for (see
        :meth:`_requests`)."""
        m, config = self.m, self.config
        outputs = len(config.outputs)
        self.held = [Signal(name=f"held_{o}") for o in range(outputs)]
        self.owner = [Signal(len(self.flat), name=f"owner_{o}") for o in range(outputs)]
        self.reopen = []
        for o in range(outputs):
            ending = Cat(self.owner[o][i] & vc.control.finishing
                         for i, vc in enumerate(self.flat))
            m.d.comb += self.release[o].eq(ending.any())
            # In the cycle its packet's last flit leaves, an output is allocated again unless
            # that flit's VC is tight (:class:`OutputUnit`). With packets of several flits
            # (and no bypass: :attr:`reopens_ahead`) that is a register, worked out a cycle
            # ahead, so that allocation starts from
            # flip-flops (the last flit leaving and the room of its VC were 4 of the 10 logic
            # steps of the router's longest path, measured on ECP5): the owner's last flit,
            # not its head, leaves in the next cycle (a one-flit packet's output waits a
            # cycle), and its VC is not tight then. An output allocated now is not reopened in
            # the next cycle (its packet has read no flit then), and ``held`` covers one
            # released now (its owner's last flit leaving now is not also the next).
            if not self.reopens_ahead:
                reopen = ending.any() & ~self.outputs[o].tight
            else:
                reopen = Signal(name=f"reopen_{o}")
                closing = Cat(self.owner[o][i] & vc.control.closing
                              for i, vc in enumerate(self.flat))
                m.d.sync += reopen.eq(self.held[o] & closing.any()
                                      & ~self.outputs[o].tight_next)
            self.reopen.append(reopen)
            m.d.comb += self.avail[o].eq(~self.held[o] | reopen)
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
            # One output per request unless adaptive packets or ejection lanes ask for more.
            one_request = (not self.stage.multiple_requests
                           and len(config.outputs) == config.port_count)
            allocator = self.islip_allocator(len(self.flat), outputs, config.iterations,
                                             one_request)
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
        """The owner registers and, per output, the VC of the packet that holds it
        (``holding``, one-hot; zero while the output is not held): its owner's ``chosen``
        (the copy VC for a broadcast's copy), read through the owner register from the cycle
        after the allocation. Its flits carry that VC, and its output unit counts it
        (:class:`OutputUnit`)."""
        m, config = self.m, self.config
        vmax = config.max_vc_count
        self.holding = []
        # Per output: its packet is a broadcast's copy (a register; 0 without broadcast).
        self.copying = [Const(0, 1)] * len(config.outputs)
        for o in range(len(config.outputs)):
            new_owner = Signal(len(self.flat), name=f"new_owner_{o}")  # one-hot, if any
            bits = grants[o]
            if self.fanout:
                bits = bits | Mux(copy_take[o], Cat(vc.control.copy_grant for vc in self.flat),
                                  0)
            m.d.comb += new_owner.eq(bits)
            with m.If(new_owner.any()):
                m.d.sync += [self.held[o].eq(1), self.owner[o].eq(new_owner)]
            with m.Elif(self.release[o]):
                m.d.sync += self.held[o].eq(0)
            vc_bits = Const(0, vmax)
            for i, vc in enumerate(self.flat):
                vc_bits = vc_bits | Mux(self.owner[o][i], vc.state.chosen, 0)
            if self.fanout:
                # A broadcast copy takes the copy VC of each output.
                copying = Signal(name=f"copying_{o}")
                with m.If(new_owner.any()):
                    m.d.sync += copying.eq(copy_take[o])
                vc_bits = Mux(copying, 1 << self.free.copy_vc[o], vc_bits)
                self.copying[o] = copying
            holding = Signal(vmax, name=f"holding_{o}")
            m.d.comb += [holding.eq(Mux(self.held[o], vc_bits, 0)),
                         self.outputs[o].holding.eq(holding)]
            self.holding.append(holding)
        return self.holding

    def _start(self, vc, granted) -> None:
        """Input VC ``vc`` starts its next packet when an output is ``granted`` (bit o: output
        o; at most one) or when it is dropped; ``chosen`` is the VC it is offered."""
        m = self.m
        state, control = vc.state, vc.control
        start = control.drop_go | granted.any()
        if self.fanout:
            start = start | control.copy_grant
        m.d.comb += control.start.eq(start)
        # (See :meth:`_stream` for when the route leaves its queue.)
        head_read = control.read & ~state.begun
        m.d.comb += vc.port.pop.eq(control.start if self.config.max_packet_length == 1
                                   else head_read)
        chosen = vc.request.vc
        if self.stage.multiple_requests:
            moved = Const(0, self.config.max_vc_count)
            for o, vc_bits in enumerate(self.free.adaptive_vc):
                moved = moved | Mux(granted[o], vc_bits, 0)
            chosen = Mux(vc.request.adaptive, moved, chosen)
        m.d.comb += control.chosen.eq(chosen)
        active_next = control.start | (state.active & ~control.finishing)
        m.d.sync += state.active.eq(active_next)
        with m.If(control.start):
            m.d.sync += state.chosen.eq(chosen)

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
            self.drive_output(o, valid, crossbar.outputs[o], encode(out_vc[o], config.max_vc_count))
