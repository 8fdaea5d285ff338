"""Router in the Amaranth simulator: per-hop latency, static route-compute inputs, drops."""

import dataclasses

import pytest
from amaranth.hdl import Fragment, Module
from amaranth.lib import data
from amaranth.sim import Simulator

from twinnet.hdl.config import PIPELINES, PortConfig, RouterConfig
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.route_compute import RouteCompute
from twinnet.hdl.router import Router
from twinnet.sim_tb.layout import Fields

LENGTH = 3
CONFIG = RouterConfig(16, LENGTH, (PortConfig("network", vc_count=2, buffer_depth=6, bubble=True),
                                   PortConfig("network", vc_count=1, buffer_depth=3),
                                   PortConfig("pe", vc_count=2, buffer_depth=4)))


def simulate(dut, *benches):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    for bench in benches:
        sim.add_testbench(bench)
    sim.run()


def head(dut, **route):
    fields = Fields(dut.flit_format.describe()["head"])
    return fields.pack({f"route.{name}": value for name, value in route.items()} |
                       {"payload": 0x5})


def put(ctx, dut, port, word, index, vc=0):
    """Drive flit `index` of a packet into input `port` for one cycle (caller ticks)."""
    stream = dut.port_in(port)
    flit = stream.payload if CONFIG.ports[port].is_pe else stream.flit.payload
    ctx.set(flit.data, word)
    ctx.set(flit.first, index == 0)
    ctx.set(flit.last, index == LENGTH - 1)
    ctx.set(flit.vc, vc)
    ctx.set(stream.valid if CONFIG.ports[port].is_pe else stream.flit.valid, 1)


def idle(ctx, dut, port):
    stream = dut.port_in(port)
    ctx.set(stream.valid if CONFIG.ports[port].is_pe else stream.flit.valid, 0)


def out_valid(ctx, dut, port):
    stream = dut.port_out(port)
    return ctx.get(stream.valid if CONFIG.ports[port].is_pe else stream.flit.valid)


#: The microarchitectures: the compact router, the split router with its bypass (its own;
#: its buffers in LUT RAM or in block RAM) and without it.
MICROARCHITECTURES = [{"pipeline": pipeline} for pipeline in PIPELINES] + [
    {"pipeline": 3, "buffer_memory": "block"}, {"pipeline": 3, "bypass": False}]


@pytest.mark.parametrize("bypass", [False, True])
def test_one_flit_packets_take_the_pipeline_or_the_bypass(bypass):
    """With packets of one flit, heads back to back on one link VC, each to another output,
    leave 3 cycles (2 with the bypass) after they arrive, one per cycle, and a later one as
    well: with the bypass the first is allocated as it arrives and its route never queued
    (else its route would be allocated again, to the next head)."""
    config = dataclasses.replace(CONFIG, max_packet_length=1, bypass=bypass, ports=tuple(
        dataclasses.replace(port, buffer_depth=4) for port in CONFIG.ports))
    dut = Router(config, HeaderRouteCompute)
    latency = 2 if bypass else 3
    sent = {0: 1, 1: 2, 6: 1}  # cycle: the output its head names

    async def bench(ctx):
        stream = dut.port_in(0).flit
        ctx.set(dut.port_out(2).ready, 1)
        seen = []
        for cycle in range(12):
            if cycle in sent:
                ctx.set(stream.payload.data, head(dut, port=sent[cycle], vc=0))
                ctx.set(stream.payload.first, 1)
                ctx.set(stream.payload.last, 1)
                ctx.set(stream.payload.vc, 0)
                ctx.set(stream.valid, 1)
            else:
                ctx.set(stream.valid, 0)
            for port in (1, 2):
                if out_valid(ctx, dut, port):
                    out = dut.port_out(port)
                    flit = out.payload if config.ports[port].is_pe else out.flit.payload
                    seen.append((cycle, port, ctx.get(flit.data)))
            await ctx.tick()
        assert seen == [(cycle + latency, port, head(dut, port=port, vc=0))
                        for cycle, port in sent.items()]

    simulate(dut, bench)


@pytest.mark.parametrize("micro", MICROARCHITECTURES, ids=lambda micro: "-".join(
    f"{key}{value}" for key, value in micro.items()))
@pytest.mark.parametrize("src, dst", [(0, 1), (2, 0), (1, 2), (0, 0)])
def test_zero_load_latency_is_the_pipeline_depth(src, dst, micro):
    """A head flit driven in cycle 0 is on the output in cycle ``pipeline``: 2 for the compact
    router (003 §7.1 router), 3 for the split one (see docs/router.md), and 2 for the split one
    with the bypass when it arrives on a link (3 from a PE); the body follows one flit per
    cycle."""
    dut = Router(dataclasses.replace(CONFIG, **micro), HeaderRouteCompute)
    bypass = micro.get("bypass", micro["pipeline"] == 3)  # the split router's own
    latency = 2 if bypass and not CONFIG.ports[src].is_pe else micro["pipeline"]

    async def bench(ctx):
        if CONFIG.ports[dst].is_pe:
            ctx.set(dut.port_out(dst).ready, 1)
        words = [head(dut, port=dst, vc=0), 0x1234, 0x5678]
        seen = []
        for cycle in range(8):
            if cycle < LENGTH:
                put(ctx, dut, src, words[cycle], cycle)
            else:
                idle(ctx, dut, src)
            if out_valid(ctx, dut, dst):
                stream = dut.port_out(dst)
                flit = stream.payload if CONFIG.ports[dst].is_pe else stream.flit.payload
                seen.append((cycle, ctx.get(flit.data)))
            await ctx.tick()
        assert seen == [(latency + i, word) for i, word in enumerate(words)]

    simulate(dut, bench)


@pytest.mark.parametrize("micro", MICROARCHITECTURES, ids=lambda micro: "-".join(
    f"{key}{value}" for key, value in micro.items()))
def test_malformed_packets_are_dropped_counted_and_credited(micro):
    """Port 3 does not exist on a 3-port router; VC 1 does not exist on port 1; a bubble move
    toward a port without bubble buffers is refused. All three are drained (link credits
    come back for every flit), counted, and a good packet behind them still goes through."""
    dut = Router(dataclasses.replace(CONFIG, **micro), HeaderRouteCompute)

    async def bench(ctx):
        packets = [head(dut, port=3), head(dut, port=1, vc=1), head(dut, port=1, bubble=1),
                   head(dut, port=2, vc=0)]
        credits = 0
        flits = [(word if i == 0 else 0x77, i) for word in packets for i in range(LENGTH)]
        ctx.set(dut.port_out(2).ready, 1)
        delivered = 0
        for cycle in range(40):
            if cycle < len(flits):
                put(ctx, dut, 0, flits[cycle][0], flits[cycle][1], vc=1)
            else:
                idle(ctx, dut, 0)
            credits += ctx.get(dut.port_in(0).credit.valid)
            if out_valid(ctx, dut, 2) and ctx.get(dut.port_out(2).payload.first):
                delivered += 1
            await ctx.tick()
        assert ctx.get(dut.drop_count) == 3
        assert credits == len(flits), "every flit's buffer slot must be credited back"
        assert delivered == 1

    simulate(dut, bench)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_drop_counter_saturates_at_its_width(pipeline):
    """A 2-bit ``drop_count`` counts 0, 1, 2, 3 and then stays at 3 (hand count: five
    malformed packets); a network's routers use 32 bits so that the network's total is exact."""
    config = dataclasses.replace(CONFIG, drop_count_width=2, pipeline=pipeline)
    dut = Router(config, HeaderRouteCompute)
    assert len(dut.drop_count) == 2

    async def bench(ctx):
        flits = [(head(dut, port=3) if i == 0 else 0x77, i) for _ in range(5)
                 for i in range(LENGTH)]
        counts = [ctx.get(dut.drop_count)]  # from reset (with the bypass, a head arriving
        # on a link is counted as it arrives)
        for cycle in range(len(flits) + 8):
            if cycle < len(flits):
                put(ctx, dut, 0, flits[cycle][0], flits[cycle][1], vc=1)
            else:
                idle(ctx, dut, 0)
            await ctx.tick()
            counts.append(ctx.get(dut.drop_count))
        assert sorted(set(counts)) == [0, 1, 2, 3] and counts[-1] == 3

    simulate(dut, bench)


def test_network_cards_count_drops_in_32_bits():
    from twinnet.hdl.twin_card import card_router_config
    from twinnet.model.twin_network import TwinNetworkConfig

    network = TwinNetworkConfig.from_dict({"radices": [3, 3], "configuration": "C_Best"})
    assert {card_router_config(network, card).drop_count_width for card in (0, 1)} == {32}


class OffsetRouteCompute(RouteCompute):
    """Test routing with a static input: output = (header.dest - node_static.here) mod 3."""

    def __init__(self, config, in_port):
        super().__init__(config, in_port,
                         header_layout=data.StructLayout({"dest": 2}),
                         static_layout=data.StructLayout({"here": 2}))

    def elaborate(self, platform):
        m = Module()
        diff = (self.header.dest + 3 - self.node_static.here)
        m.d.comb += [self.out_port.eq(diff % 3), self.vc_mask.eq(1)]
        return m


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_static_inputs_reach_every_route_compute(pipeline):
    """The router exposes the routing function's static layout as its `node_static` input and
    wires it to the route compute of every input port."""
    dut = Router(dataclasses.replace(CONFIG, pipeline=pipeline), OffsetRouteCompute)
    assert dut.signature.members["node_static"].shape == data.StructLayout({"here": 2})
    plain = Router(CONFIG, HeaderRouteCompute)
    assert "node_static" not in plain.signature.members
    Fragment.get(plain, None)  # elaborated, so not reported as unused

    async def bench(ctx):
        ctx.set(dut.port_out(2).ready, 1)
        fields = Fields(dut.flit_format.describe()["head"])
        for here, src in [(0, 0), (1, 1), (2, 2), (1, 0)]:
            ctx.set(dut.node_static.here, here)
            dest = (here + 2) % 3  # always port 2 = (dest - here) mod 3
            word = fields.pack({"route.dest": dest})
            got = []
            for cycle in range(8):
                if cycle < LENGTH:
                    put(ctx, dut, src, word, cycle)
                else:
                    idle(ctx, dut, src)
                if out_valid(ctx, dut, 2):
                    got.append(ctx.get(dut.port_out(2).payload.data))
                await ctx.tick()
            assert got[:1] == [word], f"static here={here}, input {src}: got {got}"

    simulate(dut, bench)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_pe_injection_vc_out_of_range_is_dropped(pipeline):
    """A PE port with 3 VCs has a 2-bit VC field; VC 3 does not exist: drop and count."""
    config = RouterConfig(16, 2, (PortConfig("network", vc_count=1, buffer_depth=2),
                                  PortConfig("pe", vc_count=3, buffer_depth=2)),
                          pipeline=pipeline)
    dut = Router(config, HeaderRouteCompute)
    fields = Fields(dut.flit_format.describe()["head"])

    async def bench(ctx):
        stream = dut.in_1
        sent = 0
        for vc, expect_drops in ((3, 1), (2, 1)):
            word = fields.pack({"route.port": 0})
            for index in range(2):
                ctx.set(stream.payload.data, word if index == 0 else 0)
                ctx.set(stream.payload.first, index == 0)
                ctx.set(stream.payload.last, index == 1)
                ctx.set(stream.payload.vc, vc)
                ctx.set(stream.valid, 1)
                assert ctx.get(stream.ready)
                await ctx.tick()
            ctx.set(stream.valid, 0)
            for _ in range(4):
                sent += ctx.get(dut.out_0.flit.valid)
                await ctx.tick()
            assert ctx.get(dut.drop_count) == expect_drops
        assert sent == 2  # only the VC 2 packet left, both flits

    simulate(dut, bench)


def test_router_argument_types():
    with pytest.raises(TypeError, match=r"config must be a RouterConfig, not 5"):
        Router(5, HeaderRouteCompute)
    with pytest.raises(TypeError, match=r"route_compute must be a factory"):
        Router(CONFIG, None)
    with pytest.raises(TypeError, match=r"route_compute\(0\) must return a RouteCompute"):
        Router(CONFIG, lambda config, port: object())
