#pragma once
// Where a CPU forward's time goes, per op (`strata bench --cpu-profile`, or STRATA_CPU_PROFILE=1):
// the ops the forward calls on its own thread (matmuls, attention, norms, the MoE routing...) are
// timed with the host's clock while their thread pool works, and summed by name. An op's time is
// exclusive: a matmul inside the MoE experts' pass counts as "matmul", not as the pass. Rows come
// in the order their ops first ended. Off, a scope is one relaxed load and a branch.
//
//   { CpuOpScope scope("attention");  cpu_attention(...); }
//   std::vector<OpProfileRow> rows = cpu_op_profile_totals().take();   // ms summed by op

#include <atomic>
#include <chrono>

#include "core/op_totals.h"

namespace strata {

std::atomic<bool>& cpu_op_profiling_switch();
inline bool cpu_op_profiling_enabled() { return cpu_op_profiling_switch().load(std::memory_order_relaxed); }
inline void enable_cpu_op_profiling(bool on) { cpu_op_profiling_switch().store(on); }
OpTotals& cpu_op_profile_totals();

class CpuOpScope {
public:
    explicit CpuOpScope(const char* name) : name_(cpu_op_profiling_enabled() ? name : nullptr) {
        if (name_) begin();
    }
    ~CpuOpScope() {
        if (name_) end();
    }
    CpuOpScope(const CpuOpScope&) = delete;
    CpuOpScope& operator=(const CpuOpScope&) = delete;

private:
    void begin();
    void end();

    const char* name_;
    std::chrono::steady_clock::time_point start_;
    double nested_ms_ = 0.0;    // time of the scopes opened inside this one (not its own)
    CpuOpScope* parent_ = nullptr;
};

}  // namespace strata
