// twinnet's traffic program: the harness of one network over separately Verilated models,
// driven by commands on stdin (see the package twinnet.program for the commands and what each
// answers). The code is the same for every network; the network is the generated header that
// TWINNET_NETWORK names (compile with -DTWINNET_NETWORK='"<network>_traffic.hpp"'): its model
// classes, the ports the program reaches, its tables and constants, as lists this file
// expands.
#include <sstream>

#include "twinnet_traffic_engine.hpp"

#ifndef TWINNET_NETWORK
#error "compile with -DTWINNET_NETWORK='\"<network>_traffic.hpp\"' (the generated tables)"
#endif
#include TWINNET_NETWORK

// Each router kind's port table: where Verilator keeps each port the tables name.
#define TWINNET_PORT(member, settles) Port{&m->member, (int)sizeof m->member, settles},
#define TWINNET_KIND_PORTS(k, V) \
    static std::vector<Port> ports_##k(V* m) { return {TWINNET_PORTS_##k(TWINNET_PORT)}; }
TWINNET_KINDS(TWINNET_KIND_PORTS)

#ifdef TWINNET_COUNTERS
#define TWINNET_COUNTER_PORT(member) Port{&m->member, (int)sizeof m->member, false},
static std::vector<Port> ports_links(TWINNET_COUNTERS* m) {
    return {TWINNET_COUNTER_PORTS(TWINNET_COUNTER_PORT)};
}
#endif

// A router's per-node constants (``node_static``, a row of its kind's STATIC table), for the
// kinds that have them.
template <class V, class Row>
static auto assign_static(V* v, const Row* table, std::size_t index, int)
    -> decltype(v->node_static, void()) {
    assign(v->node_static, table[index]);
}
template <class V, class Row> static void assign_static(V*, const Row*, std::size_t, long) {}

// The routers' stall counters (see TWINNET_STALLS): their names, in the order read.
#define TWINNET_STALL_NAME(reason, member) #reason,
static const char* const STALL_NAMES[] = {TWINNET_STALLS(TWINNET_STALL_NAME) nullptr};
static const int STALLS = (int)(sizeof STALL_NAMES / sizeof *STALL_NAMES) - 1;

// One ``name=value`` field of the ``read`` answer (space-separated).
static void field(const char* name, uint64_t value, bool& first) {
    std::printf(first ? "%s=%llu" : " %s=%llu", name, (unsigned long long)value);
    first = false;
}

struct Harness : Engine<TWINNET_SOURCE, TWINNET_SINK> {
#define TWINNET_KIND_MODELS(k, V) std::vector<V*> r_##k;
    TWINNET_KINDS(TWINNET_KIND_MODELS)
#ifdef TWINNET_COUNTERS
    TWINNET_COUNTERS* counters = nullptr;
#endif

    Harness(int* argc, char*** argv, int threads, bool plain) {
        ranks.start(argc, argv);
        this->plain = plain;
        source_settles = SOURCE_SETTLES;
        sink_settles = SINK_SETTLES;
        partition(ROUTERS, ORDER);
        std::vector<std::size_t> index;  // per kind, its routers so far (the STATIC row)
        for (int r = 0; r < ROUTERS; r++) {
            if (index.size() <= KINDS[r]) index.resize(KINDS[r] + 1, 0);
            const std::size_t row = index[KINDS[r]]++;
            if (!local(r)) {
                models.push_back(nullptr);
                continue;
            }
#define TWINNET_MAKE_ROUTER(k, V)                             \
    if (KINDS[r] == k) {                                      \
        auto* model = new Of<V>(&context, !plain);            \
        model->ports = ports_##k(model->v);                   \
        assign_static(model->v, STATIC_##k, row, 0);          \
        r_##k.push_back(model->v);                            \
        models.push_back(model);                              \
    }
            TWINNET_KINDS(TWINNET_MAKE_ROUTER)
        }
        Model* counting = nullptr;
#ifdef TWINNET_COUNTERS
        if (ranks.first()) {  // (one model, rank 0's: the others send it their taps)
            auto* made = new Of<TWINNET_COUNTERS>(&context, false);
            made->ports = ports_links(made->v);
            counters = made->v;
            counting = made;
        }
#endif
        join(threads, WIRES, WIRE_COUNT, TERMINALS, CROSSINGS, CROSSING_COUNT, PES, counting,
             TAPS, TAP_COUNT);
        data_mask = DATA_MASK;
        measured_bit = MEASURED_BIT;
        broadcast_bit = BROADCAST_BIT;
        for (int t = 0; t < PES; t++) {
            if (!src[t]) continue;  // (another rank's)
            assign(src[t]->constants, SOURCE_CONSTANTS[t]);
            assign(snk[t]->constants, SINK_CONSTANTS[t]);
        }
    }

    ~Harness() { ranks.stop(); }

    // A control of the harness: ``rst``, ``fault``, or one of every source's or sink's.
    void set(const std::string& name, uint64_t value) {
        if (name == "rst") {
            set_rst((int)value);
            return;
        }
        if (name == "fault") {
            fault = (int)value;
            if (src[0]) {
                src[0]->replay = fault == DUPLICATE_FAULT;
                mark(ROUTERS, true);
            }
            return;
        }
        bool known = false;
#define TWINNET_SOURCE_CONTROL(control)                  \
    if (name == #control) {                              \
        for (int i = 0; i < PES; i++) {                  \
            if (!src[i]) continue;                       \
            src[i]->control = value;                     \
            mark(ROUTERS + i, true);                     \
        }                                                \
        known = true;                                    \
    }
        TWINNET_SOURCE_CONTROLS(TWINNET_SOURCE_CONTROL)
#define TWINNET_SINK_CONTROL(control)                    \
    if (name == #control) {                              \
        for (int i = 0; i < PES; i++) {                  \
            if (!snk[i]) continue;                       \
            snk[i]->control = value;                     \
            mark(ROUTERS + PES + i, true);               \
        }                                                \
        known = true;                                    \
    }
        TWINNET_SINK_CONTROLS(TWINNET_SINK_CONTROL)
        if (!known) {
            std::fprintf(stderr, "unknown control %s\n", name.c_str());
            std::exit(2);
        }
    }

    // The harness's outputs, summed over the terminals, and the program's own counts: each
    // rank's, summed on rank 0, which answers.
    void read() {
        std::vector<uint64_t> values;
#define TWINNET_SUM(name, part)                                          \
    {                                                                    \
        uint64_t total = 0;                                              \
        for (int i = 0; i < PES; i++) total += part[i] ? part[i]->name : 0; \
        values.push_back(total);                                         \
    }
        TWINNET_SUMS(TWINNET_SUM)
        uint64_t drop_count = 0;
#define TWINNET_DROPS(k, V) for (auto* m : r_##k) drop_count += m->drop_count;
        TWINNET_KINDS(TWINNET_DROPS)
        uint64_t asleep = 0;
        for (Model* model : models) asleep += model && !model->awake;
        values.push_back(drop_count);
        values.push_back(src[0] ? src[0]->replayed : 0);
        values.push_back(asleep);
        uint64_t stalls[STALLS + 1] = {0};
#define TWINNET_STALL(reason, member) stalls[stall++] += m->member;
#define TWINNET_KIND_STALLS(k, V) \
    for (auto* m : r_##k) {       \
        int stall = 0;            \
        TWINNET_STALLS(TWINNET_STALL) \
        (void)m;                  \
        (void)stall;              \
    }
        TWINNET_KINDS(TWINNET_KIND_STALLS)
        values.insert(values.end(), stalls, stalls + STALLS);
        for (int k = 0; k < LENGTHS; k++) {
            uint64_t count = 0;
            for (const Lane& lane : lanes) count += lane.lengths[k];
            values.push_back(count);
        }
        ranks.sum(values);
        const uint64_t moved = ranks.most(last_move);
        if (!ranks.first()) return;
        std::size_t at = 0;
        bool first = true;
#define TWINNET_FIELD(name, part) field(#name, values[at++], first);
        TWINNET_SUMS(TWINNET_FIELD)
        field("drop_count", std::min(values[at++], DROP_LIMIT), first);
        field("latency_max", latency_max, first);
        field("faults", values[at++], first);
        field("now", now, first);
        field("idle", now - moved, first);
        field("hops", hops, first);
        field("max_hops", max_hops, first);
        field("asleep", values[at++], first);
        for (int s = 0; s < STALLS; s++) {
            std::string name = std::string("stall_") + STALL_NAMES[s];
            field(name.c_str(), values[at++], first);
        }
        for (int b = 0; b < BINS; b++)
            std::printf(" hist%d=%llu", b, (unsigned long long)histogram[b]);
        for (int k = 0; k < LENGTHS; k++, at++)
            if (values[at]) std::printf(" len%d=%llu", k, (unsigned long long)values[at]);
        std::printf("\n");
        std::fflush(stdout);
    }

    // The link counters' counts, their 32-bit words one port after the other.
    void print_counts() {
        if (!ranks.first()) return;  // (rank 0 has the counters)
#ifdef TWINNET_COUNTERS
        bool first = true;
#define TWINNET_COUNT(k, words)                                                     \
    for (int i = 0; i < words; i++) {                                               \
        std::printf(first ? "%u" : " %u", (unsigned)counters->counts_##k[i]);       \
        first = false;                                                              \
    }
        TWINNET_COUNTS(TWINNET_COUNT)
#endif
        std::printf("\n");
        std::fflush(stdout);
    }
};

// The answer of a command that has done its work (from rank 0).
static void answer_ok(const Ranks& ranks) {
    if (!ranks.first()) return;
    std::printf("ok\n");
    std::fflush(stdout);
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    bool plain = argc > 2 && std::string(argv[2]) == "plain";
    if (threads < 1) {
        std::fprintf(stderr, "threads must be at least 1\n");
        return 2;
    }
    Harness h(&argc, &argv, threads, plain);
    std::string text;
    while (h.ranks.line(text)) {  // one command per line, read by rank 0, run by every rank
        std::istringstream line(text);
        std::string command;
        if (!(line >> command)) continue;
        if (command == "set") {
            std::string name;
            uint64_t value;
            line >> name >> value;
            h.set(name, value);
        } else if (command == "run") {
            uint64_t n = 0;
            line >> n;
            for (uint64_t i = 0; i < n; i++) h.cycle();
            answer_ok(h.ranks);
        } else if (command == "read") {
            h.read();
        } else if (command == "held") {
            h.print_held();
        } else if (command == "links") {
            h.print_links();
        } else if (command == "counts") {
            h.print_counts();
        } else if (command == "trace") {
            std::string path;
            line >> path;
            h.load_trace(path);
            answer_ok(h.ranks);
        } else if (command == "record") {
            std::string path;
            line >> path;
            if (h.ranks.first()) h.open_record(path);  // (rank 0 follows the packets)
            answer_ok(h.ranks);
        } else if (command == "quit") {
            break;
        } else {
            std::fprintf(stderr, "unknown command %s\n", command.c_str());
            return 2;
        }
    }
    if (h.record) std::fclose(h.record);
    return 0;
}
