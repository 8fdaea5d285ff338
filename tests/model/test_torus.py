"""k-ary n-cubes and plain DOR, against hand calculation."""

import itertools

import pytest

from twinnet.model.torus import CubeTopology, dimension_name, ring_direction, ring_distance


@pytest.mark.parametrize("c, d, k, sign", [
    (0, 1, 4, +1), (0, 3, 4, -1), (0, 2, 4, +1), (3, 1, 4, +1), (1, 3, 4, +1),
    (0, 2, 5, +1), (0, 3, 5, -1), (4, 0, 5, +1), (2, 2, 5, +1),
])
def test_ring_direction_with_positive_ties(c, d, k, sign):
    assert ring_direction(c, d, k) == sign


@pytest.mark.parametrize("wrap", [True, False])
def test_dor_paths_are_minimal_and_dimension_ordered(wrap):
    cube = CubeTopology((4, 3, 5), wrap=wrap)
    for a, b in itertools.product(cube.nodes(), repeat=2):
        hops = cube.dor_path(a, b)
        assert len(hops) == cube.distance(a, b)
        dims = [dim for _, dim, _ in hops]
        assert dims == sorted(dims)
        if hops:
            node, dim, sign = hops[-1]
            assert cube.neighbor(node, dim, sign) == b


def test_mesh_has_no_wrap_and_distance_is_manhattan():
    mesh = CubeTopology((4, 4), wrap=False)
    assert mesh.neighbor((3, 0), 0, +1) is None
    assert mesh.distance((0, 0), (3, 3)) == 6
    assert CubeTopology((4, 4)).distance((0, 0), (3, 3)) == 2
    assert ring_distance(1, 6, 7) == 2


def test_dimension_names():
    assert [dimension_name(i) for i in range(5)] == ["X", "Y", "Z", "D3", "D4"]


def test_bad_radix():
    with pytest.raises(ValueError, match=r"radix\[1\] must be an integer >= 2, not 1"):
        CubeTopology((4, 1))
