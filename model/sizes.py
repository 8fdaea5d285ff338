"""What every family's network configuration shares: the routers' sizes and microarchitecture.

:class:`RouterSizes` is a mixin for the configuration dataclasses, which hold the fields
``flit_width``, ``packet_length`` (flits per packet), ``buffer_depth`` (flits per input VC,
``None`` for the default of two packets) and ``pipeline`` (the router's zero-load cycles per
hop, one of :data:`PIPELINES`).
"""

from . import checks

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


def sizes_from_dict(values: dict, names: dict, *, bubble: bool = False) -> dict:
    """``flit_width``, ``packet_length``, ``buffer_depth`` (None: the default) and ``pipeline``
    from plain values, each checked against its limit; a buffer must hold a packet, two with
    the ``bubble``. ``names`` labels each key in messages. Raises ``TypeError``/``ValueError``."""
    flit_width = checks.check_int(names.get("flit_width", "flit_width"),
                                  values.get("flit_width", DEFAULT_FLIT_WIDTH), minimum=1,
                                  maximum=MAX_FLIT_WIDTH)
    packet_length = checks.check_int(names.get("packet_length", "packet_length"),
                                     values.get("packet_length", DEFAULT_PACKET_LENGTH),
                                     minimum=1, maximum=MAX_PACKET_LENGTH)
    buffer_depth = values.get("buffer_depth")
    if buffer_depth is not None:
        need = packet_length * (2 if bubble else 1)
        buffer_depth = checks.check_int(names.get("buffer_depth", "buffer_depth"), buffer_depth,
                                        minimum=need, maximum=max(need, MAX_BUFFER_DEPTH))
    return {"flit_width": flit_width, "packet_length": packet_length,
            "buffer_depth": buffer_depth, "pipeline": check_pipeline(
                names.get("pipeline", "pipeline"), values.get("pipeline", DEFAULT_PIPELINE))}


class RouterSizes:
    """The routers' sizes of a network configuration (see the module docstring)."""

    flit_width: int
    packet_length: int
    buffer_depth: int | None
    pipeline: int

    def check_sizes(self) -> None:
        """Raise ``TypeError``/``ValueError`` for a size that is not a positive integer, or a
        buffer that cannot hold a whole packet."""
        checks.check_int("flit_width", self.flit_width, minimum=1)
        checks.check_int("packet_length", self.packet_length, minimum=1)
        if self.buffer_depth is not None:
            checks.check_int("buffer_depth", self.buffer_depth, minimum=self.packet_length)
        check_pipeline("pipeline", self.pipeline)

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

    def sizes_dict(self) -> dict:
        """The sizes as written, for a configuration's ``to_dict``."""
        return {"flit_width": self.flit_width, "packet_length": self.packet_length,
                "buffer_depth": self.buffer_depth, "pipeline": self.pipeline}
