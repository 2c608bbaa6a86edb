// OpProfiler (backend/gpu/op_profiler.h): event pairs kept between passes, so a profiled forward
// creates events only the first time it reaches a new op count.
#include "backend/gpu/op_profiler.h"

#include "core/check.h"

namespace strata::gpu {

OpProfiler::~OpProfiler() = default;

void OpProfiler::begin(const char* name) {
    const size_t i = open_++;
    while (events_.size() < 2 * open_) events_.push_back(std::make_unique<GpuEvent>());
    if (names_.size() < open_) names_.resize(open_);
    names_[i] = name;
    events_[2 * i]->record(stream_);
}

void OpProfiler::end() {
    STRATA_CHECK(open_ > 0, "OpProfiler::end without begin");
    // Scopes nest only as a sequence (one op at a time), so the op ending is the last one begun.
    events_[2 * (open_ - 1) + 1]->record(stream_);
}

void OpProfiler::flush() {
    OpProfileTotals& totals = op_profile_totals();
    for (size_t i = 0; i < open_; ++i) {
        events_[2 * i + 1]->synchronize();
        totals.add(names_[i], static_cast<double>(events_[2 * i + 1]->ms_since(*events_[2 * i])));
    }
    open_ = 0;
}

}  // namespace strata::gpu
