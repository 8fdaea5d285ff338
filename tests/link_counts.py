"""The packets every link carries under all-pairs, from the reference model (one definition
for every family's network tests)."""

from collections import Counter


def expected_link_packets(family, network, manifest: dict) -> dict[int, int]:
    """Link index → packets crossing it when every terminal sends one packet to every other,
    each along the model's path (:meth:`twinnet.families.Family.hops`; deterministic
    routing)."""
    index = {(link["from"]["router"], link["from"]["port"]): link["index"]
             for link in manifest["links"]}
    counts = Counter({link["index"]: 0 for link in manifest["links"]})
    terminals = family.terminal_count(network)
    for source in range(terminals):
        for destination in range(terminals):
            if source != destination:
                for router, port, _ in family.hops(network, source, destination):
                    counts[index[router, port]] += 1
    return dict(counts)


def assert_link_packets(loads: list[dict], family, network, manifest: dict) -> None:
    """An all-pairs point's measured ``link_loads`` carry the model's packets on every link,
    and every terminal injected and ejected one packet per other terminal."""
    for load in loads:  # each VC's counts add up to the link's
        for name in ("flits", "packets", "blocked"):
            assert sum(row[name] for row in load["vc"]) == load[name]
    measured = {load["link"]: load["packets"] for load in loads if "link" in load}
    assert measured == expected_link_packets(family, network, manifest)
    terminals = family.terminal_count(network)
    ends = [load for load in loads if load["channel"] in ("injection", "ejection")]
    assert len(ends) == 2 * terminals
    assert all(load["packets"] == terminals - 1 for load in ends)
    assert all(load["flits"] == (terminals - 1) * network.max_packet_length for load in ends)


def assert_traced_link_packets(link_heads: dict, family, network, manifest: dict) -> None:
    """The head flits the per-hop bench saw on each link under all-pairs (``link_heads``,
    from the link trace) are the model's packets on every link."""
    measured = {int(link): heads for link, heads in link_heads.items()}
    expected = expected_link_packets(family, network, manifest)
    assert measured == {link: packets for link, packets in expected.items() if packets}
