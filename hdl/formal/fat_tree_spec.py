"""The fat tree's route compute written again from 001's DESTRO (App. A.7.1), with the twin
switch's internal ports (001 §4.1) (:func:`destro_spec`).

Only the port layout of a half (which switch ports it holds) is read from the route compute;
the routing is arithmetic over the header and the switch's stage and digits.
"""

from amaranth.hdl import Cat, Const, Mux

from .spec_common import ExpectedRoute


def destro_spec(m, rc, in_port: int) -> ExpectedRoute:
    """DESTRO (001 App. A.7.1) on switch ``<s, o>``: the destination terminal ``h`` is below the
    switch when its number, with the digits below ``s + 1`` cleared, is the switch's prefix
    ``sum(o_{i-1} k^i, i > s)``; then down through port ``h_s``, else up through ``k + h_s``.
    A half of a twin switch reaches the other half's ports over internal port ``port mod
    r`` (001 §4.1, the twin switch); without internal ports such a port is unreachable
    (malformed)."""
    k, n = rc.tree.k, rc.tree.n
    r, local = rc.internal_port_count, list(rc.external_ports)
    h = [rc.header[f"h{i}"] for i in range(n)]
    o = [rc.node_static[f"o{i}"] for i in range(n - 1)]
    stage = rc.node_static.stage
    assumptions = [stage < n, *(digit < k for digit in o)]
    malformed = Cat(digit >= k for digit in h).any()
    number = sum(digit * k ** i for i, digit in enumerate(h))
    below, digit_s = Const(0, 1), Const(0, 1)
    for s in range(n):
        span = k ** (s + 1)
        prefix = sum(o[i - 1] * k ** i for i in range(s + 1, n))
        here = stage == s
        below = below | (here & ((number - number % span) == prefix))
        digit_s = Mux(here, h[s], digit_s)
    wanted = Mux(below, digit_s, digit_s + k)
    port = Const(0, range(max(2, rc.config.port_count)))
    reachable = Const(0, 1)
    for switch_port in range(2 * k):
        if switch_port in local:
            target = local.index(switch_port)
        elif r:
            target = len(local) + switch_port % r
        else:
            continue
        port = Mux(wanted == switch_port, target, port)
        reachable = reachable | (wanted == switch_port)
    every_vc = Const((1 << rc.config.max_vc_count) - 1, rc.config.max_vc_count)
    return ExpectedRoute(port, every_vc, Const(0, 1), malformed | ~reachable, assumptions)
