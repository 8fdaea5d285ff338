"""IslipAllocator against a Python model of iSLIP (McKeown 1999) under random requests."""

import random

import pytest
from stage_models import RoundRobin, check_every_cycle, onehot

from twinnet.hdl.router.islip import IslipAllocator


class Model:
    """iSLIP as its paper states it: rounds of grant (each unmatched open output, the first
    requesting unmatched input from its pointer) and accept (each input, the first granting
    output from its pointer); pointers move past a match made in the first round only."""

    def __init__(self, input_count, output_count, iterations):
        self.inputs, self.outputs, self.iterations = input_count, output_count, iterations
        self.grant_ptr = [RoundRobin(input_count) for _ in range(output_count)]
        self.accept_ptr = [RoundRobin(output_count) for _ in range(input_count)]

    def step(self, requests, open_):
        match = {}  # output -> input
        for r in range(self.iterations):
            taken = set(match.values())
            offers = {}
            for o in range(self.outputs):
                if not open_ >> o & 1 or o in match:
                    continue
                asking = [i not in taken and bool(requests[i] >> o & 1)
                          for i in range(self.inputs)]
                i = self.grant_ptr[o].grant(asking)
                if i is not None:
                    offers.setdefault(i, []).append(o)
            for i, granting in offers.items():
                o = self.accept_ptr[i].grant([o in granting for o in range(self.outputs)])
                match[o] = i
                if r == 0:
                    self.grant_ptr[o].advance(i)
                    self.accept_ptr[i].advance(o)
        return [onehot(match.get(o)) for o in range(self.outputs)]


def random_multi_requests(rng, count, output_count, rate):
    """Each input asks for each output with probability ``rate``."""
    return [sum(1 << o for o in range(output_count) if rng.random() < rate)
            for _ in range(count)]


@pytest.mark.parametrize("inputs, outputs, iterations",
                         [(1, 1, 1), (3, 2, 1), (5, 5, 1), (5, 5, 2), (7, 5, 3), (4, 7, 4)])
def test_matches_the_model(inputs, outputs, iterations):
    dut = IslipAllocator(inputs, outputs, iterations)
    model = Model(inputs, outputs, iterations)
    rng = random.Random(inputs * 31 + outputs * 7 + iterations)

    def step(ctx) -> int:
        requests = random_multi_requests(rng, inputs, outputs, rng.choice((0.2, 0.5, 0.9)))
        open_ = rng.getrandbits(outputs) | (-1 if rng.random() < 0.5 else 0)
        open_ &= (1 << outputs) - 1
        for i in range(inputs):
            ctx.set(dut.requests[i], requests[i])
        ctx.set(dut.open, open_)
        grants = model.step(requests, open_)
        got = [ctx.get(g) for g in dut.grants]
        assert got == grants
        # A matching: each output one input at most, each input one output at most, each
        # pair requested and the output open.
        used = [g for g in got if g]
        assert all(g & (g - 1) == 0 for g in used)
        assert len(set(used)) == len(used)
        for o, g in enumerate(got):
            if g:
                assert open_ >> o & 1 and requests[g.bit_length() - 1] >> o & 1
        return len(used)

    assert check_every_cycle(dut, 300, step) > 100


@pytest.mark.parametrize("inputs, outputs, iterations", [(10, 5, 1), (10, 5, 2), (7, 3, 4)])
def test_one_request_per_input_matches_the_whole_rounds(inputs, outputs, iterations):
    """Built for inputs that each ask for one output at most (the split router's with
    deterministic routing and one lane per PE port), the grant arbiters alone match as the
    model's full rounds of grant and accept, pointers included, in every cycle."""
    dut = IslipAllocator(inputs, outputs, iterations, one_request=True)
    model = Model(inputs, outputs, iterations)
    rng = random.Random(inputs * 13 + iterations)

    def step(ctx) -> int:
        requests = [1 << rng.randrange(outputs) if rng.random() < 0.7 else 0
                    for _ in range(inputs)]
        open_ = rng.getrandbits(outputs) | (-1 if rng.random() < 0.5 else 0)
        open_ &= (1 << outputs) - 1
        for i in range(inputs):
            ctx.set(dut.requests[i], requests[i])
        ctx.set(dut.open, open_)
        got = [ctx.get(g) for g in dut.grants]
        assert got == model.step(requests, open_)
        return sum(1 for g in got if g)

    assert check_every_cycle(dut, 400, step) > 200


def test_more_rounds_match_more():
    """Over the same random requests, the hardware with more rounds matches at least as many
    pairs in total (later rounds only add matches among what the earlier rounds left), and
    two rounds match strictly more than one on a 5 x 5 switch with several requests per
    input (a single round leaves an output unmatched whenever two outputs grant one input)."""
    totals = []
    for iterations in (1, 2, 3):
        dut = IslipAllocator(5, 5, iterations)
        rng = random.Random(5)

        def step(ctx, rng=rng, dut=dut) -> int:
            for i, request in enumerate(random_multi_requests(rng, 5, 5, 0.5)):
                ctx.set(dut.requests[i], request)
            ctx.set(dut.open, 0b11111)
            return sum(1 for g in dut.grants if ctx.get(g))

        totals.append(check_every_cycle(dut, 300, step))
    assert totals[0] < totals[1] <= totals[2]


def test_fair_to_a_steady_requester():
    """An input that asks for one output every cycle is not starved, whatever the others
    ask: here, with every input asking for output 0, it waits at most inputs x outputs of
    that output's matches to others (later rounds' matches move no pointer, so the bound of
    input_count holds for first-round matches only)."""
    dut = IslipAllocator(4, 2, 2)
    rng = random.Random(1)
    waited = 0

    async def bench(ctx):
        nonlocal waited
        since = 0
        for _ in range(300):
            ctx.set(dut.requests[0], 0b01)
            for i in range(1, 4):
                ctx.set(dut.requests[i], rng.getrandbits(2) | 1)
            ctx.set(dut.open, 0b11)
            if ctx.get(dut.grants[0]) & 1:
                since = 0
            elif ctx.get(dut.grants[0]):
                since += 1
                waited = max(waited, since)
            await ctx.tick()

    from stage_models import run
    run(dut, bench)
    assert 0 < waited <= 8


@pytest.mark.parametrize("args", [(0, 2, 1), (2, 0, 1), (2, 2, 0), (2, 2, 5), (2.5, 2, 1),
                                  (2, 2, 1, "yes")])
def test_bad_arguments_are_refused_before_building(args):
    with pytest.raises((TypeError, ValueError)):
        IslipAllocator(*args)
