"""Packet traces: what a workload sends, packet by packet, to replay on a network.

A trace is a text file of one packet per line, four integers separated by spaces or tabs:

    cycle source destination length

``cycle`` is when the packet is created at its source (0 to :data:`MAX_TRACE_CYCLE`, lines
in order of cycle: never decreasing), ``source`` and ``destination`` are PE numbers as the
network's manifest numbers them (0 … P-1; a PE may send to itself), ``length`` is in flits (1
to the network's longest packet). ``#`` starts a comment, to the end of its line; blank lines
are ignored. The same format is what :func:`trace_text` writes, so that a trace can be made
from a pattern (:func:`generate_trace`) and replayed, or edited by hand.

:func:`read_trace` checks every line and stops at the first bad one with a
:class:`TraceError` naming the file, the line number and what is wrong.
"""

import heapq
import math
import random
import re
from pathlib import Path
from typing import NamedTuple

from .traffic import FIXED, LengthMix, destination_distribution, fixed_destination

#: The header :func:`trace_text` writes.
HEADER = "# twinnet packet trace: cycle source destination length (flits)"
#: The most packets a trace may hold (its packets are held in memory).
MAX_TRACE_PACKETS = 1_000_000
#: The last cycle a trace's packet may be created in: a replay simulates every cycle up to it,
#: and a million cycles of a large network take half an hour (longer runs belong to bench/).
MAX_TRACE_CYCLE = 999_999
#: A field of a line: decimal digits only (``int`` alone would also take ``1_000`` or
#: digits of other scripts).
FIELD = re.compile(r"-?[0-9]+")


class TracePacket(NamedTuple):
    """One packet of a trace."""

    cycle: int
    source: int
    destination: int
    length: int


class TraceError(ValueError):
    """A bad trace: the message names the file and line."""


class RateError(ValueError):
    """A rate :func:`generate_trace` cannot draw a trace at."""


def read_trace(path, terminals: int, longest: int) -> list[TracePacket]:
    """The packets of the trace at ``path`` for a network of ``terminals`` PEs whose longest
    packet is ``longest`` flits. Raises :class:`TraceError` naming the file and line of the
    first bad one (a line that is not four integers, an unknown PE, a length out of range, a
    cycle before the line above's), or a file that cannot be read or holds no packet."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else \
            "not a text file"
        raise TraceError(f"{path}: cannot be read: {reason}") from None
    packets, last = [], 0
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{path}:{number}"
        if len(words) != 4:
            raise TraceError(f"{where}: {len(words)} fields; a line is 'cycle source "
                             "destination length' (four integers)")
        bad = next((word for word in words if not FIELD.fullmatch(word)), None)
        if bad is not None:
            raise TraceError(f"{where}: {bad!r} is not an integer; a line is 'cycle source "
                             "destination length' (decimal digits)")
        cycle, source, destination, length = (int(word) for word in words)
        if not 0 <= cycle <= MAX_TRACE_CYCLE:
            raise TraceError(f"{where}: cycle {cycle}: must be from 0 to {MAX_TRACE_CYCLE:,}")
        if cycle < last:
            raise TraceError(f"{where}: cycle {cycle} comes after cycle {last}: a trace is in "
                             "order of cycle")
        for name, pe in (("source", source), ("destination", destination)):
            if not 0 <= pe < terminals:
                raise TraceError(f"{where}: {name} {pe} is not a PE of this network: PEs are "
                                 f"0 to {terminals - 1}")
        if not 1 <= length <= longest:
            raise TraceError(f"{where}: length {length} flits: must be from 1 to {longest} "
                             f"(the network's --max-packet-length)")
        if len(packets) == MAX_TRACE_PACKETS:
            raise TraceError(f"{where}: more than {MAX_TRACE_PACKETS:,} packets")
        packets.append(TracePacket(cycle, source, destination, length))
        last = cycle
    if not packets:
        raise TraceError(f"{path}: holds no packet")
    return packets


def trace_text(packets, *, comment: str | None = None) -> str:
    """``packets`` (:class:`TracePacket`, in order of cycle) in the trace format, after
    :data:`HEADER` and ``comment`` (a line of its own)."""
    lines = [HEADER] + ([f"# {comment}"] if comment else [])
    lines += [f"{p.cycle} {p.source} {p.destination} {p.length}" for p in packets]
    return "\n".join(lines) + "\n"


def generate_trace(pattern: str, terminals: int, rate: float, packets: int, mix: LengthMix,
                   *, seed: int = 1, hotspot: int = 0,
                   hotspot_fraction: float = 0.1) -> list[TracePacket]:
    """``packets`` packets under ``pattern`` (one of
    :data:`twinnet.model.traffic.PATTERNS` but all-pairs): each cycle each source creates a
    packet with probability ``rate`` (a Bernoulli trial, as twinnet's traffic sources do),
    to a destination the pattern gives (uniform: another PE at random; a source whose fixed
    pattern leaves it without a destination sends nothing), of a length drawn from ``mix``,
    all drawn with ``seed``."""
    if pattern == "all-pairs":
        raise ValueError("all-pairs sends one packet per pair: write it by hand or from "
                         "twinnet sim --traffic all-pairs")
    if not 0 < rate <= 1:
        raise RateError("must be above 0 and at most 1 packet per PE per cycle")
    rng = random.Random(seed)
    senders = list(range(terminals))
    fixed = {}
    if pattern in FIXED:
        fixed = {s: fixed_destination(pattern, terminals, s, seed=seed) for s in senders}
        senders = [s for s in senders if fixed[s] is not None]
    if not senders:
        raise ValueError(f"under {pattern} on {terminals} PEs no PE sends")
    spread = {}
    if pattern == "hotspot":
        spread = {s: destination_distribution(pattern, terminals, s, hotspot=hotspot,
                                              hotspot_fraction=hotspot_fraction)
                  for s in senders}
    # Each source's packets are Bernoulli trials, one per cycle: the gaps between them are
    # geometric, drawn directly so that a low rate costs no more than a high one.
    gap = math.log1p(-rate) if rate < 1 else None
    made, due = [], []

    def schedule(source: int, after: int) -> None:
        wait = 0.0 if gap is None else math.log(1.0 - rng.random()) / gap
        if after + wait > MAX_TRACE_CYCLE:
            raise RateError(f"{packets:,} packets on {len(senders)} sending PEs would run "
                            f"past cycle {MAX_TRACE_CYCLE:,} (a trace's last); the rate must "
                            f"be at least about {packets / (len(senders) * MAX_TRACE_CYCLE):.3g}"
                            " packets per PE per cycle (or make fewer --packets)")
        heapq.heappush(due, (after + math.floor(wait), source))

    for source in senders:
        schedule(source, 0)
    while len(made) < packets:
        cycle, source = heapq.heappop(due)
        if pattern in FIXED:
            destination = fixed[source]
        elif pattern == "hotspot":
            choices = spread[source]
            destination = rng.choices(list(choices), weights=list(choices.values()))[0]
        else:
            destination = rng.randrange(terminals - 1)
            destination += destination >= source
        made.append(TracePacket(cycle, source, destination, mix.draw(rng)))
        schedule(source, cycle + 1)
    return made
