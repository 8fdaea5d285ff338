"""The router's stall counters (``RouterConfig.stall_counters``) against hand-built situations
whose reason is known: a waiting head is counted under exactly one reason per cycle."""

import dataclasses

import pytest
from test_router import CONFIG, LENGTH, head, idle, put, simulate

from twinnet.hdl.config import PIPELINES
from twinnet.hdl.header_route import HeaderRouteCompute
from twinnet.hdl.router import Router
from twinnet.hdl.router.stalls import STALL_REASONS


def router(pipeline):
    return Router(dataclasses.replace(CONFIG, pipeline=pipeline, stall_counters=True),
                  HeaderRouteCompute)


def counts(ctx, dut):
    return {reason: ctx.get(getattr(dut.stalls, reason)) for reason in STALL_REASONS}


def waits(ctx, dut):
    """The ``waits`` bits now: ``{(output, vc)}`` set."""
    return {(o, w) for o, count in enumerate(CONFIG.output_vc_counts) for w in range(count)
            if ctx.get(getattr(dut.waits, f"out_{o}")) >> w & 1}


def window(pipeline, packets, start=30, length=20):
    """Send ``packets`` (``(port, vc, route)``, one after the other on each port), never
    return a credit, and return the counters' growth over cycles ``start`` to
    ``start + length`` (long after every packet that can move has moved), and at the end."""
    dut = router(pipeline)
    grown = {}

    async def bench(ctx):
        ctx.set(dut.port_out(2).ready, 1)
        queues = {}
        for port, vc, route in packets:
            queues.setdefault(port, []).extend(
                (head(dut, **route) if i == 0 else 0x55, i, vc) for i in range(LENGTH))
        before = None
        for cycle in range(start + length):
            for port in range(3):
                queue = queues.get(port)
                if queue and ctx.get(dut.port_in(port).ready if CONFIG.ports[port].is_pe
                                     else 1):
                    word, index, vc = queue.pop(0)
                    put(ctx, dut, port, word, index, vc)
                else:
                    idle(ctx, dut, port)
            if cycle == start:
                before = counts(ctx, dut)
            if cycle >= start:
                for bit in waits(ctx, dut):
                    grown.setdefault("waits", {}).setdefault(bit, 0)
                    grown["waits"][bit] += 1
            await ctx.tick()
        after = counts(ctx, dut)
        grown.update({reason: after[reason] - before[reason] for reason in STALL_REASONS})
        grown["total"] = after

    simulate(dut, bench)
    return grown


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_no_credits(pipeline):
    """Port 1's output has one VC of 3 flits downstream: the first packet takes them all and
    none come back, so the second waits for credits every cycle."""
    grown = window(pipeline, [(0, 0, {"port": 1, "vc": 0}), (0, 1, {"port": 1, "vc": 0})])
    assert grown | {"total": None, "waits": None} == {
        "heads": 20, "arbitration": 0, "output": 0, "credits": 20, "bubble": 0, "switch": 0,
        "total": None, "waits": None}
    # The link counters' "blocked": output 1's VC 0 is waited for in every cycle, no other.
    assert grown["waits"] == {(1, 0): 20}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_bubble(pipeline):
    """Port 0's output VC 0 has 6 flits downstream; after a first packet (3 flits) there is
    room for one packet, not for the two a bubble move needs."""
    grown = window(pipeline, [(1, 0, {"port": 0, "vc": 0}),
                              (2, 0, {"port": 0, "vc": 0, "bubble": 1})])
    assert grown["heads"] == grown["bubble"] == 20
    assert grown["waits"] == {(0, 0): 20}
    assert grown["credits"] == grown["output"] == grown["arbitration"] == 0


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_output_held(pipeline):
    """A packet whose body never comes holds the PE output (its only VC) for ever; a second
    packet toward it waits for the output."""
    dut_packets = [(0, 0, {"port": 2, "vc": 0}), (1, 0, {"port": 2, "vc": 0})]
    dut = router(pipeline)
    grown = {}

    async def bench(ctx):
        ctx.set(dut.port_out(2).ready, 1)
        put(ctx, dut, 0, head(dut, **dut_packets[0][2]), 0)
        await ctx.tick()
        idle(ctx, dut, 0)  # the rest of the first packet never comes
        for i in range(LENGTH):
            put(ctx, dut, 1, head(dut, **dut_packets[1][2]) if i == 0 else 0x55, i)
            await ctx.tick()
        idle(ctx, dut, 1)
        await ctx.tick().repeat(20)
        before = counts(ctx, dut)
        await ctx.tick().repeat(20)
        after = counts(ctx, dut)
        grown.update({reason: after[reason] - before[reason] for reason in STALL_REASONS})

    simulate(dut, bench)
    assert grown == {"heads": 20, "arbitration": 0, "output": 20, "credits": 0, "bubble": 0,
                     "switch": 0}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_arbitration_and_conservation(pipeline):
    """Two packets asking for the PE output in the same cycle: one loses arbitration once,
    then waits for the output; every waiting head-cycle has exactly one reason or a grant."""
    grown = window(pipeline, [(0, 0, {"port": 2, "vc": 0}), (1, 0, {"port": 2, "vc": 0})],
                   start=0, length=30)
    total = grown["total"]
    assert total["arbitration"] == 1
    assert total["output"] >= 1
    granted = total["heads"] - sum(total[r] for r in ("arbitration", "output", "credits",
                                                      "bubble"))
    assert granted == 2  # both packets were allocated exactly once


def test_switch_stalls_only_in_the_compact_router():
    """Two packets allocated two VCs of one output in the same cycle share its link flit by
    flit in the compact router (the loser of each cycle counts one ``switch``); the split
    router holds the output for one packet, so the other waits for the output instead."""
    packets = [(1, 0, {"port": 0, "vc": 0}), (2, 0, {"port": 0, "vc": 1})]
    compact = window(2, packets, start=0, length=30)["total"]
    split = window(3, packets, start=0, length=30)["total"]
    assert compact["switch"] >= 1 and compact["output"] == 0
    assert split["switch"] == 0 and split["output"] >= 1
