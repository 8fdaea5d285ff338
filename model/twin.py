"""Twin tori (nDT): an n-dimensional torus whose nodes are two router cards joined by a link.

Each node holds card 0 and card 1. A card has some of the node's 2n external ports, one
internal port (the link to the other card of the node) and one PE port (PE0 on card 0, PE1 on
card 1). Node ``a``'s port ``d_i^+`` is cabled to node ``a + e_i``'s port ``d_i^-``. A *port
configuration* says which n external ports sit on card 0; every node uses the same one.

The same classes describe the plain torus the papers compare against: the configuration
``torus`` puts all 2n external ports on card 0, so every node is one router with one PE and no
internal link, and twin DOR reduces to ordinary DOR (with the same VC and bubble rules).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from . import checks
from .torus import CubeTopology, Node, dimension_name

MODES = ("none", "vc", "bubble")

#: The one default deadlock mode of every entry point (the papers' instances use it).
DEFAULT_MODE = "bubble"


@dataclass(frozen=True, order=True)
class Port:
    """A port of a card: external (``dim``, ``sign``), the internal link, or the PE port."""

    role: str
    dim: int = -1
    sign: int = 0

    @classmethod
    def external(cls, dim: int, sign: int) -> "Port":
        return cls("ext", dim, sign)

    @property
    def is_external(self) -> bool:
        return self.role == "ext"

    def __str__(self) -> str:
        if self.role == "ext":
            return dimension_name(self.dim) + ("+" if self.sign > 0 else "-")
        return {"internal": "I", "pe": "PE"}[self.role]

    @classmethod
    def parse(cls, text: str, n: int) -> "Port":
        """``"X+"``, ``"y-"``, ``"D3+"`` → the external port; raises ``ValueError`` otherwise."""
        text = text.strip().upper()
        names = [dimension_name(dim) for dim in range(n)]
        if len(text) >= 2 and text[-1] in "+-" and text[:-1] in names:
            return cls.external(names.index(text[:-1]), +1 if text[-1] == "+" else -1)
        allowed = ", ".join(f"{name}{sign}" for name in names for sign in "+-")
        raise ValueError(f"port {text!r} must be one of the external ports of an n={n} torus: "
                         f"{allowed}")


INTERNAL = Port("internal")
PE_PORT = Port("pe")


def external_ports(n: int) -> tuple[Port, ...]:
    """The 2n external ports of a node, in the order X+, X-, Y+, Y-, …"""
    return tuple(Port.external(dim, sign) for dim in range(n) for sign in (+1, -1))


#: The name of the single-card configuration: the plain torus (all ports on card 0).
PLAIN = "torus"

#: The ten 3DT configurations (card 0's ports), 003 Table 1.
NAMED_CONFIGURATIONS = {
    "A": "X+ Y+ Z+", "B": "X+ Y+ Z-", "C": "X+ Y+ Y-", "D": "X+ Y+ X-", "E": "X+ Y- Z+",
    "F": "X+ Y- Z-", "G": "X+ Y- X-", "H": "X+ Z+ Z-", "I": "X+ Z+ X-", "J": "X+ Z- X-",
}


@dataclass(frozen=True)
class PortConfiguration:
    """Which of the 2n external ports sit on card 0 (the rest sit on card 1).

    Build one with :meth:`named` (A–J, n = 3), :meth:`c_best` (any n), :meth:`plain` (all
    ports on card 0: the plain torus, one card per node) or :meth:`from_ports` (an explicit
    card-0 list), or parse a user's text with :meth:`parse`.
    """

    n: int
    card0: frozenset[Port]
    name: str | None = None

    def __post_init__(self):
        checks.check_int("n", self.n, minimum=2)
        ports = external_ports(self.n)
        stray = [str(p) for p in self.card0 if p not in ports]
        if stray:
            raise ValueError(f"card-0 ports {stray} are not external ports of an n={self.n} torus")
        if len(self.card0) not in (self.n, 2 * self.n):
            raise ValueError(f"card-0 port list must hold exactly n={self.n} of the {2 * self.n} "
                             f"external ports (or all {2 * self.n} for a plain torus), "
                             f"not {len(self.card0)}")

    @classmethod
    def from_ports(cls, n: int, ports: Iterable, name: str | None = None) -> "PortConfiguration":
        """Card 0 holds ``ports`` (``Port`` objects or names such as ``"X+"``)."""
        checks.check_int("n", n, minimum=2)
        parsed = [p if isinstance(p, Port) else Port.parse(p, n) for p in ports]
        repeated = sorted({str(p) for p in parsed if parsed.count(p) > 1})
        if repeated:
            raise ValueError(f"card-0 port list repeats {', '.join(repeated)}: each external port "
                             "may appear once")
        return cls(n, frozenset(parsed), name)

    @classmethod
    def named(cls, name: str) -> "PortConfiguration":
        """One of the ten 3DT configurations A–J."""
        checks.check_choice("configuration", name, NAMED_CONFIGURATIONS)
        return cls.from_ports(3, NAMED_CONFIGURATIONS[name].split(), name)

    @classmethod
    def c_best(cls, n: int) -> "PortConfiguration":
        """C_Best: dimensions 0…⌊n/2⌋−1 on card 0, the last ⌊n/2⌋ on card 1; for odd n the
        middle dimension is split with its ``-`` port on card 0 (000 Def. 3.5)."""
        checks.check_int("n", n, minimum=2)
        half = n // 2
        card0 = [Port.external(dim, sign) for dim in range(half) for sign in (+1, -1)]
        if n % 2:
            card0.append(Port.external(half, -1))
        return cls(n, frozenset(card0), "C_Best")

    @classmethod
    def plain(cls, n: int) -> "PortConfiguration":
        """Every external port on card 0: a plain n-dimensional torus, one router per node."""
        checks.check_int("n", n, minimum=2)
        return cls(n, frozenset(external_ports(n)), PLAIN)

    @classmethod
    def parse(cls, text: str, n: int) -> "PortConfiguration":
        """``"D"`` (n = 3), ``"C_Best"``, ``"torus"`` or an explicit list ``"X+,Y+,X-"``."""
        text = text.strip()
        if text.lower() in ("c_best", "cbest"):
            return cls.c_best(n)
        if text.lower() == PLAIN:
            return cls.plain(n)
        if text in NAMED_CONFIGURATIONS:
            if n != 3:
                raise ValueError(f"configuration {text!r} is a 3DT configuration; it needs n=3, "
                                 f"not n={n} (use C_Best or an explicit card-0 port list)")
            return cls.named(text)
        if "+" in text or "-" in text:
            return cls.from_ports(n, [p for p in text.replace(" ", ",").split(",") if p])
        raise ValueError(f"configuration {text!r} is not one of A–J, C_Best, torus or a card-0 "
                         "port list such as 'X+,Y+,X-'")

    @property
    def card_count(self) -> int:
        """Cards per node: 2 for a twin torus, 1 for the plain torus."""
        return 1 if len(self.card0) == 2 * self.n else 2

    def card_of(self, port: Port) -> int:
        """0 or 1: the card holding external ``port``."""
        return 0 if port in self.card0 else 1

    def ports_of(self, card: int) -> tuple[Port, ...]:
        """The external ports of ``card``, in the order X+, X-, Y+, Y-, …"""
        return tuple(p for p in external_ports(self.n) if self.card_of(p) == card)

    @cached_property
    def split_dims(self) -> tuple[int, ...]:
        """Dimensions whose two ports sit on different cards."""
        return tuple(dim for dim in range(self.n) if
                     self.card_of(Port.external(dim, +1)) != self.card_of(Port.external(dim, -1)))

    @property
    def label(self) -> str:
        """The name if it has one, else card 0's ports joined (``X+Y+X-``)."""
        return self.name or "".join(str(p) for p in self.ports_of(0))

    def __str__(self) -> str:
        card1 = " ".join(str(p) for p in self.ports_of(1))
        return f"{self.label} (card 0: {' '.join(str(p) for p in self.ports_of(0))}; " \
               f"card 1: {card1})"


def default_configuration(n: int) -> str:
    """The one default port configuration of every entry point: D for n = 3 (the best of A–J
    in 003 §7.3), C_Best for any other n (000 Def. 3.5)."""
    return "D" if n == 3 else "C_Best"


@dataclass(frozen=True, order=True)
class Card:
    """Card ``index`` (0 or 1) of the node with coordinates ``node``."""

    node: Node
    index: int

    def __str__(self) -> str:
        return f"{','.join(map(str, self.node))}/c{self.index}"


@dataclass(frozen=True, order=True)
class PEAddress:
    """PE ``<o_0 … o_{n-1} | pe>``; validated against a network by :meth:`TwinTorusTopology.pe`."""

    node: Node
    pe: int

    @property
    def card(self) -> Card:
        return Card(self.node, self.pe)

    def __str__(self) -> str:
        return f"<{','.join(map(str, self.node))}|{self.pe}>"


@dataclass(frozen=True)
class TwinTorusTopology:
    """An nDT twin torus: radices per dimension, a port configuration and a deadlock mode.

    ``configuration`` may be a :class:`PortConfiguration` or its text (``"D"``, ``"C_Best"``,
    ``"torus"`` for the plain torus with one card per node, ``"X+,Y+,X-"``); it is resolved at
    construction. ``None`` (the default) is :func:`default_configuration`: D for n = 3, C_Best
    otherwise. ``mode`` is ``none`` (one VC, deadlocks), ``vc`` (two VCs per torus link, 003
    §6.3.1) or ``bubble`` (bubble flow control, 003 §6.3.2; the default). Raises ``ValueError`` for
    n < 2, a radix below 2, an unknown configuration or mode.
    """

    radices: tuple[int, ...]
    configuration: PortConfiguration | str | None = None
    mode: str = DEFAULT_MODE

    def __post_init__(self):
        radices = self.radices
        if isinstance(radices, int) and not isinstance(radices, bool):
            raise TypeError(f"radices must be a sequence of integers, not {radices!r} "
                            "(use TwinTorusTopology.uniform(n, k))")
        radices = checks.check_int_tuple("radices", radices)
        if len(radices) < 2:
            raise ValueError(f"n must be an integer >= 2, not {len(radices)}: a twin torus needs "
                             "at least two dimensions")
        for dim, k in enumerate(radices):
            if isinstance(k, int) and k < 2:
                raise ValueError(f"k must be an integer >= 2, not {k} (dimension {dim})")
        object.__setattr__(self, "radices", radices)
        configuration = self.configuration
        if configuration is None:
            configuration = default_configuration(self.n)
        if isinstance(configuration, str):
            configuration = PortConfiguration.parse(configuration, self.n)
        if not isinstance(configuration, PortConfiguration):
            raise TypeError(f"configuration must be a PortConfiguration or its name, "
                            f"not {configuration!r}")
        if configuration.n != self.n:
            raise ValueError(f"configuration {configuration.label} is for n={configuration.n}, "
                             f"not n={self.n}")
        object.__setattr__(self, "configuration", configuration)
        checks.check_choice("mode", self.mode, MODES)

    @classmethod
    def uniform(cls, n: int, k: int, configuration=None, mode: str = DEFAULT_MODE):
        """An n-dimensional twin torus with radix ``k`` in every dimension."""
        checks.check_int("n", n, minimum=2)
        checks.check_int("k", k, minimum=2)
        return cls((k,) * n, configuration, mode)

    @property
    def n(self) -> int:
        return len(self.radices)

    @cached_property
    def cube(self) -> CubeTopology:
        return CubeTopology(self.radices)

    @property
    def node_count(self) -> int:
        return self.cube.node_count

    @property
    def card_count(self) -> int:
        """Cards (and PEs) per node: 2, or 1 for the plain torus."""
        return self.configuration.card_count

    @property
    def pe_count(self) -> int:
        return self.card_count * self.node_count

    @property
    def router_count(self) -> int:
        """Cards in the whole network (one router each)."""
        return self.card_count * self.node_count

    @property
    def name(self) -> str:
        """An identifier such as ``ndt3_k4_D_bubble``, ``ndt3_4x4x2_D_vc`` or, for the plain
        torus, ``torus2_16x8_bubble``."""
        size = (f"k{self.radices[0]}" if len(set(self.radices)) == 1
                else "x".join(map(str, self.radices)))
        if self.card_count == 1:
            return f"torus{self.n}_{size}_{self.mode}"
        label = self.configuration.label.replace("+", "p").replace("-", "m")
        return f"ndt{self.n}_{size}_{label}_{self.mode}"

    def nodes(self):
        return self.cube.nodes()

    def cards(self):
        for node in self.nodes():
            for index in range(self.card_count):
                yield Card(node, index)

    def pes(self):
        """Every PE address, node by node (PE0 before PE1)."""
        for node in self.nodes():
            for pe in range(self.card_count):
                yield PEAddress(node, pe)

    def pe(self, node, pe: int) -> PEAddress:
        """A validated PE address: each digit within its radix, ``pe`` 0 or 1 (0 on the plain
        torus)."""
        node = self.cube.check_node(node, "node")
        checks.check_choice("pe", pe, range(self.card_count))
        return PEAddress(node, pe)

    def pe_index(self, address: PEAddress) -> int:
        """The PE's position in :meth:`pes` order."""
        index = 0
        for digit, k in zip(address.node, self.radices):
            index = index * k + digit
        return self.card_count * index + address.pe

    def link_target(self, card: Card, port: Port) -> tuple[Card, Port]:
        """Where a packet leaving ``card`` through ``port`` arrives: ``(card, input port)``."""
        if port == INTERNAL and self.card_count == 2:
            return Card(card.node, 1 - card.index), INTERNAL
        if not port.is_external:
            raise ValueError(f"port {port} of card {card} leads to no other card")
        arrival = Port.external(port.dim, -port.sign)
        node = self.cube.neighbor(card.node, port.dim, port.sign)
        return Card(node, self.configuration.card_of(arrival)), arrival

    def card_links(self, card: Card):
        """Every ``(output port, (card, input port))`` leaving ``card`` toward another card."""
        internal = (INTERNAL,) if self.card_count == 2 else ()
        for port in self.configuration.ports_of(card.index) + internal:
            yield port, self.link_target(card, port)


def parse_pe(text: str) -> tuple[tuple[int, ...], int]:
    """``"0,1,2:1"`` → ``((0, 1, 2), 1)``; the PE defaults to 0 when ``:pe`` is left out.
    Digits must be ASCII (``int`` alone would take ``٣``); an empty digit or PE is an error."""
    digits, colon, pe = text.partition(":")
    items = digits.split(",") + ([pe] if colon else [])
    if not all(item.strip().isascii() and item.strip().isdigit() for item in items):
        raise ValueError(f"PE address {text!r} must look like 'x,y,z:pe', each a whole "
                         "number of at least 0 in ASCII digits, e.g. '0,1,2:1'")
    return tuple(int(d) for d in digits.split(",")), int(pe) if colon else 0
