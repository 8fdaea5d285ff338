"""Synthetic traffic patterns over numbered terminals ``0 … P-1``, for any family.

The patterns are BookSim's set (Dally and Towles, *Principles and Practices of
Interconnection Networks*, §3.2), defined on the terminal number so that every family whose
terminals are numbered can use them. ``b`` is the number of bits of a terminal number,
``b = ceil(log2 P)``. On a power-of-two P each is the textbook definition; on other sizes:

- ``uniform``: each packet to a terminal drawn uniformly from the others (any P);
- ``bit-complement``: ``d = P - 1 - s`` (the complement of every bit when P = 2**b; a
  permutation for any P);
- ``transpose``: swap the high and low halves of the b bits (b even; for odd b the high half
  has the extra bit), ``d = (lo << ceil(b/2)) | hi``;
- ``bit-reverse``: the b bits in reverse order;
- ``shuffle``: the b bits rotated left by one;
- ``tornado``: half way round the terminal ring less one, ``d = (s + ceil(P/2) - 1) mod P``
  (BookSim's tornado applied to one ring of P terminals);
- ``neighbor``: ``d = (s + 1) mod P``;
- ``hotspot``: with probability ``hotspot_fraction`` to terminal ``hotspot``, else uniform;
- ``random-permutation``: a random derangement of the terminals fixed by a seed;
- ``all-pairs``: in round j = 1 … P-1, terminal s sends one packet to ``(s + j) mod P``.

For the bit patterns (transpose, bit-reverse, shuffle) on a P that is not a power of two, a
result ``>= P`` is reduced modulo P, so some terminals receive from two sources and the pattern
is not a permutation. A terminal whose destination is itself sends nothing under the
permutation patterns (e.g. the diagonal of transpose): :func:`fixed_destination` returns None.
"""

import functools
import random

from .widths import index_width

PATTERNS = ("uniform", "transpose", "bit-complement", "bit-reverse", "shuffle", "tornado",
            "neighbor", "hotspot", "random-permutation", "all-pairs")
#: Patterns in which each source always sends to the same destination.
FIXED = ("transpose", "bit-complement", "bit-reverse", "shuffle", "tornado", "neighbor",
         "random-permutation")


def fixed_destination(pattern: str, terminals: int, source: int, *, seed: int = 0) -> int | None:
    """The destination of ``source`` under a fixed pattern (one of :data:`FIXED`), or None when
    it is ``source`` itself (the terminal then sends nothing)."""
    if pattern not in FIXED:
        raise ValueError(f"pattern must be one of {', '.join(FIXED)}, not {pattern!r}")
    if not 0 <= source < terminals:
        raise ValueError(f"source {source} is not a terminal of 0 … {terminals - 1}")
    width = index_width(terminals)  # b: bits of a terminal number
    if pattern == "bit-complement":
        destination = terminals - 1 - source
    elif pattern == "transpose":
        low = width // 2
        high = width - low
        destination = ((source & ((1 << low) - 1)) << high) | (source >> low)
    elif pattern == "bit-reverse":
        destination = int(format(source, f"0{width}b")[::-1], 2)
    elif pattern == "shuffle":
        destination = ((source << 1) | (source >> (width - 1))) & ((1 << width) - 1)
    elif pattern == "tornado":
        destination = source + (terminals + 1) // 2 - 1
    elif pattern == "neighbor":
        destination = source + 1
    else:
        destination = random_permutation(terminals, seed)[source]
    destination %= terminals
    return None if destination == source else destination


@functools.lru_cache(maxsize=8)
def random_permutation(terminals: int, seed: int = 0) -> tuple[int, ...]:
    """A derangement of ``0 … P-1`` (no terminal maps to itself) drawn with ``seed``: a random
    cyclic order, each terminal sending to the next one in it. (Kept once drawn: every
    terminal's destination reads it, and drawing it is O(P).)"""
    order = list(range(terminals))
    random.Random(seed).shuffle(order)
    result = [0] * terminals
    for index, terminal in enumerate(order):
        result[terminal] = order[(index + 1) % terminals]
    return tuple(result)


def destination_distribution(pattern: str, terminals: int, source: int, *, hotspot: int = 0,
                             hotspot_fraction: float = 0.1, seed: int = 0) -> dict[int, float]:
    """Destination → probability for one packet of ``source`` (the all-pairs rounds visit every
    other terminal once: uniform over them). Empty when the source sends nothing."""
    others = [d for d in range(terminals) if d != source]
    if pattern in ("uniform", "all-pairs"):
        return {d: 1 / len(others) for d in others}
    if pattern == "hotspot":
        spread = {d: (1 - hotspot_fraction) / len(others) for d in others}
        if hotspot != source:
            spread[hotspot] = spread.get(hotspot, 0) + hotspot_fraction
        else:  # the hot spot itself sends uniformly
            spread = {d: 1 / len(others) for d in others}
        return spread
    destination = fixed_destination(pattern, terminals, source, seed=seed)
    return {} if destination is None else {destination: 1.0}


def channel_loads(paths, terminals: int, pattern: str, **options) -> dict:
    """Expected packets per cycle on every channel when each terminal offers one packet per
    cycle under ``pattern``: ``paths(s, d)`` lists the channels (any hashable) a packet from
    ``s`` to ``d`` holds. The largest load bounds the saturation throughput: at most
    ``1 / max_load`` packets per terminal per cycle (a channel carries one flit per cycle, so
    with packets of L flits the bound in flits per terminal per cycle is the same number)."""
    loads: dict = {}
    for source in range(terminals):
        for destination, share in destination_distribution(pattern, terminals, source,
                                                           **options).items():
            for channel in paths(source, destination):
                loads[channel] = loads.get(channel, 0.0) + share
    return loads


def throughput_bound(paths, terminals: int, pattern: str, *, balanced: bool = False,
                     **options) -> float | None:
    """``1 / (largest channel load)``, capped at 1 (a terminal port carries one flit per
    cycle); None when no packet crosses a channel.

    ``balanced``: for a routing that spreads packets over several minimal paths (adaptive
    routing), ``paths`` gives one minimal path per pair and the bound is ``1 / (mean channel
    load)`` over the channels those paths use: no routing of minimal paths loads its busiest
    channel less than the mean (on the symmetric networks of the papers the paths use every
    channel)."""
    loads = channel_loads(paths, terminals, pattern, **options)
    peak = max(loads.values(), default=0.0)
    if balanced and peak:
        peak = sum(loads.values()) / len(loads)
    return None if peak == 0 else min(1.0, 1 / peak)


#: Most classes of a packet-length mix (the traffic sources hold one set of registers each).
LENGTH_CLASSES = 4


class LengthMix:
    """Packet lengths drawn independently per packet, as BookSim's ``packet_size`` and
    ``packet_size_rate``: up to :data:`LENGTH_CLASSES` classes, each a length or a range of
    lengths ``lo-hi`` (uniform within), with a weight (relative; default 1 each).

    Parameters:
        classes: ``(lo, hi)`` per class, 1 <= lo <= hi.
        weights: one non-negative number per class, not all 0 (default: equal).

    Raises ``ValueError`` for anything else, naming the value.
    """

    def __init__(self, classes, weights=None):
        classes = [tuple(c) for c in classes]
        if not 1 <= len(classes) <= LENGTH_CLASSES:
            raise ValueError(f"{len(classes)} packet lengths or ranges: must be 1 to "
                             f"{LENGTH_CLASSES}")
        for lo, hi in classes:
            if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
                raise ValueError(f"packet length {lo}-{hi}: must be a length of at least 1, "
                                 "or a range lo-hi with 1 <= lo <= hi")
        weights = [1] * len(classes) if weights is None else list(weights)
        if len(weights) != len(classes):
            raise ValueError(f"{len(weights)} weights for {len(classes)} packet lengths: give "
                             "one weight per length or range")
        for weight in weights:
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                    or not weight >= 0 or weight == float("inf"):
                raise ValueError(f"weight {weight}: must be a number of at least 0")
        if not sum(weights):
            raise ValueError("the weights are all 0: at least one must be above 0")
        self.classes = tuple(classes)
        self.weights = tuple(float(w) for w in weights)

    @classmethod
    def parse(cls, lengths: str, weights: str | None = None) -> "LengthMix":
        """From text: ``lengths`` comma-separated lengths and ranges (``4``, ``1,5``,
        ``1-8``, ``1,4-8``), ``weights`` comma-separated numbers (``1,1``, ``0.9,0.1``)."""
        classes = []
        for item in str(lengths).split(","):
            item = item.strip()
            lo, _, hi = item.partition("-")
            try:
                classes.append((int(lo), int(hi) if hi else int(lo)))
            except ValueError:
                raise ValueError(f"{item!r} is not a length or a range lo-hi of lengths") \
                    from None
        parsed = None
        if weights is not None:
            parsed = []
            for item in str(weights).split(","):
                try:
                    parsed.append(float(item))
                except ValueError:
                    raise ValueError(f"weight {item.strip()!r} is not a number") from None
        return cls(classes, parsed)

    @classmethod
    def fixed(cls, length: int) -> "LengthMix":
        """Every packet ``length`` flits long."""
        return cls([(length, length)])

    @property
    def longest(self) -> int:
        return max(hi for _, hi in self.classes)

    def shares(self) -> dict[int, float]:
        """Length → the share of packets of that length."""
        total = sum(self.weights)
        shares: dict[int, float] = {}
        for (lo, hi), weight in zip(self.classes, self.weights):
            for length in range(lo, hi + 1):
                shares[length] = shares.get(length, 0.0) + weight / total / (hi - lo + 1)
        return dict(sorted(shares.items()))

    def mean(self) -> float:
        """Mean flits per packet."""
        return sum(length * share for length, share in self.shares().items())

    def draw(self, rng: random.Random) -> int:
        """One length, drawn with ``rng``."""
        lo, hi = rng.choices(self.classes, weights=self.weights)[0]
        return rng.randint(lo, hi)

    def cuts(self, scale: int) -> list[tuple[int, int, int]]:
        """The mix as the hardware sources draw it: ``(lo, hi, cut)`` for each of the
        :data:`LENGTH_CLASSES` classes, ``cut`` the cumulative share of the classes up to it
        times ``scale`` (a class is taken when a uniform draw below ``scale`` falls below its
        cut and no earlier one's; the last class of the mix takes the rest). Classes beyond the
        mix repeat its last and are never drawn."""
        total, cumulative, cuts = sum(self.weights), 0.0, []
        for k in range(LENGTH_CLASSES):
            index = min(k, len(self.classes) - 1)
            if k < len(self.classes):
                cumulative += self.weights[k]
            cut = scale if k >= len(self.classes) - 1 else round(cumulative / total * scale)
            cuts.append((*self.classes[index], cut))
        return cuts

    def text(self) -> tuple[str, str]:
        """The mix as ``(lengths, weights)`` text, as :meth:`parse` reads it."""
        lengths = ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.classes)
        return lengths, ",".join(f"{w:g}" for w in self.weights)

    def __eq__(self, other):
        return isinstance(other, LengthMix) and (self.classes, self.weights) == (
            other.classes, other.weights)

    def __repr__(self):
        lengths, weights = self.text()
        return f"LengthMix({lengths!r}, {weights!r})"
