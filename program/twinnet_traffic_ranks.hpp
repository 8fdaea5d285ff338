// The traffic program's processes: one, or several MPI ranks (compiled with -DTWINNET_MPI and
// run under mpirun), each of which owns a region of the routers with their sources and sinks
// (see Engine::join). Rank 0 reads the commands and answers them; the ranks exchange the wires
// of the links between their regions once per cycle (twinnet's links are registered: a wire
// that crosses from one region to another carries a register's value, so one exchange per
// cycle is exact), rank 0 gathers the flits that the packet bookkeeping follows, and the
// counts are summed on rank 0 when read.
#ifndef TWINNET_TRAFFIC_RANKS_HPP
#define TWINNET_TRAFFIC_RANKS_HPP

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#ifdef TWINNET_MPI
#include <mpi.h>
#define TWINNET_MPI_TYPE(type) type
#else
#define TWINNET_MPI_TYPE(type) 0  // (one process: no MPI type is needed)
#endif

struct Ranks {
    int rank = 0, size = 1;

    void start(int* argc, char*** argv) {
#ifdef TWINNET_MPI
        MPI_Init(argc, argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
#else
        (void)argc;
        (void)argv;
#endif
    }

    void stop() {
#ifdef TWINNET_MPI
        MPI_Finalize();
#endif
    }

    bool first() const { return rank == 0; }

    // The next command line, read by rank 0 and given to every rank; false at the end.
    bool line(std::string& text) {
        bool more = true;
        if (first()) more = (bool)std::getline(std::cin, text);
#ifdef TWINNET_MPI
        if (size > 1) {
            long length = more ? (long)text.size() : -1;
            MPI_Bcast(&length, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            more = length >= 0;
            if (!more) return false;
            text.resize((std::size_t)length);
            MPI_Bcast(text.data(), (int)length, MPI_CHAR, 0, MPI_COMM_WORLD);
        }
#endif
        return more;
    }

    // ``values`` summed over the ranks, on rank 0 (the others' are left as they were).
    void sum(std::vector<uint64_t>& values) {
#ifdef TWINNET_MPI
        if (size > 1) {
            std::vector<uint64_t> total(values.size());
            MPI_Reduce(values.data(), total.data(), (int)values.size(), MPI_UINT64_T, MPI_SUM,
                       0, MPI_COMM_WORLD);
            if (first()) values.swap(total);
        }
#else
        (void)values;
#endif
    }

    // The largest of ``value`` over the ranks, on rank 0.
    uint64_t most(uint64_t value) {
#ifdef TWINNET_MPI
        if (size > 1) {
            uint64_t found = 0;
            MPI_Reduce(&value, &found, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
            return first() ? found : value;
        }
#endif
        return value;
    }

    // Every rank's ``words`` one after the other, in order of rank, on rank 0 (``words`` is
    // replaced there): 64-bit words or bytes.
    void gather(std::vector<uint64_t>& words) {
        gather_as(words, TWINNET_MPI_TYPE(MPI_UINT64_T));
    }
    void gather(std::vector<unsigned char>& bytes) {
        gather_as(bytes, TWINNET_MPI_TYPE(MPI_BYTE));
    }

#ifdef TWINNET_MPI
    template <class T> void gather_as(std::vector<T>& items, MPI_Datatype type) {
        if (size == 1) return;
        int count = (int)items.size();
        std::vector<int> counts(size), offsets(size);
        MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        std::vector<T> all;
        if (first()) {
            int total = 0;
            for (int r = 0; r < size; r++) offsets[r] = total, total += counts[r];
            all.resize(total);
        }
        MPI_Gatherv(items.data(), count, type, all.data(), counts.data(), offsets.data(), type,
                    0, MPI_COMM_WORLD);
        if (first()) items.swap(all);
    }
#else
    template <class T> void gather_as(std::vector<T>&, int) {}
#endif

    // Each peer's bytes: ``out[p]`` sent to rank p, ``in[p]`` received from it (sized by the
    // caller: both sides know every boundary wire).
    void exchange(std::vector<std::vector<unsigned char>>& out,
                  std::vector<std::vector<unsigned char>>& in) {
#ifdef TWINNET_MPI
        if (size > 1) {
            std::vector<MPI_Request> requests;
            requests.reserve(2 * size);
            for (int p = 0; p < size; p++) {
                if (p == rank) continue;
                if (!in[p].empty()) {
                    requests.emplace_back();
                    MPI_Irecv(in[p].data(), (int)in[p].size(), MPI_BYTE, p, 0, MPI_COMM_WORLD,
                              &requests.back());
                }
                if (!out[p].empty()) {
                    requests.emplace_back();
                    MPI_Isend(out[p].data(), (int)out[p].size(), MPI_BYTE, p, 0,
                              MPI_COMM_WORLD, &requests.back());
                }
            }
            MPI_Waitall((int)requests.size(), requests.data(), MPI_STATUSES_IGNORE);
        }
#else
        (void)out;
        (void)in;
#endif
    }
};

#endif  // TWINNET_TRAFFIC_RANKS_HPP
