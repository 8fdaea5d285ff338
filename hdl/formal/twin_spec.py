"""The twin torus's route compute written again from 003's formulas: twin DOR (003 Alg. 1–6)
with the VCs of 003 §6.3 and the bubble rule of 003 §6 (:func:`twin_spec`).

Only the port layout of a card (which ports it has, in which order) is read from the
configuration; the routing is arithmetic over the header and the node's coordinates, not the
route compute under test nor a table of the reference model.
"""

from amaranth.hdl import Cat, Const, Mux

from twinnet.model.twin import INTERNAL, PE_PORT, Port

from ..twin_route import card_ports
from .spec_common import ExpectedRoute


def _internal_vcs(twin) -> dict:
    """The internal link's VCs (003 §6.3.1–2, numbered as 003 §6.3.2 numbers configuration D):
    type 1 first (when some dimension is not split), then per split dimension its up and low
    VCs (VC mode) or its one VC (bubble mode), then type 3; one VC in mode ``none``."""
    if twin.mode == "none":
        return {"type1": 0, "type3": 0, **{dim: 0 for dim in range(twin.n)}}
    split = twin.configuration.split_dims
    vcs, number = {}, 0
    if len(split) < twin.n:
        vcs["type1"], number = 0, 1
    for dim in split:
        vcs[dim] = number
        number += 2 if twin.mode == "vc" else 1
    vcs["type3"] = number
    return vcs


def twin_spec(m, rc, in_port: int) -> ExpectedRoute:
    """Twin DOR (003 Alg. 1–6): the lowest differing dimension, its ring direction by
    ``(d - c) mod k`` with the positive tie, the internal link when that port is on the other
    card; VCs up/low by ``d > c`` (VC mode) and bubbles on entering a ring (bubble mode)."""
    twin, card = rc.twin, rc.card
    ports = card_ports(twin, card)
    arrival = ports[in_port]
    vcs = _internal_vcs(twin)
    here = [rc.node_static[f"o{dim}"] for dim in range(twin.n)]
    dest = [rc.header.node[f"o{dim}"] for dim in range(twin.n)]
    assumptions = [c < k for c, k in zip(here, twin.radices)]
    malformed = Cat(d >= k for d, k in zip(dest, twin.radices)).any()
    if twin.card_count == 1:
        malformed = malformed | (rc.header.pe != 0)
    # Default: every digit equal, the packet is for this node.
    to_pe = (twin.card_count == 1) | (rc.header.pe == card)
    port = Mux(to_pe, ports.index(PE_PORT), ports.index(INTERNAL) if INTERNAL in ports else 0)
    vc = Mux(to_pe, 0, vcs["type3"])
    bubble = Const(0, 1)
    for dim in reversed(range(twin.n)):  # the lowest differing dimension is applied last
        c, d, k = here[dim], dest[dim], twin.radices[dim]
        ahead = (d + k - c) % k
        plus = (ahead * 2) <= k
        up = d > c
        step_port, step_vc, step_bubble = _dimension_move(twin, card, ports, arrival, dim,
                                                          plus, up, vcs)
        port = Mux(c != d, step_port, port)
        vc = Mux(c != d, step_vc, vc)
        bubble = Mux(c != d, step_bubble, bubble)
    mask = Const(1, rc.config.max_vc_count) << vc
    return ExpectedRoute(port, mask, bubble, malformed, assumptions)


def _dimension_move(twin, card, ports, arrival, dim, plus, up, vcs):
    """Output port, VC and bubble flag for a packet whose DOR port is in dimension ``dim``
    (``+`` when ``plus``)."""
    results = []
    for sign in (+1, -1):
        wanted = Port.external(dim, sign)
        # Entering the ring: unless it arrived in the same dimension, or over the internal
        # link toward a split dimension (it continues that ring).
        enters = twin.mode == "bubble" and not (
            (arrival.is_external and arrival.dim == dim)
            or (arrival == INTERNAL and dim in twin.configuration.split_dims))
        if twin.configuration.card_of(wanted) == card:
            vc = Mux(up, 0, 1) if twin.mode == "vc" else Const(0, 1)
            results.append((Const(ports.index(wanted)), vc, Const(int(enters), 1)))
        elif dim not in twin.configuration.split_dims or twin.mode == "none":
            results.append((Const(ports.index(INTERNAL)), Const(vcs["type1"]),
                            Const(0, 1)))
        else:
            base = vcs[dim]
            vc = Mux(up, base, base + 1) if twin.mode == "vc" else Const(base)
            results.append((Const(ports.index(INTERNAL)), vc, Const(int(enters), 1)))
    (p_port, p_vc, p_bubble), (m_port, m_vc, m_bubble) = results
    return Mux(plus, p_port, m_port), Mux(plus, p_vc, m_vc), Mux(plus, p_bubble, m_bubble)
