#include "experts/cache_warmer.h"

#include <algorithm>

namespace strata {

namespace {

// One load per 64-byte line: the load, not its value, is the point (the sum only keeps the
// compiler from dropping the loads). Sequential demand loads also set the hardware prefetchers
// going along the chunk.
uint64_t read_lines(const uint8_t* data, uint64_t bytes) {
    uint64_t sum = 0;
    for (uint64_t offset = 0; offset < bytes; offset += 64) sum += data[offset];
    if (bytes > 0) sum += data[bytes - 1];  // the last line when bytes is not a multiple of 64
    return sum;
}

// The lines read go down from this core's L1/L2 to the shared L3 (CLDEMOTE, where the CPU has
// it; a no-op elsewhere, the instruction is a hint): the lane's products run on whichever thread
// claims the rows, and a line in the shared L3 is nearer to every other core than one held in
// this core's L2. Run on the chunk before the one just read, so its loads have landed.
#if defined(__x86_64__)
__attribute__((target("cldemote"))) void demote_lines(const uint8_t* data, uint64_t bytes) {
    for (uint64_t offset = 0; offset < bytes; offset += 64) __builtin_ia32_cldemote(data + offset);
}
#else
void demote_lines(const uint8_t*, uint64_t) {}
#endif

}  // namespace

void CacheWarmer::clear() {
    chunks_.clear();
    bytes_ = 0;
    stop_.store(false, std::memory_order_relaxed);
}

void CacheWarmer::add(const void* data, uint64_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (uint64_t offset = 0; offset < bytes; offset += kChunkBytes) {
        chunks_.push_back({p + offset, std::min(kChunkBytes, bytes - offset)});
    }
    bytes_ += bytes;
}

uint64_t CacheWarmer::run(ThreadPool& pool) {
    if (chunks_.empty()) return 0;
    const int threads = pool.size();
    std::vector<uint64_t>& read = read_per_thread_;
    read.assign(static_cast<size_t>(threads), 0);  // grows once: no allocation per step after that
    std::atomic<uint64_t> sink{0};
    pool.parallel_for(threads, [&](int64_t begin, int64_t end, int) {
        for (int64_t w = begin; w < end; ++w) {
            uint64_t sum = 0, done = 0;
            const uint8_t* previous = nullptr;  // the last piece read, demoted after the next one
            uint64_t previous_bytes = 0;
            bool stopped = false;
            for (size_t c = static_cast<size_t>(w); c < chunks_.size() && !stopped; c += static_cast<size_t>(threads)) {
                // The stop is checked every kPieceBytes: a read from DRAM under load takes ~1 µs.
                for (uint64_t offset = 0; offset < chunks_[c].bytes; offset += kPieceBytes) {
                    if ((stopped = stop_.load(std::memory_order_relaxed))) break;
                    const uint8_t* piece = chunks_[c].data + offset;
                    const uint64_t bytes = std::min(kPieceBytes, chunks_[c].bytes - offset);
                    sum += read_lines(piece, bytes);
                    if (previous && demote_) demote_lines(previous, previous_bytes);
                    previous = piece, previous_bytes = bytes;
                    done += bytes;
                }
            }
            if (previous && demote_) demote_lines(previous, previous_bytes);
            read[static_cast<size_t>(w)] = done;
            sink.fetch_add(sum, std::memory_order_relaxed);
        }
    });
    uint64_t total = 0;
    for (uint64_t r : read) total += r;
    return total;
}

}  // namespace strata
