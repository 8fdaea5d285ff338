"""SwitchAllocator against a Python model under random requests."""

import random

import pytest
from stage_models import RoundRobin, check_every_cycle, onehot, random_requests

from twinnet.hdl.router.switch_allocator import SwitchAllocator


class Model:
    """Output first: per output a round robin over the ports with a flit for it, then over
    that port's VCs; per port a round-robin accept over the outputs that chose it. Output
    arbiters advance only on an accepted grant."""

    def __init__(self, vc_counts, output_count):
        self.vc_counts, self.output_count = vc_counts, output_count
        ports = len(vc_counts)
        self.port_arbs = [RoundRobin(ports) for _ in range(output_count)]
        self.vc_arbs = [[RoundRobin(count) for count in vc_counts] for _ in range(output_count)]
        self.accepts = [RoundRobin(output_count) for _ in range(ports)]

    def step(self, requests):
        ports = len(self.vc_counts)
        starts = [sum(self.vc_counts[:p]) for p in range(ports)]
        vc_wins = [[arb.grant([requests[start + v] >> o & 1 for v in range(count)])
                    for arb, start, count in zip(self.vc_arbs[o], starts, self.vc_counts)]
                   for o in range(self.output_count)]
        port_wins = [arb.grant([w is not None for w in vc_wins[o]])
                     for o, arb in enumerate(self.port_arbs)]
        accepted = [0] * self.output_count
        read = 0
        for p, accept in enumerate(self.accepts):
            o = accept.grant([win == p for win in port_wins])
            accept.advance(o)
            if o is not None:
                accepted[o] |= 1 << p
                read |= onehot(starts[p] + vc_wins[o][p])
        for o, arb in enumerate(self.port_arbs):
            if accepted[o]:
                arb.advance(port_wins[o])
                self.vc_arbs[o][port_wins[o]].advance(vc_wins[o][port_wins[o]])
        return accepted, read


@pytest.mark.parametrize("vc_counts, output_count", [((1, 2, 3), 3), ((2, 2, 2, 2, 2), 5),
                                                      ((3, 1, 2, 2), 4)])
def test_matches_the_model(vc_counts, output_count):
    dut = SwitchAllocator(vc_counts, output_count)
    model = Model(vc_counts, output_count)
    rng = random.Random(len(vc_counts))
    total = sum(vc_counts)

    def step(ctx) -> int:
        requests = random_requests(rng, total, output_count, 0.7)
        for i in range(total):
            ctx.set(dut.requests[i], requests[i])
        accepted, read = model.step(requests)
        assert [ctx.get(a) for a in dut.accepted] == accepted
        assert ctx.get(dut.read) == read
        return bin(read).count("1")

    assert check_every_cycle(dut, 500, step) > 300
