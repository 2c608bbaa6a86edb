#pragma once
// Reads weight bytes into the CPU's caches ahead of the products that will need them. In a
// decode step of the GPU's expert tiers the CPU lane waits, between two layers, for the GPU's
// combine, attention and router and for the routing's trip to the host (~100 µs a layer, when
// its own work is ~150 µs). The next layer's router, run on the current hidden state, predicts
// which experts come next; the lane spends that wait reading the likely ones, so that when the
// routing arrives part of its work is in cache instead of in DRAM. The read stops as soon as the
// lane is needed (stop()), so it never delays a step.
//
//   CacheWarmer warmer;
//   warmer.clear();  warmer.add(gate_bytes, n);  warmer.add(up_bytes, n);   // highest priority first
//   lane thread:  warmer.run(pool);            step thread:  warmer.stop();  lane.wait();

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"

namespace strata {

class CacheWarmer {
public:
    // Chunks are what threads take in turn (thread w of T: chunks w, w + T, ...); a thread checks
    // for stop() before each piece of a chunk.
    static constexpr uint64_t kChunkBytes = 16 * 1024;
    static constexpr uint64_t kPieceBytes = 2 * 1024;

    // Forgets the ranges and a stop() from before (call while no run() is in progress).
    void clear();
    // A range to read; ranges are read roughly in the order they were added.
    void add(const void* data, uint64_t bytes);
    bool empty() const { return chunks_.empty(); }
    uint64_t bytes() const { return bytes_; }

    // Reads every cache line of the ranges on the pool's threads until all are read or stop() is
    // called; returns the bytes read. Thread w of T reads chunks w, w + T, ...: at any moment the
    // threads work on neighbouring chunks, so the first ranges are read first.
    uint64_t run(ThreadPool& pool);
    // From any thread: run() returns after each thread's current piece.
    void stop() { stop_.store(true, std::memory_order_relaxed); }
    // Whether read lines are moved down to the shared L3 (on by default; see cache_warmer.cpp).
    void set_demote(bool demote) { demote_ = demote; }

private:
    struct Chunk {
        const uint8_t* data;
        uint64_t bytes;
    };
    std::vector<Chunk> chunks_;
    std::vector<uint64_t> read_per_thread_;
    uint64_t bytes_ = 0;
    bool demote_ = true;
    std::atomic<bool> stop_{false};
};

}  // namespace strata
