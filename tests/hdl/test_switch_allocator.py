"""SwitchAllocator against a Python model under random requests."""

import random

import pytest
from stage_models import RoundRobin, check_every_cycle, onehot, random_requests

from twinnet.hdl.router.switch_allocator import SwitchAllocator


class Model:
    """Output first, in ``iterations`` rounds among the inputs and outputs still unmatched:
    per output a round robin over the inputs with a flit for it (whichever VC has it), per
    input a round-robin accept over the outputs that chose it. The input and output arbiters
    advance only on a match of the first round (an output's only on an accepted grant);
    per output and input a round robin over the input's VCs with a flit for that output
    picks the VC that crosses, and advances on a match of any round."""

    def __init__(self, vc_counts, output_count, iterations=1):
        self.vc_counts, self.output_count, self.iterations = vc_counts, output_count, iterations
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
        match = {}  # output -> input
        for r in range(self.iterations):
            taken = set(match.values())
            port_wins = [None if o in match else arb.grant(
                [w is not None and p not in taken for p, w in enumerate(vc_wins[o])])
                for o, arb in enumerate(self.port_arbs)]
            for p, accept in enumerate(self.accepts):
                o = accept.grant([win == p for win in port_wins])
                if o is None:
                    continue
                match[o] = p
                if r == 0:
                    accept.advance(o)
                    self.port_arbs[o].advance(p)
        accepted = [onehot(match.get(o)) for o in range(self.output_count)]
        read = 0
        for o, p in match.items():
            read |= onehot(starts[p] + vc_wins[o][p])
            self.vc_arbs[o][p].advance(vc_wins[o][p])
        return accepted, read


CASES = [((1, 2, 3), 3, 1), ((2, 2, 2, 2, 2), 5, 1), ((3, 1, 2, 2), 4, 1),
         ((2, 2, 2, 2, 2), 5, 2), ((3, 1, 2, 2), 4, 3), ((1, 2, 3), 3, 2),
         # One VC per input: the compact router with a crossbar input per input VC.
         ((1,) * 7, 4, 1), ((1,) * 6, 4, 2)]


@pytest.mark.parametrize("vc_counts, output_count, iterations", CASES)
def test_matches_the_model(vc_counts, output_count, iterations):
    dut = SwitchAllocator(vc_counts, output_count, iterations)
    model = Model(vc_counts, output_count, iterations)
    rng = random.Random(len(vc_counts) * 10 + iterations)
    total = sum(vc_counts)
    starts = [sum(vc_counts[:p]) for p in range(len(vc_counts))]

    def step(ctx) -> int:
        requests = random_requests(rng, total, output_count, rng.choice((0.4, 0.7, 1.0)))
        for i in range(total):
            ctx.set(dut.requests[i], requests[i])
        accepted, read = model.step(requests)
        got = [ctx.get(a) for a in dut.accepted]
        assert got == accepted
        assert ctx.get(dut.read) == read
        # A matching: each input once at most; each VC read asked for the output it took.
        used = [a for a in got if a]
        assert all(a & (a - 1) == 0 for a in used) and len(set(used)) == len(used)
        for o, a in enumerate(got):
            if a:
                p = a.bit_length() - 1
                vcs = read >> starts[p] & ((1 << vc_counts[p]) - 1)
                assert vcs & (vcs - 1) == 0 and requests[starts[p] + vcs.bit_length() - 1] >> o & 1
        return bin(read).count("1")

    assert check_every_cycle(dut, 500, step) > 300


def reads(vc_counts, output_count, iterations) -> int:
    """Flits the model reads over 2,000 cycles of the same random requests."""
    model = Model(vc_counts, output_count, iterations)
    rng = random.Random(3)
    return sum(bin(model.step(random_requests(rng, sum(vc_counts), output_count, 0.8))[1])
               .count("1") for _ in range(2000))


def test_more_rounds_read_more_from_ports_with_several_vcs():
    """A port whose VCs ask for several outputs may be granted by several and accept one;
    the outputs it refused grant other ports in a second round. On the same random
    requests, 2 rounds read strictly more than 1 (the hardware follows the model, above)."""
    assert reads((2, 2, 2, 2), 4, 1) < reads((2, 2, 2, 2), 4, 2)


def test_more_rounds_add_nothing_with_one_vc_per_input():
    """An input VC asks for one output at most, so every output's first-round grant is
    accepted (its input has no other grant to prefer): the first round's matching is
    already maximal, and later rounds find nothing to add."""
    assert reads((1,) * 8, 4, 1) == reads((1,) * 8, 4, 2) == reads((1,) * 8, 4, 3)


@pytest.mark.parametrize("args, message", [
    (((), 2), r"vc_counts must have at least 1 entries, not 0"),
    (((1, 0), 2), r"vc_counts\[1\] must be an integer >= 1, not 0"),
    (((1, 2), 0), r"output_count must be an integer >= 1, not 0"),
    (((1, 2), 2, 5), r"iterations must be an integer from 1 to 4, not 5"),
])
def test_bad_arguments_are_refused_before_building(args, message):
    with pytest.raises(ValueError, match=message):
        SwitchAllocator(*args)
