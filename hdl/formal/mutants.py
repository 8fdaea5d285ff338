"""Routers and route computes with one known bug each: every property must be able to fail.

A router mutant is a :class:`~.stages.FormalRouter` subclass that replaces one stage class by
a subclass overriding one method; a route mutant is a route compute subclass overriding
``elaborate``. :data:`MUTANTS` names them.
"""

from dataclasses import dataclass

from amaranth.hdl import Cat, ClockDomain, ClockSignal, DomainRenamer, Module, Mux, Signal

from .. import onehot
from ..header_route import HeaderRouteCompute
from .stages import (
    FormalRouter,
    ObservedArbiter,
    ObservedCompactComposition,
    ObservedEjectionMerger,
    ObservedFlitBuffer,
    ObservedInputUnit,
    ObservedIslipAllocator,
    ObservedOutputUnit,
    ObservedPacketAllocator,
    ObservedRouteQueue,
    ObservedSplitComposition,
    ObservedSwitchAllocator,
    ObservedVCAllocator,
)


class OffByOneOutputUnit(ObservedOutputUnit):
    """Misses the flit sent in a cycle in which a credit comes back on the same VC."""

    def _credit_counter(self, m, w: int, returned):
        spare = Signal(range(self.depth + 1), init=self.depth, name=f"spare_credits_{w}")
        sent = self.flit.valid
        if self.stage.config.ports[self.port_index].output_vc_count > 1:
            sent = sent & (self.flit.payload.vc == w)
        following = Signal(range(self.depth + 1), name=f"next_spare_credits_{w}")
        m.d.comb += following.eq(Mux(returned, spare + 1, spare - sent))
        m.d.sync += spare.eq(following)
        return self.keep(spare), following


class FlippingLinkOutputUnit(ObservedOutputUnit):
    """A link output's register inverts the top data bit of every head flit it sends (the
    campaign's survivor 519e4aa512ca, by hand)."""

    def _drive(self, m) -> list:
        returned = super()._drive(m)
        if not self.stage.config.ports[self.port_index].is_pe:
            sent, top = self.flit.payload, 1 << (self.stage.config.flit_width - 1)
            m.d.sync += self.port.flit.payload.data.eq(
                sent.data ^ Mux(sent.first, top, 0))
        return returned


class RoomUncheckedOutputUnit(ObservedOutputUnit):
    """Counts a VC free with room for a packet when it has room for L - 1 flits."""

    def _credit_counter(self, m, w: int, returned):
        spare, following = super()._credit_counter(m, w, returned)
        return spare, following + 1


class OneShortOutputUnit(ObservedOutputUnit):
    """Works the free flags out as if each VC had one credit fewer than its counter: a VC with
    room for exactly one (two) longest packets is not offered for them."""

    def _credit_counter(self, m, w: int, returned):
        spare, following = super()._credit_counter(m, w, returned)
        return spare, following - 1


class LateRoomOutputUnit(ObservedOutputUnit):
    """Works the free flags out from the credit counters' present values instead of their
    next ones: each flag lags its counter by a cycle."""

    def _credit_counter(self, m, w: int, returned):
        spare, _ = super()._credit_counter(m, w, returned)
        return spare, spare


class ShortBufferInputUnit(ObservedInputUnit):
    """Builds each flit buffer one flit shorter than the credits upstream promise."""

    def _make_buffers(self, m):
        stage, port = self.stage, self._port
        fifos = [self.flit_buffer(stage.flit_layout.size, port.buffer_depth - 1)
                 for _ in self.vcs]
        queues = [self.route_queue(stage, port.buffer_depth - stage.config.max_packet_length + 1)
                  for _ in self.vcs]
        for v, (fifo, queue) in enumerate(zip(fifos, queues)):
            m.submodules[f"fifo_{v}"], m.submodules[f"routes_{v}"] = fifo, queue
        self.buffers, self.route_queues = fifos, queues
        return fifos, queues


class TailDroppingInputUnit(ObservedInputUnit):
    """Never writes a packet's last flit into its buffer."""

    def _per_packet_route(self, m, vc_port, fifo, queue, write, stored, route):
        super()._per_packet_route(m, vc_port, fifo, queue, write & ~stored.last, stored, route)


class LongPacketInputUnit(ObservedInputUnit):
    """Lets a PE's packet run to L + 1 flits before cutting it (its flit count compared with
    L instead of L - 1)."""

    def _packet_full(self, state):
        return state.count == self.stage.config.max_packet_length


class ReadingAheadBuffer(ObservedFlitBuffer):
    """Presents the second flit instead of the front one while two or more wait."""

    def front(self, consume, level):
        second = Mux(consume == self.depth - 1, 0, consume + 1)
        return Mux(level >= 2, second, consume)


class ReadingAheadInputUnit(ObservedInputUnit):
    flit_buffer = ReadingAheadBuffer


class OvertakingInputUnit(ObservedInputUnit):
    """With the bypass, offers a head arriving on a link even while a packet of its VC waits
    for allocation: the new packet overtakes the waiting one."""

    def _per_packet_route(self, m, vc_port, fifo, queue, write, stored, route):
        super()._per_packet_route(m, vc_port, fifo, queue, write, stored, route)
        if not self._port.is_pe:
            arriving = write & stored.first
            m.d.comb += [vc_port.route.eq(Mux(arriving, self.stage.expand_route(m, route),
                                              queue.r_data)),
                         vc_port.head.eq(queue.r_rdy | arriving)]


class ClearingQueue(ObservedRouteQueue):
    """Clears the route that moves to the front of the route queue from its memory."""

    def expand(self, m, loaded):
        return super().expand(m, Mux(self.r_en & (self.level > 1), 0, loaded))


class ClearingQueueInputUnit(ObservedInputUnit):
    route_queue = ClearingQueue


class InterleavingComposition(ObservedSplitComposition):
    """Lets every output be allocated in every cycle, also while a packet holds it."""

    def _output_state(self) -> None:
        super()._output_state()
        self.m.d.comb += self.avail.eq(-1)


class ClosedOutputComposition(ObservedSplitComposition):
    """Opens output 0 only as its packet's last flit leaves, never while it is idle: it is
    never allocated (the campaign's survivor a33bafe96940, by hand)."""

    def _output_state(self) -> None:
        super()._output_state()
        self.m.d.comb += self.avail[0].eq(self.reopen[0])


class DoubleCountingComposition(ObservedSplitComposition):
    """Counts every malformed packet twice."""

    def build(self) -> list:
        heads = super().build()
        return heads + heads


class TailIgnoringComposition(ObservedSplitComposition):
    """Ends an input VC's packet only at a tail that is not also its head: a one-flit
    packet's tail mark is ignored."""

    def _stream(self, vc) -> None:
        super()._stream(vc)
        self.m.d.comb += vc.control.finishing.eq(vc.control.read & vc.port.flit.last
                                                 & ~vc.port.flit.first)


class MisroutingComposition(ObservedSplitComposition):
    """Hands each request to the allocator one output further on."""

    def _allocation(self):
        grants, copy_take = super()._allocation()
        for i, vc in enumerate(self.flat):
            to = vc.request.to
            self.m.d.comb += self.allocator.requests[i].eq(Cat(to[-1], to[:-1]))
        return grants, copy_take


class BubbleStuckRoute(HeaderRouteCompute):
    """The header routing, asking for room for two packets on every move."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.bubble.eq(1)
        return m


class FixedPriorityArbiter(ObservedArbiter):
    """Always grants the lowest requester: the others can starve."""

    def _rotating(self, m):
        above = super()._rotating(m)
        m.d.comb += self.grant.eq(onehot.lowest(self.requests, self.count))
        return above


class WinnerFirstArbiter(ObservedArbiter):
    """After a grant is used, puts the winner first again instead of the requester after it
    (its pointer update includes the grant itself)."""

    def _two(self, m):
        second_first = super()._two(m)
        with m.If(self.advance & self.requests.any()):
            m.d.sync += second_first.eq(self.grant[1])
        return second_first

    def _rotating(self, m):
        above = super()._rotating(m)
        with m.If(self.advance & self.requests.any()):
            m.d.sync += above.eq(onehot.after(self.grant, self.count) | self.grant)
        return above


class TurnKeepingArbiter(ObservedArbiter):
    """Keeps its turn through a reset: its priority register has no reset (the default
    router's campaign's survivors 130ca3f678f5 and 12d639b894f0, a turn's reset multiplexer
    tied off, in every arbiter)."""

    def elaborate(self, platform):
        m = Module()
        m.domains.kept = ClockDomain(reset_less=True, local=True)
        m.d.comb += ClockSignal("kept").eq(ClockSignal("sync"))
        m.submodules.turn = DomainRenamer("kept")(super().elaborate(platform))
        return m


class EveryRequesterIslip(ObservedIslipAllocator):
    """Matches an open output to every input asking for it: one output granted twice."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        for o in range(self.output_count):
            asking = Cat(self.requests[i][o] for i in range(self.input_count))
            m.d.comb += self.grants[o].eq(asking & self.open[o].replicate(self.input_count))
        return m


class StillPointerIslip(ObservedIslipAllocator):
    """Never moves an output's grant pointer: the lowest input asking always wins."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.sync += [pointer.eq(pointer) for pointer in self.grant_pointers]
        return m


class AcceptSkipsIslip(ObservedIslipAllocator):
    """Never keeps the last output among those after an input's last accept: an input that
    accepted the output before it puts the lowest output offering it first instead (the
    002-t16 campaign's mutant 1cfc7374f3fd, an accept pointer bit stuck at 0, in every
    input)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.sync += [pointer[-1].eq(0) for pointer in self.accept_pointers]
        return m


class StaleRouteQueue(ObservedRouteQueue):
    """Writes its memory in every cycle but those it should: a route that waits behind the
    front is whatever was written in the cycle before its own (the campaign's survivor
    10f3a4cd434b, every entry)."""

    @staticmethod
    def write_enable(into_memory):
        return ~into_memory


class StaleRouteInputUnit(ObservedInputUnit):
    route_queue = StaleRouteQueue


class EveryPortVCAllocator(ObservedVCAllocator):
    """Grants every VC its port puts forward whose output is not blocked, not only the port
    each output picks: one output VC allocated to two packets."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        start = 0
        for p, count in enumerate(self.vc_counts):
            arbiter = m.submodules[f"vc_{p}"]
            for v in range(count):
                asked = (self.requests[start + v] & ~self.blocked).any()
                m.d.comb += self.grant[start + v].eq(arbiter.grant[v] & asked)
            start += count
        return m


class BlockedForwardVCAllocator(ObservedVCAllocator):
    """Puts forward a VC that asks for a blocked output (e.g. one held by another packet),
    which keeps its port's turn: the port's VCs asking for open outputs wait."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        start = 0
        for p, count in enumerate(self.vc_counts):
            arbiter = m.submodules[f"vc_{p}"]
            m.d.comb += [arbiter.requests[v].eq(self.requests[start + v].any())
                         for v in range(count)]
            start += count
        return m


class EveryInputSwitchAllocator(ObservedSwitchAllocator):
    """Matches an output to every crossbar input asking for it: two flits cross to one
    output."""

    islip_allocator = EveryRequesterIslip


class HeadFreesOutputUnit(ObservedOutputUnit):
    """Frees a compact router's output VC as its packet's head leaves, not its tail."""

    def _busy(self, m, w: int):
        busy = super()._busy(m, w)
        count = self.stage.config.ports[self.port_index].output_vc_count
        this_vc = (self.flit.payload.vc == w) if count > 1 else 1
        with m.If(self.flit.valid & self.flit.payload.first & this_vc & ~self.take[w]):
            m.d.sync += busy.eq(0)
        return busy


class StarvingAllocator(ObservedPacketAllocator):
    arbiter = FixedPriorityArbiter


class WinnerFirstAllocator(ObservedPacketAllocator):
    arbiter = WinnerFirstArbiter


class TurnKeepingAllocator(ObservedPacketAllocator):
    arbiter = TurnKeepingArbiter


class TurnKeepingComposition(ObservedSplitComposition):
    packet_allocator = TurnKeepingAllocator


class WinnerFirstComposition(ObservedSplitComposition):
    packet_allocator = WinnerFirstAllocator


class StarvingComposition(ObservedSplitComposition):
    packet_allocator = StarvingAllocator


class DoubleGrantComposition(ObservedSplitComposition):
    islip_allocator = EveryRequesterIslip


class StillPointerComposition(ObservedSplitComposition):
    islip_allocator = StillPointerIslip


class AcceptSkipsComposition(ObservedSplitComposition):
    islip_allocator = AcceptSkipsIslip


class OutputNeverOpen(FormalRouter):
    split_composition = ClosedOutputComposition


class LinkHeadFlipped(FormalRouter):
    output_unit = FlippingLinkOutputUnit


class RoomUnchecked(FormalRouter):
    output_unit = RoomUncheckedOutputUnit


class RoomOneShort(FormalRouter):
    output_unit = OneShortOutputUnit


class RoomLate(FormalRouter):
    output_unit = LateRoomOutputUnit


class BufferShort(FormalRouter):
    input_unit = ShortBufferInputUnit


class BypassOvertakes(FormalRouter):
    input_unit = OvertakingInputUnit


class DropCountedTwice(FormalRouter):
    split_composition = DoubleCountingComposition


class Misrouted(FormalRouter):
    split_composition = MisroutingComposition


class CreditOffByOne(FormalRouter):
    output_unit = OffByOneOutputUnit


class TailIgnored(FormalRouter):
    split_composition = TailIgnoringComposition


class LengthOffByOne(FormalRouter):
    input_unit = LongPacketInputUnit


class TailDropped(FormalRouter):
    input_unit = TailDroppingInputUnit


class BufferReadsAhead(FormalRouter):
    input_unit = ReadingAheadInputUnit


class RouteQueueClears(FormalRouter):
    input_unit = ClearingQueueInputUnit


class PacketsInterleave(FormalRouter):
    split_composition = InterleavingComposition


class ArbiterStarves(FormalRouter):
    split_composition = StarvingComposition


class ArbiterKeepsWinner(FormalRouter):
    split_composition = WinnerFirstComposition


class ArbiterKeepsTurn(FormalRouter):
    split_composition = TurnKeepingComposition


class IslipGrantsTwice(FormalRouter):
    split_composition = DoubleGrantComposition


class IslipPointerStill(FormalRouter):
    split_composition = StillPointerComposition


class IslipAcceptSkips(FormalRouter):
    split_composition = AcceptSkipsComposition


class CreditsForgottenInputUnit(ObservedInputUnit):
    """Owes a credit only for a flit read now: a credit left waiting (two VCs read at once)
    is never sent."""

    @staticmethod
    def _owed(pending, reads):
        return Cat(reads)


class HighestCreditFirstInputUnit(ObservedInputUnit):
    """Sends the waiting credits highest VC first, not lowest first."""

    @staticmethod
    def _credit_first(due, count):
        return onehot.lowest(due[::-1], count)[::-1]


class EmptyOnlyQueue(ObservedRouteQueue):
    """Reports room for a route only while it holds none."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.w_rdy.eq(self.level == 0)
        return m


class HeadWaitsInputUnit(ObservedInputUnit):
    """A PE port takes a head only into a VC whose route queue is empty (link ports, whose
    writes the credits bound, are left as they are)."""

    def _make_buffers(self, m):
        if self._port.is_pe:
            self.route_queue = EmptyOnlyQueue
        return super()._make_buffers(m)


class BubbleDroppingInputUnit(ObservedInputUnit):
    """Marks for dropping every packet whose move enters a ring (its bubble flag), not only
    one toward a port without a bubble."""

    def _route(self, m, written, valid, vc, bad_vc):
        route = super()._route(m, written, valid, vc, bad_vc)
        dropped = Signal(route.shape())
        m.d.comb += [dropped.eq(route), dropped.drop.eq(route.drop | self.route_compute.bubble)]
        return dropped


class OutputZeroUnaskedComposition(ObservedSplitComposition):
    """Never lets a packet for output 0 ask for it: its request unit is told it is not
    ready."""

    def ask(self, vc, ready, open_=None):
        super().ask(vc, ready & (vc.port.route.port != 0), open_)


class LostCopyComposition(ObservedSplitComposition):
    """A broadcast does not take its lowest-numbered target: that copy is never sent."""

    def copy_allocation(self, requests):
        take = super().copy_allocation(requests)
        return take & ~onehot.lowest(take, len(take))


class ExtraCopyComposition(ObservedSplitComposition):
    """A broadcast also takes the output after its lowest-numbered target: a copy goes where
    none belongs (a node beyond it gets the broadcast twice)."""

    def copy_allocation(self, requests):
        take = super().copy_allocation(requests)
        return take | (onehot.lowest(take, len(take)) << 1)[:len(take)]


class LowestLaneMerger(ObservedEjectionMerger):
    """Starts the lowest lane with a packet at its front, not the one that got there first."""

    def _next(self, arrived):
        return onehot.lowest(self.waiting | arrived, self.lane_count)


class UnlockedMerger(ObservedEjectionMerger):
    """Forgets the lane whose packet is under way: it starts whichever comes next."""

    def _chosen(self, arrived):
        return self._next(arrived)


class CreditsForgotten(FormalRouter):
    input_unit = CreditsForgottenInputUnit


class CreditsHighestFirst(FormalRouter):
    input_unit = HighestCreditFirstInputUnit


class HeadWaits(FormalRouter):
    input_unit = HeadWaitsInputUnit


class BubbleDropped(FormalRouter):
    input_unit = BubbleDroppingInputUnit


class RequestWithheld(FormalRouter):
    split_composition = OutputZeroUnaskedComposition


class BroadcastCopyLost(FormalRouter):
    split_composition = LostCopyComposition


class BroadcastCopyExtra(FormalRouter):
    split_composition = ExtraCopyComposition


class TwiceVCComposition(ObservedCompactComposition):
    vc_allocator = EveryPortVCAllocator


class BlockedForwardComposition(ObservedCompactComposition):
    vc_allocator = BlockedForwardVCAllocator


class TwiceSwitchComposition(ObservedCompactComposition):
    switch_allocator = EveryInputSwitchAllocator


class RouteQueueStale(FormalRouter):
    input_unit = StaleRouteInputUnit


class CompactVCGrantedTwice(FormalRouter):
    compact_composition = TwiceVCComposition


class CompactBlockedForward(FormalRouter):
    compact_composition = BlockedForwardComposition


class CompactSwitchGrantedTwice(FormalRouter):
    compact_composition = TwiceSwitchComposition


class CompactHeadFrees(FormalRouter):
    output_unit = HeadFreesOutputUnit


class LanesOutOfOrder(FormalRouter):
    ejection_merger = LowestLaneMerger


class LanesInterleave(FormalRouter):
    ejection_merger = UnlockedMerger


@dataclass(frozen=True)
class Mutant:
    """A named bug: ``router`` is the :class:`FormalRouter` subclass that has it, or
    ``route`` the route compute class that has it (the default router's routing);
    ``invariants`` False: the router's strengthening invariants are left out, so that the
    base case runs on to the property they would have preceded."""

    name: str
    text: str
    router: type | None = None
    route: type | None = None
    invariants: bool = True
    #: Router settings the bug needs (e.g. the iSLIP allocator), over the target's.
    settings: tuple = ()
    #: The bug lives in broadcast replication: it needs a routing that broadcasts (e.g.
    #: ``twinnet prove king --broadcast``).
    broadcast: bool = False


#: The mutants by name.
MUTANTS = {mutant.name: mutant for mutant in [
    Mutant("credit-off-by-one", "an output's credit counter misses the flit sent in a cycle "
           "in which a credit comes back on its VC", router=CreditOffByOne),
    Mutant("credit-off-by-one-unguarded", "credit-off-by-one, checked without the "
           "invariants: the counter runs out of its range", router=CreditOffByOne,
           invariants=False),
    Mutant("tail-dropped", "an input unit never writes a packet's last flit into its buffer",
           router=TailDropped),
    Mutant("packets-interleave", "an output may be allocated to a second packet while one "
           "holds it", router=PacketsInterleave),
    Mutant("arbiter-starves", "the packet allocator's port arbiters always grant the lowest "
           "port", router=ArbiterStarves),
    Mutant("arbiter-keeps-winner", "the packet allocator's arbiters, after a grant is used, "
           "put the winner first again instead of the requester after it",
           router=ArbiterKeepsWinner),
    Mutant("arbiter-keeps-turn", "the packet allocator's arbiters keep their turn through a "
           "reset: their priority registers have no reset", router=ArbiterKeepsTurn),
    Mutant("islip-grants-twice", "iSLIP matches an open output to every input VC asking for "
           "it (2 rounds)", router=IslipGrantsTwice,
           settings=(("allocator", "islip"), ("iterations", 2))),
    Mutant("islip-pointer-still", "iSLIP never moves an output's grant pointer (2 rounds)",
           router=IslipPointerStill, settings=(("allocator", "islip"), ("iterations", 2))),
    Mutant("islip-accept-skips", "iSLIP's accept pointers never keep the last output "
           "among those after the last accepted (2 rounds, 2 ejection lanes, so that an "
           "input is offered two outputs)", router=IslipAcceptSkips,
           settings=(("allocator", "islip"), ("iterations", 2), ("ejection_lanes", 2))),
    Mutant("room-unchecked", "an output VC counts as free for a packet with one credit too "
           "few", router=RoomUnchecked),
    Mutant("room-one-short", "an output's free flags count one credit fewer than its "
           "counters hold: a VC with room is withheld", router=RoomOneShort),
    Mutant("room-late", "an output's free flags are worked out from its credit counters' "
           "present values, not their next ones, so they lag a cycle", router=RoomLate),
    Mutant("tail-ignored", "an input VC ends its packet only at a tail that is not also its "
           "head: a one-flit packet's tail mark is ignored", router=TailIgnored),
    Mutant("length-off-by-one", "a PE port cuts a packet that is too long at L + 1 flits "
           "instead of L", router=LengthOffByOne),
    Mutant("buffer-short", "each input buffer holds one flit fewer than the credits upstream "
           "promise", router=BufferShort),
    Mutant("drop-counted-twice", "a malformed packet is counted twice on drop_count",
           router=DropCountedTwice),
    Mutant("misrouted", "each request reaches the allocator as one for the next output",
           router=Misrouted),
    Mutant("buffer-reads-ahead", "an input buffer presents its second flit instead of the "
           "front one while two or more wait", router=BufferReadsAhead),
    Mutant("route-queue-clears", "a route queue clears each entry as it moves to the front",
           router=RouteQueueClears),
    Mutant("route-queue-stale", "a route queue writes its memory in every cycle but those it "
           "should: a queued route is the one written the cycle before", router=RouteQueueStale),
    Mutant("output-never-open", "an output is opened only as its packet's last flit leaves, "
           "never while idle, so it is never allocated", router=OutputNeverOpen),
    Mutant("link-head-flipped", "a link output's register inverts the top data bit of every "
           "head flit it sends", router=LinkHeadFlipped),
    Mutant("bypass-overtakes", "with the bypass, a head arriving on a link is offered to "
           "the allocators even while a packet of its VC waits, and may overtake it",
           router=BypassOvertakes, settings=(("bypass", True),)),
    Mutant("lanes-out-of-order", "a PE port's ejection merger starts the lowest lane with a "
           "packet at its front, not the one that got there first (2 lanes)",
           router=LanesOutOfOrder, settings=(("ejection_lanes", 2),)),
    Mutant("lanes-interleave", "a PE port's ejection merger forgets the lane whose packet is "
           "under way and starts whichever comes next (2 lanes)", router=LanesInterleave,
           settings=(("ejection_lanes", 2),)),
    Mutant("credits-forgotten", "an input port owes a credit only for a flit read now: a "
           "credit left waiting (two VCs read at once) is never sent", router=CreditsForgotten),
    Mutant("credits-highest-first", "an input port sends its waiting credits highest VC "
           "first, not lowest first", router=CreditsHighestFirst),
    Mutant("pe-head-waits", "a PE port takes a head only into a VC whose route queue is "
           "empty", router=HeadWaits),
    Mutant("bubble-dropped", "an input unit drops every packet whose move enters a ring, "
           "not only those toward a port without a bubble", router=BubbleDropped),
    Mutant("request-withheld", "a packet for output 0 never asks for it (its request unit is "
           "told it is not ready)", router=RequestWithheld),
    Mutant("broadcast-copy-lost", "a broadcast does not take its lowest-numbered target: "
           "that copy is never sent", router=BroadcastCopyLost, broadcast=True),
    Mutant("broadcast-copy-extra", "a broadcast also takes the output after its "
           "lowest-numbered target: a node beyond it gets the broadcast twice",
           router=BroadcastCopyExtra, broadcast=True),
    Mutant("compact-vc-granted-twice", "the compact router's VC allocator grants every VC "
           "the input ports put forward: one output VC allocated to two packets",
           router=CompactVCGrantedTwice, settings=(("pipeline", 2),)),
    Mutant("compact-blocked-forward", "the compact router's VC allocator puts forward a VC "
           "whose output is held by another packet, which blocks its port's other VCs (outputs "
           "held per packet)", router=CompactBlockedForward,
           settings=(("pipeline", 2), ("hold", "packet"))),
    Mutant("compact-switch-granted-twice", "the compact router's switch allocator matches an "
           "output to every input asking for it: two flits cross to one output",
           router=CompactSwitchGrantedTwice, settings=(("pipeline", 2),)),
    Mutant("compact-head-frees", "the compact router frees an output VC as its packet's head "
           "leaves, not its tail", router=CompactHeadFrees, settings=(("pipeline", 2),)),
    Mutant("route-bubble-stuck", "the default router's route compute asks for room for two "
           "packets on every move", route=BubbleStuckRoute),
]}
