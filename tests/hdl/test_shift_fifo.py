"""ShiftFIFO in the Amaranth simulator, against a Python deque under random reads and writes."""

import random
from collections import deque

import pytest
from amaranth.sim import Simulator

from twinnet.hdl.shift_fifo import ShiftFIFO


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_matches_a_deque_under_random_traffic(depth):
    dut = ShiftFIFO(8, depth)
    rng = random.Random(depth)

    async def bench(ctx):
        model = deque()
        written = read = 0
        for _ in range(600):
            assert ctx.get(dut.r_rdy) == bool(model)
            if model:
                assert ctx.get(dut.r_data) == model[0]
            want_read = rng.random() < 0.5
            want_write = rng.random() < 0.55
            popping = want_read and bool(model)
            word = rng.randrange(256)
            ctx.set(dut.r_en, want_read)
            assert ctx.get(dut.w_rdy) == (len(model) < depth)
            ctx.set(dut.w_en, want_write)
            ctx.set(dut.w_data, word)
            # Full: a write is taken only together with a read.
            writing = want_write and (len(model) < depth or popping)
            await ctx.tick()
            if popping:
                model.popleft()
                read += 1
            if writing:
                model.append(word)
                written += 1
        assert read > 100 and written > 100  # the traffic exercised both ends

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def test_rejects_bad_sizes():
    with pytest.raises(ValueError, match=r"depth must be an integer >= 1, not 0"):
        ShiftFIFO(8, 0)
    with pytest.raises(TypeError, match=r"width must be an integer"):
        ShiftFIFO("8", 2)
