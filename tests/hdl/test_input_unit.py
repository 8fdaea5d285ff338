"""InputUnit against a Python model: per VC a queue of flits and of routes, credits back one
per flit read, under random packets of 1 to L flits on a link and random reads; a PE port's
framing against a model of what it writes, drops and counts."""

import random
from collections import deque

import pytest
from stage_models import run

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.flit import FlitFormat
from twinnet.hdl.header_route import HeaderRouteCompute, header_layout
from twinnet.hdl.router.input_unit import InputUnit
from twinnet.hdl.router.stage_config import StageConfig
from twinnet.sim_tb.layout import Fields

LENGTH, DEPTH = 3, 6
PORTS = (PortConfig("network", vc_count=2, buffer_depth=DEPTH, bubble=True),
         PortConfig("network", vc_count=3, buffer_depth=DEPTH),
         PortConfig("pe", vc_count=1, buffer_depth=DEPTH))


@pytest.mark.parametrize(("pipeline", "bypass"), [(2, False), (3, False), (3, True)])
def test_flits_routes_and_credits_match_the_model(pipeline, bypass):
    """With the bypass (the split router's own), a head arriving on the link while its VC has
    no packet waiting is offered in its arrival cycle, with its route just computed."""
    config = RouterConfig(16, LENGTH, PORTS, pipeline=pipeline, bypass=bypass)
    flit_format = FlitFormat(config, header_layout(config))
    stage = StageConfig(config, flit_format.head_layout)
    dut = InputUnit(stage, 0, HeaderRouteCompute(config, 0))
    head = Fields(flit_format.describe()["head"])
    rng = random.Random(pipeline)

    async def bench(ctx):
        flits = [deque(), deque()]  # per VC: (data, first, last) written and not read
        routes = [deque(), deque()]  # per VC: (port, mask, drop) of packets not yet popped
        room = [DEPTH, DEPTH]  # the sender's credits
        sending = [[], []]  # per VC: flits of the packet being sent
        route = [None, None]  # per VC: the route of the packet whose head is sent next
        credits = [0, 0]
        reads = [0, 0]
        pending = [0, 0]  # the split router's credits waiting to leave, per VC
        starting = [False, False]  # per VC: the next flit sent is a head
        for cycle in range(1500):
            quiet = cycle >= 1400  # the last cycles send nothing: everything drains
            vc = rng.randrange(2)
            # A router starts a packet with room for L flits (virtual cut-through).
            if not sending[vc] and not quiet and room[vc] >= LENGTH and rng.random() < 0.4:
                port, out_vc = rng.randrange(3), rng.randrange(3)
                word = head.pack({"route.port": port, "route.vc": out_vc, "payload": cycle})
                size = rng.randint(1, LENGTH)
                sending[vc] = [word] + [rng.getrandbits(16) for _ in range(size - 1)]
                starting[vc] = True
                # Malformed: a VC the output does not have (the PE output has one).
                drop = out_vc >= config.output_vc_counts[port]
                route[vc] = (port, 0 if drop else 1 << out_vc, drop)
            send = bool(sending[vc]) and room[vc] > 0 and rng.random() < 0.8
            ctx.set(dut.port.flit.valid, send)
            if send:
                word = sending[vc].pop(0)
                first, last, starting[vc] = starting[vc], not sending[vc], False
                ctx.set(dut.port.flit.payload.vc, vc)
                ctx.set(dut.port.flit.payload.data, word)
                ctx.set(dut.port.flit.payload.first, first)
                ctx.set(dut.port.flit.payload.last, last)
            # The front of each VC, as the model holds it.
            # The compact router reads one VC of a port per cycle, the split router any.
            reading = [bool(flits[v]) and rng.random() < 0.5 for v in range(2)]
            if pipeline == 2 and all(reading):
                reading[rng.randrange(2)] = False
            popping = [False, False]
            for v in range(2):
                assert ctx.get(dut.vcs[v].valid) == bool(flits[v])
                if flits[v]:
                    front = dut.vcs[v].flit
                    assert (ctx.get(front.data), ctx.get(front.first),
                            ctx.get(front.last)) == flits[v][0]
                ctx.set(dut.vcs[v].read, reading[v])
                # The route of the VC's next packet: beside its head flit at the front
                # (compact), or at the front of the route queue until the head is read (split).
                arriving = bypass and send and first and vc == v and not routes[v]
                at_front = (flits[v] and flits[v][0][1] if pipeline == 2
                            else routes[v] or arriving)
                if pipeline == 3:
                    assert ctx.get(dut.vcs[v].head) == bool(at_front)
                    popping[v] = reading[v] and flits[v][0][1]
                    ctx.set(dut.vcs[v].pop, popping[v])
                if at_front:
                    got = dut.vcs[v].route
                    port, mask, drop = route[v] if arriving else routes[v][0]
                    assert (ctx.get(got.port), ctx.get(got.drop)) == (port, drop)
                    if not drop:
                        assert ctx.get(got.mask) == mask
            # The split router's credit leaves in the cycle of the read, the compact
            # router's in the next.
            credit = None
            if pipeline == 3:
                # Credits wait per VC; the lowest VC with one goes, in this cycle.
                due = [pending[v] + reading[v] for v in range(2)]
                expected = next((v for v in range(2) if due[v]), None)
                if ctx.get(dut.port.credit.valid):
                    credit = ctx.get(dut.port.credit.payload)
                assert credit == expected
                for v in range(2):
                    pending[v] = due[v] - (v == expected)
            await ctx.tick()
            if pipeline == 2:
                if ctx.get(dut.port.credit.valid):
                    credit = ctx.get(dut.port.credit.payload)
                assert credit == next((v for v in range(2) if reading[v]), None)
            if send:
                room[vc] -= 1
                flits[vc].append((word, first, last))
                if first:
                    routes[vc].append(route[vc])
            for v in range(2):
                if reading[v]:
                    data, first, last = flits[v].popleft()
                    reads[v] += 1
                    if pipeline == 2 and last or popping[v]:
                        routes[v].popleft()
            if credit is not None:
                credits[credit] += 1
                room[credit] += 1
        assert credits == reads and sum(reads) > 300
        assert all(not queue for queue in flits)

    run(dut, bench)


class FramingModel:
    """What a PE port of maximum packet length ``length`` writes into its buffer, per the
    InputUnit's docstring: flits as ``(data, first, last, abort)``, and its counters."""

    def __init__(self, length: int):
        self.length = length
        self.open, self.count, self.discard, self.held = False, 0, False, None
        self.counts = {"stray": 0, "cut": 0, "long": 0}

    def ready(self, room_body: bool, room_head: bool) -> bool:
        return self.held is None and (room_body if self.open else room_head)

    def step(self, flit, room_head: bool) -> tuple | None:
        """The flit written this cycle for ``flit`` (``(data, first, last)`` taken from the
        PE, or None), with ``room_head`` for a waiting head."""
        if self.held is not None:
            if not room_head:
                return None
            data, last = self.held
            self.held, self.open, self.count = None, not last, 1
            return (data, 1, int(last), 0)
        if flit is None:
            return None
        data, first, last = flit
        if self.open and first:
            self.counts["cut"] += 1
            self.held, self.open = (data, last), False
            return (0, 0, 1, 1)
        if self.open:
            full = self.count == self.length - 1
            self.count += 1
            if last or full:
                self.open, self.discard = False, full and not last
            if full and not last:
                self.counts["long"] += 1
            return (data, 0, int(last or full), int(full and not last))
        if first:
            single = last or self.length == 1
            self.open, self.discard, self.count = not single, not last and self.length == 1, 1
            self.counts["long"] += not last and self.length == 1
            return (data, 1, int(single), int(not last and self.length == 1))
        if not self.discard:
            self.counts["stray"] += 1
        if last:
            self.discard = False
        return None


@pytest.mark.parametrize("pipeline", [2, 3])
@pytest.mark.parametrize("length", [1, 3])
def test_pe_framing_drops_and_counts_bad_framing(pipeline, length):
    """A PE sends random flits with random marks (strays, heads inside packets, packets too
    long, good packets), valid raised at random and the buffer read at random: what enters
    the buffer, ``ready`` and the counters follow :class:`FramingModel` cycle by cycle, and
    every packet in the buffer has a head, a tail and at most L flits."""
    depth = 2 * length
    ports = (PortConfig("network", vc_count=1, buffer_depth=depth),
             PortConfig("pe", vc_count=1, buffer_depth=depth))
    config = RouterConfig(16, length, ports, pipeline=pipeline)
    flit_format = FlitFormat(config, header_layout(config))
    stage = StageConfig(config, flit_format.head_layout)
    dut = InputUnit(stage, 1, HeaderRouteCompute(config, 1))
    head = Fields(flit_format.describe()["head"])
    rng = random.Random(pipeline * 10 + length)
    queue_depth = depth - length + 1

    async def bench(ctx):
        model = FramingModel(length)
        buffered, routes = deque(), 0
        packet = 0  # flits of the packet at the buffer's front read so far
        closed = True  # the last flit read was a tail
        offered = None
        for _ in range(3000):
            if offered is None and rng.random() < 0.7:
                first = rng.random() < 0.35
                last = rng.random() < (0.3 if length > 1 else 0.8)
                data = head.pack({"route.port": 0, "payload": rng.getrandbits(6)}) if first \
                    else rng.getrandbits(16)
                offered = (data, int(first), int(last))
            stream = dut.port
            ctx.set(stream.valid, offered is not None)
            if offered is not None:
                ctx.set(stream.payload.data, offered[0])
                ctx.set(stream.payload.first, offered[1])
                ctx.set(stream.payload.last, offered[2])
            room_body = len(buffered) < depth
            room_head = room_body and (pipeline == 2 or routes < queue_depth)
            ready = model.ready(room_body, room_head)
            assert ctx.get(stream.ready) == ready
            vc = dut.vcs[0]
            reading = bool(buffered) and rng.random() < 0.5
            ctx.set(vc.read, reading)
            assert ctx.get(vc.valid) == bool(buffered)
            if buffered:
                front = vc.flit
                assert (ctx.get(front.data), ctx.get(front.first), ctx.get(front.last),
                        ctx.get(front.abort)) == buffered[0]
            popping = pipeline == 3 and reading and buffered[0][1]
            if pipeline == 3:
                ctx.set(vc.pop, popping)
            taken = offered if offered is not None and ready else None
            written = model.step(taken, room_head)
            await ctx.tick()
            if taken is not None:
                offered = None
            if reading:
                data, first, last, abort = buffered.popleft()
                # A head exactly after a tail; at most L flits; abort only on a tail.
                assert bool(first) == closed and (last or not abort)
                packet = 1 if first else packet + 1
                closed = bool(last)
                assert packet <= length
                routes -= popping
            if written is not None:
                buffered.append(written)
                routes += written[1]
            assert {kind: ctx.get(getattr(dut.framing, kind)) for kind in model.counts} == \
                model.counts
        assert all(model.counts.values()) if length > 1 else model.counts["long"] > 50

    run(dut, bench)
