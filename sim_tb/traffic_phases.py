"""The phases of one point of traffic in hardware, for any driver of the traffic harness.

A driver (:class:`HarnessDriver`) sets the harness's controls, lets cycles pass and reads its
outputs: :mod:`twinnet.sim_tb.traffic_cocotb` does it through cocotb on the Verilog harness,
:mod:`twinnet.program.driver` through the C++ program of
:mod:`twinnet.program`. :func:`run_point` runs one point on either. A point is a
:class:`twinnet.sim_tb.settings.Point` (or its dict, as it travels to a driver in another
process; the settings there declare each key's default and range):

- ``pattern`` (a name of :data:`twinnet.model.traffic.PATTERNS`), ``rate`` (packets per
  terminal per cycle, on average), ``seed``, ``hotspot_fraction``;
- ``lengths``: the packets' lengths, ``[[lo, hi, weight], …]`` (a
  :class:`twinnet.model.traffic.LengthMix`; None: every packet the network's longest);
- ``injection``: ``bernoulli`` (a packet with probability ``rate`` every cycle) or ``onoff``
  (bursts: a source turns on and off as a two-state Markov chain; while on it creates a
  packet every mean length's cycles on average, its link's capacity, for ``burst``
  packets on average; the chance of turning on makes the average ``rate``, which must be
  below one packet per mean length's cycles);
- ``fault``: ``none``, or a fault the harness injects once (``misroute``, ``duplicate``,
  ``corrupt``; see :data:`twinnet.hdl.traffic.FAULTS`): the point then reports the sinks'
  error counts under ``errors`` instead of failing on them (``checksum``: under adaptive
  routing, the sums of packet hashes sent and received differ; see
  :mod:`twinnet.hdl.traffic`);
- ``eject_ready`` (the probability that a sink takes the flit offered to it in a cycle, 0.01
  to 1) and ``stall_bursts`` (0, or the longest burst of cycles a sink stops for: a sink not
  stalled starts a burst with probability 1/(2 N) per cycle, of 1 to N cycles, so it is
  stopped about a fifth of the time): back-pressure from the PEs (see
  :class:`twinnet.hdl.traffic.TrafficSink`);
- ``warmup``, ``measure`` (cycles): packets created during the ``measure`` cycles are the
  measured ones (BookSim's measurement phase); under all-pairs, creation goes on until every
  source has created its P - 1 packets;
- ``drain_limit`` (cycles to deliver the measured packets while traffic goes on; past it,
  beyond saturation, creation stops and the point is reported ``unstable``: its latencies
  include packets that starved until then) and ``watchdog`` (cycles in which nothing moves
  while packets are queued or in flight, in any phase, that count as a deadlock; the longest
  stall burst and four packets' time at the slowest ejection are added to it);
- ``chunk``: cycles per wait (no Python runs in between); the counters are read, and the
  watchdog looks, between chunks;
- ``count_links``: true to measure the load of every link (the result's ``link_loads``,
  :func:`link_loads`): the network must have been generated with its link counters
  (:mod:`twinnet.hdl.link_counter`), which either driver reads
  (:meth:`HarnessDriver.link_counts`); the C++ program also counts flits and heads where it
  copies each link between its models, and the point fails unless the two agree on every
  link;
- ``broadcast_fraction`` (0 to 1; a network whose routers replicate broadcasts): the share of
  packets sent as broadcasts instead (see :mod:`twinnet.hdl.traffic`). The point then also
  waits for every copy, and fails unless the copies delivered are the broadcasts sent times
  the copies of one (:func:`copies_per_broadcast`: one at every router but the source's);
  it reports ``broadcasts_sent`` and ``broadcast_copies_delivered``. Latencies, hops and
  ``packets`` are the unicast packets'; the accepted throughput counts every flit ejected,
  copies included.

The watchdog: a driver that sees every link (the C++ program) says how many cycles no flit
has moved anywhere (:meth:`HarnessDriver.idle`) and which routers hold flits
(:meth:`HarnessDriver.held`); otherwise (the Verilog harness through cocotb) nothing moving means
no packet injected or delivered. Either way the point stops with :class:`Deadlock` and one
line: the cycle, the packets in flight and queued, and the routers holding flits when known.

A point's result has ``packet_hops`` (the hops of every unicast packet delivered since the
reset, summed), ``mean_hops`` and ``max_hops`` (the most of one packet since the reset) when
the driver counts them (the C++ program does; None otherwise); ``stalls`` when the routers
were built with their stall counters and the driver reads them (the C++ program does): their
growth over the measured cycles, summed over the routers (:mod:`twinnet.hdl.router.stalls`).
"""

import csv
import dataclasses
import io
import json
import tempfile
import time
from pathlib import Path

from twinnet.gen import output
from twinnet.gen.manifest import Manifest
from twinnet.model.trace import read_trace
from twinnet.model.traffic import PATTERNS, LengthMix

from .settings import POINT_SETTINGS, Point

COUNTERS = ("created", "created_measured", "overflowed", "injected", "received",
            "received_measured", "flits_measured", "injected_time_sum", "queued_sum",
            "ejected_time_sum", "wrong_destination", "out_of_order", "corrupt", "framing",
            "aborted", "drop_count", "faults", "now", "sent_hash", "received_hash", "refused")
#: Counters of a harness with broadcasts (:attr:`twinnet.hdl.traffic.TrafficHarness.sums`).
BROADCAST_COUNTERS = ("broadcasts", "broadcasts_measured", "copies")
ERRORS = ("wrong_destination", "out_of_order", "corrupt", "framing", "aborted", "drop_count")
#: Bits of the harness's sums of cycles (they wrap: their differences are taken modulo).
SUM_BITS = 48

class Deadlock(AssertionError):
    """A watchdog saw the network stop while packets were in flight: no flit moved (or, when
    the driver cannot see the links, no packet was injected or delivered) for its limit of
    cycles. Raised by :func:`run_point` and by
    :class:`twinnet.sim_tb.network_tb.NetworkBench`."""


class TrafficError(AssertionError):
    """A sink counted an error, or packets went missing."""


class HarnessDriver:
    """What :func:`run_point` needs of a driver of the traffic harness."""

    def set(self, name: str, value: int) -> None:
        """Set control ``name`` (``rst`` and the harness's inputs) from the next cycle on."""
        raise NotImplementedError

    async def reset(self) -> None:
        """Hold ``rst`` for two cycles."""
        raise NotImplementedError

    async def cycles(self, count: int) -> None:
        """Let ``count`` clock cycles pass."""
        raise NotImplementedError

    def read(self) -> dict:
        """The harness's outputs named in :data:`COUNTERS` (and :data:`BROADCAST_COUNTERS`
        when it has them), as integers."""
        raise NotImplementedError

    def latency_max(self) -> int | None:
        """The largest network latency of a measured unicast packet delivered since reset
        (None: this driver does not see the terminals)."""
        return None

    def histogram(self) -> list[int] | None:
        """Those latencies by significant bits (bin i: latencies of i bits; the last bin
        takes every longer one), or None."""
        return None

    def lengths(self) -> dict[int, int] | None:
        """Packets injected since reset, by length in flits (None: this driver does not see
        the terminals)."""
        return None

    def stalls(self) -> dict | None:
        """The routers' stall counters summed, reason → count (None: the routers have
        none, or this driver does not read them)."""
        return None

    def idle(self) -> int | None:
        """Cycles since a flit last moved on any link or terminal port (None: this driver
        does not see the links)."""
        return None

    def held(self) -> list[int] | None:
        """Per router of the manifest, the flits it holds (None: not known)."""
        return None

    def hops(self) -> int | None:
        """Head flits that crossed a link between routers since reset: the packets' hops
        summed (None: this driver does not see the links)."""
        return None

    def max_hops(self) -> int | None:
        """The most links between routers a unicast packet delivered since reset crossed
        (None: this driver does not see the links)."""
        return None

    def link_counts(self) -> int | None:
        """The link counters' ``link_counts_<k>`` ports, read one after the other from bit 0,
        as one integer (None: the network has no link counters)."""
        return None

    def load_trace(self, path) -> None:
        """Load the packets of a trace, as ``terminal cycle route length-1`` lines, for the
        sources to take with ``from_trace`` set (:func:`run_trace`)."""
        raise TrafficError("this driver does not replay traces: the C++ program does "
                           "(--simulator verilator without --waves)")

    def record(self, path) -> None:
        """From now on, write each unicast packet delivered to ``path`` as ``terminal head
        head-accepted head-out tail-out hops``."""
        raise TrafficError("this driver does not record packets")

    def close_record(self) -> None:
        """Finish the file of :meth:`record`."""

    def links(self) -> list[int] | None:
        """Since reset, ``flits, packets`` of every link of the manifest in its order, then
        of every terminal's injection and ejection (None: this driver does not see the
        links)."""
        return None


def link_rows(manifest: Manifest, before: int, after: int) -> list[list[dict]]:
    """Per link of the link counters (manifest ``link_counters``: the channels, then per
    terminal its injection and ejection), per VC, the growth of each counter between two
    readings of :meth:`HarnessDriver.link_counts` (counters wrap)."""
    section = manifest.link_counters
    width, names = section["counter_width"], section["counters"]
    mask, row = (1 << width) - 1, 0
    rows = []
    for _, _, vcs in section["links"]:
        per_vc = []
        for _ in range(vcs):
            at = row * width * len(names)
            per_vc.append({name: (((after >> (at + i * width)) & mask)
                                  - ((before >> (at + i * width)) & mask)) & mask
                           for i, name in enumerate(names)})
            row += 1
        rows.append(per_vc)
    return rows


def link_loads(manifest: Manifest | dict, before: int, after: int, cycles: int) -> list[dict]:
    """The load of every link between two readings of :meth:`HarnessDriver.link_counts` ``cycles``
    apart: per link of the manifest its ``channel`` (``network``; ``internal`` between two
    routers of one node or switch, whose labels differ only after the ``/``), ``router``
    and ``port`` it leaves, ``to`` (the router and port it enters), ``flits``, ``packets`` (head
    flits), ``blocked`` (see :mod:`twinnet.hdl.link_counter`), summed over its VCs, ``busy``
    (flits per cycle) and ``vc``, the same counts per VC (``[{vc, flits, packets, blocked}]``);
    then per terminal its ``injection`` and ``ejection``, with the router it is attached
    to."""
    manifest = Manifest.of(manifest)
    rows = link_rows(manifest, before, after)

    def counted(per_vc: list[dict]) -> dict:
        totals = {name: sum(row[name] for row in per_vc) for name in per_vc[0]}
        return {**totals, "busy": totals["flits"] / cycles if cycles else None,
                "vc": [{"vc": vc, **row} for vc, row in enumerate(per_vc)]}

    loads = []
    for link, per_vc in zip(manifest.links, rows):
        source, target = link["from"], link["to"]
        internal = source["router"].split("/")[0] == target["router"].split("/")[0]
        loads.append({"link": link["index"], "channel": "internal" if internal else "network",
                      "router": source["router"], "port": source["port"],
                      "to": {"router": target["router"], "port": target["port"]},
                      **counted(per_vc)})
    terminals = rows[len(manifest.links):]
    for terminal, router in enumerate(manifest.terminals):
        for channel, per_vc in zip(("injection", "ejection"),
                                terminals[2 * terminal:2 * terminal + 2]):
            loads.append({"channel": channel, "terminal": terminal, "router": router,
                          **counted(per_vc)})
    return loads


def check_link_loads(loads: list[dict], before: list[int], after: list[int]) -> None:
    """Raise :class:`TrafficError` unless the link counters' flits and packets (``loads``)
    are those the driver counted itself between two readings of :meth:`HarnessDriver.links`."""
    counts = [b - a for a, b in zip(before, after)]
    for load, flits, packets in zip(loads, counts[::2], counts[1::2]):
        if (load["flits"], load["packets"]) != (flits, packets):
            where = (f"link {load['link']}" if "link" in load
                     else f"terminal {load['terminal']}'s {load['kind']}")
            raise TrafficError(f"the link counters of {where} counted {load['flits']} flits "
                               f"and {load['packets']} packets, the program {flits} and "
                               f"{packets}")


def set_lengths(harness: HarnessDriver, mix: LengthMix, scale: int) -> None:
    """The sources' length controls for ``mix`` (:meth:`LengthMix.cuts`)."""
    for k, (lo, hi, cut) in enumerate(mix.cuts(scale)):
        harness.set(f"length_lo_{k}", lo)
        harness.set(f"length_hi_{k}", hi)
        harness.set(f"length_cut_{k}", cut)


def copies_per_broadcast(manifest: Manifest) -> int | None:
    """The copies of one broadcast: one at every router with terminals but the source's (None
    when the network's routers do not replicate broadcasts: no ``route.broadcast`` field)."""
    if not manifest.head_flit.has("route.broadcast"):
        return None
    return len(set(manifest.terminals)) - 1


def in_flight(values: dict, copies: int | None) -> tuple[int, int]:
    """Unicast packets injected and not yet received, and broadcast copies not yet
    delivered (``copies`` per broadcast, None without broadcasts)."""
    if copies is None:
        return values["injected"] - values["received"], 0
    return (values["injected"] - values["broadcasts"] - values["received"],
            values["broadcasts"] * copies - values["copies"])


#: Routers named in a deadlock report, at most.
REPORTED_ROUTERS = 8


class Watchdog:
    """Stops a point when nothing has moved for ``limit`` cycles while packets are queued
    or in flight (see the module docstring)."""

    def __init__(self, harness: HarnessDriver, limit: int, manifest: Manifest):
        self.harness, self.limit, self.manifest = harness, limit, manifest
        self.progress, self.still = None, 0
        self.copies = copies_per_broadcast(manifest)

    async def cycles(self, count: int, chunk: int) -> dict:
        """Let ``count`` cycles pass, looking every ``chunk``; return the counters read
        last."""
        values = self.harness.read()
        while count > 0:
            step = min(chunk, count)
            await self.harness.cycles(step)
            count -= step
            values = self.look(step)
        return values

    def look(self, step: int) -> dict:
        """Read the counters after ``step`` cycles; raise :class:`Deadlock` when nothing has
        moved for too long."""
        values = self.harness.read()
        packets, copies = in_flight(values, self.copies)
        pending = values["created"] - values["injected"] + packets + copies
        idle = self.harness.idle()
        if idle is None:
            progress = (values["injected"], values["received"], values.get("copies"))
            self.still = self.still + step if progress == self.progress else 0
            self.progress, idle = progress, self.still
        if pending > 0 and idle >= self.limit:
            raise Deadlock(self.report(values, idle))
        return values

    def report(self, values: dict, idle: int) -> str:
        packets, copies = in_flight(values, self.copies)
        line = (f"nothing moved for {idle} cycles with {packets} packets in flight"
                + (f", {copies} broadcast copies undelivered" if copies else "")
                + f" and {values['created'] - values['injected']} queued at their sources "
                f"(cycle {values['now']})")
        held = self.harness.held()
        if held is None:
            return line
        holding = [(count, router["label"])
                   for count, router in zip(held, self.manifest.routers) if count]
        holding.sort(key=lambda entry: -entry[0])
        named = ", ".join(f"{label} ({count})" for count, label in
                          holding[:REPORTED_ROUTERS])
        more = (f" and {len(holding) - REPORTED_ROUTERS} more"
                if len(holding) > REPORTED_ROUTERS else "")
        return (f"{line}; {len(holding)} routers hold {sum(held)} flits: {named}{more}")


def snapshot(harness: HarnessDriver, wanted: bool):
    """``(link counters, the driver's own link counts or None)`` now, or None when not
    ``wanted``."""
    return (harness.link_counts(), harness.links()) if wanted else None


async def run_point(harness: "HarnessDriver", point: Point | dict,
                    manifest: Manifest | dict) -> dict:
    """Reset, run one point's phases and return what it measured (see the module
    docstring); raises :class:`Deadlock` or :class:`TrafficError`."""
    point = point if isinstance(point, Point) else Point.from_dict(point)
    manifest = Manifest.of(manifest)
    copies = copies_per_broadcast(manifest)
    if point.broadcast_fraction and copies is None:
        raise ValueError(f"broadcast_fraction {point.broadcast_fraction}: this network's "
                         "routers do not replicate broadcasts")
    longest = manifest.max_packet_length
    mix = (LengthMix.fixed(longest) if point.lengths is None
           else LengthMix([(lo, hi) for lo, hi, _ in point.lengths],
                          [weight for _, _, weight in point.lengths]))
    if mix.longest > longest:
        raise ValueError(f"packet lengths up to {mix.longest}: the network's longest packet is "
                         f"{longest} flits")
    _configure(harness, point, manifest.traffic, mix, broadcasts=copies is not None)
    await harness.reset()
    # A stall burst, or a packet trickling out of a slow sink, is not a deadlock.
    patience = point.watchdog + point.stall_bursts + round(4 * longest / point.eject_ready)
    watchdog = Watchdog(harness, patience, manifest)
    if point.count_links and (manifest.link_counters is None
                             or harness.link_counts() is None):
        raise ValueError("link loads: the network was generated without its link counters "
                         "(generate_network(..., link_counters=True))")
    run = await _phases(harness, point, watchdog, manifest.pe_count, copies)
    return _measured(harness, point, manifest, mix, copies, run)


def _configure(harness: "HarnessDriver", point: Point, traffic, mix: LengthMix, *,
               broadcasts: bool) -> None:
    """Set the harness's controls for ``point`` (its sources off until the warm-up)."""
    scale, length = 1 << traffic.rate_bits, mix.mean()
    set_lengths(harness, mix, scale)
    harness.set("rate", min(scale - 1, round(point.rate * scale)))
    harness.set("onoff", point.injection == "onoff")
    if point.injection == "onoff":
        # On for burst * length cycles on average (the mean length), creating at 1/length
        # while on; the average rate is on_rate * p_on / (p_on + p_off).
        on_rate, turn_off = 1 / length, 1 / (point.burst * length)
        turn_on = point.rate * turn_off / (on_rate - point.rate)
        harness.set("rate", min(scale - 1, round(on_rate * scale)))
        harness.set("turn_on", max(1, min(scale - 1, round(turn_on * scale))))
        harness.set("turn_off", max(1, round(turn_off * scale)))
    harness.set("fault", traffic.faults.index(point.fault))
    harness.set("pattern", PATTERNS.index(point.pattern))
    harness.set("hotspot_rate", min(scale - 1, round(point.hotspot_fraction * scale)))
    harness.set("seed", point.seed)
    if broadcasts:  # (1: every packet; the control takes 65536)
        harness.set("broadcast_rate", round(point.broadcast_fraction * scale))
    harness.set("refuse_rate", min(scale - 1, round((1 - point.eject_ready) * scale)))
    bursts = point.stall_bursts
    harness.set("stall_max", bursts)
    harness.set("stall_start", round(scale / (2 * bursts)) if bursts else 0)
    harness.set("enable", 0)
    harness.set("measure", 0)


@dataclasses.dataclass
class _Run:
    """What the phases of a point read: the counters after the measured cycles
    (``window``) and at the end (``values``), link snapshots around the window, the stall
    counters' growth over it, whether the drain gave up (``unstable``) and the wall time."""

    window: dict
    values: dict
    links_before: tuple | None
    links_window: tuple | None
    stalls: dict | None
    unstable: bool
    seconds: float


async def _phases(harness: "HarnessDriver", point: Point, watchdog: "Watchdog",
                  terminals: int, copies: int | None) -> _Run:
    """Warm-up, measurement, the measured packets' delivery while traffic goes on, then the
    drain with the sources off."""
    started, chunk = time.perf_counter(), point.chunk
    harness.set("enable", 1)
    await watchdog.cycles(point.warmup, chunk)
    stalls_before = harness.stalls()
    links_before = snapshot(harness, point.count_links)
    harness.set("measure", 1)
    await watchdog.cycles(point.measure, chunk)
    harness.set("measure", 0)
    window = harness.read()
    links_window = snapshot(harness, point.count_links)
    stalls = harness.stalls()
    if stalls is not None:
        stalls = {reason: count - stalls_before[reason] for reason, count in stalls.items()}
    spent, unstable = 0, False
    # Traffic goes on until the measured packets have arrived (and, for all-pairs, until
    # every source has sent to every other terminal).
    everything = terminals * (terminals - 1) if point.pattern == "all-pairs" else 0
    values = window
    while True:
        # (A measured broadcast is done with once injected: its copies drain below.)
        if values["received_measured"] + values.get("broadcasts_measured", 0) >= \
                window["created_measured"] and values["created"] >= everything:
            break
        if spent >= point.drain_limit:
            # Beyond saturation some measured packets may starve while traffic goes on: stop
            # creating and let the network drain (a deadlock is caught there).
            unstable = True
            break
        values = await watchdog.cycles(chunk, chunk)
        spent += chunk
    harness.set("enable", 0)
    # A duplicated packet is injected twice and received twice.
    duplicates = values["faults"] if point.fault == "duplicate" else 0
    while True:  # everything drains
        values = harness.read()
        packets, missing = in_flight(values, copies)
        if packets == 0 and values["injected"] == values["created"] + duplicates \
                and missing <= 0:
            break
        await watchdog.cycles(chunk, chunk)
    return _Run(window, values, links_before, links_window, stalls, unstable,
                time.perf_counter() - started)


def _errors(values: dict, copies: int | None, point: Point) -> dict:
    """The sinks' error counts of a drained run; raises :class:`TrafficError` on any unless
    the point injects a fault (then they are its result)."""
    errors = {name: values[name] for name in ERRORS if values[name]}
    # Adaptive routing: the sums of packet hashes sent and received (both 0 otherwise).
    if (values["sent_hash"] - values["received_hash"]) % (1 << 32):
        errors["checksum"] = 1
    missing = in_flight(values, copies)[1]
    if missing:  # (negative: copies beyond the broadcasts' count)
        errors["broadcast_copies"] = abs(missing)
    if errors and point.fault == "none":
        raise TrafficError(f"the sinks counted errors: {errors}")
    return errors


def _measured(harness: "HarnessDriver", point: Point, manifest: Manifest, mix: LengthMix,
              copies: int | None, run: _Run) -> dict:
    """A point's result (see the module docstring) from its run's counters."""
    window, values, terminals = run.window, run.values, manifest.pe_count
    errors = _errors(values, copies, point)
    hops, loads = harness.hops(), None
    if point.count_links:
        # Under all-pairs, every packet of the run; otherwise the measured cycles.
        start, end, cycles = ((None, snapshot(harness, True), values["now"] - 2)
                              if point.pattern == "all-pairs"
                              else (run.links_before, run.links_window, point.measure))
        start = start or (0, None if end[1] is None else [0] * len(end[1]))
        loads = link_loads(manifest, start[0], end[0], cycles)
        if end[1] is not None:
            check_link_loads(loads, start[1], end[1])
    length = mix.mean()
    measured = window["created_measured"] - values.get("broadcasts_measured", 0)
    cycles = values["now"] - 2
    # The sums of cycles (see twinnet.hdl.traffic) give the latencies' sums, the measured
    # packets all delivered.
    latency_sum = (values["ejected_time_sum"] - values["injected_time_sum"]) % (1 << SUM_BITS)
    total_latency_sum = latency_sum + values["queued_sum"]
    return dict(
        pattern=point.pattern, rate=point.rate, seed=point.seed,
        injection=point.injection, fault=point.fault, faults_applied=values["faults"],
        errors=errors,
        eject_ready=point.eject_ready, stall_bursts=point.stall_bursts,
        refused=values["refused"],
        lengths=[[lo, hi, weight] for (lo, hi), weight in zip(mix.classes, mix.weights)],
        mean_length=length,
        offered_flits_per_pe_cycle=point.rate * length,
        created_flits_per_pe_cycle=window["created_measured"] * length / terminals
        / point.measure,
        accepted_flits_per_pe_cycle=window["flits_measured"] / terminals / point.measure,
        overflowed=values["overflowed"], created=values["created"],
        packets=values["received"], measured_packets=measured,
        mean_latency=latency_sum / measured if measured else None,
        mean_total_latency=total_latency_sum / measured if measured else None,
        max_latency=harness.latency_max() if measured else None,
        latency_histogram=harness.histogram(),
        injected_lengths=harness.lengths(),
        unstable=run.unstable, packet_hops=hops,
        mean_hops=hops / values["received"] if hops is not None and values["received"] else None,
        max_hops=harness.max_hops() if values["received"] else None,
        **({} if copies is None else {
            "broadcast_fraction": point.broadcast_fraction, "broadcasts_sent": values["broadcasts"],
            "broadcast_copies_delivered": values["copies"], "copies_per_broadcast": copies}),
        **({} if run.stalls is None else {"stalls": run.stalls}),
        **({} if loads is None else {"link_loads": loads}),
        cycles=cycles, wall_seconds=run.seconds, cycles_per_second=cycles / run.seconds)


def trace_routes(manifest: Manifest) -> list[int]:
    """Per terminal, its route fields as a head flit holds them (the route sits in the head's
    lowest bits): the family's terminal digits (manifest ``traffic.digits``, least
    significant first) at their fields' offsets."""
    offsets = manifest.head_flit.offsets()
    routes = []
    for terminal in range(manifest.pe_count):
        value, rest = 0, terminal
        for field, radix in manifest.traffic.digits:
            rest, digit = divmod(rest, radix)
            value |= digit << offsets[field]
        routes.append(value)
    return routes


class TraceRecords:
    """The packets of a trace as they were delivered: each record of the program's
    ``record`` file (terminal, head word, head accepted, head out, tail out, hops) matched to
    its trace packet by its pair and sequence number (a pair's packets are numbered in the
    order of the trace, modulo the head's ``seq`` field)."""

    def __init__(self, manifest: Manifest, packets: list):
        fields = {field["name"]: (field["offset"], field["width"])
                  for field in manifest.head_flit.fields}
        self.source_field = fields["source"]
        payload_at, payload_width = fields["payload"]
        longest = manifest.max_packet_length
        self.seq_at = payload_at
        self.seq_bits = payload_width - 1 - max(1, (longest - 1).bit_length())
        self.packets = packets
        # Per (source, destination, sequence number modulo 2**seq_bits), the trace packets
        # not yet matched, in order.
        self.waiting: dict[tuple, list[int]] = {}
        counts: dict[tuple, int] = {}
        for index, packet in enumerate(packets):
            pair = (packet.source, packet.destination)
            seq = counts.get(pair, 0)
            counts[pair] = seq + 1
            key = (*pair, seq % (1 << self.seq_bits))
            self.waiting.setdefault(key, []).append(index)

    def match(self, terminal: int, word: int) -> int | None:
        """The index in the trace of the packet whose head ``word`` arrived at
        ``terminal`` (None: not one of the trace's)."""
        at, width = self.source_field
        source = (word >> at) & ((1 << width) - 1)
        seq = (word >> self.seq_at) & ((1 << self.seq_bits) - 1)
        found = self.waiting.get((source, terminal, seq))
        return found.pop(0) if found else None


async def run_trace(harness: HarnessDriver, point: dict, manifest: Manifest | dict) -> dict:
    """Replay a trace: ``point["trace"]``, its file (:mod:`twinnet.model.trace`);
    ``point["latencies"]``, where each packet's times go (``.csv`` or
    ``.json``, :func:`write_packet_times`); the point's ``eject_ready``, ``seed``,
    ``watchdog`` and ``chunk`` as for :func:`run_point`. Every source takes its trace
    packets once created, in order, each measured. Returns the summary; raises
    :class:`Deadlock` or :class:`TrafficError`. The program's own files (the packets for the
    sources, the records of the sinks) go to a temporary folder, removed after."""
    with tempfile.TemporaryDirectory(prefix="twinnet-trace-") as work:
        return await _replay(harness, point, Manifest.of(manifest), Path(work))


async def _replay(harness: HarnessDriver, point: dict, manifest: Manifest, work: Path) -> dict:
    """:func:`run_trace` with its temporary folder ``work``."""
    longest = manifest.max_packet_length
    settings = Point.from_dict({key: value for key, value in point.items()
                                if key in POINT_SETTINGS})
    packets = read_trace(point["trace"], manifest.pe_count, longest)
    out = Path(point["latencies"])
    scale = 1 << manifest.traffic.rate_bits
    routes = trace_routes(manifest)
    queued, records = work / "packets.in", work / "records"
    queued.write_text("".join(f"{p.source} {p.cycle} {routes[p.destination]} {p.length - 1}\n"
                              for p in packets))
    for name, value in (("enable", 0), ("rate", 0), ("onoff", 0), ("fault", 0),
                        ("pattern", PATTERNS.index("uniform")), ("hotspot_rate", 0),
                        ("seed", settings.seed), ("from_trace", 1), ("measure", 1),
                        ("refuse_rate", min(scale - 1,
                                            round((1 - settings.eject_ready) * scale))),
                        ("stall_max", 0), ("stall_start", 0)):
        harness.set(name, value)
    set_lengths(harness, LengthMix.fixed(longest), scale)
    if copies_per_broadcast(manifest) is not None:
        harness.set("broadcast_rate", 0)
    harness.load_trace(queued)
    harness.record(records)
    await harness.reset()
    started = time.perf_counter()
    patience = settings.watchdog + round(4 * longest / settings.eject_ready)
    watchdog = Watchdog(harness, patience, manifest)
    values = harness.read()
    while values["received"] < len(packets):
        if values["now"] > packets[-1].cycle + patience and \
                values["created"] == values["received"]:
            raise TrafficError(f"the trace's packets were not all taken by their sources: "
                               f"{values['created']} of {len(packets)} by cycle "
                               f"{values['now']}")
        values = await watchdog.cycles(settings.chunk, settings.chunk)
    seconds = time.perf_counter() - started
    harness.set("from_trace", 0)
    harness.close_record()
    errors = {name: values[name] for name in ERRORS if values[name]}
    if (values["sent_hash"] - values["received_hash"]) % (1 << 32):
        errors["checksum"] = 1
    if errors or values["received"] != len(packets):
        raise TrafficError(f"the trace's {len(packets)} packets: {values['received']} "
                           f"received, errors {errors}")
    matcher = TraceRecords(manifest, packets)
    rows = []
    for line in records.read_text().splitlines():
        terminal, word, injected, head_out, tail_out, hops = map(int, line.split())
        index = matcher.match(terminal, word)
        if index is None:
            raise TrafficError(f"a packet not of the trace arrived at PE {terminal}")
        rows.append((index, injected, head_out, tail_out, hops))
    times = packet_times(packets, rows)
    write_packet_times(out, times)
    latency_sum = (values["ejected_time_sum"] - values["injected_time_sum"]) % (1 << SUM_BITS)
    return dict(trace_packets=len(packets), packets=values["received"],
                mean_latency=latency_sum / len(packets),
                mean_total_latency=(latency_sum + values["queued_sum"]) / len(packets),
                mean_packet_latency=sum(t["latency"] for t in times) / len(times),
                max_packet_latency=max(t["latency"] for t in times),
                eject_ready=settings.eject_ready, cycles=values["now"] - 2,
                wall_seconds=seconds, cycles_per_second=(values["now"] - 2) / seconds,
                latencies=str(out))


def packet_times(packets: list, rows) -> list[dict]:
    """Per trace packet (``packets``), in the trace's order, its times from ``rows`` (trace
    index, head accepted, head out, tail out, hops): its line's fields and ``injected``,
    ``head_out``, ``tail_out`` (cycles), ``hops`` (links between routers), ``latency``
    (created → tail out: its source's queue included, as BookSim's packet latency) and
    ``network_latency`` (head accepted → tail out)."""
    times = [None] * len(packets)
    for index, injected, head_out, tail_out, hops in rows:
        times[index] = (injected, head_out, tail_out, hops)
    result = []
    for index, (packet, found) in enumerate(zip(packets, times)):
        if found is None:
            raise TrafficError(f"trace packet {index} ({packet.source} -> "
                               f"{packet.destination}, cycle {packet.cycle}) has no record")
        injected, head_out, tail_out, hops = found
        result.append({"packet": index, "cycle": packet.cycle, "source": packet.source,
                       "destination": packet.destination, "length": packet.length,
                       "injected": injected, "head_out": head_out, "tail_out": tail_out,
                       "hops": hops, "latency": tail_out - packet.cycle,
                       "network_latency": tail_out - injected})
    return result


#: The columns of a trace's per-packet times, in order.
TIME_COLUMNS = ("packet", "cycle", "source", "destination", "length", "injected", "head_out",
                "tail_out", "hops", "latency", "network_latency")


def write_packet_times(path: Path, times: list[dict]) -> None:
    """``times`` (:func:`packet_times`) to ``path``, whole or not at all: JSON (a list of
    objects) for ``.json``, else CSV with a header line."""
    if Path(path).suffix == ".json":
        text = json.dumps(times, indent=0)
    else:
        stream = io.StringIO(newline="")
        writer = csv.DictWriter(stream, TIME_COLUMNS)
        writer.writeheader()
        writer.writerows(times)
        text = stream.getvalue()
    output.replace_file(path, text)
