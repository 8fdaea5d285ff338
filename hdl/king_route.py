"""Route compute of a king-family router (M, DM, KM, T, DT, KT of 002) as arithmetic hardware.

From the router's coordinates ``(ax, ay)`` (``node_static``) and the destination's ``(bx, by)``
(the head flit) the hardware forms the offset ``(dx, dy)`` (on a torus the ring offset
``(b - a) mod s``, above ``⌊s/2⌋`` less ``s``: the model's positive tie rule), then picks the
first port, in vector order ``x y z t``, of the routing's record (002 §3;
:func:`twinnet.model.king.routing_port`):

- ``dor`` (M, T): x± while ``dx ≠ 0``, then y±;
- ``diagonal`` (DM, DT): with ``dx``, ``dy`` of one sign, x± while ``|dx| > |dy|``, z± when
  they are equal, y± while ``|dx| < |dy|``; otherwise as DOR. On DT the offset is that of 002
  Alg. 1's shortest wrap-around image of the destination, ``(x, y)``, ``(x-s, y-s)``,
  ``(x-s, y)``, ``(x, y-s)`` with ``x, y`` in ``[0, s)``, the first one on a tie (four length
  comparators), or with ``ties`` ``lfsr`` the first tied image from a pseudo-random start: a
  16-bit LFSR (x¹⁶ + x¹⁴ + x¹³ + x¹¹ + 1) per input port steps on every head flit and its
  two low bits pick the image to start from;
- ``knaive`` (KM, KT): as ``diagonal`` for offsets of one sign (or a zero one); for opposite
  signs x± while ``|dx| > |dy|``, t± when equal, y± while ``|dx| < |dy|``.

The escape scheme sets the VC and the bubble flag (:mod:`twinnet.hdl.ring_escape`; the
dateline of a ring is its wrap in x for the x, z and t rings, in y for the y rings). The input
port is fixed per instance, so "straight on" and "the hop that brought it here wrapped" are a
comparison with a constant port and one coordinate.

On arrival the packet leaves through the PE port the header's ``pe`` field names (with
several PEs per router).

Adaptive routing (``hop-by-hop``, ``2s``; :mod:`twinnet.model.king_network`) adds the grades
of :class:`twinnet.hdl.route_compute.RouteCompute`, and the deterministic routing above becomes
the escape move. A port is *profitable* when the neighbour through it is one hop closer: the
hardware forms the offset from each neighbour (on a torus the ring value ``(b - a - v) mod s``
of each axis for a step ``v`` of -1, 0, 1), its length by the kind's distance formula (M/T
``|dx| + |dy|``, KM/KT ``max(|dx|, |dy|)``, DM the diagonal-mesh length, DT the shortest of
the four images' diagonal-mesh lengths; ring magnitudes ``min(r, s - r)`` on a torus) and
compares it with the router's own length less one. ``hop-by-hop``: every profitable port is
grade 1. ``2s``: grade 1 if the Knaive record uses it (``x`` while ``|dx| > |dy|``, ``y``
while ``|dy| > |dx|``, the diagonal of the offset's quadrant while both are non-zero), grade 2
otherwise; with ``ties`` ``both``, also if the record of the offset that goes the other way
round a ring at ``|dx|`` or ``|dy|`` of exactly ``s/2`` uses it. An escape move enters the
escape ring (bubble, and the dateline's VC 0) unless the packet arrived on an escape VC going
the same way.

``malformed``: a destination coordinate ``>= side`` or PE ``>= pe_ports`` (when its field can
hold one), or a port this router lacks (on a mesh border; minimal routing never asks for one).
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data

from twinnet.model.king import PORT_VECTORS, PORTS, SIDE_DIAGONALS
from twinnet.model.king_network import KingNetworkConfig

from .config import RouterConfig
from .ring_escape import drive_escape, opposite
from .route_compute import RouteCompute


def pe_label(pe: int) -> str:
    """The local label of a router's PE port ``pe``: ``pe0``, ``pe1``, …"""
    return f"pe{pe}"


def is_pe(label: str) -> bool:
    return label.startswith("pe")


def coordinate_layout(network: KingNetworkConfig) -> data.StructLayout:
    """A node's coordinates ``x``, ``y`` (:attr:`KingNetworkConfig.coordinate_width` bits each):
    the router's own, on ``node_static``."""
    width = unsigned(network.coordinate_width)
    return data.StructLayout({"x": width, "y": width})


def destination_layout(network: KingNetworkConfig) -> data.StructLayout:
    """The head flit's route fields: the destination's coordinates ``x``, ``y``, with several
    PEs per router its ``pe`` (:attr:`KingNetworkConfig.pe_width` bits), and with broadcast
    the ``broadcast`` flag and the copy's ``ttl`` (:attr:`KingNetworkConfig.ttl_width` bits;
    a PE leaves it 0, the source's router fills it in). A broadcast ignores ``x`` and ``y``;
    its copies leave at PE ``pe`` of every router."""
    fields = dict(coordinate_layout(network).members)
    if network.pe_width:
        fields["pe"] = unsigned(network.pe_width)
    if network.broadcast:
        fields["broadcast"] = unsigned(1)
        fields["ttl"] = unsigned(network.ttl_width)
    return data.StructLayout(fields)


def _knaive_ports(dx, dy) -> dict:
    """Per port label, whether the Knaive record of offset ``(dx, dy)`` uses it."""
    return {"x+": (abs(dx) > abs(dy)) & (dx > 0), "x-": (abs(dx) > abs(dy)) & (dx < 0),
            "y+": (abs(dy) > abs(dx)) & (dy > 0), "y-": (abs(dy) > abs(dx)) & (dy < 0),
            "z+": (dx > 0) & (dy > 0), "z-": (dx < 0) & (dy < 0),
            "t+": (dx < 0) & (dy > 0), "t-": (dx > 0) & (dy < 0)}


def _diagonal_length(cx, cy):
    """Hops of the diagonal-mesh route for the signed offset ``(cx, cy)``: the larger magnitude
    in the diagonal's quadrant (same signs), else their sum."""
    same = ((cx > 0) & (cy > 0)) | ((cx < 0) & (cy < 0))
    ax, ay = abs(cx), abs(cy)
    return Mux(same, Mux(ax > ay, ax, ay), ax + ay)


class KingRouteCompute(RouteCompute):
    """King-family routing for one input port (see the module docstring).

    Implements :class:`twinnet.hdl.route_compute.RouteCompute` with ``header`` a
    :func:`destination_layout` and ``node_static`` a :func:`coordinate_layout`.

    Parameters:
        config: the router's configuration; ``config.port_count`` must be ``len(ports)``.
        in_port: the input port this instance serves.
        network: the :class:`~twinnet.model.king_network.KingNetworkConfig`.
        ports: the router's port labels in local index order: ports of the kind (``x+`` …
            ``t-``, each at most once) and its PE ports ``pe0`` … (:func:`pe_label`), all
            ``network.pe_ports`` of them.

    Raises ``TypeError``/``ValueError`` before building anything when the parameters do not
    fit together. Build instances through the router with ``functools.partial(
    KingRouteCompute, network=…, ports=…)``.
    """

    def __init__(self, config: RouterConfig, in_port: int, *, network: KingNetworkConfig,
                 ports: tuple[str, ...]):
        self.network, self.ports = network, tuple(ports)
        super().__init__(config, in_port, header_layout=destination_layout(network),
                         static_layout=coordinate_layout(network),
                         adaptive_vcs=network.adaptive_vc_mask,
                         broadcast_vc=network.broadcast_vc)

    @classmethod
    def check(cls, config, in_port, *, network, ports) -> None:
        if not isinstance(config, RouterConfig):
            raise TypeError(f"config must be a RouterConfig, not {config!r}")
        if not isinstance(network, KingNetworkConfig):
            raise TypeError(f"network must be a KingNetworkConfig, not {network!r}")
        ports = tuple(ports)
        pes = tuple(map(pe_label, range(network.pe_ports)))
        allowed = (*network.topology.ports, *pes)
        for port in ports:
            if port not in allowed:
                raise ValueError(f"port {port!r} is not one of {', '.join(allowed)}")
        if len(set(ports)) != len(ports):
            raise ValueError(f"ports must be distinct, not {ports}")
        if not set(pes) <= set(ports):
            raise ValueError(f"ports must hold every PE port ({', '.join(pes)}), not {ports}")
        if config.port_count != len(ports):
            raise ValueError(f"{len(ports)} port labels for a router of {config.port_count} "
                             "ports")
        if not isinstance(in_port, int) or not 0 <= in_port < len(ports):
            raise ValueError(f"in_port must be from 0 to {len(ports) - 1}, not {in_port!r}")

    def _offset(self, m: Module, a, b, name: str):
        """The signed offset from coordinate ``a`` to ``b`` (the ring offset on a torus)."""
        side, width = self.network.topology.side, self.network.coordinate_width
        offset = Signal(signed(width + 2), name=f"d{name}")
        if not self.network.topology.wrap:
            m.d.comb += offset.eq(b - a)
            return offset
        ring = Signal(unsigned(width + 1), name=f"m{name}")  # (b - a) mod side
        m.d.comb += ring.eq(Mux(b >= a, b - a, b + side - a))
        m.d.comb += offset.eq(Mux(ring > side // 2, ring - side, ring))
        return offset

    def elaborate(self, platform):
        m = Module()
        network = self.network
        here, there = self.node_static, self.header
        bad, bad_pe = self._bad_destination()
        copy_vc = Const(0, 1)  # a link's broadcast VC, which carries copies and nothing else
        if network.broadcast and not is_pe(self.ports[self.port_index]):
            copy_vc = self.in_vc == network.broadcast_vc
            bad = bad | copy_vc
        dx, dy = self._offsets(m, here, there)
        wanted, arrived = self._move(m, dx, dy)

        local = {label: index for index, label in enumerate(self.ports)}
        pes = network.pe_ports
        pe_port = Array(local[pe_label(pe)] for pe in range(pes))[there.pe] if pes > 1 \
            else local[pe_label(0)]
        present = Signal()
        m.d.comb += [self.out_port.eq(0), present.eq(0)]
        with m.Switch(wanted):
            for index, label in enumerate(PORTS):
                if label in local:
                    with m.Case(index):
                        m.d.comb += [self.out_port.eq(local[label]), present.eq(1)]
            with m.Case(len(PORTS)):
                m.d.comb += [self.out_port.eq(pe_port), present.eq(1)]
        m.d.comb += self.malformed.eq(bad | ~present)

        if network.adaptive:
            self._grades(m, here, there, dx, dy, local, bad)
        self._escape(m, here, wanted, arrived, local)
        if network.broadcast:
            self._broadcast(m, here, there, local, pe_port, bad_pe, copy_vc)
        return m

    def _bad_destination(self):
        """(malformed, PE out of range): a destination coordinate or PE that does not exist."""
        network, side = self.network, self.network.topology.side
        there = self.header
        bad = bad_pe = Const(0, 1)
        if network.pe_width and (1 << network.pe_width) > network.pe_ports:
            bad = bad_pe = there.pe >= network.pe_ports
        for coordinate in (there.x, there.y):
            if (1 << network.coordinate_width) > side:
                bad = bad | (coordinate >= side)
        return bad, bad_pe

    def _offsets(self, m: Module, here, there):
        """The signed offsets (dx, dy) the route follows: the ring offsets on a torus, and on
        a diagonal torus the shortest of the four images (002 Alg. 1, the first on a tie or
        an LFSR's pick)."""
        network, topology = self.network, self.network.topology
        side, width = topology.side, network.coordinate_width
        dx = Signal(signed(width + 2))
        dy = Signal(signed(width + 2))
        if topology.kind != "DT":
            m.d.comb += [dx.eq(self._offset(m, here.x, there.x, "x")),
                         dy.eq(self._offset(m, here.y, there.y, "y"))]
            return dx, dy
        mx = Signal(unsigned(width + 1))
        my = Signal(unsigned(width + 1))
        m.d.comb += [mx.eq(Mux(there.x >= here.x, there.x - here.x, there.x + side - here.x)),
                     my.eq(Mux(there.y >= here.y, there.y - here.y, there.y + side - here.y))]
        images = [(mx, my), (mx - side, my - side), (mx - side, my), (mx, my - side)]
        candidates = []
        for i, (ix, iy) in enumerate(images):
            cx, cy = Signal(signed(width + 2), name=f"image{i}_x"), \
                Signal(signed(width + 2), name=f"image{i}_y")
            m.d.comb += [cx.eq(ix), cy.eq(iy)]
            length = Signal(unsigned(width + 2), name=f"image{i}_length")
            m.d.comb += length.eq(_diagonal_length(cx, cy))
            candidates.append((cx, cy, length))
        best_x, best_y, best_length = candidates[0]
        for cx, cy, length in candidates[1:]:
            shorter = length < best_length
            best_x, best_y = Mux(shorter, cx, best_x), Mux(shorter, cy, best_y)
            best_length = Mux(shorter, length, best_length)
        if network.ties == "lfsr":
            self._tie_break(m, candidates, best_length, dx, dy)
        else:
            m.d.comb += [dx.eq(best_x), dy.eq(best_y)]
        return dx, dy

    def _move(self, m: Module, dx, dy):
        """The escape routing's move: ``wanted``, a :data:`PORTS` index (``len(PORTS)`` for a
        PE), and ``arrived``."""
        magnitude_x, magnitude_y = abs(dx), abs(dy)
        sign_x = Mux(dx > 0, 0, 1)  # index within a ± pair: 0 = "+", 1 = "-"
        sign_y = Mux(dy > 0, 0, 1)
        x_port, y_port = Signal(range(len(PORTS))), Signal(range(len(PORTS)))
        z_port, t_port = Signal(range(len(PORTS))), Signal(range(len(PORTS)))
        m.d.comb += [x_port.eq(PORTS.index("x+") + sign_x), y_port.eq(PORTS.index("y+") + sign_y),
                     z_port.eq(PORTS.index("z+") + sign_x), t_port.eq(PORTS.index("t+") + sign_y)]
        wanted = Signal(range(len(PORTS) + 1))
        arrived = (dx == 0) & (dy == 0)
        dor = Mux(dx != 0, x_port, y_port)
        routing = self.network.escape_routing
        if routing == "dor":
            move = dor
        else:
            same = ((dx > 0) & (dy > 0)) | ((dx < 0) & (dy < 0))
            diagonal = Mux(magnitude_x > magnitude_y, x_port,
                           Mux(magnitude_x == magnitude_y, z_port, y_port))
            move = Mux(same, diagonal, dor)
            if routing == "knaive":
                opposite_signs = ((dx > 0) & (dy < 0)) | ((dx < 0) & (dy > 0))
                anti = Mux(magnitude_x > magnitude_y, x_port,
                           Mux(magnitude_x == magnitude_y, t_port, y_port))
                move = Mux(opposite_signs, anti, move)
        m.d.comb += wanted.eq(Mux(arrived, len(PORTS), move))
        return wanted, arrived

    def _escape(self, m: Module, here, wanted, arrived, local: dict) -> None:
        """The escape scheme's VC and bubble flag for the move ``wanted``."""
        network, topology = self.network, self.network.topology
        in_label = self.ports[self.port_index]
        straight = Const(0, 1)
        wrapped = Const(0, 1)
        if not is_pe(in_label) and opposite(in_label) in local:
            straight = wanted == PORTS.index(opposite(in_label))
            if network.adaptive:  # from an adaptive VC, any escape move enters the ring
                straight = straight & (self.in_vc < network.escape_vc_count)
        if not is_pe(in_label):
            travel = opposite(in_label)
            axis = 1 if travel[0] == "y" else 0
            step = PORT_VECTORS[travel][axis]
            coordinate = (here.x, here.y)[axis]
            wrapped = coordinate == (0 if step > 0 else topology.side - 1)
        drive_escape(m, self, network.escape if topology.wrap else "none", to_link=~arrived,
                     straight=straight, wrapped=wrapped)

    def _broadcast(self, m: Module, here, there, local: dict, pe_port, bad_pe,
                   copy_vc) -> None:
        """Drive the broadcast outputs (002 §3.3.4; :func:`twinnet.model.king.broadcast_sends`).

        At a PE port (the source): a copy through every link, TTL the source's reach
        (``max(x, s-1-x, y, s-1-y)`` on a mesh, ``⌊s/2⌋`` on a torus), each entering a ring.
        At a link port the copy travels toward ``opposite(in port)``: it is consumed at PE
        ``pe``, its TTL drops by one (on an even-sided torus by two on its first hop, still
        holding ``s/2``, when it heads in a negative x or y direction: the source's lower TTL of
        the even-side rule) and, while positive, it goes on straight and, after an orthogonal
        hop, onto the two diagonals beside it, which enter their rings. At a link port a copy
        that did not come on the broadcast VC (``copy_vc``) is malformed, as is a unicast
        packet that did.
        """
        network, topology = self.network, self.network.topology
        side = topology.side
        in_label = self.ports[self.port_index]
        links = [label for label in local if not is_pe(label)]
        targets, enter = Const(0, len(self.ports)), Const(0, len(self.ports))
        ttl = there.ttl
        ttl_out = Signal(network.ttl_width, name="ttl_out")
        malformed = bad_pe
        if is_pe(in_label):
            for label in links:
                targets = targets | (1 << local[label])
                if topology.wrap:
                    enter = enter | (1 << local[label])
            if topology.wrap:
                m.d.comb += ttl_out.eq(side // 2)
            else:
                reach = [here.x, side - 1 - here.x, here.y, side - 1 - here.y]
                best = reach[0]
                for value in reach[1:]:
                    best = Mux(value > best, value, best)
                m.d.comb += ttl_out.eq(best)
        else:
            travel = opposite(in_label)
            negative = min(PORT_VECTORS[travel]) < 0
            spend = Signal(range(3), name="ttl_spend")
            if topology.wrap and side % 2 == 0 and negative:
                m.d.comb += spend.eq(Mux(ttl == side // 2, 2, 1))
            else:
                m.d.comb += spend.eq(1)
            onward = Signal(name="onward")
            m.d.comb += [onward.eq(ttl > spend), ttl_out.eq(Mux(onward, ttl - spend, 0))]
            malformed = malformed | (ttl < spend) | ~copy_vc
            targets = Mux(bad_pe, 0, 1 << pe_port)
            sides = SIDE_DIAGONALS.get(travel, ())
            for label in (travel, *sides):
                if label in local:
                    targets = targets | Mux(onward, 1 << local[label], 0)
                    if topology.wrap and label != travel:
                        enter = enter | Mux(onward, 1 << local[label], 0)
        m.d.comb += [self.broadcast.eq(there.broadcast), self.targets.eq(targets),
                     self.enter.eq(enter), self.header_out.eq(there),
                     self.header_out.ttl.eq(ttl_out)]
        with m.If(there.broadcast):
            m.d.comb += self.malformed.eq(malformed)

    def _tie_break(self, m: Module, candidates, shortest, dx, dy) -> None:
        """Drive ``dx``, ``dy`` with the first of the shortest images ``candidates`` (``(x, y,
        length)`` each) at or after the image the LFSR's two low bits name, cyclically."""
        lfsr = Signal(16, init=0xACE1, name="tie_lfsr")
        with m.If(self.valid):
            m.d.sync += lfsr.eq(Cat(lfsr[1:], lfsr[0] ^ lfsr[2] ^ lfsr[3] ^ lfsr[5]))
        shortest_now = Signal.like(candidates[0][2], name="shortest")
        m.d.comb += shortest_now.eq(shortest)
        tied = [Signal(name=f"tied{i}") for i in range(len(candidates))]
        m.d.comb += [t.eq(length == shortest_now) for t, (_, _, length) in zip(tied, candidates)]
        with m.Switch(lfsr[:2]):
            for start in range(4):
                with m.Case(start):
                    order = [(start + i) % 4 for i in range(4)]
                    # The last of the order needs no test: some image is the shortest.
                    chosen_x, chosen_y = candidates[order[-1]][:2]
                    for index in reversed(order[:-1]):
                        chosen_x = Mux(tied[index], candidates[index][0], chosen_x)
                        chosen_y = Mux(tied[index], candidates[index][1], chosen_y)
                    m.d.comb += [dx.eq(chosen_x), dy.eq(chosen_y)]

    def _axis_offsets(self, m: Module, a, b, name: str) -> dict:
        """``{v: offset}`` for a step ``v`` in -1, 0, 1 along one axis: from the neighbour at
        ``a + v`` to ``b``, signed on a mesh, the ring value in ``[0, side)`` on a torus."""
        side, width = self.network.topology.side, self.network.coordinate_width
        if not self.network.topology.wrap:
            base = Signal(signed(width + 2), name=f"o{name}")
            m.d.comb += base.eq(b - a)
            return {v: base - v for v in (-1, 0, 1)}
        ring = Signal(unsigned(width), name=f"r{name}")
        m.d.comb += ring.eq(Mux(b >= a, b - a, b + side - a))
        return {0: ring, 1: Mux(ring == 0, side - 1, ring - 1),
                -1: Mux(ring == side - 1, 0, ring + 1)}

    def _length(self, m: Module, ox, oy, name: str):
        """A signal of the hops to the destination from the offsets ``ox``, ``oy`` of
        :meth:`_axis_offsets`, by the kind's distance formula
        (:func:`twinnet.model.king.distance`). Every intermediate value is a signal of its
        own: an expression used twice would be written out twice."""
        topology = self.network.topology
        side, kind = topology.side, topology.kind
        width = self.network.coordinate_width + 3

        def signal(value, label, shape=None):
            wire = Signal(shape or unsigned(width), name=f"{name}_{label}")
            m.d.comb += wire.eq(value)
            return wire

        def larger(a, b, label):
            return signal(Mux(a > b, a, b), label)

        def diagonal(cx, cy, label):
            cx, cy = signal(cx, f"{label}x", signed(width)), signal(cy, f"{label}y", signed(width))
            same = ((cx > 0) & (cy > 0)) | ((cx < 0) & (cy < 0))
            ax, ay = signal(abs(cx), f"{label}ax"), signal(abs(cy), f"{label}ay")
            return signal(Mux(same, Mux(ax > ay, ax, ay), ax + ay), label)

        if kind == "DT":
            images = [(ox, oy), (ox - side, oy - side), (ox - side, oy), (ox, oy - side)]
            best = diagonal(*images[0], "i0")
            for index, image in enumerate(images[1:], 1):
                length = diagonal(*image, f"i{index}")
                best = signal(Mux(length < best, length, best), f"best{index}")
            return best
        if topology.wrap:
            ax, ay = (signal(Mux(r > side // 2, side - r, r), label)
                      for r, label in ((ox, "ax"), (oy, "ay")))
        else:
            ax, ay = signal(abs(ox), "ax"), signal(abs(oy), "ay")
        if kind in ("M", "T"):
            return signal(ax + ay, "sum")
        if kind == "DM":
            return diagonal(ox, oy, "d")
        return larger(ax, ay, "max")

    def _grades(self, m: Module, here, there, dx, dy, local: dict, bad) -> None:
        """Drive ``grade_1`` and ``grade_2`` (see the module docstring)."""
        network = self.network
        xs = self._axis_offsets(m, here.x, there.x, "x")
        ys = self._axis_offsets(m, here.y, there.y, "y")
        length = self._length(m, xs[0], ys[0], "here")
        knaive = _knaive_ports(dx, dy)
        if network.ties == "both":
            # The offset takes a tie +: the other way round the ring is as short.
            half = network.topology.side // 2
            tx, ty = dx == half, dy == half
            for tied, ox, oy in ((tx, -dx, dy), (ty, dx, -dy), (tx & ty, -dx, -dy)):
                other = _knaive_ports(ox, oy)
                knaive = {label: knaive[label] | (tied & other[label]) for label in knaive}
        one, two = [], []
        for label, index in local.items():
            if is_pe(label):
                continue
            vx, vy = PORT_VECTORS[label]
            after = self._length(m, xs[vx], ys[vy], f"via_{label[0]}{'pm'[label[1] == '-']}")
            profitable = (after + 1 == length) & ~bad
            if network.routing == "2s":
                one.append((index, profitable & knaive[label]))
                two.append((index, profitable & ~knaive[label]))
            else:
                one.append((index, profitable))
        for grade, bits in ((self.grade_1, one), (self.grade_2, two)):
            m.d.comb += grade.eq(0)
            for index, bit in bits:
                m.d.comb += grade[index].eq(bit)
