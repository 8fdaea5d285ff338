"""Generated fat trees of twin switches (and plain fat trees) on Icarus and Verilator.

Every packet's hops are compared with the reference model's DESTRO path
(:func:`twinnet.model.fat_tree.router_hops`: switch-to-switch links and, inside a twin switch,
the internal link when the input and output ports sit on different halves); every packet is
delivered exactly once, intact, in order per pair (with several VCs: by packet-hash sums).
Under the all-pairs pattern the internal-link
crossings seen in the RTL's link trace must equal 001's figures, written out here from the
formulas (not read from the model).
"""


from itertools import product

import pytest
from link_counts import assert_traced_link_packets
from tiers import default_only
from variants import (
    BUILD,
    UNIFORM_RATE,
    assert_mixed_lengths,
    mixed_lengths,
    pipeline_of,
    uniform_packets,
)

from twinnet.families import family
from twinnet.model.fat_tree import FatTreeNetworkConfig
from twinnet.sim_tb import network_sim, runner

FAMILY = family("fat-tree")

#: (k, n, split, r) per case: the acceptance matrix of (k, n) = (2, 3), (4, 2), (4, 3) with
#: the splits optimal and down-alpha and r = 1, 2, plus the plain fat tree (4, 2) of
#: monolithic 2k-port switches.
CASES = {f"ft-{k}x{n}-{split}-r{r}": (k, n, split, r)
         for k, n in ((2, 3), (4, 2), (4, 3)) for split in ("optimal", "down-alpha")
         for r in (1, 2)}
CASES["ft-4x2-plain"] = (4, 2, "plain", None)  # no internal ports
# The compact router (2 cycles per hop).
CASES["ft-4x2-optimal-r1-compact"] = (4, 2, "optimal", 1)
# Three VCs per link and internal port, taken freely (a VC field of two bits).
CASES["ft-4x2-optimal-r1-v3"] = (4, 2, "optimal", 1)
VCS = {"ft-4x2-optimal-r1-v3": 3}

#: The (case, simulator) runs of the default suite, on the 8- and 16-terminal trees: both
#: splits with r = 2 and the plain tree on Icarus, the optimal split with r = 1 on the compact
#: router on Verilator (the 2-ary 3-tree's five router kinds cost Verilator a 30 s build for a
#: 3 s simulation). The rest of the matrix (both splits with r = 1 on the split router on
#: Verilator: 30 s each; the 64-terminal trees take minutes each: 80 routers, 4,032 all-pairs
#: packets) runs in the slow tier.
DEFAULT = {("ft-2x3-down-alpha-r2", "icarus"), ("ft-2x3-optimal-r2", "icarus"),
           ("ft-4x2-plain", "icarus"), ("ft-4x2-optimal-r1-compact", "verilator")}


def config(name: str):
    k, n, split, r = CASES[name]
    return FatTreeNetworkConfig.from_dict({"k": k, "n": n, "split": split, "internal_ports": r,
                                           "vcs": VCS.get(name, 1),
                                           "pipeline": pipeline_of(name)})


def simulate(name: str, simulator: str, tests: dict) -> tuple[dict, dict]:
    network = config(name)
    build = BUILD / f"{name}-{simulator}"
    results = network_sim.simulate(network, simulator, build, tests, family=FAMILY)
    manifest = network_sim.manifest_of(build)
    return results, manifest


def expected_crossings(k: int, n: int, split: str, stage: int) -> int:
    """001 §5.3: with the optimal split, k**(n+1) / 2 crossings per twin switch at every stage
    below the last and none at the last. With all down ports on α every forward and every
    backward path crosses, and 001 Table 1 counts k**(n+1) - k**(s+2) of each per stage-s
    switch: 2 * (64 - 16) = 96 at stage 0 of a 4-ary 2-tree; the last stage has no up ports
    in use and no crossings."""
    if stage == n - 1:
        return 0
    if split == "optimal":
        return k ** (n + 1) // 2
    assert split == "down-alpha"
    return 2 * (k ** (n + 1) - k ** (stage + 2))


@pytest.mark.parametrize("name, simulator",
                         default_only(product(sorted(CASES), runner.SIMULATORS), DEFAULT),
                         indirect=["simulator"])
def test_every_hop_is_destro(name, simulator):
    vcs = VCS.get(name, 1)
    # Several VCs: a load at which packets meet, so that VCs past the lowest carry hops too
    # (fewer packets: they come faster).
    rate, packets = ((UNIFORM_RATE, uniform_packets(simulator)) if vcs == 1
                     else (0.3, uniform_packets(simulator) // 3))
    results, manifest = simulate(name, simulator, {
        "uniform_traffic": {"packets": packets, "rate": rate,
                            "lengths": mixed_lengths(config(name))},
        "malformed_dropped": {"packets": 400, "malformed": 40},
        "all_pairs": {}})
    uniform = results["uniform_traffic"]
    assert uniform["packets"] == packets and uniform["hops_checked"]
    assert_mixed_lengths(uniform["injected_lengths"], config(name))
    used = sorted(map(int, uniform["hops_by_vc"]))
    assert set(used) <= set(range(vcs)) and (vcs == 1) == (used == [0]), uniform["hops_by_vc"]
    assert results["malformed_dropped"]["drop_count"] == 40
    k, n, split, _ = CASES[name]
    pairs = results["all_pairs"]
    terminals = k ** n
    assert pairs["packets"] == terminals * (terminals - 1) and pairs["hops_checked"]
    assert_traced_link_packets(pairs["link_heads"], FAMILY, config(name), manifest)
    crossings = FAMILY.internal_crossings(manifest, pairs["link_heads"])
    if split == "plain":
        assert crossings is None
        return
    if (k, n, split) == (4, 2, "down-alpha"):
        assert expected_crossings(k, n, split, 0) == 96  # the figure of 001 §5.3
    assert len(crossings) == n * k ** (n - 1)  # every twin switch
    for stage in range(n):
        seen = {entry["crossings"] for entry in crossings if entry["stage"] == stage}
        assert seen == {expected_crossings(k, n, split, stage)}, (stage, seen)
