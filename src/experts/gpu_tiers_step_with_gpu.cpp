// One MoE layer step of the GPU expert tiers (experts/gpu_expert_tiers_impl.h), phase by phase:
//   route          - the routing (and the next layer's guess) up to the host;
//   classify       - each used expert: a hit, copied ahead, or a miss; the misses' lanes;
//   start_lane     - the CPU's misses start on the lane's thread;
//   queue_gpu_part - the plan, the streamed copies and the GPU's launches, queued;
//   queue_ahead    - the next layer's likely experts: copied ahead, or warmed by the lane;
//   combine        - the GPU's rows and the lane's sum added into the residual, with the next norm;
//   update_cache   - the policy admits streamed experts into the cache;
//   record_stats.
#include <fmt/format.h>

#include <cstring>

#include "experts/gpu_expert_tiers_impl.h"

namespace strata::gpu_tiers {

void GpuExpertTiers::forward(const gpu::RoutedExpertsStep& step, gpu::GpuContext& g, CpuContext& cpu) {
    TierStep s;
    s.t_start = Clock::now();
    STRATA_CHECK(step.layer >= 0 && static_cast<size_t>(step.layer) < layer_index_.size() &&
                     layer_index_[static_cast<size_t>(step.layer)] >= 0,
                 "expert tiers: a MoE layer the tiers do not hold");
    s.step = &step;
    s.li = layer_index_[static_cast<size_t>(step.layer)];
    s.layer = &layers_[static_cast<size_t>(s.li)];
    s.n = step.n_tokens, s.k = step.k, s.e = step.n_embd, s.pairs = s.n * s.k;
    s.ff = s.layer->host.gate.ne[1];
    if (s.n == 0) return;
    if (!calibrated_) calibrate(*s.layer, s.e, cpu);
    timeline_.begin_pass(g.stream());

    route(s, g);
    classify(s);
    start_lane(s, cpu);
    queue_gpu_part(s, g);
    queue_ahead(s);
    s.plan_s = seconds_since(s.t_start) - s.wait_s;
    s.routing_to_lane_s = lane_pending_ ? seconds_between(s.t_routed, lane_started_) : 0.0;
    combine(s, g);
    const auto t_policy = Clock::now();
    update_cache(s);
    record_stats(s, t_policy);
    // The lane's experts keep their pair lists until it is awaited (settle_lane).
    for (int32_t x : used_) {
        if (!lane_pending_ || std::find(lane_experts_.begin(), lane_experts_.end(), x) == lane_experts_.end()) {
            by_expert_[static_cast<size_t>(x)].clear();
        }
    }
}

// The routing (then the next layer's predicted experts, for prefetch) and the normed input the
// CPU lane may need come to the host: host buffers [ids | weights | predicted] and h.
void GpuExpertTiers::route(TierStep& s, gpu::GpuContext& g) {
    const gpu::RoutedExpertsStep& step = *s.step;
    const auto pairs = static_cast<uint64_t>(s.pairs);
    const auto values = static_cast<uint64_t>(s.n * s.e);
    // The last step's CPU lane may still be running (early combine): it reads these buffers,
    // which the routing overwrites only behind that step's combine, so only a buffer that must
    // grow waits for it first.
    if (!host_ids_.holds<int32_t>(3 * pairs) || !host_h_.holds<float>(values) || !host_cpu_out_.holds<float>(values)) {
        await_lane();
    }
    s.ids = host_ids_.get<int32_t>(3 * pairs);
    s.weights = reinterpret_cast<float*>(s.ids + s.pairs);
    s.predicted = prefetch_wanted(step) ? s.ids + 2 * s.pairs : nullptr;
    s.h = host_h_.get<float>(values);
    // The next layer's router runs behind the routing's trip to the host, so that the host (and
    // the CPU lane) need not wait for it; its guess is awaited only before the copies made ahead.
    void* stream = g.stream();
    const RoutingFetch routing = fetch_routing(step, s.ids, s.h, g);
    routed_.record(stream);  // (the host waits for the routing's flag or tags when there are: await_routing)
    timeline_.mark(stream, "L{} gpu routed", s.li);
    if (s.predicted) {
        (*step.queue_prediction)();
        s.prediction_seq = fetch_prediction(step, s.predicted, g);
        predicted_.record(stream);
    }
    const auto t_wait = Clock::now();
    await_routing(routing, s);
    s.t_routed = Clock::now();
    timeline_.host_mark("L{} host has routing", s.li);
    s.lane_was_pending = lane_pending_;
    release_lane();  // its sum is done: the GPU passed the combine that waited for it
    s.t_joined = Clock::now();
    s.wait_s = seconds_between(t_wait, s.t_joined);
    // The serial path between two lanes (decode's limit when most experts miss): from the last
    // lane's end to this routing on the host (the GPU's combine, attention and router, and the
    // trip back), and from the last lane's start call to its first instruction.
    if (s.lane_was_pending) {
        s.lane_to_routing_s = std::max(0.0, seconds_between(lane_end_, s.t_routed));
        if (s.n == 1) chain_s_ += 0.05 * (s.lane_to_routing_s - chain_s_);  // (copy_ahead's, decode only)
        s.lane_wake_s = std::max(0.0, seconds_between(lane_started_, lane_begin_));
    }
    step_k_ = s.k;  // (read by the lane)
}

// Pairs grouped by expert; each used expert is a hit, one copied ahead (by the last layer's
// decode step, or streamed ahead after a scan step), a CPU miss or a streamed miss.
void GpuExpertTiers::classify(TierStep& s) {
    if (by_expert_.size() < n_expert_) by_expert_.resize(n_expert_);
    used_.clear();
    for (int64_t p = 0; p < s.pairs; ++p) {
        const int32_t x = s.ids[p];
        STRATA_CHECK(x >= 0 && static_cast<uint32_t>(x) < n_expert_, "expert tiers: routed expert id out of range");
        auto& list = by_expert_[static_cast<size_t>(x)];
        if (list.empty()) used_.push_back(x);
        list.push_back(static_cast<int32_t>(p));
    }
    std::sort(used_.begin(), used_.end());
    hits_.clear(), cpu_lane_.clear(), stream_lane_.clear(), prefetch_hits_.clear(), ahead_hits_.clear();
    s.scan = is_scan_step(used_.size(), n_expert_, scan_coverage_);
    Prefetched& ahead = prefetched_[s.li & 1];  // what the previous layer copied ahead for this one
    if (ahead.layer != s.li || s.n != 1) ahead.experts.clear();
    StreamedAhead& scan_ahead = streamed_ahead_;  // ... or, after a scan step, streamed ahead
    if (scan_ahead.layer != s.li) scan_ahead.experts.clear();
    const auto find_in = [](const ExpertSlotList& v, int32_t x) {
        return std::find_if(v.begin(), v.end(), [&](const auto& a) { return a.first == x; });
    };
    for (int32_t x : used_) {
        if (slots_.resident(id(s.li, x))) hits_.push_back(x);
        else if (const auto pf = find_in(ahead.experts, x); pf != ahead.experts.end()) prefetch_hits_.push_back(*pf);
        else if (const auto sa = find_in(scan_ahead.experts, x); sa != scan_ahead.experts.end()) ahead_hits_.push_back(*sa);
        else stream_lane_.push_back(x);
    }
    s.wait_prefetch = !prefetch_hits_.empty();
    s.prefetched_before = ahead.experts.size() + scan_ahead.experts.size();
    s.ahead_half = scan_ahead.half;
    ahead.layer = -1, ahead.experts.clear();
    scan_ahead.layer = -1, scan_ahead.experts.clear();
    choose_cpu_lane(*s.layer, s.li);
}

// The CPU lane starts now, on its own thread (which drives the thread pool), when the GPU has a
// part too: it runs while this thread plans and queues the GPU's part, instead of after it.
// Nothing it reads or writes is touched here until it is awaited.
void GpuExpertTiers::start_lane(TierStep& s, CpuContext& cpu) {
    s.cpu_part = !cpu_lane_.empty();
    s.overlap = s.cpu_part && (!hits_.empty() || !stream_lane_.empty() || !prefetch_hits_.empty());
    const auto values = static_cast<uint64_t>(s.n * s.e);
    s.cpu_out = s.cpu_part ? host_cpu_out_.get<float>(values) : nullptr;
    // Early combine: the combine (and what the forward queues after it) waits for the lane on the
    // GPU, so this thread returns without waiting for it. It needs the lane's sum and the counter
    // read through the GPU's mapping of page-locked memory.
    s.early = s.overlap && early_combine_ && lane_done_.device_view() != nullptr &&
              lane_sum_view() != nullptr;
    // A decode step's sum goes down as tagged words, which the GPU polls once the lane raises
    // its counter (as it begins the down products).
    s.tagged_sum = s.early && tagged_on_ && s.n == 1 && lane_pairs_view(values) != nullptr;
    join_lane();  // the last lane's thread (its warming stopped while this thread planned)
    if (s.cpu_part) {
        if (s.early && ++lane_seq_ == 0) ++lane_seq_;  // 0 means "no counter to raise"
        lane_job_ = LaneJob{s.layer,  s.h,      s.weights, s.n, s.e, s.cpu_out, &cpu, s.overlap, s.early ? lane_seq_ : 0u,
                            s.tagged_sum ? host_lane_pairs_.buffer.as<uint64_t>() : nullptr};
        warm_ready_.store(false, std::memory_order_relaxed);  // plan_warm() may set it
        gpu_part_queued_.store(false, std::memory_order_relaxed);
        lane_experts_ = cpu_lane_;
    }
    if (s.overlap) {
        if (!cpu_lane_task_) cpu_lane_task_ = std::make_unique<BackgroundTask>(cpu.pool().spin_us());
        lane_started_ = Clock::now();
        lane_computed_.store(false, std::memory_order_relaxed);
        lane_layer_ = s.li;
        cpu_lane_task_->start(lane_fn_);
        timeline_.host_mark("L{} host started the CPU lane ({} experts)", s.li, cpu_lane_.size());
        lane_pending_ = true;
    }
}

// The GPU's plan (experts/gpu_step_plan.h), then its upload, the streamed copies (copy stream)
// and the launches.
void GpuExpertTiers::queue_gpu_part(TierStep& s, gpu::GpuContext& g) {
    const gpu::RoutedExpertsStep& step = *s.step;
    const TierLayer& L = *s.layer;
    const auto used = static_cast<int64_t>(used_.size());
    // The plan goes up in one transfer (each is an API call on the step's critical path).
    const PlanLayout layout(s.pairs, s.pairs + used, used + 1);
    uint8_t* plan_host = host_plan_.get<uint8_t>(layout.bytes);
    // Prompt batches use the wide-tile kernel, as the all-in-VRAM forward does.
    const int tile_width = gpu::gpu_moe_tile_columns(s.pairs, n_expert_, L.gate, L.down);
    GpuStepPlan plan(plan_host, layout, by_expert_, s.weights, s.pairs, tile_width);
    plan.open_set(GpuStepPlan::kHitsSet);
    for (int32_t x : hits_) plan.add_expert(x, slots_.slot_of(id(s.li, x)));
    for (const auto& [x, slot] : prefetch_hits_) plan.add_expert(x, slot);
    plan.close_set();
    // Streamed ahead (the last step was a scan): computed right after the hits, so that their
    // ring half is free again for this step's second chunk.
    if (!ahead_hits_.empty()) {
        plan.open_set(s.ahead_half, true);
        for (const auto& [x, slot] : ahead_hits_) plan.add_expert(x, slot);
        plan.close_set();
    }
    const auto half = static_cast<int64_t>(staging_count_ / 2);
    s.chunks = plan.add_streamed(stream_lane_, StagingRing{slots_.ring(), half, chunk_counter_}, stream_slots_);
    s.gpu_part = plan.sorted_pairs() > 0;
    if (!s.gpu_part) return;
    plan.finish();

    // By a kernel reading the host buffer where it is mapped (see fetch_routing), at any size: a
    // copy would wait for a copy engine behind the experts streamed ahead (a prompt's plan is
    // ~80 KB; it waited ~1.8 ms a layer, holding up the hits; bench/results/2026-11-30-scan-steps:
    // pp512 at 10 GiB 2,453-2,517 tok/s copied against 2,971-3,075 read through the mapping).
    void* stream = g.stream();
    uint8_t* d_plan = dev_plan_.get<uint8_t>(g.pool(), layout.bytes);
    void* view = view_of(host_plan_);
    if (view) gpu::gpu_copy_words(d_plan, view, layout.bytes, g);
    else g.upload(d_plan, plan_host, layout.bytes);
    s.d_weights = reinterpret_cast<const float*>(d_plan + layout.weights);
    const auto n_sorted = static_cast<uint64_t>(plan.sorted_pairs());
    // Int8 activations (narrow tiles: the matrix-vector kernel; wide ones: the MMQ tiles, which is
    // when the step has hq for a prompt batch): h as the router's matmul quantized it, the gate
    // rows quantized per launch set as they are computed.
    // The down projection reads the gate rows as int8 only when they are whole 32-value blocks: an
    // expert FFN of 24 or 48 values takes the float kernel there (it was an internal error).
    const bool int8 = step.hq != nullptr;
    const bool gate_int8 = int8 && s.ff % 32 == 0;
    gpu::GpuQ8Rows gate_q8;
    if (gate_int8) gate_q8 = gpu::gpu_q8_view(dev_gate_q8_.get<uint8_t>(g.pool(), gpu::gpu_q8_bytes(plan.sorted_pairs(), s.ff)), plan.sorted_pairs(), s.ff);
    const StepLaunch launch{
        .sorted = reinterpret_cast<int32_t*>(d_plan + layout.sorted),
        .tiles = reinterpret_cast<int32_t*>(d_plan + layout.tiles),
        .counts = reinterpret_cast<int32_t*>(d_plan + layout.counts),
        .tile_width = tile_width,
        .gate = dev_gate_.get<float>(g.pool(), n_sorted * static_cast<uint64_t>(s.ff)),
        .up = dev_up_.get<float>(g.pool(), n_sorted * static_cast<uint64_t>(s.ff)),
        .hx = int8 ? step.hq : nullptr,
        .gx = gate_int8 ? &gate_q8 : nullptr,
        // gpt-oss: biases and its clamped activation, unfused (as the all-resident forward).
        .biased_act = L.host.biased() || options_.activation != ExpertActivation::SwiGlu,
    };
    s.out = dev_out_.get<float>(g.pool(), static_cast<uint64_t>(s.pairs * s.e));
    if (s.cpu_part) gpu::memset_async(s.out, 0, static_cast<uint64_t>(s.pairs * s.e) * sizeof(float), stream);

    // Copies into a ring half wait for the compute that last read it: the previous step (its end
    // event) or, within this step, the chunk two before. Experts copied ahead are computed once
    // their copies (queued a layer ago) are done.
    step_done_.make_wait(copy_stream_.handle());
    if (s.wait_prefetch) prefetch_copied_[s.li & 1].make_wait(stream);
    size_t streamed = 0;
    for (size_t si = 0; si < plan.sets().size(); ++si) {
        const LaunchSet& set = plan.sets()[si];
        if (set.copied_ahead) ahead_copied_.make_wait(stream);
        else if (set.half >= 0) queue_streamed_chunk(s, si, set.half, streamed, g);
        queue_launch_set(s, set, si, launch, g);
    }
    // Rows of pairs the CPU computes are zero with weight zero: the bias there is dropped by the
    // combine.
    if (L.down_bias) gpu::gpu_moe_add_expert_bias(s.out, step.ids, s.pairs, s.e, L.down_bias.as<float>(), g);
    chunk_counter_ += static_cast<uint64_t>(s.chunks);
    experts_done_.record(stream);
    gpu_part_queued_.store(true, std::memory_order_release);
}

// One launch set's experts: gate and up (fused with the activation where a kernel does both),
// then down into the pairs' rows of s.out.
void GpuExpertTiers::queue_launch_set(const TierStep& s, const LaunchSet& set, size_t si, const StepLaunch& launch,
                                      gpu::GpuContext& g) {
    const gpu::RoutedExpertsStep& step = *s.step;
    const TierLayer& L = *s.layer;
    timeline_.mark(g.stream(), "L{} compute start set{} ({} pairs)", s.li, si, set.count);
    gpu::MoePlan plan;
    plan.tile_columns = launch.tile_width;
    plan.max_tile_pairs = static_cast<int>(std::min<int64_t>(launch.tile_width, s.n));  // an expert's pairs are distinct tokens
    plan.n_pairs = set.count;
    plan.max_tiles = set.tiles;
    plan.sorted = launch.sorted;
    plan.tiles = launch.tiles + 3 * set.tile_first;
    plan.n_tiles = launch.counts + si;
    float* gate = launch.gate;
    float* up = launch.up;
    const int64_t ff = s.ff;
    const bool fused = launch.hx && !launch.biased_act &&
                       gpu::gpu_matvec_q8_swiglu_experts(L.gate, L.up, plan, *launch.hx, gpu::MoeRows::Pair, s.k, gate,
                                                         gpu::MoeRows::Sorted, g);
    if (!fused) {
        gpu::gpu_matmul_experts_rows(L.gate, plan, step.h, gpu::MoeRows::Pair, s.k, gate, gpu::MoeRows::Sorted, g, launch.hx);
        gpu::gpu_matmul_experts_rows(L.up, plan, step.h, gpu::MoeRows::Pair, s.k, up, gpu::MoeRows::Sorted, g, launch.hx);
        if (launch.biased_act) {  // as the all-resident forward: biases, then the activation
            gpu::gpu_moe_bias_activation(gate + set.first * ff, up + set.first * ff, step.ids, set.count, ff,
                                         L.gate_bias.as<float>(), L.up_bias.as<float>(), gpu_activation(), g,
                                         launch.sorted + set.first);
        } else {
            gpu::gpu_swiglu(gate + set.first * ff, up + set.first * ff, set.count * ff, g);
        }
    }
    if (launch.gx) gpu::gpu_quantize_q8_rows(gate, set.first, set.count, *launch.gx, g);
    gpu::gpu_matmul_experts_rows(L.down, plan, gate, gpu::MoeRows::Sorted, 1, s.out, gpu::MoeRows::Pair, g, launch.gx);
    if (set.half >= 0) half_free_[set.half].record(g.stream());
    timeline_.mark(g.stream(), "L{} compute end set{}", s.li, si);
}

// The next layer's likely experts go up behind this layer's copies, while the link would otherwise
// wait for the CPU lane and the next layer's routing; after a scan step, the next layer's experts
// that are not in VRAM (experts/scan_steps.h). The lane, once its sum is done, reads the next
// layer's likely CPU experts into cache.
void GpuExpertTiers::queue_ahead(TierStep& s) {
    const gpu::RoutedExpertsStep& step = *s.step;
    if (s.predicted) await_flag(prediction_flag_, s.prediction_seq, predicted_);  // queued behind the routing
    s.copied_ahead = s.predicted ? copy_ahead(step, s.predicted, s.li) : 0;
    // (Not beside a decode step's own copies ahead, which use the top of a half.)
    if (s.scan && !s.predicted) s.copied_ahead += stream_ahead(s.li);
    s.warmed = s.predicted && lane_pending_ ? plan_warm(step, s.predicted, s.li) : 0;
}

// The CPU part (started above, or run here when it is the only part) and the combine: the GPU's
// experts are combined into x fused with the next block's norm, as in the all-resident forward
// (same kernel, same bits when every expert ran on the GPU); the CPU lane's sum is added in the
// same pass. A decode step's sum comes down as tagged words that a kernel polls and writes to
// VRAM (core/tagged_words.h); a prompt step's is read by the combine straight from the host buffer
// where the runtime maps it, after a wait for the lane's counter (no copy engine: see
// fetch_routing); else it comes by a copy.
void GpuExpertTiers::combine(TierStep& s, gpu::GpuContext& g) {
    const gpu::RoutedExpertsStep& step = *s.step;
    // The step's experts are done with the ring and the cache slots: copies into them may go on
    // (the combine reads neither). A decode step records that before the wait for the lane, not
    // after the combine: an event in the chain from the lane's end to the next routing costs ~6 µs
    // there while the link streams. Prompt steps keep it after the combine (pp512 measured 1.01x
    // faster so, within the noise; bench/results/2026-11-30-chain-events).
    const bool step_done_early = s.n == 1 && !step_done_after_combine_;
    if (step_done_early) step_done_.record(g.stream());
    const auto values = static_cast<uint64_t>(s.n * s.e);
    const float* d_cpu_out = nullptr;
    if (s.cpu_part) {
        const auto* lane_word = static_cast<const uint32_t*>(lane_done_.device_view());
        if (s.tagged_sum) {
            float* sum = dev_cpu_out_.get<float>(g.pool(), values);
            gpu::gpu_await_tagged_words(lane_pairs_view(values), values, lane_seq_, lane_word, lane_seq_, sum, g);
            timeline_.mark(g.stream(), "L{} gpu has the CPU lane's sum", s.li);
            d_cpu_out = sum;
        } else if (s.early) {
            gpu::gpu_wait_host_word(lane_word, lane_seq_, g);
            timeline_.mark(g.stream(), "L{} gpu saw the CPU lane's end", s.li);
        } else if (s.overlap) {
            await_lane();
        } else {
            run_lane(), settle_lane();
        }
        if (!d_cpu_out) d_cpu_out = static_cast<const float*>(lane_sum_view());
        if (!d_cpu_out) {
            float* copy = dev_cpu_out_.get<float>(g.pool(), values);
            g.upload(copy, s.cpu_out, values * sizeof(float));
            d_cpu_out = copy;
        }
    } else {
        lanes_.decode_feedback(!s.gpu_part || experts_done_.done());  // as if an empty lane ended now
    }
    if (s.gpu_part) {
        gpu::gpu_moe_combine_rms_norm(s.out, s.d_weights, s.n, s.k, s.e, step.x, step.next_norm, step.eps, step.h_next, g,
                                      step.hq_next, d_cpu_out);
    } else if (d_cpu_out) {
        gpu::gpu_add_rms_norm(step.x, d_cpu_out, step.next_norm, s.n, s.e, step.eps, step.h_next, g, step.hq_next);
    } else {
        gpu::gpu_rms_norm(step.x, step.next_norm, s.n, s.e, step.eps, step.h_next, g, step.hq_next);
    }
    if (!step_done_early) step_done_.record(g.stream());
    timeline_.mark(g.stream(), "L{} combine end", s.li);
    timeline_.host_mark("L{} host queued the combine (hits {}, streamed ahead {}, streamed {}, CPU {})", s.li, hits_.size(),
                        ahead_hits_.size(), stream_lane_.size(), cpu_lane_.size());
}

// The policy: streamed experts it admits keep their slot; the victim's joins the ring
// (experts/expert_slots.h). A scan step leaves the policy alone (experts/scan_steps.h): letting
// it admit lost (bench/results/2026-11-30-scan-steps).
void GpuExpertTiers::update_cache(TierStep& s) {
    if (s.scan) return;
    used_ids_.clear();
    for (int32_t x : used_) used_ids_.push_back(id(s.li, x));
    policy_->record_use(used_ids_);
    if (cache_count_ == 0) return;
    copied_before_.assign(prefetch_hits_.begin(), prefetch_hits_.end());
    copied_before_.insert(copied_before_.end(), ahead_hits_.begin(), ahead_hits_.end());
    const bool ahead_queued = streamed_ahead_.layer == s.li + 1;
    candidates_.collect(id(s.li, 0), stream_lane_, stream_slots_, copied_before_,
                        ahead_queued ? std::span<const std::pair<int32_t, int32_t>>(streamed_ahead_.experts)
                                     : std::span<const std::pair<int32_t, int32_t>>(),
                        slots_.slot_count());
    const std::vector<uint32_t>& keys = candidates_.keys();
    if (keys.empty()) return;
    slots_.residents(residents_);
    const PolicyDecision d = policy_->decide(keys, residents_, 0, keys.size());
    const size_t swaps = std::min(d.admit.size(), d.evict.size());
    for (size_t i = 0; i < swaps; ++i) {
        const auto it = std::find(keys.begin(), keys.end(), d.admit[i]);
        if (it == keys.end()) continue;
        const int32_t slot = candidates_.slots()[static_cast<size_t>(it - keys.begin())];
        if (slots_.admit(d.admit[i], slot, d.evict[i])) ++s.admitted;
    }
}

void GpuExpertTiers::record_stats(const TierStep& s, Clock::time_point t_policy) {
    if (!options_.stats) return;
    std::unique_lock<std::mutex> lock;
    if (options_.stats_mutex) lock = std::unique_lock<std::mutex>(*options_.stats_mutex);
    GpuExpertTierStats& st = *options_.stats;
    const uint64_t expert_bytes = s.layer->expert_bytes();
    st.layer_steps += 1;
    st.expert_uses += used_.size();
    st.hits += hits_.size();
    st.cpu_experts += cpu_lane_.size();
    st.streamed_experts += stream_lane_.size() + prefetch_hits_.size() + ahead_hits_.size();  // copied ahead: streamed too
    st.routed_pairs += static_cast<uint64_t>(s.pairs);
    st.hit_pairs += pairs_of(hits_);
    st.cpu_pairs += cpu_pairs_;
    st.streamed_pairs += pairs_of(stream_lane_);
    for (const auto* list : {&prefetch_hits_, &ahead_hits_})
        for (const auto& [x, slot] : *list) st.streamed_pairs += by_expert_[static_cast<size_t>(x)].size();
    st.admissions += s.admitted;
    st.bytes_streamed += (stream_lane_.size() + s.copied_ahead) * expert_bytes;
    st.prefetched += s.copied_ahead;
    st.prefetch_hits += prefetch_hits_.size() + ahead_hits_.size();
    st.prefetch_offered += s.prefetched_before;
    st.lanes_awaited_by_gpu += s.early ? 1 : 0;
    st.warmed_experts += s.warmed;
    st.warm_offered += warm_offered_;
    st.warm_used += warm_used_;
    st.bytes_cpu += cpu_lane_.size() * expert_bytes;
    st.seconds_wait_gpu += s.wait_s;
    st.seconds_plan += s.plan_s + seconds_since(t_policy);  // the policy's decisions too
    st.seconds_link += link_clock_.collect();
    st.seconds_lane_to_routing += s.lane_to_routing_s;
    st.seconds_routing_to_lane += s.routing_to_lane_s;
    st.seconds_lane_wake += s.lane_wake_s;
    st.seconds_lane_join += s.lane_was_pending ? seconds_between(s.t_routed, s.t_joined) : 0.0;
}

uint64_t GpuExpertTiers::pairs_of(const std::vector<int32_t>& experts) const {
    uint64_t total = 0;
    for (int32_t x : experts) total += by_expert_[static_cast<size_t>(x)].size();
    return total;
}

}  // namespace strata::gpu_tiers
