"""OutputUnit against a Python model of its credits and free VCs, with random allocations,
flits and credits that keep the link protocol."""

import random

import pytest
from amaranth.lib import data
from stage_models import onehot, run

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.router.output_unit import OutputUnit
from twinnet.hdl.router.stage_config import StageConfig

HEAD = data.StructLayout({"route": 8, "payload": 8})


@pytest.mark.parametrize("pipeline", [2, 3])
@pytest.mark.parametrize("length, depth", [(2, 4), (3, 7), (1, 2)])
def test_credits_and_free_vcs_match_the_model(pipeline, length, depth):
    """Packets of 1 to L flits; the compact router's VCs busy from allocation to tail, the
    split router's output held by one packet at a time, allocated again in the cycle its
    tail leaves unless the VC of that tail is tight (its room exactly one or two packets) or,
    with L > 1, the tail is also its head; ``tight_next`` says a cycle ahead whether the VC
    held is tight. On the bubble port (L > 1) each packet also counts as L flits from its
    head's leaving to its tail's credit, less the credits back of the oldest: a VC is free
    with room for L so counted (2L for a bubble move)."""
    ports = (PortConfig("network", vc_count=3, buffer_depth=depth, bubble=depth >= 2 * length),
             PortConfig("pe", vc_count=1, buffer_depth=depth))
    config = RouterConfig(16, length, ports, pipeline=pipeline)
    stage = StageConfig(config, HEAD)
    dut = OutputUnit(stage, 0)
    rng = random.Random(pipeline * 100 + length * 10 + depth)
    slotted = ports[0].bubble and length > 1

    async def bench(ctx):
        spare = [depth] * 3  # free downstream slots less the flits sent and not credited
        busy = [False] * 3  # compact: a packet of this VC still has flits to send
        marks = [[] for _ in range(3)]  # the last marks of the flits sent, not credited back
        packets = [0] * 3  # packets with a flit downstream or on its way (heads sent, tails
        # not credited back)
        drained = [0] * 3  # credits back of the oldest of them

        def counted(w: int) -> int:
            return packets[w] * length - drained[w]

        to_send = []  # (vc, first, last) of the flits of allocated packets, in order
        holding = None  # split: the VC of the packet that holds the output
        tight_next = (None, 0)  # split: the VC held and the unit's tight_next, a cycle ago
        sent = tails = singles = 0
        for _ in range(800):
            flit = to_send.pop(0) if to_send and rng.random() < 0.8 else None
            ctx.set(dut.holding, onehot(holding) if pipeline == 3 else 0)

            def room(w: int, packets: int) -> bool:
                return (not busy[w] and spare[w] >= packets * length
                        and (not slotted or counted(w) <= depth - packets * length))

            free_one = [room(w, 1) for w in range(3)]
            free_two = [room(w, 2) for w in range(3)]
            assert ctx.get(dut.free_one) == sum(f << w for w, f in enumerate(free_one))
            assert ctx.get(dut.free_two) == sum(f << w for w, f in enumerate(free_two))
            tight = holding is not None and spare[holding] in (length, 2 * length)
            if pipeline == 3:
                assert ctx.get(dut.tight) == tight
                if tight_next[0] == holding is not None:
                    assert tight_next[1] == tight
            # The split router allocates a held output in the cycle its packet's tail leaves,
            # unless the tail's VC is tight or (L > 1) the tail is also the head.
            open_ = not to_send and (holding is None or (
                flit is not None and flit[2] and not tight and (length == 1 or not flit[1])))
            idle = [w for w in range(3) if free_one[w]
                    and (pipeline == 2 and all(v != w for v, _, _ in to_send) or open_)]
            take = rng.choice(idle) if idle and rng.random() < 0.5 else None
            ctx.set(dut.take, onehot(take) if pipeline == 2 else 0)
            if take is not None:
                pending = sum(1 for v, _, _ in to_send if v == take) + (
                    flit is not None and flit[0] == take)
                assert spare[take] - pending >= length
                if slotted:  # room for it so counted, with a head leaving now
                    leaving = flit is not None and flit[0] == take and flit[1]
                    assert counted(take) + leaving * length <= depth - length
                size = rng.randint(1, length)
                to_send += [(take, i == 0, i == size - 1) for i in range(size)]
            ctx.set(dut.flit.valid, flit is not None)
            word = rng.getrandbits(16)
            if flit is not None:
                ctx.set(dut.flit.payload.vc, flit[0])
                ctx.set(dut.flit.payload.first, flit[1])
                ctx.set(dut.flit.payload.last, flit[2])
                ctx.set(dut.flit.payload.data, word)
            credits = [w for w in range(3) if marks[w]]
            credit = rng.choice(credits) if credits and rng.random() < 0.6 else None
            ctx.set(dut.port.credit.valid, credit is not None)
            ctx.set(dut.port.credit.payload, credit or 0)
            tight_next = (holding, ctx.get(dut.tight_next))  # this cycle's flit and credit in
            await ctx.tick()
            # The flit is in the link register one cycle later.
            assert ctx.get(dut.port.flit.valid) == (flit is not None)
            if flit is not None:
                vc, first, last = flit
                assert ctx.get(dut.port.flit.payload.vc) == vc
                assert ctx.get(dut.port.flit.payload.data) == word
                marks[vc].append(last)
                spare[vc] -= 1
                packets[vc] += first
                sent += 1
                singles += first and last
                if last:
                    busy[vc] = False
                    tails += 1
                    if holding == vc and take is None:
                        holding = None
            if credit is not None:
                if marks[credit].pop(0):
                    packets[credit] -= 1
                    drained[credit] = 0
                else:
                    drained[credit] += 1
                spare[credit] += 1
            if take is not None:
                # The compact router: busy until the packet's last flit has left; the split
                # router: the output held by it from the next cycle.
                busy[take] = pipeline == 2
                holding = take if pipeline == 3 else None
            assert min(spare) >= 0 and all(0 <= counted(w) <= depth for w in range(3))
        assert sent > 150 and tails > 50 and singles > 10

    run(dut, bench)
