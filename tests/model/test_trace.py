"""Packet traces (:mod:`twinnet.model.trace`): reading checks every line, writing and reading
round-trip, and traces made from patterns follow them."""

import random

import pytest

from twinnet.model.trace import (
    MAX_TRACE_CYCLE,
    RateError,
    TraceError,
    TracePacket,
    generate_trace,
    read_trace,
    trace_text,
)
from twinnet.model.traffic import LengthMix, fixed_destination


def test_a_trace_round_trips(tmp_path):
    packets = [TracePacket(0, 1, 2, 1), TracePacket(0, 3, 0, 5), TracePacket(7, 2, 2, 2)]
    path = tmp_path / "t.trace"
    path.write_text(trace_text(packets, comment="by hand"))
    assert read_trace(path, terminals=4, longest=5) == packets
    assert path.read_text().startswith("# twinnet packet trace")


def test_comments_and_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("# a workload\n\n0 0 1 3   # a comment\n\t4\t1\t0\t1\n")
    assert read_trace(path, 2, 4) == [TracePacket(0, 0, 1, 3), TracePacket(4, 1, 0, 1)]


@pytest.mark.parametrize("line, message", [
    ("0 1 2", r"t\.trace:3: 3 fields"),
    ("0 1 2 3 4", r"t\.trace:3: 5 fields"),
    ("0 1 x 3", r"t\.trace:3: 'x' is not an integer"),
    ("0 1 2.5 3", r"t\.trace:3: '2\.5' is not an integer"),
    ("5 1_0 2 3", r"t\.trace:3: '1_0' is not an integer"),
    ("5 \u0663 2 3", r"t\.trace:3: '\u0663' is not an integer"),
    ("-1 1 2 3", r"t\.trace:3: cycle -1: must be from 0 to 999,999"),
    ("1000000 1 2 3", r"t\.trace:3: cycle 1000000: must be from 0 to 999,999"),
    ("4 1 2 3", r"t\.trace:3: cycle 4 comes after cycle 5"),
    ("5 4 2 3", r"t\.trace:3: source 4 is not a PE of this network: PEs are 0 to 3"),
    ("5 1 9 3", r"t\.trace:3: destination 9 is not a PE"),
    ("5 1 2 0", r"t\.trace:3: length 0 flits: must be from 1 to 5"),
    ("5 1 2 6", r"t\.trace:3: length 6 flits: must be from 1 to 5"),
])
def test_a_bad_line_names_the_file_and_line(tmp_path, line, message):
    path = tmp_path / "t.trace"
    path.write_text(f"# header\n5 0 1 1\n{line}\n6 0 1 1\n")
    with pytest.raises(TraceError, match=message):
        read_trace(path, terminals=4, longest=5)


def test_an_empty_or_missing_trace_is_an_error(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("# nothing\n")
    with pytest.raises(TraceError, match="holds no packet"):
        read_trace(path, 4, 4)
    with pytest.raises(TraceError, match="cannot be read"):
        read_trace(tmp_path / "missing.trace", 4, 4)


def test_generated_uniform_traces_follow_the_rate_mix_and_pattern():
    """Uniform: no PE sends to itself, every other is reached; the packets per cycle are the
    rate times the PEs, and the lengths the mix's shares, within 3 standard deviations."""
    mix = LengthMix.parse("1,5", "1,3")
    packets = generate_trace("uniform", 16, 0.05, 4000, mix, seed=3)
    assert len(packets) == 4000
    assert all(p.source != p.destination for p in packets)
    assert {p.destination for p in packets} == set(range(16))
    assert [p.cycle for p in packets] == sorted(p.cycle for p in packets)
    cycles = packets[-1].cycle + 1
    offered = 16 * cycles * 0.05
    assert abs(4000 - offered) <= 3 * (offered * 0.95) ** 0.5
    ones = sum(p.length == 1 for p in packets) / 4000
    assert abs(ones - 0.25) <= 3 * (0.25 * 0.75 / 4000) ** 0.5


def test_generated_fixed_pattern_traces_send_to_the_pattern():
    packets = generate_trace("transpose", 16, 0.1, 300, LengthMix.fixed(4), seed=1)
    for p in packets:
        assert p.destination == fixed_destination("transpose", 16, p.source)
    with pytest.raises(ValueError, match="all-pairs"):
        generate_trace("all-pairs", 16, 0.1, 10, LengthMix.fixed(4))


def test_length_mix_cuts_are_cumulative_shares():
    """By hand: 1 and 5 weighted 1:3 cut 65,536 draws at a quarter; the classes the mix does
    not use repeat its last and are never drawn; three classes cut at 1/6 and 3/6."""
    assert LengthMix.parse("1,5", "1,3").cuts(65536) == [
        (1, 1, 16384), (5, 5, 65536), (5, 5, 65536), (5, 5, 65536)]
    assert LengthMix.parse("1,2-3,4", "1,2,3").cuts(600) == [
        (1, 1, 100), (2, 3, 300), (4, 4, 600), (4, 4, 600)]


def test_length_mix_reads_and_checks_its_text():
    mix = LengthMix.parse("1,4-8", "3,1")
    assert mix.classes == ((1, 1), (4, 8)) and mix.weights == (3.0, 1.0)
    assert mix.mean() == pytest.approx(0.75 * 1 + 0.25 * 6)
    assert mix.text() == ("1,4-8", "3,1")
    for lengths, weights, message in [("", None, "not a length"), ("8-4", None, "lo <= hi"),
                                      ("1,2,3,4,5", None, "1 to 4"), ("1,2", "1", "2 packet"),
                                      ("1", "-1", "at least 0"), ("1,2", "0,0", "all 0")]:
        with pytest.raises(ValueError, match=message):
            LengthMix.parse(lengths, weights)
    rng = random.Random(1)
    assert {mix.draw(rng) for _ in range(400)} == {1, 4, 5, 6, 7, 8}


def test_a_rate_too_low_for_the_trace_cycles_is_refused_at_once():
    """1,000 packets on 16 PEs at 1e-5 per PE per cycle would take about 6 million cycles,
    past the last cycle a trace may have: refused, not drawn cycle by cycle."""
    assert MAX_TRACE_CYCLE < 1000 / (16 * 1e-5)
    with pytest.raises(RateError, match="at least about"):
        generate_trace("uniform", 16, 1e-5, 1000, LengthMix.fixed(4))
    with pytest.raises(RateError, match="at least about"):
        generate_trace("uniform", 16, 5e-324, 1, LengthMix.fixed(4))
