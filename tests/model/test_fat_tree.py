"""Fat trees of twin switches against 001 Table 1, Prop. 1.29–1.31 and hand counts."""

import pytest

from twinnet.model.fat_tree import (
    FatTreeInternalChannel,
    FatTreeLink,
    FatTreeTopology,
    Switch,
    TwinFatTree,
    all_routes,
    connection_counts,
    dependency_graph,
    destro_port,
    internal_crossings,
    is_minimal,
    link_loads,
    load_ranges,
    optimal_splits,
    route,
    switch_path_counts,
)
from twinnet.model.twin_switch import TwinSwitch

SIZES = [(2, 3), (4, 2), (4, 3), (6, 2)]


@pytest.fixture(scope="module", params=SIZES, ids=lambda kn: f"k{kn[0]}-n{kn[1]}")
def tree(request):
    return FatTreeTopology(*request.param)


# --- wiring --------------------------------------------------------------------------------------

def test_sizes_of_a_4_ary_3_tree():
    tree = FatTreeTopology(4, 3)
    assert (tree.terminal_count, tree.switches_per_stage, tree.switch_count) == (64, 16, 48)
    assert len(list(tree.switches())) == 48
    assert len(list(tree.links())) == 3 * 64 * 2


def test_up_and_down_wiring_are_inverse(tree):
    for switch in tree.switches():
        if switch.stage == tree.last_stage:
            continue
        for j in range(tree.k):
            above, down_port = tree.up_neighbor(switch, tree.k + j)
            assert above.stage == switch.stage + 1 and above.digits[switch.stage] == j
            assert tree.down_neighbor(above, down_port) == (switch, tree.k + j)


def test_terminal_hangs_on_down_port_h0():
    tree = FatTreeTopology(3, 3)
    h = 2 * 9 + 1 * 3 + 0  # h_2 h_1 h_0 = 2 1 0
    assert tree.terminal_switch(h) == Switch(0, (1, 2))
    assert tree.down_neighbor(Switch(0, (1, 2)), 0) == h


def test_first_difference_is_the_highest_differing_digit():
    tree = FatTreeTopology(2, 3)
    assert tree.first_difference(0b000, 0b001) == 0
    assert tree.first_difference(0b010, 0b011) == 0
    assert tree.first_difference(0b000, 0b110) == 2
    with pytest.raises(ValueError, match="terminals 3 and 3 are equal"):
        tree.first_difference(3, 3)


def test_destro_goes_up_by_the_destination_digit():
    tree = FatTreeTopology(4, 2)
    # Terminal 1 = digits (1, 0) hangs on <0,0>; destination 14 = digits (2, 3) is not below.
    assert destro_port(tree, Switch(0, (0,)), 14) == 4 + 2
    # At the top (stage 1) everything is below: down through port h_1 = 3.
    assert destro_port(tree, Switch(1, (2,)), 14) == 3


# --- paths ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("routing", ["destro", "random"])
def test_every_path_is_minimal_and_turns_at_first_difference(tree, routing):
    count = 0
    for source, destination, hops in all_routes(tree, routing, seed=7):
        assert is_minimal(tree, source, destination, hops), (source, destination)
        turn = [h for h in hops if h.move == "turnaround"]
        assert turn[0].switch.stage == tree.first_difference(source, destination)
        count += 1
    assert count == tree.terminal_count * (tree.terminal_count - 1)


def test_random_routing_replays_with_its_seed():
    tree = FatTreeTopology(4, 3)
    first = [hops for *_, hops in all_routes(tree, "random", seed=3)]
    again = [hops for *_, hops in all_routes(tree, "random", seed=3)]
    other = [hops for *_, hops in all_routes(tree, "random", seed=4)]
    destro = [hops for *_, hops in all_routes(tree, "destro")]
    assert first == again
    assert first != other and first != destro


def test_is_minimal_rejects_a_detour():
    tree = FatTreeTopology(2, 3)
    hops = route(tree, 0, 1)  # turns at stage 0
    longer = route(tree, 0, 4)  # turns at stage 2
    assert is_minimal(tree, 0, 1, hops)
    assert not is_minimal(tree, 0, 1, longer)


def table_1(k: int, n: int, s: int) -> tuple[int, int, int]:
    """001 Table 1: forward, turnaround and backward paths through a stage-s switch."""
    through = k ** (n + 1) - k ** (s + 2) if s < n - 1 else 0
    return through, (k - 1) * k ** (s + 1), through


def test_per_switch_path_counts_equal_table_1(tree):
    counts = switch_path_counts(tree)
    assert len(counts) == tree.switch_count
    for switch, c in counts.items():
        assert (c.forward, c.turnaround, c.backward) == table_1(tree.k, tree.n, switch.stage)


def test_port_level_connections_equal_table_1(tree):
    k, n = tree.k, tree.n
    for switch, counter in connection_counts(tree).items():
        s = switch.stage
        for in_port in range(2 * k):
            for out_port in range(2 * k):
                got = counter[in_port, out_port]
                if in_port < k and out_port >= k:
                    expected = k ** (n - 1) - k ** s if s < n - 1 else 0
                elif in_port < k and out_port < k:
                    expected = k ** s if in_port != out_port else 0
                elif in_port >= k and out_port < k:
                    expected = k ** n - k ** (s + 1) if out_port == in_port - k else 0
                else:
                    expected = 0
                assert got == expected, (switch, in_port, out_port)


def test_destro_loads_every_link_of_a_level_and_direction_equally(tree):
    ranges = load_ranges(link_loads(tree))
    assert set(ranges) == {(level, d) for level in range(tree.n) for d in ("up", "down")}
    for (level, _), (low, high) in ranges.items():
        # Pairs with FirstDifference >= level cross level `level`: k^n (k^n - k^level) paths
        # spread over the k^n cables of the level.
        assert low == high == tree.terminal_count - tree.k ** level


def test_random_up_ports_unbalance_the_links():
    ranges = load_ranges(link_loads(FatTreeTopology(4, 3), "random", seed=1))
    low, high = ranges[2, "up"]
    assert low < 48 < high  # the DESTRO load of level 2 is 64 - 16 = 48


# --- twin switches -------------------------------------------------------------------------------

def test_paired_split_holds_pairs_l_and_l_plus_k():
    split = TwinSwitch.paired(6)
    assert split.alpha == {0, 1, 2, 6, 7, 8}
    assert split.beta == {3, 4, 5, 9, 10, 11}
    assert not split.crosses(1, 7) and split.crosses(1, 4)
    assert split.internal_port(1, 7) is None and split.internal_port(1, 4) == 0


def test_optimal_crossings_are_half_k_to_the_n_plus_1_below_the_last_stage(tree):
    crossings = internal_crossings(TwinFatTree(tree))
    for switch, c in crossings.items():
        expected = tree.k ** (tree.n + 1) // 2 if switch.stage < tree.last_stage else 0
        assert c.total == expected, switch


def test_all_down_ports_on_alpha_costs_96_for_k4_n2():
    twin = TwinFatTree.uniform(4, 2, TwinSwitch.down_on_alpha(4))
    stage0 = {c.total for sw, c in internal_crossings(twin).items() if sw.stage == 0}
    # Every forward and every backward path crosses: 2 (k^3 - k^2) = 96 (32 when optimal).
    assert stage0 == {96}


def test_crossings_spread_over_r_internal_ports():
    tree = FatTreeTopology(4, 2)
    twin = TwinFatTree(tree, optimal_splits(4, 2, internal_port_count=2))
    for switch, c in internal_crossings(twin).items():
        assert sum(c.per_port) == c.total
        if switch.stage == 0:
            # Crossings head for out ports 2, 3 (β down), 6, 7 (β up) from α, or 0, 1, 4, 5
            # from β: each internal port (out_port mod 2) takes half.
            assert c.per_port == (16, 16)
            assert c.alpha_to_beta == c.beta_to_alpha == 16


# --- deadlock ------------------------------------------------------------------------------------

def test_destro_links_are_acyclic(tree):
    graph = dependency_graph(tree)
    assert graph.channel_count == len(list(tree.links()))
    assert graph.find_cycle() is None


def test_optimal_twin_switches_keep_destro_acyclic(tree):
    assert dependency_graph(tree, twin=TwinFatTree(tree)).find_cycle() is None


def test_down_ports_on_alpha_keep_destro_acyclic():
    # Forward paths cross α→β, backward paths β→α: the two never share an internal channel.
    tree = FatTreeTopology(4, 2)
    twin = TwinFatTree.uniform(4, 2, TwinSwitch.down_on_alpha(4))
    assert dependency_graph(tree, twin=twin).find_cycle() is None


def test_a_mixed_split_closes_a_cycle_through_internal_links():
    # α = {0, 1, 6, 7}: forward 0→4 and backward 6→2 both cross α→β, so a forward packet
    # (waiting to go up) and a backward one (coming down) share the internal channel; two
    # stage-0 switches and two stage-1 turnarounds close a cycle. The top stage keeps its
    # down ports on α, so only stage-0 internal links can take part.
    tree = FatTreeTopology(4, 2)
    twin = TwinFatTree(tree, (TwinSwitch(4, frozenset({0, 1, 6, 7})), TwinSwitch.down_on_alpha(4)))
    graph = dependency_graph(tree, twin=twin)
    cycle = graph.find_cycle()
    assert cycle is not None and graph.is_cycle(cycle)
    internal = [c for c in cycle if isinstance(c, FatTreeInternalChannel)]
    assert len({c.switch for c in internal}) >= 2
    assert all(isinstance(c, FatTreeLink) or c.switch.stage == 0 for c in cycle)


# --- errors --------------------------------------------------------------------------------------

def test_paired_split_needs_an_even_k():
    with pytest.raises(ValueError, match=r"k must be even for the paired split .*not 3"):
        TwinSwitch.paired(3)
    with pytest.raises(ValueError, match="k must be even for the paired split"):
        TwinFatTree(FatTreeTopology(5, 2))


def test_alpha_must_hold_half_of_the_ports():
    with pytest.raises(ValueError, match=r"alpha must hold exactly k = 4 of the 8 ports .*not 3"):
        TwinSwitch(4, frozenset({0, 1, 2}))
    with pytest.raises(ValueError, match=r"alpha ports must be from 0 to 7 .* not \[8\]"):
        TwinSwitch(4, frozenset({0, 1, 2, 8}))
    with pytest.raises(ValueError, match="internal_port_count must be an integer >= 1, not 0"):
        TwinSwitch(4, frozenset({0, 1, 2, 3}), 0)


def test_tree_parameters_are_checked():
    with pytest.raises(ValueError, match="k must be an integer >= 2, not 1"):
        FatTreeTopology(1, 2)
    with pytest.raises(TypeError, match="n must be an integer, not '2'"):
        FatTreeTopology(2, "2")
    with pytest.raises(ValueError, match="splits must give one twin switch per stage"):
        TwinFatTree(FatTreeTopology(4, 2), (TwinSwitch.paired(4),))
    with pytest.raises(ValueError, match=r"splits\[0\] has k = 2; the tree has k = 4"):
        TwinFatTree(FatTreeTopology(4, 2), (TwinSwitch.paired(2), TwinSwitch.paired(4)))


def test_route_rejects_bad_terminals():
    tree = FatTreeTopology(2, 2)
    with pytest.raises(ValueError, match="destination must be an integer from 0 to 3, not 4"):
        route(tree, 0, 4)
    with pytest.raises(ValueError, match="source and destination are both terminal 2"):
        route(tree, 2, 2)
    with pytest.raises(ValueError, match="routing must be one of 'destro', 'random'"):
        list(all_routes(tree, "adaptive"))


# --- the RTL-level path of a generated fat tree (hand-worked examples) --------------------------

def test_router_hops_by_hand():
    """4-ary 2-tree. Terminal 0 hangs on down port 0 of <0,0>; terminal 15 = digits (3, 3) on
    down port 3 of <0,3>. DESTRO: <0,0> is not above 15 (h1 = 3 != o0 = 0), so up port
    k + h0 = 7 (u3) to <1,3>, which sends it down port h1 = 3 (d3) to <0,3>, which ejects it.
    Paired split below the last stage: α = {0, 1, 4, 5}; down ports on α at the last stage."""
    from twinnet.model.fat_tree import FatTreeNetworkConfig, router_hops

    plain = FatTreeNetworkConfig.from_dict({"k": 4, "n": 2, "split": "plain"})
    assert router_hops(plain, 0, 15) == [("<0,0>", "u3", 0), ("<1,3>", "d3", 0)]
    assert router_hops(plain, 0, 1) == []  # both on <0,0>: no link between routers
    twin = FatTreeNetworkConfig.from_dict({"k": 4, "n": 2, "split": "optimal"})
    # In on port 0 (α), out on port 7 (β): across the internal link, port 7 mod 1 = 0.
    assert router_hops(twin, 0, 15) == [("<0,0>/alpha", "i0", 0), ("<0,0>/beta", "u3", 0),
                                        ("<1,3>/alpha", "d3", 0)]
    assert router_hops(twin, 0, 1) == []  # ports 0 and 1 both on α
    assert router_hops(twin, 0, 2) == [("<0,0>/alpha", "i0", 0)]  # port 2 on β
    two = FatTreeNetworkConfig.from_dict({"k": 4, "n": 2, "split": "optimal", "internal_ports": 2})
    assert router_hops(two, 0, 2) == [("<0,0>/alpha", "i0", 0)]  # 2 mod 2
    assert router_hops(two, 0, 3) == [("<0,0>/alpha", "i1", 0)]  # 3 mod 2


def test_fat_tree_network_names_and_parameters_round_trip():
    from twinnet.model.fat_tree import FatTreeNetworkConfig

    for split in ("optimal", "paired", "down-alpha", "plain", [[0, 1, 4, 5], [0, 1, 2, 3]]):
        # (A plain tree has no internal ports: giving them is refused.)
        values = {"k": 4, "n": 2, "split": split,
                  **({"internal_ports": 2} if split != "plain" else {})}
        network = FatTreeNetworkConfig.from_dict(values)
        assert FatTreeNetworkConfig.from_dict(network.to_dict()) == network
        assert "-" not in network.name  # a Verilog identifier
    assert FatTreeNetworkConfig.from_dict({"k": 4, "n": 2, "split": "down-alpha"}).name == \
        "fattree_k4_n2_down_alpha_r1"


def test_several_vcs_keep_the_path_but_not_the_order():
    """With several VCs a packet takes DESTRO's links on any VC: the family's path check
    accepts any VC below the count and nothing else; a pair's packets may pass each other."""
    from twinnet.families import family
    from twinnet.model.fat_tree import FatTreeNetworkConfig

    fat = family("fat-tree")
    one = FatTreeNetworkConfig.from_dict({"k": 4, "n": 2})
    three = FatTreeNetworkConfig.from_dict({"k": 4, "n": 2, "vcs": 3})
    assert (fat.deterministic(one), fat.in_order(one)) == (True, True)
    assert (fat.deterministic(three), fat.in_order(three)) == (True, False)
    assert three.name == "fattree_k4_n2_optimal_r1_v3"
    source, destination = 0, 15
    path = fat.hops(three, source, destination)
    assert len(path) >= 2
    on_vcs = [(router, port, 2 - index % 3) for index, (router, port, _) in enumerate(path)]
    assert fat.path_error(three, source, destination, on_vcs) is None
    assert fat.path_error(one, source, destination, on_vcs) is not None  # one VC: VC 0 only
    beyond = [(router, port, 3) for router, port, _ in path]
    assert fat.path_error(three, source, destination, beyond) is not None
    detour = [path[0], *path[2:]]
    assert fat.path_error(three, source, destination, detour) is not None
    assert fat.deadlock(three)["deadlock_free"]
