"""PacketAllocator against a Python model under random requests."""

import random

import pytest
from stage_models import RoundRobin, check_every_cycle, onehot, random_requests

from twinnet.hdl.router.packet_allocator import PacketAllocator


class Model:
    """Per output a round robin over the ports asking for it and one over each port's VCs;
    an open output grants the pair and advances both."""

    def __init__(self, vc_counts, output_count):
        self.vc_counts = vc_counts
        self.port_arbs = [RoundRobin(len(vc_counts)) for _ in range(output_count)]
        self.vc_arbs = [[RoundRobin(count) for count in vc_counts] for _ in range(output_count)]

    def step(self, requests, open_):
        starts = [sum(self.vc_counts[:p]) for p in range(len(self.vc_counts))]
        grants = []
        for o, port_arb in enumerate(self.port_arbs):
            wins = [arb.grant([requests[start + v] >> o & 1 for v in range(count)])
                    for arb, start, count in zip(self.vc_arbs[o], starts, self.vc_counts)]
            port = port_arb.grant([w is not None for w in wins])
            if open_ >> o & 1 and port is not None:
                port_arb.advance(port)
                self.vc_arbs[o][port].advance(wins[port])
                grants.append(onehot(starts[port] + wins[port]))
            else:
                grants.append(0)
        return grants


@pytest.mark.parametrize("vc_counts, output_count", [((1, 2, 3), 3), ((2, 2, 2, 2, 2), 5)])
def test_matches_the_model(vc_counts, output_count):
    dut = PacketAllocator(vc_counts, output_count)
    model = Model(vc_counts, output_count)
    rng = random.Random(output_count)
    total = sum(vc_counts)

    def step(ctx) -> int:
        requests = random_requests(rng, total, output_count, 0.6)
        open_ = rng.getrandbits(output_count)
        for i in range(total):
            ctx.set(dut.requests[i], requests[i])
        ctx.set(dut.open, open_)
        grants = model.step(requests, open_)
        assert [ctx.get(g) for g in dut.grants] == grants
        return sum(1 for g in grants if g)

    assert check_every_cycle(dut, 500, step) > 300
