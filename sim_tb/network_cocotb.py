"""cocotb tests for a generated network of any family.

Run through :func:`twinnet.sim_tb.runner.run`, whose JSON configuration holds ``manifest`` (the
generator's manifest file: its ``family`` and ``parameters`` rebuild the network
configuration, so the scoreboard calls the same model), ``tests`` (per cocotb test, the
scenario's settings) and ``results`` (a JSON file where each test records what it measured, for
the pytest side).
"""

import json
import random
import time
from collections import Counter
from pathlib import Path

import cocotb
from cocotb.clock import Clock

from twinnet.families import family_of
from twinnet.gen.manifest import Manifest
from twinnet.model.trace import read_trace
from twinnet.model.traffic import LengthMix, fixed_destination

from .network_tb import CheckError, NetworkBench
from .runner import load_config
from .traffic_phases import Deadlock, packet_times, write_packet_times


def _setup(dut, test: str, **defaults):
    """The bench for ``test`` and its settings: ``defaults`` updated from the configuration."""
    config = load_config()
    manifest = Manifest.read(config["manifest"])
    args = {"seed": 1, "eject_ready": 1.0, "watchdog": 2000, **defaults,
            **config.get("tests", {}).get(test, {})}
    family = family_of(manifest.data)
    network = family.network(manifest.parameters)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    bench = NetworkBench(dut, manifest, family, network, seed=args["seed"],
                         eject_ready=args["eject_ready"], watchdog=args["watchdog"])
    return bench, args


def _report(dut, test: str, **values) -> None:
    """Log what ``test`` measured and add it to the configuration's results file."""
    dut._log.info("%s: %s", test, json.dumps(values))
    path = Path(load_config()["results"])
    results = json.loads(path.read_text()) if path.exists() else {}
    results[test] = values
    path.write_text(json.dumps(results, indent=1))


def _checked(test: str):
    """Decorate a cocotb test so that a failure is recorded in the results file before it
    propagates: ``failure`` is ``"deadlock"`` (the watchdog fired) or ``"check"`` (scoreboard
    errors), ``detail`` the message, ``errors`` the number of scoreboard errors. The runner's
    caller reads it to say what went wrong (see ``network_sim.SimulationFailed``)."""
    def wrap(body):
        async def checked(dut):
            try:
                await body(dut)
            except Deadlock as error:
                _report(dut, test, failure="deadlock", detail=str(error), errors=0)
                raise
            except CheckError as error:
                _report(dut, test, failure="check", detail=str(error),
                        errors=len(error.errors))
                raise
        checked.__name__, checked.__qualname__ = body.__name__, body.__qualname__
        checked.__doc__ = body.__doc__
        return checked
    return wrap


def _hop_counts(bench, packets) -> dict:
    """``mean_hops`` and ``max_hops`` (router-to-router links per packet, from the link
    trace; None without it), ``hops_by_vc`` (links crossed on each VC: under adaptive
    routing, which hops took the escape VCs) and ``link_heads`` (head flits seen per link
    index)."""
    if not bench.scoreboard.check_hops or not packets:
        return dict(mean_hops=None, max_hops=None, hops_by_vc={}, link_heads={})
    hops = [len(packet.hops) for packet in packets]
    by_vc = Counter(vc for packet in packets for _, _, vc in packet.hops)
    return dict(mean_hops=sum(hops) / len(hops), max_hops=max(hops),
                hops_by_vc={str(vc): count for vc, count in sorted(by_vc.items())},
                link_heads={str(link): heads for link, heads in sorted(bench.link_heads.items())})


def _uniform_destination(bench, rng, source: int) -> int:
    while True:
        destination = rng.randrange(len(bench.pes))
        if destination != source:
            return destination


def _mix(bench, lengths) -> LengthMix:
    """The mix of a test's ``lengths`` setting (None: every packet the longest)."""
    if lengths is None:
        return LengthMix.fixed(bench.network.max_packet_length)
    return LengthMix([(lo, hi) for lo, hi, _ in lengths], [w for _, _, w in lengths])


async def _uniform_run(bench, rng, packets: int, rate: float,
                       broadcast_fraction: float = 0.0, pattern: str = "uniform",
                       mix: LengthMix | None = None) -> dict:
    """Offer ``packets`` packets between uniformly random PE pairs (or to each source's
    destination under a fixed ``pattern`` of :mod:`twinnet.model.traffic`, e.g. tornado; a
    source without one sends nothing) at ``rate`` packets per PE
    per cycle (a share ``broadcast_fraction`` of them broadcasts instead, copies at PE 0),
    drain, check every packet and copy, and return what the run measured: latencies
    (network: head accepted → head ejected; total: offered → head ejected, so source queueing
    included), the offered load, the accepted throughput in flits per PE per cycle over the
    injection window (``None`` when the window is shorter than ten mean latencies: packets
    still in flight at its end would dominate), the delivered flits per PE per cycle over the
    whole run, and the simulation speed (the latencies and hops are the unicast packets'),
    the broadcasts sent and their copies delivered. ``mix``: the packets' and broadcasts'
    lengths (default every packet the longest)."""
    mix = mix or LengthMix.fixed(bench.network.max_packet_length)
    first_packet, first_broadcast, start = len(bench.sent), len(bench.broadcasts), bench.cycle
    started = time.perf_counter()
    fixed = None
    if pattern != "uniform":
        fixed = [fixed_destination(pattern, len(bench.pes), source) for source in bench.pes]
    senders = [s for s in bench.pes if fixed is None or fixed[s] is not None]
    offered = 0
    while offered < packets:
        for source in senders:
            if offered < packets and rng.random() < rate:
                if broadcast_fraction and rng.random() < broadcast_fraction:
                    bench.offer_broadcast(source, length=mix.draw(rng))
                elif fixed is not None:
                    bench.offer(source, fixed[source], mix.draw(rng))
                else:
                    bench.offer(source, _uniform_destination(bench, rng, source),
                                mix.draw(rng))
                offered += 1
        await bench.step()
    window_end = bench.cycle
    await bench.run(200_000, until_drained=True)
    seconds = time.perf_counter() - started
    bench.check_all_delivered()
    sent = bench.sent[first_packet:]
    broadcasts = bench.broadcasts[first_broadcast:]
    pes, window = len(bench.pes), window_end - start
    length = mix.mean()
    flits = sum(len(p.flits) for p in sent)
    latencies = [p.delivered - p.injected for p in sent]
    totals = [p.delivered - p.offered for p in sent]
    in_window = sum(len(p.flits) for p in sent if p.delivered <= window_end)
    # (Every packet may be a broadcast: then no unicast latency to average.)
    mean_total = sum(totals) / len(totals) if sent else None
    cycles = bench.cycle - start
    return dict(packets=len(sent), cycles=cycles, injection_cycles=window,
                mean_latency=sum(latencies) / len(latencies) if sent else None,
                max_latency=max(latencies, default=None),
                mean_total_latency=mean_total,
                offered_flits_per_pe_cycle=rate * length,
                accepted_flits_per_pe_cycle=(in_window / pes / window
                                             if sent and window >= 10 * mean_total
                                             else None),
                delivered_flits_per_pe_cycle=flits / pes / cycles,
                **_hop_counts(bench, sent),
                flits=flits, hops_checked=bench.scoreboard.check_hops,
                mean_length=length,
                injected_lengths=dict(Counter(len(p.flits) for p in sent)),
                broadcast_lengths=dict(Counter(len(p.flits) for p in broadcasts)),
                broadcasts_sent=len(broadcasts),
                broadcast_copies_delivered=sum(len(p.receivers) for p in broadcasts),
                wall_seconds=seconds, cycles_per_second=(bench.cycle - start) / seconds)


@cocotb.test()
@_checked("uniform_traffic")
async def uniform_traffic(dut):
    """``packets`` packets between uniformly random PE pairs, offered at ``rate`` packets per
    PE per cycle; every packet delivered once, intact, in order, along the model's hops (a
    share ``broadcast_fraction`` broadcasts instead, checked as in :func:`broadcast_traffic`).
    ``lengths``: the packets' lengths, ``[[lo, hi, weight], …]`` (default every packet the
    longest)."""
    bench, args = _setup(dut, "uniform_traffic", packets=2000, rate=0.02,
                         broadcast_fraction=0.0, pattern="uniform", lengths=None)
    await bench.reset()
    stats = await _uniform_run(bench, random.Random(args["seed"]), args["packets"],
                               args["rate"], args["broadcast_fraction"], args["pattern"],
                               _mix(bench, args["lengths"]))
    _report(dut, "uniform_traffic", **stats, drop_count=bench.drop_count())


@cocotb.test()
@_checked("load_sweep")
async def load_sweep(dut):
    """One :func:`_uniform_run` of ``packets`` packets per offered ``rate`` (packets per PE
    per cycle) under ``pattern``, one after the other in one simulation: the
    latency/throughput curve."""
    bench, args = _setup(dut, "load_sweep", packets=2000, rates=[0.01, 0.02],
                         pattern="uniform")
    rng = random.Random(args["seed"])
    await bench.reset()
    points = []
    for rate in args["rates"]:
        points.append(await _uniform_run(bench, rng, args["packets"], rate,
                                         pattern=args["pattern"]))
        dut._log.info("rate %.3f: %s", rate, json.dumps(points[-1]))
    _report(dut, "load_sweep", points=points)


@cocotb.test()
@_checked("all_pairs")
async def all_pairs(dut):
    """Every terminal sends one packet to every other terminal: in round j (j = 1 … P-1) PE i
    sends to PE (i + j) mod P, one round every ``gap`` cycles (default 8 packet lengths, an
    eighth of a PE port's capacity, so the network never saturates). Records the hops of every
    packet (``mean_hops``: router-to-router links per packet, from the trace) and the head
    flits seen on each link (``link_heads``)."""
    bench, args = _setup(dut, "all_pairs", gap=None)
    count = len(bench.pes)
    gap = args["gap"] or 8 * bench.network.max_packet_length
    await bench.reset()
    for shift in range(1, count):
        for source in range(count):
            bench.offer(source, (source + shift) % count)
        await bench.run(gap)
    await bench.run(200_000, until_drained=True)
    bench.check_all_delivered()
    _report(dut, "all_pairs", packets=len(bench.sent), hops_checked=bench.scoreboard.check_hops,
            **_hop_counts(bench, bench.sent))


@cocotb.test()
@_checked("broadcast_traffic")
async def broadcast_traffic(dut):
    """A broadcast from each PE of ``sources`` (default every PE) in turn, one every ``gap``
    cycles, its copies at PE ``pe`` of every other router, mixed with uniform unicast packets
    at ``rate`` per PE per cycle: every copy intact, one per router, along the forwarding
    rule's links; every unicast packet as in :func:`uniform_traffic`."""
    bench, args = _setup(dut, "broadcast_traffic", seed=6, sources=None, gap=16, rate=0.0,
                         pe=0)
    rng = random.Random(args["seed"])
    sources = args["sources"] if args["sources"] is not None else list(bench.pes)
    await bench.reset()
    for source in sources:
        bench.offer_broadcast(source, args["pe"])
        for _ in range(args["gap"]):
            for other in bench.pes:
                if rng.random() < args["rate"]:
                    bench.offer(other, _uniform_destination(bench, rng, other))
            await bench.step()
    await bench.run(200_000, until_drained=True)
    bench.check_all_delivered()
    _report(dut, "broadcast_traffic", broadcasts_sent=len(bench.broadcasts),
            broadcast_copies_delivered=bench.copies_delivered(), packets=len(bench.sent),
            hops_checked=bench.scoreboard.check_hops, cycles=bench.cycle)


@cocotb.test()
@_checked("saturation_drains")
async def saturation_drains(dut):
    """Every PE keeps a packet waiting for ``cycles`` cycles (saturating uniform load; a share
    ``broadcast_fraction`` of them broadcasts, copies at PE 0), then traffic stops; the
    watchdog must never fire and everything must drain."""
    bench, args = _setup(dut, "saturation_drains", seed=2, cycles=20_000,
                         broadcast_fraction=0.0)
    rng = random.Random(args["seed"])
    await bench.reset()
    for _ in range(args["cycles"]):
        for source, queue in enumerate(bench.queues):
            if not queue:
                if args["broadcast_fraction"] and rng.random() < args["broadcast_fraction"]:
                    bench.offer_broadcast(source)
                else:
                    bench.offer(source, _uniform_destination(bench, rng, source))
        await bench.step()
    loaded = bench.cycle
    await bench.run(200_000, until_drained=True)
    bench.check_all_delivered()
    delivered_flits = len(bench.sent) * bench.network.max_packet_length
    _report(dut, "saturation_drains", packets=len(bench.sent), load_cycles=loaded,
            drain_cycles=bench.cycle - loaded, broadcasts_sent=len(bench.broadcasts),
            broadcast_copies_delivered=bench.copies_delivered(),
            accepted_flits_per_pe_cycle=delivered_flits / len(bench.pes) / bench.cycle)


def deadlock_pairs(bench, example: str) -> list[tuple[int, int]]:
    """003 Example 6.1 (Y radix 2: PEs exchange with the node across Y, PE0 with PE0 and PE1
    with PE1) or 6.2 (PE1 of <x,y,z> with PE0 of <x+1,y,z+1>, both ways), at every node."""
    twin = bench.network.topology

    def pe(node, index):
        return twin.pe_index(twin.pe(node, index))

    pairs = []
    for node in twin.nodes():
        if example == "6.1":
            other = (node[0], (node[1] + 1) % twin.radices[1]) + node[2:]
            for index in (0, 1):
                pairs.append((pe(node, index), pe(other, index)))
        else:
            other = tuple((d + (1 if i in (0, 2) else 0)) % k
                          for i, (d, k) in enumerate(zip(node, twin.radices)))
            pairs.append((pe(node, 1), pe(other, 0)))
            pairs.append((pe(other, 1), pe(node, 0)))
    return pairs


@cocotb.test()
async def deadlock_pattern(dut):
    """Saturating traffic in the pattern of 003 Example ``example``; reports whether the
    watchdog fired and what it said (the pytest side decides what is expected)."""
    bench, args = _setup(dut, "deadlock_pattern", seed=3, watchdog=500, cycles=5000,
                         example="6.2")
    pairs = deadlock_pairs(bench, args["example"])
    await bench.reset()
    report = None
    try:
        for _ in range(args["cycles"]):
            for source, destination in pairs:
                if len(bench.queues[source]) < 2:
                    bench.offer(source, destination)
            await bench.step()
        await bench.run(100_000, until_drained=True)
        bench.check_all_delivered()
    except Deadlock as error:
        report = str(error)
        dut._log.info("watchdog: %s", report)
    _report(dut, "deadlock_pattern", deadlocked=report is not None, report=report,
            cycles=bench.cycle)


@cocotb.test()
@_checked("zero_load_latency")
async def zero_load_latency(dut):
    """One packet at a time between every ordered pair of distinct PEs (or ``pairs`` random
    ones): latency from head accepted at the source to head ejected at the destination."""
    bench, args = _setup(dut, "zero_load_latency", seed=4, pairs=None)
    await bench.reset()
    count = len(bench.pes)
    pairs = [(s, d) for s in range(count) for d in range(count) if s != d]
    if args["pairs"]:
        pairs = random.Random(args["seed"]).sample(pairs, args["pairs"])
    results = []
    for source, destination in pairs:
        packet = bench.offer(source, destination)
        await bench.run(10_000, until_drained=True)
        results.append([source, destination, packet.delivered - packet.injected])
    bench.check_all_delivered()
    _report(dut, "zero_load_latency", latencies=results)


@cocotb.test()
@_checked("malformed_dropped")
async def malformed_dropped(dut):
    """Valid uniform traffic mixed with packets whose header the family calls malformed (e.g.
    a destination digit out of range): the malformed ones are counted on drop_count and
    vanish; the valid ones all arrive."""
    bench, args = _setup(dut, "malformed_dropped", seed=5, packets=400, malformed=40)
    rng = random.Random(args["seed"])
    assert bench.family.malformed(bench.network, rng) is not None, \
        "every header of this network is valid: nothing to drop"
    await bench.reset()
    total = args["packets"] + args["malformed"]
    for index in range(total):
        source = rng.randrange(len(bench.pes))
        if index % (total // args["malformed"]) == 0:
            bench.offer_malformed(source, bench.family.malformed(bench.network, rng))
        else:
            bench.offer(source, _uniform_destination(bench, rng, source))
        if index % 8 == 0:
            await bench.step()
    await bench.run(100_000, until_drained=True)
    bench.check_all_delivered()
    assert bench.drop_count() == bench.malformed_sent, \
        f"drop_count {bench.drop_count()} != {bench.malformed_sent} malformed packets sent"
    _report(dut, "malformed_dropped", packets=len(bench.sent), malformed=bench.malformed_sent,
            drop_count=bench.drop_count())


@cocotb.test()
@_checked("bad_framing")
async def bad_framing(dut):
    """PE 0 breaks the framing in every way the router counts, between good packets: stray
    body and tail flits, heads inside packets (of a longer packet and of a one-flit one),
    packets longer than the maximum (ended by their tail, and by the next head). Every good
    packet after them arrives intact; each packet cut short arrives once, at its destination,
    with ``abort`` on its tail and the flits the router kept; the counters count each error
    exactly; a packet offered during reset waits and is delivered once. Then uniform traffic of
    1 to L flits from every PE (settings: ``packets``)."""
    bench, args = _setup(dut, "bad_framing", seed=7, packets=200)
    rng = random.Random(args["seed"])
    length, pes = bench.network.max_packet_length, len(bench.pes)
    far = pes - 1

    def good(size: int) -> None:
        bench.offer(0, far, size)

    def body(count: int) -> list:
        return [(rng.getrandbits(bench.network.flit_width), 0, 0) for _ in range(count)]

    # Offered during reset: ready stays low, and the packet goes once the reset ends.
    good(length)
    for _ in range(4):
        await bench.step(reset=1)
        assert int(dut.pe_in_ready.value) == 0, "pe_in_ready high during reset"
    await bench.step(reset=0)
    counts = Counter()
    # Strays: a body flit and a tail flit with no packet open.
    bench.offer_flits(0, body(1) + [(5, 0, 1)])
    counts["stray"] += 2
    good(min(2, length))
    if length > 1:
        # A head inside a packet: the open packet (its head and one body flit) is closed by
        # an aborting tail of the router's; the head goes on as a packet's.
        head, seq = bench.head_of(0, far)
        bench.offer_flits(0, [(head, 1, 0)] + body(1))
        bench.expect_aborted(0, seq, far, 3)
        counts["cut"] += 1
        good(length)
        head, seq = bench.head_of(0, far)
        bench.offer_flits(0, [(head, 1, 0)])
        bench.expect_aborted(0, seq, far, 2)
        counts["cut"] += 1
        good(1)
    # Too long: L + 2 flits with a tail, then L + 1 without (the next head ends it).
    for extra, tail in ((2, True), (1, False)):
        head, seq = bench.head_of(0, far)
        flits = [(head, 1, int(length == 1 and extra == 0))] + body(length - 1 + extra)
        if tail:
            flits[-1] = (flits[-1][0], 0, 1)
        bench.offer_flits(0, flits)
        bench.expect_aborted(0, seq, far, length)
        counts["long"] += 1
        good(min(2, length))
    await bench.run(5_000, until_drained=True)
    await _uniform_lengths(bench, rng, args["packets"])
    bench.check_all_delivered()
    framing = {error: _element(dut, f"pe_framing_{error}", 0) for error in ("stray", "cut", "long")}
    assert framing == {error: counts[error] for error in framing}, f"framing counters {framing}"
    others = [_element(dut, f"pe_framing_{error}", pe) for error in framing
              for pe in range(1, pes)]
    assert not any(others), "framing counted at a PE that framed well"
    assert bench.drop_count() == 0
    _report(dut, "bad_framing", packets=len(bench.sent), aborted=len(bench.aborted_arrived),
            framing=framing)


@cocotb.test()
@_checked("trace_replay")
async def trace_replay(dut):
    """The packets of a trace (settings: ``trace``, its file; ``latencies``, where each
    packet's times go; ``seed``, ``eject_ready``), each offered at its source in its cycle
    (counted from the end of the reset); every packet delivered once, intact, in order per
    pair, along the model's hops (with the trace)."""
    bench, args = _setup(dut, "trace_replay", trace=None, latencies=None)
    packets = read_trace(args["trace"], len(bench.pes), bench.network.max_packet_length)
    await bench.reset()
    started, start = time.perf_counter(), bench.cycle
    offered = []
    for trace_packet in packets:
        while bench.cycle - start < trace_packet.cycle:
            await bench.step()
        offered.append(bench.offer(trace_packet.source, trace_packet.destination,
                                   trace_packet.length))
    await bench.run(1_000_000, until_drained=True)
    bench.check_all_delivered()
    rows = [(index, p.injected - start, p.delivered - start, p.finished - start,
             len(p.hops) if bench.scoreboard.check_hops else None)
            for index, p in enumerate(offered)]
    times = packet_times(packets, rows)
    write_packet_times(args["latencies"], times)
    _report(dut, "trace_replay", trace_packets=len(packets), packets=len(offered),
            mean_latency=sum(p.delivered - p.injected for p in offered) / len(offered),
            mean_packet_latency=sum(t["latency"] for t in times) / len(times),
            max_packet_latency=max(t["latency"] for t in times),
            cycles=bench.cycle - start, wall_seconds=time.perf_counter() - started,
            latencies=args["latencies"])


async def _uniform_lengths(bench, rng, packets: int) -> None:
    """``packets`` packets of 1 to L flits between random pairs, one per PE at most each
    cycle, drained."""
    length = bench.network.max_packet_length
    for _ in range(packets):
        source = rng.randrange(len(bench.pes))
        bench.offer(source, _uniform_destination(bench, rng, source), rng.randint(1, length))
        if rng.random() < 0.3:
            await bench.step()
    await bench.run(100_000, until_drained=True)


def _element(dut, bus: str, pe: int) -> int:
    """PE ``pe``'s element of a PE bus of the network top."""
    signal = getattr(dut, bus)
    width = len(signal) // len(dut.pe_in_valid)
    return (int(signal.value) >> (pe * width)) & ((1 << width) - 1)
