"""k-ary n-trees (bidirectional MINs) of twin switches, DESTRO routing and path analyses.

Wiring (001 App. A.6.1): ``N = k^n`` terminals ``h = h_{n-1} … h_0`` and ``n`` stages of
``k^(n-1)`` switches ``<s, o_{n-2} … o_0>``. Ports ``0 … k-1`` face down, ``k … 2k-1``
face up. Up port ``k + j`` of ``<s, o>`` goes to ``<s+1, o'>`` with ``o'_s = j`` (other digits
equal) and arrives on its down port ``o_s``; terminal ``h`` hangs on down port ``h_0`` of
``<0, o>`` with ``o_i = h_{i+1}``. The paper fixes which switches are joined; the port numbers
at both ends are this project's reading of the labels of App. A.7.1 (Fig. 25). Digits are
stored least significant first: ``digits[i]`` is ``o_i`` (``h_i`` for a terminal).

Routing (001 App. A.7.1, App. A.5.1): at ``<s, o>`` a packet for ``h`` goes down through port
``h_s`` when ``h`` is below the switch (``h_i = o_{i-1}`` for every ``i`` in ``s+1 … n-1``),
else up. DESTRO goes up through port ``k + h_s``; the ``"random"`` routing goes up through a
port drawn from a seeded RNG (the down phase is the same unique path). Either way the packet
turns around at stage ``FirstDifference(source, h)``.

A *link* is one direction of a cable, named by :class:`FatTreeLink` (level, index,
direction); a *hop* (:class:`FatTreeHop`) is a switch with the ports a path enters and leaves
it by. The analyses count, over all ``N(N-1)`` ordered pairs of distinct terminals, connections
per switch and port pair, forward / turnaround / backward paths per switch (001 Table 1), the
load of every link, and the crossings of each twin switch's internal link (001 §5.3).
"""

import functools
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from . import checks, schema
from .deadlock import ChannelDependencyGraph
from .schema import Integer, Text, parameter
from .sizes import RouterSizes
from .twin_switch import TwinSwitch
from .widths import index_width

ROUTINGS = ("destro", "random")
DIRECTIONS = ("up", "down")


class Switch(NamedTuple):
    """Switch ``<stage, o_{n-2} … o_0>``; ``digits[i]`` is ``o_i``."""

    stage: int
    digits: tuple[int, ...]

    def __str__(self) -> str:
        sep = "" if all(d < 10 for d in self.digits) else "."
        return f"<{self.stage},{sep.join(str(d) for d in reversed(self.digits))}>"


@dataclass(frozen=True, order=True)
class FatTreeLink:
    """One direction of a cable.

    ``level`` 0 joins the terminals to stage 0, level ``L ≥ 1`` joins stage ``L-1`` to stage
    ``L``. ``index`` is the terminal ``h`` at level 0 and ``k · (index of the lower switch in
    its stage) + j`` for the cable on the lower switch's up port ``k + j``. ``direction`` is
    ``"up"`` (away from the terminals) or ``"down"``.
    """

    level: int
    index: int
    direction: str

    def __str__(self) -> str:
        return f"L{self.level}#{self.index}{'↑' if self.direction == 'up' else '↓'}"


@dataclass(frozen=True, order=True)
class FatTreeInternalChannel:
    """One direction of internal port ``port`` of the twin switch ``switch``."""

    switch: Switch
    source_half: str
    port: int

    def __str__(self) -> str:
        arrow = "α→β" if self.source_half == "alpha" else "β→α"
        return f"{self.switch}:I{self.port}{arrow}"


@dataclass(frozen=True)
class FatTreeHop:
    """A path's visit to ``switch``: it enters on ``in_port`` and leaves on ``out_port``."""

    switch: Switch
    in_port: int
    out_port: int
    k: int

    @property
    def move(self) -> str:
        return connection_move(self.k, self.in_port, self.out_port)


def connection_move(k: int, in_port: int, out_port: int) -> str:
    """``"forward"`` (down port → up port), ``"turnaround"`` (down → down) or ``"backward"``
    (up → down) for a connection of a radix-2k switch."""
    if in_port >= k:
        return "backward"
    return "forward" if out_port >= k else "turnaround"


@dataclass(frozen=True)
class PathCounts:
    """Paths passing a switch in each phase (001 Table 1)."""

    forward: int = 0
    turnaround: int = 0
    backward: int = 0

    @property
    def total(self) -> int:
        return self.forward + self.turnaround + self.backward


@dataclass(frozen=True)
class FatTreeTopology:
    """A k-ary n-tree: ``k^n`` terminals, ``n`` stages of ``k^(n-1)`` switches of radix 2k.

    Raises ``TypeError``/``ValueError`` for k < 2 or n < 1.
    """

    k: int
    n: int

    def __post_init__(self):
        checks.check_int("k", self.k, minimum=2)
        checks.check_int("n", self.n, minimum=1)

    @property
    def terminal_count(self) -> int:
        return self.k ** self.n

    @property
    def switches_per_stage(self) -> int:
        return self.k ** (self.n - 1)

    @property
    def switch_count(self) -> int:
        return self.n * self.switches_per_stage

    @property
    def port_count(self) -> int:
        return 2 * self.k

    @property
    def last_stage(self) -> int:
        return self.n - 1

    # --- addressing -------------------------------------------------------------------------

    def _to_digits(self, value: int, count: int) -> tuple[int, ...]:
        return tuple((value // self.k ** i) % self.k for i in range(count))

    def _from_digits(self, digits: Sequence[int]) -> int:
        return sum(d * self.k ** i for i, d in enumerate(digits))

    def check_terminal(self, h, name: str = "terminal") -> int:
        return checks.check_int(name, h, minimum=0, maximum=self.terminal_count - 1)

    def terminal_digits(self, h: int) -> tuple[int, ...]:
        """``(h_0, …, h_{n-1})``."""
        return self._to_digits(self.check_terminal(h), self.n)

    def switches(self, stage: int | None = None) -> Iterator[Switch]:
        """Every switch of ``stage`` (all stages if ``None``), in index order."""
        stages = range(self.n) if stage is None else (self.check_stage(stage),)
        for s in stages:
            for index in range(self.switches_per_stage):
                yield Switch(s, self._to_digits(index, self.n - 1))

    def check_stage(self, stage, name: str = "stage") -> int:
        return checks.check_int(name, stage, minimum=0, maximum=self.last_stage)

    def switch_index(self, switch: Switch) -> int:
        """Position of ``switch`` within its stage (``o`` read as a base-k number)."""
        return self._from_digits(switch.digits)

    def terminal_switch(self, h: int) -> Switch:
        """The stage-0 switch terminal ``h`` hangs on (on down port ``h_0``)."""
        return Switch(0, self.terminal_digits(h)[1:])

    def up_neighbor(self, switch: Switch, out_port: int) -> tuple[Switch, int]:
        """Where up port ``out_port`` (``k … 2k-1``) leads: ``(switch, arrival down port)``."""
        if switch.stage >= self.last_stage or not self.k <= out_port < 2 * self.k:
            raise ValueError(f"{switch} has no up port {out_port}")
        s, digits = switch
        above = digits[:s] + (out_port - self.k,) + digits[s + 1:]
        return Switch(s + 1, above), digits[s]

    def down_neighbor(self, switch: Switch, out_port: int) -> tuple[Switch, int] | int:
        """Where down port ``out_port`` leads: ``(switch, arrival up port)``, or the terminal
        number for a stage-0 switch."""
        if not 0 <= out_port < self.k:
            raise ValueError(f"{switch} has no down port {out_port}")
        s, digits = switch
        if s == 0:
            return self._from_digits((out_port,) + digits)
        below = digits[:s - 1] + (out_port,) + digits[s:]
        return Switch(s - 1, below), self.k + digits[s - 1]

    def first_difference(self, a: int, b: int) -> int:
        """The highest digit position where terminals ``a`` and ``b`` differ (the stage at
        which their path turns around); raises ``ValueError`` when ``a == b``."""
        da, db = self.terminal_digits(a), self.terminal_digits(b)
        for i in reversed(range(self.n)):
            if da[i] != db[i]:
                return i
        raise ValueError(f"terminals {a} and {b} are equal: no first difference")

    def is_below(self, switch: Switch, h: int) -> bool:
        """True if terminal ``h`` hangs in the subtree under ``switch``."""
        digits = self.terminal_digits(h)
        return all(digits[i] == switch.digits[i - 1] for i in range(switch.stage + 1, self.n))

    def out_link(self, switch: Switch, out_port: int) -> FatTreeLink:
        """The link leaving ``switch`` through ``out_port``."""
        s = switch.stage
        if out_port >= self.k:
            return FatTreeLink(s + 1, self.k * self.switch_index(switch) + out_port - self.k, "up")
        if s == 0:
            return FatTreeLink(0, self._from_digits((out_port,) + switch.digits), "down")
        below, up_port = self.down_neighbor(switch, out_port)
        return FatTreeLink(s, self.k * self.switch_index(below) + up_port - self.k, "down")

    def injection_link(self, h: int) -> FatTreeLink:
        return FatTreeLink(0, self.check_terminal(h), "up")

    def links(self) -> Iterator[FatTreeLink]:
        """Every link: ``k^n`` cables per level, two directions each."""
        for level in range(self.n):
            for index in range(self.terminal_count):
                for direction in DIRECTIONS:
                    yield FatTreeLink(level, index, direction)


# --- routing -----------------------------------------------------------------------------------

def check_routing(routing: str) -> str:
    return checks.check_choice("routing", routing, ROUTINGS)


def next_port(config: FatTreeTopology, switch: Switch, destination: int,
              rng: random.Random | None = None) -> int:
    """The output port at ``switch`` for ``destination``: DESTRO, or a random up port drawn
    from ``rng`` when one is given (the down phase is deterministic either way)."""
    h_s = config.terminal_digits(destination)[switch.stage]
    if config.is_below(switch, destination):
        return h_s
    if rng is not None:
        return config.k + rng.randrange(config.k)
    return config.k + h_s


def destro_port(config: FatTreeTopology, switch: Switch, destination: int) -> int:
    """DESTRO's output port: down ``h_s`` if ``destination`` is below ``switch``, else up
    ``k + h_s``."""
    return next_port(config, switch, destination)


def route(config: FatTreeTopology, source: int, destination: int,
          rng: random.Random | None = None) -> tuple[FatTreeHop, ...]:
    """The hops from terminal ``source`` to ``destination`` (distinct), DESTRO unless ``rng``.

    Raises ``ValueError`` for equal terminals or terminals out of range.
    """
    config.check_terminal(source, "source")
    config.check_terminal(destination, "destination")
    if source == destination:
        raise ValueError(f"source and destination are both terminal {source}")
    switch = config.terminal_switch(source)
    in_port = config.terminal_digits(source)[0]
    hops = []
    while True:
        out_port = next_port(config, switch, destination, rng)
        hops.append(FatTreeHop(switch, in_port, out_port, config.k))
        if out_port >= config.k:
            switch, in_port = config.up_neighbor(switch, out_port)
        else:
            step = config.down_neighbor(switch, out_port)
            if isinstance(step, int):
                if step != destination:  # cannot happen for a correct model: say so loudly
                    raise AssertionError(f"path {source}→{destination} ended at {step}")
                return tuple(hops)
            switch, in_port = step


def path_links(config: FatTreeTopology, source: int,
               hops: Sequence[FatTreeHop]) -> list[FatTreeLink]:
    """The links a path holds in order: injection, then each hop's output link."""
    return [config.injection_link(source)] + [config.out_link(h.switch, h.out_port)
                                              for h in hops]


def all_routes(config: FatTreeTopology, routing: str = "destro",
               seed: int = 0) -> Iterator[tuple[int, int, tuple[FatTreeHop, ...]]]:
    """``(source, destination, hops)`` for every ordered pair of distinct terminals.

    Pairs come in a fixed order (source-major), so ``routing="random"`` with the same ``seed``
    replays the same paths.
    """
    rng = random.Random(seed) if check_routing(routing) == "random" else None
    for source in range(config.terminal_count):
        for destination in range(config.terminal_count):
            if source != destination:
                yield source, destination, route(config, source, destination, rng)


# --- path analyses -----------------------------------------------------------------------------

def connection_counts(config: FatTreeTopology, routing: str = "destro",
                      seed: int = 0) -> dict[Switch, Counter]:
    """Per switch, a ``Counter`` of ``(in_port, out_port) → paths`` over all pairs."""
    counts = {switch: Counter() for switch in config.switches()}
    for _, _, hops in all_routes(config, routing, seed):
        for hop in hops:
            counts[hop.switch][hop.in_port, hop.out_port] += 1
    return counts


def phase_counts(config: FatTreeTopology, connections: Counter) -> PathCounts:
    """Forward / turnaround / backward totals of one switch's connection counter."""
    totals = Counter()
    for (in_port, out_port), count in connections.items():
        totals[connection_move(config.k, in_port, out_port)] += count
    return PathCounts(**totals)


def switch_path_counts(config: FatTreeTopology, routing: str = "destro",
                       seed: int = 0) -> dict[Switch, PathCounts]:
    """Per switch, the paths passing it forward, turning around in it and passing backward."""
    return {switch: phase_counts(config, counter)
            for switch, counter in connection_counts(config, routing, seed).items()}


def link_loads(config: FatTreeTopology, routing: str = "destro", seed: int = 0) -> Counter:
    """Paths per link (every link present, unused ones with 0)."""
    loads = Counter(dict.fromkeys(config.links(), 0))
    for source, _, hops in all_routes(config, routing, seed):
        loads.update(path_links(config, source, hops))
    return loads


def load_ranges(loads: Counter) -> dict[tuple[int, str], tuple[int, int]]:
    """``(level, direction) → (min, max)`` paths per link; min == max means balanced."""
    ranges: dict[tuple[int, str], tuple[int, int]] = {}
    for link, load in loads.items():
        key = (link.level, link.direction)
        low, high = ranges.get(key, (load, load))
        ranges[key] = (min(low, load), max(high, load))
    return dict(sorted(ranges.items()))


def is_minimal(config: FatTreeTopology, source: int, destination: int,
               hops: Sequence[FatTreeHop]) -> bool:
    """True if the path turns around once, at stage ``FirstDifference``, and is as short as
    possible there: ``2·FirstDifference + 1`` switches."""
    turn = config.first_difference(source, destination)
    moves = [hop.move for hop in hops]
    turns = [hop.switch.stage for hop in hops if hop.move == "turnaround"]
    return (len(hops) == 2 * turn + 1 and turns == [turn]
            and moves == ["forward"] * turn + ["turnaround"] + ["backward"] * turn)


# --- twin switches in a fat tree ---------------------------------------------------------------

@dataclass(frozen=True)
class TwinFatTree:
    """A k-ary n-tree whose switches are twin switches, one split per stage.

    ``splits[s]`` is the :class:`TwinSwitch` used at stage ``s``; ``None`` (the default) takes
    the optimal pattern of 001 §5.3.3 (Fig. 13) — paired below the last stage (Prop. 1.29),
    all down ports on α at the last stage (Prop. 1.30) — which needs an even k. Raises
    ``ValueError`` for a split of another k or another r, or a wrong number of splits.
    """

    tree: FatTreeTopology
    splits: tuple[TwinSwitch, ...] | None = None

    def __post_init__(self):
        if not isinstance(self.tree, FatTreeTopology):
            raise TypeError(f"tree must be a FatTreeTopology, not {self.tree!r}")
        if self.splits is None:
            object.__setattr__(self, "splits", optimal_splits(self.tree.k, self.tree.n))
        splits = tuple(self.splits)
        if len(splits) != self.tree.n:
            raise ValueError(f"splits must give one twin switch per stage ({self.tree.n}), "
                             f"not {len(splits)}")
        for stage, split in enumerate(splits):
            if not isinstance(split, TwinSwitch):
                raise TypeError(f"splits[{stage}] must be a TwinSwitch, not {split!r}")
            if split.k != self.tree.k:
                raise ValueError(f"splits[{stage}] has k = {split.k}; the tree has k = "
                                 f"{self.tree.k}")
        object.__setattr__(self, "splits", splits)

    @classmethod
    def uniform(cls, k: int, n: int, split: TwinSwitch) -> "TwinFatTree":
        """The same split at every stage."""
        return cls(FatTreeTopology(k, n), (split,) * n)

    def split_of(self, switch: Switch) -> TwinSwitch:
        return self.splits[switch.stage]

    def internal_channel(self, hop: FatTreeHop) -> FatTreeInternalChannel | None:
        """The internal channel ``hop`` crosses, or ``None`` if it stays on one half."""
        split = self.split_of(hop.switch)
        port = split.internal_port(hop.in_port, hop.out_port)
        if port is None:
            return None
        return FatTreeInternalChannel(hop.switch, split.half_of(hop.in_port), port)


def optimal_splits(k: int, n: int, internal_port_count: int = 1) -> tuple[TwinSwitch, ...]:
    """The optimal pattern: paired splits at stages ``0 … n-2``, down ports on α at ``n-1``."""
    checks.check_int("n", n, minimum=1)
    last = TwinSwitch.down_on_alpha(k, internal_port_count)
    if n == 1:
        return (last,)
    return (TwinSwitch.paired(k, internal_port_count),) * (n - 1) + (last,)


@dataclass(frozen=True)
class InternalCrossings:
    """Crossings of one twin switch's internal link: by direction and by internal port."""

    alpha_to_beta: int
    beta_to_alpha: int
    per_port: tuple[int, ...]

    @property
    def total(self) -> int:
        return self.alpha_to_beta + self.beta_to_alpha


def internal_crossings(twin: TwinFatTree, routing: str = "destro",
                       seed: int = 0) -> dict[Switch, InternalCrossings]:
    """Per switch, the paths whose connection crosses its internal link."""
    result = {}
    for switch, counter in connection_counts(twin.tree, routing, seed).items():
        split = twin.split_of(switch)
        directions = Counter()
        per_port = [0] * split.internal_port_count
        for (in_port, out_port), count in counter.items():
            port = split.internal_port(in_port, out_port)
            if port is not None:
                directions[split.half_of(in_port)] += count
                per_port[port] += count
        result[switch] = InternalCrossings(directions["alpha"], directions["beta"],
                                           tuple(per_port))
    return result


# --- deadlock ----------------------------------------------------------------------------------

def path_channels(tree: FatTreeTopology, source: int, hops: Sequence[FatTreeHop],
                  twin: TwinFatTree | None = None) -> list:
    """The channels a path holds in order; with ``twin``, each crossing of a twin switch's
    internal link is a channel between the hop's input and output links."""
    links = path_links(tree, source, hops)
    if twin is None:
        return links
    channels = [links[0]]
    for hop, out_link in zip(hops, links[1:]):
        internal = twin.internal_channel(hop)
        if internal is not None:
            channels.append(internal)
        channels.append(out_link)
    return channels


def dependency_graph(tree: FatTreeTopology, routing: str = "destro", seed: int = 0,
                     twin: TwinFatTree | None = None) -> ChannelDependencyGraph:
    """The channel-dependency graph of all ``N(N-1)`` paths (one VC per link).

    Up-then-down routing on the links alone is acyclic (every dependency goes up a level, turns
    once, or goes down a level). With ``twin`` the internal links are channels too: a split
    that lets forward and backward connections cross in the same direction on the same
    internal port closes cycles through two switches of a stage.
    """
    if twin is not None and twin.tree != tree:
        raise ValueError(f"twin is built on {twin.tree}, not on {tree}")
    return ChannelDependencyGraph.from_paths(
        path_channels(tree, source, hops, twin)
        for source, _, hops in all_routes(tree, routing, seed))


# --- a fat tree to generate: the topology, its switches' splits and the RTL's sizes ------------

#: How the 2k ports of each twin switch are split between its halves, by name (001 §5).
SPLITS = ("optimal", "paired", "down-alpha")
#: Terminals of a generated fat tree: the 4-ary 4-tree (256 terminals, 128 twin switches of
#: 256 halves) is the largest instance this project builds.
MAX_FAT_TREE_TERMINALS = 256
#: VCs per link of a fat tree (the flit's VC field and the VC buffers grow with it).
MAX_FAT_TREE_VCS = 8


def read_split(label: str, value):
    """The ``split`` parameter: a name of :data:`SPLITS` (or ``plain``), α's ports for every
    stage (``0,1,4,5`` or a list: held as a tuple of ports) or one list per stage
    (``0,1,4,5;0,1,2,3`` or a list of lists: a tuple of port tuples).
    :meth:`FatTreeNetworkConfig.rules` makes either one sorted tuple per stage."""
    if isinstance(value, str) and value.strip() in (*SPLITS, "plain"):
        return value.strip()
    shown = value if isinstance(value, str) else _shown(value)
    try:
        if isinstance(value, str):
            lists = [[int(port) for port in part.split(",")] for part in value.split(";")]
            flat = len(lists) == 1
        else:
            flat = not (isinstance(value, (list, tuple)) and value and all(
                isinstance(item, (list, tuple)) for item in value))
            lists = [value] if flat else value
        lists = [checks.check_int_tuple("α", ports, min_length=0) for ports in lists]
    except (TypeError, ValueError):
        raise ValueError(f"{label} {shown}: must be {', '.join(SPLITS)} or α's ports such as "
                         "0,1,4,5 (one list per stage separated by ';'), or plain") from None
    stages = tuple(checks.check_int_tuple(f"{label} {shown}: α", ports, minimum=0,
                                          min_length=0) for ports in lists)
    return stages[0] if flat else stages


def _write_split(split):
    """A split as a TOML file holds it: the name, or one list of α's ports per stage."""
    return split if isinstance(split, str) or split is None else [list(s) for s in split]


@dataclass(frozen=True)
class FatTreeNetworkConfig(RouterSizes):
    """A k-ary n-tree of twin switches (or of plain 2k-port switches, ``plain``), how each
    twin switch's ports are split (``split``, ``internal_ports``) and the router sizes. Each
    field is a parameter (:mod:`twinnet.model.schema`); :attr:`tree`, :attr:`splits` and
    :attr:`split_name` are derived."""

    family = "fat-tree"

    k: int = parameter(4, Integer(2, MAX_FAT_TREE_TERMINALS),
                       "switch half-radix, the switches having 2k ports (default 4)")
    n: int = parameter(2, Integer(1, MAX_FAT_TREE_TERMINALS.bit_length()),
                       "stages (default 2)")
    plain: bool = parameter(False, schema.Flag(),
                            "monolithic 2k-port switches instead of twin switches (for "
                            "comparison)")
    split: object = parameter(
        lambda values: None if values["plain"] else "optimal",
        Text(read_split, "optimal or 0,1,4,5;0,1,2,3", write=_write_split),
        "how each twin switch's 2k ports are split between its halves α and β: optimal (001's: "
        "pairs {l, l+k} per half below the last stage, all down ports on α at it; the "
        "default), paired, down-alpha, or α's ports: one list for every stage (0,1,4,5) or one "
        "per stage separated by ';' (0,1,4,5;0,1,2,3)")
    internal_ports: int | None = parameter(
        lambda values: None if values["plain"] or values["split"] == "plain" else 1,
        Integer(None, None),  # 1 to k: checked by the rules
        "internal ports r between α and β, 1 to k (default 1)")
    vcs: int = parameter(
        1, Integer(1, MAX_FAT_TREE_VCS),
        f"VCs per link and internal port, 1 to {MAX_FAT_TREE_VCS} (default 1): a packet takes "
        "any free one (DESTRO's up*/down* paths have no cyclic dependencies); more than one "
        "lifts head-of-line blocking, and a pair's packets may then overtake each other")

    @classmethod
    def rules(cls, values: dict, names: dict) -> None:
        k, n = values["k"], values["n"]
        if k ** n > MAX_FAT_TREE_TERMINALS:
            label = " and ".join(names[key] for key in ("k", "n") if names[key] != key)
            raise ValueError(f"{label or 'k, n'}: a {k}-ary {n}-tree has {k ** n:,} terminals; "
                             f"at most {MAX_FAT_TREE_TERMINALS} are allowed (the 4-ary 4-tree: "
                             "generation time and memory grow with the switch count)")
        if values["split"] == "plain":  # the split's name for monolithic switches
            if values["plain"] is False and names["plain"] != "plain":
                raise ValueError(f"{names['split']} plain and {names['plain']} false contradict")
            values["plain"], values["split"], names["plain"] = True, None, names["split"]
        if values["plain"]:
            for key in ("split", "internal_ports"):
                if values[key] is not None:
                    shown = _shown(values[key]) if key == "split" else values[key]
                    raise ValueError(f"{names[key]} {shown} and {names['plain']}: a plain fat "
                                     f"tree has no {key.replace('_', ' ')}; give one of them")
        else:
            checks.check_int(names["internal_ports"], values["internal_ports"], minimum=1,
                             maximum=k)
            split = values["split"]
            if not isinstance(split, str):  # α's ports: one sorted tuple per stage
                if split and not isinstance(split[0], tuple):
                    split = (split,) * n
                elif len(split) != n:
                    raise ValueError(f"{names['split']} {_shown(split)}: give one α port list "
                                     f"per stage ({n}), not {len(split)}")
                values["split"] = tuple(tuple(sorted(ports)) for ports in split)
            try:
                splits(k, n, values["internal_ports"], values["split"])
            except (TypeError, ValueError) as error:
                given = f" with {names['k']} {k}" if isinstance(values["split"], str) else ""
                raise ValueError(f"{names['split']} {_shown(values['split'])}{given}: {error}"
                                 ) from None
        super().rules(values, names)

    @functools.cached_property
    def tree(self) -> FatTreeTopology:
        return FatTreeTopology(self.k, self.n)

    @functools.cached_property
    def splits(self) -> tuple[TwinSwitch, ...] | None:
        """One :class:`TwinSwitch` per stage, or ``None`` for plain switches."""
        return None if self.plain else splits(self.k, self.n, self.internal_ports, self.split)

    @property
    def split_name(self) -> str | None:
        """How the splits were given (a name, or ``None`` for explicit lists)."""
        return self.split if isinstance(self.split, str) else None

    @property
    def is_twin(self) -> bool:
        return self.splits is not None

    @property
    def internal_port_count(self) -> int:
        return self.splits[0].internal_port_count if self.is_twin else 0

    @property
    def header_width(self) -> int:
        """Bits of a head flit's route fields (the destination's digits, the top one wide
        enough to hold k, so that destinations >= k**n are malformed) and source field."""
        k, n = self.tree.k, self.tree.n
        digits = (n - 1) * index_width(k) + k.bit_length()
        return digits + index_width(self.tree.terminal_count)

    @property
    def twin(self) -> TwinFatTree | None:
        return TwinFatTree(self.tree, self.splits) if self.is_twin else None

    @property
    def name(self) -> str:
        """``fattree_k4_n2_optimal_r1``, ``fattree_k4_n2_down_alpha_r2``, ``fattree_k4_n2_plain``,
        ``..._custom_r2`` (explicit splits), plus ``_v<N>`` for N VCs and ``_w``/``_l``/``_d``
        for non-default sizes as for a twin torus."""
        tree = f"fattree_k{self.tree.k}_n{self.tree.n}"
        split = (self.split_name or "custom").replace("-", "_")  # a Verilog identifier
        switches = f"{split}_r{self.internal_port_count}" if self.is_twin else "plain"
        vcs = f"_v{self.vcs}" if self.vcs > 1 else ""
        return f"{tree}_{switches}{vcs}{self.size_suffix}"

def splits(k: int, n: int, r: int, split) -> tuple[TwinSwitch, ...]:
    """The twin switches of each stage for ``split`` (a name, or α's ports per stage) with
    ``r`` internal ports; raises ``ValueError`` for a split that does not apply."""
    if split == "optimal":
        return optimal_splits(k, n, r)
    if split in ("paired", "down-alpha"):
        make = TwinSwitch.paired if split == "paired" else TwinSwitch.down_on_alpha
        return (make(k, r),) * n
    return tuple(TwinSwitch(k, frozenset(alpha), r) for alpha in split)


def _shown(split) -> str:
    """A split as it is written on the command line: ``0,1,4,5`` or ``0,1,4,5;0,1,2,3``."""
    if isinstance(split, (list, tuple)):
        if all(isinstance(item, (list, tuple)) for item in split):
            return ";".join(_shown(item) for item in split)
        return ",".join(map(str, split))
    return repr(split)


def switch_ports(tree: FatTreeTopology, stage: int) -> tuple[int, ...]:
    """The connected ports of a stage-``stage`` switch: all 2k, or the k down ports at the
    last stage (whose up ports lead nowhere)."""
    return tuple(range(tree.k if stage == tree.last_stage else 2 * tree.k))


def router_label(switch: Switch, half: str | None) -> str:
    """The label of a router: ``<1,03>`` for a plain switch, ``<1,03>/alpha`` for a half."""
    return str(switch) if half is None else f"{switch}/{half}"


def port_label(k: int, port: int) -> str:
    """``d2`` for down port 2, ``u1`` for up port k + 1."""
    return f"d{port}" if port < k else f"u{port - k}"


def internal_label(port: int) -> str:
    return f"i{port}"


def router_hops(network: FatTreeNetworkConfig, source: int,
                destination: int) -> list[tuple[str, str, int]]:
    """The links a packet from terminal ``source`` to ``destination`` crosses under DESTRO, as
    ``(router label, output port label, VC)``: every switch-to-switch link and, in a twin
    switch whose input and output ports sit on different halves, the internal link (port
    ``out_port mod r``, the rule of :meth:`TwinSwitch.internal_port`). The last hop, down to
    the destination terminal, is not a link between routers and is left out. VC 0 (with
    several VCs a packet may take any of them: :meth:`FatTreeFamily.path_error`)."""
    tree, hops = network.tree, []
    for hop in route(tree, source, destination):
        out_label = port_label(tree.k, hop.out_port)
        if not network.is_twin:
            hops.append((router_label(hop.switch, None), out_label, 0))
            continue
        split = network.splits[hop.switch.stage]
        arrival, departure = split.half_of(hop.in_port), split.half_of(hop.out_port)
        internal = split.internal_port(hop.in_port, hop.out_port)
        if internal is not None:
            hops.append((router_label(hop.switch, arrival), internal_label(internal), 0))
        hops.append((router_label(hop.switch, departure), out_label, 0))
    return hops[:-1]  # the last hop leaves through the destination terminal's port
