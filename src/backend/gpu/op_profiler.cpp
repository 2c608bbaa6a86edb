// OpProfiler (backend/gpu/op_profiler.h): event pairs kept between passes, so a profiled forward
// creates events only the first time it reaches a new op count.
#include "backend/gpu/op_profiler.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "core/check.h"

namespace strata::gpu {

OpProfiler::~OpProfiler() = default;

void OpProfiler::begin(const char* name) {
    const size_t i = open_++;
    while (events_.size() < 2 * open_) events_.push_back(std::make_unique<GpuEvent>());
    if (names_.size() < open_) names_.resize(open_);
    names_[i] = name;
    unended_.push_back(i);
    events_[2 * i]->record(stream_);
}

void OpProfiler::end() {
    STRATA_CHECK(!unended_.empty(), "OpProfiler::end without begin");
    // The op ending is the innermost one not yet ended: scopes nest (the expert tiers queue the
    // next layer's router inside their own op), and an outer op's time includes its inner ones'.
    events_[2 * unended_.back() + 1]->record(stream_);
    unended_.pop_back();
}

void OpProfiler::flush() {
    STRATA_CHECK(unended_.empty(), "OpProfiler::flush inside an op");
    OpProfileTotals& totals = op_profile_totals();
    for (size_t i = 0; i < open_; ++i) {
        events_[2 * i + 1]->synchronize();
        totals.add(names_[i], static_cast<double>(events_[2 * i + 1]->ms_since(*events_[2 * i])));
    }
    open_ = 0;
}

}  // namespace strata::gpu
