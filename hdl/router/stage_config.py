"""What every stage of the router knows: the router's configuration, the routing's traits, and
the layouts both derive."""

from dataclasses import dataclass
from functools import cached_property

from amaranth.hdl import Mux, Signal, unsigned
from amaranth.lib import data

from ..config import RouterConfig


@dataclass(frozen=True)
class StageConfig:
    """The parameters shared by the router's stages.

    Parameters:
        config: the router's :class:`RouterConfig`.
        head_layout: the head flit's ``data`` (:meth:`twinnet.hdl.flit.FlitFormat.head_layout`);
            its ``route`` field is what the route compute reads.
        adaptive_vcs: the routing's adaptive VCs (a mask; 0 for deterministic routing).
        broadcast_vc: the routing's broadcast VC (None without broadcast).
    """

    config: RouterConfig
    head_layout: data.StructLayout
    adaptive_vcs: int = 0
    broadcast_vc: int | None = None

    @property
    def split(self) -> bool:
        """The split router (pipeline 3): allocation and crossbar traversal in separate
        cycles, an allocated packet holds its output from head to tail, and every input VC has
        its own crossbar input."""
        return self.config.pipeline == 3

    @property
    def islip(self) -> bool:
        """The allocators match by iSLIP (:class:`~.islip.IslipAllocator`)."""
        return self.config.allocator == "islip"

    @property
    def multiple_requests(self) -> bool:
        """An adaptive packet asks for every profitable output at once (the split router with
        iSLIP), and the allocator picks one."""
        return self.split and self.islip and bool(self.adaptive_vcs)

    @property
    def per_output_route(self) -> bool:
        """The route result names, per output, the VCs a packet may take there (split router
        with a deterministic unicast routing): requests then need no decoding of the route."""
        return self.split and not self.adaptive_vcs and self.broadcast_vc is None

    @cached_property
    def port_vc_masks_layout(self) -> data.ArrayLayout:
        """One VC mask per port."""
        return data.ArrayLayout(unsigned(self.config.max_vc_count), self.config.port_count)

    @cached_property
    def route_layout(self) -> data.StructLayout:
        """The route compute's result as the router stores it.

        ``port``, ``mask`` (the output VCs the packet may take), ``bubble`` (it needs room for
        two packets), ``drop`` (malformed: drain it); adaptive routing adds ``grade_1`` and
        ``grade_2`` (bit o: output o is a candidate of that grade); broadcast adds ``multi``
        (a broadcast), ``targets`` and ``enter`` (bit o: a copy leaves through output o /
        enters a ring there); :attr:`per_output_route` adds ``need_one`` and ``need_two``
        (per output, the VCs the packet may take there with room for one / two packets)."""
        port_count, vmax = self.config.port_count, self.config.max_vc_count
        fields = {"port": range(port_count), "mask": vmax, "bubble": 1, "drop": 1}
        if self.adaptive_vcs:
            fields.update(grade_1=port_count, grade_2=port_count)
        if self.broadcast_vc is not None:
            fields.update(multi=1, targets=port_count, enter=port_count)
        if self.per_output_route:
            fields.update(need_one=self.port_vc_masks_layout, need_two=self.port_vc_masks_layout)
        return data.StructLayout(fields)

    @cached_property
    def stored_route_layout(self) -> data.StructLayout:
        """A route as the split router's route queues keep it behind their front:
        :attr:`route_layout` without the fields :meth:`expand_route` derives (``need_one``,
        ``need_two``)."""
        return data.StructLayout({name: field.shape for name, field in self.route_layout
                                  if name not in ("need_one", "need_two")})

    def expand_route(self, m, stored) -> data.View:
        """The :attr:`route_layout` value of ``stored`` (a :attr:`stored_route_layout` value):
        with :attr:`per_output_route`, per output the VCs the packet may take there with room
        for one packet (a move that stays in its ring, or leaves rings) and for two (a move
        that enters a ring). Only VCs the output has, and room for two only toward a bubble
        port, are ever set: the input unit drops any other route, so these bits are constant
        and cost nothing."""
        stored = data.View(self.stored_route_layout, stored)
        route = Signal(self.route_layout)
        for name, _ in self.stored_route_layout:
            m.d.comb += getattr(route, name).eq(getattr(stored, name))
        if self.per_output_route:
            for o, port in enumerate(self.config.ports):
                here = (stored.port == o) & ~stored.drop
                mask = stored.mask[:port.output_vc_count]
                m.d.comb += route.need_one[o].eq(Mux(here & ~stored.bubble, mask, 0))
                if port.bubble:
                    m.d.comb += route.need_two[o].eq(Mux(here & stored.bubble, mask, 0))
        return route

    @cached_property
    def flit_layout(self) -> data.StructLayout:
        """A flit in an input buffer: ``data``, ``first``, ``last``, ``abort``
        (:mod:`twinnet.hdl.flit`)."""
        return data.StructLayout({"data": self.config.flit_width, "first": 1, "last": 1,
                                  "abort": 1})

    @cached_property
    def entry_layout(self) -> data.StructLayout:
        """A compact router's buffer entry: a flit and the route of its packet."""
        return data.StructLayout({"data": self.config.flit_width, "first": 1, "last": 1,
                                  "abort": 1, "route": self.route_layout})

    @cached_property
    def crossbar_layout(self) -> data.StructLayout:
        """A flit crossing the switch: ``data``, ``first``, ``last``, ``abort`` and its output
        VC."""
        return data.StructLayout({"data": self.config.flit_width, "first": 1, "last": 1,
                                  "abort": 1, "vc": range(self.config.max_vc_count)})
