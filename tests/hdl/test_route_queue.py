"""RouteQueue in the Amaranth simulator, against a Python deque under random reads and
writes: routes come out in order, their per-output masks derived as they reach the front."""

import random
from collections import deque

import pytest
from amaranth.lib import data
from amaranth.sim import Simulator

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.router.route_queue import RouteQueue
from twinnet.hdl.router.stage_config import StageConfig

HEAD = data.StructLayout({"route": 8, "payload": 8})
#: Three outputs: a bubble link of two VCs, a plain link of two VCs, a PE.
CONFIG = RouterConfig(16, 2, (PortConfig("network", 2, 4, bubble=True),
                              PortConfig("network", 2, 4), PortConfig("pe", 1, 4)))


def expanded(route: dict) -> tuple[list, list]:
    """The per-output masks of a stored route, by hand: the VCs of its output (that the
    output has) with room for one packet, or for two where it enters a ring (bubble ports
    only); none for a dropped packet."""
    one, two = [0, 0, 0], [0, 0, 0]
    if not route["drop"]:
        vcs = (1 << CONFIG.ports[route["port"]].output_vc_count) - 1
        if route["bubble"]:
            if CONFIG.ports[route["port"]].bubble:
                two[route["port"]] = route["mask"] & vcs
        else:
            one[route["port"]] = route["mask"] & vcs
    return one, two


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_matches_a_deque_under_random_traffic(depth):
    stage = StageConfig(CONFIG, HEAD)
    assert stage.per_output_route
    dut = RouteQueue(stage, depth)
    rng = random.Random(depth)
    counts = {"written": 0, "read": 0}

    async def bench(ctx):
        model = deque()
        for _ in range(800):
            assert ctx.get(dut.level) == len(model)
            assert ctx.get(dut.r_rdy) == bool(model)
            assert ctx.get(dut.w_rdy) == (len(model) < depth)
            if model:
                front = ctx.get(dut.r_data)
                route = model[0]
                assert (front.port, front.mask, front.bubble, front.drop) == (
                    route["port"], route["mask"], route["bubble"], route["drop"])
                one, two = expanded(route)
                assert [front.need_one[o] for o in range(3)] == one
                assert [front.need_two[o] for o in range(3)] == two
            want_read, want_write = rng.random() < 0.5, rng.random() < 0.55
            route = {"port": rng.randrange(3), "mask": rng.randrange(1, 4),
                     "bubble": rng.randrange(2), "drop": int(rng.random() < 0.2)}
            ctx.set(dut.r_en, want_read)
            ctx.set(dut.w_en, want_write)
            ctx.set(dut.w_data, route)
            writing = want_write and len(model) < depth
            popping = want_read and bool(model)
            await ctx.tick()
            if popping:
                model.popleft()
                counts["read"] += 1
            if writing:
                model.append(route)
                counts["written"] += 1

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert counts["read"] > 4 * depth and counts["written"] > 4 * depth
