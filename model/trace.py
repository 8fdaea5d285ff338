"""Packet traces: what a workload sends, packet by packet, to replay on a network.

A trace is a text file of one packet per line, four integers separated by spaces or tabs:

    cycle source destination length

``cycle`` is when the packet is created at its source (0 or more, lines in order of cycle:
never decreasing), ``source`` and ``destination`` are PE numbers as the network's manifest
numbers them (0 … P-1; a PE may send to itself), ``length`` is in flits (1 to the network's
longest packet). ``#`` starts a comment, to the end of its line; blank lines are ignored. The
same format is what :func:`write_trace` writes, so that a trace can be made from a pattern
(:func:`generate_trace`) and replayed, or edited by hand.

:func:`read_trace` checks every line and stops at the first bad one with a
:class:`TraceError` naming the file, the line number and what is wrong.
"""

import random
from pathlib import Path
from typing import NamedTuple

from .traffic import FIXED, LengthMix, destination_distribution, fixed_destination

#: The header :func:`write_trace` writes.
HEADER = "# twinnet packet trace: cycle source destination length (flits)"
#: The most packets a trace may hold (its packets are held in memory).
MAX_TRACE_PACKETS = 10_000_000


class TracePacket(NamedTuple):
    """One packet of a trace."""

    cycle: int
    source: int
    destination: int
    length: int


class TraceError(ValueError):
    """A bad trace: the message names the file and line."""


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
        try:
            cycle, source, destination, length = (int(word, 10) for word in words)
        except ValueError:
            bad = next(word for word in words if not _integer(word))
            raise TraceError(f"{where}: {bad!r} is not an integer; a line is 'cycle source "
                             "destination length'") from None
        if cycle < 0:
            raise TraceError(f"{where}: cycle {cycle} is negative")
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


def _integer(word: str) -> bool:
    try:
        int(word, 10)
    except ValueError:
        return False
    return True


def write_trace(path, packets, *, comment: str | None = None) -> None:
    """Write ``packets`` (:class:`TracePacket`, in order of cycle) to ``path`` in the trace
    format, after :data:`HEADER` and ``comment`` (a line of its own)."""
    lines = [HEADER] + ([f"# {comment}"] if comment else [])
    lines += [f"{p.cycle} {p.source} {p.destination} {p.length}" for p in packets]
    Path(path).write_text("\n".join(lines) + "\n")


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
        raise ValueError(f"rate {rate}: must be above 0 and at most 1")
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
    made, cycle = [], 0
    while len(made) < packets:
        for source in senders:
            if len(made) == packets or rng.random() >= rate:
                continue
            if pattern in FIXED:
                destination = fixed[source]
            elif pattern == "hotspot":
                choices = spread[source]
                destination = rng.choices(list(choices), weights=list(choices.values()))[0]
            else:
                destination = rng.randrange(terminals - 1)
                destination += destination >= source
            made.append(TracePacket(cycle, source, destination, mix.draw(rng)))
        cycle += 1
    return made
