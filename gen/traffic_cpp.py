"""The traffic harness as a C++ program over separately Verilated modules.

Verilator evaluates a whole network model at once: built flat, every router instance gets its
own copy of the code; built with routers as hierarchy blocks, each block is re-evaluated
whenever one of its inputs changes, about 8 times a cycle. This writes a C++ main that
instead Verilates each *distinct* module once (every router kind, the traffic source, the
traffic sink: the same Verilog the harness instantiates) and makes one model object per
instance, joined the way :class:`twinnet.hdl.network.Network` and
:class:`twinnet.hdl.traffic.TrafficHarness` join them: links by the routers' port
signatures, terminals to sources and sinks, the harness's controls to every source and sink.

Its code is the same for every network of the same router kinds; the network is in its
tables (one row per wire between routers, per terminal and per link), so a 4,096-router
network compiles as fast as a small one. Each router kind has a port table (where Verilator
keeps each port of a model), and the wires copy values between those places.

The models are Verilated from the modules' Verilog with every register on both clock edges
(:func:`twinnet.gen.program_verilog.both_edges`, done when the program is built), so that one
evaluation with the clock input flipped is one clock cycle. Every cycle the program first
carries what the last edge changed to the inputs it drives, then settles the combinational
paths between models: it evaluates, without an edge, the models whose changed inputs reach an
output within a cycle (read from the Verilog by
:func:`twinnet.gen.program_verilog.inputs_reaching_outputs`: on twinnet's routers none does,
so routers are evaluated once a cycle), carries their outputs, and again until nothing
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

With link counters (``write_cpp(..., link_counters=...)``) their module is one more model,
never asleep: after the paths settle each cycle, the wires of every link and terminal are
copied to its inputs (the ``TAPS`` table) before the clock rises, as the network top feeds them.

A packet's hops are counted on its head: each head flit of a unicast packet crossing a link
adds one to the count kept for its head word (route, source, sequence number: unique among
the packets in flight unless a pair has 2**seq_bits of them, or a packet is duplicated), and
the sink that receives the head takes the count out. Broadcast copies (the head's
``route.broadcast`` bit) are not counted.

Of the harness's faults it has ``duplicate`` (a source's own); ``misroute`` and ``corrupt``,
which the harness applies on a link, are not modelled here (:data:`FAULTS`).
"""

from pathlib import Path

from amaranth.hdl import Const, Shape
from amaranth.lib.wiring import Out

from twinnet.hdl.config import DROP_COUNT_WIDTH
from twinnet.hdl.router.stalls import STALL_REASONS
from twinnet.hdl.traffic import FAULTS as HARNESS_FAULTS
from twinnet.hdl.traffic import TrafficHarness

from . import program_verilog

#: The faults the C++ harness injects (its ``fault`` control takes their index in
#: :data:`twinnet.hdl.traffic.FAULTS`, as the Verilog harness does).
FAULTS = ("none", "duplicate")
#: Controls of the harness that every source takes, and that every sink takes.
SOURCE_CONTROLS = ("enable", "measure", "rate", "pattern", "hotspot_rate", "seed", "onoff",
                   "turn_on", "turn_off", "broadcast_rate", "from_trace",
                   *TrafficHarness.LENGTH_CONTROLS)
SINK_CONTROLS = ("measure", "seed", "refuse_rate", "stall_start", "stall_max")


def cpp_name(port: str) -> str:
    """The C++ member of a Verilog port: Verilator escapes ``__`` as ``___05F``."""
    return port.replace("__", "___05F")


def _port(prefix: str, path) -> str:
    """The Verilog name of a port of a router's ``prefix`` member at ``path``."""
    return "__".join([prefix, *map(str, path)])


def _constant(shape, value) -> int:
    return Const.cast(shape.const(value)).value


class Program:
    """Lines of C++, indented."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, *lines: str, indent: int = 0) -> None:
        self.lines += ["    " * indent + line for line in lines]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


#: The generic part of the program: models, their activity, the settling of the paths between
#: them, the clock, the counters. What depends on the network follows it (tables and the
#: ``Harness``, which knows the types of its models).
ENGINE = r"""
double sc_time_stamp() { return 0; }

// A port of a model: where Verilator keeps its value and in how many bytes (a value of up to
// 8 bits in a uint8_t, 16 in a uint16_t, 32 in a uint32_t, 64 in a uint64_t, wider ones in
// 32-bit words), and whether it is an input that reaches an output within a cycle (after it
// changes, the model is evaluated before the clock edge).
struct Port {
    void* at;
    int bytes;
    bool settles = false;
};

static inline uint64_t get(const Port& port) {
    switch (port.bytes) {
    case 1: return *(const uint8_t*)port.at;
    case 2: return *(const uint16_t*)port.at;
    case 4: return *(const uint32_t*)port.at;
    default: return *(const uint64_t*)port.at;
    }
}

static inline bool put(const Port& port, uint64_t value) {
    if (get(port) == value) return false;
    switch (port.bytes) {
    case 1: *(uint8_t*)port.at = (uint8_t)value; break;
    case 2: *(uint16_t*)port.at = (uint16_t)value; break;
    case 4: *(uint32_t*)port.at = (uint32_t)value; break;
    default: *(uint64_t*)port.at = value; break;
    }
    return true;
}

template <class T> static inline bool copy_as(void* to, const void* from) {
    const T value = *(const T*)from;
    if (*(T*)to == value) return false;
    *(T*)to = value;
    return true;
}

// A wire between routers: an output, the input it drives (of the same width), the model of
// that input and whether that input reaches an output within a cycle.
struct Wire {
    const void* from;
    void* to;
    int bytes, target;
    bool settles;

    // Carries the value; whether the input changed.
    bool carry() const {
        switch (bytes) {
        case 1: return copy_as<uint8_t>(to, from);
        case 2: return copy_as<uint16_t>(to, from);
        case 4: return copy_as<uint32_t>(to, from);
        case 8: return copy_as<uint64_t>(to, from);
        default:
            if (!std::memcmp(to, from, bytes)) return false;
            std::memcpy(to, from, bytes);
            return true;
        }
    }
};

static inline uint64_t bit(const Port& port, int offset) {
    if (port.bytes <= 8) return (get(port) >> offset) & 1;
    return (((const uint32_t*)port.at)[offset / 32] >> (offset % 32)) & 1;
}

template <class T> static void assign(T& target, const uint32_t* words) {
    target = (T)((uint64_t)words[0] | ((uint64_t)words[1] << 32));
}
template <std::size_t N> static void assign(VlWide<N>& target, const uint32_t* words) {
    for (std::size_t i = 0; i < N; i++) target[i] = words[i];
}

// What a model's outputs drive: a wire between routers, or one side of a terminal.
enum Drive : uint8_t { WIRE, SOURCE_TO_ROUTER, ROUTER_TO_SOURCE, ROUTER_TO_SINK,
                       SINK_TO_ROUTER };
struct Link {
    Drive what;
    int index;
};

// One Verilated instance and its activity. Its registers take both clock edges (the program's
// models are Verilated so), so one eval with the clock input flipped is one clock cycle. A
// model that may sleep is left out of the clock once its whole state (Verilator's root:
// registers, inputs, outputs, its scheduler's flags), but for the bytes that follow the clock
// (``ticking``), is the same after an edge as after the one before: with the same inputs it
// would stay so. An input that changes wakes it. Only a router that holds no flit is compared
// (one that does is seldom at rest, and the copy costs memory traffic on large networks).
struct Model {
    std::vector<Port> ports;  // in the order of its kind's port table
    std::vector<Link> drives;
    std::vector<unsigned char> saved;  // its state after the last edge, when ``fresh``
    const std::vector<int>* ticking = nullptr;  // offsets in its state
    bool sleeps = false, empty = false, fresh = false;
    // Whether it takes the next edge, and whether it is listed to be evaluated before it (set
    // by whichever thread changed one of its inputs).
    std::atomic<bool> awake{true}, queued{false};
    uint8_t* clk = nullptr;  // its clock and reset inputs, where Verilator keeps them
    uint8_t* rst = nullptr;
    virtual ~Model() {}
    virtual void eval() = 0;
    virtual const void* state() = 0;
    void reset(uint8_t value) { *rst = value; }

    // A clock edge; whether the model stays awake.
    bool edge() {
        *clk ^= 1;
        eval();
        if (!sleeps) return true;
        if (!empty) return fresh = false, true;
        const unsigned char* now = (const unsigned char*)state();
        for (int at : *ticking) saved[at] = now[at];
        if (fresh && !std::memcmp(now, saved.data(), saved.size())) {
            awake.store(false, std::memory_order_relaxed);
            return false;
        }
        std::memcpy(saved.data(), now, saved.size());
        fresh = true;
        return true;
    }
};

// The bytes of a model's state that follow the clock: the clock input and Verilator's copy of
// it, found on a model held in reset, whose state after each edge differs from the one before
// only there. None (the model never sleeps) unless exactly two bytes, the clock's among them,
// change so, each holding the clock's value, over several edges.
template <class V> static std::vector<int> clock_bytes() {
    VerilatedContext context;
    V v{&context};
    const unsigned char* root = (const unsigned char*)v.rootp;
    const std::size_t size = sizeof *v.rootp;
    const int clock = (int)((const unsigned char*)&v.clk - root);
    v.rst = 1;
    v.eval();
    std::vector<unsigned char> before(root, root + size);
    std::vector<int> found;
    for (int edge = 0; edge < 8; edge++) {
        v.clk ^= 1;
        v.eval();
        std::vector<int> changed;
        for (std::size_t i = 0; i < size; i++)
            if (root[i] != before[i]) changed.push_back((int)i);
        before.assign(root, root + size);
        bool follows = changed.size() == 2 && (changed[0] == clock || changed[1] == clock);
        for (int at : changed) follows &= root[at] == v.clk;
        if (edge < 2) continue;  // (the reset reaches every register)
        if (!follows || (edge > 2 && changed != found)) return {};
        found = changed;
    }
    return found;
}

template <class V> struct Of : Model {
    V* v;
    Of(VerilatedContext* context, bool may_sleep) : v(new V{context}) {
        if (may_sleep) {
            static const std::vector<int> clocked = clock_bytes<V>();
            sleeps = !clocked.empty();
            ticking = &clocked;
        }
        saved.assign(sizeof(*v->rootp), 0);
        clk = &v->clk;
        rst = &v->rst;
    }
    ~Of() { delete v; }
    void eval() override { v->eval(); }
    const void* state() override { return v->rootp; }
};

// A link between routers: the models at its ends, in the netlist's link order.
struct Crossing {
    int source, target;  // router numbers
    Port valid, payload;  // of the flit at the target's input
    int first;  // the head bit in the payload
    int data_at;  // where the flit's data sits in the payload
};

// A source's or a sink's ports.
struct Side {
    Port valid, data, first, last, ready;
};

// Which of a source's or a sink's inputs reach an output within a cycle (see ``Port``).
struct Settles {
    bool valid, data, first, last, ready, now, cut_short;
};

template <class Part> static Side side(Part* part, const Settles& settles) {
    return {{&part->valid, (int)sizeof part->valid, settles.valid},
            {&part->data, (int)sizeof part->data, settles.data},
            {&part->first, (int)sizeof part->first, settles.first},
            {&part->last, (int)sizeof part->last, settles.last},
            {&part->ready, (int)sizeof part->ready, settles.ready}};
}

// A terminal: its source and sink (and the sink's abort mark input), its router's ports and the
// fields of their payloads.
struct Terminal {
    Side source, sink;
    Port sink_abort;
    int router;
    Port in_valid, in_payload, in_ready, out_valid, out_payload, out_ready;
    int data_at, first_at, last_at, out_data_at, out_first_at, out_last_at, out_abort_at;
    uint64_t out_data_mask;
};

// Threads: the calling thread (rank 0) and ``threads - 1`` workers, each of which waits for
// the next job spinning, then yielding. ``run`` gives every thread the same job (a function of
// its rank) and returns once all have done it.
struct Crew {
    int threads = 1;
    std::vector<std::thread> workers;
    std::atomic<uint64_t> epoch{0};
    std::atomic<int> finished{0};
    bool stopping = false;
    std::function<void(int)> job;

    static void wait() {
        static thread_local int spins = 0;
        if (++spins % 4096 == 0) std::this_thread::yield();
    }

    void start(int count) {
        threads = count;
        for (int rank = 1; rank < threads; rank++) workers.emplace_back([this, rank] {
            uint64_t seen = 0;
            for (;;) {
                uint64_t now;
                while ((now = epoch.load(std::memory_order_acquire)) == seen) wait();
                seen = now;
                if (stopping) return;
                job(rank);
                finished.fetch_add(1, std::memory_order_acq_rel);
            }
        });
    }

    void run(std::function<void(int)> what) {
        job = std::move(what);
        if (threads == 1) return job(0);
        finished.store(0, std::memory_order_relaxed);
        epoch.fetch_add(1, std::memory_order_acq_rel);
        job(0);
        while (finished.load(std::memory_order_acquire) != threads - 1) wait();
    }

    ~Crew() {
        stopping = true;
        epoch.fetch_add(1, std::memory_order_acq_rel);
        for (auto& worker : workers) worker.join();
    }
};

// What one thread evaluates and drives. Each model has one owner for the whole run: the models
// of each kind (routers, sources, sinks) are cut into one run of neighbours per thread, so each
// thread gets its share of every kind, evaluates its models' edges and carries their outputs,
// and a model's state stays in the caches of one core. A thread lists the models whose inputs
// it changed (whatever their owner) in its own queue; the models of every queue are then
// evaluated by their owners. Each input has one driver, and the phases (carrying, evaluating
// between edges, the edge) are apart, so the results do not depend on the number of threads.
// The moves of flits are counted alike: each thread counts the links into its routers and its
// terminals, into counters of its own; the hops, which follow packets across threads, are
// counted afterwards by the calling thread from the head flits each thread saw. (Lanes sit on
// cache lines of their own.)
struct alignas(64) Lane {
    std::vector<int> own;  // its models, in order
    std::vector<int> queue, round;  // marked to be evaluated before the edge; the last round
    std::vector<int> edged;  // its models whose last edge may have changed an output
    std::vector<int> crossings;  // the links into its routers, which it counts
    std::vector<int> terminals;  // those whose source and sink it owns
    std::vector<int64_t> held;  // per router, the flits it counted in less those counted out
    // This cycle's unicast heads injected, crossing a link, delivered, and the tails
    // delivered (the head word of their packet, and their terminal).
    std::vector<uint64_t> injections, heads, arrivals;
    std::vector<std::pair<uint64_t, int>> tails;
    // Packets injected since reset by length (index: flits; a longer one counts at 0), and
    // per terminal of ``terminals`` the flits of the packet being injected.
    std::vector<uint64_t> lengths;
    std::vector<uint32_t> sending;
    std::vector<uint64_t> receiving;  // per terminal, the head word of the packet arriving
    bool moved = false;  // this cycle
};

template <class Source, class Sink> struct Engine {
    VerilatedContext context;
    Crew crew;
    std::vector<Model*> models;  // routers, then sources, then sinks
    std::vector<Source*> src;
    std::vector<Sink*> snk;
    int routers = 0, pes = 0;
    std::vector<Wire> wires, taps;  // taps: into the link counters
    std::vector<Terminal> terminals;
    std::vector<Crossing> crossings;
    std::vector<Lane> lanes;  // one per thread
    std::vector<int> owner;  // per model, its thread
    Settles source_settles{}, sink_settles{};  // (set before ``join``)
    bool plain = false;  // every model awake and evaluated before every edge
    std::vector<uint64_t> link_flits, link_packets, pe_flits, pe_packets;
    uint64_t now = 0, last_move = 0, hops = 0, max_hops = 0;
    int rst = 0, fault = 0;
    // The unicast packets in flight, by head word (data bits, ``data_mask``): the cycle
    // their head was accepted and the links it crossed since. The head's broadcast bit (or
    // -1) and measured bit.
    struct Flight {
        uint64_t injected = 0, head_out = 0;
        uint32_t hops = 0;
    };
    std::unordered_map<uint64_t, Flight> flying;
    uint64_t data_mask = ~0ULL;
    int broadcast_bit = -1, measured_bit = 0;
    // The network latency (head accepted -> head ejected) of each measured unicast packet
    // delivered since reset: the largest, and a histogram by significant bits (bin i: i bits;
    // the last bin takes every longer one).
    static const int BINS = 16, LENGTHS = 65;
    // Where each delivered unicast packet is written (``record`` command), or null: its
    // terminal, head word, the cycles its head was accepted, its head and its tail ejected,
    // and its hops.
    std::FILE* record = nullptr;
    // A trace's packets to inject, per terminal in order (``trace`` command): the cycle each
    // was created, its destination's route fields and its length less one.
    struct Traced {
        uint64_t birth, route;
        uint32_t length;
    };
    std::vector<std::deque<Traced>> traced;
    uint64_t latency_max = 0, histogram[BINS] = {0};

    bool unicast(uint64_t head) const {
        return broadcast_bit < 0 || !((head >> broadcast_bit) & 1);
    }

    // After the routers are made: the sources and sinks, the links of the tables, the threads.
    void join(int threads, const int32_t (*wire_table)[4], int wire_count,
              const int32_t (*terms)[15], const int32_t (*links)[6], int link_count,
              int terminal_count, Model* counters, const int32_t (*tap_table)[3],
              int tap_count) {
        routers = (int)models.size();
        pes = terminal_count;
        for (int t = 0; t < pes; t++) {
            auto* source = new Of<Source>(&context, false);
            src.push_back(source->v);
            models.push_back(source);
        }
        for (int t = 0; t < pes; t++) {
            auto* sink = new Of<Sink>(&context, false);
            snk.push_back(sink->v);
            models.push_back(sink);
        }
        for (int t = 0; t < pes; t++) {  // (for the taps: valid, data, first, last, ready)
            Side s = side(src[t], source_settles), k = side(snk[t], sink_settles);
            models[routers + t]->ports = {s.valid, s.data, s.first, s.last, s.ready};
            models[routers + pes + t]->ports = {k.valid, k.data, k.first, k.last, k.ready};
        }
        if (counters) {
            int at = (int)models.size();
            models.push_back(counters);
            for (int i = 0; i < tap_count; i++) {
                const int32_t* row = tap_table[i];
                const Port& from = models[row[0]]->ports[row[1]];
                taps.push_back({from.at, counters->ports[row[2]].at, from.bytes, at, false});
            }
        }
        for (int w = 0; w < wire_count; w++) {
            const int32_t* row = wire_table[w];
            const Port& from = models[row[0]]->ports[row[1]];
            const Port& to = models[row[2]]->ports[row[3]];
            wires.push_back({from.at, to.at, from.bytes, row[2], to.settles});
            models[row[0]]->drives.push_back({WIRE, w});
        }
        for (int t = 0; t < pes; t++) {
            const int32_t* row = terms[t];
            const auto& ports = models[row[0]]->ports;
            uint64_t mask = row[13] >= 64 ? ~0ULL : (1ULL << row[13]) - 1;
            terminals.push_back({side(src[t], source_settles), side(snk[t], sink_settles),
                                 {&snk[t]->cut_short, (int)sizeof snk[t]->cut_short,
                                  sink_settles.cut_short},
                                 row[0], ports[row[1]],
                                 ports[row[2]], ports[row[3]],
                                 ports[row[4]], ports[row[5]], ports[row[6]], row[7], row[8],
                                 row[9], row[10], row[11], row[12], row[14], mask});
            models[routers + t]->drives.push_back({SOURCE_TO_ROUTER, t});
            models[row[0]]->drives.push_back({ROUTER_TO_SOURCE, t});
            models[row[0]]->drives.push_back({ROUTER_TO_SINK, t});
            models[routers + pes + t]->drives.push_back({SINK_TO_ROUTER, t});
        }
        for (int c = 0; c < link_count; c++) {
            const int32_t* row = links[c];
            const auto& ports = models[row[1]]->ports;
            crossings.push_back({row[0], row[1], ports[row[2]], ports[row[3]], row[4], row[5]});
        }
        own(threads);
        link_flits.assign(link_count, 0);
        link_packets.assign(link_count, 0);
        pe_flits.assign(2 * pes, 0);
        pe_packets.assign(2 * pes, 0);
        wake_all();
    }

    // Each thread's models (see ``Lane``), and the threads.
    void own(int threads) {
        lanes.assign(threads, Lane{});
        owner.assign(models.size(), 0);
        const int kinds[] = {0, routers, routers + pes, routers + 2 * pes, (int)models.size()};
        for (int k = 0; k + 1 < (int)(sizeof kinds / sizeof *kinds); k++) {
            const long first = kinds[k], size = kinds[k + 1] - kinds[k];
            for (long m = first; m < kinds[k + 1]; m++) {
                owner[m] = (int)((m - first) * threads / size);
                lanes[owner[m]].own.push_back((int)m);
            }
        }
        for (int c = 0; c < (int)crossings.size(); c++)
            lanes[owner[crossings[c].target]].crossings.push_back(c);
        for (int t = 0; t < pes; t++) lanes[owner[routers + t]].terminals.push_back(t);
        for (Lane& lane : lanes) {
            lane.held.assign(routers, 0);
            lane.lengths.assign(LENGTHS, 0);
            lane.sending.assign(lane.terminals.size(), 0);
            lane.receiving.assign(lane.terminals.size(), 0);
        }
        crew.start(threads);
    }

    // An input of model ``m`` changed (by the thread of ``lane``): it wakes, and is evaluated
    // before the next edge when the input reaches an output within a cycle (``settles``).
    void mark(int m, bool settles, Lane& lane) {
        Model* model = models[m];
        model->awake.store(true, std::memory_order_relaxed);
        if (!(settles || plain) || model->queued.load(std::memory_order_relaxed)) return;
        if (crew.threads == 1) model->queued.store(true, std::memory_order_relaxed);
        else if (model->queued.exchange(true, std::memory_order_relaxed)) return;  // listed
        lane.queue.push_back(m);
    }

    // The same, by the calling thread (between cycles).
    void mark(int m, bool settles) { mark(m, settles, lanes[0]); }

    void wake_all() {
        for (int m = 0; m < (int)models.size(); m++) mark(m, true);
    }

    // ``value`` into ``port`` of model ``m``, marking the model if it changed.
    void put_into(int m, const Port& port, uint64_t value, Lane& lane) {
        if (put(port, value)) mark(m, port.settles, lane);
    }

    // Everything model ``m`` drives, marking (in ``lane``) each model whose input changed.
    void drive(int m, Lane& lane) {
        for (const Link& link : models[m]->drives) {
            if (link.what == WIRE) {
                const Wire& wire = wires[link.index];
                if (wire.carry()) mark(wire.target, wire.settles, lane);
                continue;
            }
            const int t = link.index;
            const Terminal& term = terminals[t];
            const Side& source = term.source;
            const Side& sink = term.sink;
            switch (link.what) {
            case SOURCE_TO_ROUTER:
                put_into(term.router, term.in_valid, get(source.valid), lane);
                put_into(term.router, term.in_payload,
                         (get(source.data) << term.data_at) | (get(source.first) << term.first_at)
                         | (get(source.last) << term.last_at), lane);
                break;
            case ROUTER_TO_SOURCE:
                put_into(routers + t, source.ready, get(term.in_ready), lane);
                break;
            case ROUTER_TO_SINK: {
                uint64_t word = get(term.out_payload);
                put_into(routers + pes + t, sink.data,
                         (word >> term.out_data_at) & term.out_data_mask, lane);
                put_into(routers + pes + t, sink.first, (word >> term.out_first_at) & 1, lane);
                put_into(routers + pes + t, sink.last, (word >> term.out_last_at) & 1, lane);
                put_into(routers + pes + t, term.sink_abort, (word >> term.out_abort_at) & 1,
                         lane);
                put_into(routers + pes + t, sink.valid, get(term.out_valid), lane);
                break;
            }
            case SINK_TO_ROUTER:
                put_into(term.router, term.out_ready, get(sink.ready), lane);
                break;
            default:
                break;
            }
        }
    }

    // The combinational paths between models, between clock edges: evaluate the marked
    // models, carry their outputs, again until nothing changes.
    void settle() {
        for (int step = 0;; step++) {
            bool marked = false;
            for (Lane& lane : lanes) {
                lane.round.swap(lane.queue);
                lane.queue.clear();
                marked |= !lane.round.empty();
            }
            if (!marked) return;
            if (step > 1000) {
                std::fprintf(stderr, "combinational loop between models\n");
                std::exit(3);
            }
            crew.run([this](int rank) {
                for (const Lane& lane : lanes)
                    for (int m : lane.round) {
                        if (owner[m] != rank) continue;
                        models[m]->queued.store(false, std::memory_order_relaxed);
                        models[m]->eval();
                    }
            });
            crew.run([this](int rank) {
                for (const Lane& lane : lanes)
                    for (int m : lane.round)
                        if (owner[m] == rank) drive(m, lanes[rank]);
            });
        }
    }

    // Flits moving this cycle, per router (the watchdog's ``idle`` and ``held``), and the
    // hops of unicast packets.
    void count_moves() {
        crew.run([this](int rank) { count(lanes[rank]); });
        for (Lane& lane : lanes) {
            for (uint64_t word : lane.injections) flying[word] = Flight{now, 0};
            lane.injections.clear();
        }
        for (Lane& lane : lanes) {
            for (uint64_t word : lane.heads) flying[word].hops++;
            hops += lane.heads.size();
            lane.heads.clear();
        }
        for (Lane& lane : lanes) {
            for (uint64_t word : lane.arrivals) arrived(word);
            lane.arrivals.clear();
            if (lane.moved) last_move = now;
            lane.moved = false;
        }
        for (Lane& lane : lanes) {
            for (const auto& tail : lane.tails) finished(tail.first, tail.second);
            lane.tails.clear();
        }
    }

    // A thread's part of the counting.
    void count(Lane& lane) {
        for (int c : lane.crossings) {
            const Crossing& crossing = crossings[c];
            if (!get(crossing.valid)) continue;
            uint64_t head = bit(crossing.payload, crossing.first);
            lane.held[crossing.source]--;
            lane.held[crossing.target]++;
            if (head) {
                uint64_t word = (get(crossing.payload) >> crossing.data_at) & data_mask;
                if (unicast(word)) lane.heads.push_back(word);
            }
            lane.moved = true;
            link_flits[c]++;
            link_packets[c] += head;
        }
        for (std::size_t i = 0; i < lane.terminals.size(); i++) {
            const int t = lane.terminals[i];
            const Terminal& term = terminals[t];
            if (get(term.source.valid) && get(term.source.ready)) {
                lane.held[term.router]++;
                lane.moved = true;
                pe_flits[2 * t]++;
                pe_packets[2 * t] += get(term.source.first);
                uint32_t& flits = lane.sending[i];
                flits = get(term.source.first) ? 1 : flits + 1;
                if (get(term.source.last)) lane.lengths[flits < LENGTHS ? flits : 0]++;
                if (get(term.source.first)) {
                    uint64_t word = get(term.source.data) & data_mask;
                    if (unicast(word)) lane.injections.push_back(word);
                }
            }
            if (get(term.sink.valid) && get(term.sink.ready)) {
                lane.held[term.router]--;
                lane.moved = true;
                pe_flits[2 * t + 1]++;
                pe_packets[2 * t + 1] += get(term.sink.first);
                if (get(term.sink.first)) {
                    lane.receiving[i] = get(term.sink.data) & data_mask;
                    lane.arrivals.push_back(lane.receiving[i]);
                }
                if (get(term.sink.last)) lane.tails.push_back({lane.receiving[i], t});
            }
        }
    }

    // The flits router ``r`` holds.
    int64_t held(int r) const {
        int64_t sum = 0;
        for (const Lane& lane : lanes) sum += lane.held[r];
        return sum;
    }

    // A head flit ejected: its packet's hops (0 without a crossing: the source's router)
    // and, measured, its latency.
    void arrived(uint64_t word) {
        if (!unicast(word)) return;
        auto found = flying.find(word);
        if (found == flying.end()) return;
        const Flight& flight = found->second;
        if (flight.hops > max_hops) max_hops = flight.hops;
        if ((word >> measured_bit) & 1) {
            uint64_t latency = now - flight.injected;
            if (latency > latency_max) latency_max = latency;
            int bin = 0;
            while (bin < BINS - 1 && (latency >> bin)) bin++;
            histogram[bin]++;
        }
        found->second.head_out = now;
    }

    // A tail flit ejected at terminal ``t``: its packet is done (recorded, with ``record``).
    void finished(uint64_t word, int t) {
        if (!unicast(word)) return;
        auto found = flying.find(word);
        if (found == flying.end()) return;
        const Flight& flight = found->second;
        if (record)
            std::fprintf(record, "%d %llu %llu %llu %llu %u\n", t, (unsigned long long)word,
                         (unsigned long long)flight.injected,
                         (unsigned long long)flight.head_out, (unsigned long long)now,
                         flight.hops);
        flying.erase(found);
    }

    // One clock cycle: what the last edge changed reaches its inputs, the models marked
    // settle, the flits are counted, the clock edge on the awake models.
    void cycle() {
        crew.run([this](int rank) { begin(rank); });
        if (plain) wake_all();
        settle();
        count_moves();
        for (const Wire& tap : taps) tap.carry();
        crew.run([this](int rank) { edge(rank); });
        now = rst ? 0 : now + 1;
    }

    // A thread's part of the start of a cycle: what its models' last edges changed reaches
    // their inputs, its sources and sinks get the time.
    void begin(int rank) {
        Lane& lane = lanes[rank];
        for (int m : lane.edged) drive(m, lane);
        lane.edged.clear();
        for (int t : lane.terminals) {
            if (!traced.empty()) feed(t, lane);
            src[t]->now = (uint32_t)now;
            snk[t]->now = (uint32_t)now;
            if (source_settles.now) mark(routers + t, true, lane);
            if (sink_settles.now) mark(routers + pes + t, true, lane);
        }
    }

    // A trace's next packet from terminal ``t``, once created and when its source takes one
    // (its ``trace_ready`` does not depend on ``trace_valid``: it is taken at this cycle's
    // edge), but not in reset.
    void feed(int t, Lane& lane) {
        std::deque<Traced>& pending = traced[t];
        const bool due = !rst && !pending.empty() && pending.front().birth <= now
                         && src[t]->trace_ready;
        if (due) {
            const Traced& next = pending.front();
            src[t]->trace_route = next.route;
            src[t]->trace_length = next.length;
            src[t]->trace_birth = (uint32_t)next.birth;
            pending.pop_front();
        }
        if (src[t]->trace_valid != due || due) {
            src[t]->trace_valid = due;
            mark(routers + t, true, lane);
        }
    }

    // Load a trace: lines ``terminal birth route length-1``, in order of birth.
    void load_trace(const std::string& path) {
        std::FILE* in = std::fopen(path.c_str(), "r");
        if (!in) {
            std::fprintf(stderr, "cannot read %s\n", path.c_str());
            std::exit(2);
        }
        traced.assign(pes, {});
        unsigned long long birth, route;
        int t;
        unsigned length;
        while (std::fscanf(in, "%d %llu %llu %u", &t, &birth, &route, &length) == 4)
            traced[t].push_back({birth, route, length});
        std::fclose(in);
    }

    // Write every delivered unicast packet to ``path`` from now on (see ``record``; ``-``:
    // no more).
    void open_record(const std::string& path) {
        if (record) std::fclose(record);
        record = nullptr;
        if (path == "-") return;
        record = std::fopen(path.c_str(), "w");
        if (!record) {
            std::fprintf(stderr, "cannot write %s\n", path.c_str());
            std::exit(2);
        }
    }

    // A thread's part of the clock edge: its awake models.
    void edge(int rank) {
        Lane& lane = lanes[rank];
        for (int m : lane.own) {
            Model* model = models[m];
            if (!model->awake.load(std::memory_order_relaxed)) continue;
            if (m < routers) model->empty = held(m) == 0;
            if (model->edge()) lane.edged.push_back(m);
        }
    }

    void set_rst(int value) {
        rst = value;
        for (Model* model : models) model->reset((uint8_t)rst);
        if (rst) {
            for (Lane& lane : lanes) {
                for (auto& h : lane.held) h = 0;
                for (auto& c : lane.lengths) c = 0;
            }
            last_move = hops = max_hops = latency_max = 0;
            for (auto& bin : histogram) bin = 0;
            flying.clear();
            for (auto& c : link_flits) c = 0;
            for (auto& c : link_packets) c = 0;
            for (auto& c : pe_flits) c = 0;
            for (auto& c : pe_packets) c = 0;
        }
        wake_all();
    }

    void print_held() {
        for (int i = 0; i < routers; i++)
            std::printf(i ? " %lld" : "%lld", (long long)held(i));
        std::printf("\n");
        std::fflush(stdout);
    }

    void print_links() {
        for (std::size_t i = 0; i < link_flits.size(); i++)
            std::printf(i ? " %llu %llu" : "%llu %llu", (unsigned long long)link_flits[i],
                        (unsigned long long)link_packets[i]);
        for (int i = 0; i < 2 * pes; i++)
            std::printf(" %llu %llu", (unsigned long long)pe_flits[i],
                        (unsigned long long)pe_packets[i]);
        std::printf("\n");
        std::fflush(stdout);
    }
};
"""


def _words(value: int, width: int) -> list[int]:
    """``value`` of ``width`` bits as 32-bit words, at least two (see ``assign``)."""
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(max(2, (width + 31) // 32))]


def _table(kind: str, name: str, rows: list[list[int]], columns: int) -> list[str]:
    """A C++ constant table of ``rows`` (at least one row, as C++ wants)."""
    body = ",".join("{" + ",".join(map(str, row)) + "}" for row in rows or [[0] * columns])
    return [f"static const {kind} {name}[][{columns}] = {{{body}}};"]


def _bool(value: bool) -> str:
    return "true" if value else "false"


class _Settling:
    """Whether an input of a module reaches one of its outputs within a cycle, read from the
    module's Verilog in ``rtl`` (every input, for Verilog that cannot be read)."""

    def __init__(self, rtl: Path):
        self.rtl = Path(rtl)
        self.found: dict[str, set[str] | None] = {}

    def __call__(self, module: str, port: str) -> bool:
        if module not in self.found:
            try:
                self.found[module] = program_verilog.inputs_reaching_outputs(
                    (self.rtl / f"{module}.v").read_text(), module)
            except program_verilog.UnreadableVerilog:
                self.found[module] = None
        return self.found[module] is None or port in self.found[module]


class _Ports:
    """Each router kind's ports the program reaches, numbered in the order first asked."""

    def __init__(self):
        self.numbers: dict[str, dict[str, int]] = {}

    def __call__(self, kind: str, port: str) -> int:
        numbers = self.numbers.setdefault(kind, {})
        return numbers.setdefault(port, len(numbers))


def _taps(netlist, counters, number: dict, ports, routers: int) -> tuple[list, dict]:
    """The ``TAPS`` table (from model, its port, the link counters' port) and the link
    counters' port numbers (see :class:`twinnet.hdl.link_counter.LinkCounters`)."""
    own: dict[str, int] = {}

    def to(name: str) -> int:
        return own.setdefault(name, len(own))

    rows, pes = [], len(netlist.terminals)
    for link in netlist.links:
        j = link.index
        source = number[link.source]
        source_kind = netlist.by_label[link.source].kind
        out = f"out_{link.source_port}"
        rows += [[source, ports(source_kind, _port(out, ["flit", "valid"])), to(f"c{j}_valid")],
                 [source, ports(source_kind, _port(out, ["flit", "payload"])),
                  to(f"c{j}_payload")],
                 [source, ports(source_kind, _port("waits", [out])), to(f"c{j}_waits")]]
    # A source's and a sink's ports: valid, data, first, last, ready (in ``join``).
    for t, attached in enumerate(netlist.terminals):
        router, kind = number[attached.router], netlist.by_label[attached.router].kind
        rows += [[routers + t, 0, to(f"i{t}_valid")], [routers + t, 2, to(f"i{t}_first")],
                 [router, ports(kind, _port(f"in_{attached.port}", ["ready"])),
                  to(f"i{t}_ready")],
                 [router, ports(kind, _port(f"out_{attached.port}", ["valid"])),
                  to(f"e{t}_valid")],
                 [router, ports(kind, _port(f"out_{attached.port}", ["payload"])),
                  to(f"e{t}_payload")],
                 [routers + pes + t, 4, to(f"e{t}_ready")]]
    return rows, own


def write_cpp(netlist, modules: dict, fmt, source, sink, harness_modules: dict,
              terminal_constants: list, *, rtl: Path, link_counters=None) -> str:
    """The C++ main (see the module docstring) for ``netlist`` (router kind → module name in
    ``modules``) with the harness's ``source`` and ``sink`` for its format ``fmt`` (their
    module names and the network's in ``harness_modules``) and the per-terminal
    ``(source constants, sink constants)`` values. ``rtl`` is the folder of the modules'
    Verilog (``<module>.v``), read for the inputs that reach an output within a cycle
    (:func:`twinnet.gen.program_verilog.inputs_reaching_outputs`; every input when it cannot
    be read).

    Its size grows with the network only in its tables (one row per wire, terminal and link):
    the code is the same for every network of the same router kinds. ``link_counters``,
    ``(LinkCounters, module name)`` or None, adds the link counters as a model (the module
    docstring)."""
    from twinnet.model.sizes import MAX_PROGRAM_FLIT_WIDTH

    source_module, sink_module = harness_modules["source"], harness_modules["sink"]
    if fmt.flit_width > MAX_PROGRAM_FLIT_WIDTH:
        raise ValueError(f"the C++ harness takes flits of up to {MAX_PROGRAM_FLIT_WIDTH} bits, not "
                         f"{fmt.flit_width}")
    kinds = sorted({router.kind for router in netlist.routers})
    number = {router.label: i for i, router in enumerate(netlist.routers)}
    routers, pes = len(netlist.routers), len(netlist.terminals)
    ports = _Ports()

    # Wires between routers: each port of a link, from the model driving it.
    wires = []
    for link in netlist.links:
        member = netlist.kind_of(link.source).signature.members[f"out_{link.source_port}"]
        source_kind = netlist.by_label[link.source].kind
        target_kind = netlist.by_label[link.target].kind
        ends = [(number[link.source], source_kind, f"out_{link.source_port}"),
                (number[link.target], target_kind, f"in_{link.target_port}")]
        for path, port in member.signature.members.flatten():
            if not port.is_port:
                continue
            (sender, sender_kind, sent), (receiver, receiver_kind, received) = \
                ends if port.flow == Out else ends[::-1]
            wires.append([sender, ports(sender_kind, _port(sent, path)),
                          receiver, ports(receiver_kind, _port(received, path))])

    # Terminals: the router's ports and where the fields sit in their payloads.
    terminals = []
    for attached in netlist.terminals:
        kind, port = netlist.by_label[attached.router].kind, attached.port
        signature = netlist.kinds[kind].signature
        fields = {name: field.offset for name, field in
                  signature.members[f"in_{port}"].signature.members["payload"].shape}
        out_fields = {name: (field.offset, field.width) for name, field in
                      signature.members[f"out_{port}"].signature.members["payload"].shape}
        terminals.append([number[attached.router],
                          *(ports(kind, _port(f"{side}_{port}", [name]))
                            for side, name in (("in", "valid"), ("in", "payload"),
                                               ("in", "ready"), ("out", "valid"),
                                               ("out", "payload"), ("out", "ready"))),
                          fields["data"], fields["first"], fields["last"],
                          out_fields["data"][0], out_fields["first"][0],
                          out_fields["last"][0], out_fields["data"][1],
                          out_fields["abort"][0]])

    # Links, for the counts: the flit's valid and payload at the receiving input.
    crossings = []
    for link in netlist.links:
        kind = netlist.by_label[link.target].kind
        flit = netlist.kinds[kind].signature.members[f"in_{link.target_port}"] \
            .signature.members["flit"].signature.members["payload"].shape
        crossings.append([number[link.source], number[link.target],
                          ports(kind, _port(f"in_{link.target_port}", ["flit", "valid"])),
                          ports(kind, _port(f"in_{link.target_port}", ["flit", "payload"])),
                          flit["first"].offset, flit["data"].offset])

    taps, tapped = (_taps(netlist, link_counters[0], number, ports, routers)
                    if link_counters is not None else ([], {}))

    out = Program()
    out("// Generated by twinnet (gen/traffic_cpp.py): the traffic harness of "
        f"{harness_modules['network']} over separately Verilated modules.",
        *(f"#include <{header}>" for header in (
            "algorithm", "atomic", "cstdint", "cstdio", "cstdlib", "cstring", "deque",
            "functional",
            "iostream", "string", "thread", "unordered_map", "vector")),
        '#include "verilated.h"')
    extra = [link_counters[1]] if link_counters is not None else []
    for module in [*(modules[kind] for kind in kinds), source_module, sink_module, *extra]:
        out(f'#include "V{module}.h"', f'#include "V{module}___024root.h"')
    out(ENGINE.strip("\n"), "")
    out(*_table("int32_t", "WIRES", wires, 4), *_table("int32_t", "TERMINALS", terminals, 15),
        *_table("int32_t", "CROSSINGS", crossings, 6), *_table("int32_t", "TAPS", taps, 3))
    statics = {}
    for kind in kinds:
        router = netlist.kinds[kind]
        if "node_static" not in router.signature.members:
            continue
        layout = router.signature.members["node_static"].shape
        width = Shape.cast(layout).width
        statics[kind] = [_words(0 if instance.static is None
                                else _constant(layout, instance.static), width)
                         for instance in netlist.routers if instance.kind == kind]
        out(*_table("uint32_t", f"STATIC_{kind}", statics[kind], len(statics[kind][0])))
    for part, component, index in (("SOURCE", source, 0), ("SINK", sink, 1)):
        width = Shape.cast(component.constants_layout).width
        rows = [_words(_constant(component.constants_layout, constants[index]), width)
                for constants in terminal_constants]
        out(*_table("uint32_t", f"{part}_CONSTANTS", rows, len(rows[0])))
    out("")

    # The port tables of each router kind.
    settles = _Settling(rtl)
    for kind in kinds:
        module = modules[kind]
        members = ", ".join(
            f"{{&m->{cpp_name(name)}, (int)sizeof m->{cpp_name(name)}, "
            f"{_bool(settles(module, name))}}}" for name in ports.numbers.get(kind, {}))
        out(f"static std::vector<Port> ports_{kind}(V{module}* m) {{",
            f"    return {{{members}}};", "}")
    if link_counters is not None:
        members = ", ".join(f"{{&m->{name}, (int)sizeof m->{name}}}" for name in tapped)
        out(f"static std::vector<Port> ports_links(V{link_counters[1]}* m) {{",
            f"    return {{{members}}};", "}")
    out("")

    out(f"struct Harness : Engine<V{source_module}, V{sink_module}> {{")
    for kind in kinds:
        out(f"    std::vector<V{modules[kind]}*> r_{kind};")
    if link_counters is not None:
        out(f"    V{link_counters[1]}* counters = nullptr;")
    out("", "    Harness(int threads, bool plain) {")
    out("this->plain = plain;", indent=2)
    for part, module, component in (("source", source_module, source),
                                    ("sink", sink_module, sink)):
        flags = ", ".join(_bool(name in component.signature.members and settles(module, name))
                          for name in ("valid", "data", "first", "last", "ready", "now",
                                       "cut_short"))
        out(f"{part}_settles = {{{flags}}};", indent=2)
    out("static const uint16_t KINDS[] = {"
        + ",".join(str(kinds.index(instance.kind)) for instance in netlist.routers) + "};",
        indent=2)
    out(f"for (int r = 0; r < {routers}; r++) {{", indent=2)
    for position, kind in enumerate(kinds):
        module = f"V{modules[kind]}"
        out(f"if (KINDS[r] == {position}) {{", indent=3)
        out(f"auto* model = new Of<{module}>(&context, !plain);",
            f"model->ports = ports_{kind}(model->v);", indent=4)
        if kind in statics:
            out(f"assign(model->v->node_static, STATIC_{kind}[r_{kind}.size()]);", indent=4)
        out(f"r_{kind}.push_back(model->v);", "models.push_back(model);", indent=4)
        out("}", indent=3)
    out("}", indent=2)
    counters_model = "nullptr"
    if link_counters is not None:
        out(f"auto* counting = new Of<V{link_counters[1]}>(&context, false);",
            "counting->ports = ports_links(counting->v);", "counters = counting->v;", indent=2)
        counters_model = "counting"
    out(f"join(threads, WIRES, {len(wires)}, TERMINALS, CROSSINGS, {len(crossings)}, "
        f"{pes}, {counters_model}, TAPS, {len(taps)});", indent=2)
    mask = (1 << fmt.flit_width) - 1
    out(f"data_mask = {mask:#x}ULL;", indent=2)
    payload = fmt.head_layout["payload"]
    out(f"measured_bit = {payload.offset + fmt.payload_layout['measured'].offset};", indent=2)
    if fmt.broadcast:
        route = fmt.head_layout["route"]
        out(f"broadcast_bit = {route.offset + route.shape['broadcast'].offset};", indent=2)
    out(f"for (int t = 0; t < {pes}; t++) {{", "assign(src[t]->constants, SOURCE_CONSTANTS[t]);",
        "assign(snk[t]->constants, SINK_CONSTANTS[t]);", "}", indent=2)
    out("    }", "")

    # Controls.
    out("    void set(const std::string& name, uint64_t value) {")
    out("if (name == \"rst\") { set_rst((int)value); return; }", indent=2)
    duplicate = HARNESS_FAULTS.index("duplicate")
    out(f"if (name == \"fault\") {{ fault = (int)value; src[0]->replay = fault == {duplicate}; "
        f"mark({routers}, true); return; }}", indent=2)
    for control in dict.fromkeys(SOURCE_CONTROLS + SINK_CONTROLS):
        parts = [f"{part}[i]->{control} = value; mark({offset} + i, true);"
                 for part, component, controls, offset in (
                     ("src", source, SOURCE_CONTROLS, routers),
                     ("snk", sink, SINK_CONTROLS, routers + pes))
                 if control in controls and control in component.signature.members]
        if not parts:
            continue
        out(f"if (name == \"{control}\") {{ for (int i = 0; i < {pes}; i++) {{ "
            f"{' '.join(parts)} }} return; }}", indent=2)
    out('std::fprintf(stderr, "unknown control %s\\n", name.c_str()); std::exit(2);', indent=2)
    out("    }", "")

    # Reading the harness's outputs.
    out("    void read() {")
    sums = list(TrafficHarness.sums(fmt))
    out("uint64_t " + ", ".join(f"{name} = 0" for name in sums) + ";", indent=2)
    out(f"for (int i = 0; i < {pes}; i++) {{", indent=2)
    for name in sums:
        part = "src" if name in source.signature.members else "snk"
        out(f"{name} += {part}[i]->{name};", indent=3)
    out("}", indent=2)
    out("uint64_t drop_count = 0, replayed = src[0]->replayed;", indent=2)
    for kind in kinds:
        out(f"for (auto* m : r_{kind}) drop_count += m->drop_count;", indent=2)
    limit = (1 << DROP_COUNT_WIDTH) - 1
    out(f"if (drop_count > {limit:#x}ULL) drop_count = {limit:#x}ULL;", indent=2)
    out("uint64_t idle = now - last_move, asleep = 0;",
        "for (Model* model : models) asleep += !model->awake;", indent=2)
    fields = " ".join(f"{name}=%llu" for name in [*sums, "drop_count", "latency_max",
                                                  "faults", "now", "idle", "hops",
                                                  "max_hops", "asleep"])
    values = ", ".join(f"(unsigned long long){name}"
                       for name in [*sums, "drop_count", "latency_max", "replayed", "now",
                                    "idle", "hops", "max_hops", "asleep"])
    if all("stalls" in netlist.kinds[kind].signature.members for kind in kinds):
        # The routers' stall counters, summed (each 48 bits: no sum wraps).
        for reason in STALL_REASONS:
            out(f"uint64_t stall_{reason} = 0;", indent=2)
            for kind in kinds:
                out(f"for (auto* m : r_{kind}) stall_{reason} += "
                    f"m->{cpp_name(_port('stalls', [reason]))};", indent=2)
        fields += "".join(f" stall_{reason}=%llu" for reason in STALL_REASONS)
        values += "".join(f", (unsigned long long)stall_{reason}" for reason in STALL_REASONS)
    out(f'std::printf("{fields}", {values});',
        'for (int b = 0; b < BINS; b++) std::printf(" hist%d=%llu", b, '
        "(unsigned long long)histogram[b]);",
        "for (int k = 0; k < LENGTHS; k++) {",
        "    uint64_t count = 0;",
        "    for (const Lane& lane : lanes) count += lane.lengths[k];",
        '    if (count) std::printf(" len%d=%llu", k, (unsigned long long)count);',
        "}", 'std::printf("\\n");', "std::fflush(stdout);", indent=2)
    out("    }", "")
    out("    void print_counts() {")
    if link_counters is not None:
        # Each port holds whole rows of 96 bits: whole 32-bit words, read one port after the
        # other, separated by spaces.
        for k, width in enumerate(link_counters[0].chunks):
            separator = '(i ? " " : "")' if k == 0 else '" "'
            out(f'for (int i = 0; i < {width // 32}; i++) std::printf("%s%u", {separator}, '
                f"(unsigned)counters->counts_{k}[i]);", indent=2)
    out('std::printf("\\n");', "std::fflush(stdout);", indent=2)
    out("    }", "};", "")

    out("int main(int argc, char** argv) {",
        "    int threads = argc > 1 ? std::atoi(argv[1]) : 1;",
        "    bool plain = argc > 2 && std::string(argv[2]) == \"plain\";",
        "    if (threads < 1) { std::fprintf(stderr, \"threads must be at least 1\\n\"); "
        "return 2; }",
        "    Harness h(threads, plain);", "    std::string command;",
        "    while (std::cin >> command) {",
        "        if (command == \"set\") { std::string name; uint64_t value; "
        "std::cin >> name >> value; h.set(name, value); }",
        "        else if (command == \"run\") { uint64_t n; std::cin >> n; "
        "for (uint64_t i = 0; i < n; i++) h.cycle(); std::printf(\"ok\\n\"); "
        "std::fflush(stdout); }",
        "        else if (command == \"read\") h.read();",
        "        else if (command == \"held\") h.print_held();",
        "        else if (command == \"links\") h.print_links();",
        "        else if (command == \"counts\") h.print_counts();",
        "        else if (command == \"trace\") { std::string path; std::cin >> path; "
        "h.load_trace(path); std::printf(\"ok\\n\"); std::fflush(stdout); }",
        "        else if (command == \"record\") { std::string path; std::cin >> path; "
        "h.open_record(path); std::printf(\"ok\\n\"); std::fflush(stdout); }",
        "        else if (command == \"quit\") { if (h.record) std::fclose(h.record); break; }",
        "        else { std::fprintf(stderr, \"unknown command %s\\n\", command.c_str()); "
        "return 2; }",
        "    }", "    return 0;", "}")
    return out.text()
