"""A whole network to generate: a topology plus the router sizes of its RTL.

:class:`TwinNetworkConfig` is what ``twinnet gen`` builds from flags, a TOML file or a preset,
what the generator turns into Verilog and a manifest, and what a testbench reloads from the
manifest's ``parameters`` (so that its scoreboard calls the same model routing functions).

:meth:`TwinNetworkConfig.from_dict` (:mod:`twinnet.model.schema`) checks user-given values.
Each value
carries a *label* saying where it came from (``--k``, ``net.toml: k``, ``preset 2d-8x8: radices``),
and every message names that label, the value and what is allowed.

Size limits (:data:`MAX_ROUTERS` and the others) are chosen so that anything accepted finishes
on a 2-core, 24 GiB machine: generating 3DT 8×8×8 (1,024 cards) takes about 4 s and 0.2 GB,
the 2D 128×128 torus and 3DT 16×16×32 (16,384 routers) 13-23 s (``bench/generation.py``;
27-36 s with the traffic harness's sources and sinks); the router's FIFOs grow with flit
width × buffer depth × VCs, and Verilator's build with both.
"""

import functools
import math
from dataclasses import dataclass

from . import checks
from .schema import Choice, Integer, Integers, Parameter, Text, parameter
from .sizes import (  # noqa: F401 (the limits are part of this module's interface)
    DEFAULT_FLIT_WIDTH,
    DEFAULT_MAX_PACKET_LENGTH,
    DEFAULT_PIPELINE,
    MAX_BUFFER_DEPTH,
    MAX_FLIT_WIDTH,
    PACKET_LENGTH_LIMIT,
    RouterSizes,
)
from .twin import DEFAULT_MODE, MODES, PortConfiguration, TwinTorusTopology, default_configuration
from .widths import index_width

#: Routers (cards) in one generated network: sixteen times the largest instances of the
#: papers (003 §7.4: 3DT 8×8×8 and the 2D 32×32 torus, both 1,024), e.g. the 2D 128×128 torus
#: or 3DT 16×16×32 (``bench/generation.py``: 13-23 s and about 460 MiB for ``twinnet gen``).
MAX_ROUTERS = 16384
#: Dimensions of a torus given by ``n`` (a 2-ary 10-cube already has 1,024 nodes).
MAX_DIMENSIONS = 10

#: Default sizes (one default everywhere: the demo network is 3DT 4×4×4, D, bubble).
DEFAULT_N, DEFAULT_K = 3, 4


def _read_configuration(label: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{label} must be text such as 'D', 'C_Best', 'torus' or 'X+,Y+,X-', "
                        f"not {value!r}")
    return value


@dataclass(frozen=True)
class TwinNetworkConfig(RouterSizes):
    """A twin torus (``radices``, ``configuration``, ``mode``: :attr:`topology`) and the sizes
    of its routers; ``buffer_depth`` ``None`` is ``2 * max_packet_length`` (bubble mode needs two
    packets on ring links; elsewhere it lets a link stream back to back). Each field is a
    parameter (:mod:`twinnet.model.schema`); ``n`` and ``k`` are another way to give the
    radices."""

    family = "twin-torus"
    inputs = (
        Parameter("n", Integer(2, MAX_DIMENSIONS), None,
                  f"dimensions (default {DEFAULT_N})", "--n"),
        Parameter("k", Integer(2, None), None,
                  f"radix of every dimension (default {DEFAULT_K})", "--k"),
    )

    radices: tuple[int, ...] = parameter(
        None, Integers(2, None, (2, MAX_DIMENSIONS), "dimensions"),
        "radix per dimension, e.g. 4,4,2 (instead of n and k)", flag="--radix")
    configuration: str = parameter(
        None, Text(_read_configuration, "D or X+,Y+,X-"),
        "port configuration: A–J (n = 3), C_Best, torus (the plain torus, one router per node) "
        "or a card-0 list such as X+,Y+,X- (default D for n = 3, C_Best otherwise)",
        flag="--config")
    mode: str = parameter(DEFAULT_MODE, Choice(MODES), "deadlock mode (default bubble)")

    @classmethod
    def bubble(cls, values: dict) -> bool:
        return values["mode"] == "bubble"

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        given = {key: values[key] for key in ("n", "k", "radices", "configuration", "mode")
                 if values[key] is not None}
        twin = twin_torus_from_dict(
            given, names, max_nodes=MAX_ROUTERS,
            why=f" (at most {MAX_ROUTERS:,} routers, e.g. the 2D 128x128 torus; generation time "
                "and memory grow with the router count)")
        size = " and ".join(names[key] for key in ("radices", "n", "k") if key in given)
        if twin.router_count > MAX_ROUTERS:
            shown = "x".join(map(str, twin.radices))
            raise ValueError(f"{size or 'n, k'}: the {shown} twin torus has "
                             f"{twin.router_count:,} cards (two per node); at most "
                             f"{MAX_ROUTERS:,} routers are allowed (e.g. 3DT 16x16x32)")
        values["radices"], values["configuration"] = twin.radices, _configuration_text(twin)
        super().rules(values, names)

    @classmethod
    def for_topology(cls, topology: TwinTorusTopology, **sizes) -> "TwinNetworkConfig":
        """The network of a :class:`TwinTorusTopology` with ``sizes`` (router-size keys)."""
        return cls.from_dict({"radices": topology.radices,
                              "configuration": _configuration_text(topology),
                              "mode": topology.mode, **sizes})

    @functools.cached_property
    def topology(self) -> TwinTorusTopology:
        return TwinTorusTopology(self.radices, PortConfiguration.parse(
            self.configuration, len(self.radices)), self.mode)

    @property
    def name(self) -> str:
        """The topology's name plus every size that differs from the default, so that two
        networks whose Verilog differs never share a name: ``ndt3_k4_D_bubble``,
        ``ndt3_k4_D_bubble_w64_l8`` (64-bit flits, 8-flit packets), ``..._d24`` (buffers of 24
        flits where 2 × packet length is the default)."""
        return self.topology.name + self.size_suffix

    @property
    def digit_widths(self) -> tuple[int, ...]:
        return tuple(index_width(k) for k in self.topology.radices)

    @property
    def destination_width(self) -> int:
        """Bits of a destination PE: its node digits and the PE bit."""
        return sum(self.digit_widths) + 1

    @property
    def source_width(self) -> int:
        """Bits of a source PE number (0 … pe_count - 1)."""
        return index_width(self.topology.pe_count)

    @property
    def header_width(self) -> int:
        return self.destination_width + self.source_width


def _configuration_text(twin: TwinTorusTopology) -> str:
    """A port configuration as written: its name, or card 0's port list."""
    configuration = twin.configuration
    return configuration.label if configuration.name else ",".join(
        str(port) for port in configuration.ports_of(0))


def twin_torus_from_dict(values: dict, labels: dict | str = "configuration", *,
                         max_nodes: int | None = None, why: str = "") -> TwinTorusTopology:
    """Build a :class:`TwinTorusTopology` from plain values (the topology keys of
    :class:`TwinNetworkConfig`; others are ignored here).

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
    return TwinTorusTopology(radices, configuration, mode)
