"""The route queue: the split router's routes of the packets in one input VC buffer, front first."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .stage_config import StageConfig


class RouteQueue(wiring.Component):
    """A first-in first-out queue of routes whose front entry is a register.

    The split router keeps one route per packet of an input VC buffer, written with the head
    flit and used when the packet is allocated. A buffer of D flits holds up to D - L + 1
    packets (an upstream router sends a packet only with room for L flits, and packets may be
    one flit long), so the queue is as deep as that; its entries behind the front wait in a
    memory (LUT RAM on an FPGA) in the compact :attr:`StageConfig.stored_route_layout`, and
    the front is a register of the whole :attr:`StageConfig.route_layout`
    (:meth:`StageConfig.expand_route` derives the rest as an entry moves to the front), so
    that allocation starts from flip-flops. A route written into an empty queue (or into
    one whose front leaves now and whose memory is empty) goes straight to the front: it is
    there in the next cycle.

    Parameters:
        stage: the router's :class:`StageConfig`.
        depth: entries, the front included (>= 1).

    Ports (those of :class:`~twinnet.hdl.flit_buffer.Queue`, first-word fall-through):
        w_en, w_data: In — write route ``w_data`` (:attr:`StageConfig.stored_route_layout`)
            this cycle; a write when full is ignored, even with a read.
        w_rdy: Out — not full (from registers).
        r_en: In — remove the front entry this cycle (ignored when empty).
        r_data, r_rdy: Out — the front route (:attr:`StageConfig.route_layout`) and that there
            is one (registers).
        level: Out(range(depth + 1)) — entries held.
    """

    def __init__(self, stage: StageConfig, depth: int):
        self.stage, self.depth = stage, depth
        self.width = stage.stored_route_layout.size
        super().__init__({"w_en": In(1), "w_data": In(stage.stored_route_layout),
                          "w_rdy": Out(1), "r_en": In(1), "r_data": Out(stage.route_layout),
                          "r_rdy": Out(1), "level": Out(range(depth + 1))})

    def storage(self, m) -> Memory | None:
        """The entries behind the front, a submodule of ``m`` (None when the queue holds one
        entry); entry ``(consume + j) mod (depth - 1)`` is the (j + 1)-th from the front."""
        if self.depth == 1:
            return None
        storage = m.submodules.storage = Memory(shape=self.width, depth=self.depth - 1,
                                                init=[])
        return storage

    def counters(self) -> tuple[Signal, Signal]:
        """``front_valid`` (the front register holds an entry) and ``behind`` (entries in the
        memory)."""
        return Signal(name="front_valid"), Signal(range(self.depth), name="behind")

    @staticmethod
    def write_enable(into_memory):
        """The memory's write enable, given ``into_memory``: a route is written behind the
        front now (a subclass may change it)."""
        return into_memory

    def expand(self, m, stored):
        """The front register's value for stored route ``stored``."""
        return self.stage.expand_route(m, stored)

    def pointers(self) -> tuple[Signal, Signal]:
        """``produce`` (where the next write into the memory goes) and ``consume`` (the entry
        that moves to the front next)."""
        size = max(self.depth - 1, 1)
        return Signal(range(size), name="produce"), Signal(range(size), name="consume")

    def elaborate(self, platform):
        m = Module()
        stage = self.stage
        front_valid, behind = self.counters()
        write = self.w_en & self.w_rdy
        pop = self.r_en & front_valid
        # A write goes to the front when nothing is ahead of it after this cycle's pop.
        to_front = write & (behind == 0) & (~front_valid | pop)
        storage = self.storage(m)
        loaded = Signal(stage.stored_route_layout)  # what enters the front register
        m.d.comb += loaded.eq(self.w_data)
        if storage is not None:
            produce, consume = self.pointers()
            size = self.depth - 1
            w_port, r_port = storage.write_port(), storage.read_port(domain="comb")
            into_memory = write & ~to_front
            from_memory = pop & (behind != 0)
            m.d.comb += [w_port.addr.eq(produce), w_port.data.eq(self.w_data),
                         w_port.en.eq(self.write_enable(into_memory)), r_port.addr.eq(consume)]
            with m.If(from_memory):
                m.d.comb += loaded.eq(r_port.data)
            for pointer, step in ((produce, into_memory), (consume, from_memory)):
                with m.If(step):
                    m.d.sync += pointer.eq(Mux(pointer == size - 1, 0, pointer + 1))
            m.d.sync += behind.eq(behind + into_memory - from_memory)
            moves = to_front | from_memory
        else:
            moves = to_front
        expanded = self.expand(m, loaded)
        with m.If(moves):
            m.d.sync += self.r_data.eq(expanded)
        with m.If(moves):
            m.d.sync += front_valid.eq(1)
        with m.Elif(pop):
            m.d.sync += front_valid.eq(0)
        m.d.comb += [self.r_rdy.eq(front_valid), self.level.eq(front_valid + behind),
                     self.w_rdy.eq(~front_valid | (behind != self.depth - 1))]
        return m
