"""What every family's network configuration shares: the routers' sizes and microarchitecture.

:class:`RouterSizes` is the base of every family's configuration (:mod:`twinnet.model.schema`):
it declares, once, the parameters ``flit_width``, ``max_packet_length`` (the most flits a
packet may have: packets have 1 to that many),
``buffer_depth`` (flits per input VC, ``None`` for the default of two packets),
``pipeline`` (the router's zero-load cycles per hop, one of :data:`PIPELINES`) and the
microarchitecture's knobs ``allocator``, ``iterations``, ``switch_inputs``, ``hold``,
``ejection_lanes``, ``buffer_memory`` and ``bypass`` (docs/router.md), and checks that a
buffer holds a packet (two under the bubble rule), that the knobs go together and that a
flit holds the head's fields.
"""

from dataclasses import dataclass

from . import checks
from .schema import Choice, Configuration, Flag, Integer, parameter

#: The sizes the names leave out.
DEFAULT_FLIT_WIDTH = 32
DEFAULT_MAX_PACKET_LENGTH = 4
#: Bits per flit: a head flit needs the route and source fields; 1,024 is a generous bus.
MAX_FLIT_WIDTH = 1024
#: The largest ``max_packet_length`` (002 Table 2 uses 8-phit packets; 003 §7.1 uses 4 flits).
PACKET_LENGTH_LIMIT = 64
#: Widest flit the C++ traffic program (:mod:`twinnet.program.driver`) carries: a
#: flit and its first/last/VC bits in 64 bits (the generator writes the program only up to it;
#: wider networks run their traffic through cocotb).
MAX_PROGRAM_FLIT_WIDTH = 61
#: Flits per input-VC buffer (every buffer holds at least one packet, two on bubble ports).
MAX_BUFFER_DEPTH = 256
#: Router microarchitectures, named by their zero-load latency in cycles per hop: 2, the
#: compact router (allocation, switch allocation and crossbar in one cycle); 3, the split
#: router (allocation in one cycle, crossbar traversal in the next; an output held by one
#: packet from head to tail, a crossbar input per VC). The split router is the default: it
#: saturates higher, reaches a higher Fmax in fewer LUTs and takes fewer nanoseconds per hop
#: (docs/router.md).
PIPELINES = (2, 3)
DEFAULT_PIPELINE = 3
#: The microarchitectures' names, for network names (``_compact`` for pipeline 2).
PIPELINE_NAMES = {2: "compact", 3: "split"}
#: Allocation policies: separable round robin, or iSLIP (McKeown 1999) with ``iterations``
#: rounds of request, grant and accept per cycle.
ALLOCATORS = ("round-robin", "islip")
MAX_ITERATIONS = 4
#: Most PEs per router (parallel injection and ejection: a king router then has 16 ports).
MAX_PE_PORTS = 8
#: Crossbar inputs: one per input port (its VCs take turns) or one per input VC.
SWITCH_INPUTS = ("port", "vc")
#: What an allocated packet holds: its output VC only, the link shared flit by flit with the
#: output's other packets (``flit``), or the whole output from head to tail (``packet``).
HOLDS = ("flit", "packet")
#: Most ejection lanes per PE port (crossbar outputs toward one PE, each with a one-packet
#: buffer: several input VCs eject in one cycle).
MAX_EJECTION_LANES = 8
#: Where an input VC's flits are kept: a memory read asynchronously (LUT RAM on an FPGA), or
#: one read synchronously, addressed a cycle ahead (block RAM: ECP5 DP16KD, iCE40 EBR); the
#: router behaves the same cycle for cycle with either.
BUFFER_MEMORIES = ("lut", "block")
#: What the PEs connect to: the routers' own flit ports, or an AXI4-Stream slave and master per
#: PE (:mod:`twinnet.hdl.axi_stream`).
NETWORK_INTERFACES = ("flits", "axi-stream")
#: The parameters of the PEs' interfaces: commands whose work does not depend on them (a
#: router's proofs, a trace of terminal numbers) leave them out.
INTERFACE_PARAMETERS = ("ni", "ni_bytes", "ni_user_bits", "ni_id_bits", "ni_frame_packets",
                        "ni_clock")
#: The interfaces' clocking: the AXI side on the network's clock, or each PE's on its own.
NI_CLOCKS = ("shared", "separate")
#: Bits of a flit per byte of an AXI4-Stream beat: tdata's 8 and its tkeep bit.
BEAT_BITS_PER_BYTE = 9
#: The most tdata bytes and tuser bits of a beat.
MAX_BEAT_BYTES = 64
MAX_USER_BITS = 64
#: The most bits of a slave's ``tid`` (it travels in the head flit's payload).
MAX_ID_BITS = 16
#: The most packets a frame is cut into, and the most beats of reassembly memory a master may
#: have (two longest frames per PE of the network).
MAX_FRAME_PACKETS = 64
MAX_REASSEMBLY_BEATS = 1 << 16
#: Each microarchitecture's own switch inputs and hold (the split router takes only these).
NATIVE_SWITCH_INPUTS = {2: "port", 3: "vc"}
NATIVE_HOLD = {2: "flit", 3: "packet"}
#: Whether link heads are allocated in their arrival cycle (the bypass), per pipeline where
#: ``bypass`` is not given: the split router's own; the compact router has none.
NATIVE_BYPASS = {2: False, 3: True}


def default_depth(max_packet_length: int) -> int:
    """Flits per input VC buffer when none is given: two longest packets, the room bubble
    flow control needs to let a packet enter a ring."""
    return 2 * max_packet_length


def frame_slot(max_beats: int) -> int:
    """Beats of one slot of a master's reassembly memory: a longest frame of ``max_beats``,
    rounded up to a power of two (the low bits of a beat's address count within its slot)."""
    return 1 << (max_beats - 1).bit_length()


def reassembly_beats(max_beats: int, pes: int) -> int:
    """Beats of reassembly memory in each master of a network of ``pes`` PEs whose frames
    have up to ``max_beats``: two slots per PE, so that one frame from a PE can come in while
    the one before it goes out."""
    return 2 * pes * frame_slot(max_beats)


def check_pipeline(name: str, value) -> int:
    """Return ``value`` if it is one of :data:`PIPELINES`, else raise naming ``name``."""
    return checks.check_int(name, value, minimum=min(PIPELINES), maximum=max(PIPELINES))


#: The router's microarchitecture knobs, as :class:`twinnet.hdl.config.RouterConfig` names
#: them (and :attr:`RouterSizes.microarchitecture` gives them).
MICROARCHITECTURE = ("pipeline", "allocator", "iterations", "switch_inputs", "hold",
                     "ejection_lanes", "buffer_memory", "bypass")


def resolve_microarchitecture(values: dict) -> dict:
    """``values`` of :data:`MICROARCHITECTURE` with each knob not given (None) set to the
    pipeline's own: the router as built."""
    pipeline = values["pipeline"]
    native = {"switch_inputs": NATIVE_SWITCH_INPUTS[pipeline], "hold": NATIVE_HOLD[pipeline],
              "bypass": NATIVE_BYPASS[pipeline]}
    return {key: native[key] if values[key] is None else values[key]
            for key in MICROARCHITECTURE}


def check_microarchitecture(values: dict, names: dict) -> None:
    """The knobs go together (``values`` of :data:`MICROARCHITECTURE`; raises ``ValueError``
    naming ``names``):
    iterations only with iSLIP; the split router takes one crossbar input per VC and holds
    outputs from head to tail (None: the pipeline's own); several ejection lanes and the
    bypass only in the split router."""
    if values["iterations"] > 1 and values["allocator"] != "islip":
        raise ValueError(f"{names['iterations']} {values['iterations']}: more than one round "
                         f"of matching needs allocator islip, not {values['allocator']}")
    if values["pipeline"] == 3:
        for key, native in (("switch_inputs", NATIVE_SWITCH_INPUTS[3]),
                            ("hold", NATIVE_HOLD[3])):
            if values[key] not in (None, native):
                raise ValueError(f"{names[key]} {values[key]}: the split router (pipeline 3) "
                                 f"takes only {native}; the compact router (pipeline 2) takes "
                                 "either")
    if values["ejection_lanes"] > 1 and values["pipeline"] != 3:
        raise ValueError(f"{names['ejection_lanes']} {values['ejection_lanes']}: more than one "
                         f"ejection lane needs the split router (pipeline 3), not pipeline "
                         f"{values['pipeline']}")
    if values["bypass"] and values["pipeline"] != 3:
        raise ValueError(f"{names['bypass']}: needs the split router (pipeline 3), not "
                         f"pipeline {values['pipeline']}")


def check_interfaces(values: dict, names: dict, defaults: dict) -> None:
    """The interface settings go together (``values`` of :data:`INTERFACE_PARAMETERS`,
    ``flit_width``, ``max_packet_length``; raises ``ValueError`` naming ``names``): the
    interface settings other than their ``defaults`` only with AXI4-Stream interfaces, whose
    beat fits in a flit and whose packets have room for a beat after their head."""
    if values["ni"] != "axi-stream":
        for key in INTERFACE_PARAMETERS[1:]:
            if values[key] != defaults[key]:
                raise ValueError(f"{names[key]} {values[key]}: only with --ni axi-stream, not "
                                 f"with {names['ni']} {values['ni']}")
        return
    width, user = values["flit_width"], values["ni_user_bits"]
    if values["max_packet_length"] < 2:
        raise ValueError(f"{names['max_packet_length']} {values['max_packet_length']}: "
                         "AXI4-Stream interfaces need packets of at least 2 flits (a head and "
                         "a beat)")
    beat = values["ni_bytes"] or 1
    need = BEAT_BITS_PER_BYTE * beat + user
    if need > width:
        if values["ni_bytes"]:
            given, allowed = (f"{names['ni_bytes']} {beat}",
                              f"at most {(width - user) // BEAT_BITS_PER_BYTE} bytes")
        else:
            given, allowed = (f"{names['ni_user_bits']} {user}",
                              f"at most {width - BEAT_BITS_PER_BYTE} tuser bits")
        raise ValueError(f"{given}: a beat of {beat} bytes and {user} tuser bits takes {need} "
                         f"bits of a flit, more than {names['flit_width']} {width}: {allowed}")


@dataclass(frozen=True)
class RouterSizes(Configuration):
    """The routers' sizes every family's configuration shares (see the module docstring),
    declared once here."""

    flit_width: int = parameter(
        DEFAULT_FLIT_WIDTH, Integer(1, MAX_FLIT_WIDTH),
        f"bits per flit, at most {MAX_FLIT_WIDTH} (default {DEFAULT_FLIT_WIDTH}; a head flit "
        "holds the route and source fields)")
    max_packet_length: int = parameter(
        DEFAULT_MAX_PACKET_LENGTH, Integer(1, PACKET_LENGTH_LIMIT),
        f"the most flits a packet may have, at most {PACKET_LENGTH_LIMIT} (default "
        f"{DEFAULT_MAX_PACKET_LENGTH}): the routers carry packets of 1 to this many flits, "
        "framed by their first and last marks, and their buffers hold this many per packet")
    buffer_depth: int | None = parameter(
        None, Integer(1, MAX_BUFFER_DEPTH),
        f"flits per input VC, at most {MAX_BUFFER_DEPTH} (default 2 x the most flits per "
        "packet; at least one longest packet, two where the bubble rule applies)")
    pipeline: int = parameter(
        DEFAULT_PIPELINE, Integer(min(PIPELINES), max(PIPELINES)),
        "router microarchitecture, by its cycles per hop: 3 (split: allocation and crossbar "
        "in separate cycles, an output held by one packet from head to tail; the default) or "
        "2 (compact)")
    allocator: str = parameter(
        "round-robin", Choice(ALLOCATORS),
        "allocation policy: round-robin (separable, the default) or islip (iSLIP: requests, "
        "grants and accepts in --iterations rounds per cycle; in the split router adaptive "
        "packets ask for every profitable output at once, in the compact router it is the "
        "switch allocation)")
    iterations: int = parameter(
        1, Integer(1, MAX_ITERATIONS),
        f"rounds of iSLIP matching per cycle, 1 to {MAX_ITERATIONS} (default 1; more than one "
        "needs --allocator islip, and adds matches only where an input asks for several "
        "outputs: not with a crossbar input per VC in the compact router)")
    switch_inputs: str | None = parameter(
        None, Choice(SWITCH_INPUTS),
        "crossbar inputs: port (one per input port, its VCs take turns) or vc (one per input "
        "VC); default: the pipeline's own (split: vc, which it requires; compact: port)")
    hold: str | None = parameter(
        None, Choice(HOLDS),
        "what an allocated packet holds: packet (its output from head to tail) or flit (an "
        "output VC; packets share the link flit by flit); default: the pipeline's own "
        "(split: packet, which it requires; compact: flit)")
    ejection_lanes: int = parameter(
        1, Integer(1, MAX_EJECTION_LANES),
        f"ejection lanes per PE port, 1 to {MAX_EJECTION_LANES} (default 1): with N, packets of "
        "up to N input VCs eject in the same cycle, each into a one-packet buffer of its own, "
        "and the PE takes them whole, oldest first (002's simulator lets every input queue "
        "eject at once); split router only")
    buffer_memory: str = parameter(
        "lut", Choice(BUFFER_MEMORIES),
        "what keeps an input VC's flits: lut (a memory read asynchronously: LUT RAM on an "
        "FPGA; the default) or block (read synchronously, addressed a cycle ahead: block RAM, "
        "ECP5 DP16KD or iCE40 EBR, for deep buffers or FPGAs without LUT RAM); the router "
        "behaves the same cycle for cycle")
    bypass: bool | None = parameter(
        None, Flag(),
        "a head that arrives on a link while its VC has no packet waiting is allocated in its "
        "arrival cycle, as it is written into its buffer, and leaves in the next (2 cycles "
        "per link hop instead of 3; its route compute is then in front of the allocation); "
        "default: the pipeline's own (split: on, --no-bypass turns it off; compact: none)")

    ni: str = parameter(
        "flits", Choice(NETWORK_INTERFACES),
        "the PEs' ports: flits (the routers' own PE ports; the default) or axi-stream (per PE "
        "an AXI4-Stream slave s_axis_<pe>_* and master m_axis_<pe>_*, a frame of 1 to "
        "ni-frame-packets x (max-packet-length - 1) beats to the PE numbered tdest: "
        "docs/axi-stream.md)")
    ni_bytes: int | None = parameter(
        None, Integer(1, MAX_BEAT_BYTES),
        f"with --ni axi-stream: tdata bytes per beat, 1 to {MAX_BEAT_BYTES} (default: as many "
        f"as a flit holds); a beat takes {BEAT_BITS_PER_BYTE} bits of a flit per byte (tdata "
        "and tkeep) and the tuser bits")
    ni_user_bits: int = parameter(
        0, Integer(0, MAX_USER_BITS),
        f"with --ni axi-stream: tuser bits per beat, 0 to {MAX_USER_BITS} (default 0: no tuser)")
    ni_id_bits: int = parameter(
        0, Integer(0, MAX_ID_BITS),
        f"with --ni axi-stream: bits of the slaves' tid, 0 to {MAX_ID_BITS} (default 0: no "
        "s_axis tid); a frame's tid travels in its head flit and comes out as the high bits of "
        "the receiving master's tid, above the sending PE's number")
    ni_frame_packets: int = parameter(
        1, Integer(1, MAX_FRAME_PACKETS),
        f"with --ni axi-stream: the most packets a frame is cut into, 1 to {MAX_FRAME_PACKETS} "
        "(default 1: a frame is one packet, of 1 to max-packet-length - 1 beats); with N, a "
        "frame has up to N x (max-packet-length - 1) beats, and every master reassembles "
        "frames in memory for two longest frames per PE of the network (only where the "
        "family's routing keeps each pair's packets in order)")
    ni_clock: str = parameter(
        "shared", Choice(NI_CLOCKS),
        "with --ni axi-stream: shared (each PE's AXI4-Stream ports on the network's clock; the "
        "default) or separate (on a clock and reset of their own per PE, ni_<pe>_clk and "
        "ni_<pe>_rst, crossing to the network's clock through asynchronous FIFOs)")

    @classmethod
    def bubble(cls, values: dict) -> bool:
        """Whether the links of a network with these ``values`` take the bubble rule (their
        buffers hold two packets); subclasses say."""
        return False

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        cls.check_buffer(values, names, bubble=cls.bubble(values))
        check_microarchitecture(values, names)
        check_interfaces(values, names, {each.name: each.default for each in cls.parameters()
                                         if each.name in INTERFACE_PARAMETERS})

    @staticmethod
    def check_buffer(values: dict, names: dict, *, bubble: bool) -> None:
        """A buffer (``values["buffer_depth"]``, None: the default) must hold a packet, two
        under the ``bubble`` rule; raises naming ``names["buffer_depth"]``."""
        depth, length = values.get("buffer_depth"), values["max_packet_length"]
        if depth is not None:
            need = length * (2 if bubble else 1)
            if depth < need:
                why = "two packets (bubble flow control)" if need > length else "one packet"
                raise ValueError(f"{names['buffer_depth']} must be >= {need} flits to hold "
                                 f"{why} of {length} flits, not {depth}")

    @classmethod
    def from_dict(cls, values: dict, labels: dict | str = "configuration"):
        network = super().from_dict(values, labels)
        if network.flit_width < network.header_width:
            label = checks.labels_of(values, labels).get("flit_width", "flit_width (default "
                                                         f"{DEFAULT_FLIT_WIDTH})")
            raise ValueError(f"{label} must be >= {network.header_width} bits to hold the "
                             f"head flit of {network.name} (its route and source fields), not "
                             f"{network.flit_width}")
        spare = network.flit_width - network.header_width
        more = network.ni_frame_packets > 1  # a head's mark: more packets of its frame follow
        if network.ni_id_bits + more > spare:
            named = checks.labels_of(values, labels)
            also = " beside the mark of a frame's further packets" if more else ""
            raise ValueError(f"{named['ni_id_bits']} {network.ni_id_bits}: a tid travels in the "
                             f"head flit's payload{also}, {spare} bits of a "
                             f"{network.flit_width}-bit flit of {network.name} "
                             f"({network.header_width} hold the route and source): at most "
                             f"{spare - more}")
        return network

    @property
    def header_width(self) -> int:
        """Bits of a head flit that are not payload: the route fields and the source."""
        raise NotImplementedError

    @property
    def depth(self) -> int:
        """Flits per input VC buffer."""
        return (self.buffer_depth if self.buffer_depth is not None
                else default_depth(self.max_packet_length))

    @property
    def microarchitecture(self) -> dict:
        """The router's microarchitecture, as :class:`twinnet.hdl.config.RouterConfig` takes
        it: ``pipeline``, ``allocator``, ``iterations``, ``switch_inputs``, ``hold``,
        ``ejection_lanes``, ``buffer_memory`` and ``bypass`` (``switch_inputs``, ``hold`` and
        ``bypass``: the pipeline's own where not given)."""
        return resolve_microarchitecture({key: getattr(self, key) for key in MICROARCHITECTURE})

    @property
    def beat(self) -> dict:
        """With AXI4-Stream interfaces, what a beat and a frame's head carry, as
        :class:`twinnet.hdl.axi_stream.AxiStreamFormat` takes it: ``data_bytes``,
        ``user_width``, ``id_width`` and ``frame_packets``."""
        return {"data_bytes": self.beat_bytes, "user_width": self.ni_user_bits,
                "id_width": self.ni_id_bits, "frame_packets": self.ni_frame_packets}

    @property
    def max_frame_beats(self) -> int:
        """With AXI4-Stream interfaces, the most beats of a frame: a beat per flit after each
        packet's head."""
        return self.ni_frame_packets * (self.max_packet_length - 1)

    @property
    def beat_bytes(self) -> int:
        """With AXI4-Stream interfaces, tdata bytes per beat (``ni_bytes``, else as many as a
        flit holds)."""
        if self.ni_bytes is not None:
            return self.ni_bytes
        return (self.flit_width - self.ni_user_bits) // BEAT_BITS_PER_BYTE

    @property
    def size_suffix(self) -> str:
        """Every size that differs from the default, for a network's name, so that two
        networks whose Verilog differs never share a name: ``_w64`` (64-bit flits), ``_l8``
        (8-flit packets), ``_d24`` (buffers of 24 flits where two packets is the default),
        ``_compact`` (the compact router; ``_p<N>`` elsewhere in a king name counts PEs),
        ``_islip<N>`` (iSLIP with N rounds), ``_vcin`` / ``_hold`` (the compact router with a
        crossbar input per VC / outputs held from head to tail), ``_ej<N>`` (N ejection lanes
        per PE port), ``_bram`` (input buffers in block RAM), ``_nobypass`` (the split router
        without its bypass)."""
        suffix = ""
        if self.flit_width != DEFAULT_FLIT_WIDTH:
            suffix += f"_w{self.flit_width}"
        if self.max_packet_length != DEFAULT_MAX_PACKET_LENGTH:
            suffix += f"_l{self.max_packet_length}"
        if self.depth != default_depth(self.max_packet_length):
            suffix += f"_d{self.depth}"
        if self.pipeline != DEFAULT_PIPELINE:
            suffix += f"_{PIPELINE_NAMES[self.pipeline]}"
        micro = self.microarchitecture
        if micro["allocator"] == "islip":
            suffix += f"_islip{micro['iterations']}"
        if micro["switch_inputs"] != NATIVE_SWITCH_INPUTS[self.pipeline]:
            suffix += "_vcin"
        if micro["hold"] != NATIVE_HOLD[self.pipeline]:
            suffix += "_hold"
        if self.ejection_lanes > 1:
            suffix += f"_ej{self.ejection_lanes}"
        if self.buffer_memory != "lut":
            suffix += "_bram"
        if micro["bypass"] != NATIVE_BYPASS[self.pipeline]:  # only the split router has one
            suffix += "_nobypass"
        if self.ni == "axi-stream":
            suffix += f"_axis{self.beat_bytes}" + (f"u{self.ni_user_bits}"
                                                  if self.ni_user_bits else "")
            suffix += f"i{self.ni_id_bits}" if self.ni_id_bits else ""
            suffix += f"f{self.ni_frame_packets}" if self.ni_frame_packets > 1 else ""
            if self.ni_clock == "separate":
                suffix += "_cdc"
        return suffix


class PeSlots:
    """What a network with ``pe_ports`` PEs on each of its ``topology.node_count`` routers
    derives from them: terminal ``t`` is PE ``t mod pe_ports`` of router ``t // pe_ports``."""

    @property
    def pe_width(self) -> int:
        """Bits of the destination's PE field (none with one PE per router)."""
        return (self.pe_ports - 1).bit_length()

    @property
    def terminal_count(self) -> int:
        return self.pe_ports * self.topology.node_count

    def pe_of(self, terminal: int) -> int:
        """Which of its router's PEs terminal ``terminal`` is."""
        return terminal % self.pe_ports
