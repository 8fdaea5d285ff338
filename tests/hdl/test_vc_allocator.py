"""VCAllocator against a Python model under random requests."""

import random

import pytest
from stage_models import RoundRobin, check_every_cycle, onehot, random_requests

from twinnet.hdl.router.vc_allocator import VCAllocator


class Model:
    """Input first: per port a round robin over its VCs that ask for an output not blocked,
    then per output a round robin over the ports that put one forward; a VC advances only
    when its port won."""

    def __init__(self, vc_counts, output_count):
        self.vc_counts, self.output_count = vc_counts, output_count
        self.vc_arbs = [RoundRobin(count) for count in vc_counts]
        self.port_arbs = [RoundRobin(len(vc_counts)) for _ in range(output_count)]

    def step(self, requests, offers, blocked):
        starts = [sum(self.vc_counts[:p]) for p in range(len(self.vc_counts))]
        winners = [arb.grant([requests[start + v] & ~blocked != 0 for v in range(count)])
                   for arb, start, count in zip(self.vc_arbs, starts, self.vc_counts)]
        asks = [0 if w is None else requests[start + w] for w, start in zip(winners, starts)]
        allocated, won = [], set()
        for o, arb in enumerate(self.port_arbs):
            port = None if blocked >> o & 1 else arb.grant([ask >> o & 1 for ask in asks])
            arb.advance(port)
            allocated.append(0 if port is None else offers[starts[port] + winners[port]])
            if port is not None:
                won.add(port)
        grant = 0
        for p, (arb, start, winner) in enumerate(zip(self.vc_arbs, starts, winners)):
            if p in won:
                arb.advance(winner)
                grant |= onehot(start + winner)
        return grant, allocated


@pytest.mark.parametrize("vc_counts, output_count", [((1, 2, 3), 3), ((2, 2, 2, 2, 2), 5),
                                                      ((4, 1), 3)])
def test_matches_the_model(vc_counts, output_count):
    dut = VCAllocator(vc_counts, output_count, 4)
    model = Model(vc_counts, output_count)
    rng = random.Random(sum(vc_counts))
    total = sum(vc_counts)

    def step(ctx) -> int:
        requests = random_requests(rng, total, output_count, 0.6)
        offers = [onehot(rng.randrange(4)) for _ in range(total)]
        blocked = rng.getrandbits(output_count) if rng.random() < 0.2 else 0
        for i in range(total):
            ctx.set(dut.requests[i], requests[i])
            ctx.set(dut.offers[i], offers[i])
        ctx.set(dut.blocked, blocked)
        grant, allocated = model.step(requests, offers, blocked)
        assert ctx.get(dut.grant) == grant
        assert [ctx.get(a) for a in dut.allocated] == allocated
        return bin(grant).count("1")

    assert check_every_cycle(dut, 500, step) > 300  # the stimulus kept the allocator busy
