"""What every family's network configuration shares: the routers' sizes and microarchitecture.

:class:`RouterSizes` is the base of every family's configuration (:mod:`twinnet.model.schema`):
it declares, once, the parameters ``flit_width``, ``packet_length`` (flits per packet),
``buffer_depth`` (flits per input VC, ``None`` for the default of two packets) and
``pipeline`` (the router's zero-load cycles per hop, one of :data:`PIPELINES`), and checks
that a buffer holds a packet (two under the bubble rule) and a flit the head's fields.
"""

from dataclasses import dataclass

from . import checks
from .schema import Configuration, Integer, parameter

#: The sizes the names leave out.
DEFAULT_FLIT_WIDTH = 32
DEFAULT_PACKET_LENGTH = 4
#: Bits per flit: a head flit needs the route and source fields; 1,024 is a generous bus.
MAX_FLIT_WIDTH = 1024
#: Flits per packet (002 Table 2 uses 8-phit packets; 003 §7.1 uses 4 flits).
MAX_PACKET_LENGTH = 64
#: Widest flit the C++ traffic program (:mod:`twinnet.sim_tb.traffic_program`) carries: a
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


def check_pipeline(name: str, value) -> int:
    """Return ``value`` if it is one of :data:`PIPELINES`, else raise naming ``name``."""
    return checks.check_int(name, value, minimum=min(PIPELINES), maximum=max(PIPELINES))


@dataclass(frozen=True)
class RouterSizes(Configuration):
    """The routers' sizes every family's configuration shares (see the module docstring),
    declared once here."""

    flit_width: int = parameter(
        DEFAULT_FLIT_WIDTH, Integer(1, MAX_FLIT_WIDTH),
        f"bits per flit, at most {MAX_FLIT_WIDTH} (default {DEFAULT_FLIT_WIDTH}; a head flit "
        "holds the route and source fields)")
    packet_length: int = parameter(
        DEFAULT_PACKET_LENGTH, Integer(1, MAX_PACKET_LENGTH),
        f"flits per packet, at most {MAX_PACKET_LENGTH} (default {DEFAULT_PACKET_LENGTH})")
    buffer_depth: int | None = parameter(
        None, Integer(1, MAX_BUFFER_DEPTH),
        f"flits per input VC, at most {MAX_BUFFER_DEPTH} (default 2 x packet length; at least "
        "one packet, two where the bubble rule applies)")
    pipeline: int = parameter(
        DEFAULT_PIPELINE, Integer(min(PIPELINES), max(PIPELINES)),
        "router microarchitecture, by its cycles per hop: 3 (split: allocation and crossbar "
        "in separate cycles, an output held by one packet from head to tail; the default) or "
        "2 (compact)")

    @classmethod
    def bubble(cls, values: dict) -> bool:
        """Whether the links of a network with these ``values`` take the bubble rule (their
        buffers hold two packets); subclasses say."""
        return False

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        cls.check_buffer(values, names, bubble=cls.bubble(values))

    @staticmethod
    def check_buffer(values: dict, names: dict, *, bubble: bool) -> None:
        """A buffer (``values["buffer_depth"]``, None: the default) must hold a packet, two
        under the ``bubble`` rule; raises naming ``names["buffer_depth"]``."""
        depth, length = values.get("buffer_depth"), values["packet_length"]
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
        return network

    @property
    def header_width(self) -> int:
        """Bits of a head flit that are not payload: the route fields and the source."""
        raise NotImplementedError

    @property
    def depth(self) -> int:
        """Flits per input VC buffer."""
        return self.buffer_depth if self.buffer_depth is not None else 2 * self.packet_length

    @property
    def size_suffix(self) -> str:
        """Every size that differs from the default, for a network's name, so that two
        networks whose Verilog differs never share a name: ``_w64`` (64-bit flits), ``_l8``
        (8-flit packets), ``_d24`` (buffers of 24 flits where two packets is the default),
        ``_compact`` (the compact router; ``_p<N>`` elsewhere in a king name counts PEs)."""
        suffix = ""
        if self.flit_width != DEFAULT_FLIT_WIDTH:
            suffix += f"_w{self.flit_width}"
        if self.packet_length != DEFAULT_PACKET_LENGTH:
            suffix += f"_l{self.packet_length}"
        if self.depth != 2 * self.packet_length:
            suffix += f"_d{self.depth}"
        if self.pipeline != DEFAULT_PIPELINE:
            suffix += f"_{PIPELINE_NAMES[self.pipeline]}"
        return suffix
