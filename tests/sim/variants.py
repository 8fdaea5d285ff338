"""The router microarchitecture the network tests build.

Every network test builds its networks with :data:`PIPELINE` cycles per hop: 3 (the split
router, the default) unless ``TWINNET_PIPELINE=2`` asks for the compact router, so that
``TWINNET_PIPELINE=2 pytest --slow tests/sim`` runs every network test on it. The
default suite also runs a few cases of each family on the compact router: the cases named
``…-compact``.
"""

import json
import os
from pathlib import Path

from twinnet.model.sizes import check_pipeline

_GIVEN = os.environ.get("TWINNET_PIPELINE", "3").strip()
PIPELINE = check_pipeline("TWINNET_PIPELINE", int(_GIVEN) if _GIVEN.isdigit() else _GIVEN)

#: Where the cases build: one folder per pipeline, so that a build never serves the other.
BUILD = Path(__file__).resolve().parents[2] / "build" / (
    "sim" if PIPELINE == 3 else f"sim-p{PIPELINE}")


#: Packets per PE per cycle of the every-hop tests' uniform traffic under deterministic
#: routing: 0.2 flits per PE and cycle with 4-flit packets, below every tested network's
#: saturation, so that packets meet without queueing for long.
UNIFORM_RATE = 0.05


def uniform_packets(simulator: str) -> int:
    """The uniform packets of a network's every-hop test: 1,000 on Verilator, 500 on Icarus
    (which runs the same networks' hops about ten times slower). Every pair's path is checked
    by the all-pairs part of the same tests; these packets add traffic that meets."""
    return 500 if simulator == "icarus" else 1000


def pipeline_of(case: str) -> int:
    """The pipeline of a named case: 2 for ``…-compact``, else :data:`PIPELINE`."""
    return 2 if case.endswith("-compact") else PIPELINE


def sim_through_cli(argv: list[str], capsys) -> dict:
    """Run ``twinnet`` with ``argv`` (a ``sim … --json`` command): it exits 0 (every check
    passed, no deadlock) and its harness found no error; returns its JSON."""
    from twinnet.cli.main import main

    status = main(argv)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    data = json.loads(captured.out)
    assert not data["results"]["errors"]
    return data


def mixed_lengths(network) -> list[list]:
    """The every-hop tests' packet lengths, ``[[lo, hi, weight], …]`` as the benches take
    them: half the packets of one flit, half of 2 to the network's longest (uniform), the
    shape of request and reply traffic."""
    longest = network.max_packet_length
    return [[1, 1, 1]] + ([[2, longest, 1]] if longest > 1 else [])


def assert_mixed_lengths(lengths: dict, network) -> None:
    """``lengths`` (length → packets, as a run reports them) holds every length of
    :func:`mixed_lengths`, and single-flit packets are half within 3 standard deviations."""
    counts = {int(length): count for length, count in lengths.items()}
    assert set(counts) == set(range(1, network.max_packet_length + 1)), counts
    total = sum(counts.values())
    share = 0.5 if network.max_packet_length > 1 else 1.0
    assert abs(counts[1] / total - share) <= 3 * (share * (1 - share) / total) ** 0.5, counts
