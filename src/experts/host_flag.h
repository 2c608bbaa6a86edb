#pragma once
// A counter in page-locked host memory that a kernel raises once the data it wrote to the host is
// visible there (gpu_copy_words_then_flag), so that the host learns of it by polling memory
// instead of waiting on an event. While the link streams experts into VRAM, an event's record and
// the host's wait for it cost ~6 µs more than a kernel's write; the expert tiers' decode waits
// twice a layer (the routing, the next layer's prediction): bench/results/2026-11-30-chain-events.
//
//   HostFlag flag;  flag.allocate();                       // once; unallocated: callers use events
//   const uint32_t seq = flag.next();
//   gpu_copy_words_then_flag(..., flag.device_word(), seq, ctx);  event.record(stream);
//   flag.await(seq, event);                                // the host: spins until seq shows

#include <atomic>
#include <cstdint>
#include <string>

#include "backend/gpu/device_runtime.h"
#include "core/check.h"
#include "core/spin_wait.h"

namespace strata {

class HostFlag {
public:
    // False where the runtime refuses page-locked memory or does not map it into the GPU's space.
    bool allocate() {
        std::string error;
        if (!word_.allocate(64, &error) || word_.device_view() == nullptr) return false;
        *word_.as<uint32_t>() = 0;
        return true;
    }
    // The word as kernels write it, or null when not allocated.
    uint32_t* device_word() const { return static_cast<uint32_t*>(word_.device_view()); }
    // The value for the next raise (never 0, the value before the first).
    uint32_t next() {
        if (++seq_ == 0) ++seq_;
        return seq_;
    }
    // Spins until the word holds `seq`. `after` is an event recorded behind the raising kernel:
    // it is asked now and then, so that a failed kernel is reported (done() throws) instead of
    // spun on forever, and a done event with no flag is a bug reported as such.
    void await(uint32_t seq, const gpu::GpuEvent& after) const {
        const std::atomic_ref<uint32_t> word(*word_.as<uint32_t>());
        for (uint32_t spins = 1; word.load(std::memory_order_acquire) != seq; ++spins) {
            if (spins % 1024 == 0 && after.done()) {
                // The kernel has ended, so its store is on its way: a little more spinning, then
                // a value still missing is a bug.
                for (uint32_t extra = 0; extra < (1u << 20); ++extra) {
                    if (word.load(std::memory_order_acquire) == seq) return;
                    cpu_relax();
                }
                STRATA_CHECK(false, "a GPU kernel's flag never reached the host");
            }
            cpu_relax();
        }
    }

private:
    gpu::PinnedBuffer word_;
    uint32_t seq_ = 0;
};

}  // namespace strata
