// Expert tiers beside a GPU (experts/gpu_expert_tiers.h). Built only with a GPU backend; the
// twin gpu_expert_tiers_without_gpu.cpp says why there are none.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "backend/gpu/gpu_ops.h"
#include "core/aligned_buffer.h"
#include "core/background_task.h"
#include "core/spin_wait.h"
#include "experts/cache_warmer.h"
#include "experts/cpu_expert_lane.h"
#include "experts/expert_policy.h"
#include "experts/expert_store.h"
#include "experts/gpu_expert_tiers.h"
#include "experts/link_clock.h"
#include "experts/host_flag.h"
#include "experts/miss_lanes.h"
#include "experts/scan_steps.h"
#include "experts/tier_timeline.h"
#include "plan/model_bytes.h"

namespace strata {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

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

// Where the parts of a step's GPU plan lie in its one buffer (bytes; every value is 4 bytes): the
// sorted pair positions, the tile table (3 values a tile), the tile count of each launch set and
// the pairs' combine weights (zero for the CPU lane's pairs).
struct PlanLayout {
    uint64_t sorted = 0, tiles = 0, counts = 0, weights = 0, bytes = 0;
    PlanLayout(int64_t pairs, int64_t max_tiles, int64_t max_sets) {
        const auto values = [](int64_t count) { return align_up(static_cast<uint64_t>(count) * 4, 64); };
        tiles = sorted + values(pairs);
        counts = tiles + values(3 * max_tiles + 64);
        weights = counts + values(max_sets);
        bytes = weights + values(pairs);
    }
};

// A group of experts computed by one set of GPU launches: the hits, or one chunk of streamed
// experts (whose copies it waits for).
struct LaunchSet {
    int64_t first = 0, count = 0;        // range of sorted positions
    int64_t tile_first = 0, tiles = 0;   // range of the tile table
    int half = -1;                       // staging half it streams through; -1: hits
    bool copied_ahead = false;           // its copies were queued a step ago (scan steps)
};

class GpuExpertTiers final : public gpu::RoutedExperts {
public:
    GpuExpertTiers(std::vector<ExpertLayerTensors> layers, gpu::GpuContext& ctx, const GpuExpertTierOptions& options)
        : options_(options), ordinal_(ctx.device().ordinal), copy_stream_(ordinal_) {
        n_expert_ = layers.empty() ? 0 : static_cast<uint32_t>(layers[0].gate.ne[2]);
        for (auto& l : layers) {
            TierLayer t;
            t.host = l;
            t.gate_bytes = static_cast<uint64_t>(l.gate.ne[1]) * l.gate.row_bytes;
            t.up_bytes = static_cast<uint64_t>(l.up.ne[1]) * l.up.row_bytes;
            t.down_bytes = static_cast<uint64_t>(l.down.ne[1]) * l.down.row_bytes;
            t.up_offset = align_up(t.gate_bytes, kExpertPartAlignment);
            t.down_offset = t.up_offset + align_up(t.up_bytes, kExpertPartAlignment);
            slot_bytes_ = std::max(slot_bytes_, t.down_offset + align_up(t.down_bytes, kExpertPartAlignment));
            if (layer_index_.size() <= l.layer) layer_index_.resize(l.layer + 1, -1);
            layer_index_[l.layer] = static_cast<int32_t>(layers_.size());
            layers_.push_back(std::move(t));
        }
        if (options_.policy == "lfu") policy_ = std::make_unique<LfuDecayPolicy>(key_count(), options_.lfu_decay);
        else policy_ = std::make_unique<LruPolicy>(key_count());
    }

    uint64_t key_count() const { return static_cast<uint64_t>(layers_.size()) * n_expert_; }

    Status init(gpu::GpuContext& ctx, GpuExpertTierSummary* summary) {
        staging_count_ = std::max<uint64_t>(2, options_.staging_slots / 2 * 2);
        // To compare ring sizes (beside no cache: the plan reserved only its own ring).
        if (const char* v = std::getenv("STRATA_TIERS_STAGING")) staging_count_ = std::max<uint64_t>(2, std::strtoull(v, nullptr, 10) / 2 * 2);
        cache_count_ = std::min<uint64_t>(options_.cache_slots, key_count());
        const uint64_t n_slots = cache_count_ + staging_count_;
        std::string error;
        pool_buffer_ = ctx.pool().allocate(n_slots * slot_bytes_, &error);
        if (!pool_buffer_) {
            return Status::error("the expert cache ({} slots of {:.1f} MiB) does not fit in VRAM: {}", n_slots,
                                 static_cast<double>(slot_bytes_) / (1 << 20), error);
        }
        auto* base = pool_buffer_.as<uint8_t>();
        for (TierLayer& t : layers_) {
            auto view = [&](const Weight& w, uint64_t offset) {
                gpu::DeviceWeight d;
                d.data = base + offset;
                d.type = w.type;
                d.ne[0] = w.ne[0], d.ne[1] = w.ne[1], d.ne[2] = static_cast<int64_t>(n_slots), d.ne[3] = 1;
                d.row_bytes = w.row_bytes;
                d.matrix_bytes = slot_bytes_;
                return d;
            };
            if (!gpu::gpu_supports_type(t.host.gate.type) || !gpu::gpu_supports_type(t.host.up.type) ||
                !gpu::gpu_supports_type(t.host.down.type)) {
                return Status::error("layer {}: expert types {}/{}/{} have no GPU kernel (run with --device cpu)",
                                     t.host.layer, tensor_type_name(t.host.gate.type),
                                     tensor_type_name(t.host.up.type), tensor_type_name(t.host.down.type));
            }
            t.gate = view(t.host.gate, 0);
            t.up = view(t.host.up, t.up_offset);
            t.down = view(t.host.down, t.down_offset);
            STRATA_TRY(upload_bias(ctx, t.host.gate_bias, t.gate_bias));
            STRATA_TRY(upload_bias(ctx, t.host.up_bias, t.up_bias));
            STRATA_TRY(upload_bias(ctx, t.host.down_bias, t.down_bias));
        }
        ctx.synchronize();  // the bias copies read the mapped file
        slot_of_.assign(key_count(), -1);
        owner_.assign(n_slots, -1);
        for (uint64_t s = 0; s < staging_count_; ++s) staging_.push_back(static_cast<int32_t>(cache_count_ + s));

        if (const char* v = std::getenv("STRATA_TIERS_WARM"); v && std::strcmp(v, "read") == 0) warmer_.set_demote(false);
        // To compare: the decode split's bias (experts/miss_lanes.h) other than its default.
        if (const char* v = std::getenv("STRATA_TIERS_SHARE_BIAS")) lanes_.set_decode_share_bias(std::atof(v));
        if (lane_done_.allocate(64, &error)) *lane_done_.as<uint32_t>() = 0;
        else early_combine_ = false;  // the lane is then awaited on the host, as before
        if (host_flags_on_) host_flags_on_ = routing_flag_.allocate() && prediction_flag_.allocate();
        pin_file(summary);
        measure_link(ctx, summary);
        fill_cache(ctx);
        if (summary) {
            summary->moe_layers = layers_.size();
            summary->experts_per_layer = n_expert_;
            summary->slot_bytes = slot_bytes_;
            summary->cache_slots = cache_count_;
            summary->staging_slots = staging_count_;
        }
        return Status::ok();
    }

    void forward(const gpu::RoutedExpertsStep& step, gpu::GpuContext& g, CpuContext& cpu) override {
        const auto t_start = Clock::now();
        STRATA_CHECK(step.layer >= 0 && static_cast<size_t>(step.layer) < layer_index_.size() &&
                         layer_index_[static_cast<size_t>(step.layer)] >= 0,
                     "expert tiers: a MoE layer the tiers do not hold");
        const int64_t li = layer_index_[static_cast<size_t>(step.layer)];
        TierLayer& L = layers_[static_cast<size_t>(li)];
        const int64_t n = step.n_tokens, k = step.k, e = step.n_embd, pairs = n * k;
        const int64_t ff = L.host.gate.ne[1];
        if (n == 0) return;
        if (!calibrated_) calibrate(L, e, cpu);
        timeline_.begin_pass(g.stream());

        // 1. The routing (then the next layer's predicted experts, for prefetch) and the normed
        // input the CPU lane may need come to the host: host buffers [ids | weights | predicted]
        // and h.
        // The last step's CPU lane may still be running (early combine, below): it reads these
        // buffers, which the routing overwrites only behind that step's combine, so only a buffer
        // that must grow waits for it first.
        if (!host_ids_.holds<int32_t>(static_cast<uint64_t>(3 * pairs)) || !host_h_.holds<float>(static_cast<uint64_t>(n * e)) ||
            !host_cpu_out_.holds<float>(static_cast<uint64_t>(n * e))) {
            await_lane();
        }
        int32_t* ids = host_ids_.get<int32_t>(static_cast<uint64_t>(3 * pairs));
        float* weights = reinterpret_cast<float*>(ids + pairs);
        int32_t* predicted = prefetch_wanted(step) ? ids + 2 * pairs : nullptr;
        float* h = host_h_.get<float>(static_cast<uint64_t>(n * e));
        // The next layer's router runs behind the routing's trip to the host, so that the host
        // (and the CPU lane) need not wait for it; its guess is awaited only before the copies
        // made ahead.
        void* stream = g.stream();
        const uint32_t routing_seq = fetch_routing(step, ids, h, g);
        routed_.record(stream);  // (the host waits for routing_seq when there is one: see await_flag)
        timeline_.mark(stream, "L{} gpu routed", li);
        uint32_t prediction_seq = 0;
        if (predicted) {
            (*step.queue_prediction)();
            prediction_seq = fetch_prediction(step, predicted, g);
            predicted_.record(stream);
        }
        const auto t_wait = Clock::now();
        await_flag(routing_flag_, routing_seq, routed_);
        const auto t_routed = Clock::now();
        timeline_.host_mark("L{} host has routing", li);
        const bool lane_was_pending = lane_pending_;
        release_lane();  // its sum is done: the GPU passed the combine that waited for it
        const auto t_joined = Clock::now();
        const double wait_s = seconds_since(t_wait);
        // The serial path between two lanes (decode's limit when most experts miss): from the
        // last lane's end to this routing on the host (the GPU's combine, attention and router,
        // and the trip back), and from the last lane's start call to its first instruction.
        double lane_to_routing_s = 0, lane_wake_s = 0;
        if (lane_was_pending) {
            lane_to_routing_s = std::max(0.0, std::chrono::duration<double>(t_routed - lane_end_).count());
            lane_wake_s = std::max(0.0, std::chrono::duration<double>(lane_begin_ - lane_started_).count());
        }
        step_k_ = k;  // (read by the lane)

        // 2. Pairs grouped by expert; each used expert is a hit, a CPU miss or a streamed miss.
        if (by_expert_.size() < n_expert_) by_expert_.resize(n_expert_);
        used_.clear();
        for (int64_t p = 0; p < pairs; ++p) {
            const int32_t x = ids[p];
            STRATA_CHECK(x >= 0 && static_cast<uint32_t>(x) < n_expert_, "expert tiers: routed expert id out of range");
            auto& list = by_expert_[static_cast<size_t>(x)];
            if (list.empty()) used_.push_back(x);
            list.push_back(static_cast<int32_t>(p));
        }
        std::sort(used_.begin(), used_.end());
        hits_.clear(), cpu_lane_.clear(), stream_lane_.clear(), prefetch_hits_.clear(), ahead_hits_.clear();
        const bool scan = is_scan_step(used_.size(), n_expert_, scan_coverage_);
        Prefetched& ahead = prefetched_[li & 1];  // what the previous layer copied ahead for this one
        if (ahead.layer != li || n != 1) ahead.experts.clear();
        StreamedAhead& scan_ahead = streamed_ahead_;  // ... or, after a scan step, streamed ahead
        if (scan_ahead.layer != li) scan_ahead.experts.clear();
        const auto find_in = [](const std::vector<std::pair<int32_t, int32_t>>& v, int32_t x) {
            return std::find_if(v.begin(), v.end(), [&](const auto& a) { return a.first == x; });
        };
        for (int32_t x : used_) {
            if (slot_of_[id(li, x)] >= 0) hits_.push_back(x);
            else if (const auto pf = find_in(ahead.experts, x); pf != ahead.experts.end()) prefetch_hits_.push_back(*pf);
            else if (const auto sa = find_in(scan_ahead.experts, x); sa != scan_ahead.experts.end()) ahead_hits_.push_back(*sa);
            else stream_lane_.push_back(x);
        }
        const bool wait_prefetch = !prefetch_hits_.empty();
        const size_t prefetched_before = ahead.experts.size() + scan_ahead.experts.size();
        const int ahead_half = scan_ahead.half;
        ahead.layer = -1, ahead.experts.clear();
        scan_ahead.layer = -1, scan_ahead.experts.clear();
        choose_cpu_lane(L, li);

        // The CPU lane starts now, on its own thread (which drives the thread pool), when the GPU
        // has a part too: it runs while this thread plans and queues the GPU's part, instead of
        // after it. Nothing it reads or writes is touched here until it is awaited.
        const bool cpu_part = !cpu_lane_.empty();
        const bool overlap = cpu_part && (!hits_.empty() || !stream_lane_.empty() || !prefetch_hits_.empty());
        float* cpu_out = cpu_part ? host_cpu_out_.get<float>(static_cast<uint64_t>(n * e)) : nullptr;
        // Early combine: the combine (and what the forward queues after it) waits for the lane on
        // the GPU, so this thread returns without waiting for it. It needs the lane's sum and the
        // counter read through the GPU's mapping of page-locked memory (decode sizes).
        const bool early = overlap && early_combine_ && lane_done_.device_view() != nullptr &&
                           lane_sum_view(static_cast<uint64_t>(n * e) * sizeof(float)) != nullptr;
        join_lane();  // the last lane's thread (its warming stopped while this thread planned)
        if (cpu_part) {
            if (early && ++lane_seq_ == 0) ++lane_seq_;  // 0 means "no counter to raise"
            lane_job_ = LaneJob{&L, h, weights, n, e, cpu_out, &cpu, overlap, early ? lane_seq_ : 0u};
            warm_ready_.store(false, std::memory_order_relaxed);  // plan_warm() below may set it
            gpu_part_queued_.store(false, std::memory_order_relaxed);
            lane_experts_ = cpu_lane_;
        }
        if (overlap) {
            if (!cpu_lane_task_) cpu_lane_task_ = std::make_unique<BackgroundTask>(cpu.pool().spin_us());
            lane_started_ = Clock::now();
            lane_computed_.store(false, std::memory_order_relaxed);
            lane_layer_ = li;
            cpu_lane_task_->start(lane_fn_);
            timeline_.host_mark("L{} host started the CPU lane ({} experts)", li, cpu_lane_.size());
            lane_pending_ = true;
        }

        // 3. The GPU's plan: sorted pair positions, tiles of up to tile_width pairs of one slot, one launch set for the hits and one per streamed chunk.
        const int64_t half = static_cast<int64_t>(staging_count_ / 2);
        std::vector<LaunchSet>& sets = sets_;
        sets.clear();
        const int64_t max_tiles = pairs + static_cast<int64_t>(used_.size());
        // The plan goes up in one copy (each copy is an API call on the step's critical path).
        const PlanLayout layout(pairs, max_tiles, static_cast<int64_t>(used_.size()) + 1);
        uint8_t* plan_host = host_plan_.get<uint8_t>(layout.bytes);
        auto* sorted = reinterpret_cast<int32_t*>(plan_host + layout.sorted);
        auto* tiles = reinterpret_cast<int32_t*>(plan_host + layout.tiles);
        auto* gpu_weights = reinterpret_cast<float*>(plan_host + layout.weights);
        std::fill(gpu_weights, gpu_weights + pairs, 0.0f);
        int64_t n_sorted = 0, n_tiles = 0;
        // Prompt batches use the wide-tile kernel, as the all-in-VRAM forward does.
        const int tile_width = gpu::gpu_moe_tile_columns(pairs, n_expert_, L.gate, L.down);
        auto add_expert = [&](int32_t x, int32_t slot) {
            const auto& list = by_expert_[static_cast<size_t>(x)];
            for (size_t i = 0; i < list.size(); i += static_cast<size_t>(tile_width)) {
                const int64_t count = std::min<int64_t>(tile_width, static_cast<int64_t>(list.size() - i));
                tiles[3 * n_tiles] = slot;
                tiles[3 * n_tiles + 1] = static_cast<int32_t>(n_sorted + static_cast<int64_t>(i));
                tiles[3 * n_tiles + 2] = static_cast<int32_t>(count);
                ++n_tiles;
            }
            for (int32_t p : list) {
                sorted[n_sorted++] = p;
                gpu_weights[p] = weights[p];
            }
        };
        auto open_set = [&](int half_index) {
            sets.push_back(LaunchSet{n_sorted, 0, n_tiles, 0, half_index});
        };
        auto close_set = [&]() {
            LaunchSet& s = sets.back();
            s.count = n_sorted - s.first;
            s.tiles = n_tiles - s.tile_first;
            if (s.count == 0) sets.pop_back();
        };
        open_set(-1);
        for (int32_t x : hits_) add_expert(x, slot_of_[id(li, x)]);
        for (const auto& [x, slot] : prefetch_hits_) add_expert(x, slot);
        close_set();
        // Streamed ahead (the last step was a scan): computed right after the hits, so that their
        // ring half is free again for this step's second chunk.
        if (!ahead_hits_.empty()) {
            open_set(ahead_half);
            sets.back().copied_ahead = true;
            for (const auto& [x, slot] : ahead_hits_) add_expert(x, slot);
            close_set();
        }
        // Streamed experts: chunks of one ring half each, alternating halves.
        stream_slots_.assign(stream_lane_.size(), -1);
        for (size_t i = 0; i < stream_lane_.size(); ++i) {
            const int64_t chunk = static_cast<int64_t>(i) / half;
            const int half_index = static_cast<int>((chunk_counter_ + chunk) % 2);
            if (static_cast<int64_t>(i) % half == 0) {
                if (i > 0) close_set();
                open_set(half_index);
            }
            const int32_t slot = staging_[static_cast<size_t>(half_index * half + static_cast<int64_t>(i) % half)];
            stream_slots_[i] = slot;
            add_expert(stream_lane_[i], slot);
        }
        if (!stream_lane_.empty()) close_set();
        const int64_t chunks = (static_cast<int64_t>(stream_lane_.size()) + half - 1) / half;

        // 4. Queue the GPU part: plan upload, the copies (copy stream), the launches.
        const bool gpu_part = n_sorted > 0;
        float* out = nullptr;
        const float* d_weights = nullptr;
        if (gpu_part) {
            auto* counts = reinterpret_cast<int32_t*>(plan_host + layout.counts);
            for (size_t s = 0; s < sets.size(); ++s) counts[s] = static_cast<int32_t>(sets[s].tiles);
            // By a kernel reading the host buffer where it is mapped (see fetch_routing).
            uint8_t* d_plan = dev_plan_.get<uint8_t>(g.pool(), layout.bytes);
            // Through the mapping at any size: a copy would wait for a copy engine behind the
            // experts streamed ahead (a prompt's plan is ~80 KB; it waited ~1.8 ms a layer,
            // holding up the hits; bench/results/2026-11-30-scan-steps). STRATA_TIERS_PLAN_UPLOAD=copy
            // copies a plan over 64 KiB, to compare.
            void* view = plan_copied_ ? mapped(host_plan_, layout.bytes) : host_plan_.buffer.device_view();
            if (view) gpu::gpu_copy_words(d_plan, view, layout.bytes, g);
            else g.upload(d_plan, plan_host, layout.bytes);
            auto* d_sorted = reinterpret_cast<int32_t*>(d_plan + layout.sorted);
            auto* d_tiles = reinterpret_cast<int32_t*>(d_plan + layout.tiles);
            auto* d_counts = reinterpret_cast<int32_t*>(d_plan + layout.counts);
            d_weights = reinterpret_cast<const float*>(d_plan + layout.weights);
            float* gate = dev_gate_.get<float>(g.pool(), static_cast<uint64_t>(n_sorted * ff));
            float* up = dev_up_.get<float>(g.pool(), static_cast<uint64_t>(n_sorted * ff));
            // Int8 activations (narrow tiles: the matrix-vector kernel; wide ones: the MMQ tiles,
            // which is when the step has hq for a prompt batch): h as the router's matmul
            // quantized it, the gate rows quantized per launch set as they are computed.
            const bool int8 = step.hq != nullptr;
            // gpt-oss: biases and its clamped activation, unfused (as the all-resident forward).
            const bool biased_act = L.host.biased() || options_.activation != ExpertActivation::SwiGlu;
            gpu::GpuQ8Rows gate_q8;
            if (int8) {
                gate_q8 = gpu::gpu_q8_view(dev_gate_q8_.get<uint8_t>(g.pool(), gpu::gpu_q8_bytes(n_sorted, ff)), n_sorted, ff);
            }
            const gpu::GpuQ8Rows* hx = int8 ? step.hq : nullptr;
            const gpu::GpuQ8Rows* gx = int8 ? &gate_q8 : nullptr;
            out = dev_out_.get<float>(g.pool(), static_cast<uint64_t>(pairs * e));
            if (cpu_part) gpu::memset_async(out, 0, static_cast<uint64_t>(pairs * e) * sizeof(float), stream);

            // Copies into a ring half wait for the compute that last read it: the previous step
            // (its end event) or, within this step, the chunk two before. Experts copied ahead
            // are computed once their copies (queued a layer ago) are done.
            step_done_.make_wait(copy_stream_.handle());
            if (wait_prefetch) prefetch_copied_[li & 1].make_wait(stream);
            size_t streamed = 0;
            for (size_t si = 0; si < sets.size(); ++si) {
                const LaunchSet& s = sets[si];
                if (s.copied_ahead) {
                    ahead_copied_.make_wait(stream);
                } else if (s.half >= 0) {
                    half_free_[s.half].make_wait(copy_stream_.handle());
                    const int64_t in_chunk = std::min<int64_t>(half, static_cast<int64_t>(stream_lane_.size() - streamed));
                    timeline_.mark(copy_stream_.handle(), "L{} copy start set{} ({} experts)", li, si, in_chunk);
                    link_clock_.begin(copy_stream_.handle());
                    for (int64_t j = 0; j < in_chunk; ++j, ++streamed) copy_expert(L, stream_lane_[streamed], stream_slots_[streamed]);
                    copies_.submit(copy_stream_.handle());
                    link_clock_.end(copy_stream_.handle());
                    queued_on_link(static_cast<uint64_t>(in_chunk) * L.expert_bytes());
                    timeline_.mark(copy_stream_.handle(), "L{} copy end set{}", li, si);
                    half_copied_[s.half].record(copy_stream_.handle());
                    half_copied_[s.half].make_wait(stream);
                }
                timeline_.mark(stream, "L{} compute start set{} ({} pairs)", li, si, s.count);
                gpu::MoePlan plan;
                plan.tile_columns = tile_width;
                plan.max_tile_pairs = static_cast<int>(std::min<int64_t>(tile_width, n));  // an expert's pairs are distinct tokens
                plan.n_pairs = s.count;
                plan.max_tiles = s.tiles;
                plan.sorted = d_sorted;
                plan.tiles = d_tiles + 3 * s.tile_first;
                plan.n_tiles = d_counts + si;
                const bool fused = hx && !biased_act &&
                                   gpu::gpu_matvec_q8_swiglu_experts(L.gate, L.up, plan, *hx, gpu::MoeRows::Pair, k, gate,
                                                                     gpu::MoeRows::Sorted, g);
                if (!fused) {
                    gpu::gpu_matmul_experts_rows(L.gate, plan, step.h, gpu::MoeRows::Pair, k, gate, gpu::MoeRows::Sorted, g, hx);
                    gpu::gpu_matmul_experts_rows(L.up, plan, step.h, gpu::MoeRows::Pair, k, up, gpu::MoeRows::Sorted, g, hx);
                    if (biased_act) {  // as the all-resident forward: biases, then the activation
                        gpu::gpu_moe_bias_activation(gate + s.first * ff, up + s.first * ff, step.ids, s.count, ff,
                                                     L.gate_bias.as<float>(), L.up_bias.as<float>(), gpu_activation(), g,
                                                     d_sorted + s.first);
                    } else {
                        gpu::gpu_swiglu(gate + s.first * ff, up + s.first * ff, s.count * ff, g);
                    }
                }
                if (gx) gpu::gpu_quantize_q8_rows(gate, s.first, s.count, *gx, g);
                gpu::gpu_matmul_experts_rows(L.down, plan, gate, gpu::MoeRows::Sorted, 1, out, gpu::MoeRows::Pair, g, gx);
                if (s.half >= 0) half_free_[s.half].record(stream);
                timeline_.mark(stream, "L{} compute end set{}", li, si);
            }
            // Rows of pairs the CPU computes are zero with weight zero: the bias there is dropped
            // by the combine.
            if (L.down_bias) gpu::gpu_moe_add_expert_bias(out, step.ids, pairs, e, L.down_bias.as<float>(), g);
            chunk_counter_ += chunks;
            experts_done_.record(stream);
            gpu_part_queued_.store(true, std::memory_order_release);
        }
        // The next layer's likely experts go up behind this layer's copies, while the link would
        // otherwise wait for the CPU lane and the next layer's routing.
        if (predicted) await_flag(prediction_flag_, prediction_seq, predicted_);  // queued behind the routing
        uint64_t copied_ahead = predicted ? copy_ahead(step, predicted, li) : 0;
        // After a scan step the next layer's experts that are not in VRAM go up behind this
        // layer's copies, before its routing (experts/scan_steps.h).
        // (Not beside a decode step's own copies ahead, which use the top of a half.)
        if (scan && !predicted) copied_ahead += stream_ahead(li);
        // The lane, once its sum is done, reads the next layer's likely CPU experts into cache.
        const uint64_t warmed = predicted && lane_pending_ ? plan_warm(step, predicted, li) : 0;
        const double plan_s = seconds_since(t_start) - wait_s;
        const double routing_to_lane_s = lane_pending_ ? std::chrono::duration<double>(lane_started_ - t_routed).count() : 0.0;

        // The step's experts are done with the ring and the cache slots: copies into them may go
        // on (the combine below reads neither). A decode step records that before the wait for
        // the lane, not after the combine: an event in the chain from the lane's end to the next
        // routing costs ~6 µs there while the link streams. Prompt steps keep it after the
        // combine (pp512 measured 1.01x faster so, within the noise; bench/results/
        // 2026-11-30-chain-events). STRATA_TIERS_STEP_DONE=combine records it after the combine
        // for decode too, to compare.
        const bool step_done_early = n == 1 && !step_done_after_combine_;
        if (step_done_early) step_done_.record(stream);

        // 5. The CPU part (started above, or run here when it is the only part), while the GPU
        // computes and the copies run.
        // The combine reads its sum straight from the host buffer where the runtime maps it (no
        // copy engine: see fetch_routing), else from a copy.
        const float* d_cpu_out = nullptr;
        if (cpu_part) {
            if (early) {
                gpu::gpu_wait_host_word(static_cast<const uint32_t*>(lane_done_.device_view()), lane_seq_, g);
                timeline_.mark(stream, "L{} gpu saw the CPU lane's end", li);
            } else {
                if (overlap) await_lane();
                else run_lane(), settle_lane();
            }
            d_cpu_out = static_cast<const float*>(lane_sum_view(static_cast<uint64_t>(n * e) * sizeof(float)));
            if (!d_cpu_out) {
                float* copy = dev_cpu_out_.get<float>(g.pool(), static_cast<uint64_t>(n * e));
                g.upload(copy, cpu_out, static_cast<uint64_t>(n * e) * sizeof(float));
                d_cpu_out = copy;
            }
        } else {
            lanes_.decode_feedback(!gpu_part || experts_done_.done());  // as if an empty lane ended now
        }
        // The GPU's experts are combined into x fused with the next block's norm, as in the
        // all-resident forward (same kernel, same bits when every expert ran on the GPU); the CPU
        // lane's sum is added in the same pass.
        if (gpu_part) {
            gpu::gpu_moe_combine_rms_norm(out, d_weights, n, k, e, step.x, step.next_norm, step.eps,
                                          step.h_next, g, step.hq_next, d_cpu_out);
        } else if (d_cpu_out) {
            gpu::gpu_add_rms_norm(step.x, d_cpu_out, step.next_norm, n, e, step.eps, step.h_next, g, step.hq_next);
        } else {
            gpu::gpu_rms_norm(step.x, step.next_norm, n, e, step.eps, step.h_next, g, step.hq_next);
        }
        if (!step_done_early) step_done_.record(stream);
        timeline_.mark(stream, "L{} combine end", li);
        timeline_.host_mark("L{} host queued the combine (hits {}, streamed ahead {}, streamed {}, CPU {})", li, hits_.size(),
                            ahead_hits_.size(), stream_lane_.size(), cpu_lane_.size());

        // 6. The policy: streamed experts it admits keep their slot; the victim's joins the ring.
        const auto t_policy = Clock::now();
        std::vector<uint32_t>& used_ids = used_ids_;
        std::vector<uint32_t>& streamed_ids = streamed_ids_;
        used_ids.clear(), streamed_ids.clear();
        for (int32_t x : used_) used_ids.push_back(id(li, x));
        // Candidates: the streamed experts (and those copied ahead: as worth keeping) whose slot no
        // later copy of this step reused. A step streaming more than a ring half wraps around the
        // ring, its second chunk goes where the experts streamed ahead were, and the next layer's
        // experts streamed ahead (scan steps) go to the half of its second-to-last chunk.
        std::vector<int32_t>& slots = admissible_slots_;
        slots.clear();
        if (last_writer_.size() < owner_.size()) last_writer_.assign(owner_.size(), -1);
        for (size_t i = 0; i < stream_lane_.size(); ++i) last_writer_[static_cast<size_t>(stream_slots_[i])] = static_cast<int32_t>(i);
        const bool ahead_queued = streamed_ahead_.layer == li + 1;
        if (ahead_queued) {
            for (const auto& [x, slot] : streamed_ahead_.experts) last_writer_[static_cast<size_t>(slot)] = std::numeric_limits<int32_t>::max();
        }
        for (size_t i = 0; i < stream_lane_.size(); ++i) {
            if (last_writer_[static_cast<size_t>(stream_slots_[i])] != static_cast<int32_t>(i)) continue;
            streamed_ids.push_back(id(li, stream_lane_[i]));
            slots.push_back(stream_slots_[i]);
        }
        for (const auto& list : {&prefetch_hits_, &ahead_hits_}) {
            for (const auto& [x, slot] : *list) {
                if (last_writer_[static_cast<size_t>(slot)] >= 0) continue;
                streamed_ids.push_back(id(li, x));
                slots.push_back(slot);
            }
        }
        for (int32_t slot : stream_slots_) last_writer_[static_cast<size_t>(slot)] = -1;
        if (ahead_queued) {
            for (const auto& [x, slot] : streamed_ahead_.experts) last_writer_[static_cast<size_t>(slot)] = -1;
        }
        // A scan step leaves the policy alone (experts/scan_steps.h); STRATA_TIERS_SCAN_ADMIT=1
        // lets it admit, to compare.
        const bool shapes_cache = !scan || scan_admits_;
        if (shapes_cache) policy_->record_use(used_ids);
        uint64_t admitted = 0;
        if (shapes_cache && !streamed_ids.empty() && cache_count_ > 0) {
            residents_.clear();
            for (uint64_t s = 0; s < cache_count_ + staging_count_; ++s)
                if (owner_[s] >= 0) residents_.push_back(static_cast<uint32_t>(owner_[s]));
            const PolicyDecision d = policy_->decide(streamed_ids, residents_, 0, streamed_ids.size());
            const size_t swaps = std::min(d.admit.size(), d.evict.size());
            for (size_t i = 0; i < swaps; ++i) {
                const uint32_t in = d.admit[i], victim = d.evict[i];
                const auto it = std::find(streamed_ids.begin(), streamed_ids.end(), in);
                if (it == streamed_ids.end() || slot_of_[victim] < 0) continue;
                const int32_t new_slot = slots[static_cast<size_t>(it - streamed_ids.begin())];
                const int32_t old_slot = slot_of_[victim];
                slot_of_[victim] = -1;
                owner_[static_cast<size_t>(old_slot)] = -1;
                slot_of_[in] = new_slot;
                owner_[static_cast<size_t>(new_slot)] = static_cast<int64_t>(in);
                std::replace(staging_.begin(), staging_.end(), new_slot, old_slot);
                ++admitted;
            }
        }

        // Statistics.
        if (options_.stats) {
            std::unique_lock<std::mutex> lock;
            if (options_.stats_mutex) lock = std::unique_lock<std::mutex>(*options_.stats_mutex);
            GpuExpertTierStats& st = *options_.stats;
            st.layer_steps += 1;
            st.expert_uses += used_.size();
            st.hits += hits_.size();
            st.cpu_experts += cpu_lane_.size();
            st.streamed_experts += stream_lane_.size() + prefetch_hits_.size() + ahead_hits_.size();  // copied ahead: streamed too
            st.routed_pairs += static_cast<uint64_t>(pairs);
            st.hit_pairs += pairs_of(hits_);
            st.cpu_pairs += cpu_pairs_;
            st.streamed_pairs += pairs_of(stream_lane_);
            for (const auto& list : {&prefetch_hits_, &ahead_hits_})
                for (const auto& [x, slot] : *list) st.streamed_pairs += by_expert_[static_cast<size_t>(x)].size();
            st.admissions += admitted;
            st.bytes_streamed += (stream_lane_.size() + copied_ahead) * L.expert_bytes();
            st.prefetched += copied_ahead;
            st.prefetch_hits += prefetch_hits_.size() + ahead_hits_.size();
            st.prefetch_offered += prefetched_before;
            st.lanes_awaited_by_gpu += early ? 1 : 0;
            st.warmed_experts += warmed;
            st.warm_offered += warm_offered_;
            st.warm_used += warm_used_;
            st.bytes_cpu += cpu_lane_.size() * L.expert_bytes();
            st.seconds_wait_gpu += wait_s;
            st.seconds_plan += plan_s + seconds_since(t_policy);  // the policy's decisions too
            st.seconds_link += link_clock_.collect();
            st.seconds_lane_to_routing += lane_to_routing_s;
            st.seconds_routing_to_lane += routing_to_lane_s;
            st.seconds_lane_wake += lane_wake_s;
            st.seconds_lane_join += lane_was_pending ? std::chrono::duration<double>(t_joined - t_routed).count() : 0.0;
        }
        // The lane's experts keep their pair lists until it is awaited (settle_lane).
        for (int32_t x : used_) {
            if (!lane_pending_ || std::find(lane_experts_.begin(), lane_experts_.end(), x) == lane_experts_.end()) {
                by_expert_[static_cast<size_t>(x)].clear();
            }
        }
    }

    // The experts copied ahead belong to this forward pass's steps only; the last step's lane
    // ends with the pass.
    void end_forward(gpu::GpuContext& g) override {
        await_lane();
        timeline_.end_pass(g, copy_stream_);
        for (Prefetched& p : prefetched_) p.layer = -1, p.experts.clear();
        streamed_ahead_.layer = -1, streamed_ahead_.experts.clear();
    }
    bool predicts_next_layer() const override { return options_.prefetch > 0; }

private:
    uint32_t id(int64_t li, int32_t x) const { return static_cast<uint32_t>(li) * n_expert_ + static_cast<uint32_t>(x); }
    uint64_t pairs_of(const std::vector<int32_t>& experts) const {
        uint64_t total = 0;
        for (int32_t x : experts) total += by_expert_[static_cast<size_t>(x)].size();
        return total;
    }

    // The GPU's view of a page-locked buffer for a transfer of `bytes` through its mapping, or
    // null: a copy then. Decode's transfers are a few KB, where the mapping wins (no copy engine
    // to queue behind); a prompt batch's megabytes cross faster by a copy engine than by a
    // kernel's reads or writes over the bus.
    static void* mapped(const PinnedArray& a, uint64_t bytes) {
        return bytes <= kMappedTransferBytes ? a.buffer.device_view() : nullptr;
    }
    static constexpr uint64_t kMappedTransferBytes = 64 << 10;
    // The CPU lane's sum as the combine reads it: through the mapping at any size where the
    // runtime maps page-locked memory, else null (a copy). A prompt's sum (megabytes) would cross
    // faster by a copy, but that copy waits for a copy engine behind the experts being streamed,
    // and the host must wait for the lane to queue it; read where it lies, the combine is queued
    // at once and waits for the lane on the GPU (early combine). Every expert in RAM, pp512: 1,553
    // against 1,445 tok/s (bench/results/2026-11-30-scan-steps). STRATA_TIERS_LANE_SUM=copy
    // copies a sum over 64 KiB, to compare.
    void* lane_sum_view(uint64_t bytes) const {
        return lane_sum_copied_ ? mapped(host_cpu_out_, bytes) : host_cpu_out_.buffer.device_view();
    }
    bool plan_copied_ = [] {
        const char* v = std::getenv("STRATA_TIERS_PLAN_UPLOAD");
        return v != nullptr && std::strcmp(v, "copy") == 0;
    }();
    bool lane_sum_copied_ = [] {
        const char* v = std::getenv("STRATA_TIERS_LANE_SUM");
        return v != nullptr && std::strcmp(v, "copy") == 0;
    }();

    // The step's ids and weights into host_ids_ (rows of k per token: ids, weights, then room for
    // the predicted ids) and h into host_h_. Written by kernels through the buffers' GPU mapping
    // where the runtime maps page-locked memory: a copy would take a copy engine, and wait behind
    // the experts being copied ahead on the copy stream.
    // Returns the value the kernel raises routing_flag_ to (the host then waits for it rather than
    // for an event: await_flag), or 0 when it came by copies.
    uint32_t fetch_routing(const gpu::RoutedExpertsStep& step, int32_t* ids, float* h, gpu::GpuContext& g) {
        const int64_t pairs = step.n_tokens * step.k;
        const auto bytes = static_cast<uint64_t>(pairs) * sizeof(int32_t);
        const uint64_t h_bytes = static_cast<uint64_t>(step.n_tokens * step.n_embd) * sizeof(float);
        auto* ids_view = static_cast<int32_t*>(mapped(host_ids_, 3 * bytes));
        auto* h_view = mapped(host_h_, h_bytes);
        const bool in_line = static_cast<const void*>(step.weights) == static_cast<const void*>(step.ids + pairs);
        if (ids_view && h_view && in_line) {
            if (host_flags_on_) {
                const uint32_t seq = routing_flag_.next();
                gpu::gpu_copy_words_then_flag(ids_view, step.ids, 2 * bytes, h_view, step.h, h_bytes,
                                              routing_flag_.device_word(), seq, g);
                return seq;
            }
            gpu::gpu_copy_words(ids_view, step.ids, 2 * bytes, g);
            gpu::gpu_copy_words(h_view, step.h, h_bytes, g);
            return 0;
        }
        g.download(ids, step.ids, bytes);
        g.download(ids + pairs, step.weights, bytes);
        g.download(h, step.h, h_bytes);
        return 0;
    }
    // Until what a kernel wrote to the host is there: its flag's value when it raised one (seq != 0),
    // else `event` (recorded behind the copies).
    static void await_flag(const HostFlag& flag, uint32_t seq, const gpu::GpuEvent& event) {
        if (seq != 0) flag.await(seq, event);
        else event.synchronize();
    }
    // The predicted ids (queued by then) into their row of host_ids_, the same way; returns the
    // value prediction_flag_ is raised to, or 0.
    uint32_t fetch_prediction(const gpu::RoutedExpertsStep& step, int32_t* predicted, gpu::GpuContext& g) {
        const int64_t pairs = step.n_tokens * step.k;
        const auto bytes = static_cast<uint64_t>(pairs) * sizeof(int32_t);
        if (auto* view = static_cast<int32_t*>(mapped(host_ids_, 3 * bytes))) {
            if (host_flags_on_) {
                const uint32_t seq = prediction_flag_.next();
                gpu::gpu_copy_words_then_flag(view + 2 * pairs, step.predicted_ids, bytes, nullptr, nullptr, 0,
                                              prediction_flag_.device_word(), seq, g);
                return seq;
            }
            gpu::gpu_copy_words(view + 2 * pairs, step.predicted_ids, bytes, g);
            return 0;
        }
        g.download(predicted, step.predicted_ids, bytes);
        return 0;
    }

    // Prefetch (decode): the options ask for it and the step carries the next layer's guess.
    bool prefetch_wanted(const gpu::RoutedExpertsStep& step) const {
        return options_.prefetch > 0 && step.n_tokens == 1 && step.predicted_ids != nullptr && step.predicted_layer >= 0 &&
               step.queue_prediction != nullptr;
    }

    // Copies up to options_.prefetch of the predicted experts (best first) of the next layer that
    // are not cached into the top of staging half (next layer & 1): a one-token step streams at
    // most k experts into the bottom of a half, so the top half - k positions are free. The
    // previous layer's compute was the last to read them (the copy stream waits for its end).
    uint64_t copy_ahead(const gpu::RoutedExpertsStep& step, const int32_t* predicted, int64_t li) {
        const auto next = static_cast<size_t>(step.predicted_layer);
        if (next >= layer_index_.size() || layer_index_[next] != li + 1) return 0;  // not this GPU's next MoE layer
        const int64_t nli = li + 1;
        const auto half = static_cast<int64_t>(staging_count_ / 2);
        const int64_t room = std::min<int64_t>(static_cast<int64_t>(options_.prefetch), half - step.k);
        if (room <= 0) return 0;
        Prefetched& set = prefetched_[nli & 1];
        set.layer = nli, set.experts.clear();
        for (int64_t j = 0; j < step.k && static_cast<int64_t>(set.experts.size()) < room; ++j) {
            const int32_t x = predicted[j];
            if (x < 0 || static_cast<uint32_t>(x) >= n_expert_ || slot_of_[id(nli, x)] >= 0) continue;
            const auto pos = static_cast<size_t>((nli & 1) * half + half - room + static_cast<int64_t>(set.experts.size()));
            set.experts.emplace_back(x, staging_[pos]);
        }
        if (set.experts.empty()) return 0;
        step_done_.make_wait(copy_stream_.handle());
        queue_copies_ahead(li, nli, set.experts, prefetch_copied_[nli & 1]);
        return set.experts.size();
    }

    // Queues the copies of (expert, slot) pairs of tier layer nli, made ahead during layer li's
    // step, on the copy stream (after whatever waits the caller queued there), timed and counted
    // on the link; `copied` marks their end.
    void queue_copies_ahead(int64_t li, int64_t nli, const std::vector<std::pair<int32_t, int32_t>>& experts,
                            gpu::GpuEvent& copied) {
        void* stream = copy_stream_.handle();
        const TierLayer& N = layers_[static_cast<size_t>(nli)];
        timeline_.mark(stream, "L{} copy ahead start ({} experts of L{})", li, experts.size(), nli);
        link_clock_.begin(stream);
        for (const auto& [x, slot] : experts) copy_expert(N, x, slot);
        copies_.submit(stream);
        link_clock_.end(stream);
        queued_on_link(experts.size() * N.expert_bytes());
        timeline_.mark(stream, "L{} copy ahead end", li);
        copied.record(stream);
    }

    // After a scan step of tier layer li: up to a ring half of the next layer's experts that are
    // not in VRAM (hottest first, experts/scan_steps.h) copied into the half the next chunk would
    // use, behind this step's copies. The next step computes the ones it uses first of its
    // streamed experts (a launch set of that half). Returns how many were copied.
    uint64_t stream_ahead(int64_t li) {
        const int64_t nli = li + 1;
        const auto half = static_cast<int64_t>(staging_count_ / 2);
        if (!stream_ahead_enabled_ || options_.miss_lane == "cpu" || static_cast<size_t>(nli) >= layers_.size() || half <= 0)
            return 0;
        ahead_candidates_.clear();
        for (uint32_t x = 0; x < n_expert_; ++x) {
            const uint32_t key = id(nli, static_cast<int32_t>(x));
            if (slot_of_[key] < 0) ahead_candidates_.push_back({static_cast<int32_t>(x), policy_->heat(key)});
        }
        choose_copy_ahead(ahead_candidates_, static_cast<size_t>(half), ahead_choice_);
        if (ahead_choice_.empty()) return 0;
        const int h = static_cast<int>(chunk_counter_ % 2);
        ++chunk_counter_;  // the next step's chunks start in the other half
        StreamedAhead& set = streamed_ahead_;
        set.layer = nli, set.half = h, set.experts.clear();
        for (size_t j = 0; j < ahead_choice_.size(); ++j)
            set.experts.emplace_back(ahead_choice_[j], staging_[static_cast<size_t>(h * half) + j]);
        // The half's last readers: a chunk of this step or an earlier one (half_free_), or a decode
        // step that computed experts copied ahead there among its hits (its end, step_done_).
        step_done_.make_wait(copy_stream_.handle());
        half_free_[h].make_wait(copy_stream_.handle());
        queue_copies_ahead(li, nli, set.experts, ahead_copied_);
        return set.experts.size();
    }

    // The experts of the next layer the lane reads into cache after its sum (decode, with the
    // lane running on its thread): the predicted ones (best first) that are neither cached nor
    // copied ahead, as many as the CPU's share of the misses is likely to take. Returns their
    // count; the lane sees them once warm_ready_ is set.
    uint64_t plan_warm(const gpu::RoutedExpertsStep& step, const int32_t* predicted, int64_t li) {
        const auto next = static_cast<size_t>(step.predicted_layer);
        if (!warm_enabled_ || next >= layer_index_.size() || layer_index_[next] != li + 1) return 0;
        const int64_t nli = li + 1;
        const Prefetched& ahead = prefetched_[nli & 1];
        const int64_t copied = ahead.layer == nli ? static_cast<int64_t>(ahead.experts.size()) : 0;
        const auto want = static_cast<size_t>(std::lround(lanes_.expected_decode_cpu_share() * static_cast<double>(step.k - copied)));
        warmed_.clear();
        for (int64_t j = 0; j < step.k && warmed_.size() < want; ++j) {
            const int32_t x = predicted[j];
            if (x < 0 || static_cast<uint32_t>(x) >= n_expert_ || slot_of_[id(nli, x)] >= 0) continue;
            if (ahead.layer == nli && std::any_of(ahead.experts.begin(), ahead.experts.end(),
                                                  [&](const auto& a) { return a.first == x; })) continue;
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

    // The CPU lane of lane_job_: its sum into job.out, then whether the GPU's part was done by
    // then (the lanes' feedback), then the counter the early combine waits on. Runs on the lane's
    // thread (overlapping the GPU's part) or on the caller's.
    void run_lane() {
        const LaneJob& j = lane_job_;
        // x86 keeps the sum's stores before this one; the GPU reads the sum in a later kernel.
        const auto raise_counter = [&] {
            if (j.seq != 0) std::atomic_ref<uint32_t>(*lane_done_.as<uint32_t>()).store(j.seq, std::memory_order_release);
        };
        const auto t0 = Clock::now();
        lane_begin_ = t0;
        try {
            compute_on_cpu(*j.layer, j.h, j.weights, j.n, j.e, j.out, *j.cpu);
        } catch (...) {
            // The GPU must not wait for a sum that will not come: it goes on (with whatever the
            // buffer holds) and the host fails the pass when it awaits the lane (rethrown there).
            lane_computed_.store(true, std::memory_order_release);
            raise_counter();
            throw;
        }
        lane_seconds_ = seconds_since(t0);
        lane_gpu_first_ = !j.gpu_part || (gpu_part_queued_.load(std::memory_order_acquire) && experts_done_.done());
        lane_computed_.store(true, std::memory_order_release);  // what settle_lane reads is written
        raise_counter();
        lane_end_ = Clock::now();
        // Until the next step needs the lane (await_lane stops it): the next layer's likely experts.
        if (warm_ready_.load(std::memory_order_acquire)) warmer_.run(j.cpu->pool());
    }
    // After a lane ended: its feedback and time, and its experts' pair lists cleared.
    void settle_lane() {
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
    void await_lane() {
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
    // A pending lane whose sum is known to be done (the step's routing came after the combine
    // that waited for it): asks its warming to stop and settles it, leaving its thread to be
    // joined (join_lane) once this thread has planned the step, so the two overlap.
    void release_lane() {
        if (!lane_pending_) return;
        lane_pending_ = false;
        lane_joinable_ = true;
        warmer_.stop();
        // Already true: only orders this thread's reads after the lane's writes.
        while (!lane_computed_.load(std::memory_order_acquire)) cpu_relax();
        settle_lane();
    }
    void join_lane() {
        if (!lane_joinable_) return;
        lane_joinable_ = false;
        cpu_lane_task_->wait();  // rethrows what the lane threw (its pair lists are cleared)
        timeline_.host_mark_at(lane_begin_, "L{} CPU lane began", lane_layer_);
        timeline_.host_mark_at(lane_end_, "L{} CPU lane ended (its sum, not its warming)", lane_layer_);
    }

    // The misses' lanes (experts/miss_lanes.h): cpu_lane_ and stream_lane_ from stream_lane_.
    void choose_cpu_lane(const TierLayer& L, int64_t li) {
        misses_.clear();
        for (int32_t x : stream_lane_) {
            // An expert the last lane read into cache is the CPU's first choice: the coldest heat.
            const bool warm = warmed_layer_ == li && std::find(warmed_.begin(), warmed_.end(), x) != warmed_.end();
            const double heat = warm ? std::numeric_limits<double>::lowest() : policy_->heat(id(li, x));
            misses_.push_back({x, static_cast<int64_t>(by_expert_[static_cast<size_t>(x)].size()), heat});
        }
        const double backlog_s = link_backlog_on_ ? std::max(0.0, std::chrono::duration<double>(link_free_at_ - Clock::now()).count()) : 0.0;
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

    // Σ over the CPU lane's pairs of weight · expert(h), per token, into out (n rows of e).
    void compute_on_cpu(const TierLayer& L, const float* h, const float* weights, int64_t n, int64_t e, float* out,
                        CpuContext& cpu) {
        const auto t0 = Clock::now();
        cpu_lane_math_.compute(L.host, options_.activation, cpu_lane_, by_expert_, step_k_, h, weights, n, e, out, cpu);
        lanes_.cpu_feedback(seconds_since(t0));  // refines the CPU cost model
    }

    gpu::GpuExpertActivation gpu_activation() const {
        return options_.activation == ExpertActivation::GptOssClampedSwiGlu ? gpu::GpuExpertActivation::GptOssClampedSwiGlu
                                                                            : gpu::GpuExpertActivation::SwiGlu;
    }

    static Status upload_bias(gpu::GpuContext& ctx, const Weight& w, gpu::DeviceBuffer& out) {
        if (!w) return Status::ok();
        const uint64_t bytes = static_cast<uint64_t>(w.rows()) * w.row_bytes;
        std::string error;
        out = ctx.pool().allocate(bytes, &error);
        if (!out) return Status::error("the expert biases ({} bytes) do not fit in VRAM: {}", bytes, error);
        ctx.upload(out.data(), w.data, bytes);
        return Status::ok();
    }

    // When the link will be done with what is queued on it, by the measured link speed: a batch
    // of `bytes` queued now starts once the link is free. Copies that wait for a ring half start
    // later, so this is the earliest the link can be free.
    void queued_on_link(uint64_t bytes) {
        const auto now = Clock::now();
        const auto seconds = std::chrono::duration<double>(static_cast<double>(bytes) / (link_gbps_ * 1e9));
        link_free_at_ = std::max(link_free_at_, now) + std::chrono::duration_cast<Clock::duration>(seconds);
    }

    // Gathers the expert's three parts into copies_ (queued by copies_.submit on the copy stream).
    void copy_expert(const TierLayer& L, int32_t x, int32_t slot) {
        uint8_t* dst = pool_buffer_.as<uint8_t>() + static_cast<uint64_t>(slot) * slot_bytes_;
        copies_.add(dst, L.host.gate.matrix(x), L.gate_bytes);
        copies_.add(dst + L.up_offset, L.host.up.matrix(x), L.up_bytes);
        copies_.add(dst + L.down_offset, L.host.down.matrix(x), L.down_bytes);
    }

    // Page-locks the span of the mapped file that holds the expert tensors.
    void pin_file(GpuExpertTierSummary* summary) {
        if (!options_.pin_file || layers_.empty()) {
            if (summary) summary->pin_note = "not asked for";
            return;
        }
        const uint8_t* lo = nullptr;
        const uint8_t* hi = nullptr;
        for (const TierLayer& t : layers_) {
            for (const Weight* w : {&t.host.gate, &t.host.up, &t.host.down}) {
                const uint8_t* b = w->data;
                const uint8_t* end = b + static_cast<uint64_t>(w->rows()) * w->row_bytes;
                lo = lo ? std::min(lo, b) : b;
                hi = hi ? std::max(hi, end) : end;
            }
        }
        constexpr uintptr_t kPage = 4096;
        const auto a = reinterpret_cast<uintptr_t>(lo) / kPage * kPage;
        const auto b = (reinterpret_cast<uintptr_t>(hi) + kPage - 1) / kPage * kPage;
        std::string error;
        const bool ok = registration_.register_range(reinterpret_cast<const void*>(a), b - a, true, &error);
        if (summary) {
            summary->file_pinned = ok;
            summary->pin_note = ok ? fmt::format("{:.2f} GiB of the mapped file page-locked", static_cast<double>(b - a) / (1 << 30))
                                   : fmt::format("page-locking the mapped file failed ({}): copies are staged by the driver", error);
        }
    }

    // Host → VRAM bandwidth from the (pinned) file: the staging ring filled three times.
    void measure_link(gpu::GpuContext& ctx, GpuExpertTierSummary* summary) {
        const TierLayer& L = layers_[0];
        gpu::GpuEvent start, end;
        double best = 0.0;
        for (int rep = 0; rep < 3; ++rep) {
            start.record(copy_stream_.handle());
            for (uint64_t s = 0; s < staging_count_; ++s)
                copy_expert(L, static_cast<int32_t>(s % n_expert_), staging_[static_cast<size_t>(s)]);
            copies_.submit(copy_stream_.handle());
            end.record(copy_stream_.handle());
            end.synchronize();
            const double secs = static_cast<double>(end.ms_since(start)) / 1e3;
            const double gbps = static_cast<double>(staging_count_ * L.expert_bytes()) / secs / 1e9;
            best = std::max(best, gbps);
        }
        link_gbps_ = best > 0 ? best : 10.0;
        lanes_.set_link(link_gbps_);
        step_done_.record(ctx.stream());
        if (summary) summary->link_gbps = link_gbps_;
    }

    // The cache starts full: first the profile's hot set (hottest first), then, for the slots
    // left, layer after layer expert 0, 1, ... of each, so every layer gets an equal share
    // (uniform routing makes any equal share as good as another).
    void fill_cache(gpu::GpuContext& ctx) {
        uint64_t s = 0;
        auto place = [&](int64_t li, int32_t x) {
            if (s >= cache_count_ || slot_of_[id(li, x)] >= 0) return;
            copy_expert(layers_[static_cast<size_t>(li)], x, static_cast<int32_t>(s));
            slot_of_[id(li, x)] = static_cast<int32_t>(s);
            owner_[s] = static_cast<int64_t>(id(li, x));
            ++s;
            if (copies_.size() >= 3 * 256) copies_.submit(copy_stream_.handle());
        };
        for (const ExpertKey& key : options_.hot_set) {
            if (key.layer >= layer_index_.size() || layer_index_[key.layer] < 0 || key.expert >= n_expert_) continue;
            place(layer_index_[key.layer], static_cast<int32_t>(key.expert));
        }
        const uint64_t n_layers = layers_.size();
        for (uint64_t i = 0; i < key_count() && s < cache_count_; ++i)
            place(static_cast<int64_t>(i % n_layers), static_cast<int32_t>(i / n_layers));
        copies_.submit(copy_stream_.handle());
        copy_stream_.synchronize();
        ctx.synchronize();
    }

    // One expert on the CPU, for 1 and for 8 tokens: the cost model's starting point.
    void calibrate(const TierLayer& L, int64_t e, CpuContext& cpu) {
        calibrated_ = true;
        const CpuExpertCosts c = CpuExpertLane::calibrate(L.host, n_expert_, e, cpu);
        lanes_.set_cpu_costs(c.expert_s, c.token_s);
    }

    GpuExpertTierOptions options_;
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
    // Early combine (STRATA_TIERS_EARLY_COMBINE=0 turns it off, to compare): the counter in
    // page-locked memory that the GPU waits on before the combine.
    bool early_combine_ = [] {
        const char* v = std::getenv("STRATA_TIERS_EARLY_COMBINE");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    gpu::PinnedBuffer lane_done_;
    // The routing's and the prediction's arrival on the host (fetch_routing, fetch_prediction,
    // await_flag); off or not allocated: events. STRATA_TIERS_ROUTING_FLAG=0 waits for the events,
    // to compare.
    HostFlag routing_flag_, prediction_flag_;
    bool host_flags_on_ = [] {
        const char* v = std::getenv("STRATA_TIERS_ROUTING_FLAG");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    bool step_done_after_combine_ = [] {
        const char* v = std::getenv("STRATA_TIERS_STEP_DONE");
        return v != nullptr && std::strcmp(v, "combine") == 0;
    }();
    uint32_t lane_seq_ = 0;
    // Warming (plan_warm; STRATA_TIERS_WARM=0 turns it off and =read keeps the lines where they
    // were read, to compare): what the lane reads after
    // its sum, set up by the step thread while the lane runs and published by warm_ready_.
    bool warm_enabled_ = [] {
        const char* v = std::getenv("STRATA_TIERS_WARM");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    CacheWarmer warmer_;
    std::atomic<bool> warm_ready_{false};
    std::vector<int32_t> warmed_;  // experts of layer warmed_layer_ (-1: none) the lane read
    int64_t warmed_layer_ = -1;
    uint64_t warm_offered_ = 0, warm_used_ = 0;  // this step: warmed experts it found, and gave the lane
    int ordinal_;
    gpu::GpuStream copy_stream_;
    gpu::CopyBatch copies_;
    gpu::HostRegistration registration_;
    gpu::GpuEvent step_done_, half_free_[2], half_copied_[2];
    gpu::GpuEvent experts_done_;  // the GPU's part of the step's experts (for MissLanes::decode_feedback)
    gpu::GpuEvent routed_, predicted_;  // the step's routing, and the next layer's guess, on the host
    // Experts copied ahead for a layer (tier index `layer`; -1: none) into the top of staging half
    // layer & 1, as (expert, slot); the event marks their copies.
    struct Prefetched {
        int64_t layer = -1;
        std::vector<std::pair<int32_t, int32_t>> experts;
    } prefetched_[2];
    gpu::GpuEvent prefetch_copied_[2];
    std::vector<std::pair<int32_t, int32_t>> prefetch_hits_;  // this step's used experts found there
    // Scan steps (stream_ahead): the next layer's experts copied ahead of its routing into staging
    // half `half`, as (expert, slot); the event marks their copies. layer -1: none.
    struct StreamedAhead {
        int64_t layer = -1;
        int half = 0;
        std::vector<std::pair<int32_t, int32_t>> experts;
    } streamed_ahead_;
    gpu::GpuEvent ahead_copied_;
    Clock::time_point link_free_at_{};  // queued_on_link
    // STRATA_TIERS_LINK_BACKLOG=0 leaves the link's backlog out of the CPU lane's share, to compare.
    bool link_backlog_on_ = [] {
        const char* v = std::getenv("STRATA_TIERS_LINK_BACKLOG");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    LinkClock link_clock_{[] {  // the copy stream's busy time, for the statistics
        const char* v = std::getenv("STRATA_TIERS_LINK_CLOCK");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }()};
    TierTimeline timeline_;  // a diagnostic (STRATA_TIERS_TIMELINE)
    std::vector<std::pair<int32_t, int32_t>> ahead_hits_;  // this step's used experts found there
    std::vector<AheadCandidate> ahead_candidates_;
    std::vector<int32_t> ahead_choice_;
    // To compare: STRATA_TIERS_STREAM_AHEAD=0 turns the copies ahead of scan steps off, and
    // STRATA_TIERS_SCAN_ADMIT=1 lets scan steps shape the cache.
    bool stream_ahead_enabled_ = [] {
        const char* v = std::getenv("STRATA_TIERS_STREAM_AHEAD");
        return v == nullptr || std::strcmp(v, "0") != 0;
    }();
    // STRATA_TIERS_SCAN_COVERAGE sets another threshold (tests make the fixtures' small steps scans).
    double scan_coverage_ = [] {
        const char* v = std::getenv("STRATA_TIERS_SCAN_COVERAGE");
        return v ? std::atof(v) : kScanCoverage;
    }();
    bool scan_admits_ = [] {
        const char* v = std::getenv("STRATA_TIERS_SCAN_ADMIT");
        return v != nullptr && std::strcmp(v, "1") == 0;
    }();
    std::vector<TierLayer> layers_;
    std::vector<int32_t> layer_index_;  // model layer → position in layers_, or -1
    uint32_t n_expert_ = 0;
    uint64_t slot_bytes_ = 0, cache_count_ = 0, staging_count_ = 0;
    gpu::DeviceBuffer pool_buffer_;
    std::vector<int32_t> slot_of_;   // by id
    std::vector<int64_t> owner_;     // by slot: id or -1
    std::vector<int32_t> staging_;   // the ring's slots, two halves
    uint64_t chunk_counter_ = 0;
    std::unique_ptr<ExpertPolicy> policy_;

    double link_gbps_ = 10.0;
    bool calibrated_ = false;
    MissLanes lanes_{options_.miss_lane};
    std::vector<MissedExpert> misses_;

    // Per-step scratch, reused.
    std::vector<std::vector<int32_t>> by_expert_;
    std::vector<int32_t> used_, hits_, cpu_lane_, stream_lane_, stream_slots_;
    uint64_t cpu_pairs_ = 0;
    int64_t step_k_ = 1;
    std::vector<uint32_t> residents_, used_ids_, streamed_ids_;
    std::vector<int32_t> admissible_slots_;  // the slots of streamed_ids_
    std::vector<int32_t> last_writer_;       // by slot: the stream lane's last expert copied there, or -1
    std::vector<LaunchSet> sets_;
    CpuExpertLane cpu_lane_math_;
    PinnedArray host_ids_, host_h_, host_plan_, host_cpu_out_;
    DeviceArray dev_plan_, dev_gate_, dev_up_, dev_out_, dev_cpu_out_, dev_gate_q8_;
};

}  // namespace

std::string GpuExpertTierSummary::describe() const {
    return fmt::format(
        "expert tiers: {} MoE layers × {} experts, slots of {:.2f} MiB: {} cached in VRAM ({:.1f}% of experts), {} "
        "staging; host → VRAM {:.1f} GB/s; {}",
        moe_layers, experts_per_layer, static_cast<double>(slot_bytes) / (1 << 20), cache_slots,
        moe_layers * experts_per_layer > 0 ? 100.0 * static_cast<double>(cache_slots) / static_cast<double>(moe_layers * experts_per_layer) : 0.0,
        staging_slots, link_gbps, pin_note);
}

Result<std::unique_ptr<gpu::RoutedExperts>> make_gpu_expert_tiers(const GgufFile& file, gpu::GpuContext& ctx,
                                                                  const GpuExpertTierOptions& options,
                                                                  GpuExpertTierSummary* summary) {
    STRATA_ASSIGN_OR_RETURN(std::vector<ExpertLayerTensors> layers, expert_tensors_from_gguf(file));
    std::erase_if(layers, [&](const ExpertLayerTensors& l) { return l.layer < options.layer_begin || l.layer >= options.layer_end; });
    if (layers.empty()) return Status::error("{} has no routed experts to tier in layers {}-{}", file.path(), options.layer_begin, options.layer_end);
    if (options.policy != "lru" && options.policy != "lfu")
        return Status::error("--expert-policy: expected lru or lfu, got {:?}", options.policy);
    if (options.miss_lane != "auto" && options.miss_lane != "cpu" && options.miss_lane != "stream")
        return Status::error("--miss-lane: expected auto, cpu or stream, got {:?}", options.miss_lane);
    auto tiers = std::make_unique<GpuExpertTiers>(std::move(layers), ctx, options);
    STRATA_TRY(tiers->init(ctx, summary));
    return std::unique_ptr<gpu::RoutedExperts>(std::move(tiers));
}

}  // namespace strata
