"""The family contract: what a topology family supplies so that every command and bench runs it.

A family is a :class:`Family` registered under the entry-point group ``twinnet.families``
(:mod:`twinnet.families`). Everything else (the network top, the generator, the manifest, the
cocotb bench and scoreboard, the traffic harness and program, the commands) is shared. The
contract has two parts:

**The model part** (pure Python; no Amaranth is imported for it):

- its configuration class (:attr:`Family.configuration`): a :class:`twinnet.model.schema`
  configuration whose fields declare the family's parameters once (flags, TOML keys, presets,
  the manifest's ``parameters`` all come from them); :meth:`Family.network` builds one from
  plain values, :attr:`Family.presets` names the papers' instances;
- its manifest section (:meth:`Family.section`) and sizes (:meth:`Family.terminal_count`,
  :meth:`Family.router_count`, :meth:`Family.header_width`);
- its destination codec: :meth:`Family.destination` gives the head flit's route fields for a
  terminal, :meth:`Family.terminal_digits` the fields that number the terminals (for the
  traffic harness), :meth:`Family.malformed` an example of a header the routers must drop;
- its routes: :meth:`Family.hops`, the (router, output port, VC) of every link a packet
  crosses, from the reference model (deterministic routing: one path per pair), and
  :meth:`Family.path_error`, which holds an observed path to it (adaptive routing allows
  several paths per pair; :meth:`Family.deterministic` says which);
- its deadlock argument (:meth:`Family.deadlock`): the model's channel-dependency check of the
  instance, written into the manifest at generation;
- broadcast, for a family whose routers replicate packets: :meth:`Family.broadcast_route`
  gives a broadcast's route fields and :meth:`Family.broadcast_error` holds its copies (the
  links they crossed and the terminals that received one) to the model.

**The hardware part** (Amaranth): the module named by :attr:`Family.hardware`, imported only
when generating, whose ``netlist(config, *, stall_counters=False)`` returns the
:class:`twinnet.hdl.network.Netlist`: router kinds (each a :class:`twinnet.hdl.router.Router`
with the family's route compute, a :class:`twinnet.hdl.route_compute.RouteCompute`), router
instances with their per-node constants, links and terminals. With ``stall_counters=True``
the routers carry their stall counters (:mod:`twinnet.hdl.router.stalls`).

**What the commands show of it**, each with a default, so that a family from another package
gets every command the in-tree ones get:

- its drawing (``twinnet draw``, load maps): :meth:`Family.layout` places each router's box
  (by default round a circle) and :meth:`Family.line` draws each cable (by default straight,
  legend ``internal`` inside a group of boxes, else ``network``), from :mod:`.drawing`;
- the specification its route computes are proven against (``twinnet prove``):
  :attr:`Family.route_spec` names it (by default none: the routers' own properties are proven,
  their route computes are not);
- its analyses (``twinnet analyze``): :attr:`Family.analyses` names modules whose
  ``register(analyses)`` adds sub-parsers (by default none).

**Its own modules** (:meth:`Family.own_modules`): the class's, the hardware part's, the
specification's and the analyses', and :attr:`Family.modules` (its model, its route
computes). Only these name the family; the shared code (every other module of twinnet) reaches
it through the registry alone, which ``tests/test_shared_code.py`` checks.
"""

import importlib
import math
import random

from twinnet.model import checks
from twinnet.model.sizes import MAX_REASSEMBLY_BEATS, reassembly_beats

from . import drawing


class Family:
    """A topology family; see the module docstring. A subclass sets :attr:`name`,
    :attr:`configuration` and :attr:`hardware` and implements the model part's methods."""

    #: The family's name: the ``FAMILY`` word of the commands and the manifest's ``family``.
    name = ""
    #: The configuration class of its networks (:meth:`network` builds one).
    configuration: type = object
    #: The module of the hardware part, with ``netlist(config, *, stall_counters=False)``.
    hardware = ""
    #: Named instances, preset name → configuration values (keys as in a TOML file).
    presets: dict = {}
    #: Other words for the family on the command line, word → the values the word fixes.
    aliases: dict = {}
    #: The family's size limits, for help texts.
    limits = ""
    #: The specification its route computes are proven against, ``"module:function"``: a
    #: function ``(m, rc, in_port) -> ExpectedRoute`` (:mod:`twinnet.hdl.formal.spec_common`)
    #: written from the routing's definition, not from the route compute; "" for none.
    route_spec = ""
    #: Modules each with ``register(analyses)``, adding ``twinnet analyze`` sub-parsers.
    analyses: tuple[str, ...] = ()
    #: The family's other modules (see :meth:`own_modules`).
    modules: tuple[str, ...] = ()
    #: The family built when neither a FAMILY word, a preset nor a TOML file names one (one
    #: registered family sets it: :func:`twinnet.families.default_family`).
    default = False
    #: The values of a network small enough for a board's self-test to build in minutes (the
    #: default family's is the boards' default network).
    board_network: dict = {}

    def network(self, values: dict, labels: dict | str = "configuration"):
        """A configuration from plain values (``labels`` names each key in messages: a dict
        key → label such as ``--k`` or ``net.toml: k``, or one source name); raises
        ``TypeError``/``ValueError`` naming the label, the value and what is allowed.

        Frames cut into several packets (``ni_frame_packets``) need a family whose routing
        keeps each pair's packets in order, and reassembly memory within
        :data:`twinnet.model.sizes.MAX_REASSEMBLY_BEATS`."""
        config = self.configuration.from_dict(values, labels)
        if config.ni_frame_packets > 1:
            given = (f"{checks.labels_of(values, labels)['ni_frame_packets']} "
                     f"{config.ni_frame_packets}")
            if not self.in_order(config):
                raise ValueError(f"{given}: a frame cut into packets needs each pair's packets "
                                 f"in order, and {config.name}'s routing may reorder them: "
                                 "only 1 (a frame is one packet) is allowed here")
            beats = reassembly_beats(config.max_frame_beats, self.terminal_count(config))
            if beats > MAX_REASSEMBLY_BEATS:
                raise ValueError(f"{given}: every master of {config.name} would hold {beats:,} "
                                 "beats (two longest frames per PE), more than the "
                                 f"{MAX_REASSEMBLY_BEATS:,} allowed: fewer packets per frame "
                                 "or a smaller network")
        return config

    def merge(self, values: dict, labels: dict, source: dict, source_labels: dict) -> None:
        """Apply a later source of values (a TOML file over a preset, flags over both) over
        ``values``, keeping each value's label: by default each key of the later source
        replaces the earlier one. Raises ``ValueError`` naming the labels."""
        for key, value in source.items():
            values[key], labels[key] = value, source_labels[key]

    def keep_preset(self, preset: str, preset_label: str, values: dict, labels: dict) -> None:
        """Refuse merged ``values`` that leave the shape preset ``preset`` names (by default
        any values may change)."""

    def netlist(self, config, *, stall_counters: bool = False):
        """The hardware part's netlist of ``config``."""
        return importlib.import_module(self.hardware).netlist(
            config, stall_counters=stall_counters)

    def own_modules(self) -> tuple[str, ...]:
        """The modules that are the family's own, the only ones that may name it: the class's,
        :attr:`hardware`, :attr:`route_spec`'s, :attr:`analyses` and :attr:`modules`."""
        named = [type(self).__module__, self.hardware, self.route_spec.partition(":")[0],
                 *self.analyses, *self.modules]
        return tuple(dict.fromkeys(module for module in named if module))

    def specification(self, config):
        """The specification of ``config``'s route computes (the function
        :attr:`route_spec` names, imported only now: it is Amaranth), or None when they have
        none."""
        if not self.route_spec:
            return None
        module, _, name = self.route_spec.partition(":")
        return getattr(importlib.import_module(module), name)

    def layout(self, config, netlist) -> dict[str, drawing.Box]:
        """Where ``twinnet draw`` puts each router of ``netlist`` (``config``'s), label →
        :class:`~.drawing.Box`: by default round a circle in the netlist's order, each
        labelled with its label."""
        return drawing.circle([router.label for router in netlist.routers])

    def line(self, config, link, boxes: dict[str, drawing.Box]) -> drawing.Line:
        """How ``twinnet draw`` draws the cable of ``link`` (a
        :class:`twinnet.hdl.network.Link`, one of its two directions) between ``boxes`` (as
        :meth:`layout` placed them): by default straight, ``internal`` between two boxes of
        one group, else ``network``."""
        first, second = boxes[link.source].group, boxes[link.target].group
        same = first is not None and first == second
        return drawing.Line("internal" if same else "network")

    def section(self, config) -> dict:
        """The manifest's family section (see :func:`twinnet.gen.generate.generate`)."""
        raise NotImplementedError

    def describe(self, config, **keys) -> dict:
        """A manifest section: the family's ``name`` and the configuration's ``parameters``,
        then ``keys``."""
        return {"name": self.name, "parameters": config.to_dict(), **keys}

    def terminal_count(self, config) -> int:
        """Terminals of ``config``: by default as many as :meth:`terminal_digits` number."""
        digits = self.terminal_digits(config)
        if digits is None:
            raise NotImplementedError
        return math.prod(radix for _, radix in digits)

    def router_count(self, config) -> int:
        """Routers in the netlist, counted without building them where the family knows how
        (for refusing a network too large before anything is built)."""
        return len(self.netlist(config).routers)

    def header_width(self, config) -> int:
        """Bits of a head flit that are not payload: the route fields and the source (by
        default the configuration's ``header_width``)."""
        return config.header_width

    def terminal_label(self, config, terminal: int) -> str:
        return f"T{terminal}"

    def destination(self, config, terminal: int) -> dict[str, int]:
        """The head flit's route fields toward ``terminal``: by default its digits as
        :meth:`terminal_digits` numbers them."""
        digits = self.terminal_digits(config)
        if digits is None:
            raise NotImplementedError
        fields = {}
        for field, radix in digits:
            terminal, fields[field] = divmod(terminal, radix)
        return fields

    def malformed(self, config, rng: random.Random) -> dict[str, int] | None:
        """Route fields of a header the routers must drop, or None if every header is valid."""
        raise NotImplementedError

    def hops(self, config, source: int, destination: int) -> list[tuple[str, str, int]]:
        raise NotImplementedError

    def deterministic(self, config) -> bool:
        """One path per pair: :meth:`hops` is the path (its links; see :meth:`in_order` for the
        order of a pair's packets)."""
        return True

    def in_order(self, config) -> bool:
        """Each pair's packets arrive in the order they were sent (by default, under
        deterministic routing: one path, one VC per hop)."""
        return self.deterministic(config)

    def path_error(self, config, source: int, destination: int,
                   hops: list[tuple[str, str, int]]) -> str | None:
        """Why the observed ``hops`` are not a path the model allows (None when they are):
        under deterministic routing they must be exactly :meth:`hops`."""
        expected = self.hops(config, source, destination)
        return None if hops == expected else f"model says {expected}"

    def broadcast_route(self, config, pe: int) -> dict[str, int] | None:
        """Route fields of a broadcast whose copies leave at PE ``pe`` of each router, or None
        when ``config``'s routers do not replicate broadcasts."""
        return None

    def broadcast_error(self, config, source: int, pe: int, hops: list[tuple[str, str, int]],
                        receivers: list[int]) -> str | None:
        """Why a broadcast's copies (every link crossing as ``(router, output port, VC)`` and
        the terminal of every copy delivered) are not what the model says, or None."""
        raise NotImplementedError

    def internal_crossings(self, manifest: dict, link_heads: dict) -> list[dict] | None:
        """Packets that crossed each router pair's internal link, from the head flits seen on
        each link (``link_heads``: link index → count), or None for a family without one."""
        return None

    def terminal_digits(self, config) -> list[tuple[str, int]] | None:
        """The head-flit route fields that number the terminals, least significant first, as
        ``(field, radix)``: terminal ``t = d0 + r0 * (d1 + r1 * …)`` and
        :meth:`destination` gives those digits. The traffic harness
        (:mod:`twinnet.hdl.traffic`) draws destinations with them; None: no harness."""
        return None

    def deadlock(self, config) -> dict | None:
        """The manifest's ``deadlock`` verdict (see :func:`verdict`) from the model's
        channel-dependency check of ``config``, or None for a family without a check."""
        return None


def out_of_range(fields: dict[str, tuple[int, int]],
                 rng: random.Random) -> dict[str, int] | None:
    """Route fields with one value out of range, for :meth:`Family.malformed`: ``fields``
    maps each field to its count of valid values and its width; every field takes a valid
    value but one, picked among those whose width can hold more, which takes an invalid one
    (None when no field can)."""
    spare = [name for name, (count, width) in fields.items() if (1 << width) > count]
    if not spare:
        return None
    values = {name: rng.randrange(count) for name, (count, _) in fields.items()}
    name = rng.choice(spare)
    count, width = fields[name]
    values[name] = rng.randrange(count, 1 << width)
    return values


def verdict(cycle, *, rule: str, channels: int, dependencies: int, label=str) -> dict:
    """A deadlock verdict for the manifest: ``deadlock_free`` (the checked graph is acyclic:
    Dally and Seitz's condition), ``rule`` (which graph was checked), the graph's size and
    ``cycle``, one cycle of channels (``label`` names each) or None."""
    return {"deadlock_free": cycle is None, "rule": rule, "channels": channels,
            "dependencies": dependencies,
            "cycle": None if cycle is None else [label(channel) for channel in cycle]}


def escape_verdict(graph, escape: str, rings: str, copies: int = 1) -> dict:
    """The verdict of a ring family's channel-dependency ``graph`` under ``escape``
    (``bubble``: of the ``rings`` entered; ``dateline``: two VCs; ``none``: one VC), over
    ``copies`` copies of the scheme per link."""
    rule = {"bubble": f"the dependencies between the {rings} entered (escape bubble: the "
                      f"bubble guards each of the {rings})",
            "dateline": "the channel-dependency graph, two VCs per link (escape dateline)",
            "none": "the channel-dependency graph, one VC per link"}[escape]
    if copies > 1:
        rule += (f", over {copies} copies of the scheme per link (a packet keeps its copy "
                 "within a dimension and may change it entering a new one)")
    return verdict(graph.find_cycle(), rule=rule, channels=graph.channel_count,
                   dependencies=graph.edge_count, label=str)

