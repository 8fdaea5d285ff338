"""DOR adapted to the twin node, with the three deadlock modes (003 §6, Alg. 1–6; 000 §4).

At a card of node ``c`` for destination ``<d | pe_d>``: take the ring direction in the lowest
differing dimension; with all digits equal go to the internal link (other PE) or the PE port;
if the chosen external port sits on the other card, go to the internal link instead.

Virtual channels, by mode:

- ``none``: one VC on every link.
- ``vc`` (003 §6.3.1, Alg. 3–4): external links have VC 0 (*up*, ``d_i > c_i``) and VC 1
  (*low*, otherwise); the internal link has, in this order, one VC for type 1 (only if some
  dimension is not split), an up/low pair for each split dimension (type 2), and one VC for
  type 3 — 003's numbering for configuration D, extended by dimension order.
- ``bubble`` (003 §6.3.2, Alg. 5–6): one VC on external links; internal VCs are type 1 (if
  needed), one per split dimension (type 2), then type 3. A move that *enters a ring* needs
  room for two packets.

Traffic types follow 003 §6.2.1 (000 §4.2 swaps the names of types 2 and 3).
"""

from dataclasses import dataclass

from .torus import ring_direction
from .twin import INTERNAL, PE_PORT, Card, PEAddress, Port, TwinTorusTopology

UP, LOW = 0, 1


@dataclass(frozen=True)
class InternalVc:
    """What one internal-link VC carries: its ``type`` (1, 2 or 3), with ``dim`` and ``half``
    for type 2."""

    type: int
    dim: int | None = None
    half: str | None = None  # "up" / "low" in mode vc, None otherwise

    def __str__(self) -> str:
        if self.type != 2:
            return f"type {self.type}"
        return f"type 2 {self.dim}" + (f" {self.half}" if self.half else "")


def internal_vcs(config: TwinTorusTopology) -> tuple[InternalVc, ...]:
    """The internal link's VCs, in VC-number order, for ``config``'s mode."""
    if config.mode == "none":
        return (InternalVc(0),)
    split = config.configuration.split_dims
    vcs = []
    if len(split) < config.n:
        vcs.append(InternalVc(1))
    for dim in split:
        if config.mode == "vc":
            vcs += [InternalVc(2, dim, "up"), InternalVc(2, dim, "low")]
        else:
            vcs.append(InternalVc(2, dim))
    vcs.append(InternalVc(3))
    return tuple(vcs)


def internal_vc_count(config: TwinTorusTopology) -> int:
    return len(internal_vcs(config))


def external_vc_count(config: TwinTorusTopology) -> int:
    return 2 if config.mode == "vc" else 1


def vc_count(config: TwinTorusTopology, port: Port) -> int:
    """VCs of the link leaving through ``port`` (the PE port has one)."""
    if port == INTERNAL:
        return internal_vc_count(config)
    return external_vc_count(config) if port.is_external else 1


@dataclass(frozen=True)
class RouteDecision:
    """One routing step's result: output port, output VC, and whether the bubble is needed."""

    port: Port
    vc: int
    bubble: bool


@dataclass(frozen=True)
class TwinHop:
    """A packet at ``card``, arrived through ``in_port``, leaving through ``out_port`` on ``vc``."""

    card: Card
    in_port: Port
    out_port: Port
    vc: int
    bubble: bool

    def __str__(self) -> str:
        flag = " bubble" if self.bubble else ""
        return f"{self.card}: {self.in_port} -> {self.out_port} vc{self.vc}{flag}"


def dor_port(config: TwinTorusTopology, card: Card, destination: PEAddress) -> Port:
    """Lines 1–11 of 003 Alg. 1: the port DOR wants, before the card check of lines 12–16."""
    for dim, (c, d, k) in enumerate(zip(card.node, destination.node, config.radices)):
        if c != d:
            return Port.external(dim, ring_direction(c, d, k))
    return PE_PORT if destination.pe == card.index else INTERNAL


def route(config: TwinTorusTopology, card: Card, in_port: Port,
          destination: PEAddress) -> RouteDecision:
    """One routing step at ``card`` for a packet that arrived through ``in_port``."""
    wanted = dor_port(config, card, destination)
    if wanted == PE_PORT:
        return RouteDecision(PE_PORT, 0, False)
    if wanted.is_external and config.configuration.card_of(wanted) == card.index:
        return RouteDecision(wanted, _external_vc(config, card, wanted, destination),
                             _enters_ring(config, in_port, wanted))
    return _internal_decision(config, card, in_port, wanted, destination)


def _external_vc(config: TwinTorusTopology, card: Card, port: Port, destination: PEAddress) -> int:
    if config.mode != "vc":
        return 0
    return UP if destination.node[port.dim] > card.node[port.dim] else LOW


def _enters_ring(config: TwinTorusTopology, in_port: Port, out_port: Port) -> bool:
    """Bubble mode: leaving on ``out_port`` enters its ring unless the packet continues it.

    It continues the ring when it arrived through a port of the same dimension, or through the
    internal link to leave on the split dimension's port (the internal link is then a segment
    of that ring). Injection always enters a ring.
    """
    if config.mode != "bubble":
        return False
    if in_port.is_external and in_port.dim == out_port.dim:
        return False
    return not (in_port == INTERNAL and out_port.dim in config.configuration.split_dims)


def _internal_decision(config: TwinTorusTopology, card: Card, in_port: Port, wanted: Port,
                       destination: PEAddress) -> RouteDecision:
    """Crossing the internal link toward ``wanted`` (an external port on the other card, or the
    internal link itself when the destination is the other PE of this node)."""
    if config.mode == "none":
        return RouteDecision(INTERNAL, 0, False)
    vcs = internal_vcs(config)
    if wanted == INTERNAL:
        return RouteDecision(INTERNAL, vcs.index(InternalVc(3)), False)
    if wanted.dim not in config.configuration.split_dims:
        return RouteDecision(INTERNAL, vcs.index(InternalVc(1)), False)
    half = None
    if config.mode == "vc":
        half = "up" if destination.node[wanted.dim] > card.node[wanted.dim] else "low"
    vc = vcs.index(InternalVc(2, wanted.dim, half))
    # Type 2 in bubble mode: a crossing that is itself a change of dimension (or an injection)
    # enters the split dimension's ring here, at the internal link.
    return RouteDecision(INTERNAL, vc, _enters_ring(config, in_port, wanted))


def path(config: TwinTorusTopology, source: PEAddress, destination: PEAddress) -> list[TwinHop]:
    """Every hop of a packet from PE ``source`` to PE ``destination``.

    The first hop is at the source card with input port ``PE``; the last leaves through the
    destination card's ``PE`` port. A packet to itself has the single hop ``PE -> PE``.
    """
    hops = []
    card, in_port = source.card, PE_PORT
    limit = 2 * (sum(config.radices) + 1)
    while True:
        decision = route(config, card, in_port, destination)
        hops.append(TwinHop(card, in_port, decision.port, decision.vc, decision.bubble))
        if decision.port == PE_PORT:
            return hops
        if len(hops) > limit:
            raise RuntimeError(f"route from {source} to {destination} does not end: {hops}")
        card, in_port = config.link_target(card, decision.port)
