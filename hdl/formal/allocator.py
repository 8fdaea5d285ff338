"""What the fairness property knows of a round-robin arbiter or an iSLIP grant pointer: how
many requesters may be granted before a given one."""

from amaranth.hdl import Const, Mux, Signal


def first_in_turn(m, arbiter, name: str):
    """The requester that ``arbiter`` (an :class:`~.stages.ObservedArbiter`) serves first,
    and whether its priority state is one it can reach (the mask of requesters after the last
    grant is all ones from some requester on, or zero)."""
    count = arbiter.count
    if count == 1:
        return Const(0, 1), Const(1, 1)
    if count == 2:
        return arbiter.priority, Const(1, 1)
    return first_of_mask(m, arbiter.priority, count, name)


def first_of_mask(m, above, count: int, name: str):
    """The requester a round-robin pointer ``above`` (the mask of the ``count`` requesters
    after the last one served, :func:`twinnet.hdl.onehot.after`) serves first, and whether the
    mask is one it can hold (all ones from some requester on, or zero)."""
    if count == 1:
        return Const(0, 1), Const(1, 1)
    first = Signal(range(count), name=name)
    for k in reversed(range(count)):
        with m.If(above[k]):
            m.d.comb += first.eq(k)
    suffixes = [Const(((1 << count) - 1) ^ ((1 << k) - 1), count) for k in range(count)]
    reachable = (above == 0)
    for suffix in suffixes:
        reachable = reachable | (above == suffix)
    return first, reachable


def turns_before(first, index: int, count: int):
    """Requesters served before requester ``index`` when ``first`` is served first (all of
    them requesting): ``(index - first) mod count``."""
    if count == 1:
        return Const(0, 1)
    return Mux(first <= index, index - first, index + count - first)
