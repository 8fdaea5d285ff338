"""EjectionMerger against a Python model of its contract: whole packets, in the order their
heads reached the lanes' fronts (the lower lane first on a tie), with random arrivals, gaps
inside packets and a PE that is not always ready."""

import random

import pytest
from stage_models import run

from twinnet.hdl.router.ejection import EjectionMerger

WIDTH = 16


class Lane:
    """One lane's packets as the bench presents them: one packet at a time, its head from its
    arrival cycle on, each later flit after a random gap."""

    def __init__(self, rng, length: int):
        self.rng, self.length = rng, length
        self.packet, self.index, self.ready_at = None, 0, 0

    def offer(self, cycle: int, number: int, data) -> bool:
        """Start packet ``number`` (flits ``data``) at ``cycle`` if the lane is empty."""
        if self.packet is not None:
            return False
        self.packet, self.index, self.ready_at = (number, data), 0, cycle
        return True

    def front(self, cycle: int):
        """``(data, first, last)`` of the flit at the front now, or None."""
        if self.packet is None or cycle < self.ready_at:
            return None
        data = self.packet[1]
        return data[self.index], self.index == 0, self.index == len(data) - 1

    def taken(self, cycle: int) -> None:
        self.index += 1
        if self.index == self.length:
            self.packet = None
        else:
            self.ready_at = cycle + 1 + (self.rng.random() < 0.3) * self.rng.randrange(1, 4)


def simulate(lanes: int, length: int, seed: int, cycles: int, arrivals=None):
    """Drive the merger; returns (packets in head-arrival order as ``[(cycle, lane, data)]``,
    flits out in order). ``arrivals``: fixed ``{cycle: [lane, ...]}`` instead of random."""
    rng = random.Random(seed)
    dut = EjectionMerger(WIDTH, lanes)
    state = [Lane(rng, length) for _ in range(lanes)]
    order, out = [], []

    async def bench(ctx):
        number = 0
        for cycle in range(cycles):
            wanted = (arrivals.get(cycle, []) if arrivals is not None else
                      [k for k in range(lanes) if rng.random() < 0.15])
            for k in wanted:
                data = [rng.getrandbits(WIDTH) for _ in range(length)]
                if state[k].offer(cycle, number, data):
                    order.append((cycle, k, data))
                    number += 1
            for k, lane in enumerate(state):
                front = lane.front(cycle)
                ctx.set(dut.lanes[k].valid, front is not None)
                if front is not None:
                    ctx.set(dut.lanes[k].payload.data, front[0])
                    ctx.set(dut.lanes[k].payload.first, front[1])
                    ctx.set(dut.lanes[k].payload.last, front[2])
            ready = arrivals is not None or rng.random() < 0.7
            ctx.set(dut.out.ready, ready)
            if ctx.get(dut.out.valid) and ready:
                out.append((ctx.get(dut.out.payload.data), ctx.get(dut.out.payload.first),
                            ctx.get(dut.out.payload.last)))
            taken = [k for k in range(lanes) if ctx.get(dut.lanes[k].ready)
                     and state[k].front(cycle) is not None]
            assert len(taken) <= 1
            for k in taken:
                state[k].taken(cycle)
            await ctx.tick()

    run(dut, bench)
    return order, out


def expected_flits(order, length: int, flits: int) -> list:
    """The packets of ``order`` sorted by (arrival cycle, lane), flit by flit, as far as
    ``flits`` went."""
    stream = []
    for _, _, data in sorted(order, key=lambda each: each[:2]):
        stream += [(word, i == 0, i == length - 1) for i, word in enumerate(data)]
    return stream[:flits]


@pytest.mark.parametrize("lanes, length", [(2, 1), (2, 4), (3, 3), (8, 2)])
def test_whole_packets_in_the_order_they_arrived(lanes, length):
    order, out = simulate(lanes, length, seed=lanes * 10 + length, cycles=800)
    assert out == expected_flits(order, length, len(out))
    assert len(out) // length > 80  # the bench kept the merger busy


def test_heads_arriving_together_go_lower_lane_first():
    # Lane 2 at cycle 1, lanes 0 and 1 at cycle 2: 2, then 0, then 1; lane 2 again at cycle
    # 12, last.
    order, out = simulate(3, 2, seed=1, cycles=30, arrivals={1: [2], 2: [0, 1], 12: [2]})
    lanes = [lane for _, lane, _ in order]
    assert lanes == [2, 0, 1, 2]
    words = [word for word, _, _ in out]
    assert words == [word for lane in (0, 1, 2, 3) for word in order[lane][2]]
    assert len(out) == 8
