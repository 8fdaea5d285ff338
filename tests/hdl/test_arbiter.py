"""RoundRobinArbiter in the Amaranth simulator."""

import random

import pytest
from amaranth.sim import Simulator

from twinnet.hdl.arbiter import RoundRobinArbiter


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6, if_exists=True)  # a 1-input arbiter has no state and no clock
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_grant_is_one_hot_and_fair(count):
    """Random requests; a requester that keeps requesting waits for fewer than `count` grants
    to others, and grants are one-hot among the requests."""
    dut = RoundRobinArbiter(count)
    rng = random.Random(count)

    async def bench(ctx):
        waited = [None] * count  # grants to others since it started requesting
        for _ in range(600):
            requests = rng.getrandbits(count) | (1 << rng.randrange(count))
            # Keep some requesters asserted for long stretches.
            ctx.set(dut.requests, requests)
            ctx.set(dut.advance, 1)
            grant = ctx.get(dut.grant)
            assert grant != 0 and grant & (grant - 1) == 0, f"grant {grant:b} is not one-hot"
            assert grant & requests, f"grant {grant:b} outside requests {requests:b}"
            winner = grant.bit_length() - 1
            for i in range(count):
                if not requests >> i & 1:
                    waited[i] = None
                elif i == winner:
                    waited[i] = 0
                else:
                    waited[i] = (waited[i] or 0) + 1
                    assert waited[i] < count, f"requester {i} waited {waited[i]} grants"
            await (ctx.tick() if count > 1 else ctx.delay(1e-6))
        ctx.set(dut.requests, 0)
        assert ctx.get(dut.grant) == 0

    run(dut, bench)


def test_rotation_and_no_advance():
    dut = RoundRobinArbiter(4)

    async def bench(ctx):
        ctx.set(dut.requests, 0b1111)
        ctx.set(dut.advance, 1)
        order = []
        for _ in range(8):
            order.append(ctx.get(dut.grant))
            await ctx.tick()
        assert order == [1, 2, 4, 8, 1, 2, 4, 8]
        # Without advance the priority stays where it is.
        ctx.set(dut.advance, 0)
        held = ctx.get(dut.grant)
        for _ in range(3):
            await ctx.tick()
            assert ctx.get(dut.grant) == held
        # Skips requesters that do not ask.
        ctx.set(dut.advance, 1)
        ctx.set(dut.requests, 0b1010)
        seen = []
        for _ in range(4):
            seen.append(ctx.get(dut.grant))
            await ctx.tick()
        assert seen == [2, 8, 2, 8]

    run(dut, bench)


def test_count_validation():
    with pytest.raises(ValueError, match=r"count must be an integer >= 1, not 0"):
        RoundRobinArbiter(0)
