"""A whole network to generate: a topology plus the router sizes of its RTL.

:class:`TwinNetworkConfig` is what ``twinnet gen`` builds from flags, a TOML file or a preset,
what the generator turns into Verilog and a manifest, and what a testbench reloads from the
manifest's ``parameters`` (so that its scoreboard calls the same model routing functions).
"""

from dataclasses import dataclass

from . import checks
from .twin import TwinTorusConfig


@dataclass(frozen=True)
class TwinNetworkConfig:
    """A twin torus and the sizes of its routers.

    Parameters:
        topology: the :class:`TwinTorusConfig` (radices, port configuration, deadlock mode).
        flit_width: bits per flit (the head flit must hold destination and source fields).
        packet_length: flits per packet, L (virtual cut-through, fixed length).
        buffer_depth: flits per input VC; ``None`` picks ``2 * packet_length`` (bubble mode
            needs two packets on ring links; elsewhere it lets a link stream back to back).
    """

    topology: TwinTorusConfig
    flit_width: int = 32
    packet_length: int = 4
    buffer_depth: int | None = None

    def __post_init__(self):
        if not isinstance(self.topology, TwinTorusConfig):
            raise TypeError(f"topology must be a TwinTorusConfig, not {self.topology!r}")
        checks.check_int("flit_width", self.flit_width, minimum=1)
        checks.check_int("packet_length", self.packet_length, minimum=1)
        if self.buffer_depth is not None:
            need = self.packet_length * (2 if self.topology.mode == "bubble" else 1)
            checks.check_int("buffer_depth", self.buffer_depth, minimum=need)
        header = self.destination_width + self.source_width
        if header > self.flit_width:
            raise ValueError(f"flit_width must be >= {header} bits to hold the head flit's "
                             f"destination ({self.destination_width}) and source "
                             f"({self.source_width}) fields, not {self.flit_width}")

    @property
    def depth(self) -> int:
        """Flits per input VC buffer."""
        return self.buffer_depth if self.buffer_depth is not None else 2 * self.packet_length

    @property
    def name(self) -> str:
        return self.topology.name

    @property
    def digit_widths(self) -> tuple[int, ...]:
        return tuple(max(1, (k - 1).bit_length()) for k in self.topology.radices)

    @property
    def destination_width(self) -> int:
        """Bits of a destination PE: its node digits and the PE bit."""
        return sum(self.digit_widths) + 1

    @property
    def source_width(self) -> int:
        """Bits of a source PE number (0 … pe_count - 1)."""
        return max(1, (self.topology.pe_count - 1).bit_length())

    def to_dict(self) -> dict:
        """The parameters as written, JSON/TOML-ready; :func:`twin_network_from_dict` inverts."""
        return {"topology": "twin-torus", "radices": list(self.topology.radices),
                "configuration": self.topology.configuration.label
                if self.topology.configuration.name else
                ",".join(str(p) for p in self.topology.configuration.ports_of(0)),
                "mode": self.topology.mode, "flit_width": self.flit_width,
                "packet_length": self.packet_length, "buffer_depth": self.buffer_depth}


#: Keys a twin-network description may hold (``n``/``k`` or ``radices``).
TWIN_NETWORK_KEYS = ("topology", "n", "k", "radices", "configuration", "mode", "flit_width",
                     "packet_length", "buffer_depth")


def twin_network_from_dict(values: dict, where: str = "configuration") -> TwinNetworkConfig:
    """Build a :class:`TwinNetworkConfig` from plain values; unknown keys are errors.

    ``where`` names the source in messages (e.g. a file name). Either ``radices`` or ``n`` and
    ``k`` give the size; ``configuration`` defaults to ``C_Best``, ``mode`` to ``bubble``.
    """
    unknown = sorted(set(values) - set(TWIN_NETWORK_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; allowed keys: "
                         f"{', '.join(TWIN_NETWORK_KEYS)}")
    topology = values.get("topology", "twin-torus")
    if topology != "twin-torus":
        raise ValueError(f"{where}: topology must be 'twin-torus', not {topology!r}")
    if "radices" in values:
        if "n" in values or "k" in values:
            raise ValueError(f"{where}: give either radices or n and k, not both")
        radices = checks.check_int_tuple("radices", values["radices"])
    else:
        n = checks.check_int("n", values.get("n", 3), minimum=2)
        k = checks.check_int("k", values.get("k", 4), minimum=2)
        radices = (k,) * n
    twin = TwinTorusConfig(radices, values.get("configuration", "C_Best"),
                           values.get("mode", "bubble"))
    sizes = {key: values[key] for key in ("flit_width", "packet_length", "buffer_depth")
             if key in values}
    return TwinNetworkConfig(twin, **sizes)
