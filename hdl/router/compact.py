"""The compact router (pipeline 2): VC allocation, switch allocation and the crossbar in the
cycle after a flit's buffer write, 2 cycles per hop."""

from amaranth.hdl import Cat, Const, Mux, Signal

from ..arbiter import RoundRobinArbiter
from .composition import Composition
from .crossbar import Crossbar
from .onehot import encode, lowest, select
from .switch_allocator import SwitchAllocator
from .vc_allocator import VCAllocator


class CompactComposition(Composition):
    """Input units, request units, a :class:`VCAllocator`, a :class:`SwitchAllocator` and a
    crossbar with one input per input port. Packets of different input VCs may interleave
    flit by flit on one output; a VC's packet keeps its output VC from allocation to tail.
    Broadcasts are allocated and switched before unicast, one per cycle each."""

    def build(self) -> list:
        self._vc_state()
        alloc = self._vc_allocation()
        drain_sel = self._switch_requests()
        accepted, read = self._switch_allocation()
        return self._traverse(alloc, drain_sel, accepted, read)

    def _vc_state(self) -> None:
        """Per input VC: ``active`` (sending a packet), ``dropping`` (draining a malformed
        one), the output port and VC it holds, and with broadcast the outputs of its copy."""
        m, port_count, vmax = self.m, self.config.port_count, self.config.max_vc_count
        for p, port_vcs in enumerate(self.vcs):
            for v, s in enumerate(port_vcs):
                name = f"{p}_{v}"
                s["active"] = Signal(name=f"active_{name}")
                s["dropping"] = Signal(name=f"dropping_{name}")
                s["out_port"] = Signal(range(port_count), name=f"out_port_{name}")
                s["out_vc"] = Signal(range(vmax), name=f"out_vc_{name}")
                # The front flit of an idle VC is a head flit (links and PE framing keep
                # packets whole and in order in each VC buffer).
                idle_head = s["in"].valid & ~s["active"] & ~s["dropping"]
                s["drain"] = Signal(name=f"drain_{name}")
                m.d.comb += s["drain"].eq(s["in"].valid & (s["dropping"] | (
                    idle_head & s["in"].route.drop)))
                self.requests(s, name, idle_head)
                s["unicast"] = s["active"]
                if self.fanout:
                    # The outputs of the broadcast this VC is sending (zero for a unicast).
                    s["fan"] = Signal(port_count, name=f"fan_{name}")
                    s["unicast"] = s["active"] & ~s["fan"].any()

    def _vc_allocation(self) -> list:
        """Broadcasts first (their outputs are then blocked for unicast), then the
        :class:`VCAllocator`. Returns per output the one-hot VC allocated this cycle. The
        output VC is the lowest eligible one in the packet's mask."""
        m, config = self.m, self.config
        vmax = config.max_vc_count
        allocator = m.submodules.vc_allocator = VCAllocator(config.vc_counts, config.port_count,
                                                            vmax)
        for i, s in enumerate(self.flat):
            m.d.comb += [allocator.requests[i].eq(s["va_to"]), allocator.offers[i].eq(s["w_sel"])]
            s["va_grant"] = allocator.grant[i]
        alloc = list(allocator.allocated)
        if self.fanout:
            copy_take = self.copy_allocation(Cat(s["copy_req"] for s in self.flat))
            m.d.comb += allocator.blocked.eq(copy_take)
            alloc = [Mux(copy_take[o], 1 << w, a)
                     for o, (w, a) in enumerate(zip(self.free["copy_vc"], alloc))]
        for s in self.flat:
            # A packet may cross the switch in the cycle its VC is allocated.
            s["sa_req"] = s["in"].valid & (s["unicast"] | s["va_grant"])
            s["cur_port"] = Mux(s["active"], s["out_port"], s["move_port"])
            s["cur_vc"] = Mux(s["active"], s["out_vc"], encode(s["w_sel"], vmax))
        return alloc

    def _switch_requests(self) -> list:
        """The switch request of every input VC (``sa_to``: one-hot output). A port with a
        draining VC reads that VC (lowest first) instead, so that each port reads at most one
        flit and returns at most one credit per cycle. Broadcast flits cross first: one per
        cycle (round robin over the input VCs sending one) to all its outputs at once, which
        unicast switching then skips, with its input port. Returns per port the draining
        VC (one-hot)."""
        m, port_count = self.m, self.config.port_count
        drain_sel, draining = [], []
        for p, port_vcs in enumerate(self.vcs):
            count = len(port_vcs)
            bits = Cat(s["drain"] for s in port_vcs)
            sel = Signal(count, name=f"drain_sel_{p}")
            m.d.comb += sel.eq(lowest(bits, count))
            drain_sel.append(sel)
            draining.append(bits.any())
        if self.fanout:
            copy_sw = m.submodules.sa_copy = RoundRobinArbiter(len(self.flat))
            m.d.comb += copy_sw.advance.eq(1)
            index = 0
            for p, port_vcs in enumerate(self.vcs):
                for s in port_vcs:
                    m.d.comb += copy_sw.requests[index].eq(s["in"].valid & s["active"]
                                                           & s["fan"].any() & ~draining[p])
                    s["copy_go"] = copy_sw.grant[index]
                    index += 1
            self.copy_out = Signal(port_count, name="copy_out")
            out_bits = Const(0, port_count)
            for s in self.flat:
                out_bits = out_bits | Mux(s["copy_go"], s["fan"], 0)
            m.d.comb += self.copy_out.eq(out_bits)
            self.copy_port = [Cat(s["copy_go"] for s in port_vcs).any() for port_vcs in self.vcs]
        for p, port_vcs in enumerate(self.vcs):
            for s in port_vcs:
                wants = s["sa_req"] & ~draining[p]
                if self.fanout:
                    wants = wants & ~self.copy_port[p]
                to = Mux(wants, 1 << s["cur_port"], 0)
                s["sa_to"] = to & ~self.copy_out if self.fanout else to
        return drain_sel

    def _switch_allocation(self):
        """The :class:`SwitchAllocator`: returns ``accepted`` (per output, the input ports
        crossing to it) and ``read`` (per input VC, switched this cycle)."""
        m, config = self.m, self.config
        allocator = m.submodules.switch_allocator = SwitchAllocator(config.vc_counts,
                                                                    config.port_count)
        for i, s in enumerate(self.flat):
            m.d.comb += allocator.requests[i].eq(s["sa_to"])
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
                switched = switched | Cat(s["copy_go"] for s in port_vcs)
            m.d.comb += read_sw.eq(switched)
            index += count
            candidates = []
            for v, s in enumerate(port_vcs):
                # The crossbar carries data, first, last and the output VC tag.
                candidate = Signal(stage.crossbar_layout, name=f"xbar_candidate_{p}_{v}")
                m.d.comb += [candidate.data.eq(s["in"].flit.data),
                             candidate.first.eq(s["in"].flit.first),
                             candidate.last.eq(s["in"].flit.last), candidate.vc.eq(s["cur_vc"])]
                candidates.append(candidate)
                self._update(s, read_sw[v], drain_sel[p][v])
            m.d.comb += crossbar.inputs[p].eq(select(read_sw, candidates,
                                                     stage.crossbar_layout.size))
            # A drained flit is a head when its VC was not already dropping a packet.
            dropping = Cat(s["dropping"] for s in port_vcs)
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

    def _update(self, s: dict, switched, drained) -> None:
        """Input VC ``s`` reads its front flit when ``switched`` or ``drained``, and updates
        its state."""
        m = self.m
        m.d.comb += s["in"].read.eq(switched | drained)
        with m.If(s["va_grant"]):
            m.d.sync += [s["active"].eq(1), s["out_port"].eq(s["move_port"]),
                         s["out_vc"].eq(s["cur_vc"])]
        if self.fanout:
            with m.If(s["copy_grant"]):
                m.d.sync += [s["active"].eq(1), s["fan"].eq(s["in"].route.targets),
                             s["out_vc"].eq(self.stage.broadcast_vc)]
        with m.If(switched & s["in"].flit.last):
            m.d.sync += s["active"].eq(0)
            if self.fanout:
                m.d.sync += s["fan"].eq(0)
        with m.If(drained):
            m.d.sync += s["dropping"].eq(~s["in"].flit.last)
