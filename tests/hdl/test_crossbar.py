"""Crossbar under random selects."""

import random

from amaranth.lib import data
from stage_models import onehot, run

from twinnet.hdl.router.crossbar import Crossbar


def test_every_output_takes_its_selected_input():
    layout = data.StructLayout({"data": 8, "vc": 2})
    dut = Crossbar(layout, 5, 3)
    rng = random.Random(3)

    async def bench(ctx):
        for _ in range(200):
            values = [rng.getrandbits(layout.size) for _ in range(5)]
            chosen = [rng.choice([None, 0, 1, 2, 3, 4]) for _ in range(3)]
            for i, value in enumerate(values):
                ctx.set(dut.inputs[i].as_value(), value)
            for o, index in enumerate(chosen):
                ctx.set(dut.select[o], onehot(index))
            for o, index in enumerate(chosen):
                expected = 0 if index is None else values[index]
                assert ctx.get(dut.outputs[o].as_value()) == expected
            await ctx.delay(1e-6)

    run(dut, bench)
