"""A routing function for testing the router: the head flit names its output port and VC."""

from amaranth.hdl import Const, Module
from amaranth.lib import data

from .config import RouterConfig
from .route_compute import RouteCompute


def header_layout(config: RouterConfig) -> data.StructLayout:
    """Route fields: ``port`` (output port), ``vc`` (output VC) and ``bubble`` (flag)."""
    return data.StructLayout({"port": range(config.port_count), "vc": range(config.max_vc_count),
                              "bubble": 1})


class HeaderRouteCompute(RouteCompute):
    """Route to ``header.port`` on VC ``header.vc``, with the bubble flag ``header.bubble``.

    Malformed when ``port >= port_count`` or ``vc`` is not below the VC count of that output
    (possible when the counts are not powers of two). No static inputs.
    """

    def __init__(self, config: RouterConfig, in_port: int):
        super().__init__(config, in_port, header_layout=header_layout(config))

    def elaborate(self, platform):
        m = Module()
        header, config = self.header, self.config
        m.d.comb += [
            self.out_port.eq(header.port),
            self.vc_mask.eq(1 << header.vc),
            self.bubble.eq(header.bubble),
        ]
        bad = header.port >= config.port_count if config.port_count & (config.port_count - 1) \
            else Const(0, 1)
        for port, vc_count in enumerate(config.output_vc_counts):
            if vc_count < 1 << len(header.vc):  # some VC numbers do not exist on this port
                bad = bad | ((header.port == port) & (header.vc >= vc_count))
        m.d.comb += self.malformed.eq(bad)
        return m
