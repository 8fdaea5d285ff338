"""The plain torus (configuration ``torus``: one router per node) in the twin-torus model.

Expected paths come from :class:`twinnet.model.torus.CubeTopology`'s own DOR and from 003 §6.3.1
and §6.3.2 (Alg. 3–6) read for a node without an internal link; the deadlock facts are hand
arguments.
"""

import pytest

from twinnet.model.twin import INTERNAL, PE_PORT, Port, TwinTorusTopology
from twinnet.model.twin_analysis import deadlock_check
from twinnet.model.twin_routing import path


def test_one_card_and_one_pe_per_node():
    config = TwinTorusTopology((16, 8), "torus", "bubble")
    assert config.card_count == 1 and config.configuration.card_count == 1
    assert config.pe_count == config.router_count == 128 == len(list(config.cards()))
    assert config.name == "torus2_16x8_bubble"
    assert config.configuration.split_dims == ()
    assert [p for p, _ in config.card_links(next(config.cards()))] == [
        Port.external(dim, sign) for dim in range(2) for sign in (+1, -1)]
    with pytest.raises(ValueError, match=r"pe must be one of 0, not 1"):
        config.pe((0, 0), 1)
    assert config.pe_index(config.pe((2, 3), 0)) == 2 * 8 + 3


@pytest.mark.parametrize("radices, mode", [((4, 4), "vc"), ((5, 3), "bubble"),
                                           ((4, 3, 2), "vc"), ((6, 6), "none")])
def test_every_path_is_plain_dor_with_the_papers_vcs_and_bubbles(radices, mode):
    config = TwinTorusTopology(radices, "torus", mode)
    cube = config.cube
    for source in config.pes():
        for destination in config.pes():
            hops = path(config, source, destination)
            expected = cube.dor_path(source.node, destination.node)
            assert [(h.card.node, h.out_port) for h in hops[:-1]] == [
                (node, Port.external(dim, sign)) for node, dim, sign in expected]
            assert hops[-1].out_port == PE_PORT and hops[-1].card.node == destination.node
            assert all(h.out_port != INTERNAL for h in hops)
            previous_dim = None
            for hop, (node, dim, _) in zip(hops, expected):
                if mode == "vc":  # 003 Alg. 4: up (0) when the destination digit is above ours
                    assert hop.vc == (0 if destination.node[dim] > node[dim] else 1)
                else:
                    assert hop.vc == 0
                # 003 Alg. 5: injection and every change of dimension enter a ring.
                assert hop.bubble == (mode == "bubble" and dim != previous_dim)
                previous_dim = dim


def test_deadlock_facts():
    # On a ring of 4, minimal DOR paths of 2 hops chain the four links of a direction: a cycle.
    assert not deadlock_check(TwinTorusTopology((4, 4), "torus", "none")).deadlock_free
    # On rings of 3 every path takes at most one hop per dimension, and DOR never returns to a
    # lower dimension: no cycle even on one VC.
    assert deadlock_check(TwinTorusTopology((3, 3), "torus", "none")).deadlock_free
    for k in range(3, 7):
        assert deadlock_check(TwinTorusTopology((k, k), "torus", "vc")).deadlock_free
        assert deadlock_check(TwinTorusTopology((k, k), "torus", "bubble")).deadlock_free


def test_configuration_text_and_errors():
    assert TwinTorusTopology((4, 4), "TORUS").configuration.label == "torus"
    with pytest.raises(ValueError, match=r"must hold exactly n=2 of the 4 external ports "
                                         r"\(or all 4 for a plain torus\), not 3"):
        TwinTorusTopology((4, 4), "X+,Y+,X-")
