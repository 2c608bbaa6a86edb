#include "backend/cpu/cpu_op_profile.h"


namespace strata {

namespace {
// The innermost open scope of this thread: a closing scope hands its time to it.
thread_local CpuOpScope* innermost = nullptr;
}  // namespace

std::atomic<bool>& cpu_op_profiling_switch() {
    static std::atomic<bool> on{false};
    return on;
}

OpTotals& cpu_op_profile_totals() {
    static OpTotals totals;
    return totals;
}

void CpuOpScope::begin() {
    parent_ = innermost;
    innermost = this;
    start_ = std::chrono::steady_clock::now();
}

void CpuOpScope::end() {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    innermost = parent_;
    if (parent_) parent_->nested_ms_ += ms;
    cpu_op_profile_totals().add(name_, ms - nested_ms_);
}

}  // namespace strata
