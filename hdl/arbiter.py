"""Round-robin arbiter."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib.wiring import In, Out

from twinnet.model import checks

from . import onehot
from .checked import CheckedComponent


class RoundRobinArbiter(CheckedComponent):
    """Grant one of ``count`` requesters, rotating priority after each accepted grant.

    Ports:
        requests: In(count) — one bit per requester.
        grant: Out(count) — one-hot (or zero when nothing is requested), combinational.
        advance: In(1) — the grant was used: the requester after it gets the highest priority
            from the next cycle on. A grant that is not used leaves the priority unchanged, so
            a requester that loses a later stage (e.g. the input-port accept of a separable
            allocator) keeps its turn.

    Fairness: a requester that keeps requesting is granted within ``count`` advancing grants.
    """

    @classmethod
    def check(cls, count: int) -> int:
        return checks.check_int("count", count, minimum=1)

    def __init__(self, count: int):
        self.count = count
        super().__init__({"requests": In(count), "grant": Out(count), "advance": In(1)})

    def elaborate(self, platform):
        m = Module()
        n = self.count
        if n == 1:
            m.d.comb += self.grant.eq(self.requests)
            return m
        if n == 2:
            self._two(m)
        else:
            self._rotating(m)
        return m

    def _two(self, m):
        """Two requesters: one bit of state says which one goes first. Returns that bit."""
        second_first = Signal()
        r0, r1 = self.requests[0], self.requests[1]
        m.d.comb += self.grant.eq(Cat(r0 & ~(r1 & second_first), r1 & ~(r0 & ~second_first)))
        with m.If(self.advance & self.requests.any()):
            m.d.sync += second_first.eq(self.grant[0])
        return second_first

    def _rotating(self, m):
        """Three or more requesters. Returns the priority state: the requesters strictly
        after the last advancing grant, which come first."""
        n = self.count
        # Lowest set bit as a prefix OR in LUTs (see :func:`twinnet.hdl.onehot.lowest`).
        above = Signal(n)
        m.d.comb += self.grant.eq(onehot.first_after(self.requests, above, n))
        with m.If(self.advance & self.requests.any()):
            m.d.sync += above.eq(onehot.after(self.grant, n))
        return above
