"""The brute-force internal-link count (``tests/twin_crossings.py``, 003's DOR walked pair by
pair without the model) against a hand count, 003 Tables 7-8 and the model's transit count.

The RTL's measured internal-link packets are held to the same brute force in
``tests/sim/test_internal_links.py``.
"""

from collections import Counter
from itertools import product

import pytest
from tiers import marked
from twin_crossings import CARD0, crossings, packets_per_link, paper_transit_paths, transit_paths

from twinnet.model.twin import TwinTorusTopology
from twinnet.model.twin_analysis import internal_transit_count, internal_transit_count_at


def test_brute_force_on_3dt_3x3x3_d_matches_a_hand_count():
    """Configuration D (card 0: X+ Y+ X-; card 1: Y- Z+ Z-), k = 3, at any node. PE0 leaving
    towards the 24 nodes that differ first in X or along Y+ stays on card 0; towards the 3
    nodes along Y- (aux = 2) and the 2 that differ in Z only it crosses: 5 nodes x 2 PEs = 10.
    PE1 crosses towards the 18 X nodes and the 3 Y+ nodes: 21 x 2 = 42. So 52 source
    crossings per node, 52 destination crossings (the same paths reversed land on the same
    cards), 64 transit (4 PE pairs x 003 Table 7's 16 node paths) and 2 between the node's own
    PEs: 170 per node, 85 per direction (the figure docs/traffic.md quotes from the RTL)."""
    counts = crossings(3, "D")
    for node in product(range(3), repeat=3):
        by_role = Counter()
        for card in (0, 1):
            for role in ("local", "source", "transit", "destination"):
                by_role[role] += counts[node, card, role]
        assert by_role == {"local": 2, "source": 52, "transit": 64, "destination": 52}
        assert (counts[node, 0, "source"], counts[node, 1, "source"]) == (10, 42)
    assert set(packets_per_link(counts).values()) == {85}


@pytest.mark.parametrize("k", marked([2, 3, 4, 5, 6], {6}))
@pytest.mark.parametrize("configuration", CARD0)
def test_transit_paths_equal_003_tables_7_and_8(configuration, k):
    """The brute force's transit crossings (paths through a node, neither starting nor
    ending there, per pair of nodes) at every node equal 003 Table 7 (k odd) or Table 8 (k
    even), and the model's count (its symmetric count, and its walk of every pair at two
    nodes) agrees. k = 2: the tie rule sends every packet one way, the tables still hold.

    And what the RTL counts per node (both directions): each PE pair adds 4 PE-level paths per
    003 path (4 R); a packet to another node leaves by one port, whose card is the wrong one
    for exactly one of the node's two PEs, so 2 (k^3 - 1) crossings at the source (one per
    destination PE elsewhere) and as many at the destination; and 2 between the node's own
    PEs: 4 R + 4 (k^3 - 1) + 2 = 4 (R + k^3) - 2 at every node, whatever the configuration."""
    counts = crossings(k, configuration)
    transit = transit_paths(counts, k)
    paper = paper_transit_paths(configuration, k)
    assert set(transit.values()) == {paper}
    per_node = Counter()
    for (node, _), packets in packets_per_link(counts).items():
        per_node[node] += packets
    assert set(per_node.values()) == {4 * (paper + k**3) - 2}
    config = TwinTorusTopology((k, k, k), configuration)
    assert internal_transit_count(config) == paper
    for node in ((0, 0, 0), (k - 1, k // 2, 1)):
        assert internal_transit_count_at(config, node) == paper
