"""The traffic source and sink of :mod:`twinnet.hdl.traffic` in Amaranth's simulator.

A 16-terminal format with one route field ``dest`` (radix 16) and packets of up to 4 flits.
The sink is fed packets built here by hand (the expected counters are hand counts); the
source's packets are decoded here and compared with the patterns of
:mod:`twinnet.model.traffic` and the mix of lengths asked for.
"""


from amaranth.hdl import ClockDomain, Module, unsigned
from amaranth.lib import data
from amaranth.sim import Simulator

from twinnet.hdl.traffic import (
    TrafficFormat,
    TrafficSink,
    TrafficSource,
    body_word,
    packet_hash,
    terminal_constants,
)
from twinnet.model.traffic import PATTERNS, LengthMix, fixed_destination

TERMINALS, LENGTH = 16, 4
HEAD = data.StructLayout({"route": data.StructLayout({"dest": unsigned(4)}),
                          "tag": unsigned(0), "source": unsigned(4), "payload": unsigned(24)})
FORMAT = TrafficFormat(HEAD, [(("dest",), TERMINALS)], TERMINALS, LENGTH)
#: The head's payload: the sequence number, the measured bit, the length less one (2 bits).
SEQ_BITS = 21


def packet(source, dest, seq, *, measured=0, length=LENGTH, said=None):
    """A packet's flits; its head says it has ``said`` flits (default ``length``)."""
    said = length if said is None else said
    head = dest | source << 4 | (seq | measured << SEQ_BITS | (said - 1) << (SEQ_BITS + 1)) << 8
    return [head] + [body_word(source, seq, i, 32) for i in range(1, length)]


def simulate(component, bench, constants) -> None:
    """Tie ``component``'s constants to ``constants`` (as the harness does), reset it for two
    cycles, then run ``bench(ctx)``."""
    top = Module()
    top.submodules.dut = component
    top.domains.sync = domain = ClockDomain("sync")

    async def reset_then_bench(ctx):
        ctx.set(component.constants, component.constants.shape().const(constants))
        ctx.set(domain.rst, 1)
        await ctx.delay(2e-6)  # two clock periods (a tick would stop at the reset)
        ctx.set(domain.rst, 0)
        await bench(ctx)

    sim = Simulator(top)
    sim.add_clock(1e-6, domain="sync")
    sim.add_testbench(reset_then_bench)
    sim.run()


def run_sink(flit_lists, own=5, headless=(), aborted=(), fmt=FORMAT):
    """Feed the sink these flit lists one after the other, an idle cycle between them, first
    and last marked on each list's ends (no first mark on the lists whose index is in
    ``headless``, the abort mark on the tails of those in ``aborted``); return its
    counters."""
    sink = TrafficSink(fmt)
    counters = {}

    async def bench(ctx):
        ctx.set(sink.measure, 1)
        now = 100
        for number, flits in enumerate(flit_lists):
            for index, word in enumerate(flits):
                ctx.set(sink.now, now)
                ctx.set(sink.valid, 1)
                ctx.set(sink.first, index == 0 and number not in headless)
                ctx.set(sink.last, index == len(flits) - 1)
                ctx.set(sink.cut_short, index == len(flits) - 1 and number in aborted)
                ctx.set(sink.data, word)
                await ctx.tick()
                now += 1
            ctx.set(sink.valid, 0)
            await ctx.tick()
            now += 1
        for name in ("received", "received_measured", "wrong_destination", "out_of_order",
                     "corrupt", "framing", "aborted", "ejected_time_sum", "received_hash"):
            counters[name] = ctx.get(getattr(sink, name))
        if fmt.broadcast:
            counters["copies"] = ctx.get(sink.copies)

    simulate(sink, bench, {"own": {"dest": own}})
    return counters


def test_sink_counts_good_packets_of_every_length_and_their_ejection_times():
    """Packets of 4, 1, 2 and 3 flits: each received, intact, framed as its head says; the
    heads of the measured ones were ejected at cycles 100, 105 (after 4 flits and an idle
    cycle) and 110 (1 + 1, 2 + 1 later): their times sum to 315."""
    counters = run_sink([packet(3, 5, 0, measured=1), packet(3, 5, 1, measured=1, length=1),
                         packet(3, 5, 2, length=2), packet(3, 5, 3, measured=1, length=3)])
    assert counters["received"] == 4 and counters["received_measured"] == 3
    assert counters["ejected_time_sum"] == 100 + 105 + 110
    assert [counters[n] for n in ("wrong_destination", "out_of_order", "corrupt",
                                  "framing", "aborted")] == [0, 0, 0, 0, 0]


def test_sink_counts_every_kind_of_error():
    duplicate = packet(3, 5, 0)
    corrupted = packet(4, 5, 0)
    corrupted[3] ^= 1
    counters = run_sink([
        packet(3, 5, 0), duplicate,          # the same sequence number twice: out of order
        packet(2, 5, 1),                     # source 2's first packet must be number 0
        packet(6, 9, 0),                     # for terminal 9, not 5
        corrupted,                           # a body flit changed
        packet(7, 5, 0)[1:],                 # no head: three flits outside a packet
        packet(8, 5, 0, length=2, said=3),   # its tail comes a flit early
        packet(8, 5, 1, length=1, said=2),   # a one-flit packet whose head says two
        packet(9, 5, 0, length=3),           # cut short on its way: abort on its tail
    ], headless={5}, aborted={8})
    assert counters["out_of_order"] == 2
    assert counters["wrong_destination"] == 1
    assert counters["corrupt"] == 1
    assert counters["framing"] == 3 + 1 + 1
    assert counters["aborted"] == 1
    assert counters["received"] == 7


#: A format with broadcasts: the route's ``broadcast`` bit (bit 4 of the head) marks one.
BROADCAST_HEAD = data.StructLayout({
    "route": data.StructLayout({"dest": unsigned(4), "broadcast": unsigned(1)}),
    "source": unsigned(4), "payload": unsigned(23)})  # 32 bits, as FORMAT's
BROADCAST_FORMAT = TrafficFormat(BROADCAST_HEAD, [(("dest",), TERMINALS)], TERMINALS, LENGTH)


def broadcast_packet(source, seq, *, dest=0, broadcast=1):
    head = dest | broadcast << 4 | source << 5 | (seq | (LENGTH - 1) << 21) << 9
    return [head] + [body_word(source, seq, i, 32) for i in range(1, LENGTH)]


def test_sink_checks_each_broadcast_copy_in_its_own_sequence():
    """Copies are numbered per source apart from the unicast packets and counted on
    ``copies``: a copy lost (a number skipped) or repeated is out of order; the route's
    other fields do not matter (no PE field here); unicast packets go on as before."""
    assert BROADCAST_FORMAT.broadcast and not FORMAT.broadcast
    counters = run_sink([
        broadcast_packet(3, 0, dest=9), broadcast_packet(3, 1),  # in order
        packet_of_broadcast_format(3, 5, 0),                     # unicast number 0: in order
        broadcast_packet(3, 1),                                  # repeated: out of order
        broadcast_packet(3, 3),                                  # 2 lost: out of order
        broadcast_packet(4, 0),                                  # another source's first
    ], fmt=BROADCAST_FORMAT)
    assert counters["copies"] == 5 and counters["received"] == 1
    assert counters["out_of_order"] == 2
    assert [counters[n] for n in ("wrong_destination", "corrupt", "framing")] == [0, 0, 0]


def packet_of_broadcast_format(source, dest, seq):
    return broadcast_packet(source, seq, dest=dest, broadcast=0)


def push_back(refuse_rate: int, stall_start: int, stall_max: int, cycles: int = 4000):
    """Offer the sink back-to-back packets from terminal 3 for ``cycles`` cycles, a flit
    moving only when the sink is ready; return (the ready trace, its counters)."""
    sink = TrafficSink(FORMAT)
    trace, counters = [], {}

    async def bench(ctx):
        ctx.set(sink.seed, 7)
        ctx.set(sink.refuse_rate, refuse_rate)
        ctx.set(sink.stall_start, stall_start)
        ctx.set(sink.stall_max, stall_max)
        flits = [(seq, index, word) for seq in range(cycles)
                 for index, word in enumerate(packet(3, 5, seq))]
        position = 0
        for _ in range(cycles):
            seq, index, word = flits[position]
            ctx.set(sink.valid, 1)
            ctx.set(sink.first, index == 0)
            ctx.set(sink.last, index == LENGTH - 1)
            ctx.set(sink.data, word)
            ready = ctx.get(sink.ready)
            trace.append(ready)
            position += ready
            await ctx.tick()
        ctx.set(sink.valid, 0)
        for name in ("received", "refused", "wrong_destination", "out_of_order", "corrupt",
                     "framing"):
            counters[name] = ctx.get(getattr(sink, name))
        counters["moved"] = position

    simulate(sink, bench, {"own": {"dest": 5}, "terminal": 5})
    return trace, counters


def longest_refusal(trace) -> int:
    longest = run = 0
    for ready in trace:
        run = 0 if ready else run + 1
        longest = max(longest, run)
    return longest


def test_sink_pushes_back_at_its_rate_and_in_bursts():
    """Refusing with probability 1/2 each cycle, the sink takes about half the flits offered
    (4,000 trials: the standard deviation is 0.008); every refusal is counted; what it takes
    is checked as usual (no error, every whole packet received). Stall bursts of 1 to 8
    cycles started with probability 1/16 stop it for p L / (1 + p L) of the cycles, L = 4.5
    the mean burst: 0.22, and never for more than 8 cycles in a row."""
    trace, counters = push_back(refuse_rate=1 << 15, stall_start=0, stall_max=0)
    assert abs(sum(trace) / len(trace) - 0.5) < 0.04
    assert counters["refused"] == len(trace) - sum(trace)
    assert counters["received"] == counters["moved"] // LENGTH
    assert [counters[n] for n in ("wrong_destination", "out_of_order", "corrupt",
                                  "framing")] == [0, 0, 0, 0]
    trace, counters = push_back(refuse_rate=0, stall_start=1 << 12, stall_max=8)
    assert abs(1 - sum(trace) / len(trace) - 4.5 / 16 / (1 + 4.5 / 16)) < 0.04
    assert longest_refusal(trace) <= 8
    assert longest_refusal(trace) >= 5  # bursts of the longer lengths do occur
    assert counters["refused"] == len(trace) - sum(trace)
    # Both controls at 0: the sink takes every flit.
    trace, counters = push_back(refuse_rate=0, stall_start=0, stall_max=0, cycles=200)
    assert all(trace) and counters["refused"] == 0


def test_unordered_sink_sums_packet_hashes_instead_of_checking_order():
    """Without order (adaptive routing) packets may arrive in any order: the sink counts no
    error and sums the hash of (source, itself, sequence) of every packet, which equals the
    sum over the packets sent exactly when each arrived once (hashes computed here)."""
    fmt = TrafficFormat(HEAD, [(("dest",), TERMINALS)], TERMINALS, LENGTH, ordered=False)
    order = [2, 0, 1, 4, 3, 5, 9, 6, 8, 7]
    counters = run_sink([packet(3, 5, seq) for seq in order], fmt=fmt)
    sent = sum(packet_hash(3, 5, seq) for seq in range(10)) % (1 << 32)
    assert counters["out_of_order"] == 0 and counters["received"] == 10
    assert counters["received_hash"] == sent
    # One lost (7) and one duplicated (2): the sums differ.
    counters = run_sink([packet(3, 5, seq) for seq in [2, 0, 1, 4, 3, 5, 9, 6, 8, 2]], fmt=fmt)
    assert counters["received"] == 10 and counters["received_hash"] != sent
    # The ordered sink counts the same order as 9 errors (0 → 1 is the only step in order).
    assert run_sink([packet(3, 5, seq) for seq in order])["out_of_order"] == 9


def test_unordered_source_sums_the_hashes_of_what_it_creates():
    fmt = TrafficFormat(HEAD, [(("dest",), TERMINALS)], TERMINALS, LENGTH, ordered=False)
    counters = {}
    packets = run_source("uniform", fmt=fmt, drain=100, counters=counters)
    assert len(packets) > 20
    assert counters["sent_hash"] == sum(packet_hash(5, dest, seq)
                                        for dest, seq, _ in packets) % (1 << 32)


def set_mix(ctx, component, mix: LengthMix) -> None:
    """``mix`` into the source's length controls, as the drivers set them."""
    for k, (lo, hi, cut) in enumerate(mix.cuts(65536)):
        ctx.set(getattr(component, f"length_lo_{k}"), lo)
        ctx.set(getattr(component, f"length_hi_{k}"), hi)
        ctx.set(getattr(component, f"length_cut_{k}"), cut)


def run_source(pattern, cycles=600, rate=0.25, source=5, fmt=FORMAT, drain=0, counters=None,
               mix=None, measure=0):
    """Run one source with an always-ready port (creating packets for ``cycles`` cycles, then
    sending what it queued for ``drain`` more); return its packets as (dest, seq, length)
    triples, checking each packet's framing and body flits on the way. ``mix``: its lengths
    (default all LENGTH). ``counters``, a dict if given, receives its ``sent_hash`` and the
    sums of its measured packets' times (``measure``: every packet measured)."""
    component = TrafficSource(fmt)
    constants, _ = terminal_constants(fmt)[source]
    packets = []

    async def bench(ctx):
        set_mix(ctx, component, mix or LengthMix.fixed(LENGTH))
        ctx.set(component.measure, measure)
        ctx.set(component.rate, int(rate * 65536))
        ctx.set(component.pattern, PATTERNS.index(pattern))
        ctx.set(component.seed, 7)
        ctx.set(component.ready, 1)
        ctx.set(component.enable, 1)
        flits = []
        births, injected = [], 0  # (for the sums, by hand)
        for now in range(cycles + drain):
            ctx.set(component.enable, now < cycles)
            ctx.set(component.now, now)
            valid, word = ctx.get(component.valid), ctx.get(component.data)
            first, last = ctx.get(component.first), ctx.get(component.last)
            created = ctx.get(component.created)
            await ctx.tick()
            if ctx.get(component.created) > created:  # a packet created in cycle ``now``
                births.append(now)
            if not valid:
                continue
            assert first == (not flits)
            flits.append(word)
            if first:
                injected += now
            if last:
                said = (flits[0] >> (8 + SEQ_BITS + 1) & 3) + 1
                assert len(flits) == said
                seq = flits[0] >> 8 & ((1 << SEQ_BITS) - 1)
                assert flits[0] >> 4 & 15 == source
                assert flits[1:] == [body_word(source, seq, i, 32) for i in range(1, said)]
                packets.append((flits[0] & 15, seq, said))
                flits = []
        if counters is not None:
            counters["sent_hash"] = ctx.get(component.sent_hash)
            counters["injected_time_sum"] = ctx.get(component.injected_time_sum)
            counters["queued_sum"] = ctx.get(component.queued_sum)
            counters["heads_at"] = injected
            counters["births"] = sum(births[:len(packets)])

    simulate(component, bench, constants)
    return packets


def test_source_fixed_patterns_follow_the_model():
    for pattern in ("transpose", "bit-reverse", "tornado", "bit-complement"):
        packets = run_source(pattern, cycles=300, source=1)
        expected = fixed_destination(pattern, TERMINALS, 1)  # 4, 8, 8, 14
        assert packets and {d for d, _, _ in packets} == {expected}, pattern
        assert [s for _, s, _ in packets] == list(range(len(packets)))  # numbered per pair


def test_source_uniform_never_sends_to_itself_and_reaches_everyone():
    packets = run_source("uniform", cycles=2000)
    destinations = [d for d, _, _ in packets]
    assert 5 not in destinations
    assert set(destinations) == set(range(TERMINALS)) - {5}
    for dest in set(destinations):  # sequence numbers count per destination
        assert [s for d, s, _ in packets if d == dest] == list(range(destinations.count(dest)))


def test_source_all_pairs_sends_once_to_every_other_terminal_in_order():
    packets = run_source("all-pairs", cycles=600, rate=0.5)
    assert [d for d, _, _ in packets] == [(5 + j) % TERMINALS for j in range(1, TERMINALS)]


def test_source_draws_lengths_from_the_mix():
    """Mixes of one-flit and four-flit packets (weights 1:1 and 3:1) and of a range (2-4):
    each packet's framing is as its head says (checked while decoding), and each length's
    share is within 3 standard deviations of the mix's (binomial, over the packets sent)."""
    for mix in (LengthMix.parse("1,4"), LengthMix.parse("1,4", "3,1"),
                LengthMix.parse("2-4")):
        packets = run_source("uniform", cycles=3000, rate=0.15, mix=mix)
        count = len(packets)
        assert count > 300
        for length, share in mix.shares().items():
            seen = sum(1 for _, _, said in packets if said == length) / count
            assert abs(seen - share) <= 3 * (share * (1 - share) / count) ** 0.5, (mix, length)
        assert {said for _, _, said in packets} == set(mix.shares())


def test_source_sums_its_measured_packets_times():
    """Every packet measured: ``injected_time_sum`` is the sum of the cycles their heads
    were accepted, and ``queued_sum`` the cycles they waited since created, that sum less
    the cycles they were created in (both counted here; the queue is first in, first out)."""
    counters = {}
    packets = run_source("uniform", cycles=400, rate=0.1, drain=200, counters=counters,
                         mix=LengthMix.parse("1-4"), measure=1)
    assert len(packets) > 20
    assert counters["injected_time_sum"] == counters["heads_at"]
    assert counters["queued_sum"] == counters["heads_at"] - counters["births"]
