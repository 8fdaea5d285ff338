"""A small FIFO of registers whose front entry is a register: reading it costs no logic."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.wiring import In, Out

from twinnet.model import checks

from .checked import CheckedComponent


class ShiftFIFO(CheckedComponent):
    """A first-in first-out queue of ``depth`` entries of ``width`` bits, kept in registers
    that shift toward the front on every read, so that ``r_data`` and ``r_rdy`` come straight
    from flip-flops. Meant for a few entries (the split router keeps one route result per
    packet in one); :class:`amaranth.lib.fifo.SyncFIFO` suits deep queues.

    Ports (as :class:`amaranth.lib.fifo.SyncFIFO`'s, first-word fall-through):
        w_en, w_data: In — write ``w_data`` this cycle (ignored when full, unless a read
            makes room in the same cycle).
        w_rdy: Out — not full (a register: it does not wait for ``r_en``).
        r_en: In — remove the front entry this cycle (ignored when empty).
        r_data, r_rdy: Out — the front entry, and that there is one.

    """

    @classmethod
    def check(cls, width: int, depth: int) -> None:
        checks.check_int("width", width, minimum=1)
        checks.check_int("depth", depth, minimum=1)

    def __init__(self, width: int, depth: int):
        self.width, self.depth = width, depth
        super().__init__({"w_en": In(1), "w_data": In(width), "w_rdy": Out(1),
                          "r_en": In(1), "r_data": Out(width), "r_rdy": Out(1)})

    def registers(self) -> tuple[list, list]:
        """Per slot, front first: "holds an entry" and the entry."""
        return ([Signal(name=f"valid_{k}") for k in range(self.depth)],
                [Signal(self.width, name=f"entry_{k}") for k in range(self.depth)])

    def elaborate(self, platform):
        m = Module()
        valid, entries = self.registers()
        pop = self.r_en & valid[0]
        before = None  # slot k - 1 after the shift
        for k in range(self.depth):
            # After a read every entry moves one slot toward the front; a write lands in the
            # first slot left empty.
            after_valid = Mux(pop, valid[k + 1] if k + 1 < self.depth else 0, valid[k])
            after_entry = Mux(pop, entries[k + 1] if k + 1 < self.depth else entries[k],
                              entries[k])
            write = self.w_en & ~after_valid & (1 if before is None else before)
            m.d.sync += [valid[k].eq(after_valid | write),
                         entries[k].eq(Mux(write, self.w_data, after_entry))]
            before = after_valid
        m.d.comb += [self.w_rdy.eq(~valid[-1]), self.r_rdy.eq(valid[0]),
                     self.r_data.eq(entries[0])]
        return m
