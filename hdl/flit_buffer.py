"""A first-word fall-through FIFO in a memory, whose storage a proof can read."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from twinnet.model import checks

from .checked import CheckedComponent


class Queue(CheckedComponent):
    """The ports of a first-in first-out queue of ``depth`` entries of ``width`` bits, as
    :class:`amaranth.lib.fifo.SyncFIFO`'s (first-word fall-through), plus ``members``.

    Ports:
        w_en, w_data: In — write ``w_data`` this cycle.
        w_rdy: Out — a write is taken.
        r_en: In — remove the front entry this cycle (ignored when empty).
        r_data, r_rdy: Out — the front entry, and that there is one.
    """

    @classmethod
    def check(cls, width: int, depth: int, **members) -> None:
        checks.check_int("width", width, minimum=1)
        checks.check_int("depth", depth, minimum=1)

    def __init__(self, width: int, depth: int, **members):
        self.width, self.depth = width, depth
        super().__init__({"w_en": In(1), "w_data": In(width), "w_rdy": Out(1),
                          "r_en": In(1), "r_data": Out(width), "r_rdy": Out(1), **members})


class FlitBuffer(Queue):
    """A queue of ``depth`` entries of ``width`` bits in a memory with an asynchronous read
    port (LUT RAM on an FPGA), first-word fall-through: the front entry is on ``r_data``
    whenever ``r_rdy``. It behaves as :class:`amaranth.lib.fifo.SyncFIFO` does; being the
    project's own, its memory and pointers are reachable by a subclass (:meth:`storage`,
    :meth:`pointers`), so that a proof can follow an entry from its write to its read.

    Ports (:class:`Queue`'s, a write ignored when full, even with a read), and:
        level: Out(range(depth + 1)) — entries held.
    """

    def __init__(self, width: int, depth: int):
        super().__init__(width, depth, level=Out(range(depth + 1)))

    def storage(self, m) -> Memory:
        """The entries, a submodule of ``m``; entry ``(consume + j) mod depth`` is the j-th
        from the front."""
        storage = m.submodules.storage = Memory(shape=self.width, depth=self.depth, init=[])
        return storage

    def pointers(self) -> tuple[Signal, Signal]:
        """``produce`` (where the next write goes) and ``consume`` (the front entry)."""
        return (Signal(range(self.depth), name="produce"),
                Signal(range(self.depth), name="consume"))

    def front(self, consume, level):
        """The address of the front entry, given the pointer ``consume`` and ``level``."""
        return consume

    def elaborate(self, platform):
        m = Module()
        storage = self.storage(m)
        produce, consume = self.pointers()
        write = self.w_en & self.w_rdy
        read = self.r_en & self.r_rdy
        w_port, r_port = storage.write_port(), storage.read_port(domain="comb")
        m.d.comb += [self.w_rdy.eq(self.level != self.depth), self.r_rdy.eq(self.level != 0),
                     w_port.addr.eq(produce), w_port.data.eq(self.w_data), w_port.en.eq(write),
                     r_port.addr.eq(self.front(consume, self.level)), self.r_data.eq(r_port.data)]
        for pointer, step in ((produce, write), (consume, read)):
            with m.If(step):
                m.d.sync += pointer.eq(Mux(pointer == self.depth - 1, 0, pointer + 1))
        m.d.sync += self.level.eq(self.level + write - read)
        return m
