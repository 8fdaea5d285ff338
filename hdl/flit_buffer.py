"""A first-word fall-through FIFO in a memory, whose storage a proof can read."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from twinnet.model import checks
from twinnet.model.sizes import BUFFER_MEMORIES

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

    With ``memory="block"`` the memory is read synchronously instead (block RAM on an FPGA:
    ECP5 DP16KD, iCE40 EBR), and the front entry is a register: the memory's read port
    prefetches the entry behind the next cycle's front, which becomes the front when the
    front is read. The buffer behaves the same cycle for cycle, and the memory's output
    feeds only that register (a block RAM's slow clock-to-output stays off the router's
    paths).

    With ``flag`` (a bit position of the entries), it also keeps that bit of the front entry
    in a register, ``r_flag``, worked out a cycle ahead from the entry behind the front (a
    one-bit copy of the memory, read there), so that logic that looks at that bit of the
    front entry (the split router: "the front flit is a tail") starts from a flip-flop.

    Ports (:class:`Queue`'s, a write ignored when full, even with a read), and:
        level: Out(range(depth + 1)) — entries held.
        r_flag: Out(1) — with ``flag``: bit ``flag`` of the front entry (when ``r_rdy``).
        r_flag_next: Out(1) — with ``flag``: what ``r_flag`` will be in the next cycle.
    """

    @classmethod
    def check(cls, width: int, depth: int, flag: int | None = None,
              memory: str = "lut") -> None:
        super().check(width, depth)
        if flag is not None:
            checks.check_int("flag", flag, minimum=0, maximum=width - 1)
        checks.check_choice("memory", memory, BUFFER_MEMORIES)

    def __init__(self, width: int, depth: int, flag: int | None = None, memory: str = "lut"):
        self.flag, self.memory_kind = flag, memory
        super().__init__(width, depth, level=Out(range(depth + 1)), r_flag=Out(1),
                         r_flag_next=Out(1))

    def storage(self, m) -> Memory:
        """The entries, a submodule of ``m``; entry ``(consume + j) mod depth`` is the j-th
        from the front."""
        storage = m.submodules.storage = Memory(shape=self.width, depth=self.depth, init=[])
        return storage

    def flag_storage(self, m) -> Memory:
        """The copy of the entries' flag bit (with ``flag`` and more than one entry), a
        submodule of ``m``, addressed as :meth:`storage`."""
        flags = m.submodules.flags = Memory(shape=1, depth=self.depth, init=[])
        return flags

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
        if self.memory_kind == "block":
            w_port, r_port = storage.write_port(), None
            front_entry, _, _ = self._block_front(m, storage, w_port, read)
        else:  # (read at the front's address, asynchronously)
            w_port, r_port = storage.write_port(), storage.read_port(domain="comb")
            front_entry = r_port.data
        m.d.comb += [self.w_rdy.eq(self.level != self.depth), self.r_rdy.eq(self.level != 0),
                     w_port.addr.eq(produce), w_port.data.eq(self.w_data), w_port.en.eq(write),
                     *([] if r_port is None else [r_port.addr.eq(self.front(consume, self.level))]),
                     self.r_data.eq(front_entry)]
        for pointer, step in ((produce, write), (consume, read)):
            with m.If(step):
                m.d.sync += pointer.eq(Mux(pointer == self.depth - 1, 0, pointer + 1))
        m.d.sync += self.level.eq(self.level + write - read)
        if self.flag is not None:
            self._front_flag(m, write, read, produce, consume)
        return m

    def _block_front(self, m, storage, w_port, read) -> tuple:
        """With ``memory="block"``: the front entry, a register (``front_entry``), and the
        memory's synchronous read port, transparent to ``w_port``, addressed with the entry
        behind the next cycle's front (registers ``ahead_1``, ``ahead_2``: the entries 1 and
        2 behind the front), so that its data is the entry behind the front: the next front
        when the front is read. (An entry is written there in the cycle before at the
        latest, or, when the buffer holds one entry, is the one written with the read.)
        Returns the front register, the two address registers and the read port's data."""
        wrap = lambda index: Mux(index == self.depth - 1, 0, index + 1)  # noqa: E731
        front = Signal(self.width, name="front_entry")
        ahead = [Signal(range(self.depth), init=k % self.depth, name=f"ahead_{k}")
                 for k in (1, 2)]
        r_port = storage.read_port(domain="sync", transparent_for=(w_port,))
        m.d.comb += r_port.addr.eq(Mux(read, ahead[1], ahead[0]))
        with m.If(read):
            m.d.sync += [front.eq(Mux(self.level > 1, r_port.data, self.w_data)),
                         ahead[0].eq(ahead[1]), ahead[1].eq(wrap(ahead[1]))]
        with m.Elif(self.level == 0):  # what is written now is the front (if anything is)
            m.d.sync += front.eq(self.w_data)
        return front, ahead, r_port.data

    def _front_flag(self, m, write, read, produce, consume) -> None:
        """``r_flag``: the next front entry's flag bit, from the entry behind the front, the
        entry written now or the front itself."""
        incoming = self.w_data[self.flag]
        if self.depth > 1:
            flags = self.flag_storage(m)
            w_port, r_port = flags.write_port(), flags.read_port(domain="comb")
            m.d.comb += [w_port.addr.eq(produce), w_port.data.eq(incoming), w_port.en.eq(write),
                         r_port.addr.eq(Mux(consume == self.depth - 1, 0, consume + 1))]
            behind = Mux(self.level > 1, r_port.data, incoming)
        else:
            behind = incoming
        m.d.comb += self.r_flag_next.eq(Mux(read, behind,
                                            Mux(self.level != 0, self.r_flag, incoming)))
        m.d.sync += self.r_flag.eq(self.r_flag_next)
