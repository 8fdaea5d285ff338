"""Drive a route compute in the Amaranth simulator (shared by the route-compute tests)."""

from amaranth.sim import Simulator


def run_route_compute(dut, cases, drive, extra=()) -> list[tuple[int, ...]]:
    """For each case, ``drive(ctx, dut, case)`` sets the inputs; returns ``(out_port,
    vc_mask, bubble, malformed)`` of each, then the outputs named in ``extra``, sampled
    combinationally."""
    results = []

    async def testbench(ctx):
        for case in cases:
            drive(ctx, dut, case)
            results.append((ctx.get(dut.out_port), ctx.get(dut.vc_mask), ctx.get(dut.bubble),
                            ctx.get(dut.malformed),
                            *(ctx.get(getattr(dut, name)) for name in extra)))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    return results
