// The generic part of twinnet's traffic program (the package twinnet.program): models, their
// activity, the settling of the paths between them, the clock, the counters. The Harness,
// which knows the types of its models, is in twinnet_traffic_main.cpp, which includes this
// header and then the network's generated tables.
#ifndef TWINNET_TRAFFIC_ENGINE_HPP
#define TWINNET_TRAFFIC_ENGINE_HPP

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "twinnet_traffic_ranks.hpp"
#include "verilated.h"

double sc_time_stamp() { return 0; }

// A port of a model: where Verilator keeps its value and in how many bytes (a value of up to
// 8 bits in a uint8_t, 16 in a uint16_t, 32 in a uint32_t, 64 in a uint64_t, wider ones in
// 32-bit words), and whether it is on a path within a cycle: an input that reaches an output
// (after it changes, the model is evaluated before the clock edge), or an output such an input
// reaches (it may not drive another rank's region).
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
    bool counted_out;  // its source router is this process's too (it counts the flit out)
};

// A link into another process's region, seen from its source router: the flit's valid at the
// source's output (the flit leaves the router it is counted in).
struct Departure {
    int source;
    Port valid;
};

// A wire between regions of two processes: where its value is read (the sending side) or
// written (the receiving side: the model it drives and whether that input settles).
struct Remote {
    void* at;
    int bytes, target;
    bool settles;  // (received: the input reaches an output within a cycle)
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
// of each group (routers, sources, sinks) are cut into one run of neighbours per thread, so each
// thread gets its share of every group, evaluates its models' edges and carries their outputs,
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
    std::vector<int> departures;  // links out of its routers into another process's region
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
    std::vector<Model*> models;  // routers, then sources, then sinks (null: another rank's)
    Ranks ranks;
    std::vector<int> rank_of;  // per model, the rank whose region holds it
    std::vector<Departure> departures;
    std::vector<uint64_t> events;  // this cycle's heads and tails (see ``count_moves``)
    // With several ranks, the link counters' taps: this rank's (in the table's order) and, on
    // rank 0, per rank, the counters' inputs they feed; their bytes of this cycle.
    bool counted_links = false;
    std::vector<Remote> tapped;
    std::vector<std::vector<Remote>> tapped_into;
    std::vector<unsigned char> tap_bytes;
    // Per other rank, the wires sent to it and received from it (in the table's order, which
    // both sides follow), and their bytes.
    std::vector<std::vector<Remote>> sent, received;
    std::vector<std::vector<unsigned char>> sent_bytes, received_bytes;
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

    // Before the routers are made: the regions of the ranks. ``order`` lists the routers
    // neighbours first (the family's order); each rank takes an equal run of it.
    void partition(int router_count, const int32_t* order) {
        routers = router_count;
        rank_of.assign(routers, 0);
        for (int i = 0; i < routers; i++)
            rank_of[order[i]] = (int)((long)i * ranks.size / routers);
    }

    bool local(int m) const { return rank_of[m] == ranks.rank; }

    // After this rank's routers are made (null for the others'): its sources and sinks, the
    // links of the tables, the threads.
    void join(int threads, const int32_t (*wire_table)[4], int wire_count,
              const int32_t (*terms)[15], const int32_t (*links)[7], int link_count,
              int terminal_count, Model* counters, const int32_t (*tap_table)[3],
              int tap_count) {
        pes = terminal_count;
        src.assign(pes, nullptr);
        snk.assign(pes, nullptr);
        for (int part = 0; part < 2; part++)
            for (int t = 0; t < pes; t++) rank_of.push_back(rank_of[terms[t][0]]);
        for (int t = 0; t < pes; t++) {
            Of<Source>* source = nullptr;
            if (local(routers + t)) src[t] = (source = new Of<Source>(&context, false))->v;
            models.push_back(source);
        }
        for (int t = 0; t < pes; t++) {
            Of<Sink>* sink = nullptr;
            if (local(routers + pes + t)) snk[t] = (sink = new Of<Sink>(&context, false))->v;
            models.push_back(sink);
        }
        for (int t = 0; t < pes; t++) {  // (for the taps: valid, data, first, last, ready)
            if (!src[t]) continue;
            Side s = side(src[t], source_settles), k = side(snk[t], sink_settles);
            models[routers + t]->ports = {s.valid, s.data, s.first, s.last, s.ready};
            models[routers + pes + t]->ports = {k.valid, k.data, k.first, k.last, k.ready};
        }
        if (tap_count > 0) {
            // The link counters: one model, rank 0's (``counters`` is null on the others),
            // fed each cycle with the taps of every rank (see ``feed_counters``).
            int at = (int)models.size();
            models.push_back(counters);
            rank_of.push_back(0);
            tapped_into.assign(counters ? ranks.size : 0, {});
            for (int i = 0; i < tap_count; i++) {
                const int32_t* row = tap_table[i];
                const Port* to = counters ? &counters->ports[row[2]] : nullptr;
                if (local(row[0])) {
                    const Port& from = models[row[0]]->ports[row[1]];
                    if (ranks.size == 1) taps.push_back({from.at, to->at, from.bytes, at, false});
                    else tapped.push_back({from.at, from.bytes, at, false});
                }
                if (counters && ranks.size > 1)
                    tapped_into[rank_of[row[0]]].push_back({to->at, to->bytes, at, false});
            }
            counted_links = true;
        }
        sent.assign(ranks.size, {});
        received.assign(ranks.size, {});
        for (int w = 0; w < wire_count; w++) {
            const int32_t* row = wire_table[w];
            const bool from_here = local(row[0]), to_here = local(row[2]);
            if (from_here && to_here) {
                const Port& from = models[row[0]]->ports[row[1]];
                const Port& to = models[row[2]]->ports[row[3]];
                models[row[0]]->drives.push_back({WIRE, (int)wires.size()});
                wires.push_back({from.at, to.at, from.bytes, row[2], to.settles});
            } else if (from_here) {
                const Port& from = models[row[0]]->ports[row[1]];
                if (from.settles)
                    fail("an output that an input reaches within a cycle drives another "
                         "rank's region");
                sent[rank_of[row[2]]].push_back({from.at, from.bytes, row[2], false});
            } else if (to_here) {
                const Port& to = models[row[2]]->ports[row[3]];
                received[rank_of[row[0]]].push_back({to.at, to.bytes, row[2], to.settles});
            }
        }
        sent_bytes.assign(ranks.size, {});
        received_bytes.assign(ranks.size, {});
        for (int p = 0; p < ranks.size; p++) {
            for (const Remote& wire : sent[p]) sent_bytes[p].resize(sent_bytes[p].size() + wire.bytes);
            for (const Remote& wire : received[p])
                received_bytes[p].resize(received_bytes[p].size() + wire.bytes);
        }
        terminals.assign(pes, Terminal{});
        for (int t = 0; t < pes; t++) {
            if (!src[t]) continue;
            const int32_t* row = terms[t];
            const auto& ports = models[row[0]]->ports;
            uint64_t mask = row[13] >= 64 ? ~0ULL : (1ULL << row[13]) - 1;
            terminals[t] = {side(src[t], source_settles), side(snk[t], sink_settles),
                            {&snk[t]->cut_short, (int)sizeof snk[t]->cut_short,
                             sink_settles.cut_short},
                            row[0], ports[row[1]],
                            ports[row[2]], ports[row[3]],
                            ports[row[4]], ports[row[5]], ports[row[6]], row[7], row[8],
                            row[9], row[10], row[11], row[12], row[14], mask};
            models[routers + t]->drives.push_back({SOURCE_TO_ROUTER, t});
            models[row[0]]->drives.push_back({ROUTER_TO_SOURCE, t});
            models[row[0]]->drives.push_back({ROUTER_TO_SINK, t});
            models[routers + pes + t]->drives.push_back({SINK_TO_ROUTER, t});
        }
        crossings.assign(link_count, Crossing{});
        for (int c = 0; c < link_count; c++) {
            const int32_t* row = links[c];
            if (local(row[1])) {
                const auto& ports = models[row[1]]->ports;
                crossings[c] = {row[0], row[1], ports[row[2]], ports[row[3]], row[4], row[5],
                                local(row[0])};
            } else if (local(row[0])) {
                departures.push_back({row[0], models[row[0]]->ports[row[6]]});
            }
        }
        own(threads);
        link_flits.assign(link_count, 0);
        link_packets.assign(link_count, 0);
        pe_flits.assign(2 * pes, 0);
        pe_packets.assign(2 * pes, 0);
        wake_all();
    }

    // One line on stderr, and the program stops (every rank).
    [[noreturn]] void fail(const char* why) {
        std::fprintf(stderr, "traffic program: %s\n", why);
        std::exit(2);
    }

    // Each thread's models of this rank's region (see ``Lane``), and the threads.
    void own(int threads) {
        lanes.assign(threads, Lane{});
        owner.assign(models.size(), 0);
        const int groups[] = {0, routers, routers + pes, routers + 2 * pes, (int)models.size()};
        for (int k = 0; k + 1 < (int)(sizeof groups / sizeof *groups); k++) {
            std::vector<int> here;
            for (int m = groups[k]; m < groups[k + 1]; m++)
                if (models[m]) here.push_back(m);
            for (std::size_t i = 0; i < here.size(); i++) {
                owner[here[i]] = (int)((long)i * threads / (long)here.size());
                lanes[owner[here[i]]].own.push_back(here[i]);
            }
        }
        for (int c = 0; c < (int)crossings.size(); c++)
            if (crossings[c].valid.at)  // (its target is this rank's)
                lanes[owner[crossings[c].target]].crossings.push_back(c);
        for (int d = 0; d < (int)departures.size(); d++)
            lanes[owner[departures[d].source]].departures.push_back(d);
        for (int t = 0; t < pes; t++)
            if (src[t]) lanes[owner[routers + t]].terminals.push_back(t);
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
        for (int m = 0; m < (int)models.size(); m++)
            if (models[m]) mark(m, true);
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
    //
    // The packets are followed by rank 0 alone, from the heads and tails every rank saw: the
    // unicast heads injected, crossing a link, delivered, and the tails delivered (with their
    // terminal), one list after the other, of every lane of every rank. Tails are finished in
    // the order of their terminals (a terminal takes at most one a cycle).
    void count_moves() {
        crew.run([this](int rank) { count(lanes[rank]); });
        events.clear();
        for (int part = 0; part < 4; part++) {
            std::size_t at = events.size();
            events.push_back(0);
            for (Lane& lane : lanes) {
                if (part == 0) events.insert(events.end(), lane.injections.begin(),
                                             lane.injections.end());
                if (part == 1) events.insert(events.end(), lane.heads.begin(), lane.heads.end());
                if (part == 2) events.insert(events.end(), lane.arrivals.begin(),
                                             lane.arrivals.end());
                if (part == 3)
                    for (const auto& tail : lane.tails) {
                        events.push_back(tail.first);
                        events.push_back((uint64_t)tail.second);
                    }
            }
            events[at] = events.size() - at - 1;
        }
        for (Lane& lane : lanes) {
            lane.injections.clear();
            lane.heads.clear();
            lane.arrivals.clear();
            lane.tails.clear();
            if (lane.moved) last_move = now;
            lane.moved = false;
        }
        ranks.gather(events);
        if (!ranks.first()) return;
        // Every rank's lists, in order of rank: each part of each rank, part by part.
        std::vector<std::size_t> starts;
        for (std::size_t at = 0; at < events.size();) {
            starts.push_back(at);
            for (int part = 0; part < 4; part++) at += 1 + events[at];
        }
        std::vector<std::pair<int, uint64_t>> tails;
        for (int part = 0; part < 4; part++)
            for (std::size_t& at : starts) {
                const std::size_t count = events[at];
                const uint64_t* word = &events[at + 1];
                for (std::size_t i = 0; i < count; i++) {
                    if (part == 0) flying[word[i]] = Flight{now, 0};
                    if (part == 1) flying[word[i]].hops++;
                    if (part == 2) arrived(word[i]);
                }
                if (part == 1) hops += count;
                if (part == 3)
                    for (std::size_t i = 0; i < count; i += 2)
                        tails.push_back({(int)word[i + 1], word[i]});
                at += 1 + count;
            }
        std::stable_sort(tails.begin(), tails.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& tail : tails) finished(tail.second, tail.first);
    }

    // A thread's part of the counting.
    void count(Lane& lane) {
        for (int c : lane.crossings) {
            const Crossing& crossing = crossings[c];
            if (!get(crossing.valid)) continue;
            uint64_t head = bit(crossing.payload, crossing.first);
            if (crossing.counted_out) lane.held[crossing.source]--;
            lane.held[crossing.target]++;
            if (head) {
                uint64_t word = (get(crossing.payload) >> crossing.data_at) & data_mask;
                if (unicast(word)) lane.heads.push_back(word);
            }
            lane.moved = true;
            link_flits[c]++;
            link_packets[c] += head;
        }
        for (int d : lane.departures) {
            const Departure& departure = departures[d];
            if (!get(departure.valid)) continue;
            lane.held[departure.source]--;
            lane.moved = true;
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
        exchange();
        if (plain) wake_all();
        settle();
        count_moves();
        feed_counters();
        crew.run([this](int rank) { edge(rank); });
        now = rst ? 0 : now + 1;
    }

    // The link counters' inputs: the wires of every link and terminal, gathered on rank 0
    // with several ranks.
    void feed_counters() {
        for (const Wire& tap : taps) tap.carry();
        if (ranks.size == 1 || !counted_links) return;
        tap_bytes.clear();
        for (const Remote& tap : tapped) {
            const unsigned char* at = (const unsigned char*)tap.at;
            tap_bytes.insert(tap_bytes.end(), at, at + tap.bytes);
        }
        ranks.gather(tap_bytes);
        if (!ranks.first()) return;
        const unsigned char* at = tap_bytes.data();
        for (const auto& from_rank : tapped_into)
            for (const Remote& tap : from_rank) {
                std::memcpy(tap.at, at, tap.bytes);
                at += tap.bytes;
            }
    }

    // The wires between regions: each rank sends what its routers drive into the others'
    // regions (registers' values: final for the cycle) and writes what it receives into its
    // routers' inputs (marking those that change, to settle before the edge where the input
    // reaches an output within a cycle), in the tables' order of wires.
    void exchange() {
        if (ranks.size == 1) return;
        for (int p = 0; p < ranks.size; p++) {
            unsigned char* at = sent_bytes[p].data();
            for (const Remote& wire : sent[p]) {
                std::memcpy(at, wire.at, wire.bytes);
                at += wire.bytes;
            }
        }
        ranks.exchange(sent_bytes, received_bytes);
        for (int p = 0; p < ranks.size; p++) {
            const unsigned char* at = received_bytes[p].data();
            for (const Remote& wire : received[p]) {
                if (std::memcmp(wire.at, at, wire.bytes)) {
                    std::memcpy(wire.at, at, wire.bytes);
                    mark(wire.target, wire.settles);
                }
                at += wire.bytes;
            }
        }
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
        for (Model* model : models)
            if (model) model->reset((uint8_t)rst);
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

    // Each router's flits held, summed over the ranks (a router's are counted by its own).
    void print_held() {
        std::vector<uint64_t> values(routers);
        for (int i = 0; i < routers; i++) values[i] = (uint64_t)held(i);
        ranks.sum(values);
        if (!ranks.first()) return;
        for (int i = 0; i < routers; i++)
            std::printf(i ? " %lld" : "%lld", (long long)values[i]);
        std::printf("\n");
        std::fflush(stdout);
    }

    void print_links() {
        std::vector<uint64_t> values;
        for (std::size_t i = 0; i < link_flits.size(); i++) {
            values.push_back(link_flits[i]);
            values.push_back(link_packets[i]);
        }
        for (int i = 0; i < 2 * pes; i++) {
            values.push_back(pe_flits[i]);
            values.push_back(pe_packets[i]);
        }
        ranks.sum(values);
        if (!ranks.first()) return;
        for (std::size_t i = 0; i < values.size(); i += 2)
            std::printf(i ? " %llu %llu" : "%llu %llu", (unsigned long long)values[i],
                        (unsigned long long)values[i + 1]);
        std::printf("\n");
        std::fflush(stdout);
    }
};

#endif  // TWINNET_TRAFFIC_ENGINE_HPP
