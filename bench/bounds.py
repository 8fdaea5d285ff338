"""The channel-load bound of the routing a network was built with, for the benches."""

from twinnet.families import family_for
from twinnet.model.traffic import channel_loads


def channel_load_bound(network, pattern: str = "uniform") -> float:
    """One over the largest expected channel load of the network's model routes when every
    terminal offers one packet per cycle under ``pattern`` (deterministic routing): the
    saturation bound in flits per PE per cycle, before the PE port's own cap of 1."""
    family = family_for(network)

    def paths(source, destination):
        return [(router, port) for router, port, _ in family.hops(network, source,
                                                                   destination)]

    loads = channel_loads(paths, family.terminal_count(network), pattern)
    return 1 / max(loads.values())
