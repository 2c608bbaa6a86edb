// The GPU expert tiers' CPU lane (experts/gpu_expert_tiers_impl.h): which misses it takes, its
// thread's life from one step to the next, and the next layer's experts it reads into cache
// while the GPU finishes the layer.
//
// A lane started on its thread (overlap) is left running when forward() returns, when the GPU
// waits for it (early combine). The next step finds it done once its routing arrived (the GPU
// passed the combine that waited for the lane): release_lane() settles it then, and join_lane()
// joins its thread after the step is planned, so that the two overlap.
#include <atomic>
#include <cmath>
#include <limits>

#include "core/spin_wait.h"
#include "core/tagged_words.h"
#include "experts/gpu_expert_tiers_impl.h"

namespace strata::gpu_tiers {

// The misses' lanes (experts/miss_lanes.h): cpu_lane_ and stream_lane_ from stream_lane_.
void GpuExpertTiers::choose_cpu_lane(const TierLayer& L, int64_t li) {
    misses_.clear();
    for (int32_t x : stream_lane_) {
        // An expert the last lane read into cache is the CPU's first choice: the coldest heat.
        const bool warm = warmed_layer_ == li && std::find(warmed_.begin(), warmed_.end(), x) != warmed_.end();
        const double heat = warm ? std::numeric_limits<double>::lowest() : policy_->heat(id(li, x));
        misses_.push_back({x, static_cast<int64_t>(by_expert_[static_cast<size_t>(x)].size()), heat});
    }
    const double backlog_s = link_backlog_on_ ? std::max(0.0, seconds_between(Clock::now(), link_free_at_)) : 0.0;
    const MissSplit& split = lanes_.split(misses_, L.expert_bytes(), backlog_s);
    cpu_lane_ = split.cpu;
    warm_offered_ = warmed_layer_ == li ? warmed_.size() : 0;
    warm_used_ = 0;
    if (warmed_layer_ == li) {
        for (int32_t x : cpu_lane_) warm_used_ += std::count(warmed_.begin(), warmed_.end(), x);
    }
    warmed_layer_ = -1;
    stream_lane_ = split.streamed;
    cpu_pairs_ = 0;
    for (int32_t x : cpu_lane_) cpu_pairs_ += by_expert_[static_cast<size_t>(x)].size();
}

// The CPU lane of lane_job_: its sum into job.out, then whether the GPU's part was done by then
// (the lanes' feedback), then the counter the early combine waits on (or, for a tagged sum, the
// sum as tagged words, the counter raised as the down products began). Runs on the lane's thread
// (overlapping the GPU's part) or on the caller's.
void GpuExpertTiers::run_lane() {
    const LaneJob& j = lane_job_;
    // x86 keeps the sum's stores before this one; the GPU reads the sum in a later kernel.
    const auto raise_counter = [&] {
        if (j.seq != 0) std::atomic_ref<uint32_t>(*lane_done_.as<uint32_t>()).store(j.seq, std::memory_order_release);
    };
    // A tagged sum (decode): the GPU polls the pairs from when the counter shows, which is raised
    // as the down products begin, some tens of µs before the sum is written.
    const auto send_sum = [&] {
        if (j.pairs) write_tagged_words(j.pairs, j.out, static_cast<uint64_t>(j.n * j.e), j.seq);
    };
    const auto t0 = Clock::now();
    lane_begin_ = t0;
    try {
        compute_on_cpu(*j.layer, j.h, j.weights, j.n, j.e, j.out, *j.cpu, j.pairs ? raise_counter : std::function<void()>{});
    } catch (...) {
        // The GPU must not wait for a sum that will not come: it goes on (with whatever the buffer
        // holds) and the host fails the pass when it awaits the lane (rethrown there).
        lane_computed_.store(true, std::memory_order_release);
        raise_counter();
        send_sum();
        throw;
    }
    send_sum();
    lane_seconds_ = seconds_since(t0);
    lane_gpu_first_ = !j.gpu_part || (gpu_part_queued_.load(std::memory_order_acquire) && experts_done_.done());
    lane_computed_.store(true, std::memory_order_release);  // what settle_lane reads is written
    raise_counter();
    lane_end_ = Clock::now();
    // Until the next step needs the lane (await_lane stops it): the next layer's likely experts.
    if (warm_ready_.load(std::memory_order_acquire)) warmer_.run(j.cpu->pool());
}

// After a lane ended: its feedback and time, and its experts' pair lists cleared.
void GpuExpertTiers::settle_lane() {
    lanes_.decode_feedback(lane_gpu_first_);
    if (options_.stats) {
        std::unique_lock<std::mutex> lock;
        if (options_.stats_mutex) lock = std::unique_lock<std::mutex>(*options_.stats_mutex);
        GpuExpertTierStats& st = *options_.stats;
        st.seconds_cpu += lane_seconds_;
        st.cpu_expert_us = lanes_.cpu_expert_s() * 1e6;
        st.cpu_token_us = lanes_.cpu_token_s() * 1e6;
        st.cpu_cost_scale = lanes_.cpu_scale();
        st.decode_cpu_share = lanes_.decode_cpu_share();
    }
    for (int32_t x : lane_experts_) by_expert_[static_cast<size_t>(x)].clear();
    lane_experts_.clear();
}

// Waits for a lane started on the lane's thread, if one is pending, and settles it.
void GpuExpertTiers::await_lane() {
    if (lane_pending_) {
        lane_pending_ = false;
        warmer_.stop();
        try {
            cpu_lane_task_->wait();  // rethrows what the lane threw
        } catch (...) {
            for (int32_t x : lane_experts_) by_expert_[static_cast<size_t>(x)].clear();
            lane_experts_.clear();
            throw;
        }
        settle_lane();
        timeline_.host_mark_at(lane_begin_, "L{} CPU lane began", lane_layer_);
        timeline_.host_mark_at(lane_end_, "L{} CPU lane ended (its sum, not its warming)", lane_layer_);
    }
    join_lane();
}

// A pending lane whose sum is known to be done (the step's routing came after the combine that
// waited for it): asks its warming to stop and settles it, leaving its thread to be joined
// (join_lane) once this thread has planned the step, so the two overlap.
void GpuExpertTiers::release_lane() {
    if (!lane_pending_) return;
    lane_pending_ = false;
    lane_joinable_ = true;
    warmer_.stop();
    // Already true: only orders this thread's reads after the lane's writes.
    while (!lane_computed_.load(std::memory_order_acquire)) cpu_relax();
    settle_lane();
}

void GpuExpertTiers::join_lane() {
    if (!lane_joinable_) return;
    lane_joinable_ = false;
    cpu_lane_task_->wait();  // rethrows what the lane threw (its pair lists are cleared)
    timeline_.host_mark_at(lane_begin_, "L{} CPU lane began", lane_layer_);
    timeline_.host_mark_at(lane_end_, "L{} CPU lane ended (its sum, not its warming)", lane_layer_);
}

// Σ over the CPU lane's pairs of weight · expert(h), per token, into out (n rows of e).
void GpuExpertTiers::compute_on_cpu(const TierLayer& L, const float* h, const float* weights, int64_t n, int64_t e,
                                    float* out, CpuContext& cpu, const std::function<void()>& before_down) {
    const auto t0 = Clock::now();
    cpu_lane_math_.compute(L.host, options_.activation, cpu_lane_, by_expert_, step_k_, h, weights, n, e, out, cpu,
                           before_down);
    lanes_.cpu_feedback(seconds_since(t0));  // refines the CPU cost model
}

// The experts of the next layer the lane reads into cache after its sum (decode, with the lane
// running on its thread): the predicted ones (best first) that are neither cached nor copied
// ahead, as many as the CPU's share of the misses is likely to take. Returns their count; the
// lane sees them once warm_ready_ is set.
uint64_t GpuExpertTiers::plan_warm(const gpu::RoutedExpertsStep& step, const int32_t* predicted, int64_t li) {
    const auto next = static_cast<size_t>(step.predicted_layer);
    if (!warm_enabled_ || next >= layer_index_.size() || layer_index_[next] != li + 1) return 0;
    const int64_t nli = li + 1;
    const Prefetched& ahead = prefetched_[nli & 1];
    const int64_t copied = ahead.layer == nli ? static_cast<int64_t>(ahead.experts.size()) : 0;
    const auto want = static_cast<size_t>(std::lround(lanes_.expected_decode_cpu_share() * static_cast<double>(step.k - copied)));
    warmed_.clear();
    for (int64_t j = 0; j < step.k && warmed_.size() < want; ++j) {
        const int32_t x = predicted[j];
        if (x < 0 || static_cast<uint32_t>(x) >= n_expert_ || slots_.resident(id(nli, x))) continue;
        if (ahead.layer == nli &&
            std::any_of(ahead.experts.begin(), ahead.experts.end(), [&](const auto& a) { return a.first == x; }))
            continue;
        warmed_.push_back(x);
    }
    warmed_layer_ = warmed_.empty() ? -1 : nli;
    if (warmed_.empty()) return 0;
    const TierLayer& N = layers_[static_cast<size_t>(nli)];
    warmer_.clear();
    for (int32_t x : warmed_) {
        warmer_.add(N.host.gate.matrix(x), N.gate_bytes);
        warmer_.add(N.host.up.matrix(x), N.up_bytes);
        warmer_.add(N.host.down.matrix(x), N.down_bytes);
    }
    warm_ready_.store(true, std::memory_order_release);
    return warmed_.size();
}

}  // namespace strata::gpu_tiers
