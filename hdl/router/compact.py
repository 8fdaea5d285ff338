"""The compact router (pipeline 2): VC allocation, switch allocation and the crossbar in the
cycle after a flit's buffer write, 2 cycles per hop."""

from amaranth.hdl import Cat, Const, Mux, Signal
from amaranth.lib import data

from ..arbiter import RoundRobinArbiter
from ..onehot import encode, lowest, select
from .composition import Composition
from .crossbar import Crossbar
from .switch_allocator import SwitchAllocator
from .vc_allocator import VCAllocator


class CompactComposition(Composition):
    """Input units, request units, a :class:`VCAllocator`, a :class:`SwitchAllocator` and a
    crossbar. A VC's packet keeps its output VC from allocation to tail. Broadcasts are
    allocated and switched before unicast, one per cycle each.

    The microarchitecture's knobs (:class:`~twinnet.hdl.config.RouterConfig`):

    - ``switch_inputs``: ``"port"`` (the default) gives the crossbar one input per input port,
      whose VCs take turns: a port reads one flit per cycle. ``"vc"`` gives it one input per
      input VC, and switch allocation matches input VCs to outputs: several VCs of a port may
      read in one cycle (their credits queue in the input unit).
    - ``hold``: ``"flit"`` (the default) lets packets of different input VCs interleave flit
      by flit on one output. ``"packet"`` holds an output for one packet from its VC
      allocation until its last flit has left: VC allocation skips an output with a VC that
      carries a packet (the output units' ``busy``, registers), and a broadcast waits for all
      of its outputs to be idle.
    - ``allocator="islip"``: switch allocation runs ``iterations`` iSLIP rounds
      (:class:`~.islip.IslipAllocator`); VC allocation stays separable round robin. One
      round is the separable round robin itself, so ``"islip"`` with one iteration builds
      the same router as ``"round-robin"``; with a crossbar input per VC, each input asks for
      one output at most, so the first round's matching is already maximal and further
      rounds add none.
    """

    vc_allocator = VCAllocator
    switch_allocator = SwitchAllocator

    def __init__(self, stage, m, vcs: list, outputs: list):
        super().__init__(stage, m, vcs, outputs)
        # The crossbar's inputs, each the input VCs that share it: a port's, or one VC each.
        self.inputs = ([[vc] for vc in self.flat] if self.config.switch_inputs_per_vc
                       else self.vcs)

    def state_layout(self) -> data.StructLayout:
        """``active``: sending a packet; ``dropping``: draining a malformed one; the output
        port and VC it holds; with broadcast, ``fan``: the outputs of its copy (zero for a
        unicast)."""
        config = self.config
        fields = {"active": 1, "dropping": 1, "out_port": range(config.port_count),
                  "out_vc": range(config.max_vc_count)}
        if self.fanout:
            fields["fan"] = config.port_count
        return data.StructLayout(fields)

    def control_layout(self) -> data.StructLayout:
        """``drain``: its front flit is drained; ``va_grant``: its packet is allocated an
        output VC; ``cur_port``, ``cur_vc``: the output and VC of a flit that crosses now;
        ``switch_to``: one-hot, the output its front flit asks the switch for; with
        broadcast, ``copy_grant`` (its broadcast takes its outputs) and ``copy_go`` (a flit
        of its broadcast crosses now)."""
        config = self.config
        fields = {"drain": 1, "va_grant": 1, "cur_port": range(config.port_count),
                  "cur_vc": range(config.max_vc_count), "switch_to": config.port_count}
        if self.fanout:
            fields.update(copy_grant=1, copy_go=1)
        return data.StructLayout(fields)

    def build(self) -> list:
        # Per output, its VCs that carry a packet (for the stall counters).
        self.busy = Signal(self.stage.port_vc_masks_layout, name="busy")
        self.m.d.comb += [self.busy[o].eq(unit.busy) for o, unit in enumerate(self.outputs)]
        # With outputs held by packets: bit o, output o carries a packet (from registers,
        # so that the same cycle's allocation may read it without a combinational loop).
        self.held = None
        if self.config.holds_outputs:
            self.held = Signal(self.config.port_count, name="held")
            self.m.d.comb += self.held.eq(Cat(unit.busy.any() for unit in self.outputs))
        for vc in self.flat:
            idle_head = self._idle_head(vc)
            self.m.d.comb += vc.control.drain.eq(vc.port.valid & (vc.state.dropping | (
                idle_head & vc.port.route.drop)))
            self.ask(vc, idle_head,
                     ~self.held if self.held is not None and self.stage.adaptive_vcs else None)
        alloc = self._vc_allocation()
        drain_sel = self._switch_requests()
        accepted, read = self._switch_allocation()
        return self._traverse(alloc, drain_sel, accepted, read)

    @staticmethod
    def _idle_head(vc):
        """The VC is idle with a front flit, which is then a head flit (links and PE framing
        keep packets whole and in order in each VC buffer)."""
        return vc.port.valid & ~vc.state.active & ~vc.state.dropping

    def head_waiting(self, vc):
        return self._idle_head(vc) & ~vc.port.route.drop

    def head_granted(self, vc):
        granted = vc.control.va_grant
        return granted | vc.control.copy_grant if self.fanout else granted

    def head_asked(self, vc):
        to = vc.request.to if self.held is None else vc.request.to & ~self.held
        return to.any() | self._copy_asks(vc) if self.fanout else to.any()

    def route_held(self, vc):
        route = vc.port.route
        held = ~(route.mask & ~self.busy[route.port]).any()
        if self.held is not None:
            held = held | self.held.bit_select(route.port, 1)
        if self.fanout:
            copy_busy = Cat(unit.busy[w] for unit, w in zip(self.outputs, self.free.copy_vc))
            if self.held is not None:
                copy_busy = copy_busy | self.held
            held = Mux(route.multi, (route.targets & copy_busy).any(), held)
        return held

    def _copy_asks(self, vc):
        """Its broadcast asks for its outputs, and (with outputs held by packets) they are all
        idle."""
        if self.held is None:
            return vc.request.copy
        return vc.request.copy & ~(vc.port.route.targets & self.held).any()

    def switch_lost(self, vc):
        return vc.control.switch_to.any() & ~vc.port.read

    def _unicast(self, vc):
        """The VC is sending a unicast packet."""
        return vc.state.active & ~vc.state.fan.any() if self.fanout else vc.state.active

    def _vc_allocation(self) -> list:
        """Broadcasts first (their outputs are then blocked for unicast), then the
        :class:`VCAllocator`, which skips held outputs too. Returns per output the one-hot VC
        allocated this cycle. The output VC is the lowest eligible one in the packet's
        mask."""
        m, config = self.m, self.config
        vmax = config.max_vc_count
        allocator = self.vc_allocator(config.vc_counts, config.port_count, vmax)
        m.submodules.vc_allocator = allocator
        for i, vc in enumerate(self.flat):
            m.d.comb += [allocator.requests[i].eq(vc.request.to),
                         allocator.offers[i].eq(vc.request.vc),
                         vc.control.va_grant.eq(allocator.grant[i])]
        alloc = list(allocator.allocated)
        blocked = self.held
        if self.fanout:
            copy_take = self.copy_allocation(Cat(self._copy_asks(vc) for vc in self.flat))
            blocked = copy_take if blocked is None else copy_take | blocked
            alloc = [Mux(copy_take[o], 1 << w, a)
                     for o, (w, a) in enumerate(zip(self.free.copy_vc, alloc))]
        if blocked is not None:
            m.d.comb += allocator.blocked.eq(blocked)
        for vc in self.flat:
            state = vc.state
            m.d.comb += [
                vc.control.cur_port.eq(Mux(state.active, state.out_port, vc.request.port)),
                vc.control.cur_vc.eq(Mux(state.active, state.out_vc, encode(vc.request.vc, vmax)))]
        return alloc

    def _switch_requests(self) -> list:
        """The switch request of every input VC (``switch_to``). A crossbar input with a
        draining VC reads that VC (lowest first) instead, so that each crossbar input reads at
        most one flit per cycle (with an input per port, a port returns at most one credit
        per cycle). Broadcast flits cross first: one per cycle (round robin over the input
        VCs sending one) to all its outputs at once, which unicast switching then skips, with
        its crossbar input. Returns per crossbar input the draining VC (one-hot)."""
        m = self.m
        drain_sel, draining = [], []
        for g, group in enumerate(self.inputs):
            count = len(group)
            bits = Cat(vc.control.drain for vc in group)
            sel = Signal(count, name=f"drain_sel_{g}")
            m.d.comb += sel.eq(lowest(bits, count))
            drain_sel.append(sel)
            draining.append(bits.any())
        if self.fanout:
            self._copy_switching(draining)
        for g, group in enumerate(self.inputs):
            for vc in group:
                # A packet may cross the switch in the cycle its VC is allocated.
                wants = vc.port.valid & (self._unicast(vc) | vc.control.va_grant) & ~draining[g]
                if self.fanout:
                    wants = wants & ~self.copy_port[g]
                to = Mux(wants, 1 << vc.control.cur_port, 0)
                m.d.comb += vc.control.switch_to.eq(to & ~self.copy_out if self.fanout else to)
        return drain_sel

    def _copy_switching(self, draining) -> None:
        """One broadcast flit per cycle crosses to all of its outputs (``copy_out``) from its
        crossbar input (``copy_port``, per crossbar input)."""
        m, port_count = self.m, self.config.port_count
        copy_sw = m.submodules.sa_copy = RoundRobinArbiter(len(self.flat))
        m.d.comb += copy_sw.advance.eq(1)
        index = 0
        for g, group in enumerate(self.inputs):
            for vc in group:
                m.d.comb += [copy_sw.requests[index].eq(vc.port.valid & vc.state.active
                                                        & vc.state.fan.any() & ~draining[g]),
                             vc.control.copy_go.eq(copy_sw.grant[index])]
                index += 1
        self.copy_out = Signal(port_count, name="copy_out")
        out_bits = Const(0, port_count)
        for vc in self.flat:
            out_bits = out_bits | Mux(vc.control.copy_go, vc.state.fan, 0)
        m.d.comb += self.copy_out.eq(out_bits)
        self.copy_port = [Cat(vc.control.copy_go for vc in group).any()
                          for group in self.inputs]

    def _switch_allocation(self):
        """The :class:`SwitchAllocator` over the crossbar's inputs, ``iterations`` rounds:
        returns ``accepted`` (per output, the crossbar inputs crossing to it) and ``read``
        (per input VC, switched this cycle)."""
        m, config = self.m, self.config
        allocator = self.switch_allocator(tuple(len(group) for group in self.inputs),
                                          config.port_count, config.iterations)
        m.submodules.switch_allocator = allocator
        for i, vc in enumerate(self.flat):
            m.d.comb += allocator.requests[i].eq(vc.control.switch_to)
        return allocator.accepted, allocator.read

    def _traverse(self, alloc, drain_sel, accepted, read) -> list:
        """Reads, VC state updates, the crossbar and the outputs. Returns, per crossbar input,
        "a malformed packet's head was drained"."""
        m, config, stage = self.m, self.config, self.stage
        port_count = config.port_count
        crossbar = m.submodules.crossbar = Crossbar(stage.crossbar_layout, len(self.inputs),
                                                    port_count)
        drop_heads, index = [], 0
        for g, group in enumerate(self.inputs):
            count = len(group)
            read_sw = Signal(count, name=f"read_sw_{g}")  # one-hot: the VC switched now
            switched = Cat(read[index + v] for v in range(count))
            if self.fanout:
                switched = switched | Cat(vc.control.copy_go for vc in group)
            m.d.comb += read_sw.eq(switched)
            index += count
            candidates = []
            for v, vc in enumerate(group):
                # The crossbar carries data, first, last and the output VC tag.
                candidate = Signal(stage.crossbar_layout, name=f"xbar_candidate_{vc.name}")
                m.d.comb += [candidate.data.eq(vc.port.flit.data),
                             candidate.first.eq(vc.port.flit.first),
                             candidate.last.eq(vc.port.flit.last),
                             candidate.abort.eq(vc.port.flit.abort),
                             candidate.vc.eq(vc.control.cur_vc)]
                candidates.append(candidate)
                self._update(vc, read_sw[v], drain_sel[g][v])
            # (The crossbar selects an input only when one of its VCs is switched.)
            m.d.comb += crossbar.inputs[g].eq(
                candidates[0] if count == 1
                else select(read_sw, candidates, stage.crossbar_layout.size))
            # A drained flit is a head when its VC was not already dropping a packet.
            dropping = Cat(vc.state.dropping for vc in group)
            drop_heads.append((drain_sel[g] & ~dropping).any())
        for o in range(port_count):
            chosen = accepted[o]
            if self.fanout:
                chosen = Cat(accepted[o][g] | (self.copy_out[o] & self.copy_port[g])
                             for g in range(len(self.inputs)))
            m.d.comb += crossbar.select[o].eq(chosen)
            self.drive_output(o, chosen.any(), crossbar.outputs[o], crossbar.outputs[o].vc)
            m.d.comb += self.outputs[o].take.eq(alloc[o])
        return drop_heads

    def _update(self, vc, switched, drained) -> None:
        """Input VC ``vc`` reads its front flit when ``switched`` or ``drained``, and updates
        its state."""
        m, state, control = self.m, vc.state, vc.control
        m.d.comb += vc.port.read.eq(switched | drained)
        with m.If(control.va_grant):
            m.d.sync += [state.active.eq(1), state.out_port.eq(vc.request.port),
                         state.out_vc.eq(control.cur_vc)]
        if self.fanout:
            with m.If(control.copy_grant):
                m.d.sync += [state.active.eq(1), state.fan.eq(vc.port.route.targets),
                             state.out_vc.eq(self.stage.broadcast_vc)]
        with m.If(switched & vc.port.flit.last):
            m.d.sync += state.active.eq(0)
            if self.fanout:
                m.d.sync += state.fan.eq(0)
        with m.If(drained):
            m.d.sync += state.dropping.eq(~vc.port.flit.last)
