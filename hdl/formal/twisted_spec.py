"""The twisted torus's route compute written again from 004's definitions: its minimal routing
record taken in dimension order, and the escape scheme's VC and bubble flag.

004 §II: the peripheral link of dimension J from ``x_J = d_J - 1`` lands on ``x_J = 0`` and
moves every dimension K it twists by ``t_JK`` (mod ``d_K``). On a node-symmetric torus (004's
Theorem: no dimension both twists and is twisted) a path of ``r_J`` signed hops in a twisting
dimension J from ``a`` crosses J's peripheral link ``n_J = floor((a_J + r_J) / d_J)`` times
(net), whatever the order of the hops, so ``r`` leads from ``a`` to ``b`` exactly when

- ``r_J = b_J - a_J + n_J d_J`` in every twisting dimension J, and
- ``r_K = b_K - a_K - sum_J n_J t_JK`` (mod ``d_K``) in every other dimension K.

With ``u_J = (b_J - a_J) mod d_J`` and ``w_J = [b_J < a_J]`` (so ``b_J - a_J = u_J - w_J
d_J``), the records are ``r_J = u_J - c_J d_J`` for an integer image ``c_J`` (``n_J = w_J -
c_J``) and ``r_K = (b_K - a_K + sum_J (c_J - w_J) t_JK) mod d_K`` taken as the ring offset
nearest 0 (exactly half goes +). A packet follows a shortest record, first dimension first;
of equally short records the first of the images ``0, 1, -1, 2`` of each twisting dimension
(the first twisting dimension's varying slowest) is taken: the tie rule the route compute and
the model document (:mod:`twinnet.hdl.twisted_route`).

The specification searches more images than those four: every ``c_J`` whose record could be
shorter than the record of images 0 (which is at most ``sum_J (d_J - 1) + sum_K floor(d_K /
2)``), after the four in tie order. A proof against it therefore also shows that the four
images the route compute tries hold a shortest record, for every pair of the size proven.

The escape scheme (:mod:`twinnet.hdl.ring_escape`, :mod:`twinnet.model.twisted_network`):
a packet arriving on input ``q`` travels toward ``opposite(q)`` and goes straight on when it
leaves in that dimension and direction; the hop that brought it wrapped (crossed its
dimension's peripheral link, the dateline) when it stands at coordinate 0 travelling +, or
``d - 1`` travelling -.

- ``bubble``: VC 0; a move onto a link that does not go straight on (a turn, an injection)
  enters a ring: bubble flag set;
- ``dateline``: VC 1 when going straight on after arriving on VC 1 or over the dateline, else
  VC 0; no bubble;
- ``none``: VC 0, no bubble.

With more VCs per link than the scheme's own, every VC (with the dateline, every pair ``2c,
2c + 1``) is a copy of it: straight on, the packet's own copy (its VC; the pair's VC 1 by the
rule above); entering a ring, the first VC of every copy.

Ejection: the PE port the header's ``pe`` names (the only one with one PE per router), VC 0,
no bubble. Malformed: a destination coordinate ``>= d``, or a PE ``>=`` the router's PE
ports.
"""

import itertools
from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Mux, signed

from twinnet.model.twisted_network import port_label, port_move

from .spec_common import ExpectedRoute, ahead, named, reduce

#: The images of a twisting dimension in tie order (the route compute's documented order).
TIE_ORDER = (0, 1, -1, 2)


def image_range(radices, twisting) -> dict:
    """Per twisting dimension J, the images ``c`` a shortest record may take: those in
    :data:`TIE_ORDER` and every other ``c`` whose ``|r_J|`` can be below the longest record of
    images 0, ``sum_J (d_J - 1) + sum_K floor(d_K / 2)`` (``min |u - c d| = (c - 1) d + 1``
    for ``c >= 1``, ``-c d`` for ``c <= 0``)."""
    bound = sum(d - 1 if dim in twisting else d // 2 for dim, d in enumerate(radices))
    ranges = {}
    for j in twisting:
        d = radices[j]
        extra = []
        for size in range(1, bound + 2):
            for c in (1 + size, -size):
                least = (c - 1) * d + 1 if c >= 1 else -c * d
                if least < bound and c not in TIE_ORDER:
                    extra.append(c)
        ranges[j] = (*TIE_ORDER, *extra)
    return ranges


def _candidates(twisting, ranges):
    """Every choice of images, the tie order's products first (in product order), then the
    others."""
    first = list(itertools.product(TIE_ORDER, repeat=len(twisting)))
    rest = [choice for choice in itertools.product(*(ranges[j] for j in twisting))
            if choice not in first]
    return first + rest


@dataclass(frozen=True)
class _Difference:
    """The destination less the router, per dimension: ``u`` (twisting dimensions, ``(b - a)
    mod d``), ``w`` (their carries, ``b < a``), ``base`` (the others, ``(b - a) mod d``);
    with the torus's ``radices``, ``twists`` (``t_JK mod d_K``), the signals' ``width`` and
    the input port ``p`` (for names)."""

    u: dict
    w: dict
    base: dict
    radices: tuple
    twists: list
    width: int
    p: int


def _record(m, v: _Difference, index: int, choice) -> tuple[list, object]:
    """The record of images ``choice`` (one per twisting dimension) and its length."""
    images = dict(zip(sorted(v.u), choice))  # the twisting dimensions, in order
    record = []
    for dim, d in enumerate(v.radices):
        name = f"spec_c{index}_r{dim}_{v.p}"
        if dim in images:
            record.append(named(m, v.u[dim] - images[dim] * d, name, signed(v.width)))
            continue
        total, terms = v.base[dim], 1
        for j, k, t in v.twists:
            if k == dim:  # (c_J - w_J) t_JK mod d_K: a constant for each carry w_J
                total = total + Mux(v.w[j], ((images[j] - 1) * t) % d, (images[j] * t) % d)
                terms += 1
        value = reduce(m, named(m, total, f"{name}_sum", signed(v.width)), d, terms, name,
                       v.width)
        record.append(named(m, Mux(value * 2 > d, value - d, value), name, signed(v.width)))
    length = named(m, sum((abs(entry) for entry in record), Const(0, v.width)),
                   f"spec_c{index}_length_{v.p}", signed(v.width + 2))
    return record, length


def _shortest(m, rc, here, there):
    """The first shortest record (see the module docstring)."""
    topology = rc.network.topology
    radices, p = topology.radices, rc.port_index
    twists = [(j, k, t % radices[k]) for j, k, t in topology.twists]
    twisting = sorted({j for j, _, _ in twists})
    ranges = image_range(radices, twisting)
    reach = max(abs(c) for c in itertools.chain(*ranges.values())) if ranges else 0
    width = (max(radices) * (reach + 4 * len(twists) + 2)).bit_length() + 2
    u, w, base = {}, {}, {}
    for dim, d in enumerate(radices):
        offset = named(m, ahead(there[dim], here[dim], d), f"spec_u{dim}_{p}", signed(width))
        (u if dim in twisting else base)[dim] = offset
        if dim in twisting:
            w[dim] = named(m, there[dim] < here[dim], f"spec_w{dim}_{p}", 1)
    v = _Difference(u, w, base, radices, twists, width, p)
    best, best_length = None, None
    for index, choice in enumerate(_candidates(twisting, ranges)):
        record, length = _record(m, v, index, choice)
        if best is None:
            best, best_length = record, length
            continue
        shorter = named(m, length < best_length, f"spec_c{index}_shorter_{p}", 1)
        best = [named(m, Mux(shorter, new, old), f"spec_c{index}_best{dim}_{p}", signed(width))
                for dim, (new, old) in enumerate(zip(record, best))]
        best_length = named(m, Mux(shorter, length, best_length),
                            f"spec_c{index}_best_length_{p}", signed(width + 2))
    return best


def twisted_spec(m, rc, in_port: int) -> ExpectedRoute:
    """Dimension-order routing over the twisted torus's shortest record, with the escape
    scheme's VC and bubble flag (module docstring)."""
    network = rc.network
    radices = network.topology.radices
    n = len(radices)
    here = [rc.node_static[f"o{dim}"] for dim in range(n)]
    there = [rc.header[f"o{dim}"] for dim in range(n)]
    assumptions = [c < d for c, d in zip(here, radices)]
    malformed = Cat(b >= d for b, d in zip(there, radices)).any()
    # The PE ports by number: "PE" alone, or "PE0", "PE1", ... wherever they stand.
    count = sum(label.startswith("PE") for label in rc.ports)
    pes = ([rc.ports.index("PE")] if count == 1 else
           [rc.ports.index(f"PE{pe}") for pe in range(count)])
    if len(pes) > 1:
        malformed = malformed | (rc.header.pe >= len(pes))
    record = _shortest(m, rc, here, there)
    local = {label: index for index, label in enumerate(rc.ports)}
    # The move: the first dimension with hops left, in their direction.
    first, earlier = [], Const(0, 1)
    for dim in range(n):
        first.append((record[dim] != 0) & ~earlier)
        earlier = earlier | (record[dim] != 0)
    # Arrived: the PE port the header names.
    port = Const(pes[0], range(max(2, len(rc.ports))))
    for pe, index in enumerate(pes[1:], start=1):
        port = Mux(rc.header.pe == pe, index, port)
    for dim in reversed(range(n)):
        port = Mux(first[dim], Mux(record[dim] > 0, local[port_label(dim, 1)],
                                   local[port_label(dim, -1)]), port)
    to_link = earlier
    in_label = rc.ports[in_port]
    straight = wrapped = Const(0, 1)
    if in_port not in pes:
        # Arriving on input "X-", the packet travels X+.
        dim, sign = port_move(in_label)
        sign = -sign
        straight = first[dim] & ((record[dim] > 0) if sign > 0 else (record[dim] < 0))
        wrapped = here[dim] == (0 if sign > 0 else radices[dim] - 1)
    width, count = rc.config.max_vc_count, network.vc_count
    own = 2 if network.escape == "dateline" else 1
    mask, bubble = Const(1, width), Const(0, 1)
    # Entering a ring (a turn, an injection): the first VC of any copy of the scheme.
    entry = Const(sum(1 << (own * c) for c in range(count // own)), width)
    if network.escape == "bubble":
        bubble = to_link & ~straight
        kept = Const(1, width) << rc.in_vc
        mask = Mux(to_link, Mux(straight, kept, entry), mask)
    elif network.escape == "dateline":
        level = (rc.in_vc % 2 == 1) | wrapped
        kept = Const(1, width) << (rc.in_vc // 2 * 2 + level)
        mask = Mux(to_link, Mux(straight, kept, entry), mask)
    return ExpectedRoute(port, mask, bubble, malformed, assumptions)

