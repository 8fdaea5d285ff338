"""Fat-tree (DESTRO) route compute in the Amaranth simulator, against the reference model.

Expected ports come from :func:`twinnet.model.fat_tree.destro_port`, mapped to router-local
indices with :class:`twinnet.model.twin_switch.TwinSwitch` (``half_of``, ``internal_port``).
"""

import itertools
import random

import pytest
from route_sim import run_route_compute

from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.fat_tree_route import FatTreeRouteCompute, destination_layout, static_layout
from twinnet.model.fat_tree import FatTreeTopology, Switch, destro_port
from twinnet.model.twin_switch import TwinSwitch
from twinnet.model.widths import index_width


def router_config(external: int, internal: int) -> RouterConfig:
    ports = (PortConfig("network"),) * external + (PortConfig("internal"),) * internal
    return RouterConfig(32, 1, ports)


def route_compute(tree, external_ports, r, in_port=0):
    return FatTreeRouteCompute(router_config(len(external_ports), r), in_port, tree=tree,
                               external_ports=external_ports, internal_port_count=r)


def run(dut, cases):
    """Drive ``(switch, digits)`` pairs; return ``(out_port, vc_mask, bubble, malformed)`` of
    each, sampled combinationally."""
    def drive(ctx, dut, case):
        switch, digits = case
        ctx.set(dut.node_static.stage, switch.stage)
        for i, digit in enumerate(switch.digits):
            ctx.set(dut.node_static[f"o{i}"], digit)
        for i, digit in enumerate(digits):
            ctx.set(dut.header[f"h{i}"], digit)

    return run_route_compute(dut, cases, drive)


def check_routes(tree, external_ports, r, switches, destinations, split=None):
    """Every (switch, destination) against DESTRO; ``split`` maps other-half ports."""
    dut = route_compute(tree, external_ports, r)
    cases, expected = [], []
    for switch in switches:
        for h in destinations:
            wanted = destro_port(tree, switch, h)
            if wanted in external_ports:
                local = external_ports.index(wanted)
            else:  # the model's crossing rule, entering on one of this half's ports
                assert split is not None and split.crosses(external_ports[0], wanted)
                local = len(external_ports) + split.internal_port(external_ports[0], wanted)
            cases.append((switch, tree.terminal_digits(h)))
            expected.append((local, 1, 0, 0))
    got = run(dut, cases)
    mismatches = [(c, g, e) for c, g, e in zip(cases, got, expected) if g != e]
    assert mismatches == [], mismatches[:5]


def odd_split(k: int, r: int) -> TwinSwitch:
    """An irregular split: α = {0} ∪ {k+1 … 2k-1}."""
    return TwinSwitch(k, frozenset([0, *range(k + 1, 2 * k)]), r)


def splits(k: int):
    for r in (1, 2):
        if k % 2 == 0:
            yield "paired", TwinSwitch.paired(k, r)
        yield "down_on_alpha", TwinSwitch.down_on_alpha(k, r)
        yield "odd", odd_split(k, r)


def sample(tree: FatTreeTopology, full: bool):
    """Switches per stage and destinations: everything, or a seeded sample of switches."""
    if full:
        return [list(tree.switches(s)) for s in range(tree.n)], list(range(tree.terminal_count))
    rng = random.Random(1)
    per_stage = [rng.sample(list(tree.switches(s)), 5) for s in range(tree.n)]
    return per_stage, list(range(tree.terminal_count))


TREES = [((2, 3), True), ((3, 2), True), ((4, 2), True), ((2, 1), True), ((4, 3), False)]


@pytest.mark.parametrize("kn, full", TREES, ids=[f"k{k}n{n}" for (k, n), _ in TREES])
def test_plain_switch_every_stage(kn, full):
    tree = FatTreeTopology(*kn)
    per_stage, destinations = sample(tree, full)
    k, last = tree.k, tree.last_stage
    inner = [switch for stage in per_stage[:last] for switch in stage]
    if inner:  # stages below the last: all 2k ports connected
        check_routes(tree, tuple(range(2 * k)), 0, inner, destinations)
    # The last stage has only its down ports.
    check_routes(tree, tuple(range(k)), 0, per_stage[last], destinations)


@pytest.mark.parametrize("kn, full", TREES, ids=[f"k{k}n{n}" for (k, n), _ in TREES])
def test_twin_halves_every_stage(kn, full):
    tree = FatTreeTopology(*kn)
    per_stage, destinations = sample(tree, full)
    switches = [switch for stage in per_stage for switch in stage]
    for _, split in splits(tree.k):
        # α in ascending order, β in descending order: the given order is the local order.
        for external_ports in (tuple(sorted(split.alpha)), tuple(sorted(split.beta))[::-1]):
            assert {split.half_of(p) for p in external_ports} == {
                split.half_of(external_ports[0])}
            check_routes(tree, external_ports, split.internal_port_count, switches,
                         destinations, split)


def test_layouts():
    tree = FatTreeTopology(4, 3)
    assert index_width(1) == 1 and index_width(2) == 1 and index_width(3) == 2
    assert index_width(4) == 2 and index_width(5) == 3
    assert {name: field.shape.width for name, field in destination_layout(tree)} == {
        "h0": 2, "h1": 2, "h2": 3}
    assert {name: field.shape.width for name, field in static_layout(tree)} == {
        "stage": 2, "o0": 2, "o1": 2}
    assert {name: field.shape.width for name, field in static_layout(FatTreeTopology(2, 1))} == {
        "stage": 1}
    assert {name: field.shape.width
            for name, field in destination_layout(FatTreeTopology(3, 2))} == {"h0": 2, "h1": 2}


@pytest.mark.parametrize("kn", [(2, 3), (3, 2), (4, 2), (3, 3), (2, 1)])
def test_out_of_range_digits_are_malformed(kn):
    """Every value of every header field; malformed iff some digit is >= k (for the top digit:
    a destination >= k**n; for k = 3 also a lower digit of 3)."""
    tree = FatTreeTopology(*kn)
    layout = destination_layout(tree)
    ranges = [range(1 << layout[f"h{i}"].shape.width) for i in range(tree.n)]
    headers = list(itertools.product(*ranges))
    assert any(digits[-1] >= tree.k for digits in headers)  # destinations >= k**n exist
    switch = next(tree.switches(0))
    for external_ports, r in ((tuple(range(2 * tree.k)), 0), (tuple(range(tree.k)), 1)):
        dut = route_compute(tree, external_ports, r)
        got = run(dut, [(switch, digits) for digits in headers])
        for digits, (_, _, _, malformed) in zip(headers, got):
            assert malformed == any(d >= tree.k for d in digits), digits


def test_unreachable_port_on_a_plain_switch_is_malformed():
    """A plain switch with only down ports, placed below the last stage: destinations that
    DESTRO sends up cannot be reached."""
    tree = FatTreeTopology(3, 2)
    dut = route_compute(tree, tuple(range(3)), 0)
    switches = list(tree.switches(0))
    cases = [(switch, tree.terminal_digits(h)) for switch in switches
             for h in range(tree.terminal_count)]
    got = run(dut, cases)
    ups = 0
    for (switch, digits), (out_port, _, _, malformed) in zip(cases, got):
        h = sum(d * tree.k ** i for i, d in enumerate(digits))
        wanted = destro_port(tree, switch, h)
        assert malformed == (wanted >= tree.k), (switch, h)
        if wanted < tree.k:
            assert out_port == wanted
        ups += wanted >= tree.k
    assert ups > 0


def test_bad_parameters():
    tree = FatTreeTopology(2, 2)
    with pytest.raises(ValueError, match=r"a router with 4 external and 1 internal ports has 5 "
                                         r"ports, not 4"):
        FatTreeRouteCompute(router_config(4, 0), 0, tree=tree, external_ports=(0, 1, 2, 3),
                            internal_port_count=1)
    with pytest.raises(ValueError, match=r"external_ports ports must be from 0 to 3 "
                                         r"\(2k - 1 for k = 2\), not \[4\]"):
        route_compute(tree, (0, 4), 0)
    with pytest.raises(ValueError, match=r"external_ports must not repeat a port, not \[1, 1\]"):
        route_compute(tree, (1, 1), 0)
    with pytest.raises(ValueError, match=r"external_ports\[1\] must be an integer >= 0, not -1"):
        route_compute(tree, (0, -1), 0)
    with pytest.raises(ValueError, match=r"external_ports must hold at least 1 port, not 0"):
        FatTreeRouteCompute(router_config(0, 1), 0, tree=tree, external_ports=(),
                            internal_port_count=1)
    with pytest.raises(ValueError, match=r"internal_port_count must be an integer >= 0, not -1"):
        FatTreeRouteCompute(router_config(2, 0), 0, tree=tree, external_ports=(0, 1),
                            internal_port_count=-1)
    with pytest.raises(TypeError, match=r"internal_port_count must be an integer, not 1\.0"):
        FatTreeRouteCompute(router_config(2, 1), 0, tree=tree, external_ports=(0, 1),
                            internal_port_count=1.0)
    with pytest.raises(TypeError, match=r"tree must be a FatTreeTopology, not \(2, 2\)"):
        FatTreeRouteCompute(router_config(2, 0), 0, tree=(2, 2), external_ports=(0, 1),
                            internal_port_count=0)
    with pytest.raises(ValueError, match=r"in_port must be an integer from 0 to 2, not 3"):
        route_compute(tree, (0, 1), 1, in_port=3)


def test_one_module_serves_a_stage_class_with_switch_as_input():
    """The switch is ``node_static``, not an elaboration constant: the same instance routes
    differently at two switches (a spot check of the stage-class claim)."""
    tree = FatTreeTopology(2, 2)
    dut = route_compute(tree, tuple(range(4)), 0)
    h = 3  # digits (1, 1)
    cases = [(Switch(0, (0,)), tree.terminal_digits(h)), (Switch(0, (1,)), tree.terminal_digits(h)),
             (Switch(1, (0,)), tree.terminal_digits(h))]
    got = [g[0] for g in run(dut, cases)]
    assert got == [destro_port(tree, s, h) for s, _ in cases] == [3, 1, 1]
