// Uniform random traffic on a Verilated twinnet network top, driven from C++.
//
// Every cycle each PE starts a new packet with probability --rate (packets per PE per cycle) to a
// uniformly random other PE, until --packets packets have been offered; then the network drains.
// Each delivered packet is checked: it arrives once, at the PE its head flit names, with every
// flit intact (the head's payload carries a per-source sequence number, the body flits words
// derived from source, sequence and position) and in order with the other packets of its
// source-destination pair. Prints the counts, the mean latency (head accepted at the source ->
// head ejected) and the simulation speed, then one JSON line; exits 1 on any error.
//
// Build: Verilate the network with --prefix Vnet and this file (see docs/verilog.md); the
// network's constants come from net_params.h, written by net_params.py from the manifest.
//
// Options: --packets N (4000), --rate R (0.02), --seed S (1), --eject-ready P (1.0: the chance
// that a PE takes an ejected flit in a cycle), --allow-self (destinations include the source),
// --watchdog C (10000 cycles without a flit moving while packets are in flight = deadlock).

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Vnet.h"
#include "net_params.h"
#include "verilated.h"

static_assert(NET_FLIT_WIDTH <= 64, "this harness keeps a flit in a uint64_t");

// ---- Bit fields of Verilator ports. A port of up to 64 bits is a plain integer (CData, SData,
// IData, QData); a wider one is a VlWide<N> of 32-bit words, bit 0 in word 0. ----

static inline uint64_t low_mask(int width) {
    return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
}

template <typename T>
static inline uint64_t get_field(const T& port, int lsb, int width) {
    return (static_cast<uint64_t>(port) >> lsb) & low_mask(width);
}

template <std::size_t N>
static inline uint64_t get_field(const VlWide<N>& port, int lsb, int width) {
    uint64_t value = 0;
    for (int done = 0; done < width;) {
        const int bit = lsb + done, offset = bit % 32;
        const int take = std::min(32 - offset, width - done);
        value |= ((uint64_t(port[bit / 32]) >> offset) & low_mask(take)) << done;
        done += take;
    }
    return value;
}

template <typename T>
static inline void set_field(T& port, int lsb, int width, uint64_t value) {
    const uint64_t mask = low_mask(width) << lsb;
    port = static_cast<T>((static_cast<uint64_t>(port) & ~mask) | ((value << lsb) & mask));
}

template <std::size_t N>
static inline void set_field(VlWide<N>& port, int lsb, int width, uint64_t value) {
    for (int done = 0; done < width;) {
        const int bit = lsb + done, offset = bit % 32;
        const int take = std::min(32 - offset, width - done);
        const uint32_t mask = uint32_t(low_mask(take) << offset);
        port[bit / 32] = (port[bit / 32] & ~mask) | (uint32_t((value >> done) << offset) & mask);
        done += take;
    }
}

// ---- Packets ----

constexpr int P = NET_PES, W = NET_FLIT_WIDTH, L = NET_PACKET_LENGTH;

// Body flit i of packet (source, seq): distinct per packet and position, so that a corrupted,
// swapped or misdelivered flit is noticed.
static uint64_t body_flit(int source, uint64_t seq, int i) {
    uint64_t x = (uint64_t(source) << 40) ^ (seq << 8) ^ uint64_t(i);
    x *= 0x9E3779B97F4A7C15ull;  // a multiplicative hash spreads the bits over the flit
    return (x ^ (x >> 29)) & low_mask(W);
}

// The head flit (manifest head_flit.fields): destination digits route.node.o<i>, destination
// PE route.pe, source, and the sequence number in the payload. PE numbers: PE = pe + cards *
// node index, the node index reading the digits in mixed radix with o0 most significant.
static uint64_t head_flit(int destination, int source, uint64_t seq) {
    int node = destination / NET_CARDS;
    uint64_t head = uint64_t(destination % NET_CARDS) << NET_PE_OFFSET;
    for (int dim = NET_DIMS - 1; dim >= 0; --dim) {
        head |= uint64_t(node % NET_RADIX[dim]) << NET_DIGIT_OFFSET[dim];
        node /= NET_RADIX[dim];
    }
    head |= uint64_t(source) << NET_SOURCE_OFFSET;
    head |= (seq & low_mask(NET_PAYLOAD_WIDTH)) << NET_PAYLOAD_OFFSET;
    return head & low_mask(W);
}

struct Sent {
    int destination;
    uint64_t accepted = 0;  // cycle its head flit was accepted
    bool delivered = false;
};

struct Options {
    long packets = 4000;
    double rate = 0.02, eject_ready = 1.0;
    uint64_t seed = 1;
    bool allow_self = false;
    long watchdog = 10000;
};

static Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--packets" && has_value) o.packets = std::atol(argv[++i]);
        else if (arg == "--rate" && has_value) o.rate = std::atof(argv[++i]);
        else if (arg == "--seed" && has_value) o.seed = std::strtoull(argv[++i], nullptr, 10);
        else if (arg == "--eject-ready" && has_value) o.eject_ready = std::atof(argv[++i]);
        else if (arg == "--watchdog" && has_value) o.watchdog = std::atol(argv[++i]);
        else if (arg == "--allow-self") o.allow_self = true;
        else {
            std::fprintf(stderr, "usage: %s [--packets N] [--rate R] [--seed S] "
                         "[--eject-ready P] [--allow-self] [--watchdog C]\n", argv[0]);
            std::exit(2);
        }
    }
    return o;
}

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);
    auto context = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vnet>(context.get());
    std::mt19937_64 rng(opt.seed);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    std::uniform_int_distribution<int> other_pe(0, opt.allow_self ? P - 1 : P - 2);

    std::vector<std::deque<uint64_t>> queue(P);  // per source: sequence numbers to send
    std::vector<int> next_flit(P, 0);
    std::vector<std::vector<Sent>> sent(P);  // per source, by sequence number
    std::vector<int> receiving(P, 0);        // per destination: flits of the current packet
    std::vector<int> from(P, -1);            // per destination: source of the current packet
    std::vector<uint64_t> seq_in(P, 0);      // per destination: sequence of the current packet
    std::vector<int64_t> last_seq(size_t(P) * P, -1);  // per (source, destination) pair
    long offered = 0, injected = 0, delivered = 0, self_sent = 0, errors = 0;
    uint64_t cycle = 0, latency_sum = 0, idle = 0;

    auto error = [&](const char* what, int pe) {
        if (++errors <= 10) {
            std::fprintf(stderr, "error at cycle %" PRIu64 ", PE %d: %s\n", cycle, pe, what);
        }
    };

    // Reset: synchronous, active high; nothing offered, every PE ready to take flits.
    top->rst = 1;
    for (int i = 0; i < P; ++i) set_field(top->pe_out_ready, i, 1, 1);
    for (int i = 0; i < 4; ++i) {
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
    }
    top->rst = 0;

    const auto started = std::chrono::steady_clock::now();
    while (offered < opt.packets || delivered < offered) {
        ++cycle;
        // New packets (Bernoulli per PE and cycle, as twinnet's cocotb uniform_traffic test).
        for (int s = 0; s < P && offered < opt.packets; ++s) {
            if (uniform(rng) >= opt.rate) continue;
            int d = other_pe(rng);
            if (!opt.allow_self && d >= s) ++d;  // uniform over the other P - 1 PEs
            self_sent += d == s;
            const uint64_t seq = sent[s].size();
            if (seq > low_mask(NET_PAYLOAD_WIDTH)) {
                std::fprintf(stderr, "too many packets per PE for the %d-bit payload\n",
                             NET_PAYLOAD_WIDTH);
                return 1;
            }
            sent[s].push_back(Sent{d});
            queue[s].push_back(seq);
            ++offered;
        }
        // Drive every PE's injection stream with the clock low, then let the logic settle.
        for (int s = 0; s < P; ++s) {
            const bool valid = !queue[s].empty();
            set_field(top->pe_in_valid, s, 1, valid);
            if (!valid) continue;
            const uint64_t seq = queue[s].front();
            const int f = next_flit[s];
            set_field(top->pe_in_first, s, 1, f == 0);
            set_field(top->pe_in_last, s, 1, f == L - 1);
            set_field(top->pe_in_data, s * W, W,
                      f == 0 ? head_flit(sent[s][seq].destination, s, seq)
                             : body_flit(s, seq, f));
        }
        if (opt.eject_ready < 1.0) {
            for (int d = 0; d < P; ++d) {
                set_field(top->pe_out_ready, d, 1, uniform(rng) < opt.eject_ready);
            }
        }
        top->clk = 0;
        top->eval();

        // A flit moves where valid and ready are both high at the rising edge.
        bool moved = false;
        for (int s = 0; s < P; ++s) {
            if (queue[s].empty() || !get_field(top->pe_in_ready, s, 1)) continue;
            moved = true;
            if (next_flit[s] == 0) {
                sent[s][queue[s].front()].accepted = cycle;
                ++injected;
            }
            if (++next_flit[s] == L) {
                next_flit[s] = 0;
                queue[s].pop_front();
            }
        }
        for (int d = 0; d < P; ++d) {
            if (!get_field(top->pe_out_valid, d, 1) || !get_field(top->pe_out_ready, d, 1)) {
                continue;
            }
            moved = true;
            const uint64_t word = get_field(top->pe_out_data, d * W, W);
            const bool first = get_field(top->pe_out_first, d, 1);
            const bool last = get_field(top->pe_out_last, d, 1);
            if (first != (receiving[d] == 0)) error("first mark on the wrong flit", d);
            if (last != (receiving[d] == L - 1)) error("last mark on the wrong flit", d);
            if (receiving[d] == 0) {
                const int s = int(get_field(word, NET_SOURCE_OFFSET, NET_SOURCE_WIDTH));
                const uint64_t seq = get_field(word, NET_PAYLOAD_OFFSET, NET_PAYLOAD_WIDTH);
                from[d] = -1;
                if (s >= P || seq >= sent[s].size() || sent[s][seq].delivered) {
                    error("unknown or duplicate packet", d);
                } else if (word != head_flit(sent[s][seq].destination, s, seq)) {
                    error("corrupted head flit", d);
                } else if (sent[s][seq].destination != d) {
                    error("packet delivered to the wrong PE", d);
                } else {
                    from[d] = s;
                    seq_in[d] = seq;
                    latency_sum += cycle - sent[s][seq].accepted;
                    int64_t& previous = last_seq[size_t(s) * P + d];
                    if (int64_t(seq) < previous) error("packet overtook a later one", d);
                    previous = int64_t(seq);
                }
            } else if (from[d] >= 0 && word != body_flit(from[d], seq_in[d], receiving[d])) {
                error("corrupted body flit", d);
            }
            if (++receiving[d] == L) {
                receiving[d] = 0;
                if (from[d] >= 0) {
                    sent[from[d]][seq_in[d]].delivered = true;
                    ++delivered;
                }
            }
        }

        top->clk = 1;
        top->eval();
        idle = moved || delivered == offered ? 0 : idle + 1;
        if (errors || long(idle) >= opt.watchdog) break;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const uint32_t drops = top->drop_count;
    top->final();

    if (idle && long(idle) >= opt.watchdog) {
        std::fprintf(stderr, "deadlock: no flit moved for %ld cycles, %ld packets in flight\n",
                     opt.watchdog, injected - delivered);
    }
    const bool ok = !errors && delivered == opt.packets && drops == 0;
    std::printf("%s: %d PEs, %ld packets offered at %.4f packets/PE/cycle, %ld injected, "
                "%ld delivered (%ld to their own PE), %ld errors, drop_count %" PRIu32 "\n",
                NET_TOP, P, offered, opt.rate, injected, delivered, self_sent, errors, drops);
    std::printf("%" PRIu64 " cycles in %.3f s: %.0f cycles/s; mean latency %.2f cycles\n", cycle,
                seconds, cycle / seconds, delivered ? double(latency_sum) / delivered : 0.0);
    std::printf("{\"network\": \"%s\", \"pes\": %d, \"packets\": %ld, \"rate\": %g, "
                "\"injected\": %ld, \"delivered\": %ld, \"self\": %ld, \"errors\": %ld, "
                "\"drop_count\": %" PRIu32 ", \"cycles\": %" PRIu64 ", \"seconds\": %.6f, "
                "\"cycles_per_second\": %.1f, \"mean_latency\": %.4f, \"ok\": %s}\n",
                NET_TOP, P, opt.packets, opt.rate, injected, delivered, self_sent, errors, drops,
                cycle, seconds, cycle / seconds,
                delivered ? double(latency_sum) / delivered : 0.0, ok ? "true" : "false");
    return ok ? 0 : 1;
}
