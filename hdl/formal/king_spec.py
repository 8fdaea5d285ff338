"""The king family's route compute written again from 002's definitions: the deterministic
move (the escape move under adaptive routing), the escape scheme's VC and bubble flag, and the
grades of hop-by-hop and 2S hop-by-hop routing.

- The move (002 §2–3): DOR on M and T (x while ``dx != 0``, then y); the diagonal routing on
  DM and DT (offsets of one sign: x while ``|dx| > |dy|``, z when equal, y while smaller;
  otherwise DOR), on DT over 002 Alg. 1's shortest wrap-around image (the first on a tie);
  Knaive on KM and KT (as diagonal for one sign; for opposite signs t instead of z). On a
  torus the offset is the ring offset, exactly half going +. Arrived: the PE port the header
  names. Under adaptive routing the escape VCs take the kind's deterministic move.
- The escape scheme (:mod:`twinnet.hdl.ring_escape`, :mod:`twinnet.model.king_network`; tori
  only, a mesh takes ``none``): a packet arriving on input ``q`` travels toward
  ``opposite(q)`` and goes straight on when its escape move leaves that way *and*, under
  adaptive routing, it arrived on an escape VC (from an adaptive VC every escape move enters
  the escape ring; without adaptive routing the only other VC is broadcasts'); the hop that
  brought it wrapped when it crossed its ring's dateline (the wrap in x of the x, z and t
  rings, in y of the y rings). ``bubble``: escape VC 0, the bubble flag on every link move
  that does not go straight on; ``dateline``: escape VC 1 when going straight on after VC 1
  or a hop that wrapped, else VC 0; ``none``: VC 0, no bubble.
- Adaptive routing (002 §3.3.3): a port is profitable when the neighbour through it is nearer
  the destination than the router, by the kind's distance (M, T: the sum of the axes'
  distances; KM, KT: their maximum; DM: the diagonal-mesh length; DT: the shortest of 002 Alg.
  1's ``p0 … p3``; ring distances ``min(r, s - r)`` on a torus). Hop-by-hop: every profitable
  port is grade 1. 2S: grade 1 when the Knaive record (002 §3.3.1) from the router has hops in
  that port's direction, else grade 2; with ``ties`` ``both``, grade 1 also when the record of
  the offset that goes the other way round a ring at an axis offset of exactly half the side
  has hops in that direction. The adaptive VCs are every VC of a link above the
  escape's (one, or two with the dateline), but the broadcast VC.

Malformed: a destination coordinate ``>= side``, a PE ``>= pe_ports``, or a move toward a port
the router lacks (a mesh border).

DT with pseudo-random ties (``ties`` ``lfsr``): which of the shortest images the move follows
comes from an LFSR, not from the inputs, so the specification is a relation: the port taken
must be the first move of some shortest image's record (002 Alg. 1 takes any), and the VC and
bubble flag are the escape scheme's for the port taken.

Broadcast (002 §3.3.4, with the project's rule for even-sided tori): a broadcast header (its
``broadcast`` flag) ignores ``x`` and ``y``. From the PE port (the source) a copy leaves
through every link the router has, each entering a ring on a torus, with the TTL the source's
reach: ``⌊s/2⌋`` on a torus, ``max(x, s-1-x, y, s-1-y)`` on a mesh. From a link, a copy
travels on in the direction it came (away from its input): the router consumes it (a copy to
the PE the header names), takes one from its TTL and, while the TTL stays positive, sends it
on straight and, after an orthogonal hop, also onto the two diagonals that share that hop's
direction (which enter their rings on a torus); a copy that arrives with no TTL left is
malformed. On a torus of even side a copy heading in a negative x or y direction (x−, y− and
the three diagonals with a negative component) starts with one TTL fewer than the others
(else the copies meet at distance ``s/2``): it still carries ``s/2`` on its first hop and
spends two there. A PE the router lacks is malformed. A link's highest VC (the broadcast VC)
carries copies and nothing else: a copy arriving on another VC, or a packet that is not one
arriving on it, is malformed.
"""

from amaranth.hdl import Cat, Const, Mux, Signal, signed

from .spec_common import ExpectedCopies, ExpectedRoute, ahead, named, ring

#: The link directions of 002 §2: x, y, z and t, each with a + and a - port.
DIRECTIONS = {"x": (1, 0), "y": (0, 1), "z": (1, 1), "t": (-1, 1)}
#: Every link port label, + before -.
LABELS = tuple(f"{axis}{sign}" for axis in DIRECTIONS for sign in "+-")


def vector(label: str) -> tuple[int, int]:
    """The step of link port ``label`` (``t-`` → ``(1, -1)``)."""
    vx, vy = DIRECTIONS[label[0]]
    return (vx, vy) if label[1] == "+" else (-vx, -vy)


def escape_vcs(escape: str) -> int:
    """The escape VCs of a link, the lowest ones: two with the dateline, else one."""
    return 2 if escape == "dateline" else 1


def on_escape_vc(rc, escape: str):
    """The packet arrived on an escape VC (one of the lowest :func:`escape_vcs`)."""
    return rc.in_vc < escape_vcs(escape)


def _diagonal_mesh_length(cx, cy):
    """Hops of the diagonal-mesh route for offset ``(cx, cy)`` (002 §2): the larger
    magnitude when both have one sign, else the sum of the magnitudes."""
    same = ((cx >= 0) & (cy >= 0)) | ((cx <= 0) & (cy <= 0))
    ax, ay = abs(cx), abs(cy)
    return Mux(same, Mux(ax >= ay, ax, ay), ax + ay)


def _images(m, rc):
    """DT: 002 Alg. 1's wrap-around images of the destination, ``(x, y)``, ``(x - s, y -
    s)``, ``(x - s, y)``, ``(x, y - s)`` with ``x, y`` in ``[0, s)``, each ``(cx, cy,
    length)`` with its diagonal-mesh length."""
    side, width = rc.network.topology.side, rc.network.coordinate_width + 2
    here, there, p = rc.node_static, rc.header, rc.port_index
    x = named(m, ahead(there.x, here.x, side), f"spec_x_{p}", signed(width))
    y = named(m, ahead(there.y, here.y, side), f"spec_y_{p}", signed(width))
    images = []
    for k, (cx, cy) in enumerate([(x, y), (x - side, y - side), (x - side, y), (x, y - side)]):
        cx = named(m, cx, f"spec_image{k}_x_{p}", signed(width))
        cy = named(m, cy, f"spec_image{k}_y_{p}", signed(width))
        length = named(m, _diagonal_mesh_length(cx, cy), f"spec_image{k}_length_{p}",
                       range(2 * side + 1))
        images.append((cx, cy, length))
    return images


def _king_offset(m, rc):
    """The offset the route follows: plain on a mesh, the ring offsets on a torus, and on DT
    the first of the shortest :func:`_images`."""
    topology = rc.network.topology
    side, width = topology.side, rc.network.coordinate_width + 2
    here, there = rc.node_static, rc.header
    p = rc.port_index
    dx, dy = Signal(signed(width), name=f"spec_dx_{p}"), Signal(signed(width), name=f"spec_dy_{p}")
    if not topology.wrap:
        m.d.comb += [dx.eq(there.x - here.x), dy.eq(there.y - here.y)]
    elif topology.kind != "DT":
        m.d.comb += [dx.eq(ring(there.x, here.x, side)), dy.eq(ring(there.y, here.y, side))]
    else:
        # The first shortest image: each stage keeps the earlier one unless strictly longer.
        (best_x, best_y, best), *others = _images(m, rc)
        for k, (cx, cy, length) in enumerate(others, 1):
            shorter = named(m, length < best, f"spec_shorter_{p}_{k}", 1)
            best_x = named(m, Mux(shorter, cx, best_x), f"spec_x_{p}_{k}", signed(width))
            best_y = named(m, Mux(shorter, cy, best_y), f"spec_y_{p}_{k}", signed(width))
            best = named(m, Mux(shorter, length, best), f"spec_best_{p}_{k}",
                         range(2 * side + 1))
        m.d.comb += [dx.eq(best_x), dy.eq(best_y)]
    return dx, dy


def _move(m, rc, dx, dy, tag: str = "") -> tuple[dict, object]:
    """The deterministic (escape) move for offset ``(dx, dy)``: ``{label: taken}`` over
    :data:`LABELS` (at most one set) and ``arrived`` (signals named with ``tag``)."""
    p, side = f"{tag}{rc.port_index}", rc.network.topology.side
    ax = named(m, abs(dx), f"spec_ax_{p}", range(2 * side))
    ay = named(m, abs(dy), f"spec_ay_{p}", range(2 * side))
    same = ((dx >= 0) & (dy >= 0)) | ((dx <= 0) & (dy <= 0))
    x, y = Mux(dx > 0, 0, 1), Mux(dy > 0, 0, 1)  # 0: the + port, 1: the - port
    moves = {"dor": [(dx != 0, "x", x), (dy != 0, "y", y)]}
    moves["diagonal"] = [(same & (ax > ay), "x", x), (same & (ax < ay), "y", y),
                         (same & (ax != 0), "z", x), *moves["dor"]]
    moves["knaive"] = [(ax > ay, "x", x), (ax < ay, "y", y), (same & (ax != 0), "z", x),
                       (ax != 0, "t", y)]
    taken = {label: Const(0, 1) for label in LABELS}
    earlier = Const(0, 1)
    for condition, axis, minus in moves[rc.network.escape_routing]:
        first = condition & ~earlier
        taken[f"{axis}+"] = taken[f"{axis}+"] | (first & (minus == 0))
        taken[f"{axis}-"] = taken[f"{axis}-"] | (first & (minus == 1))
        earlier = earlier | condition
    taken = {label: named(m, bit, f"spec_take_{label[0]}{'pm'[label[1] == '-']}_{p}", 1)
             for label, bit in taken.items()}
    return taken, named(m, ~earlier, f"spec_arrived_{p}", 1)


def _escape(rc, taken: dict, arrived):
    """The escape scheme's VC mask and bubble flag for the move ``taken``."""
    network, topology = rc.network, rc.network.topology
    escape = network.escape if topology.wrap else "none"
    in_label = rc.ports[rc.port_index]
    straight = wrapped = Const(0, 1)
    if not in_label.startswith("pe"):
        travel = in_label[0] + ("-" if in_label[1] == "+" else "+")
        straight = taken[travel]
        if network.adaptive:  # from an adaptive VC every escape move enters the ring
            straight = straight & on_escape_vc(rc, escape)
        vx, vy = vector(travel)
        coordinate, step = (rc.node_static.y, vy) if travel[0] == "y" else (rc.node_static.x, vx)
        wrapped = coordinate == (0 if step > 0 else topology.side - 1)
    count = rc.config.max_vc_count
    mask, bubble = Const(1, count), Const(0, 1)
    if escape == "bubble":
        bubble = ~arrived & ~straight
    elif escape == "dateline":
        mask = Mux(~arrived & straight & ((rc.in_vc == 1) | wrapped), Const(0b10, count), mask)
    return mask, bubble


def _neighbour(a, v: int, side: int, wrap: bool):
    """Coordinate ``a`` moved by ``v`` (-1, 0, 1): mod ``side`` on a torus, else signed."""
    if v == 0:
        return a
    if not wrap:
        return a + v
    if v > 0:
        return Mux(a == side - 1, 0, a + 1)
    return Mux(a == 0, side - 1, a - 1)


def _distance(m, rc, nx, ny, name: str):
    """Hops from node ``(nx, ny)`` to the destination by the kind's distance (module
    docstring)."""
    topology, there = rc.network.topology, rc.header
    side, kind = topology.side, topology.kind
    width = rc.network.coordinate_width + 4
    if topology.wrap:
        ox = named(m, ahead(there.x, nx, side), f"{name}_ox", signed(width))
        oy = named(m, ahead(there.y, ny, side), f"{name}_oy", signed(width))
    else:
        ox = named(m, there.x - nx, f"{name}_ox", signed(width))
        oy = named(m, there.y - ny, f"{name}_oy", signed(width))
    if kind == "DT":  # 002 Alg. 1: p0 … p3
        lengths = [Mux(ox > oy, ox, oy), Mux(ox < oy, side - ox, side - oy),
                   side - ox + oy, side - oy + ox]
        best = named(m, lengths[0], f"{name}_p0", signed(width))
        for index, length in enumerate(lengths[1:], 1):
            best = named(m, Mux(length < best, length, best), f"{name}_p{index}", signed(width))
        return best
    if kind == "DM":
        return named(m, _diagonal_mesh_length(ox, oy), f"{name}_length", signed(width))
    if topology.wrap:
        ax = named(m, Mux(ox * 2 > side, side - ox, ox), f"{name}_ax", signed(width))
        ay = named(m, Mux(oy * 2 > side, side - oy, oy), f"{name}_ay", signed(width))
    else:
        ax = named(m, abs(ox), f"{name}_ax", signed(width))
        ay = named(m, abs(oy), f"{name}_ay", signed(width))
    if kind in ("M", "T"):
        return named(m, ax + ay, f"{name}_length", signed(width))
    return named(m, Mux(ax > ay, ax, ay), f"{name}_length", signed(width))


def _knaive_uses(m, rc, dx, dy, tag: str = "") -> dict:
    """``{label: used}``: the Knaive record from the router (002 §3.3.1) for offset ``(dx,
    dy)`` has hops in that port's direction (signals named with ``tag``)."""
    p, width = f"{tag}{rc.port_index}", rc.network.coordinate_width + 4
    same = ((dx >= 0) & (dy >= 0)) | ((dx <= 0) & (dy <= 0))
    wide = abs(dx) >= abs(dy)
    record = {"x": Mux(wide, Mux(same, dx - dy, dx + dy), 0),
              "y": Mux(wide, 0, Mux(same, dy - dx, dx + dy)),
              "z": Mux(same, Mux(wide, dy, dx), 0),
              "t": Mux(same, 0, Mux(wide, dy, -dx))}
    uses = {}
    for axis, hops in record.items():
        hops = named(m, hops, f"spec_knaive_{axis}_{p}", signed(width))
        uses[f"{axis}+"], uses[f"{axis}-"] = hops > 0, hops < 0
    return uses


def _both_ways(m, rc, offset, uses: dict) -> dict:
    """``ties`` ``both``: the ports the Knaive record of any shortest offset uses; an axis
    offset of exactly half the side is as short the other way round its ring."""
    dx, dy = offset
    half = rc.network.topology.side // 2
    other_x, other_y = dx == half, dy == half
    for k, (tied, ox, oy) in enumerate(((other_x, -dx, dy), (other_y, dx, -dy),
                                        (other_x & other_y, -dx, -dy))):
        width = rc.network.coordinate_width + 4
        ox = named(m, ox, f"spec_tie{k}_x_{rc.port_index}", signed(width))
        oy = named(m, oy, f"spec_tie{k}_y_{rc.port_index}", signed(width))
        alternative = _knaive_uses(m, rc, ox, oy, f"tie{k}_")
        uses = {label: uses[label] | (tied & alternative[label]) for label in uses}
    return uses


def _grades(m, rc, offset):
    """``(grade_1, grade_2)`` of hop-by-hop or 2S routing (module docstring); ``offset`` is
    the route's ``(dx, dy)`` (2S's Knaive record starts from it)."""
    network, topology, here = rc.network, rc.network.topology, rc.node_static
    p = rc.port_index
    length = _distance(m, rc, here.x, here.y, f"spec_here_{p}")
    uses = _knaive_uses(m, rc, *offset) if network.routing == "2s" else None
    if network.ties == "both":
        uses = _both_ways(m, rc, offset, uses)
    one, two = [Const(0, 1)] * len(rc.ports), [Const(0, 1)] * len(rc.ports)
    for index, label in enumerate(rc.ports):
        if label.startswith("pe"):
            continue
        vx, vy = vector(label)
        nx = _neighbour(here.x, vx, topology.side, topology.wrap)
        ny = _neighbour(here.y, vy, topology.side, topology.wrap)
        name = f"spec_via_{label[0]}{'pm'[label[1] == '-']}_{p}"
        profitable = named(m, _distance(m, rc, nx, ny, name) < length, f"{name}_profitable", 1)
        one[index] = profitable if uses is None else profitable & uses[label]
        two[index] = Const(0, 1) if uses is None else profitable & ~uses[label]
    return Cat(one), Cat(two)


def _tied_moves(m, rc):
    """DT with pseudo-random ties: ``{label: allowed}``, the first move of every shortest
    image's record (002 Alg. 1 takes any of them), and ``arrived``."""
    images = _images(m, rc)
    p, side = rc.port_index, rc.network.topology.side
    shortest = images[0][2]
    for k, (_, _, length) in enumerate(images[1:], 1):
        shortest = named(m, Mux(length < shortest, length, shortest), f"spec_shortest_{p}_{k}",
                         range(2 * side + 1))
    moves = [_move(m, rc, cx, cy, f"image{k}_") for k, (cx, cy, _) in enumerate(images)]
    allowed = {label: Const(0, 1) for label in LABELS}
    for k, ((taken, _), (_, _, length)) in enumerate(zip(moves, images)):
        tied = named(m, length == shortest, f"spec_tied{k}_{p}", 1)
        allowed = {label: allowed[label] | (tied & taken[label]) for label in LABELS}
    # Arrived: image 0 is (0, 0), the one shortest image.
    return allowed, moves[0][1]


def king_spec(m, rc, in_port: int) -> ExpectedRoute:
    """The king family's route compute (module docstring): the deterministic or escape move
    (with DT's pseudo-random ties, the moves it may take), its VC and bubble flag and, under
    adaptive routing, the grades and adaptive VCs."""
    network = rc.network
    side = network.topology.side
    here, there = rc.node_static, rc.header
    assumptions = [here.x < side, here.y < side]
    malformed = (there.x >= side) | (there.y >= side)
    if network.pe_width:
        malformed = malformed | (there.pe >= network.pe_ports)
    link = rc.ports[in_port] in LABELS
    copy_vc = (rc.in_vc == network.broadcast_vc) if network.broadcast and link else Const(0, 1)
    malformed = malformed | copy_vc
    local = {label: index for index, label in enumerate(rc.ports)}
    pes = [local[f"pe{k}"] for k in range(network.pe_ports)]
    pe_port = Const(pes[0], range(max(2, len(rc.ports))))
    for k, index in enumerate(pes[1:], 1):
        pe_port = Mux(there.pe == k, index, pe_port)
    port, allowed = pe_port, None
    offset = _king_offset(m, rc) if network.ties != "lfsr" else None
    if offset is not None:
        taken, arrived = _move(m, rc, *offset)
        present = arrived
        for label, bit in taken.items():
            if label in local:
                port = Mux(bit, local[label], port)
                present = present | bit
        malformed = malformed | ~present
    else:  # a relation: the port the route compute took must be one of those allowed (DT
        # is a torus: every router has every port)
        moves, arrived = _tied_moves(m, rc)
        taken = {label: (rc.out_port == local[label]) & ~arrived if label in local
                 else Const(0, 1) for label in LABELS}
        allowed = (arrived & (rc.out_port == pe_port)) | Cat(
            taken[label] & moves[label] for label in LABELS).any()
        port = None
    mask, bubble = _escape(rc, taken, arrived)
    copies = _copies(m, rc, local, pe_port, copy_vc) if network.broadcast else None
    if not network.adaptive:
        return ExpectedRoute(port, mask, bubble, malformed, assumptions, allowed=allowed,
                             copies=copies)
    links = max(rc.config.vc_counts) - int(network.broadcast)  # but the broadcast VC
    escapes = escape_vcs(network.escape if network.topology.wrap else "none")
    adaptive_vcs = ((1 << links) - 1) & ~((1 << escapes) - 1)
    return ExpectedRoute(port, mask, bubble, malformed, assumptions, allowed=allowed,
                         grades=_grades(m, rc, offset), adaptive_vcs=adaptive_vcs,
                         copies=copies)


def _copies(m, rc, local: dict, pe_port, copy_vc) -> ExpectedCopies:
    """A broadcast's copies at input ``rc.port_index`` (module docstring)."""
    network = rc.network
    wrap, side = network.topology.wrap, network.topology.side
    here, there = rc.node_static, rc.header
    links = [label for label in LABELS if label in local]
    bad_pe = (there.pe >= network.pe_ports) if network.pe_width else Const(0, 1)
    ttl = there.ttl
    width = len(rc.targets)
    ttl_out = Signal.like(ttl, name=f"spec_ttl_out_{rc.port_index}")
    came = rc.ports[rc.port_index]
    if came not in LABELS:  # the source
        targets = enter = Const(sum(1 << local[label] for label in links), width)
        if not wrap:
            enter = Const(0, width)
            reach = [here.x, side - 1 - here.x, here.y, side - 1 - here.y]
            most = reach[0]
            for value in reach[1:]:
                most = Mux(value > most, value, most)
            m.d.comb += ttl_out.eq(most)
        else:
            m.d.comb += ttl_out.eq(side // 2)
        malformed = bad_pe
    else:
        # Away from the input: the opposite of the port it came in by.
        vx, vy = vector(came)
        travel = next(label for label in LABELS if vector(label) == (-vx, -vy))
        tx, ty = -vx, -vy
        negative = min(tx, ty) < 0
        spend = Const(1, 2)
        if wrap and side % 2 == 0 and negative:
            spend = Mux(ttl == side // 2, 2, 1)
        onward = ttl > spend
        m.d.comb += ttl_out.eq(Mux(onward, ttl - spend, 0))
        malformed = bad_pe | (ttl < spend) | ~copy_vc
        # After an orthogonal hop, the diagonals that share its direction.
        beside = [label for label in links if 0 not in vector(label) and (
            (ty == 0 and vector(label)[0] == tx) or (tx == 0 and vector(label)[1] == ty))]
        onward_ports = [label for label in (travel, *beside) if label in local]
        targets = Mux(bad_pe, 0, Const(1, width) << pe_port) | Mux(
            onward, sum(1 << local[label] for label in onward_ports), 0)
        enter = Mux(onward, sum(1 << local[label] for label in beside), 0) if wrap \
            else Const(0, width)
    header_out = Signal.like(rc.header_out, name=f"spec_header_out_{rc.port_index}")
    m.d.comb += [header_out.eq(there), header_out.ttl.eq(ttl_out)]
    return ExpectedCopies(there.broadcast, malformed, targets, enter, header_out)
