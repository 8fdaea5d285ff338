"""What ring networks' route computes share: port labels with a direction, and the VC and
bubble flag of the escape schemes (``bubble``, ``dateline``, ``none``).

A link port is labelled by its direction, a letter and a sign (``x+``, ``Y-``); a link from
output ``p`` of one router enters its neighbour's input ``opposite(p)``, so a packet arriving
on input ``q`` travels toward ``opposite(q)`` and goes *straight on* when it leaves through
that port. A route compute works out, for its own (constant) input port, whether the chosen
move goes straight on and whether the hop that brought the packet wrapped its ring (crossed
its dateline), then :func:`drive_escape` sets the outputs:

- ``bubble``: one VC; every move onto a link that does not go straight on (a turn, or an
  injection) enters a ring and needs room for two packets (the ``bubble`` output);
- ``dateline``: two VCs; going straight on, a packet keeps VC 1 once on it and takes it after
  a hop that wrapped; any other move starts on VC 0;
- ``none``: one VC, no bubble.

With more VCs per link than the scheme's own (``vc_count``), each VC (with the dateline, each
pair ``2c, 2c + 1``) is a copy of the scheme: going straight on a packet keeps its copy, and a
move that enters a ring may take any copy (its first VC, with the dateline); the router takes
the lowest VC with room (:mod:`twinnet.model.twisted_network` has the deadlock argument).
"""

from amaranth.hdl import Const, Mux

from twinnet.model.deadlock import ESCAPE_VCS, escape_vc_count

#: The escape schemes :func:`drive_escape` implements.
ESCAPES = tuple(ESCAPE_VCS)


def opposite(port: str) -> str:
    """The port facing back: ``x+`` ↔ ``x-``."""
    return port[:-1] + ("-" if port[-1] == "+" else "+")


def drive_escape(m, route_compute, escape: str, *, to_link, straight, wrapped,
                 vc_count: int | None = None) -> None:
    """Drive ``route_compute``'s ``vc_mask`` and ``bubble`` for ``escape`` (see the module
    docstring) from the move's ``to_link`` (not ejecting), ``straight`` and ``wrapped``, over
    ``vc_count`` VCs per link (default: the scheme's own; a multiple of them, not above the
    router's VCs)."""
    own = escape_vc_count(escape)
    vc_count = own if vc_count is None else vc_count
    width = route_compute.config.max_vc_count
    if escape == "none" and vc_count != 1:
        raise ValueError(f"vc_count must be 1 with escape none, not {vc_count!r}")
    if vc_count < own or vc_count % own or vc_count > width:
        raise ValueError(f"vc_count must be a multiple of escape {escape}'s {own} VCs, at "
                         f"most the router's {width}, not {vc_count!r}")
    in_vc = route_compute.in_vc
    # Entering a ring: the first VC of every copy.
    entry = Const(sum(1 << vc for vc in range(0, vc_count, own)), width)
    m.d.comb += [route_compute.vc_mask.eq(1), route_compute.bubble.eq(0)]
    if escape == "bubble":
        m.d.comb += route_compute.bubble.eq(to_link & ~straight)
        if vc_count > 1:
            m.d.comb += route_compute.vc_mask.eq(
                Mux(to_link, Mux(straight, Const(1, width) << in_vc, entry), 1))
    elif escape == "dateline":
        on_one = straight & (in_vc[0] | wrapped)
        kept = Const(1, width) << ((in_vc >> 1) << 1 | on_one)
        m.d.comb += route_compute.vc_mask.eq(Mux(to_link, Mux(straight, kept, entry), 1))
