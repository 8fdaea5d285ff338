"""A lone router's neighbours, as assumptions on its ports and registers that follow them.

Only what a neighbour honours is assumed:

- an upstream router sends a flit on a VC only with a credit for it (its counter starts at
  the buffer depth and gets one back per credit returned), and sends the flits of each VC as
  whole packets of 1 to L flits, head first, tail last (the abort mark only on a tail),
  starting a packet only with credits for L flits (virtual cut-through reserves the longest
  packet); headers, payloads and lengths are arbitrary, packets of different VCs may
  interleave;
- a downstream buffer returns a credit only for a flit it holds (its occupancy is counted
  here); it may hold flits for ever;
- a PE injects and ejects whenever it likes (valid and ready are arbitrary each cycle).

Per-node constants (``node_static``) are arbitrary in every cycle, so a proof holds for
every node of a network.
"""

from dataclasses import dataclass

from amaranth.hdl import Assume, Mux, Signal


@dataclass
class Upstream:
    """An upstream router's view of input port ``port``: per VC, its ``credits`` and the
    flits of its open packet sent so far (``position``; 0 between packets)."""

    port: int
    credits: list
    position: list


@dataclass
class Downstream:
    """A downstream buffer's occupancy per output VC of output port ``port`` (flits received
    and not yet credited; one slot more than the buffer, so that an overflow shows)."""

    port: int
    occupancy: list


def upstream(m, router, p: int) -> Upstream:
    """Assume input link ``p`` of ``router`` is driven by a router that honours credits and
    sends whole packets of 1 to L flits per VC."""
    config = router.config
    port, length = config.ports[p], config.max_packet_length
    link = router.port_in(p)
    state = Upstream(p, [Signal(range(port.buffer_depth + 1), init=port.buffer_depth,
                                name=f"up_credits_{p}_{v}") for v in range(port.vc_count)],
                     [Signal(range(length), name=f"up_position_{p}_{v}")
                      for v in range(port.vc_count)])
    flit = link.flit.payload
    # A link carries VC tags of its VCs only (a 1-VC link still has a 1-bit tag, always 0).
    m.d.comb += Assume(~link.flit.valid | (flit.vc < port.vc_count))
    for v, (credits, position) in enumerate(zip(state.credits, state.position)):
        sent = link.flit.valid & (flit.vc == v)
        back = link.credit.valid & (link.credit.payload == v)
        m.d.comb += Assume(~sent | ((credits != 0) & (flit.first == (position == 0))
                                    & (~flit.first | (credits >= length))
                                    & (flit.last | (position != length - 1))
                                    & (~flit.abort | flit.last)))
        m.d.sync += [credits.eq(credits + back - sent),
                     position.eq(Mux(sent, Mux(flit.last, 0, position + 1), position))]
    return state


def downstream(m, router, o: int) -> Downstream:
    """Assume output link ``o`` of ``router`` feeds buffers that return a credit only for a
    flit they hold."""
    port = router.config.ports[o]
    link = router.port_out(o)
    state = Downstream(o, [Signal(range(port.buffer_depth + 2), name=f"down_occupancy_{o}_{w}")
                           for w in range(port.vc_count)])
    m.d.comb += Assume(~link.credit.valid | (link.credit.payload < port.vc_count))
    for w, occupancy in enumerate(state.occupancy):
        arrives = link.flit.valid & (link.flit.payload.vc == w)
        back = link.credit.valid & (link.credit.payload == w)
        m.d.comb += Assume(~back | (occupancy != 0))
        m.d.sync += occupancy.eq(occupancy + arrives - back)
    return state
