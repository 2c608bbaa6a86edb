#pragma once
// Words that carry their own sequence tag, for a few KB crossing between the host and a GPU
// through page-locked memory both can address. Each 32-bit word travels as one 64-bit pair,
// (tag << 32) | word, written by a single aligned 8-byte store; a reader that finds a pair's tag
// equal to the transfer's knows that word has arrived. So the reader polls the data itself: no
// flag after the data, no fence between them, and no second trip over the bus to read the data
// once the flag showed. While a copy engine streams host → VRAM, a kernel's fence costs ~3.5 µs
// and a read of host memory ~7.6 µs (bench/results/2026-12-01-chain-signals); the expert tiers'
// decode pays them twice a layer (the routing up, the CPU lane's sum down).
//
// The GPU's side is gpu_copy_words_tagged and gpu_await_tagged_words (backend/gpu/gpu_ops.h);
// this is the host's:
//   write_tagged_words(pairs, words, n, tag);                       // the CPU lane's sum
//   await_tagged_words(pairs, n, tag, out, [&] { return event.done(); });   // the routing
// Tags are never 0 (a cleared buffer holds none) and a transfer's tag differs from the last one's.

#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/check.h"
#include "core/spin_wait.h"

namespace strata {

inline uint64_t tagged_word(uint32_t word, uint32_t tag) { return (static_cast<uint64_t>(tag) << 32) | word; }

// pairs[i] = (tag, words[i]) for n 32-bit words; each pair by one store.
inline void write_tagged_words(uint64_t* pairs, const void* words, uint64_t n, uint32_t tag) {
    const auto* w = static_cast<const uint32_t*>(words);
    for (uint64_t i = 0; i < n; ++i) std::atomic_ref<uint64_t>(pairs[i]).store(tagged_word(w[i], tag), std::memory_order_relaxed);
}

// Spins until each of the n pairs holds `tag`, copying its word to out[i]. `writer_done()` says
// whether the writer has finished (the event behind a kernel): it is asked every 1024 spins, and
// once it says so a little more spinning is allowed for stores still on their way, after which a
// missing word is reported as a bug rather than spun on forever.
template <class WriterDone>
void await_tagged_words(const uint64_t* pairs, uint64_t n, uint32_t tag, void* out, WriterDone writer_done) {
    auto* o = static_cast<uint32_t*>(out);
    uint64_t spins = 0, grace = 0;
    bool done = false;
    for (uint64_t i = 0; i < n; ++i) {
        // (const_cast: atomic_ref takes a non-const object; it is only loaded.)
        const std::atomic_ref<uint64_t> pair(const_cast<uint64_t&>(pairs[i]));
        uint64_t v = pair.load(std::memory_order_relaxed);
        while (static_cast<uint32_t>(v >> 32) != tag) {
            cpu_relax();
            if (done) {
                STRATA_CHECK(++grace < (1u << 20), "a GPU kernel's tagged words never reached the host");
            } else if (++spins % 1024 == 0) {
                done = writer_done();
            }
            v = pair.load(std::memory_order_relaxed);
        }
        o[i] = static_cast<uint32_t>(v);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
}

}  // namespace strata
