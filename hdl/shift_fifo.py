"""A small FIFO of registers whose front entry is a register: reading it costs no logic."""

from amaranth.hdl import Module, Mux, Signal

from .flit_buffer import Queue


class ShiftFIFO(Queue):
    """A first-in first-out queue of ``depth`` entries of ``width`` bits, kept in registers
    that shift toward the front on every read, so that ``r_data`` and ``r_rdy`` come straight
    from flip-flops. Meant for a few entries (the split router keeps one route result per
    packet in one); :class:`amaranth.lib.fifo.SyncFIFO` suits deep queues.

    Ports (:class:`~.flit_buffer.Queue`'s): a write when full is taken when a read makes
    room in the same cycle; ``w_rdy`` (not full) is a register: it does not wait for
    ``r_en``.
    """

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
