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
    ports = (PortConfig("network", vc_count=3, buffer_depth=depth, bubble=depth >= 2 * length),
             PortConfig("pe", vc_count=1, buffer_depth=depth))
    config = RouterConfig(16, length, ports, pipeline=pipeline)
    stage = StageConfig(config, HEAD)
    dut = OutputUnit(stage, 0)
    rng = random.Random(pipeline * 100 + length * 10 + depth)

    async def bench(ctx):
        spare = [depth - length] * 3  # free downstream slots less L
        busy = [False] * 3  # compact: a packet of this VC still has flits to send
        downstream = [0] * 3  # flits sent and not yet credited back
        to_send = []  # (vc, last) of the flits of allocated packets, in order
        sent = 0
        for _ in range(600):
            idle = [w for w in range(3) if not busy[w] and spare[w] >= 0
                    and all(v != w for v, _ in to_send)]
            take = rng.choice(idle) if idle and rng.random() < 0.5 else None
            ctx.set(dut.take, onehot(take))
            # The split router takes credits a cycle after the allocation: a one-flit
            # packet's VC is busy in that cycle, as the allocator may meanwhile grant it again.
            now_busy = [busy[w] or (pipeline == 3 and length == 1 and w == take)
                        for w in range(3)]
            free_one = [not now_busy[w] and spare[w] >= 0 for w in range(3)]
            free_two = [not now_busy[w] and spare[w] >= length for w in range(3)]
            assert ctx.get(dut.free_one) == sum(f << w for w, f in enumerate(free_one))
            assert ctx.get(dut.free_two) == sum(f << w for w, f in enumerate(free_two))
            if take is not None:
                to_send += [(take, i == length - 1) for i in range(length)]
            flit = to_send.pop(0) if to_send and rng.random() < 0.8 else None
            credits = [w for w in range(3) if downstream[w]]
            credit = rng.choice(credits) if credits and rng.random() < 0.6 else None
            ctx.set(dut.flit.valid, flit is not None)
            word = rng.getrandbits(16)
            if flit is not None:
                ctx.set(dut.flit.payload.vc, flit[0])
                ctx.set(dut.flit.payload.last, flit[1])
                ctx.set(dut.flit.payload.data, word)
            ctx.set(dut.port.credit.valid, credit is not None)
            ctx.set(dut.port.credit.payload, credit or 0)
            await ctx.tick()
            # The flit is in the link register one cycle later.
            assert ctx.get(dut.port.flit.valid) == (flit is not None)
            if flit is not None:
                assert ctx.get(dut.port.flit.payload.vc) == flit[0]
                assert ctx.get(dut.port.flit.payload.data) == word
                downstream[flit[0]] += 1
                sent += 1
            if credit is not None:
                downstream[credit] -= 1
                spare[credit] += 1
            if take is not None:
                spare[take] -= length
                # The compact router: busy until the packet's last flit has left.
                busy[take] = pipeline == 2
            if flit is not None and flit[1]:
                busy[flit[0]] = False
            assert min(spare) >= -length
        assert sent > 150

    run(dut, bench)
