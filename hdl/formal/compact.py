"""The compact router's property set (pipeline 2: :class:`~twinnet.hdl.router.compact.
CompactComposition`): the split router's (:mod:`.router`) where the two agree, restated where
the compact router differs.

The compact router stores a head's route beside every flit of its packet, allocates an
output VC (not a whole output) to a packet from its head's arrival at the front of its buffer
to its tail's crossing, switches flit by flit, so that packets of different input VCs may
interleave on an output (with ``hold="flit"``), and returns a flit's credit in the cycle
after its read. So the properties of outputs speak of output VCs, and credits owed upstream
include the one in the credit register. A broadcast takes its copy VC at every output its
route names at once, and its flits cross to all of them together, outside the switch
allocation.
"""

import dataclasses

from amaranth.hdl import Cat, Const, Mux, Signal
from amaranth.lib import data

from .allocator import turns_before
from .router import PROPERTIES, RouterChecks, RouterProof, chosen, lowest_index

_TEXTS = {
    "input_buffers_never_overflow": "no flit is written into a full input buffer",
    "pe_ready_with_room":
        "a PE port takes a flit exactly when no head waits in its register and the buffer "
        "the flit goes to has room: the open packet's VC's for a body or tail, else the VC "
        "the flit asks for (the last, for one the port does not have)",
    "allocation_has_room":
        "an output VC is allocated only with room for a whole longest packet downstream, "
        "for two where the move enters a ring (bubble)",
    "credits_returned":
        "an input port returns one credit per flit read, in the next cycle or later: while "
        "it owes credits it sends one every cycle, for the lowest VC it owed one in the "
        "cycle before",
    "whole_packets_per_output":
        "an output VC is allocated to one packet at a time, only while no packet holds it "
        "(with outputs held per packet, an output only while none of its VCs does), and "
        "carries that packet's flits: its head first, at most L flits, its tail last",
    "route_honoured":
        "a packet is allocated only an output and a VC its route compute allowed, and a "
        "malformed packet none: the route stored with a head is the route compute's result; "
        "it is marked dropped exactly when the header is malformed, asks for a VC its port "
        "does not have or names no VC of an output (a bubble toward a port without one); "
        "the route compute gives what the family's specification says for the head's "
        "header, input port and VC, as wired into the router; and allocation follows the "
        "stored route",
    "broadcast_copied":
        "a broadcast is allocated at once the copy VC of every output its route names, each "
        "free (with outputs held per packet, each output), with no unicast grant to its VC "
        "beside and no other output, and from the next cycle holds exactly those (its flits "
        "cross to all of them together: flits_conserved, flits_intact_in_order)",
    "flits_conserved":
        "every flit written into an input buffer was accepted there (from a link, "
        "unchanged), every flit read from a buffer crosses to exactly one output in that "
        "cycle or is drained, and every flit an output sends was read in that cycle from "
        "an input VC whose packet holds that output VC or is allocated it then",
    "flits_intact_in_order":
        "every buffer gives back each flit unchanged, after the flits written before it and "
        "before those written after it; a flit read from an input VC leaves unchanged on "
        "the output and VC its packet holds (or is drained, malformed)",
    "fair_allocation":
        "VC allocation: a port with a VC that asks for an output not blocked puts one of "
        "those forward, and an output not blocked that a VC put forward asks for is "
        "allocated; "
        "an input port that keeps putting forward a VC that asks for an output gets it "
        "before it goes to other ports P - 1 times, and an input VC that keeps asking for an "
        "output not blocked is allocated before its port's other VCs are allocated V - 1 "
        "times. Switch allocation: iSLIP's bounds over the crossbar's inputs (as on the split "
        "router with iSLIP, each input one crossbar input), and an input VC with a flit for "
        "an output crosses before its crossbar input's other VCs do V - 1 times",
    "credit_accounting":
        "each credit counter plus the flits downstream or on the link equals the buffer "
        "depth; each upstream credit count plus its buffer's level and the credits waiting "
        "to be returned (the compact router's credit leaves in the cycle after its read) "
        "equals the buffer depth",
}

#: The properties of :class:`CompactRouterProof`, in report order: the split router's, less
#: those of the stage the compact router lacks (ejection lanes), restated where it differs.
COMPACT_PROPERTIES = [
    dataclasses.replace(prop, text=_TEXTS.get(prop.name, prop.text)) for prop in PROPERTIES
    if prop.name not in ("lanes_merged_whole", "lanes_merged_in_order")]


class CompactRouterProof(RouterProof):
    """The top of a compact router's proof (:class:`RouterProof`'s parameters; ``router`` a
    :class:`~.stages.FormalRouter` of pipeline 2)."""

    property_list = COMPACT_PROPERTIES

    def make_checks(self, m, seen) -> "CompactChecks":
        return CompactChecks(m, self.router, seen, self.properties, self.spec)


class CompactChecks(RouterChecks):
    """The assertions of :data:`COMPACT_PROPERTIES` on one observed compact router."""

    def views(self) -> None:
        """Per output and input VC, its packet is allocated the output now (``grants``); per
        output, one of its VCs is allocated now (``taken``); per input VC, its front flit is
        drained now (``drained``) or crosses the switch (the switch allocator's ``read``)."""
        comp, outputs = self.comp, len(self.output_ports)
        self.copy_take = comp.copy_take if self.fanout else Const(0, outputs)
        self.grants = [Cat(vc.control.va_grant & vc.request.to[o] for vc in self.flat)
                       for o in range(outputs)]
        self.taken = [comp.alloc[o].any() for o in range(outputs)]
        self.drained = []
        for g, group in enumerate(comp.inputs):
            self.drained += [comp.drain_sel[g][k] for k in range(len(group))]
        # (A broadcast's flit crosses to all of its outputs at once, outside the switch
        # allocation.)
        self.switched = [comp.read[i] | vc.control.copy_go if self.fanout else comp.read[i]
                         for i, vc in enumerate(self.flat)]

    def goes_to(self, vc, o: int):
        """Input VC ``vc``'s flit crosses to output ``o`` when it crosses now: its packet's
        output (allocated now or before), or one of its broadcast's."""
        here = vc.control.cur_port == o
        return Mux(vc.state.fan.any(), vc.state.fan[o], here) if self.fanout else here

    @staticmethod
    def reads(vc):
        return vc.port.read

    @staticmethod
    def ready(vc):
        """Its buffer's front is the head of a packet not yet allocated."""
        return vc.port.valid & ~vc.state.active & ~vc.state.dropping

    @staticmethod
    def offer(vc):
        return vc.request.vc

    def leaving(self, o: int, w: int):
        """None: an output VC carries one packet at a time, and is allocated only while no
        packet holds it."""
        return Const(0, 1)

    @staticmethod
    def room(unit, v: int):
        """No write overflows the buffer of VC ``v`` of ``unit`` (routes are stored in it)."""
        fifo = unit.buffers[v]
        return ~(fifo.w_en & ~fifo.w_rdy)

    def route_written(self, i: int, unit, v: int):
        """A head is written now with its route, which its buffer entry stores."""
        fifo = unit.buffers[v]
        entry = data.View(self.router.stage.entry_layout, fifo.w_data)
        return fifo.w_en & entry.first, entry.route

    def held(self, i: int, unit, v: int) -> None:
        """What input VC ``i``'s buffer holds (:meth:`_held`); a flit read crosses the switch
        or drains, not both, and crosses only for a packet that holds an output VC or is
        granted one now."""
        self._held(i, unit.buffers[v])
        vc = self.flat[i]
        self.check("flits_conserved", (vc.port.read == (self.switched[i] | self.drained[i]))
                   & ~(self.switched[i] & self.drained[i])
                   & (~self.switched[i] | vc.state.active | vc.control.va_grant))

    def _held(self, i: int, fifo) -> None:
        """What input VC ``i``'s buffer holds: packets whose marks chain from the reader's
        place in the front packet to the writer's in the last, each head with a route the
        input unit stores; the VC sends (``active``) or drains (``dropping``) only a packet
        whose head has reached its front, and a packet whose head has been read until its
        tail is."""
        length = self.length
        vc = self.flat[i]
        state = vc.state
        writer, reader = self.writer[i], self.reader[i]
        layout = self.router.stage.entry_layout
        self.check("router_state", (vc.port.valid == fifo.r_rdy)
                   & (reader.open == (reader.count != 0)) & (writer.open == (writer.count != 0))
                   & (writer.count < length) & (reader.count < length))
        self.check("router_state", ~(state.active & state.dropping)
                   & (~reader.open | state.active | state.dropping)
                   & (~state.dropping | reader.open)
                   & (~state.active | reader.open | (fifo.level != 0)))
        # A packet being sent holds a VC of an output (a broadcast, its copy VC at each of
        # its outputs).
        holds = Const(0, 1)
        for o, count in enumerate(self.config.output_vc_counts):
            holds = holds | ((state.out_port == o) & (state.out_vc < count))
        if self.fanout:
            holds = Mux(state.fan.any(), state.out_vc == self.router.stage.broadcast_vc, holds)
            self.check("router_state", ~state.fan.any() | state.active)
        self.check("router_state", ~state.active | holds)
        self._held_packets(fifo, layout, reader, writer.open, writer.count)
        for j, slot in enumerate(fifo.slots):
            entry = data.View(layout, slot)
            self.check("router_state", ~((fifo.level > j) & entry.first) | self.legal(entry.route))

    def credits_due(self, p: int, v: int):
        """The credits waiting in the counter of VC ``v`` (a crossbar input per VC) and the
        one in the credit register, on its way upstream."""
        unit, credit = self.seen.inputs[p], self.router.port_in(p).credit
        sending = credit.valid & (credit.payload == v)
        return sending + unit.credit_waits[v] if unit.credit_waits else sending

    def _credits_owed(self, p: int, base: int) -> None:
        """Link input ``p`` (its input VCs from ``base``): one credit leaves every cycle after
        one in which any was owed (waiting, or a flit read), for the lowest VC owed one."""
        m = self.m
        unit = self.seen.inputs[p]
        count = self.config.ports[p].vc_count
        reads = Cat(self.flat[base + v].port.read for v in range(count))
        waits = unit.credit_waits
        if waits:
            owed = Cat((wait != 0) | reads[v] for v, wait in enumerate(waits))
            self.check("router_state", waits[0] == 0)
        else:  # a crossbar input per port: its VCs read one flit per cycle
            owed = reads
            self.check("credits_returned", (reads & (reads - 1)) == 0)
        before = Signal(count, name=f"credits_owed_{p}")
        m.d.sync += before.eq(owed)
        credit = self.router.port_in(p).credit
        self.check("credits_returned", credit.valid == before.any())
        self.check("credits_returned", ~credit.valid
                   | (credit.payload == lowest_index(before, len(credit.payload))))

    def crossed(self, i: int, leaving, flit):
        """Where ``leaving`` (read from input VC ``i`` now), ``flit`` is drained or crosses
        unchanged to the output and VC of its packet (allocated now or before)."""
        vc = self.flat[i]
        crossed = self.switched[i]
        for o, unit in enumerate(self.seen.outputs):
            sent = unit.flit
            crossed = crossed & (~self.goes_to(vc, o) | (
                sent.valid & (sent.payload.data == flit.data)
                & (sent.payload.first == flit.first) & (sent.payload.last == flit.last)
                & (sent.payload.abort == flit.abort)
                & (sent.payload.vc == vc.control.cur_vc)))
        return ~leaving | self.drained[i] | crossed

    def under_way(self, o: int, w: int, run):
        return self.seen.outputs[o].busy[w] & (run != 0)

    def outputs(self) -> None:
        """Per output VC: one packet at a time from its allocation, whole, and the room held
        for it downstream; per output, the flits sent are the switched ones."""
        config, length = self.config, self.length
        for o, p in enumerate(self.output_ports):
            unit = self.seen.outputs[o]
            count = config.ports[p].output_vc_count
            for w in range(count):
                run = self._vc_packets(o, w, count)
                self.credits_out(o, w, run)
                # Virtual cut-through: the packet that holds the VC has room downstream for
                # the rest of its longest length.
                self.check("router_state", ~unit.busy[w] | (unit.spare[w] + run >= length))
            busy = unit.busy[:count]
            if config.holds_outputs:
                self.check("router_state", (busy & (busy - 1)) == 0)
                self.check("whole_packets_per_output", ~self.taken[o] | ~busy.any())
            senders = Cat(self.switched[i] & self.goes_to(vc, o)
                          for i, vc in enumerate(self.flat))
            self.check("flits_conserved", (unit.flit.valid == senders.any())
                       & ((senders & (senders - 1)) == 0))
            self.check("whole_packets_per_output", (unit.take == self.comp.alloc[o]) & (
                (self.grants[o] & (self.grants[o] - 1)) == 0))
            offered = Const(0, config.max_vc_count)
            for i, vc in enumerate(self.flat):
                offered = offered | Mux(self.grants[o][i], self.offer(vc), 0)
            if self.fanout:  # a broadcast's copy VC, and then no unicast grant
                self.check("whole_packets_per_output",
                           ~(self.copy_take[o] & self.grants[o].any()))
                offered = Mux(self.copy_take[o], 1 << self.comp.free.copy_vc[o], offered)
            self.check("whole_packets_per_output", self.comp.alloc[o] == offered)

    def _vc_packets(self, o: int, w: int, count: int):
        """VC ``w`` of output ``o`` (of ``count``) carries the flits of the packet it is
        allocated to, whole: returns the flits of it sent so far (``run``)."""
        m, length = self.m, self.length
        unit = self.seen.outputs[o]
        sent = unit.flit
        on = sent.valid & (sent.payload.vc == w) if count > 1 else sent.valid
        run = Signal(range(length + 1), name=f"run_{o}_{w}")
        with m.If(on):
            m.d.sync += run.eq(Mux(sent.payload.last, 0, run + 1))
        busy, take = unit.busy[w], unit.take[w]
        self.check("whole_packets_per_output", ~on | (
            (busy | take) & (sent.payload.first == (run == 0)) & (run < length)
            & ((run < length - 1) | sent.payload.last)))
        self.check("whole_packets_per_output", ~(take & busy))
        # The packet that holds the VC is its owner's: an input VC sending a unicast there,
        # or a broadcast with a copy there on its copy VC.
        owners = Cat(self._owns(vc, o, w) for vc in self.flat)
        read_count = chosen(owners, [reader.count for reader in self.reader],
                            len(self.reader[0].count))
        read_open = chosen(owners, [reader.open for reader in self.reader], 1)
        self.check("router_state", (busy == owners.any()) & ((owners & (owners - 1)) == 0))
        self.check("router_state", Mux(busy, (run == read_count) & (read_open == (run != 0)),
                                       run == 0))
        return run

    def _owns(self, vc, o: int, w: int):
        """Input VC ``vc`` sends a packet on VC ``w`` of output ``o``."""
        state = vc.state
        unicast = state.active & (state.out_port == o) & (state.out_vc == w)
        if not self.fanout:
            return unicast
        copy = state.active & state.fan[o] & (w == self.comp.free.copy_vc[o])
        return Mux(state.fan.any(), copy, unicast)

    def _copies(self) -> None:
        """A broadcast is allocated at once every output its route names, each copy VC free
        (with outputs held per packet, each output), with no unicast grant beside, and then
        holds exactly those."""
        m, comp = self.m, self.comp
        outputs = len(self.output_ports)
        for i, vc in enumerate(self.flat):
            copy, route = vc.control.copy_grant, vc.port.route
            taken = Cat(unit.busy[w] for unit, w in zip(self.seen.outputs, comp.free.copy_vc))
            if self.config.holds_outputs:
                taken = Cat(unit.busy.any() for unit in self.seen.outputs)
            self.check("broadcast_copied", ~copy | (
                route.multi & ~route.drop & self.ready(vc) & ~(route.targets & taken).any()
                & ~vc.control.va_grant & (self.copy_take == route.targets)))
            copied = Signal(name=f"copied_{i}")
            targets = Signal(outputs, name=f"copy_targets_{i}")
            m.d.sync += [copied.eq(copy), targets.eq(route.targets)]
            self.check("broadcast_copied", ~copied | (vc.state.active
                                                     & (vc.state.fan == targets)))

    def drops(self) -> None:
        """A malformed packet is drained to no output, its head counted once."""
        for i, vc in enumerate(self.flat):
            state, control, route = vc.state, vc.control, vc.port.route
            self.check("malformed_drained_and_counted_once", ~control.drain | (
                vc.port.valid & (state.dropping | (~state.active & route.drop))))
            self.check("malformed_drained_and_counted_once", ~self.drained[i] | control.drain)
        self._drop_count(sum(self.drained[i] & vc.port.flit.first
                             for i, vc in enumerate(self.flat)))

    def fairness(self) -> None:
        """VC allocation: per output, a round robin over the input ports that put a VC
        forward for it; per input port, a round robin over its VCs that ask for an output not
        blocked. Switch allocation: iSLIP over the crossbar's inputs, then per output and
        input a round robin over the input's VCs with a flit for it. Each is bounded in the
        grants to others while a requester keeps asking (see :mod:`.allocator`)."""
        self._vc_fairness()
        switch = self.comp.switch_allocation
        self.islip_fairness(switch.match, switch.match.grants,
                            self.config.switch_inputs_per_vc, "switch_")
        self._switch_vc_fairness(switch)

    def _vc_fairness(self) -> None:
        """A port with a VC that asks for an output not blocked puts one of those forward;
        an output not blocked that a VC put forward asks for is allocated; an input port
        that keeps putting a VC forward for an output is granted it before it goes to others
        P - 1 times; an input VC that keeps asking for an output not blocked is put forward,
        and allocated, before its port's other VCs are allocated V - 1 times."""
        m, config = self.m, self.config
        allocator = self.comp.vc_allocation
        ports = config.port_count
        starts = [sum(config.vc_counts[:p]) for p in range(ports)]
        for o in range(len(self.output_ports)):
            arbiter = allocator.port_arbiters[o]
            first = self.turn(arbiter, f"va_first_port_{o}")
            open_ = ~allocator.blocked[o]
            forward = [Cat(allocator.vc_arbiters[p].grant[v] & allocator.requests[starts[p] + v][o]
                           for v in range(count)).any()
                       for p, count in enumerate(config.vc_counts)]
            self.check("fair_allocation", ~(open_ & Cat(forward).any()) | self.taken[o])
            won = arbiter.grant
            for p in range(ports):
                wait = Signal(range(ports + 1), name=f"va_wait_{o}_{p}")
                asks = open_ & forward[p]
                m.d.sync += wait.eq(Mux(asks & ~won[p], wait + (won.any() & ~won[p]), 0))
                self.check("fair_allocation", wait + turns_before(first, p, ports) <= ports - 1)
        for p, count in enumerate(config.vc_counts):
            arbiter = allocator.vc_arbiters[p]
            first = self.turn(arbiter, f"va_first_vc_{p}")
            granted = Cat(allocator.grant[starts[p] + v] for v in range(count))
            asking = Cat((allocator.requests[starts[p] + v] & ~allocator.blocked).any()
                         for v in range(count))
            # A port with a VC that asks for an output not blocked puts one of those forward.
            self.check("fair_allocation", ~asking.any() | (arbiter.grant & asking).any())
            for v in range(count):
                i = starts[p] + v
                asks = asking[v]
                wait = Signal(range(count + 1), name=f"va_wait_vc_{i}")
                m.d.sync += wait.eq(Mux(asks & ~granted[v],
                                        wait + (granted.any() & ~granted[v]), 0))
                self.check("fair_allocation", wait + turns_before(first, v, count) <= count - 1)

    def _switch_vc_fairness(self, switch) -> None:
        """Per output and crossbar input with several VCs: a VC that keeps a flit for the
        output crosses to it before the input's other VCs do V - 1 times."""
        m = self.m
        starts = [sum(switch.vc_counts[:g]) for g in range(len(switch.vc_counts))]
        for o in range(switch.output_count):
            for g, count in enumerate(switch.vc_counts):
                if count == 1:
                    continue
                arbiter = switch.vc_arbiters[o][g]
                first = self.turn(arbiter, f"sa_first_{o}_{g}")
                crossing = arbiter.grant & switch.accepted[o][g].replicate(count)
                for v in range(count):
                    asks = switch.requests[starts[g] + v][o]
                    wait = Signal(range(count + 1), name=f"sa_wait_{o}_{starts[g] + v}")
                    m.d.sync += wait.eq(Mux(asks & ~crossing[v],
                                            wait + (crossing.any() & ~crossing[v]), 0))
                    self.check("fair_allocation",
                               wait + turns_before(first, v, count) <= count - 1)
