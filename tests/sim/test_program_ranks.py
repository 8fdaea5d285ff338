"""The C++ traffic program as MPI ranks (``--ranks``): each rank owns a region of the routers
with their sources and sinks and the ranks exchange the wires between regions once per cycle.
Every count must be the one process's, cycle for cycle: the harness's sums and maxima
(packets, latencies and their histogram, hops, stall counters, faults), each router's flits
held (the watchdog's report), each link's and terminal port's flits and packets (the
program's count and the hardware link counters'); and the record of every delivered packet.
Run with 1 (the program built without MPI), 2, 3 and 4 ranks, 3 and 4 oversubscribed on 2
cores, and 2 ranks of 2 threads each: the king torus with broadcasts in the default suite (on 2
and 3 ranks), every run of every family, and larger networks, in the slow tier."""

import asyncio
import json
import shutil

import pytest

from twinnet.gen.manifest import Manifest
from twinnet.program import driver

NETWORKS = {
    "twin-torus": ["twin-torus", "--radix", "2,2,2"],
    "king-broadcast": ["king", "--kind", "KT", "--side", "3", "--broadcast"],
    "fat-tree": ["fat-tree", "--k", "2", "--n", "3"],
    "twisted": ["twisted", "--radix", "4,2", "--twist", "YX=2"],
    # larger: 128 and 64 routers
    "twin-torus-4x4x4": ["twin-torus", "--radix", "4,4,4"],
    "king-8-broadcast": ["king", "--kind", "KT", "--side", "8", "--broadcast"],
}
#: The default suite runs the king torus with broadcasts (the most kinds of traffic); the slow
#: tier every network.
DEFAULT = ("king-broadcast",)
#: (ranks, threads per rank) of a check; the default suite runs the first two.
RUNS = ((2, 1), (3, 1), (4, 1), (2, 2))


def needs_mpi():
    if driver.mpi_missing(2) or shutil.which("g++") is None:
        pytest.skip("needs MPI (apt-get install libopenmpi-dev openmpi-bin) and g++")


def build(words: list[str], folder):
    """The network generated with its traffic program, built without and with MPI."""
    from twinnet.cli.gen_cmd import network_from_words
    from twinnet.families import family_for
    from twinnet.gen.generate import generate_network

    network = network_from_words(words)
    files = generate_network(network, folder / "rtl", family=family_for(network),
                             traffic=True, stalls=True, link_counters=True,
                             harness=False)  # (the program needs no Verilog top)
    manifest = json.loads(files[-1].read_text())
    view = Manifest.of(manifest)
    return (manifest, driver.build(folder / "rtl", folder / "build", view),
            driver.build(folder / "rtl", folder / "build", view, mpi=True))


def play(executable, manifest, ranks: int, record, threads: int = 1) -> list:
    """A light load, a burst past saturation with sinks refusing every other cycle, PE 0's
    source duplicating a packet (the fault the program injects) and broadcasts where the
    routers replicate them, the drain: after every cycle the sums, the flits held and the link
    counts."""
    from twinnet.hdl.traffic import FAULTS

    scale = 1 << manifest["traffic"]["rate_bits"]
    broadcast = manifest["parameters"].get("broadcast", False)

    async def drive(harness) -> list:
        seen = []
        for name, value in (("pattern", 0), ("seed", 11), ("rate", scale // 40),
                            ("enable", 0), ("measure", 1)):
            harness.set(name, value)
        await harness.reset()
        harness.record(record)
        harness.set("enable", 1)
        for rate, refused, cycles in ((scale // 40, 0, 120), (scale // 2, scale // 4, 100),
                                      (0, 0, 120)):
            harness.set("rate", rate)
            harness.set("fault", FAULTS.index("duplicate" if refused else "none"))
            if broadcast:
                harness.set("broadcast_rate", scale // 8 if rate else 0)
            for cycle in range(cycles):
                harness.set("refuse_rate", refused * (cycle % 2))
                await harness.cycles(1)
                seen.append((harness.values(), harness.held(), harness.links(),
                             harness.link_counts()))
        harness.close_record()
        return seen

    harness = driver.ProgramHarness(executable, threads, ranks=ranks)
    try:
        return asyncio.run(drive(harness))
    finally:
        harness.close()


def check_ranks(family: str, tmp_path, runs=RUNS) -> None:
    needs_mpi()
    manifest, alone, with_mpi = build(NETWORKS[family], tmp_path)
    reference = play(alone, manifest, 1, tmp_path / "record-1")
    assert reference[-1][0]["received"] > 50  # traffic went through
    assert max(sum(held) for _, held, _, _ in reference) > 0
    assert reference[-1][3]  # the link counters counted
    expected_record = (tmp_path / "record-1").read_text()
    assert expected_record.count("\n") > 50
    assert reference[-1][0]["faults"] > 0  # a packet was duplicated
    for ranks, threads in runs:
        name = f"record-{ranks}-{threads}"
        seen = play(with_mpi, manifest, ranks, tmp_path / name, threads)
        for cycle, (expected, got) in enumerate(zip(reference, seen, strict=True)):
            assert got == expected, f"{ranks} ranks, {threads} threads: cycle {cycle} differs"
        assert (tmp_path / name).read_text() == expected_record


@pytest.mark.parametrize("family", DEFAULT)
def test_every_count_is_the_same_on_several_ranks(family, tmp_path, slow_tier):
    check_ranks(family, tmp_path, RUNS if slow_tier else RUNS[:2])


@pytest.mark.slow
@pytest.mark.parametrize("family", [f for f in NETWORKS if f not in DEFAULT])
def test_every_count_is_the_same_on_several_ranks_slow(family, tmp_path):
    check_ranks(family, tmp_path)


def test_without_mpi_more_than_one_rank_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    assert driver.mpi_missing(1) is None
    why = driver.mpi_missing(2)
    assert why.startswith("--ranks 2: needs MPI") and "\n" not in why
    assert "apt-get install libopenmpi-dev openmpi-bin" in why
