"""The settings of a simulation run, declared once: ``twinnet sim``, ``sweep``, ``demo`` and
``trace`` take their flags from here, a sweep point's keys and defaults are these, and each
value is checked by its declaration's domain (:mod:`twinnet.model.schema`), one line naming
the flag or key, the value and what is allowed.

A setting's name is its JSON field (a point's key, a report's), its TOML key and its flag's
argparse destination; its flag is ``--`` and the name with dashes unless declared. Settings
whose flag is None are a point's alone (the engine's limits). What a setting means with the
others (``--rate`` against the mean packet length, ``--threads`` only on Verilator) is each
command's rule, not the declaration's.

:class:`Point` is one simulation point, the unit that
:func:`twinnet.sim_tb.traffic_phases.run_point` runs and a sweep schedules: its fields are the
point settings below.
"""

import dataclasses
import os

from twinnet.model.schema import (
    Choice,
    Flag,
    Integer,
    Integers,
    Number,
    Numbers,
    Parameter,
    Path,
    Text,
)
from twinnet.model.trace import MAX_TRACE_PACKETS
from twinnet.model.traffic import PATTERNS, LengthMix
from twinnet.program import MAX_RANKS, MAX_THREADS

from .runner import SIMULATORS

#: How a run is checked: in hardware, end to end (the traffic harness: every packet once,
#: intact, at the right terminal, in order per pair where the routing keeps it), or per hop
#: by the Python scoreboard.
CHECKS = ("end-to-end", "hops")
#: How sources create packets (end to end): a Bernoulli trial every cycle, or bursts.
INJECTIONS = ("bernoulli", "onoff")
#: Cycles a warm-up (and a sweep point's measurement) may last.
MAX_WARMUP = 1_000_000
#: Packets one ``twinnet sim`` run may send, or a trace hold: Verilator simulates about 500
#: cycles/s of 3DT 4x4x4 with every hop checked, so a million cycles is about half an hour,
#: the longest run that makes sense from the command line (sweeps belong to bench/).
MAX_PACKETS = MAX_TRACE_PACKETS
MAX_SEED = 2**32 - 1
#: Mean packets per burst of on/off injection.
MAX_BURST = 10_000
#: Lowest probability that a PE takes an ejected flit in a cycle: a lower one stretches a run
#: by its inverse.
MIN_EJECT_READY = 0.01
#: Longest stall burst of a hardware sink, in cycles.
MAX_STALL_BURST = 10_000
#: Points (loads times seeds) one sweep may run.
MAX_POINTS = 1000
#: ``--knee``'s tolerance, in flits per PE per cycle.
MIN_KNEE, MAX_KNEE = 0.001, 0.5
#: Points a sweep may simulate at once on one machine.
MAX_JOBS = 256


def _text(label: str, value):
    """A setting read as it is written (checked where it is used, e.g. a length mix against
    the network's longest packet)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{label} must be a non-empty text, not {value!r}")
    return value.strip()


def _cores(values: dict) -> int:
    return min(os.cpu_count() or 1, MAX_JOBS)


def _declare(*settings: Parameter) -> dict[str, Parameter]:
    return {each.name: each for each in settings}


def setting(name: str, domain, default, help: str, *, flag: str | None = "") -> Parameter:
    """A setting (see the module docstring); ``flag`` None: no flag."""
    return Parameter(name, domain, default, help,
                     "--" + name.replace("_", "-") if flag == "" else flag)


def _length_mix(label: str, value):
    """A point's ``lengths`` as :class:`~twinnet.model.traffic.LengthMix` takes them:
    ``[[lo, hi, weight], …]``, or None (every packet the longest)."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(
            isinstance(row, (list, tuple)) and len(row) == 3 for row in value):
        raise ValueError(f"{label} {value!r}: must be a list of [lo, hi, weight]")
    try:
        LengthMix([row[:2] for row in value], [row[2] for row in value])
    except ValueError as error:
        raise ValueError(f"{label} {value!r}: {error}") from None
    return value


#: Every setting, by name.
SETTINGS = _declare(
    setting("simulator", Choice(SIMULATORS), "verilator", "simulator"),
    setting("check", Choice(CHECKS), "end-to-end",
            "end-to-end: traffic generated and checked in hardware, a source and a sink per "
            "PE (every packet once, intact, at the right PE, in order per pair where the "
            "routing keeps it; fast); hops: the Python scoreboard also checks every hop "
            "against the model (uniform and all-pairs)"),
    setting("pattern", Choice(PATTERNS), "uniform",
            "pattern: uniform sends --packets between random pairs at --rate; the "
            "permutations and hotspot likewise; all-pairs sends one packet from every PE to "
            "every other PE, paced so that the network never saturates (--packets and --rate "
            "do not apply). How each maps on sizes that are not powers of two: "
            "docs/traffic.md", flag="--traffic"),
    setting("packets", Integer(1, MAX_PACKETS), 2000, "packets to send"),
    setting("rate", Number(0, 1, above=True), 0.02,
            "packets offered per PE per cycle, at most 1 / the mean packet length (a PE port "
            "takes one flit per cycle)"),
    setting("loads", Numbers(Number(0, 1, above=True,
                                    note=" flit per PE per cycle (a PE port takes one flit "
                                         "per cycle)"), MAX_POINTS, "loads"),
            tuple(round(0.05 * step, 2) for step in range(1, 11)),
            "offered loads in flits per PE per cycle"),
    setting("seed", Integer(0, MAX_SEED), 1,
            "seed of the traffic (destinations, injection times and back-pressure)"),
    setting("seeds", Integers(0, MAX_SEED, (1, MAX_POINTS), "seeds"), (1,),
            "seeds; every load runs once per seed"),
    setting("warmup", Integer(0, MAX_WARMUP), 1000,
            "end-to-end: cycles of traffic before the measured packets"),
    setting("measure", Integer(1, MAX_WARMUP), 3000,
            "measured cycles per point: the packets created in them are the measured ones"),
    setting("hotspot_fraction", Number(0, 1), 0.1, "--traffic hotspot: share of packets sent "
            "to PE 0"),
    setting("injection", Choice(INJECTIONS), "bernoulli",
            "end-to-end: how each PE creates packets: bernoulli (a packet with the offered "
            "probability every cycle) or onoff (bursts of back-to-back packets at the port's "
            "full rate, with the same average load)"),
    setting("burst", Integer(1, MAX_BURST), 8, "--injection onoff: mean packets per burst"),
    setting("packet_lengths", Text(_text, "1,5"), None,
            "the packets' lengths in flits, drawn per packet (BookSim's packet_size): up to 4 "
            "lengths or ranges lo-hi (uniform within), comma-separated, e.g. 4, 1,5 or 1-8, "
            "each from 1 to the network's --max-packet-length (which, when no flag, file or "
            "preset sets it, becomes the longest of these if that is above its default; "
            "default: every packet that long)"),
    setting("packet_length_weights", Text(_text, "1,3"), None,
            "--packet-lengths: one weight per length or range, comma-separated numbers of at "
            "least 0 (BookSim's packet_size_rate; default 1 each)"),
    setting("eject_ready", Number(MIN_EJECT_READY, 1, noun="a probability",
                                  note=" (below that a run would take too long)"), 1.0,
            "probability a PE accepts an ejected flit in a cycle: back-pressure from the PEs"),
    setting("stall_bursts", Integer(0, MAX_STALL_BURST), 0,
            "end-to-end: PEs also stop taking flits for bursts of 1 to N cycles (a PE not "
            "stopped starts a burst with probability 1/(2N) per cycle); 0: none"),
    setting("broadcast_fraction", Number(0, 1), 0.0,
            "uniform traffic on a network built with --broadcast, either --check: share of the "
            "offered packets that are broadcasts (every copy is checked: once, intact, at "
            "every other router)"),
    setting("threads", Integer(1, MAX_THREADS), 1,
            "--check end-to-end on Verilator: evaluate the C++ program's models on N threads "
            "(the results do not depend on N; more threads than idle cores slow it down)"),
    setting("ranks", Integer(1, MAX_RANKS), 1,
            "run the C++ traffic program (Verilator, without --waves) as N MPI processes, each "
            "with its region of the routers (the results do not depend on N; needs MPI: "
            "apt-get install libopenmpi-dev openmpi-bin)"),
    setting("waves", Flag(), False, "dump waveforms (FST on Icarus, VCD on Verilator)"),
    setting("no_trace", Flag(), False,
            "leave out the link trace (faster; hops are then not checked)"),
    setting("stalls", Flag(), False,
            "build the routers with stall counters and report, per point, why waiting packets "
            "were not allocated (arbitration, output held, credits, bubble; needs --simulator "
            "verilator)"),
    setting("knee", Number(MIN_KNEE, MAX_KNEE, note=" flits per PE per cycle"), None,
            "refine the loads around saturation by bisection until the knee is bracketed "
            "within KNEE flits/PE/cycle (e.g. 0.01); every seed runs at each new load"),
    setting("jobs", Integer(1, MAX_JOBS), _cores,
            "points simulated at once on this machine (default: the number of cores)"),
    setting("scheduler", Text(_text, "tcp://10.0.0.5:8786"), None,
            "run the points on the Dask distributed cluster whose scheduler is at ADDRESS "
            "instead of locally"),
    setting("out", Path(), "build", "parent folder of the build"),
    # A point's own settings: the engine's limits, the fault a test injects, what it counts.
    setting("fault", Text(_text, "none"), "none",
            "a fault the traffic harness injects (tests)", flag=None),
    setting("drain_limit", Integer(0, None), 200_000,
            "cycles to deliver the measured packets while traffic goes on (past them, the "
            "point is unstable; 0: stop creating at once)", flag=None),
    setting("watchdog", Integer(1, None), 3000,
            "cycles without a flit moving before a deadlock is reported", flag=None),
    setting("chunk", Integer(1, None), 200, "cycles simulated between checks", flag=None),
    setting("count_links", Flag(), False, "count every link's load (the result's link_loads)",
            flag=None),
    setting("lengths", Text(_length_mix, "[[1, 4, 1]]"), None,
            "the length mix as [[lo, hi, weight], …] (None: every packet the longest)",
            flag=None),
)


def default(name: str):
    """Setting ``name``'s default."""
    return SETTINGS[name].default_for({})


def check(name: str, value, label: str | None = None):
    """``value`` of setting ``name`` checked by its domain (``label`` names it in a message:
    its flag by default)."""
    each = SETTINGS[name]
    return each.domain.check(label or each.flag or name, value)


@dataclasses.dataclass(frozen=True)
class Point:
    """One point of traffic (see the module docstring): each field a setting, its default
    the setting's (:data:`POINT_SETTINGS` names them)."""

    pattern: str = default("pattern")
    rate: float = default("rate")
    seed: int = default("seed")
    hotspot_fraction: float = default("hotspot_fraction")
    injection: str = default("injection")
    burst: int = default("burst")
    fault: str = default("fault")
    eject_ready: float = default("eject_ready")
    stall_bursts: int = default("stall_bursts")
    warmup: int = default("warmup")
    measure: int = default("measure")
    drain_limit: int = default("drain_limit")
    watchdog: int = default("watchdog")
    chunk: int = default("chunk")
    count_links: bool = default("count_links")
    broadcast_fraction: float = default("broadcast_fraction")
    lengths: list | None = default("lengths")

    @classmethod
    def from_dict(cls, values: dict) -> "Point":
        """A point from its JSON form (keys of :data:`POINT_SETTINGS`, the others'
        defaults), each value checked; raises naming the key."""
        unknown = sorted(set(values) - set(POINT_SETTINGS))
        if unknown:
            raise ValueError(f"point key {unknown[0]!r}: unknown; allowed keys: "
                             f"{', '.join(POINT_SETTINGS)}")
        return cls(**{key: check(key, value, f"point {key}") for key, value in values.items()})

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)



#: The settings one point of traffic runs with: :class:`Point`'s fields.
POINT_SETTINGS = tuple(field.name for field in dataclasses.fields(Point))
