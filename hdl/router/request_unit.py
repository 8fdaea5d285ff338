"""The request unit: what a waiting packet asks the allocators for."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..onehot import encode, lowest
from .stage_config import StageConfig


class RequestUnit(wiring.Component):
    """The request of one input VC whose next packet has route ``route``.

    A unicast packet asks for the output of its route when one of the VCs its route allows
    there is free: with room for a whole packet, or for two when the move enters a ring
    (``route.bubble``, 003 §6.3.2). The output VC it would get is the lowest such VC.

    With adaptive routing (002's 2S hop-by-hop over an escape, and hop-by-hop) a packet takes
    the best grade among its outputs with a free adaptive VC (002 §3.3.2): grade 1 if one of
    them has one, else grade 2, and only when none has one its escape move. It asks for an
    output of that grade (the lowest-numbered). Where outputs are held by one packet at a time
    (the split router, the compact one with ``hold="packet"``) it asks only for those of that
    grade that may be allocated this cycle, and while all of them are held it waits for them:
    a held link does not send it to a worse grade or to its escape (a packet that took every
    open grade-2 output would load the diagonals beyond their share; measured on KT16 with
    both ties, 0.626 → 0.653 flits/PE/cycle). The choice is made anew every cycle. With
    :attr:`StageConfig.multiple_requests` (the split router with iSLIP) it asks for every
    such output of the grade at once, and the allocator's match picks one; the VC it then
    takes is that output's lowest free adaptive VC (the composition's
    :attr:`~.composition.FreeState.adaptive_vc`). A broadcast asks for all of its
    targets at once, each needing its copy VC free (for two packets where the copy enters a
    ring).

    Parameters:
        stage: the router's :class:`StageConfig`.

    Ports:
        route: In(route layout) — the route of the VC's next packet.
        ready: In(1) — that packet may be allocated now.
        free_one, free_two: In(one VC mask per output) — the output units' free VCs.
        adaptive_free: In(ports) — adaptive routing only: bit o, output o has an adaptive VC
            free for a whole packet.
        open: In(ports) — adaptive routing with outputs held from head to tail only (the split
            router, the compact one with ``hold="packet"``): bit o, output o may be allocated
            this cycle.
        copy_one, copy_two: In(ports) — broadcast only: bit o, the copy VC of output o is free
            for one / two whole packets.
        to: Out(ports) — one-hot: the output asked for (zero: none); with
            :attr:`StageConfig.multiple_requests`, every output asked for.
        vc: Out(max VCs) — one-hot: the output VC it would get (with multiple requests: on
            its escape move).
        port: Out(range(ports)) — the output of its move (meaningful with ``to``; with
            multiple requests, on its escape move).
        adaptive: Out(1) — with multiple requests only: it asks for adaptive moves (``to``
            holds the outputs), not for its escape move.
        waiting: Out(1) — with ``open`` only: its packet waits for the held outputs of its
            grade (and asks for nothing).
        copy: Out(1) — broadcast only: a broadcast asks for all of its targets.
    """

    def __init__(self, stage: StageConfig):
        self.stage = stage
        config = stage.config
        port_count, vmax = config.port_count, config.max_vc_count
        members = {"route": In(stage.route_layout), "ready": In(1),
                   "free_one": In(stage.port_vc_masks_layout),
                   "free_two": In(stage.port_vc_masks_layout),
                   "to": Out(port_count), "vc": Out(vmax), "port": Out(range(port_count))}
        if stage.adaptive_vcs:
            members["adaptive_free"] = In(port_count)
            if stage.config.holds_outputs:
                members.update(open=In(port_count), waiting=Out(1))
            if stage.multiple_requests:
                members["adaptive"] = Out(1)
        if stage.broadcast_vc is not None:
            members.update(copy_one=In(port_count), copy_two=In(port_count), copy=Out(1))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        stage, route = self.stage, self.route
        vmax = stage.config.max_vc_count
        unicast = self.ready & ~route.drop
        if stage.broadcast_vc is not None:
            unicast = unicast & ~route.multi
            needs = (route.enter & self.copy_two) | (~route.enter & self.copy_one)
            m.d.comb += self.copy.eq(self.ready & route.multi & ~route.drop
                                     & ~(route.targets & ~needs).any())
        if stage.adaptive_vcs:
            self._adaptive(m, unicast)
        elif stage.per_output_route:
            # From the stored per-output masks and each output's own free masks: the route
            # needs no decoding in front of the allocators.
            fits = [(route.need_one[o] & self.free_one[o]) | (route.need_two[o] & self.free_two[o])
                    for o in range(stage.config.port_count)]
            eligible = Const(0, vmax)
            for fit in fits:
                eligible = eligible | fit
            m.d.comb += [self.to.eq(Cat(self.ready & fit.any() for fit in fits)),
                         self.port.eq(route.port), self.vc.eq(lowest(eligible, vmax))]
        else:
            # Per output, from that output's own free masks: no multiplexer indexed by the
            # route's port in front of the allocators.
            m.d.comb += [
                self.to.eq(Cat(unicast & (route.port == o) & (route.mask & Mux(
                    route.bubble, self.free_two[o], self.free_one[o])).any()
                    for o in range(stage.config.port_count))),
                self.port.eq(route.port), self.vc.eq(lowest(self._eligible(m), vmax))]
        return m

    def _eligible(self, m):
        """The VCs of the route's output that the packet may take now."""
        route = self.route
        eligible = Signal(self.stage.config.max_vc_count)
        m.d.comb += eligible.eq(route.mask & Mux(route.bubble, self.free_two[route.port],
                                                 self.free_one[route.port]))
        return eligible

    def _adaptive(self, m, unicast) -> None:
        """Grade 1 if one of its outputs has a free adaptive VC, else grade 2, else the escape
        move (its lowest eligible VC); with held outputs, the grade's open outputs, waiting
        while none is open."""
        stage, route = self.stage, self.route
        port_count, vmax = stage.config.port_count, stage.config.max_vc_count
        one = route.grade_1 & self.adaptive_free
        grade = Signal(port_count)
        m.d.comb += grade.eq(Mux(one.any(), one, route.grade_2 & self.adaptive_free))
        best = grade
        if "open" in self.signature.members:
            best = grade & self.open
            m.d.comb += self.waiting.eq(unicast & grade.any() & ~best.any())
            unicast = unicast & ~self.waiting
        if stage.multiple_requests:
            eligible = self._eligible(m)
            moves = best.any()
            asks = unicast & (moves | eligible.any())
            m.d.comb += [self.to.eq(Mux(asks, Mux(moves, best, 1 << route.port), 0)),
                         self.adaptive.eq(moves), self.port.eq(route.port),
                         self.vc.eq(lowest(eligible, vmax))]
            return
        pick = Signal(port_count)
        m.d.comb += pick.eq(lowest(best, port_count))
        moves = pick.any()
        pick_vcs = Const(0, vmax)
        for o in range(port_count):
            pick_vcs = pick_vcs | Mux(pick[o], self.free_one[o] & stage.adaptive_vcs, 0)
        eligible = self._eligible(m)
        asks = unicast & (moves | eligible.any())
        m.d.comb += [self.to.eq(Mux(asks, Mux(moves, pick, 1 << route.port), 0)),
                     self.port.eq(Mux(moves, encode(pick, port_count), route.port)),
                     self.vc.eq(Mux(moves, lowest(pick_vcs, vmax), lowest(eligible, vmax)))]
