"""The twin switch (T-switch): a 2k-port switch built from two internal switches α and β.

Ports ``0 … k-1`` face down (toward the terminals) and ``k … 2k-1`` face up, as in a k-ary
n-tree switch. Internal switch α carries the external ports of the set ``alpha``, β the other
k; the two are joined by ``internal_port_count`` (r ≥ 1) internal ports. A connection from
port ``l`` to port ``l'`` crosses the internal link iff ``l`` and ``l'`` sit on different halves
(001 Def. 1.2; §4, Def. 1.6–1.10; §4.1).
"""

from dataclasses import dataclass

from . import checks

HALVES = ("alpha", "beta")


@dataclass(frozen=True)
class TwinSwitch:
    """A twin switch of radix ``2k``: ``alpha`` holds exactly k of the ports ``0 … 2k-1``.

    ``internal_port_count`` is r, the number of internal ports between α and β. A crossing
    from port ``l`` to port ``l'`` uses internal port ``l' mod r`` (a static spread by output
    port; the paper leaves the choice open). Raises ``TypeError``/``ValueError`` when k < 2,
    r < 1, ``alpha`` holds a port outside ``0 … 2k-1`` or does not hold exactly k ports.
    """

    k: int
    alpha: frozenset[int]
    internal_port_count: int = 1

    def __post_init__(self):
        checks.check_int("k", self.k, minimum=2)
        checks.check_int("internal_port_count", self.internal_port_count, minimum=1)
        ports = checks.check_switch_ports("alpha", sorted(self.alpha) if isinstance(
            self.alpha, (set, frozenset)) else self.alpha, self.port_count)
        if len(ports) != self.k:
            raise ValueError(f"alpha must hold exactly k = {self.k} of the {self.port_count} "
                             f"ports (half of them), not {len(ports)}: {sorted(ports)}")
        object.__setattr__(self, "alpha", frozenset(ports))

    @classmethod
    def paired(cls, k: int, internal_port_count: int = 1) -> "TwinSwitch":
        """The optimal split below the last stage (001 Prop. 1.29): each half holds pairs
        ``{l, l + k}``; α = ``{0 … k/2-1} ∪ {k … k + k/2-1}``. Raises ``ValueError`` for odd k."""
        checks.check_int("k", k, minimum=2)
        if k % 2:
            raise ValueError(f"k must be even for the paired split (k/2 pairs {{l, l+k}} per "
                             f"half), not {k}")
        half = k // 2
        return cls(k, frozenset([*range(half), *range(k, k + half)]), internal_port_count)

    @classmethod
    def down_on_alpha(cls, k: int, internal_port_count: int = 1) -> "TwinSwitch":
        """All k down ports on α, all up ports on β: optimal at the last stage (001 Prop.
        1.30), where the up ports are unused; costly below it."""
        checks.check_int("k", k, minimum=2)
        return cls(k, frozenset(range(k)), internal_port_count)

    @property
    def port_count(self) -> int:
        return 2 * self.k

    @property
    def beta(self) -> frozenset[int]:
        return frozenset(range(self.port_count)) - self.alpha

    def check_port(self, port: int, name: str = "port") -> int:
        return checks.check_int(name, port, minimum=0, maximum=self.port_count - 1)

    def half_of(self, port: int) -> str:
        """``"alpha"`` or ``"beta"``: the internal switch carrying external ``port``."""
        return "alpha" if self.check_port(port) in self.alpha else "beta"

    def crosses(self, in_port: int, out_port: int) -> bool:
        """True if a connection from ``in_port`` to ``out_port`` uses the internal link."""
        return self.half_of(in_port) != self.half_of(out_port)

    def internal_port(self, in_port: int, out_port: int) -> int | None:
        """The internal port (``0 … r-1``) a crossing connection uses, ``None`` if it stays."""
        if not self.crosses(in_port, out_port):
            return None
        return out_port % self.internal_port_count

    def describe(self) -> str:
        """``α={0,1,4,5} β={2,3,6,7} r=1``."""
        def listed(ports):
            return "{" + ",".join(map(str, sorted(ports))) + "}"
        return f"α={listed(self.alpha)} β={listed(self.beta)} r={self.internal_port_count}"
