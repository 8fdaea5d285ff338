"""Internal-link crossings of a 3DT twin torus under all-pairs, counted by brute force from
003's definitions alone (no model function), and 003 Tables 7-8's closed forms.

The walk (003 §3, §5): node ``a``'s port ``d_i^+`` is cabled to node ``a + e_i``'s port
``d_i^-``; card 0 holds the three ports Table 1 names, card 1 the other three; PE ``p`` of a
node sits on card ``p``. DOR corrects the lowest differing dimension first, in the direction
of ``aux = (d_i - c_i) mod k``: ``+`` when ``aux <= k/2`` (003 §5: the positive link when both
ways are equally short), else ``-``. A packet crosses its node's internal link when the port
it leaves by (or, at the destination, its PE) sits on the other card than the one it is on.

Every ordered pair of distinct PEs sends one packet; each crossing is counted at its node, in
its direction (from card 0 or from card 1), with its role: ``local`` (both PEs on that node),
``source``, ``destination`` or ``transit`` (a node the path passes through, which is what
003 Tables 7-8 count, with one path per ordered pair of distinct nodes).
"""

from collections import Counter
from itertools import product

#: 003 Table 1: the ports on card 0 (card 1 holds the other three).
CARD0 = {"A": "X+ Y+ Z+", "B": "X+ Y+ Z-", "C": "X+ Y+ Y-", "D": "X+ Y+ X-", "E": "X+ Y- Z+",
         "F": "X+ Y- Z-", "G": "X+ Y- X-", "H": "X+ Z+ Z-", "I": "X+ Z+ X-", "J": "X+ Z- X-"}
ROLES = ("local", "source", "transit", "destination")


def _card_of(configuration: str) -> dict[tuple[int, int], int]:
    card0 = {("XYZ".index(name[0]), +1 if name[1] == "+" else -1)
             for name in CARD0[configuration].split()}
    return {(dim, sign): 0 if (dim, sign) in card0 else 1
            for dim in range(3) for sign in (+1, -1)}


def crossings(k: int, configuration: str) -> Counter:
    """``(node, from_card, role)`` → internal-link crossings under all-pairs on 3DT k×k×k."""
    card_of = _card_of(configuration)
    nodes = list(product(range(k), repeat=3))
    counts = Counter()
    for source, source_pe, destination, destination_pe in product(nodes, (0, 1), nodes, (0, 1)):
        if (source, source_pe) == (destination, destination_pe):
            continue
        node, card = source, source_pe
        while node != destination:
            dim = next(i for i in range(3) if node[i] != destination[i])
            sign = +1 if 2 * ((destination[dim] - node[dim]) % k) <= k else -1
            if card_of[dim, sign] != card:
                counts[node, card, "source" if node == source else "transit"] += 1
                card = 1 - card
            node = tuple((c + sign) % k if i == dim else c for i, c in enumerate(node))
            card = card_of[dim, -sign]  # arrived through the opposite port
        if card != destination_pe:
            counts[node, card, "local" if node == source else "destination"] += 1
    return counts


def packets_per_link(counts: Counter) -> dict[tuple, int]:
    """``(node, from_card)`` → packets on that direction of the node's internal link."""
    total = Counter()
    for (node, card, _), count in counts.items():
        total[node, card] += count
    return dict(total)


def transit_paths(counts: Counter, k: int) -> dict[tuple, int]:
    """Node → node-level paths through it that use both its cards (003's count): the transit
    crossings, of which each pair of nodes has one per pair of PEs (2 × 2), both directions."""
    transit = Counter({node: 0 for node in product(range(k), repeat=3)})
    for (node, _, role), count in counts.items():
        if role == "transit":
            transit[node] += count
    assert all(count % 4 == 0 for count in transit.values())
    return {node: count // 4 for node, count in transit.items()}


#: 003 Tables 7 (k odd) and 8 (k even): 4 × the paths through a node using its two cards.
TABLE_7 = {
    "ABEF": lambda k: 3 * k**4 - 8 * k**3 + 3 * k**2 + 2,
    "CHIJ": lambda k: k**4 + 2 * k**3 - 7 * k**2 + 2 * k + 2,
    "DG": lambda k: k**4 - k**2 - 4 * k + 4,
}
TABLE_8 = {
    "A": lambda k: 3 * k**4 - 8 * k**3 + 6 * k**2 + 4 * k + 4,
    "BF": lambda k: 3 * k**4 - 8 * k**3 + 6 * k**2,
    "CI": lambda k: k**4 + 2 * k**3 - 4 * k**2 - 2 * k + 4,
    "D": lambda k: k**4 - 4 * k**2 + 4,
    "E": lambda k: 3 * k**4 - 8 * k**3 + 6 * k**2 - 4 * k + 4,
    "G": lambda k: k**4 + 4 * k**2 - 8 * k + 4,
    "HJ": lambda k: k**4 + 2 * k**3 - 8 * k**2 + 6 * k,
}


def paper_transit_paths(configuration: str, k: int) -> int:
    """003 Table 7 (k odd) or 8 (k even): paths through a node that use both its cards."""
    table = TABLE_7 if k % 2 else TABLE_8
    four_times = next(form(k) for cases, form in table.items() if configuration in cases)
    assert four_times % 4 == 0, f"003's form for {configuration} at k={k} is not an integer"
    return four_times // 4


def measured_internal_packets(loads: list[dict]) -> dict[tuple, int]:
    """From a point's ``link_loads``: ``(node, from_card)`` → packets counted on that direction
    of the node's internal link (the load's router is named ``x,y,z/cN``)."""
    measured = {}
    for load in loads:
        if load["channel"] == "internal":
            node, card = load["router"].split("/c")
            assert load["to"]["router"] == f"{node}/c{1 - int(card)}"
            measured[tuple(map(int, node.split(","))), int(card)] = load["packets"]
    return measured
