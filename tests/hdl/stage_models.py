"""Plain-Python models of the router's stages, written from their contracts, and a harness
that drives a stage with random stimulus and compares it with its model every cycle."""

from amaranth.sim import Simulator


class RoundRobin:
    """A round-robin arbiter: the first requester after the last one granted with advance."""

    def __init__(self, count: int):
        self.count, self.last = count, -1

    def grant(self, requests: list[bool]) -> int | None:
        for step in range(1, self.count + 1):
            index = (self.last + step) % self.count
            if requests[index]:
                return index
        return None

    def advance(self, index: int | None) -> None:
        if index is not None:
            self.last = index


def bits(value: int, width: int) -> list[bool]:
    return [bool(value >> i & 1) for i in range(width)]


def onehot(index: int | None) -> int:
    return 0 if index is None else 1 << index


def run(dut, bench) -> None:
    sim = Simulator(dut)
    sim.add_clock(1e-6, if_exists=True)  # a stage without state has no clock
    sim.add_testbench(bench)
    sim.run()


def random_requests(rng, count: int, output_count: int, rate: float) -> list[int]:
    """``count`` requests, each one-hot over the outputs with probability ``rate``, else 0."""
    return [onehot(rng.randrange(output_count)) if rng.random() < rate else 0
            for _ in range(count)]


def check_every_cycle(dut, cycles: int, step) -> int:
    """Call ``step(ctx)`` in each of ``cycles`` clock cycles (it sets the stage's inputs,
    compares its outputs with the model and returns how much the stage did); return the
    total, so that a test can show its stimulus kept the stage busy."""
    total = 0

    async def bench(ctx):
        nonlocal total
        for _ in range(cycles):
            total += step(ctx)
            await ctx.tick()

    run(dut, bench)
    return total
