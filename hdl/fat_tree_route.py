"""Route compute of a k-ary n-tree switch, or of one half of a twin switch, as arithmetic hardware.

DESTRO (001 App. A.7.1, App. A.5.1): at switch ``<s, o>`` a packet for terminal
``h = h_{n-1} … h_0`` goes down through port ``h_s`` when ``h`` is below the switch
(``h_i = o_{i-1}`` for every ``i`` in ``s+1 … n-1``), else up through port ``k + h_s``. The
hardware compares every destination digit with the switch digit one position lower, ANDs the
comparisons of the positions above the stage (``(s >= i) | (h_i = o_{i-1})``), selects ``h_s``
by the stage and adds ``k`` on the way up; no table is generated from the model. The switch
``<s, o>`` is an input (``node_static``), so one module serves every switch with the same port
layout: the network top ties ``node_static`` off per switch.

Router-local port numbering: the router's ``external_ports`` (switch ports ``0 … 2k-1``; ``0 …
k-1`` face down, ``k … 2k-1`` face up) in the order given, at local indices ``0 … e-1``, then
the ``r`` internal ports at ``e … e+r-1``. A plain switch has no internal port (``r = 0``). A
half α or β of a twin switch (001 Def. 1.2, §4) reaches a port of the other half over internal
port ``wanted mod r``, the rule of :meth:`twinnet.model.twin_switch.TwinSwitch.internal_port`.
"""

from amaranth.hdl import Const, Module, Mux, Signal, unsigned
from amaranth.lib import data

from twinnet.model import checks
from twinnet.model.fat_tree import FatTreeTopology
from twinnet.model.widths import index_width

from .config import RouterConfig
from .route_compute import RouteCompute


def destination_layout(tree: FatTreeTopology) -> data.StructLayout:
    """A destination terminal: fields ``h0 … h{n-1}``, ``h0`` the least significant digit (as
    :meth:`twinnet.model.fat_tree.FatTreeTopology.terminal_digits`).

    ``h0 … h{n-2}`` are ``index_width(k)`` bits wide; ``h{n-1}`` is ``k.bit_length()`` bits,
    one more than a digit needs when k is a power of two, so that every destination
    ``>= k**n`` is representable (and flagged malformed).
    """
    fields = {f"h{i}": unsigned(index_width(tree.k)) for i in range(tree.n - 1)}
    fields[f"h{tree.n - 1}"] = unsigned(tree.k.bit_length())
    return data.StructLayout(fields)


def static_layout(tree: FatTreeTopology) -> data.StructLayout:
    """The switch ``<s, o_{n-2} … o_0>``: ``stage`` (``index_width(n)`` bits), then
    ``o0 … o{n-2}`` (``index_width(k)`` bits each)."""
    fields = {"stage": unsigned(index_width(tree.n))}
    fields.update({f"o{i}": unsigned(index_width(tree.k)) for i in range(tree.n - 1)})
    return data.StructLayout(fields)


class FatTreeRouteCompute(RouteCompute):
    """DESTRO for a router that is a plain fat-tree switch or one half of a twin switch.

    Implements :class:`twinnet.hdl.route_compute.RouteCompute`:

    - ``header`` is a :func:`destination_layout` (the destination's digits ``h0 …``);
    - ``node_static`` is a :func:`static_layout`: the switch ``<stage, o>``, tied off per
      switch. It must name a switch of the tree (``stage < n``, digits ``< k``); other values
      give an unspecified port;
    - ``out_port`` is the local index (see the module docstring) of DESTRO's port when this
      router carries it, else internal port ``e + (wanted mod r)``; ``vc_mask`` holds every VC
      and ``bubble`` is 0;
    - ``malformed`` is set when a destination digit is ``>= k`` (a destination ``>= k**n``, or
      a lower digit out of range when k is not a power of two), or when the wanted port is
      neither on this router nor reachable over an internal port (``r = 0``); the router drops
      the packet.

    Parameters:
        config: the router's configuration; ``config.port_count`` must be
            ``len(external_ports) + internal_port_count``.
        in_port: the input port this instance serves (the route does not depend on it).
        tree: the :class:`~twinnet.model.fat_tree.FatTreeTopology`.
        external_ports: the switch ports ``0 … 2k-1`` on this router, in local index order
            (distinct, at least one).
        internal_port_count: r >= 0, the internal ports to the other half (0: a plain switch).

    Raises ``TypeError``/``ValueError`` before building anything when the parameters do not
    fit together. Build instances through the router with ``functools.partial(
    FatTreeRouteCompute, tree=…, external_ports=…, internal_port_count=…)``.
    """

    def __init__(self, config: RouterConfig, in_port: int, *, tree: FatTreeTopology,
                 external_ports: tuple[int, ...], internal_port_count: int):
        external_ports = self.checked
        self.tree, self.external_ports = tree, external_ports
        self.internal_port_count = internal_port_count
        super().__init__(config, in_port, header_layout=destination_layout(tree),
                         static_layout=static_layout(tree))

    @classmethod
    def check(cls, config: RouterConfig, in_port: int, *, tree: FatTreeTopology, external_ports,
              internal_port_count: int) -> tuple[int, ...]:
        """The external ports as a tuple, once the parameters are known to fit together."""
        if not isinstance(config, RouterConfig):
            raise TypeError(f"config must be a RouterConfig, not {config!r}")
        if not isinstance(tree, FatTreeTopology):
            raise TypeError(f"tree must be a FatTreeTopology, not {tree!r}")
        ports = checks.check_switch_ports("external_ports", external_ports, tree.port_count)
        if not ports:
            raise ValueError("external_ports must hold at least 1 port, not 0")
        checks.check_int("internal_port_count", internal_port_count, minimum=0)
        count = len(ports) + internal_port_count
        if config.port_count != count:
            raise ValueError(f"a router with {len(ports)} external and {internal_port_count} "
                             f"internal ports has {count} ports, not {config.port_count}")
        checks.check_int("in_port", in_port, minimum=0, maximum=count - 1)
        return ports

    def elaborate(self, platform):
        m = Module()
        tree, header, here = self.tree, self.header, self.node_static
        k, n, r = tree.k, tree.n, self.internal_port_count
        h = [header[f"h{i}"] for i in range(n)]
        o = [here[f"o{i}"] for i in range(n - 1)]
        stage = here.stage

        # Destination digits out of range: the top digit always can be, lower ones when k is
        # not a power of two.
        bad = Const(0, 1)
        for digit in h:
            if (1 << len(digit)) > k:
                bad = bad | (digit >= k)

        # Below the switch: h_i == o_{i-1} for every i above the stage.
        below = Const(1, 1)
        for i in range(1, n):
            below = below & ((stage >= i) | (h[i] == o[i - 1]))
        h_s = Signal(index_width(k))
        with m.Switch(stage):
            for i in range(n):
                with m.Case(i):
                    m.d.comb += h_s.eq(h[i])  # the top digit is < k when not malformed
        wanted = Signal(range(2 * k))
        m.d.comb += wanted.eq(Mux(below, h_s, h_s + k))

        local = {port: index for index, port in enumerate(self.external_ports)}
        # Any VC of the output (a PE output has one; the request unit masks by its free VCs).
        every_vc = (1 << self.config.max_vc_count) - 1
        m.d.comb += [self.out_port.eq(0), self.vc_mask.eq(every_vc), self.bubble.eq(0)]
        with m.Switch(wanted):
            for port in range(2 * k):
                if port in local:
                    with m.Case(port):
                        m.d.comb += self.out_port.eq(local[port])
                elif r:  # on the other half: internal port (port mod r)
                    with m.Case(port):
                        m.d.comb += self.out_port.eq(len(local) + port % r)
        unreachable = Const(0, 1)
        if not r:  # a plain switch: a port it does not carry cannot be reached
            for port in range(2 * k):
                if port not in local:
                    unreachable = unreachable | (wanted == port)
        m.d.comb += self.malformed.eq(bad | unreachable)
        return m
