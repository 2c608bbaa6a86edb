#pragma once
// Where GPU time goes, per op: with profiling on (STRATA_GPU_PROFILE=1, or `strata bench
// --gpu-profile`), the GPU forward brackets every op it queues with a pair of events on the
// context's stream and names it; after each forward pass the event times are added to
// process-wide totals by name, which `strata bench` reads per test. Off, an OpScope is one null
// test: no events, no synchronisation, and the decode step can be a graph (profiling runs eagerly,
// because events inside a capture would not time the replayed kernels).
//
//   gpu::OpScope scope(ctx, "matmul attn_q");   // records start; its destructor records the end
//   gpu::gpu_matmul(...);
//   ...  ctx.synchronize(); if (ctx.profiler()) ctx.profiler()->flush();
//   std::vector<gpu::OpProfileRow> rows = gpu::op_profile_totals().take();
//
// The switch and the totals are header-only so that the CLI reads them in builds without a GPU
// (where they stay empty); OpProfiler itself is compiled with the GPU backend only.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backend/gpu/device_runtime.h"
#include "core/op_totals.h"

namespace strata::gpu {

// The rows and totals are shared with the CPU's op profile (core/op_totals.h).
using OpProfileRow = strata::OpProfileRow;
using OpProfileTotals = strata::OpTotals;

inline std::atomic<bool>& op_profiling_switch() {
    static std::atomic<bool> on{false};
    return on;
}
// Read when a GPU model loads: models loaded while it is on profile every forward pass.
inline bool op_profiling_enabled() { return op_profiling_switch().load(); }
inline void enable_op_profiling(bool on) { op_profiling_switch().store(on); }
inline OpProfileTotals& op_profile_totals() {
    static OpProfileTotals totals;
    return totals;
}

// The events of one context's ops since the last flush (backend/gpu/op_profiler.cpp).
class OpProfiler {
public:
    explicit OpProfiler(void* stream) : stream_(stream) {}
    OpProfiler(const OpProfiler&) = delete;
    OpProfiler& operator=(const OpProfiler&) = delete;
    ~OpProfiler();

    void begin(const char* name);  // `name` must outlive the next flush (a literal)
    void end();
    // Once the stream has finished the bracketed work: adds each op's time to op_profile_totals().
    void flush();

private:
    void* stream_;
    std::vector<std::unique_ptr<GpuEvent>> events_;  // 2i: start of op i, 2i + 1: its end; reused
    std::vector<const char*> names_;
    size_t open_ = 0;  // ops begun since the last flush
    std::vector<size_t> unended_;  // ops begun and not yet ended, innermost last
};


// Brackets the ops queued during its lifetime; nothing when the context has no profiler.
class OpScope {
public:
    OpScope(GpuContext& ctx, const char* name) : profiler_(ctx.profiler()) {
        if (profiler_) profiler_->begin(name);
    }
    ~OpScope() {
        if (profiler_) profiler_->end();
    }
    OpScope(const OpScope&) = delete;
    OpScope& operator=(const OpScope&) = delete;

private:
    OpProfiler* profiler_;
};

}  // namespace strata::gpu
