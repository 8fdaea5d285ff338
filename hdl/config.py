"""Router parameters: :class:`PortConfig` (one per port) and :class:`RouterConfig` (the router).

Both are frozen dataclasses that validate in ``__post_init__``, before any hardware is built, and
raise ``TypeError``/``ValueError`` naming the parameter, the value and what is allowed. What the
user wrote is kept as given; derived values are properties.

A port is bidirectional. Its input half holds ``vc_count`` FIFOs of ``buffer_depth`` flits each.
Its output half assumes the link partner has the same shape: a network or internal link reaches
a port with the same VC count and depth (links join like ports), and a PE port's output half is
an ejection FIFO of ``buffer_depth`` flits with one VC.
"""

from dataclasses import dataclass, fields
from functools import cached_property

from twinnet.model import checks
from twinnet.model.sizes import (  # noqa: F401
    ALLOCATORS,
    BUFFER_MEMORIES,
    DEFAULT_PIPELINE,
    HOLDS,
    MAX_EJECTION_LANES,
    MAX_ITERATIONS,
    MICROARCHITECTURE,
    NATIVE_BYPASS,
    NATIVE_HOLD,
    NATIVE_SWITCH_INPUTS,
    PIPELINES,
    SWITCH_INPUTS,
    RouterSizes,
    check_microarchitecture,
    check_pipeline,
    resolve_microarchitecture,
)

#: Port roles: a link to another router, the link between the two halves of a twin router (a
#: card pair or a twin switch), and a processing element.
ROLES = ("network", "internal", "pe")

#: Width of a router's ``drop_count`` status output (the default of
#: :attr:`RouterConfig.drop_count_width`), and of the network top's ``drop_count``, the sum over
#: its routers (:mod:`twinnet.hdl.network`): with every router counting in as many bits as the
#: total, none saturates before the total does.
DROP_COUNT_WIDTH = 32
#: Bad framing a PE port drops and counts (:class:`twinnet.hdl.router.input_unit.InputUnit`):
#: ``stray``, a body or tail flit with no packet open (the flit is dropped); ``cut``, a head
#: while a packet is open (the open packet is closed by an aborting tail); ``long``, a packet
#: still open after ``max_packet_length`` flits (its last one written becomes an aborting
#: tail and the rest of it, up to the PE's tail, is dropped).
FRAMING_ERRORS = ("stray", "cut", "long")
#: Bits of each framing counter of a PE port; each saturates at its largest value.
FRAMING_COUNT_WIDTH = 16


@dataclass(frozen=True)
class PortConfig:
    """One router port.

    Parameters:
        role: ``"network"``, ``"internal"`` (credit links to another router) or ``"pe"`` (a
            valid/ready stream of whole packets to and from a processing element).
        vc_count: virtual channels of the input half (>= 1). The output half of a link port has
            the same count (the partner's input); the output half of a PE port has one.
        buffer_depth: flits per input VC FIFO; must hold a whole packet (checked by
            :class:`RouterConfig`, which knows the packet length).
        bubble: the port's output carries bubble traffic (a route compute may set the bubble
            flag for it), so its downstream buffers must hold two packets. Link ports only.
        name: optional label used in generated names and reports.
    """

    role: str
    vc_count: int = 1
    buffer_depth: int = 8
    bubble: bool = False
    name: str | None = None

    def __post_init__(self):
        checks.check_choice("role", self.role, ROLES)
        checks.check_int("vc_count", self.vc_count, minimum=1)
        checks.check_int("buffer_depth", self.buffer_depth, minimum=1)
        if not isinstance(self.bubble, bool):
            raise TypeError(f"bubble must be True or False, not {self.bubble!r}")
        if self.bubble and self.role == "pe":
            raise ValueError("bubble must be False for a 'pe' port (bubble flow control applies "
                             "to ring links: role 'network' or 'internal')")
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"name must be a string or None, not {self.name!r}")

    @property
    def is_pe(self) -> bool:
        return self.role == "pe"

    @property
    def output_vc_count(self) -> int:
        """VCs of the output half: the partner's input VCs, or 1 toward a PE."""
        return 1 if self.is_pe else self.vc_count

    def to_dict(self) -> dict:
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True)
class RouterConfig:
    """An input-queued virtual cut-through router with credit flow control (003 §7.1, 002 §3.1).

    Parameters:
        flit_width: bits of one flit (>= 1). The head flit must also hold the routing header
            (checked by :class:`twinnet.hdl.flit.FlitFormat` once the routing is known).
        max_packet_length: the most flits a packet may have, L (>= 1). Packets have 1 to L
            flits, framed by the first and last marks (a one-flit packet is head and tail at
            once); flow control reserves room for L flits per packet (``docs/router.md``).
        ports: the ports, a sequence of :class:`PortConfig` (at least one); port ``i`` is
            input ``i`` and output ``i``. Every buffer holds at least L flits, 2L on bubble
            ports.
        drop_count_width: bits of the ``drop_count`` status output (1 to 64, default
            :data:`DROP_COUNT_WIDTH`, 32); the counter saturates at its largest value.
        source_width, tag_width: bits of the head flit's source and packet-tag fields,
            carried for the PEs (the router does not read them; >= 0).
        pipeline: the microarchitecture, by its zero-load cycles per hop (one of
            :data:`PIPELINES`): 3 (the split router, default) or 2 (the compact router; see
            ``docs/router.md``).
        allocator: the allocation policy, one of :data:`ALLOCATORS`: ``"round-robin"``
            (separable, the default) or ``"islip"``.
        iterations: rounds of iSLIP matching per cycle (1 to :data:`MAX_ITERATIONS`; more than
            one needs ``allocator="islip"``).
        switch_inputs: crossbar inputs, ``"port"`` or ``"vc"`` (None: the pipeline's own,
            :data:`NATIVE_SWITCH_INPUTS`; the split router takes only ``"vc"``).
        hold: what an allocated packet holds, ``"flit"`` (an output VC) or ``"packet"`` (the
            output, head to tail) (None: the pipeline's own, :data:`NATIVE_HOLD`; the split
            router takes only ``"packet"``).
        ejection_lanes: crossbar outputs per PE port, 1 to :data:`MAX_EJECTION_LANES`, each
            with an ejection buffer of its own (one packet with more than one lane; the split
            router only): packets of that many input VCs eject in one cycle.
        buffer_memory: what keeps an input VC's flits, one of :data:`BUFFER_MEMORIES`:
            ``"lut"`` (read asynchronously: LUT RAM; the default) or ``"block"`` (read
            synchronously, addressed a cycle ahead: block RAM); the same behaviour.
        bypass: a head arriving on a link while its VC has no packet waiting is allocated
            in its arrival cycle: 2 cycles per link hop (None: the pipeline's own,
            :data:`NATIVE_BYPASS`: the split router's; the compact router has none).
        stall_counters: add the ``stalls`` status outputs, counters of why waiting packets
            were not allocated (:data:`twinnet.hdl.router.stalls.STALL_REASONS`); for
            measurements, off by default.
    """

    flit_width: int
    max_packet_length: int
    ports: tuple[PortConfig, ...]
    source_width: int = 0
    tag_width: int = 0
    drop_count_width: int = DROP_COUNT_WIDTH
    pipeline: int = DEFAULT_PIPELINE
    allocator: str = "round-robin"
    iterations: int = 1
    switch_inputs: str | None = None
    hold: str | None = None
    ejection_lanes: int = 1
    buffer_memory: str = "lut"
    bypass: bool | None = None
    stall_counters: bool = False

    def __post_init__(self):
        checks.check_int("flit_width", self.flit_width, minimum=1)
        checks.check_int("max_packet_length", self.max_packet_length, minimum=1)
        checks.check_int("source_width", self.source_width, minimum=0)
        checks.check_int("tag_width", self.tag_width, minimum=0)
        checks.check_int("drop_count_width", self.drop_count_width, minimum=1, maximum=64)
        check_pipeline("pipeline", self.pipeline)
        checks.check_choice("allocator", self.allocator, ALLOCATORS)
        checks.check_int("iterations", self.iterations, minimum=1, maximum=MAX_ITERATIONS)
        for key, choices in (("switch_inputs", SWITCH_INPUTS), ("hold", HOLDS)):
            if getattr(self, key) is not None:
                checks.check_choice(key, getattr(self, key), choices)
        checks.check_int("ejection_lanes", self.ejection_lanes, minimum=1,
                         maximum=MAX_EJECTION_LANES)
        checks.check_choice("buffer_memory", self.buffer_memory, BUFFER_MEMORIES)
        for key, allowed in (("bypass", (bool, type(None))), ("stall_counters", bool)):
            if not isinstance(getattr(self, key), allowed):
                raise TypeError(f"{key} must be True or False, not {getattr(self, key)!r}")
        check_microarchitecture({key: getattr(self, key) for key in MICROARCHITECTURE},
                                {key: key for key in MICROARCHITECTURE})
        if isinstance(self.ports, (str, bytes, PortConfig)) or not hasattr(self.ports, "__iter__"):
            raise TypeError(f"ports must be a sequence of PortConfig, not {self.ports!r}")
        ports = tuple(self.ports)
        object.__setattr__(self, "ports", ports)
        if not ports:
            raise ValueError("ports must list at least 1 port, not 0")
        for index, port in enumerate(ports):
            if not isinstance(port, PortConfig):
                raise TypeError(f"ports[{index}] must be a PortConfig, not {port!r}")
            RouterSizes.check_buffer(
                {"buffer_depth": port.buffer_depth, "max_packet_length": self.max_packet_length},
                {"buffer_depth": f"ports[{index}].buffer_depth"}, bubble=port.bubble)

    # Derived values.

    @cached_property
    def microarchitecture(self) -> dict:
        """The knobs of :data:`MICROARCHITECTURE` as built: each not given (None) is the
        pipeline's own."""
        return resolve_microarchitecture({key: getattr(self, key) for key in MICROARCHITECTURE})

    @property
    def switch_inputs_per_vc(self) -> bool:
        """One crossbar input per input VC (else one per input port)."""
        return self.microarchitecture["switch_inputs"] == "vc"

    @property
    def bypasses(self) -> bool:
        """Link heads are allocated in their arrival cycle (``bypass``, else the pipeline's
        own)."""
        return self.microarchitecture["bypass"]

    @property
    def hop_cycles(self) -> int:
        """Zero-load cycles per link hop: the pipeline's, 2 with the bypass."""
        return 2 if self.bypasses else self.pipeline

    @property
    def holds_outputs(self) -> bool:
        """An allocated packet holds its output from head to tail (else only an output VC)."""
        return self.microarchitecture["hold"] == "packet"

    @property
    def port_count(self) -> int:
        return len(self.ports)

    @cached_property
    def outputs(self) -> tuple[tuple[int, int], ...]:
        """The crossbar's outputs as ``(port, lane)``: output ``o < port_count`` is port
        ``o`` (its lane 0), then each PE port's further ejection lanes, port by port."""
        extra = tuple((p, lane) for p in self.pe_ports for lane in range(1, self.ejection_lanes))
        return tuple((p, 0) for p in range(self.port_count)) + extra

    def lanes_of(self, port: int) -> tuple[int, ...]:
        """The outputs of ``port``: itself, and a PE port's further ejection lanes."""
        return tuple(o for o, (p, _) in enumerate(self.outputs) if p == port)

    @cached_property
    def vc_counts(self) -> tuple[int, ...]:
        """Input VCs per port."""
        return tuple(port.vc_count for port in self.ports)

    @cached_property
    def output_vc_counts(self) -> tuple[int, ...]:
        """Output VCs per port (1 toward a PE)."""
        return tuple(port.output_vc_count for port in self.ports)

    @property
    def max_vc_count(self) -> int:
        """Width of VC masks and of the route compute's ``in_vc`` range."""
        return max(self.vc_counts)

    @property
    def pe_ports(self) -> tuple[int, ...]:
        return tuple(i for i, port in enumerate(self.ports) if port.is_pe)

    @property
    def link_ports(self) -> tuple[int, ...]:
        return tuple(i for i, port in enumerate(self.ports) if not port.is_pe)

    def to_dict(self) -> dict:
        """The parameters as written (every field), JSON-ready; :meth:`from_dict` inverts
        it."""
        return {field.name: getattr(self, field.name) for field in fields(self)} | {
            "ports": [port.to_dict() for port in self.ports]}

    @classmethod
    def from_dict(cls, values: dict) -> "RouterConfig":
        """Rebuild a configuration from :meth:`to_dict` output (unknown keys are rejected)."""
        allowed = {field.name for field in fields(cls)}
        unknown = set(values) - allowed
        if unknown:
            raise ValueError(f"unknown router configuration keys {sorted(unknown)}; "
                             f"allowed: {sorted(allowed)}")
        ports = tuple(PortConfig(**port) for port in values.get("ports", ()))
        return cls(**{**values, "ports": ports})


def router_config(sizes, ports, *, source_width: int = 0,
                  stall_counters: bool = False) -> RouterConfig:
    """The router of a network whose sizes are ``sizes`` (a network configuration, a
    :class:`twinnet.model.sizes.RouterSizes`: flit width, longest packet, microarchitecture)
    with ``ports`` (:class:`PortConfig`, e.g. from :func:`pe_port` and :func:`link_port`):
    the one place where a family's sizes become its routers' configuration."""
    return RouterConfig(sizes.flit_width, sizes.max_packet_length, tuple(ports),
                        source_width=source_width, drop_count_width=DROP_COUNT_WIDTH,
                        **sizes.microarchitecture, stall_counters=stall_counters)


def pe_port(sizes, name: str) -> PortConfig:
    """A PE port of a network of ``sizes``: one VC, the network's buffer depth."""
    return PortConfig("pe", 1, sizes.depth, name=name)


def link_port(sizes, vc_count: int, name: str, *, bubble: bool = False,
              role: str = "network") -> PortConfig:
    """A port to another router (``role`` ``network``, or ``internal`` inside a twin card or
    switch) of a network of ``sizes``: ``vc_count`` VCs of the network's buffer depth."""
    return PortConfig(role, vc_count, sizes.depth, bubble=bubble, name=name)


def verilog_label(label) -> str:
    """A Verilog-safe name for a port's label: ``X+`` → ``Xp``, ``t-`` → ``tm``."""
    return str(label).replace("+", "p").replace("-", "m")
