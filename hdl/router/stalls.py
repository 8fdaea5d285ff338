"""Why packets wait in a router: its stall counters (``RouterConfig.stall_counters``).

Every cycle, each input VC whose next packet could be allocated (its head is at the front of
the route queue and the VC is idle or sending its last flit; not a malformed packet) counts
one ``heads``; if it was not allocated, exactly one reason counts too, the first that holds:

- ``arbitration``: it asked for an output that could take it, and another packet won;
- ``output``: the output of its route is held by another packet (the split router), or every
  VC its route allows there carries another packet (the compact router);
- ``credits``: the output is free but none of the VCs its route allows has room downstream
  for a whole packet;
- ``bubble``: one has room for a packet but not for the two a move into a ring needs
  (003 §6.3.2).

With adaptive routing, ``output`` also counts a packet that waits for the held outputs of its
grade (:class:`~.request_unit.RequestUnit`: outputs held from head to tail); otherwise the
reasons are those of the escape move (no adaptive VC was free, or it would have asked).
``switch`` counts, in the compact router, the cycles an allocated packet's front flit lost
switch allocation (the split router has none: an allocated
packet streams). The counters are 48-bit and wrap.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ..adders import sum_tree

#: The counters, in the order the reports list them (see the module docstring).
STALL_REASONS = ("heads", "arbitration", "output", "credits", "bubble", "switch")
#: Bits of each counter.
STALL_COUNTER_WIDTH = 48
#: One cycle of one input VC: one bit per counter.
stall_bits_layout = data.StructLayout({reason: 1 for reason in STALL_REASONS})


class StallSignature(wiring.Signature):
    """The counters, one ``Out(STALL_COUNTER_WIDTH)`` member per reason."""

    def __init__(self):
        super().__init__({reason: Out(STALL_COUNTER_WIDTH) for reason in STALL_REASONS})


class StallCounters(wiring.Component):
    """Counters of :data:`STALL_REASONS` over ``vc_total`` input VCs.

    Ports:
        reasons: In(:data:`stall_bits_layout`).array(vc_total) — this cycle's bits per VC.
        counts: Out(:class:`StallSignature`) — the sums since reset (wrapping).
    """

    def __init__(self, vc_total: int):
        self.vc_total = vc_total
        super().__init__({"reasons": In(stall_bits_layout).array(vc_total),
                          "counts": Out(StallSignature())})

    def elaborate(self, platform):
        m = Module()
        for reason in STALL_REASONS:
            count = getattr(self.counts, reason)
            now = Signal(range(self.vc_total + 1), name=f"{reason}_now")
            m.d.comb += now.eq(sum_tree([getattr(bits, reason) for bits in self.reasons]))
            m.d.sync += count.eq(count + now)
        return m
