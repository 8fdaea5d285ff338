"""FlitBuffer in the Amaranth simulator, against a Python deque under random reads and writes
(the way Amaranth tests its own FIFOs against a model), in LUT RAM and in block RAM: the same
answers in every cycle."""

import random
from collections import deque

import pytest
from amaranth.sim import Simulator

from twinnet.hdl.flit_buffer import FlitBuffer


@pytest.mark.parametrize("memory", ["lut", "block"])
@pytest.mark.parametrize("flag", [None, 5])
@pytest.mark.parametrize("depth", [1, 2, 3, 4, 6, 32])
def test_matches_a_deque_under_random_traffic(depth, flag, memory):
    """With ``flag``, ``r_flag`` is that bit of the front entry in every cycle with one, and
    ``r_flag_next`` its next value. A block RAM's data is the front entry in the very cycle,
    a write of the cycle before to an empty buffer included."""
    dut = FlitBuffer(8, depth, flag, memory)
    rng = random.Random(depth)
    counts = {"written": 0, "read": 0}

    async def bench(ctx):
        model = deque()
        for _ in range(800):
            assert ctx.get(dut.level) == len(model)
            assert ctx.get(dut.r_rdy) == bool(model)
            assert ctx.get(dut.w_rdy) == (len(model) < depth)
            if model:
                assert ctx.get(dut.r_data) == model[0]
                if flag is not None:
                    assert ctx.get(dut.r_flag) == model[0] >> flag & 1
            want_read, want_write = rng.random() < 0.5, rng.random() < 0.55
            word = rng.randrange(256)
            ctx.set(dut.r_en, want_read)
            ctx.set(dut.w_en, want_write)
            ctx.set(dut.w_data, word)
            # Full: a write is ignored, even together with a read (as SyncFIFO's).
            writing = want_write and len(model) < depth
            popping = want_read and bool(model)
            after = list(model)[popping:] + ([word] if writing else [])
            if after and flag is not None:
                assert ctx.get(dut.r_flag_next) == after[0] >> flag & 1
            await ctx.tick()
            if popping:
                model.popleft()
                counts["read"] += 1
            if writing:
                model.append(word)
                counts["written"] += 1

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    # Both sides were exercised: the buffer was written and read many times, and wrapped.
    assert counts["read"] > 4 * depth and counts["written"] > 4 * depth


@pytest.mark.parametrize("args, error", [((8, 0), ValueError), ((0, 4), ValueError),
                                         (("8", 4), TypeError),
                                         ((8, 4, None, "flipflops"), ValueError)])
def test_bad_sizes_are_refused(args, error):
    with pytest.raises(error):
        FlitBuffer(*args)
