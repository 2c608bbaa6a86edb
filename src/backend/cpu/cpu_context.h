#pragma once
// What every CPU op needs besides its operands: the thread pool and reusable scratch memory.
// Scratch grows to the largest size asked for and is then reused, so the token loop does not
// allocate once the first step has run.
//
//   CpuContext ctx(pool);
//   float* tmp = ctx.scratch_floats(0, n);   // slot 0, valid until the next call for slot 0

#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_tuning.h"
#include "core/aligned_buffer.h"
#include "core/thread_pool.h"

namespace strata {

class CpuContext {
public:
    explicit CpuContext(ThreadPool& pool, const CpuTuning& tuning = {}) : pool_(pool), tuning_(tuning) {}
    ThreadPool& pool() { return pool_; }
    const CpuTuning& tuning() const { return tuning_; }

    // A buffer of at least `bytes` bytes for scratch slot `slot` (slots let one op hold several).
    uint8_t* scratch(int slot, size_t bytes);
    float* scratch_floats(int slot, size_t count) { return reinterpret_cast<float*>(scratch(slot, count * sizeof(float))); }

    // Slots used by the ops themselves; callers use kFirstFreeSlot and above.
    static constexpr int kMatmulActivationSlot = 0;
    static constexpr int kAttentionScoresSlot = 1;
    static constexpr int kFirstFreeSlot = 4;

private:
    ThreadPool& pool_;
    CpuTuning tuning_;
    std::vector<AlignedBuffer> slots_;
};

}  // namespace strata
