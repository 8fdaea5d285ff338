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

from amaranth.hdl import Assume, Cat, Mux, Signal


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
    and not yet credited; one slot more than the buffer, so that an overflow shows). With
    ``packets`` (a bubble port's view, see :class:`~twinnet.hdl.router.output_unit.
    OutputUnit`), also per VC: the last marks of the flits held (``last_marks``, oldest at
    bit 0), the packets with flits held (from the head's arrival to the tail's credit) and
    the credits returned of the oldest (``drained``)."""

    port: int
    occupancy: list
    last_marks: list = ()
    packets: list = ()
    drained: list = ()


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


def downstream(m, router, o: int, *, packets: bool = False) -> Downstream:
    """Assume output link ``o`` of ``router`` feeds buffers that return a credit only for a
    flit they hold (in the order the flits came: a buffer drains in order); with
    ``packets``, count the packets they hold as :class:`Downstream` says."""
    port, length = router.config.ports[o], router.config.max_packet_length
    link = router.port_out(o)
    depth, vcs = port.buffer_depth, range(port.vc_count)
    state = Downstream(o, [Signal(range(depth + 2), name=f"down_occupancy_{o}_{w}")
                           for w in vcs])
    if packets:
        state.last_marks = [Signal(depth + 1, name=f"down_last_marks_{o}_{w}") for w in vcs]
        state.packets = [Signal(range(depth + 2), name=f"down_packets_{o}_{w}") for w in vcs]
        state.drained = [Signal(range(length), name=f"down_drained_{o}_{w}") for w in vcs]
    m.d.comb += Assume(~link.credit.valid | (link.credit.payload < port.vc_count))
    flit = link.flit.payload
    for w, occupancy in enumerate(state.occupancy):
        arrives = link.flit.valid & (flit.vc == w)
        back = link.credit.valid & (link.credit.payload == w)
        m.d.comb += Assume(~back | (occupancy != 0))
        m.d.sync += occupancy.eq(occupancy + arrives - back)
        if packets:
            marks, count, drained = state.last_marks[w], state.packets[w], state.drained[w]
            # The arriving flit's mark goes in behind the ones held; a credit takes the oldest.
            held = Cat(Mux(arrives & (occupancy == k), flit.last, marks[k])
                       for k in range(depth + 1))
            tail_back = back & marks[0]
            m.d.sync += [marks.eq(Mux(back, held >> 1, held)),
                         count.eq(count + (arrives & flit.first) - tail_back),
                         drained.eq(Mux(tail_back, 0, drained + back))]
    return state
