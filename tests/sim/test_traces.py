"""Traces replayed on both engines (``twinnet sim --trace``): every packet checked once and its
times written out; at zero load each packet's latency is the hand calculation; a trace
written by ``twinnet trace`` round-trips."""

import csv
import json

import pytest

from twinnet.cli.main import main

#: A 4x4 torus (PE = 4 x + y) with packets of up to 5 flits.
NETWORK = ["torus", "--radix", "4,4", "--max-packet-length", "5"]
#: By hand, at zero load (one packet in the network at a time): (cycle, source, destination,
#: length, links between routers). A torus ring of 4 is crossed the short way round (a tie of
#: two hops goes the positive way): PE 0 (0,0) -> 15 (3,3): 1 + 1 links; 3 (0,3) -> 12 (3,0):
#: 1 + 1; 5 (1,1) -> 10 (2,2): 1 + 1; 2 (0,2) -> 2: 0, the router's own PE; 0 -> 10 (2,2):
#: 2 + 2; 6 (1,2) -> 7 (1,3): 0 + 1.
HAND = [(0, 0, 15, 1, 2), (100, 3, 12, 2, 2), (200, 5, 10, 5, 2), (300, 2, 2, 3, 0),
        (400, 0, 10, 5, 4), (500, 6, 7, 2, 1)]


def hand_trace(tmp_path):
    path = tmp_path / "hand.trace"
    path.write_text("# 1-, 2-, 3- and 5-flit packets, one at a time\n" + "".join(
        f"{cycle} {source} {destination} {length}\n"
        for cycle, source, destination, length, _ in HAND))
    return path


@pytest.mark.parametrize("check, simulator", [("end-to-end", "verilator"), ("hops", "icarus")],
                         indirect=["simulator"])
def test_zero_load_latency_of_each_packet_is_the_hand_calculation(tmp_path, capsys, check,
                                                                  simulator):
    """The split router takes 3 cycles from a flit entering it at a PE port to that flit
    leaving it, and 2 from a link (its bypass; docs/router.md), so a packet crossing H links
    passes H + 1 routers: its head leaves 3 + 2 H cycles after it was accepted, and its tail
    L - 1 cycles after its head (one flit per cycle): network latency 3 + 2 H + L - 1. Its
    hops are H; each packet once."""
    out = tmp_path / "times.csv"
    status = main(["sim", *NETWORK, "--trace", str(hand_trace(tmp_path)), "--check", check,
                   "--simulator", simulator, "--latencies", str(out), "--json",
                   "--out", str(tmp_path / "build")])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    rows = list(csv.DictReader(out.open()))
    assert [int(row["packet"]) for row in rows] == list(range(len(HAND)))
    for row, (cycle, source, destination, length, links) in zip(rows, HAND):
        assert (int(row["cycle"]), int(row["source"]), int(row["destination"]),
                int(row["length"])) == (cycle, source, destination, length)
        assert int(row["hops"]) == links
        assert int(row["network_latency"]) == 3 + 2 * links + length - 1, row
        assert int(row["tail_out"]) - int(row["head_out"]) == length - 1
        assert int(row["latency"]) == int(row["tail_out"]) - cycle
    results = json.loads(captured.out)["results"]
    assert results["packets"] == results["trace_packets"] == len(HAND)


def test_a_written_trace_round_trips_on_both_engines(tmp_path, capsys):
    """``twinnet trace`` writes 600 uniform packets of 1 or 5 flits; replayed in hardware and
    hop by hop, every packet arrives once, with the trace's source, destination and length,
    no earlier than it was created, and the JSON times list has one entry per packet."""
    trace = tmp_path / "u.trace"
    assert main(["trace", *NETWORK, "--packet-lengths", "1,5", "--rate", "0.04",
                 "--packets", "600", "--seed", "4", "--out", str(trace)]) == 0
    lines = [line.split() for line in trace.read_text().splitlines()
             if not line.startswith("#")]
    assert len(lines) == 600 and {line[3] for line in lines} == {"1", "5"}
    for check in ("end-to-end", "hops"):
        out = tmp_path / f"{check}.json"
        status = main(["sim", *NETWORK, "--trace", str(trace), "--check", check,
                       "--no-trace", "--latencies", str(out), "--out", str(tmp_path / "b")])
        assert status == 0, capsys.readouterr().err
        times = json.loads(out.read_text())
        assert len(times) == 600
        for entry, line in zip(times, lines):
            assert [entry["cycle"], entry["source"], entry["destination"],
                    entry["length"]] == [int(word) for word in line]
            assert entry["injected"] >= entry["cycle"] and entry["tail_out"] > entry["injected"]
    # Only the trace, the two files of times and the build folder: nothing else beside them.
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "b", "end-to-end.json", "hops.json", "u.trace"]


def test_a_bad_trace_is_one_line_before_anything_is_built(tmp_path, capsys):
    bad = tmp_path / "bad.trace"
    bad.write_text("0 0 1 2\n5 0 99 2\n")
    assert main(["sim", *NETWORK, "--trace", str(bad), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"twinnet: --trace {bad}:2: destination 99 is not a PE of this network: "
                   "PEs are 0 to 15"]
    assert not (tmp_path / "b").exists()
    assert main(["sim", *NETWORK, "--trace", str(bad), "--rate", "0.1"]) == 2
    assert "--rate cannot be given with it" in capsys.readouterr().err
