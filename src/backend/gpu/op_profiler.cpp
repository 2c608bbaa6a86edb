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

namespace strata::gpu {

bool OpAblation::mutes(const char* op) const {
    const std::string_view name(op);
    for (const std::string& pattern : names) {
        if (!pattern.empty() && pattern.back() == '*') {
            if (name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1))) return true;
        } else if (name == pattern) {
            return true;
        }
    }
    return false;
}

OpAblation parse_op_ablation(const char* ablate, const char* extra_launches) {
    OpAblation a;
    if (ablate != nullptr) {
        std::string_view list(ablate);
        while (!list.empty()) {
            const size_t comma = list.find(',');
            const std::string_view item = list.substr(0, comma);
            if (!item.empty()) a.names.emplace_back(item);
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
    }
    if (extra_launches != nullptr) a.extra_launches = std::max(0, std::atoi(extra_launches));
    return a;
}

const OpAblation& op_ablation() {
    static const OpAblation ablation = [] {
        OpAblation a = parse_op_ablation(std::getenv("STRATA_GPU_ABLATE"), std::getenv("STRATA_GPU_EXTRA_LAUNCHES"));
        if (a.active()) {
            std::fprintf(stderr,
                         "strata: STRATA_GPU_ABLATE / STRATA_GPU_EXTRA_LAUNCHES are set: a timing study, every "
                         "output of the GPU forward is wrong\n");
        }
        return a;
    }();
    return ablation;
}

}  // namespace strata::gpu
