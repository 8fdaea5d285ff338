"""A toy family for the framework test: a unidirectional ring with a dateline.

N routers in a ring, each with a clockwise link (two VCs) and a PE. A packet goes clockwise
until it reaches its destination; it uses VC 0 until it crosses the link from router N-1 to
router 0 (the dateline) and VC 1 after it, so the ring's channels never close a cycle. All of
it is written against the public framework (:mod:`twinnet.families`,
:mod:`twinnet.hdl.network`): nothing shared is edited.
"""

import functools
from dataclasses import dataclass

from amaranth.hdl import Module, Mux
from amaranth.lib import data

from twinnet.families import Family
from twinnet.hdl.config import PortConfig, RouterConfig
from twinnet.hdl.network import Link, Netlist, RouterInstance, Terminal
from twinnet.hdl.route_compute import RouteCompute
from twinnet.hdl.router import Router

LINK, PE = 0, 1  # router-local ports


@dataclass(frozen=True)
class Ring:
    size: int
    flit_width: int = 32
    packet_length: int = 4

    @property
    def bits(self) -> int:  # one spare bit, so that a destination >= size is malformed
        return self.size.bit_length()

    @property
    def name(self) -> str:
        return f"ring{self.size}"

    def to_dict(self) -> dict:
        return {"size": self.size}


class RingRoute(RouteCompute):
    def __init__(self, config, in_port, *, ring: Ring):
        self.ring = ring
        super().__init__(config, in_port,
                         header_layout=data.StructLayout({"dest": ring.bits}),
                         static_layout=data.StructLayout({"here": ring.bits}))

    def elaborate(self, platform):
        m = Module()
        here, dest = self.node_static.here, self.header.dest
        # VC 1 once over the dateline: arriving on VC 1, or leaving the last router now.
        crossed = ((self.in_port == LINK) & (self.in_vc == 1)) | (here == self.ring.size - 1)
        m.d.comb += [self.out_port.eq(Mux(dest == here, PE, LINK)),
                     self.vc_mask.eq(Mux(dest == here, 1, Mux(crossed, 2, 1))),
                     self.malformed.eq(dest >= self.ring.size)]
        return m


class RingFamily(Family):
    name = "ring"

    def network(self, parameters):
        return Ring(parameters["size"])

    def netlist(self, ring):
        config = RouterConfig(ring.flit_width, ring.packet_length,
                              (PortConfig("network", 2, 8), PortConfig("pe", 1, 8)),
                              source_width=ring.bits, drop_count_width=32)
        kinds = {"node": Router(config, functools.partial(RingRoute, ring=ring))}
        routers = [RouterInstance(f"r{i}", "node", {"here": i}) for i in range(ring.size)]
        links = [Link(i, f"r{i}", LINK, f"r{(i + 1) % ring.size}", LINK, "cw", "cw", 2)
                 for i in range(ring.size)]
        return Netlist(kinds, routers, links, [Terminal(f"r{i}", PE)
                                               for i in range(ring.size)])

    def section(self, ring):
        return {"name": self.name, "parameters": ring.to_dict(),
                "terminal_order": "PE i on router r<i>", "route": "route.dest: the PE",
                "malformed": "route.dest >= size"}

    def terminal_count(self, ring):
        return ring.size

    def header_width(self, ring):
        return 2 * ring.bits

    def destination(self, ring, terminal):
        return {"route.dest": terminal}

    def malformed(self, ring, rng):
        return {"route.dest": rng.randrange(ring.size, 1 << ring.bits)}

    def hops(self, ring, source, destination):
        hops, here, vc = [], source, 0
        while here != destination:
            vc = 1 if vc == 1 or here == ring.size - 1 else 0
            hops.append((f"r{here}", "cw", vc))
            here = (here + 1) % ring.size
        return hops
