"""Link counters: the traffic every link of a network carried, counted in hardware.

Built only when asked (``link_counters=True`` of :func:`twinnet.gen.generate.generate_network`):
:class:`LinkCounters` is one module beside the routers with a :class:`LinkCounter` on every
link between routers (network and internal), on every terminal's injection port and on every
ejection port. It only watches the link's wires; the routers are not changed. The network top
(:class:`twinnet.hdl.network.Network`) feeds it and shows its counts as ``link_counts``; the
C++ traffic program (:mod:`twinnet.program`) runs the same module as a model of its
own, fed from the same wires.

Per link, and per VC where the link has several (the VC tag of the flits; a terminal port has
one row), three counters of :data:`COUNTER_WIDTH` bits, wrapping, since reset:

- ``flits``: flits that crossed it (a link carries at most one flit per cycle, so these are
  also the cycles it was busy);
- ``packets``: head flits among them;
- ``blocked``: on a link between routers, the cycles in which a packet at the sending router
  could have been allocated this link's VC and was not (its route takes that VC of that
  output, and it lost arbitration, found the output carrying another packet, or its VC
  without room for the packet, or for two on entering a ring: the routers' ``waits``, see
  :mod:`twinnet.hdl.router.stalls`); on an injection port, the cycles the source offered a
  flit the router did not take (its injection buffer full); on an ejection port, the cycles
  the router offered a flit the sink did not take.

The routers of a network with link counters are built with their stall counters, which give
``waits``.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from . import flit

#: Bits of each counter.
COUNTER_WIDTH = 32
#: The counters of one row (one VC of one link), in the order they are packed.
COUNTERS = ("flits", "packets", "blocked")
#: One row of counters.
counts_layout = data.StructLayout({name: COUNTER_WIDTH for name in COUNTERS})
#: Rows per ``counts_<k>`` port: the bus comes out in ports of whole rows (24,576 bits), far
#: below Amaranth's widest signal (65,536 bits), whatever the network's size.
CHUNK_ROWS = 256


class LinkCounter(wiring.Component):
    """The counters of one link (see the module docstring).

    Parameters:
        vc_count: the link's VCs (one row of counters each).
        between_routers: a link between routers (its sender's ``waits`` say when it is
            blocked), else a terminal port (valid/ready).

    Ports:
        valid, first: In(1) — a flit on the link this cycle, and whether it is a head;
        vc: In(:func:`twinnet.hdl.flit.vc_shape`) — its VC tag;
        waits: In(vc_count) — a packet at the sender waits for that VC (links between routers
            only);
        ready: In(1) — the receiver takes the flit offered (terminal ports only);
        counts: Out(ArrayLayout(:data:`counts_layout`, vc_count)) — the counters per VC.
    """

    def __init__(self, vc_count: int, between_routers: bool):
        if not isinstance(vc_count, int) or vc_count < 1:
            raise ValueError(f"vc_count must be an integer >= 1, not {vc_count!r}")
        self.vc_count, self.between_routers = vc_count, between_routers
        members = {"valid": In(1), "first": In(1), "vc": In(flit.vc_shape(vc_count))}
        members.update({"waits": In(vc_count)} if between_routers else {"ready": In(1)})
        members["counts"] = Out(data.ArrayLayout(counts_layout, vc_count))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for v in range(self.vc_count):
            counts = self.counts[v]
            here = self.valid & (self.vc == v)
            if self.between_routers:
                moved, blocked = here, self.waits[v]
            else:
                moved, blocked = here & self.ready, here & ~self.ready
            m.d.sync += [counts.flits.eq(counts.flits + moved),
                         counts.packets.eq(counts.packets + (moved & self.first)),
                         counts.blocked.eq(counts.blocked + blocked)]
        return m


class LinkCounters(wiring.Component):
    """A :class:`LinkCounter` on every link of ``netlist`` (a
    :class:`twinnet.hdl.network.Netlist`): its links between routers, then per terminal its
    injection and its ejection port.

    Ports, per link ``j`` between routers (its wires, as the routers drive them):
    ``c<j>_valid``, ``c<j>_payload`` (the flit's valid and payload at the sending output),
    ``c<j>_waits`` (the sending router's ``waits`` of that output); per
    terminal ``t``: ``i<t>_valid``, ``i<t>_first``, ``i<t>_ready`` (the injection stream) and
    ``e<t>_valid``, ``e<t>_payload``, ``e<t>_ready`` (the ejection stream); ``counts_<k>``
    (``k`` from 0, :attr:`chunks`): ``ArrayLayout(counts_layout, n)``, every row's counters
    (:data:`counts_layout`) one after the other in the order of :attr:`rows`,
    :data:`CHUNK_ROWS` rows per port: read one after the other from bit 0, the ports make one
    bus of :attr:`bus_width` bits.
    """

    def __init__(self, netlist):
        self.netlist = netlist
        width = netlist.flit_width
        #: ``(channel, index, VCs)`` per link in bus order: ``("link", j, n)`` (link ``j`` of
        #: the netlist), ``("injection", t, 1)``, ``("ejection", t, 1)``.
        self.links = [("link", link.index, link.vc_count) for link in netlist.links]
        for terminal in range(len(netlist.terminals)):
            self.links += [("injection", terminal, 1), ("ejection", terminal, 1)]
        members = {}
        for link in netlist.links:
            j, vcs = link.index, link.vc_count
            members.update({f"c{j}_valid": In(1),
                            f"c{j}_payload": In(flit.link_flit_layout(width, vcs)),
                            f"c{j}_waits": In(vcs)})
        for t in range(len(netlist.terminals)):
            members.update({f"i{t}_valid": In(1), f"i{t}_first": In(1), f"i{t}_ready": In(1),
                            f"e{t}_valid": In(1), f"e{t}_payload": In(flit.pe_out_layout(width)),
                            f"e{t}_ready": In(1)})
        rows = sum(vcs for _, _, vcs in self.links)
        self.bus_width = rows * counts_layout.size
        # Port ``counts_<k>`` holds rows ``[k*CHUNK_ROWS, (k+1)*CHUNK_ROWS)``.
        chunks = [data.ArrayLayout(counts_layout, min(CHUNK_ROWS, rows - first))
                  for first in range(0, rows, CHUNK_ROWS)]
        #: The widths of the ``counts_<k>`` ports.
        self.chunks = [chunk.size for chunk in chunks]
        for k, chunk in enumerate(chunks):
            members[f"counts_{k}"] = Out(chunk)
        super().__init__(members)

    @property
    def rows(self) -> list[dict]:
        """One dict per row of ``counts``: ``{channel, index, vc}``."""
        return [{"channel": channel, "index": index, "vc": vc}
                for channel, index, vcs in self.links for vc in range(vcs)]

    def elaborate(self, platform):
        m = Module()
        rows = []  # every row's counters, in the order of ``rows``
        for kind, index, vcs in self.links:
            if kind == "link":
                counter = m.submodules[f"link_{index}"] = LinkCounter(vcs, True)
                payload = getattr(self, f"c{index}_payload")
                m.d.comb += [counter.valid.eq(getattr(self, f"c{index}_valid")),
                             counter.first.eq(payload.first), counter.vc.eq(payload.vc),
                             counter.waits.eq(getattr(self, f"c{index}_waits"))]
            else:
                counter = m.submodules[f"{kind}_{index}"] = LinkCounter(1, False)
                side = "i" if kind == "injection" else "e"
                first = (getattr(self, f"i{index}_first") if kind == "injection"
                         else getattr(self, f"e{index}_payload").first)
                m.d.comb += [counter.valid.eq(getattr(self, f"{side}{index}_valid")),
                             counter.first.eq(first),
                             counter.ready.eq(getattr(self, f"{side}{index}_ready"))]
            rows += [counter.counts[vc] for vc in range(vcs)]
        # Each port assigned once, from its rows in order (its ArrayLayout): a statement per
        # row would cost the port's whole width each time.
        for k in range(len(self.chunks)):
            m.d.comb += getattr(self, f"counts_{k}").eq(
                Cat(*rows[k * CHUNK_ROWS:(k + 1) * CHUNK_ROWS]))
        return m

