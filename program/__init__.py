"""The traffic program: the traffic harness as a C++ program over separately Verilated
modules, its writer, its reading of the models' Verilog, its builder and its driver.

- :mod:`.tables` writes a network's tables (the only generated part);
- :mod:`.verilog` reads what the program needs in the models' Verilog;
- :mod:`.driver` builds the program with Verilator and drives it;
- the program's code is C++ in this package: :data:`ENGINE_HEADER` and :data:`MAIN_PROGRAM`.

This module holds what they share, and needs no Amaranth.

Verilator evaluates a whole network model at once: built flat, every router instance gets its
own copy of the code; built with routers as hierarchy blocks, each block is re-evaluated
whenever one of its inputs changes, about 8 times a cycle. The traffic program instead
Verilates each *distinct* module once (every router kind, the traffic source, the traffic
sink: the same Verilog the harness instantiates) and makes one model object per instance,
joined the way :class:`twinnet.hdl.network.Network` and
:class:`twinnet.hdl.traffic.TrafficHarness` join them: links by the routers' port
signatures, terminals to sources and sinks, the harness's controls to every source and sink.

Its code is C++ shipped with this package (:data:`ENGINE_HEADER`, :data:`MAIN_PROGRAM`), the
same for every network; :mod:`.tables` writes only the network's tables, as a C++ header:
the model classes, the ports the program reaches (a port table per router kind: where
Verilator keeps each port of a model), one row per wire between routers, per terminal and
per link, and the constants. So a 4,096-router network compiles as fast as
a small one, and the wires copy values between the places the port tables name.

The models are Verilated from the modules' Verilog with every register on both clock edges
(:func:`twinnet.program.verilog.both_edges`, done when the program is built), so that one
evaluation with the clock input flipped is one clock cycle. Every cycle the program first
carries what the last edge changed to the inputs it drives, then settles the combinational
paths between models: it evaluates, without an edge, the models whose changed inputs reach an
output within a cycle (read from the Verilog by
:func:`twinnet.program.verilog.inputs_reaching_outputs`: on twinnet's routers none does but
a link's input with the bypass, which reaches the stall counters' ``waits``, so routers are
evaluated once a cycle otherwise), carries their outputs, and again until nothing
changes. Then the clock edge comes to every awake model. A router whose whole state
(Verilator's root of the model: registers, ports and its scheduler's flags), but for the bytes
that follow the clock, is the same after an edge as after the one before is asleep: with
unchanged inputs it would stay so, so it is left out until an input changes. Sources and sinks
never sleep (their random generators move every cycle). The results are those of evaluating
every model before every edge, cycle for cycle.

The program's first argument is the number of threads (default 1); the results do not depend
on it. Each model belongs to one thread for the whole run (each thread owns a run of
neighbouring routers, sources and sinks), which evaluates it, carries its outputs and counts
the flits moving into it, so that a model's state stays in one core's caches; the threads
meet between the phases of a cycle (carrying, evaluating between edges, counting, the edge).
A second argument ``plain`` keeps every model awake and evaluates each before every edge, as if
every input reached an output (the reference the shortcuts are tested against). The harness's
cycle count ``now`` is kept here, as the harness's register is. Counters are summed here when
read.

The program reads commands on stdin, one per line, and answers on stdout:

- ``set NAME VALUE``: a control (``enable``, ``measure``, ``rate``, ``pattern``,
  ``hotspot_rate``, ``seed``, ``onoff``, ``turn_on``, ``turn_off``, ``length_lo_<k>``,
  ``length_hi_<k>``, ``length_cut_<k>``, ``refuse_rate``, ``stall_start``, ``stall_max``,
  ``fault``, ``rst``);
- ``run N``: N clock cycles; answers ``ok``;
- ``read``: answers one line of ``name=value`` pairs, the harness's outputs (and
  ``latency_max`` and ``hist<i>``, the largest network latency of a measured unicast packet
  and those latencies by significant bits, measured here from the terminals' wires,
  ``len<k>``, the packets of k flits injected since reset (those of more than 64 on
  ``len0``), ``stall_<reason>``, the routers' stall counters summed, when they
  have them, ``idle``, the cycles since a flit last moved on any link or terminal port,
  ``hops``, the head flits of unicast packets that crossed a link between routers since
  reset, ``max_hops``, the most links a unicast packet delivered since reset crossed, and
  ``asleep``, the routers asleep now);
- ``held``: answers one line with, per router in the netlist's order, the flits it holds
  (flits in minus flits out since reset, counted on its links and terminal ports), for the
  watchdog's report;
- ``links``: answers one line with the flits and the head flits (packets) that crossed each
  link since reset, in the netlist's link order, then each terminal's injected and
  ejected flits and packets (``flits packets`` pairs: links, then per terminal injection
  and ejection), counted where the program copies them: the check of the link counters;
- ``trace PATH``: loads a trace to inject (lines ``terminal cycle route length-1``, in order
  of cycle, the route as the head's route field holds it): with ``from_trace`` set, each
  source takes its packets from it once created, one per cycle when its queue has room;
  answers ``ok``;
- ``record PATH``: from now on, writes a line to PATH per unicast packet delivered, as its
  tail leaves the network: its terminal, head word, the cycles its head was accepted, its
  head ejected and its tail ejected, and its hops; answers ``ok`` (``record -`` closes the
  file, as ``quit`` does);
- ``counts``: answers one line with the 32-bit words of the link counters' ``counts_<k>``
  ports, lowest first, one port after the other (:mod:`twinnet.hdl.link_counter`; an empty
  line without them);
- ``quit``.

With link counters (:func:`twinnet.program.tables.write_tables`'s ``link_counters``) their
module is one more model, never asleep: after the paths settle each cycle, the wires of every
link and terminal are copied to its inputs (the ``TAPS`` table) before the clock rises, as the
network top feeds them.

A packet's hops are counted on its head: each head flit of a unicast packet crossing a link
adds one to the count kept for its head word (route, source, sequence number: unique among
the packets in flight unless a pair has 2**seq_bits of them, or a packet is duplicated), and
the sink that receives the head takes the count out. Broadcast copies (the head's
``route.broadcast`` bit) are not counted.

Of the harness's faults it has ``duplicate`` (a source's own); ``misroute`` and ``corrupt``,
which the harness applies on a link, are not modelled (:data:`FAULTS`).
"""

from pathlib import Path

#: The faults the program injects (its ``fault`` control takes their index in
#: :data:`twinnet.hdl.traffic.FAULTS`, as the Verilog harness does).
FAULTS = ("none", "duplicate")
#: Most threads the program evaluates its models on (each waits for the others spinning: more
#: threads than free cores only slow it down).
MAX_THREADS = 16
#: Most MPI ranks: each is a process, with its share of the routers.
MAX_RANKS = 64
#: The program's code, C++ shipped with this package (:func:`sources`): the generic engine
#: (models, their activity, the settling of the paths between them, the clock, the counters)
#: and the main (the ``Harness`` over the network's model classes, the commands), which
#: includes the network's generated tables (:func:`twinnet.program.tables.write_tables`) that
#: ``TWINNET_NETWORK`` names (:func:`network_define`).
ENGINE_HEADER = "twinnet_traffic_engine.hpp"
MAIN_PROGRAM = "twinnet_traffic_main.cpp"
#: The program's processes (one, or MPI ranks), which the engine includes.
RANKS_HEADER = "twinnet_traffic_ranks.hpp"
#: The built program's file name, in its build folder.
EXECUTABLE = "traffic_program"


def sources() -> list[Path]:
    """The paths of :data:`ENGINE_HEADER`, :data:`MAIN_PROGRAM` and :data:`RANKS_HEADER`
    (copied beside the generated tables)."""
    return [Path(__file__).with_name(name)
            for name in (ENGINE_HEADER, MAIN_PROGRAM, RANKS_HEADER)]


def network_define(tables: str) -> str:
    """The compiler option that makes :data:`MAIN_PROGRAM` include ``tables`` (a file name),
    as one argument."""
    return f'-DTWINNET_NETWORK="{tables}"'
