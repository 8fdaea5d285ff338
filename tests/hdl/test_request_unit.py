"""RequestUnit against a Python model of 003's VC and bubble rules and 002's 2S grades, under
random routes and free VCs."""

import random

import pytest
from amaranth.lib import data
from stage_models import onehot, run

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.router.request_unit import RequestUnit
from twinnet.hdl.router.stage_config import StageConfig

CONFIG = RouterConfig(32, 2, (PortConfig("network", vc_count=2, buffer_depth=4, bubble=True),
                              PortConfig("network", vc_count=3, buffer_depth=4, bubble=True),
                              PortConfig("internal", vc_count=2, buffer_depth=4),
                              PortConfig("pe", vc_count=1, buffer_depth=4)))
PORTS, VMAX = CONFIG.port_count, CONFIG.max_vc_count
HEAD = data.StructLayout({"route": 8, "payload": 24})
ADAPTIVE = 0b110  # VCs 1 and 2 adaptive, VC 0 the escape


def lowest(mask: int) -> int:
    return mask & -mask


def expected(stage: StageConfig, route: dict, ready: bool, free_one, free_two, copy_vcs,
             open_: int):
    """(to, vc, port, copy, adaptive, waiting) as the request unit's contract states them."""
    copy = 0
    if stage.broadcast_vc is not None:
        needs = [free_two[o] >> copy_vcs[o] & 1 if route["enter"] >> o & 1
                 else free_one[o] >> copy_vcs[o] & 1 for o in range(PORTS)]
        copy = int(ready and route["multi"] and not route["drop"]
                   and all(needs[o] for o in range(PORTS) if route["targets"] >> o & 1))
    unicast = ready and not route["drop"] and not route.get("multi", 0)
    port = route["port"]
    eligible = route["mask"] & (free_two if route["bubble"] else free_one)[port]
    if stage.adaptive_vcs:
        # The best grade with a free adaptive VC; where outputs are held by one packet at a
        # time, its open outputs, and while none is open the packet waits.
        adaptive_free = [bool(free_one[o] & ADAPTIVE) for o in range(PORTS)]
        one = [o for o in range(PORTS) if route["grade_1"] >> o & 1 and adaptive_free[o]]
        two = [o for o in range(PORTS) if route["grade_2"] >> o & 1 and adaptive_free[o]]
        grade = one or two
        picks = [o for o in grade if open_ >> o & 1]
        if grade and not picks:
            return 0, None, None, copy, 0, int(unicast)
        if picks and stage.multiple_requests:
            # Every open output of the grade; the allocator's match picks one.
            return (sum(map(onehot, picks)) if unicast else 0, None, None, copy, 1, 0)
        if picks:
            pick = picks[0]
            return (onehot(pick) if unicast else 0, lowest(free_one[pick] & ADAPTIVE), pick,
                    copy, 1, 0)
    to = onehot(port) if unicast and eligible else 0
    return to, lowest(eligible), port, copy, 0, 0


def random_route(rng, stage: StageConfig) -> dict:
    port = rng.randrange(PORTS)
    route = {"port": port, "mask": rng.getrandbits(VMAX), "bubble": rng.random() < 0.3,
             "drop": rng.random() < 0.1}
    if stage.adaptive_vcs:
        route.update(grade_1=rng.getrandbits(PORTS), grade_2=rng.getrandbits(PORTS))
    if stage.broadcast_vc is not None:
        route.update(multi=rng.random() < 0.4, targets=rng.getrandbits(PORTS),
                     enter=rng.getrandbits(PORTS))
    if stage.per_output_route:
        # As the input unit stores it: the route's masks, at its port only, unless dropped.
        here = not route["drop"]
        route["need_one"] = [route["mask"] if o == port and here and not route["bubble"] else 0
                             for o in range(PORTS)]
        route["need_two"] = [route["mask"] if o == port and here and route["bubble"] else 0
                             for o in range(PORTS)]
    return route


@pytest.mark.parametrize("pipeline, adaptive, broadcast, allocator, hold", [
    (2, 0, None, "round-robin", None), (3, 0, None, "round-robin", None),
    (2, ADAPTIVE, None, "round-robin", None), (2, ADAPTIVE, None, "round-robin", "packet"),
    (3, ADAPTIVE, None, "round-robin", None), (3, ADAPTIVE, None, "islip", None),
    (2, 0, 1, "round-robin", None), (3, 0, 1, "round-robin", None),
    (3, ADAPTIVE, 1, "islip", None)],
    ids=["compact", "per-output", "adaptive", "adaptive-compact-hold", "adaptive-split",
         "adaptive-split-islip", "broadcast", "broadcast-split", "broadcast-adaptive-islip"])
def test_matches_the_model(pipeline, adaptive, broadcast, allocator, hold):
    config = RouterConfig(CONFIG.flit_width, CONFIG.max_packet_length, CONFIG.ports,
                          pipeline=pipeline, allocator=allocator, hold=hold)
    stage = StageConfig(config, HEAD, adaptive, broadcast)
    # A copy takes the broadcast VC of each output (VC 0 of a single-VC one, a PE's).
    copy_vcs = [min(broadcast or 0, port.output_vc_count - 1) for port in config.ports]
    dut = RequestUnit(stage)
    rng = random.Random(pipeline * 10 + (adaptive or 0) + (broadcast or 0))

    async def bench(ctx):
        asked = waited = 0
        for _ in range(400):
            route = random_route(rng, stage)
            ready = rng.random() < 0.8
            free_one = [rng.getrandbits(count) for count in config.output_vc_counts]
            free_two = [f & rng.getrandbits(VMAX) for f in free_one]
            for key, value in route.items():
                field = getattr(dut.route, key)
                if isinstance(value, list):
                    for o, mask in enumerate(value):
                        ctx.set(field[o], mask)
                else:
                    ctx.set(field, value)
            ctx.set(dut.ready, ready)
            for o in range(PORTS):
                ctx.set(dut.free_one[o], free_one[o])
                ctx.set(dut.free_two[o], free_two[o])
            holds = adaptive and config.holds_outputs
            open_ = rng.getrandbits(PORTS) if holds else (1 << PORTS) - 1
            if adaptive:
                ctx.set(dut.adaptive_free, sum(1 << o for o in range(PORTS)
                                               if free_one[o] & ADAPTIVE))
            if holds:
                ctx.set(dut.open, open_)
            if broadcast is not None:
                ctx.set(dut.copy_one, sum((free_one[o] >> w & 1) << o
                                          for o, w in enumerate(copy_vcs)))
                ctx.set(dut.copy_two, sum((free_two[o] >> w & 1) << o
                                          for o, w in enumerate(copy_vcs)))
            to, vc, port, copy, moves, waiting = expected(stage, route, ready, free_one,
                                                          free_two, copy_vcs, open_)
            assert ctx.get(dut.to) == to, route
            if holds:
                assert ctx.get(dut.waiting) == waiting, route
                waited += waiting
            if stage.multiple_requests and to:
                assert ctx.get(dut.adaptive) == moves, route
            if to and vc is not None:
                assert ctx.get(dut.vc) == vc and ctx.get(dut.port) == port, route
            if broadcast is not None:
                assert ctx.get(dut.copy) == copy, route
            asked += bool(to) + copy
            await ctx.delay(1e-6)
        assert asked > 50
        assert waited > 10 or not (adaptive and config.holds_outputs)

    run(dut, bench)
