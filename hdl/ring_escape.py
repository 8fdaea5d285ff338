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
"""

from amaranth.hdl import Mux

#: The escape schemes :func:`drive_escape` implements.
ESCAPES = ("bubble", "dateline", "none")


def opposite(port: str) -> str:
    """The port facing back: ``x+`` ↔ ``x-``."""
    return port[:-1] + ("-" if port[-1] == "+" else "+")


def drive_escape(m, route_compute, escape: str, *, to_link, straight, wrapped) -> None:
    """Drive ``route_compute``'s ``vc_mask`` and ``bubble`` for ``escape`` (see the module
    docstring) from the move's ``to_link`` (not ejecting), ``straight`` and ``wrapped``."""
    m.d.comb += [route_compute.vc_mask.eq(1), route_compute.bubble.eq(0)]
    if escape == "bubble":
        m.d.comb += route_compute.bubble.eq(to_link & ~straight)
    elif escape == "dateline":
        on_one = straight & (route_compute.in_vc[0] | wrapped)
        m.d.comb += route_compute.vc_mask.eq(Mux(to_link & on_one, 0b10, 0b01))
    elif escape != "none":
        raise ValueError(f"escape must be one of {', '.join(ESCAPES)}, not {escape!r}")
