#pragma once
// A diagnostic for the GPU expert tiers: the timeline of one forward pass (a prompt batch or a
// decode step), as events on the compute and copy streams and moments on the host, printed to
// stderr when the pass ends. It showed, for one, the hits of a prompt step waiting for a copy
// engine behind the experts streamed ahead (bench/results/2026-11-30-scan-steps).
// STRATA_TIERS_TIMELINE=N records the process's N-th forward pass through the tiers; unset, every
// call is one test of a flag.
//
//   timeline.begin_pass(stream);                   // at a pass's first layer step
//   timeline.mark(stream, "L{} copy start", li);  // GPU: when the stream reaches this point
//   timeline.host_mark("L{} host has routing", li);
//   timeline.end_pass(ctx, copy_stream);          // waits for both streams, prints, stops

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/gpu/device_runtime.h"

namespace strata {

class TierTimeline {
public:
    // want_pass > 0: the forward pass to record (the first is 1); 0: none.
    explicit TierTimeline(int want_pass) : want_pass_(want_pass) {}
    bool on() const { return on_; }

    // At the first layer step of a forward pass (once per pass: until end_pass).
    void begin_pass(void* stream) {
        if (want_pass_ <= 0 || in_pass_) return;
        in_pass_ = true;
        on_ = ++pass_ == want_pass_;
        if (!on_) return;
        base_.record(stream);
        base_.synchronize();
        host_base_ = Clock::now();
        used_ = 0;
        host_.clear();
    }
    template <typename... Args>
    void mark(void* stream, fmt::format_string<Args...> format, Args&&... args) {
        if (!on_) return;
        if (used_ == events_.size()) events_.push_back(std::make_unique<gpu::GpuEvent>());
        events_[used_]->record(stream);
        if (labels_.size() <= used_) labels_.resize(used_ + 1);
        labels_[used_++] = fmt::format(format, std::forward<Args>(args)...);
    }
    template <typename... Args>
    void host_mark(fmt::format_string<Args...> format, Args&&... args) {
        if (on_) host_mark_at(Clock::now(), format, std::forward<Args>(args)...);
    }
    // A moment another thread noted (e.g. the CPU lane's end), logged by this one.
    template <typename... Args>
    void host_mark_at(std::chrono::steady_clock::time_point at, fmt::format_string<Args...> format, Args&&... args) {
        if (!on_) return;
        host_.emplace_back(std::chrono::duration<double, std::milli>(at - host_base_).count(),
                           fmt::format(format, std::forward<Args>(args)...));
    }
    // Prints the recorded pass (ms since its start, GPU and host rows in time order) once both
    // streams are done.
    void end_pass(gpu::GpuContext& ctx, gpu::GpuStream& copy_stream) {
        in_pass_ = false;
        if (!on_) return;
        on_ = false;
        ctx.synchronize();
        copy_stream.synchronize();
        std::vector<std::pair<double, std::string>> rows = host_;
        for (auto& row : rows) row.second = "host " + row.second;
        for (size_t i = 0; i < used_; ++i) rows.emplace_back(events_[i]->ms_since(base_), "gpu  " + labels_[i]);
        std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [ms, label] : rows) std::fprintf(stderr, "timeline %9.3f %s\n", ms, label.c_str());
    }

private:
    using Clock = std::chrono::steady_clock;
    int want_pass_ = 0, pass_ = 0;
    bool in_pass_ = false, on_ = false;
    gpu::GpuEvent base_;
    Clock::time_point host_base_;
    std::vector<std::unique_ptr<gpu::GpuEvent>> events_;
    std::vector<std::string> labels_;
    size_t used_ = 0;
    std::vector<std::pair<double, std::string>> host_;
};

}  // namespace strata
