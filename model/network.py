"""A whole network to generate: a topology plus the router sizes of its RTL.

:class:`TwinNetworkConfig` is what ``twinnet gen`` builds from flags, a TOML file or a preset,
what the generator turns into Verilog and a manifest, and what a testbench reloads from the
manifest's ``parameters`` (so that its scoreboard calls the same model routing functions).

:func:`twin_network_from_dict` is the one place that checks user-given values. Each value
carries a *label* saying where it came from (``--k``, ``net.toml: k``, ``preset 2d-8x8: radices``),
and every message names that label, the value and what is allowed.

Size limits (:data:`MAX_ROUTERS` and the others) are chosen so that anything accepted finishes
on a 2-core, 24 GiB machine: generating 3DT 8×8×8 (1,024 cards) takes about 3 s and 0.2 GB,
the 2D 64×64 torus (4,096 routers) about 2 s (``bench/generation.py``; 13 s with the traffic
harness's sources and sinks); the router's FIFOs grow with flit width × buffer depth × VCs,
and Verilator's build with both.
"""

import math
from dataclasses import dataclass

from . import checks
from .sizes import (  # noqa: F401 (the limits are part of this module's interface)
    DEFAULT_FLIT_WIDTH,
    DEFAULT_PACKET_LENGTH,
    DEFAULT_PIPELINE,
    MAX_BUFFER_DEPTH,
    MAX_FLIT_WIDTH,
    MAX_PACKET_LENGTH,
    RouterSizes,
    check_pipeline,
)
from .twin import DEFAULT_MODE, MODES, PortConfiguration, TwinTorusConfig, default_configuration

#: Routers (cards) in one generated network: four times the largest instances of the papers
#: (003 §7.4: 3DT 8×8×8 and the 2D 32×32 torus, both 1,024), e.g. the 2D 64×64 torus or 3DT
#: 16×16×8.
MAX_ROUTERS = 4096
#: Routers in mode ``vc``: its VC rules depend on absolute coordinates, so its deadlock check
#: walks every pair of nodes (17 s for the 2D 32×32 torus; 16 times that at 4,096).
MAX_VC_ROUTERS = 1024
#: Dimensions of a torus given by ``n`` (a 2-ary 10-cube already has 1,024 nodes).
MAX_DIMENSIONS = 10

#: Default sizes (one default everywhere: the demo network is 3DT 4×4×4, D, bubble).
DEFAULT_N, DEFAULT_K = 3, 4


@dataclass(frozen=True)
class TwinNetworkConfig(RouterSizes):
    """A twin torus and the sizes of its routers.

    Parameters:
        topology: the :class:`TwinTorusConfig` (radices, port configuration, deadlock mode).
        flit_width: bits per flit (the head flit must hold destination and source fields).
        packet_length: flits per packet, L (virtual cut-through, fixed length).
        buffer_depth: flits per input VC; ``None`` picks ``2 * packet_length`` (bubble mode
            needs two packets on ring links; elsewhere it lets a link stream back to back).
        pipeline: the routers' zero-load cycles per hop, 2 (the compact router, default) or 3
            (the split router, built for Fmax).
    """

    topology: TwinTorusConfig
    flit_width: int = DEFAULT_FLIT_WIDTH
    packet_length: int = DEFAULT_PACKET_LENGTH
    buffer_depth: int | None = None
    pipeline: int = DEFAULT_PIPELINE

    def __post_init__(self):
        if not isinstance(self.topology, TwinTorusConfig):
            raise TypeError(f"topology must be a TwinTorusConfig, not {self.topology!r}")
        checks.check_int("flit_width", self.flit_width, minimum=1, maximum=MAX_FLIT_WIDTH)
        checks.check_int("packet_length", self.packet_length, minimum=1,
                         maximum=MAX_PACKET_LENGTH)
        if self.buffer_depth is not None:
            need = self.packet_length * (2 if self.topology.mode == "bubble" else 1)
            checks.check_int("buffer_depth", self.buffer_depth, minimum=need,
                             maximum=max(need, MAX_BUFFER_DEPTH))
        check_pipeline("pipeline", self.pipeline)
        header = self.destination_width + self.source_width
        if header > self.flit_width:
            raise ValueError(f"flit_width must be >= {header} bits to hold the head flit's "
                             f"destination ({self.destination_width}) and source "
                             f"({self.source_width}) fields, not {self.flit_width}")

    @property
    def name(self) -> str:
        """The topology's name plus every size that differs from the default, so that two
        networks whose Verilog differs never share a name: ``ndt3_k4_D_bubble``,
        ``ndt3_k4_D_bubble_w64_l8`` (64-bit flits, 8-flit packets), ``..._d24`` (buffers of 24
        flits where 2 × packet length is the default)."""
        return self.topology.name + self.size_suffix

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
                "packet_length": self.packet_length, "buffer_depth": self.buffer_depth,
                "pipeline": self.pipeline}


#: Keys a twin-network description may hold (``n``/``k`` or ``radices``).
TWIN_NETWORK_KEYS = ("topology", "n", "k", "radices", "configuration", "mode", "flit_width",
                     "packet_length", "buffer_depth", "pipeline")


def twin_torus_from_dict(values: dict, labels: dict | str = "configuration", *,
                         max_nodes: int | None = None, why: str = "") -> TwinTorusConfig:
    """Build a :class:`TwinTorusConfig` from plain values (the topology keys of
    :data:`TWIN_NETWORK_KEYS`; others are ignored here).

    ``labels`` names each key in messages: a dict (key → label such as ``--k`` or
    ``net.toml: k``) or one source name (``net.toml`` → ``net.toml: k``). Either ``radices`` or
    ``n`` and ``k`` give the size (default 3 × 4); ``configuration`` defaults to D for n = 3
    and C_Best otherwise, ``mode`` to ``bubble``. ``max_nodes`` bounds the node count (``why``
    says why, in the message). Raises ``TypeError``/``ValueError`` naming the label, the value
    and what is allowed, before anything is built.
    """
    names = checks.labels_of(values, labels)
    if "radices" in values:
        if "n" in values or "k" in values:
            other = names["n"] if "n" in values else names["k"]
            raise ValueError(f"{names['radices']} and {other} both give the size: give either "
                             "radices or n and k, not both")
        radices = checks.check_int_tuple(names["radices"], values["radices"], minimum=2)
        if len(radices) < 2:
            raise ValueError(f"{names['radices']} must list at least 2 radices (a torus of "
                             f"n >= 2 dimensions), not {len(radices)}")
        size_label = dims_label = names["radices"]
    else:
        n = checks.check_int(names.get("n", "n"), values.get("n", DEFAULT_N), minimum=2,
                             maximum=MAX_DIMENSIONS)
        k = checks.check_int(names.get("k", "k"), values.get("k", DEFAULT_K), minimum=2)
        radices = (k,) * n
        size_label = " and ".join(names[key] for key in ("n", "k") if key in values) or "n, k"
        dims_label = names["n"] if "n" in values else f"the default n = {DEFAULT_N}"
    if max_nodes is not None and math.prod(radices) > max_nodes:
        shown = "x".join(map(str, radices)) if len(radices) <= 8 else f"{len(radices)}-D"
        raise ValueError(f"{size_label}: a {shown} torus has {math.prod(radices):,} nodes; at "
                         f"most {max_nodes:,} are allowed here{why}")
    configuration = values.get("configuration", default_configuration(len(radices)))
    label = names.get("configuration", "configuration")
    if not isinstance(configuration, str):
        raise TypeError(f"{label} must be text such as 'D', 'C_Best', 'torus' or 'X+,Y+,X-', "
                        f"not {configuration!r}")
    try:
        configuration = PortConfiguration.parse(configuration, len(radices))
    except ValueError as error:
        raise ValueError(f"{label} {configuration}: {error} (n = {len(radices)} from "
                         f"{dims_label})") from None
    mode = checks.check_choice(names.get("mode", "mode"), values.get("mode", DEFAULT_MODE),
                               MODES)
    return TwinTorusConfig(radices, configuration, mode)


def twin_network_from_dict(values: dict, labels: dict | str = "configuration"
                           ) -> TwinNetworkConfig:
    """Build a :class:`TwinNetworkConfig` from plain values; unknown keys are errors.

    Labels and defaults as for :func:`twin_torus_from_dict`; at most :data:`MAX_ROUTERS`
    routers and the size limits of this module. Raises ``TypeError``/``ValueError`` naming the
    label, the value and what is allowed, before anything is built.
    """
    names = checks.labels_of(values, labels)
    unknown = sorted(set(values) - set(TWIN_NETWORK_KEYS))
    if unknown:
        raise ValueError(f"{names[unknown[0]]}: unknown key; allowed keys: "
                         f"{', '.join(TWIN_NETWORK_KEYS)}")
    topology = values.get("topology", "twin-torus")
    if topology != "twin-torus":
        raise ValueError(f"{names['topology']} must be 'twin-torus', not {topology!r}")
    twin = twin_torus_from_dict(
        values, names, max_nodes=MAX_ROUTERS,
        why=f" (at most {MAX_ROUTERS:,} routers, e.g. the 2D 64x64 torus; generation time and "
            "memory grow with the router count)")
    if twin.router_count > MAX_ROUTERS:
        size = " and ".join(names[key] for key in ("radices", "n", "k") if key in values)
        shown = "x".join(map(str, twin.radices))
        raise ValueError(f"{size or 'n, k'}: the {shown} twin torus has "
                         f"{twin.router_count:,} cards (two per node); at most "
                         f"{MAX_ROUTERS:,} routers are allowed (e.g. 3DT 16x16x8)")
    if twin.mode == "vc" and twin.router_count > MAX_VC_ROUTERS:
        size = " and ".join(names[key] for key in ("radices", "n", "k") if key in values)
        raise ValueError(f"{names.get('mode', 'mode')} 'vc' takes at most {MAX_VC_ROUTERS:,} "
                         f"routers, not {twin.router_count:,} ({size or 'n, k'}): its deadlock "
                         "check walks every pair of nodes; modes bubble and none take "
                         f"{MAX_ROUTERS:,}")
    sizes = {}
    for key, maximum in (("flit_width", MAX_FLIT_WIDTH), ("packet_length", MAX_PACKET_LENGTH),
                         ("buffer_depth", MAX_BUFFER_DEPTH)):
        if values.get(key) is not None:  # None: the default (to_dict writes it so)
            sizes[key] = checks.check_int(names[key], values[key], minimum=1, maximum=maximum)
    sizes["pipeline"] = check_pipeline(names.get("pipeline", "pipeline"),
                                       values.get("pipeline", DEFAULT_PIPELINE))
    length = sizes.get("packet_length", DEFAULT_PACKET_LENGTH)
    if "buffer_depth" in sizes:
        need = length * (2 if twin.mode == "bubble" else 1)
        if sizes["buffer_depth"] < need:
            why = "two packets (bubble flow control)" if twin.mode == "bubble" else "one packet"
            raise ValueError(f"{names['buffer_depth']} must be >= {need} flits to hold {why} of "
                             f"{length} flits, not {sizes['buffer_depth']}")
    probe = TwinNetworkConfig(twin, MAX_FLIT_WIDTH, length)
    header = probe.destination_width + probe.source_width
    width = sizes.get("flit_width", DEFAULT_FLIT_WIDTH)
    if width < header:
        label = names.get("flit_width", "flit_width (default 32)")
        raise ValueError(f"{label} must be >= {header} bits to hold the head flit's destination "
                         f"({probe.destination_width}) and source ({probe.source_width}) fields "
                         f"of this network, not {width}")
    return TwinNetworkConfig(twin, **sizes)
