// What crosses the link for the GPU expert tiers (experts/gpu_expert_tiers_impl.h): the routing and
// the next layer's guess up to the host, experts down into staging slots (a step's own chunks,
// copies ahead for the next layer), and the link's backlog that the CPU lane's share counts.
#include <cstring>

#include "core/tagged_words.h"
#include "experts/copies_ahead.h"
#include "experts/gpu_expert_tiers_impl.h"

namespace strata::gpu_tiers {

namespace {
// Decode's transfers are a few KB, where the mapping wins (no copy engine to queue behind); a
// prompt batch's megabytes cross faster by a copy engine than by a kernel's reads or writes over
// the bus.
constexpr uint64_t kMappedTransferBytes = 64 << 10;
}  // namespace

// The GPU's view of a page-locked buffer for a transfer of `bytes` through its mapping, or null:
// a copy then.
void* GpuExpertTiers::mapped(const PinnedArray& a, uint64_t bytes) const {
    return bytes <= kMappedTransferBytes ? view_of(a) : nullptr;
}

// The CPU lane's sum as the combine reads it: through the mapping at any size where the runtime
// maps page-locked memory, else null (a copy). A prompt's sum (megabytes) would cross faster by
// a copy, but that copy waits for a copy engine behind the experts being streamed, and the host
// must wait for the lane to queue it; read where it lies, the combine is queued at once and waits
// for the lane on the GPU (early combine). Every expert in RAM, pp512: 1,553 against 1,445 tok/s
// (bench/results/2026-11-30-scan-steps; copying sums over 64 KiB measured 2,356-2,459 against
// 2,437-2,493 tok/s at a 10 GiB budget, and was removed).
void* GpuExpertTiers::lane_sum_view() const { return view_of(host_cpu_out_); }

// A buffer of `words` tagged pairs, cleared when it grows: a new allocation may hold old pairs
// whose tags a later transfer could take for its own.
uint64_t* GpuExpertTiers::tagged_pairs(PinnedArray& a, uint64_t words) {
    const bool grows = !a.holds<uint64_t>(words);
    uint64_t* pairs = a.get<uint64_t>(words);
    if (grows) std::memset(pairs, 0, a.buffer.bytes());
    return pairs;
}

// The GPU's view of the CPU lane's tagged sum (`words` pairs), or null where the runtime does not
// map page-locked memory.
uint64_t* GpuExpertTiers::lane_pairs_view(uint64_t words) {
    tagged_pairs(host_lane_pairs_, words);
    return static_cast<uint64_t*>(mapped(host_lane_pairs_, words * sizeof(uint64_t)));
}

// The step's ids and weights (rows of k per token), then h, to the host. Written by kernels
// through the buffers' GPU mapping where the runtime maps page-locked memory: a copy would take a
// copy engine, and wait behind the experts being copied ahead on the copy stream.
// - decode: as tagged pairs into host_routing_pairs_ (core/tagged_words.h), which await_routing
//   reads into host_ids_ and host_h_;
// - else into host_ids_ (with room after them for the predicted ids) and host_h_, then a flag
//   the host waits for (or, with flags off, an event);
// - with no mapping, by copies (an event then).
GpuExpertTiers::RoutingFetch GpuExpertTiers::fetch_routing(const gpu::RoutedExpertsStep& step, int32_t* ids, float* h,
                                                           gpu::GpuContext& g) {
    const int64_t pairs = step.n_tokens * step.k;
    const auto bytes = static_cast<uint64_t>(pairs) * sizeof(int32_t);
    const uint64_t h_bytes = static_cast<uint64_t>(step.n_tokens * step.n_embd) * sizeof(float);
    auto* ids_view = static_cast<int32_t*>(mapped(host_ids_, 3 * bytes));
    auto* h_view = mapped(host_h_, h_bytes);
    const bool in_line = static_cast<const void*>(step.weights) == static_cast<const void*>(step.ids + pairs);
    if (tagged_on_ && step.n_tokens == 1 && in_line) {
        const uint64_t words = (2 * bytes + h_bytes) / 4;
        tagged_pairs(host_routing_pairs_, words);
        if (auto* view = static_cast<uint64_t*>(mapped(host_routing_pairs_, words * sizeof(uint64_t)))) {
            if (++routing_tag_ == 0) ++routing_tag_;
            gpu::gpu_copy_words_tagged(view, step.ids, 2 * bytes, step.h, h_bytes, routing_tag_, g);
            return {routing_tag_, true};
        }
    }
    if (ids_view && h_view && in_line) {
        if (host_flags_on_) {
            const uint32_t seq = routing_flag_.next();
            gpu::gpu_copy_words_then_flag(ids_view, step.ids, 2 * bytes, h_view, step.h, h_bytes, routing_flag_.device_word(),
                                          seq, g);
            return {seq, false};
        }
        gpu::gpu_copy_words(ids_view, step.ids, 2 * bytes, g);
        gpu::gpu_copy_words(h_view, step.h, h_bytes, g);
        return {};
    }
    g.download(ids, step.ids, bytes);
    g.download(ids + pairs, step.weights, bytes);
    g.download(h, step.h, h_bytes);
    return {};
}

// Until the step's routing is in s.ids, s.weights and s.h. Tagged pairs are read as they come,
// the ids and weights first; the event recorded behind the kernel tells a failed kernel apart.
void GpuExpertTiers::await_routing(const RoutingFetch& fetch, const TierStep& s) {
    if (!fetch.tagged) return await_flag(routing_flag_, fetch.seq, routed_);
    const uint64_t* pairs = host_routing_pairs_.buffer.as<uint64_t>();
    const auto routing_words = static_cast<uint64_t>(2 * s.pairs);
    const auto kernel_done = [this] { return routed_.done(); };
    await_tagged_words(pairs, routing_words, fetch.seq, s.ids, kernel_done);
    await_tagged_words(pairs + routing_words, static_cast<uint64_t>(s.n * s.e), fetch.seq, s.h, kernel_done);
}

// Until what a kernel wrote to the host is there: its flag's value when it raised one (seq != 0),
// else `event` (recorded behind the copies).
void GpuExpertTiers::await_flag(const HostFlag& flag, uint32_t seq, const gpu::GpuEvent& event) {
    if (seq != 0) flag.await(seq, event);
    else event.synchronize();
}

// The predicted ids (queued by then) into their row of host_ids_, the same way; returns the value
// prediction_flag_ is raised to, or 0.
uint32_t GpuExpertTiers::fetch_prediction(const gpu::RoutedExpertsStep& step, int32_t* predicted, gpu::GpuContext& g) {
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
bool GpuExpertTiers::prefetch_wanted(const gpu::RoutedExpertsStep& step) const {
    return options_.prefetch > 0 && step.n_tokens == 1 && step.predicted_ids != nullptr && step.predicted_layer >= 0 &&
           step.queue_prediction != nullptr;
}

// Copies up to options_.prefetch of the predicted experts (best first) of the next layer that are
// not cached into the top of staging half (next layer & 1): a one-token step streams at most k
// experts into the bottom of a half, so the top half - k positions are free. The previous layer's
// compute was the last to read them (the copy stream waits for its end).
uint64_t GpuExpertTiers::copy_ahead(const gpu::RoutedExpertsStep& step, const int32_t* predicted, int64_t li) {
    const auto next = static_cast<size_t>(step.predicted_layer);
    if (next >= layer_index_.size() || layer_index_[next] != li + 1) return 0;  // not this GPU's next MoE layer
    const int64_t nli = li + 1;
    const auto half = static_cast<int64_t>(staging_count_ / 2);
    // As many as balance the link against the chain and the CPU's share (experts/copies_ahead.h),
    // at most --expert-prefetch; STRATA_TIERS_AHEAD=fixed copies up to --expert-prefetch, to compare.
    uint32_t misses = 0;
    for (int64_t j = 0; j < step.k; ++j) {
        const int32_t x = predicted[j];
        if (x >= 0 && static_cast<uint32_t>(x) < n_expert_ && !slots_.resident(id(nli, x))) ++misses;
    }
    const double link_expert_s =
        static_cast<double>(layers_[static_cast<size_t>(nli)].expert_bytes()) / (link_gbps_ * 1e9);
    const uint32_t ahead = ahead_fixed_ ? options_.prefetch
                                        : copies_ahead_for(chain_s_, lanes_.cpu_expert_s(), link_expert_s, misses,
                                                           options_.prefetch);
    const int64_t room = std::min<int64_t>(static_cast<int64_t>(ahead), half - step.k);
    if (room <= 0) return 0;
    Prefetched& set = prefetched_[nli & 1];
    set.layer = nli, set.experts.clear();
    for (int64_t j = 0; j < step.k && static_cast<int64_t>(set.experts.size()) < room; ++j) {
        const int32_t x = predicted[j];
        if (x < 0 || static_cast<uint32_t>(x) >= n_expert_ || slots_.resident(id(nli, x))) continue;
        const auto pos = static_cast<size_t>((nli & 1) * half + half - room + static_cast<int64_t>(set.experts.size()));
        set.experts.emplace_back(x, slots_.ring()[pos]);
    }
    if (set.experts.empty()) return 0;
    step_done_.make_wait(copy_stream_.handle());
    queue_copies_ahead(li, nli, set.experts, prefetch_copied_[nli & 1]);
    return set.experts.size();
}

// Queues the copies of (expert, slot) pairs of tier layer nli, made ahead during layer li's step,
// on the copy stream (after whatever waits the caller queued there), timed and counted on the
// link; `copied` marks their end.
void GpuExpertTiers::queue_copies_ahead(int64_t li, int64_t nli, const ExpertSlotList& experts, gpu::GpuEvent& copied) {
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

// After a scan step of tier layer li: up to a ring half of the next layer's experts that are not
// in VRAM (hottest first, experts/scan_steps.h) copied into the half the next chunk would use,
// behind this step's copies. The next step computes the ones it uses first of its streamed
// experts (a launch set of that half). Returns how many were copied.
uint64_t GpuExpertTiers::stream_ahead(int64_t li) {
    const int64_t nli = li + 1;
    const auto half = static_cast<int64_t>(staging_count_ / 2);
    if (!stream_ahead_enabled_ || options_.miss_lane == MissLane::Cpu || static_cast<size_t>(nli) >= layers_.size() || half <= 0)
        return 0;
    ahead_candidates_.clear();
    for (uint32_t x = 0; x < n_expert_; ++x) {
        const uint32_t key = id(nli, static_cast<int32_t>(x));
        if (!slots_.resident(key)) ahead_candidates_.push_back({static_cast<int32_t>(x), policy_->heat(key)});
    }
    choose_copy_ahead(ahead_candidates_, static_cast<size_t>(half), ahead_choice_);
    if (ahead_choice_.empty()) return 0;
    const int h = static_cast<int>(chunk_counter_ % 2);
    ++chunk_counter_;  // the next step's chunks start in the other half
    StreamedAhead& set = streamed_ahead_;
    set.layer = nli, set.half = h, set.experts.clear();
    for (size_t j = 0; j < ahead_choice_.size(); ++j)
        set.experts.emplace_back(ahead_choice_[j], slots_.ring()[static_cast<size_t>(h * half) + j]);
    // The half's last readers: a chunk of this step or an earlier one (half_free_), or a decode
    // step that computed experts copied ahead there among its hits (its end, step_done_).
    step_done_.make_wait(copy_stream_.handle());
    half_free_[h].make_wait(copy_stream_.handle());
    queue_copies_ahead(li, nli, set.experts, ahead_copied_);
    return set.experts.size();
}

// One chunk of the step's streamed experts (launch set si, through ring half `half`), from
// stream_lane_[streamed] on: once the half's last reader is done, their copies, then the compute
// stream waits for them.
void GpuExpertTiers::queue_streamed_chunk(const TierStep& s, size_t si, int half, size_t& streamed, gpu::GpuContext& g) {
    void* copy = copy_stream_.handle();
    const TierLayer& L = *s.layer;
    half_free_[half].make_wait(copy);
    const auto half_slots = static_cast<size_t>(staging_count_ / 2);
    const size_t in_chunk = std::min(half_slots, stream_lane_.size() - streamed);
    timeline_.mark(copy, "L{} copy start set{} ({} experts)", s.li, si, in_chunk);
    link_clock_.begin(copy);
    for (size_t j = 0; j < in_chunk; ++j, ++streamed) copy_expert(L, stream_lane_[streamed], stream_slots_[streamed]);
    copies_.submit(copy);
    link_clock_.end(copy);
    queued_on_link(in_chunk * L.expert_bytes());
    timeline_.mark(copy, "L{} copy end set{}", s.li, si);
    half_copied_[half].record(copy);
    half_copied_[half].make_wait(g.stream());
}

// When the link will be done with what is queued on it, by the measured link speed: a batch of
// `bytes` queued now starts once the link is free. Copies that wait for a ring half start later,
// so this is the earliest the link can be free.
void GpuExpertTiers::queued_on_link(uint64_t bytes) {
    const auto now = Clock::now();
    const auto seconds = std::chrono::duration<double>(static_cast<double>(bytes) / (link_gbps_ * 1e9));
    link_free_at_ = std::max(link_free_at_, now) + std::chrono::duration_cast<Clock::duration>(seconds);
}

// Gathers the expert's three parts into copies_ (queued by copies_.submit on the copy stream).
void GpuExpertTiers::copy_expert(const TierLayer& L, int32_t x, int32_t slot) {
    uint8_t* dst = pool_buffer_.as<uint8_t>() + static_cast<uint64_t>(slot) * slot_bytes_;
    copies_.add(dst, L.host.gate.matrix(x), L.gate_bytes);
    copies_.add(dst + L.up_offset, L.host.up.matrix(x), L.up_bytes);
    copies_.add(dst + L.down_offset, L.host.down.matrix(x), L.down_bytes);
}

}  // namespace strata::gpu_tiers
