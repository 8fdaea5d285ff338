"""InputUnit against a Python model: per VC a queue of flits and of routes, credits back one
per flit read, under random packets on a link and random reads."""

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


@pytest.mark.parametrize("pipeline", [2, 3])
def test_flits_routes_and_credits_match_the_model(pipeline):
    config = RouterConfig(16, LENGTH, PORTS, pipeline=pipeline)
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
        for cycle in range(1500):
            quiet = cycle >= 1400  # the last cycles send nothing: everything drains
            vc = rng.randrange(2)
            if not sending[vc] and not quiet and rng.random() < 0.4:
                port, out_vc = rng.randrange(3), rng.randrange(3)
                word = head.pack({"route.port": port, "route.vc": out_vc, "payload": cycle})
                sending[vc] = [word] + [rng.getrandbits(16) for _ in range(LENGTH - 1)]
                # Malformed: a VC the output does not have (the PE output has one).
                drop = out_vc >= config.output_vc_counts[port]
                route[vc] = (port, 0 if drop else 1 << out_vc, drop)
            send = bool(sending[vc]) and room[vc] > 0 and rng.random() < 0.8
            ctx.set(dut.port.flit.valid, send)
            if send:
                word = sending[vc].pop(0)
                first, last = len(sending[vc]) == LENGTH - 1, not sending[vc]
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
                at_front = flits[v] and flits[v][0][1] if pipeline == 2 else routes[v]
                if pipeline == 3:
                    assert ctx.get(dut.vcs[v].head) == bool(routes[v])
                    popping[v] = reading[v] and flits[v][0][1]
                    ctx.set(dut.vcs[v].pop, popping[v])
                if at_front:
                    got = dut.vcs[v].route
                    port, mask, drop = routes[v][0]
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
