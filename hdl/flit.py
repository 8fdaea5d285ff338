"""Flit, header and port layouts — the one place that defines what travels on the wires.

A packet has 1 to L flits (L is ``RouterConfig.max_packet_length``), framed by two marks that
travel with every flit: ``first`` on its first flit (the *head*), ``last`` on its last (the
*tail*); a one-flit packet has both. Every flit carries ``flit_width`` bits of ``data``; the
head interprets its data as :meth:`FlitFormat.head_layout`, lowest bits first:

========== ============================================================================
field      contents
========== ============================================================================
route      the routing function's destination fields (its ``header_layout``: e.g. the
           node digits and PE bit of a twin torus, a terminal number of a fat tree, or
           x, y, TTL and broadcast flag of a king network). The router reads only these.
tag        packet tag for the PEs (``RouterConfig.tag_width`` bits)
source     source PE address for the PEs (``RouterConfig.source_width`` bits)
payload    the rest of the head flit
========== ============================================================================

Body flits are all payload. :meth:`FlitFormat.describe` exports all of this, with bit offsets,
as a JSON-ready dict so that tools can drive the generated Verilog without reading Python.

Two kinds of port carry flits:

* A **link** (network or internal role) is a :class:`LinkSignature`: ``flit`` goes forward, a
  stream without ready whose payload is ``data``, ``first``, ``last``, ``abort`` and the ``vc``
  tag (valid means one flit this cycle); ``credit`` goes backward, a channel without ready whose
  payload is a VC tag (valid means one buffer slot of that VC was freed). A sender keeps one
  counter per VC, starting at the partner's buffer depth, and never sends a flit on a VC without
  a credit.
* A **PE port** is a pair of valid/ready streams (:func:`pe_in_signature` into the router,
  :func:`pe_out_signature` out of it) of packets with ``first``/``last`` marks; the PE needs no
  credit logic.

``abort`` is set on the tail of a packet that its source router cut short because the PE that
sent it broke the framing (:class:`twinnet.hdl.router.input_unit.InputUnit`): the packet's
flits already on their way are delivered with it, and its receiver discards the packet.
"""

from dataclasses import dataclass
from functools import cached_property

from amaranth.hdl import Shape, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from twinnet.model.widths import index_width

from .config import FRAMING_COUNT_WIDTH, FRAMING_ERRORS, RouterConfig


def vc_shape(vc_count: int):
    """Shape of a VC tag: wide enough for ``vc_count - 1`` and at least 1 bit (Yosys writes
    zero-width ports as ``[-1:0]``, a 2-bit port, so a 1-VC link still carries a 0 tag)."""
    return unsigned(index_width(vc_count))


def link_flit_layout(flit_width: int, vc_count: int) -> data.StructLayout:
    """Payload of a link's ``flit`` stream: ``data``, ``first``, ``last``, ``abort``, ``vc``
    (low to high)."""
    return data.StructLayout({"data": unsigned(flit_width), "first": unsigned(1),
                              "last": unsigned(1), "abort": unsigned(1),
                              "vc": vc_shape(vc_count)})


def pe_in_layout(flit_width: int, vc_count: int) -> data.StructLayout:
    """Payload of a PE's injection stream. ``vc`` picks the input VC of the packet (read on the
    head flit; the same VC keeps the flows that share it in order)."""
    return data.StructLayout({"data": unsigned(flit_width), "first": unsigned(1),
                              "last": unsigned(1), "vc": vc_shape(vc_count)})


def pe_out_layout(flit_width: int) -> data.StructLayout:
    """Payload of a PE's ejection stream: ``data``, ``first``, ``last``, ``abort`` (on a tail:
    discard the packet, which its source cut short)."""
    return data.StructLayout({"data": unsigned(flit_width), "first": unsigned(1),
                              "last": unsigned(1), "abort": unsigned(1)})


#: A PE port's framing counters: one per kind of :data:`twinnet.hdl.config.FRAMING_ERRORS`.
framing_layout = data.StructLayout({kind: unsigned(FRAMING_COUNT_WIDTH)
                                    for kind in FRAMING_ERRORS})


def valid_signature(payload_shape) -> wiring.Signature:
    """A channel without back-pressure: ``valid`` and ``payload`` out (a stream that is always
    ready; ``stream.Signature(always_ready=True)`` cannot be a top-level port because its
    ``ready`` is a constant)."""
    return wiring.Signature({"valid": Out(1), "payload": Out(payload_shape)})


class LinkSignature(wiring.Signature):
    """A router-to-router link seen from its sender: ``flit`` out, ``credit`` in.

    ``flit``: :func:`valid_signature` of :func:`link_flit_layout` — one flit per cycle when
    valid. ``credit``: :func:`valid_signature` of :func:`vc_shape` — one freed buffer slot
    of VC ``payload`` per cycle when valid. A receiver holds ``LinkSignature.flip()``.
    """

    def __init__(self, flit_width: int, vc_count: int):
        self.flit_width, self.vc_count = flit_width, vc_count
        super().__init__({
            "flit": Out(valid_signature(link_flit_layout(flit_width, vc_count))),
            "credit": In(valid_signature(vc_shape(vc_count))),
        })

    def __eq__(self, other):
        return (isinstance(other, LinkSignature) and other.flit_width == self.flit_width
                and other.vc_count == self.vc_count)

    def __hash__(self):
        return hash((LinkSignature, self.flit_width, self.vc_count))

    def __repr__(self):
        return f"LinkSignature({self.flit_width}, {self.vc_count})"


def pe_in_signature(flit_width: int, vc_count: int) -> stream.Signature:
    """A PE's injection stream, seen from the PE (the router holds it flipped)."""
    return stream.Signature(pe_in_layout(flit_width, vc_count))


def pe_out_signature(flit_width: int) -> stream.Signature:
    """A PE's ejection stream, seen from the router."""
    return stream.Signature(pe_out_layout(flit_width))


def layout_fields(shape, prefix: str = "", offset: int = 0) -> list[dict]:
    """Flatten a layout into ``{"name", "offset", "width"}`` entries, lowest offset first:
    how the manifest describes a layout (read back by :class:`twinnet.sim_tb.layout.Fields`),
    so that its offsets are the hardware's own. Nested fields are named ``a.b`` and ``a[i]``."""
    if isinstance(shape, (data.StructLayout, data.ArrayLayout)):
        fields = []
        for key, field in shape:  # (name or index, Field with its offset)
            name = f"{prefix}[{key}]" if isinstance(key, int) else \
                f"{prefix}.{key}" if prefix else key
            fields += layout_fields(field.shape, name, offset + field.offset)
        return sorted(fields, key=lambda f: f["offset"])
    width = Shape.cast(shape).width
    return [{"name": prefix or "value", "offset": offset, "width": width}] if width else []


@dataclass(frozen=True)
class FlitFormat:
    """The head flit and port layouts of one router: its configuration plus the routing
    function's header fields.

    Parameters:
        config: the router's :class:`RouterConfig`.
        route_layout: the routing function's destination fields (a ``data.StructLayout``),
            placed in the lowest bits of the head flit.

    Raises ``TypeError`` when ``route_layout`` is not a ``StructLayout`` and ``ValueError``
    when the header (route + tag + source fields) does not fit in ``flit_width``.
    """

    config: RouterConfig
    route_layout: data.StructLayout

    def __post_init__(self):
        if not isinstance(self.config, RouterConfig):
            raise TypeError(f"config must be a RouterConfig, not {self.config!r}")
        if not isinstance(self.route_layout, data.StructLayout):
            raise TypeError(f"route_layout must be an amaranth data.StructLayout, "
                            f"not {self.route_layout!r}")
        if self.header_width > self.config.flit_width:
            raise ValueError(
                f"flit_width must be >= {self.header_width} bits to hold the head flit's header "
                f"(route {self.route_layout.size} + tag {self.config.tag_width} + source "
                f"{self.config.source_width} bits), not {self.config.flit_width}")

    @property
    def header_width(self) -> int:
        """Bits of the head flit that are not payload."""
        return self.route_layout.size + self.config.tag_width + self.config.source_width

    @cached_property
    def head_layout(self) -> data.StructLayout:
        """The head flit's ``data``: ``route``, ``tag``, ``source``, ``payload`` (low to high)."""
        return data.StructLayout({
            "route": self.route_layout,
            "tag": unsigned(self.config.tag_width),
            "source": unsigned(self.config.source_width),
            "payload": unsigned(self.config.flit_width - self.header_width),
        })

    def describe(self) -> dict:
        """Everything a tool needs to build and read flits, JSON-ready.

        Keys: ``flit_width``, ``max_packet_length`` (packets have 1 to that many flits),
        ``head`` (fields of the head flit's data, route
        fields named ``route.<field>``), ``route_width`` and ``ports``: per port its role,
        input/output VC counts, buffer depth, bubble flag, and the payload fields of its input
        (``in``) and output (``out``) streams — the link flit layout for links (plus
        ``credit_width``, the VC tag of the credit payload), the PE layouts for PE ports.
        """
        config = self.config
        ports = []
        for index, port in enumerate(config.ports):
            entry = {"index": index, "name": port.name, "role": port.role,
                     "vc_count": port.vc_count, "output_vc_count": port.output_vc_count,
                     "buffer_depth": port.buffer_depth, "bubble": port.bubble}
            if port.is_pe:
                entry["in"] = layout_fields(pe_in_layout(config.flit_width, port.vc_count))
                entry["out"] = layout_fields(pe_out_layout(config.flit_width))
            else:
                link = layout_fields(link_flit_layout(config.flit_width, port.vc_count))
                entry["in"] = entry["out"] = link
                entry["credit_width"] = vc_shape(port.vc_count).width
            ports.append(entry)
        return {
            "flit_width": config.flit_width,
            "max_packet_length": config.max_packet_length,
            "route_width": self.route_layout.size,
            "head": layout_fields(self.head_layout),
            "ports": ports,
        }
