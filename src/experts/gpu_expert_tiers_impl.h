#pragma once
// The GPU expert tiers' class (experts/gpu_expert_tiers.h says what they do), shared by the files
// that define its parts, each built only with a GPU backend:
//   gpu_expert_tiers_with_gpu.cpp  - making the tiers: slots, pinning, the link's speed, the cache;
//   gpu_tiers_step_with_gpu.cpp    - one MoE layer step (forward), phase by phase;
//   gpu_tiers_lane_with_gpu.cpp    - the CPU lane: its split, its thread, warming the next layer;
//   gpu_tiers_link_with_gpu.cpp    - what crosses the link: the routing up to the host, experts
//                                    down into slots, copies ahead.
// The decisions that need no GPU live in their own files and are tested on any machine:
// miss_lanes.h (the CPU's share), gpu_step_plan.h (the GPU's launches), expert_slots.h
// (residency and admission), scan_steps.h, expert_policy.h, cpu_expert_lane.h.
// Include only from *_with_gpu.cpp files.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/gpu/gpu_ops.h"
#include "core/background_task.h"
#include "experts/cache_warmer.h"
#include "experts/cpu_expert_lane.h"
#include "experts/expert_policy.h"
#include "experts/expert_slots.h"
#include "experts/expert_store.h"
#include "experts/host_pinning.h"
#include "experts/mapped_alias.h"
#include "experts/gpu_expert_tiers.h"
#include "experts/gpu_step_plan.h"
#include "experts/host_flag.h"
#include "experts/link_clock.h"
#include "experts/miss_lanes.h"
#include "experts/scan_steps.h"
#include "experts/tier_timeline.h"

namespace strata::gpu_tiers {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
inline double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// One MoE layer: where each expert's parts are in the mapped file and in a slot.
struct TierLayer {
    ExpertLayerTensors host;           // stacked tensors in the mapped file
    uint64_t gate_bytes = 0, up_bytes = 0, down_bytes = 0;  // one expert's part
    uint64_t up_offset = 0, down_offset = 0;                // within a slot (gate at 0)
    gpu::DeviceWeight gate, up, down;  // views over the slot pool: matrix m = slot m
    // gpt-oss: every expert's biases stay in VRAM (a few MB per layer, indexed by expert id).
    gpu::DeviceBuffer gate_bias, up_bias, down_bias;
    uint64_t expert_bytes() const { return gate_bytes + up_bytes + down_bytes; }
};

// The runtime's page-locking of the mapped file (experts/host_pinning.h), each range locked for the
// tiers' life.
class RuntimePinner final : public HostPinner {
public:
    bool pin(const HostRange& range, std::string* error) override {
        return registrations_.emplace_back().register_range(reinterpret_cast<const void*>(range.begin), range.bytes, true, error);
    }

private:
    std::deque<gpu::HostRegistration> registrations_;  // a deque: a registration never moves
};

// A host buffer in page-locked memory that grows (only at points where no queued copy reads it).
struct PinnedArray {
    gpu::PinnedBuffer buffer;
    template <typename T> bool holds(uint64_t count) const { return buffer.bytes() >= std::max<uint64_t>(count * sizeof(T), 64); }
    template <typename T> T* get(uint64_t count) {
        const uint64_t bytes = std::max<uint64_t>(count * sizeof(T), 64);
        if (buffer.bytes() < bytes) {
            std::string error;
            if (!buffer.allocate(bytes + bytes / 4, &error)) STRATA_CHECK(false, error.c_str());
        }
        return buffer.as<T>();
    }
};

// A VRAM buffer from the context's pool that grows.
struct DeviceArray {
    gpu::DeviceBuffer buffer;
    template <typename T> T* get(gpu::DevicePool& pool, uint64_t count) {
        const uint64_t bytes = std::max<uint64_t>(count * sizeof(T), 64);
        if (buffer.bytes() < bytes) {
            std::string error;
            buffer = pool.allocate(bytes + bytes / 4, &error);
            STRATA_CHECK(static_cast<bool>(buffer), error.c_str());
        }
        return buffer.as<T>();
    }
};

// (expert, slot) pairs: experts copied, or to be copied, into staging slots.
using ExpertSlotList = std::vector<std::pair<int32_t, int32_t>>;

// What the phases of one forward() step share.
struct TierStep {
    const gpu::RoutedExpertsStep* step = nullptr;
    int64_t li = 0;  // the layer's position in layers_
    TierLayer* layer = nullptr;
    int64_t n = 0, k = 0, e = 0, pairs = 0, ff = 0;
    // The routing on the host: ids, weights and (decode with prefetch) the next layer's guess; h.
    int32_t* ids = nullptr;
    float* weights = nullptr;
    int32_t* predicted = nullptr;
    float* h = nullptr;
    uint32_t prediction_seq = 0;
    Clock::time_point t_start, t_routed, t_joined;
    double wait_s = 0, plan_s = 0;
    // The serial path between two decode lanes (GpuExpertTierStats).
    bool lane_was_pending = false;
    double lane_to_routing_s = 0, lane_wake_s = 0, routing_to_lane_s = 0;
    bool scan = false;               // a scan step (scan_steps.h)
    bool wait_prefetch = false;      // some of its experts were copied ahead by the last layer
    size_t prefetched_before = 0;    // experts copied ahead for it, used or not
    int ahead_half = 0;              // the half the experts streamed ahead for it lie in
    bool cpu_part = false, overlap = false, early = false;
    bool tagged_sum = false;         // the lane's sum goes down as tagged words (early combine)
    float* cpu_out = nullptr;        // the CPU lane's sum, on the host
    bool gpu_part = false;
    float* out = nullptr;            // the GPU's rows, one per pair
    const float* d_weights = nullptr;
    int64_t chunks = 0;              // ring halves streamed through
    uint64_t copied_ahead = 0, warmed = 0, admitted = 0;
};

// The device buffers every launch set of one step shares (queue_launch_set).
struct StepLaunch {
    int32_t* sorted = nullptr;  // the plan's parts, in VRAM
    int32_t* tiles = nullptr;
    int32_t* counts = nullptr;
    int tile_width = 0;
    float* gate = nullptr;  // the gate rows (then the activation), one per sorted pair
    float* up = nullptr;
    const gpu::GpuQ8Rows* hx = nullptr;  // int8 activations: h, as the router's matmul quantized it
    const gpu::GpuQ8Rows* gx = nullptr;  // ... and the activation rows, quantized per launch set
    bool biased_act = false;             // biases or gpt-oss's activation: unfused launches
};

class GpuExpertTiers final : public gpu::RoutedExperts {
public:
    GpuExpertTiers(std::vector<ExpertLayerTensors> layers, gpu::GpuContext& ctx, const GpuExpertTierOptions& options);
    Status init(gpu::GpuContext& ctx, GpuExpertTierSummary* summary);

    void forward(const gpu::RoutedExpertsStep& step, gpu::GpuContext& g, CpuContext& cpu) override;
    // The experts copied ahead belong to this forward pass's steps only; the last step's lane
    // ends with the pass.
    void end_forward(gpu::GpuContext& g) override;
    bool predicts_next_layer() const override { return options_.prefetch > 0; }

private:
    uint64_t key_count() const { return static_cast<uint64_t>(layers_.size()) * n_expert_; }
    uint32_t id(int64_t li, int32_t x) const { return static_cast<uint32_t>(li) * n_expert_ + static_cast<uint32_t>(x); }
    uint64_t pairs_of(const std::vector<int32_t>& experts) const;

    // ---- making the tiers (gpu_expert_tiers_with_gpu.cpp) ----
    static Status upload_bias(gpu::GpuContext& ctx, const Weight& w, gpu::DeviceBuffer& out);
    void pin_file(GpuExpertTierSummary* summary);
    void measure_link(gpu::GpuContext& ctx, GpuExpertTierSummary* summary);
    void fill_cache(gpu::GpuContext& ctx);
    void calibrate(const TierLayer& L, int64_t e, CpuContext& cpu);

    // ---- one step's phases, in order (gpu_tiers_step_with_gpu.cpp) ----
    void route(TierStep& s, gpu::GpuContext& g);
    void classify(TierStep& s);
    void start_lane(TierStep& s, CpuContext& cpu);
    void queue_gpu_part(TierStep& s, gpu::GpuContext& g);
    void queue_launch_set(const TierStep& s, const LaunchSet& set, size_t si, const StepLaunch& launch, gpu::GpuContext& g);
    void queue_ahead(TierStep& s);
    void combine(TierStep& s, gpu::GpuContext& g);
    void update_cache(TierStep& s);
    void record_stats(const TierStep& s, Clock::time_point t_policy);
    gpu::GpuExpertActivation gpu_activation() const {
        return options_.activation == ExpertActivation::GptOssClampedSwiGlu ? gpu::GpuExpertActivation::GptOssClampedSwiGlu
                                                                            : gpu::GpuExpertActivation::SwiGlu;
    }

    // ---- the CPU lane (gpu_tiers_lane_with_gpu.cpp) ----
    void choose_cpu_lane(const TierLayer& L, int64_t li);
    void run_lane();
    void settle_lane();
    void await_lane();
    void release_lane();
    void join_lane();
    void compute_on_cpu(const TierLayer& L, const float* h, const float* weights, int64_t n, int64_t e, float* out,
                        CpuContext& cpu, const std::function<void()>& before_down = {});
    uint64_t plan_warm(const gpu::RoutedExpertsStep& step, const int32_t* predicted, int64_t li);

    // ---- the link (gpu_tiers_link_with_gpu.cpp) ----
    void* mapped(const PinnedArray& a, uint64_t bytes) const;
    // A page-locked buffer's GPU address where the mapping's check passed (experts/mapped_alias.h).
    void* view_of(const PinnedArray& a) const { return mapped_reads_ ? a.buffer.device_view() : nullptr; }
    void* lane_sum_view() const;
    // How a step's routing comes up to the host: as tagged pairs (decode), or data then a flag
    // whose value is seq (0: no flag, an event then).
    struct RoutingFetch {
        uint32_t seq = 0;
        bool tagged = false;
    };
    RoutingFetch fetch_routing(const gpu::RoutedExpertsStep& step, int32_t* ids, float* h, gpu::GpuContext& g);
    void await_routing(const RoutingFetch& fetch, const TierStep& s);
    static uint64_t* tagged_pairs(PinnedArray& a, uint64_t words);
    uint64_t* lane_pairs_view(uint64_t words);
    uint32_t fetch_prediction(const gpu::RoutedExpertsStep& step, int32_t* predicted, gpu::GpuContext& g);
    static void await_flag(const HostFlag& flag, uint32_t seq, const gpu::GpuEvent& event);
    bool prefetch_wanted(const gpu::RoutedExpertsStep& step) const;
    uint64_t copy_ahead(const gpu::RoutedExpertsStep& step, const int32_t* predicted, int64_t li);
    void queue_copies_ahead(int64_t li, int64_t nli, const ExpertSlotList& experts, gpu::GpuEvent& copied);
    uint64_t stream_ahead(int64_t li);
    void queue_streamed_chunk(const TierStep& s, size_t si, int half, size_t& streamed, gpu::GpuContext& g);
    void queued_on_link(uint64_t bytes);
    void copy_expert(const TierLayer& L, int32_t x, int32_t slot);

    GpuExpertTierOptions options_;

    // ---- the CPU lane ----
    std::unique_ptr<BackgroundTask> cpu_lane_task_;  // the CPU lane's thread, made at first use
    // The CPU lane's inputs (pointers into the tiers' host buffers, valid until it is awaited).
    struct LaneJob {
        const TierLayer* layer = nullptr;
        const float* h = nullptr;
        const float* weights = nullptr;
        int64_t n = 0, e = 0;
        float* out = nullptr;
        CpuContext* cpu = nullptr;
        bool gpu_part = false;  // a GPU part runs beside it
        uint32_t seq = 0;       // the counter value it raises lane_done_ to (early combine), or 0
        uint64_t* pairs = nullptr;  // where its sum goes as words tagged seq (tagged_sum_), or null
    } lane_job_;
    std::function<void()> lane_fn_ = [this] { run_lane(); };
    bool lane_pending_ = false;                // started on the lane's thread, not yet awaited
    bool lane_joinable_ = false;               // settled by release_lane, its thread not yet joined
    std::atomic<bool> lane_computed_{false};   // the lane's sum and feedback are written
    std::vector<int32_t> lane_experts_;        // its experts
    double lane_seconds_ = 0.0;                // written by the lane, read once it is awaited
    Clock::time_point lane_started_, lane_begin_, lane_end_;  // start call; the lane's first and last moments
    int64_t lane_layer_ = -1;  // (for the timeline)
    bool lane_gpu_first_ = false;
    std::atomic<bool> gpu_part_queued_{false};  // experts_done_ is recorded for the lane's step
    // Early combine (tuning.early_combine; off where the counter cannot be allocated): the counter
    // in page-locked memory that the GPU waits on before the combine.
    bool early_combine_ = options_.tuning.early_combine;
    gpu::PinnedBuffer lane_done_;
    uint32_t lane_seq_ = 0;
    // Warming (plan_warm; tuning.warming): what the lane reads after its sum, set up by the step
    // thread while the lane runs and published by warm_ready_.
    bool warm_enabled_ = options_.tuning.warming != CacheWarming::Off;
    CacheWarmer warmer_;
    std::atomic<bool> warm_ready_{false};
    std::vector<int32_t> warmed_;  // experts of layer warmed_layer_ (-1: none) the lane read
    int64_t warmed_layer_ = -1;
    uint64_t warm_offered_ = 0, warm_used_ = 0;  // this step: warmed experts it found, and gave the lane
    bool calibrated_ = false;
    MissLanes lanes_{options_.miss_lane};
    std::vector<MissedExpert> misses_;
    CpuExpertLane cpu_lane_math_;

    // ---- the link and the GPU's streams ----
    // The routing's and the prediction's arrival on the host (fetch_routing, fetch_prediction,
    // await_flag); off (tuning.routing_flags) or not allocated: events.
    HostFlag routing_flag_, prediction_flag_;
    bool host_flags_on_ = options_.tuning.routing_flags;
    bool mapped_reads_ = true;  // kernels read page-locked buffers through the mapping (checked at load)
    // A decode step's routing up and the CPU lane's sum down as tagged words (core/tagged_words.h):
    // the reader polls the data itself, with no fence or flag after it; tuning.tagged_words off:
    // the flag and the counter.
    bool tagged_on_ = options_.tuning.tagged_words;
    uint32_t routing_tag_ = 0;
    PinnedArray host_routing_pairs_, host_lane_pairs_;
    // A decode step's end is recorded before the wait for the lane, unless
    // tuning.decode_done_after_combine records it after the combine, as prompt steps do.
    bool step_done_after_combine_ = options_.tuning.decode_done_after_combine;
    int ordinal_;
    gpu::GpuStream copy_stream_;
    gpu::CopyBatch copies_;
    RuntimePinner pinner_;
    gpu::GpuEvent step_done_, half_free_[2], half_copied_[2];
    gpu::GpuEvent experts_done_;  // the GPU's part of the step's experts (for MissLanes::decode_feedback)
    gpu::GpuEvent routed_, predicted_;  // the step's routing, and the next layer's guess, on the host
    // Experts copied ahead for a layer (tier index `layer`; -1: none) into the top of staging half
    // layer & 1; the event marks their copies.
    struct Prefetched {
        int64_t layer = -1;
        ExpertSlotList experts;
    } prefetched_[2];
    gpu::GpuEvent prefetch_copied_[2];
    ExpertSlotList prefetch_hits_;  // this step's used experts found there
    // Scan steps (stream_ahead): the next layer's experts copied ahead of its routing into staging
    // half `half`; the event marks their copies. layer -1: none.
    struct StreamedAhead {
        int64_t layer = -1;
        int half = 0;
        ExpertSlotList experts;
    } streamed_ahead_;
    gpu::GpuEvent ahead_copied_;
    ExpertSlotList ahead_hits_;  // this step's used experts found there
    std::vector<AheadCandidate> ahead_candidates_;
    std::vector<int32_t> ahead_choice_;
    Clock::time_point link_free_at_{};  // queued_on_link
    double link_gbps_ = 10.0;
    // The serial chain per layer (lane end → next routing), a running mean for copy_ahead; until
    // measured, a typical H200 value.
    double chain_s_ = 60e-6;
    bool ahead_fixed_ = options_.tuning.fixed_copies_ahead;
    // Off: the link's backlog is left out of the CPU lane's share.
    bool link_backlog_on_ = options_.tuning.link_backlog;
    LinkClock link_clock_;  // the copy stream's busy time
    TierTimeline timeline_{options_.tuning.timeline_pass};  // a diagnostic
    // Off: no copies ahead of scan steps. (Scan steps never shape the cache: letting them admit
    // lost, pp512 2,383-2,421 against 2,538-2,564 tok/s, bench/results/2026-11-30-scan-steps.)
    bool stream_ahead_enabled_ = options_.tuning.stream_ahead;
    // Tests lower it, so that the fixtures' small steps are scans.
    double scan_coverage_ = options_.tuning.scan_coverage.value_or(kScanCoverage);

    // ---- the layers and the slots ----
    std::vector<TierLayer> layers_;
    std::vector<int32_t> layer_index_;  // model layer → position in layers_, or -1
    uint32_t n_expert_ = 0;
    uint64_t slot_bytes_ = 0, cache_count_ = 0, staging_count_ = 0;
    gpu::DeviceBuffer pool_buffer_;
    ExpertSlots slots_;
    uint64_t chunk_counter_ = 0;  // ring halves streamed through so far (the next chunk's half)
    std::unique_ptr<ExpertPolicy> policy_;
    AdmissionCandidates candidates_;

    // ---- per-step scratch, reused ----
    std::vector<std::vector<int32_t>> by_expert_;
    std::vector<int32_t> used_, hits_, cpu_lane_, stream_lane_, stream_slots_;
    uint64_t cpu_pairs_ = 0;
    int64_t step_k_ = 1;
    std::vector<uint32_t> residents_, used_ids_;
    ExpertSlotList copied_before_;  // prefetch_hits_ then ahead_hits_ (admission candidates)
    PinnedArray host_ids_, host_h_, host_plan_, host_cpu_out_;
    DeviceArray dev_plan_, dev_gate_, dev_up_, dev_out_, dev_cpu_out_, dev_gate_q8_;
};

}  // namespace strata::gpu_tiers
