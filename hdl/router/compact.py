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
    crossbar with one input per input port. Packets of different input VCs may interleave
    flit by flit on one output; a VC's packet keeps its output VC from allocation to tail.
    Broadcasts are allocated and switched before unicast, one per cycle each."""

    vc_allocator = VCAllocator
    switch_allocator = SwitchAllocator

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
        for vc in self.flat:
            idle_head = self._idle_head(vc)
            self.m.d.comb += vc.control.drain.eq(vc.port.valid & (vc.state.dropping | (
                idle_head & vc.port.route.drop)))
            self.ask(vc, idle_head)
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
        return vc.request.to.any() | vc.request.copy if self.fanout else vc.request.to.any()

    def route_held(self, vc):
        route = vc.port.route
        held = ~(route.mask & ~self.busy[route.port]).any()
        if self.fanout:
            copy_busy = Cat(unit.busy[w] for unit, w in zip(self.outputs, self.free.copy_vc))
            held = Mux(route.multi, (route.targets & copy_busy).any(), held)
        return held

    def switch_lost(self, vc):
        return vc.control.switch_to.any() & ~vc.port.read

    def _unicast(self, vc):
        """The VC is sending a unicast packet."""
        return vc.state.active & ~vc.state.fan.any() if self.fanout else vc.state.active

    def _vc_allocation(self) -> list:
        """Broadcasts first (their outputs are then blocked for unicast), then the
        :class:`VCAllocator`. Returns per output the one-hot VC allocated this cycle. The
        output VC is the lowest eligible one in the packet's mask."""
        m, config = self.m, self.config
        vmax = config.max_vc_count
        allocator = self.vc_allocator(config.vc_counts, config.port_count, vmax)
        m.submodules.vc_allocator = allocator
        for i, vc in enumerate(self.flat):
            m.d.comb += [allocator.requests[i].eq(vc.request.to),
                         allocator.offers[i].eq(vc.request.vc),
                         vc.control.va_grant.eq(allocator.grant[i])]
        alloc = list(allocator.allocated)
        if self.fanout:
            copy_take = self.copy_allocation(Cat(vc.request.copy for vc in self.flat))
            m.d.comb += allocator.blocked.eq(copy_take)
            alloc = [Mux(copy_take[o], 1 << w, a)
                     for o, (w, a) in enumerate(zip(self.free.copy_vc, alloc))]
        for vc in self.flat:
            state = vc.state
            m.d.comb += [
                vc.control.cur_port.eq(Mux(state.active, state.out_port, vc.request.port)),
                vc.control.cur_vc.eq(Mux(state.active, state.out_vc, encode(vc.request.vc, vmax)))]
        return alloc

    def _switch_requests(self) -> list:
        """The switch request of every input VC (``switch_to``). A port with a draining VC
        reads that VC (lowest first) instead, so that each port reads at most one flit and
        returns at most one credit per cycle. Broadcast flits cross first: one per cycle
        (round robin over the input VCs sending one) to all its outputs at once, which
        unicast switching then skips, with its input port. Returns per port the draining VC
        (one-hot)."""
        m = self.m
        drain_sel, draining = [], []
        for p, port_vcs in enumerate(self.vcs):
            count = len(port_vcs)
            bits = Cat(vc.control.drain for vc in port_vcs)
            sel = Signal(count, name=f"drain_sel_{p}")
            m.d.comb += sel.eq(lowest(bits, count))
            drain_sel.append(sel)
            draining.append(bits.any())
        if self.fanout:
            self._copy_switching(draining)
        for p, port_vcs in enumerate(self.vcs):
            for vc in port_vcs:
                # A packet may cross the switch in the cycle its VC is allocated.
                wants = vc.port.valid & (self._unicast(vc) | vc.control.va_grant) & ~draining[p]
                if self.fanout:
                    wants = wants & ~self.copy_port[p]
                to = Mux(wants, 1 << vc.control.cur_port, 0)
                m.d.comb += vc.control.switch_to.eq(to & ~self.copy_out if self.fanout else to)
        return drain_sel

    def _copy_switching(self, draining) -> None:
        """One broadcast flit per cycle crosses to all of its outputs (``copy_out``) from its
        input port (``copy_port``)."""
        m, port_count = self.m, self.config.port_count
        copy_sw = m.submodules.sa_copy = RoundRobinArbiter(len(self.flat))
        m.d.comb += copy_sw.advance.eq(1)
        index = 0
        for p, port_vcs in enumerate(self.vcs):
            for vc in port_vcs:
                m.d.comb += [copy_sw.requests[index].eq(vc.port.valid & vc.state.active
                                                        & vc.state.fan.any() & ~draining[p]),
                             vc.control.copy_go.eq(copy_sw.grant[index])]
                index += 1
        self.copy_out = Signal(port_count, name="copy_out")
        out_bits = Const(0, port_count)
        for vc in self.flat:
            out_bits = out_bits | Mux(vc.control.copy_go, vc.state.fan, 0)
        m.d.comb += self.copy_out.eq(out_bits)
        self.copy_port = [Cat(vc.control.copy_go for vc in port_vcs).any()
                          for port_vcs in self.vcs]

    def _switch_allocation(self):
        """The :class:`SwitchAllocator`: returns ``accepted`` (per output, the input ports
        crossing to it) and ``read`` (per input VC, switched this cycle)."""
        m, config = self.m, self.config
        allocator = self.switch_allocator(config.vc_counts, config.port_count)
        m.submodules.switch_allocator = allocator
        for i, vc in enumerate(self.flat):
            m.d.comb += allocator.requests[i].eq(vc.control.switch_to)
        return allocator.accepted, allocator.read

    def _traverse(self, alloc, drain_sel, accepted, read) -> list:
        """Reads, VC state updates, the crossbar and the outputs. Returns, per port, "a
        malformed packet's head was drained"."""
        m, config, stage = self.m, self.config, self.stage
        port_count = config.port_count
        crossbar = m.submodules.crossbar = Crossbar(stage.crossbar_layout, port_count,
                                                    port_count)
        drop_heads, index = [], 0
        for p, port_vcs in enumerate(self.vcs):
            count = len(port_vcs)
            read_sw = Signal(count, name=f"read_sw_{p}")  # one-hot: the VC switched now
            switched = Cat(read[index + v] for v in range(count))
            if self.fanout:
                switched = switched | Cat(vc.control.copy_go for vc in port_vcs)
            m.d.comb += read_sw.eq(switched)
            index += count
            candidates = []
            for v, vc in enumerate(port_vcs):
                # The crossbar carries data, first, last and the output VC tag.
                candidate = Signal(stage.crossbar_layout, name=f"xbar_candidate_{vc.name}")
                m.d.comb += [candidate.data.eq(vc.port.flit.data),
                             candidate.first.eq(vc.port.flit.first),
                             candidate.last.eq(vc.port.flit.last),
                             candidate.vc.eq(vc.control.cur_vc)]
                candidates.append(candidate)
                self._update(vc, read_sw[v], drain_sel[p][v])
            m.d.comb += crossbar.inputs[p].eq(select(read_sw, candidates,
                                                     stage.crossbar_layout.size))
            # A drained flit is a head when its VC was not already dropping a packet.
            dropping = Cat(vc.state.dropping for vc in port_vcs)
            drop_heads.append((drain_sel[p] & ~dropping).any())
        for o in range(port_count):
            chosen = accepted[o]
            if self.fanout:
                chosen = Cat(accepted[o][p] | (self.copy_out[o] & self.copy_port[p])
                             for p in range(port_count))
            m.d.comb += crossbar.select[o].eq(chosen)
            self.drive_output(o, chosen.any(), crossbar.outputs[o], crossbar.outputs[o].vc,
                              alloc[o])
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
