"""Family plug-ins: the terminal digits the traffic harness draws agree with the codec."""

import pytest

from twinnet import families
from twinnet.model.fat_tree import FatTreeNetworkConfig
from twinnet.model.twin_network import TwinNetworkConfig

NETWORKS = [
    ("twin-torus", TwinNetworkConfig.from_dict({"radices": [4, 3, 2]})),
    ("twin-torus", TwinNetworkConfig.from_dict({"radices": [3, 3, 2, 2],
                                                "configuration": "C_Best"})),
    ("twin-torus", TwinNetworkConfig.from_dict({"radices": [5, 3], "configuration": "torus"})),
    ("fat-tree", FatTreeNetworkConfig.from_dict({"k": 4, "n": 3})),
    ("fat-tree", FatTreeNetworkConfig.from_dict({"k": 2, "n": 3, "split": "plain"})),
]


@pytest.mark.parametrize("family, network", NETWORKS, ids=lambda v: getattr(v, "name", v))
def test_terminal_digits_number_the_terminals_as_the_codec_does(family, network):
    """Terminal t written in the mixed radix of the digits (least significant first) gives
    exactly the route fields of ``destination(t)``."""
    plugin = families.family(family)
    digits = plugin.terminal_digits(network)
    size = 1
    for _, radix in digits:
        size *= radix
    assert size == plugin.terminal_count(network)
    for terminal in range(size):
        fields, rest = {}, terminal
        for field, radix in digits:
            rest, fields[field] = divmod(rest, radix)
        assert fields == plugin.destination(network, terminal)
