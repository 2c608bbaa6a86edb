#pragma once
// Admission and eviction of experts in the fast tier's slots. A policy sees, once per MoE layer
// step, the experts the step used (record_use), then decides which of the step's misses to copy
// into slots and which residents make room (decide), at most `max_copies` copies per step — the
// copy budget the link can carry without stalling the next step. Keys are the store's dense ids
// (ExpertStore::id), so per-key state is a flat array.
//
//   LfuDecayPolicy policy(store.key_count(), /*decay=*/0.9);
//   policy.record_use(used_ids);
//   PolicyDecision d = policy.decide(miss_ids, resident_ids, store.free_slots(), /*max_copies=*/2);
//   for (uint32_t id : d.evict) store.evict(id);
//   for (uint32_t id : d.admit) store.admit(id);

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace strata {

struct PolicyDecision {
    std::vector<uint32_t> evict;  // residents to drop, applied first
    std::vector<uint32_t> admit;  // misses to copy in, in order; admit.size() <= max_copies
};

class ExpertPolicy {
public:
    virtual ~ExpertPolicy() = default;
    virtual std::string_view name() const = 0;
    // The experts one step used (each once). Advances the policy's clock by one step.
    virtual void record_use(std::span<const uint32_t> ids) = 0;
    // misses: experts of the last recorded step not in a slot; residents: experts in slots.
    // Evictions never exceed what the admissions need beyond the free slots.
    virtual PolicyDecision decide(std::span<const uint32_t> misses, std::span<const uint32_t> residents,
                                  size_t free_slots, size_t max_copies) = 0;
    // How much the policy would want the expert kept (higher: hotter), as of the last recorded
    // step: misses the tiers compute on the CPU are never admitted, so they send the coldest there.
    virtual double heat(uint32_t id) const = 0;
};

// Least recently used: every miss is admitted (within the budget); the victim is the resident
// used longest ago. A resident used in the current step is never evicted for another expert of
// the same step — equal recency gains nothing and would only churn.
class LruPolicy final : public ExpertPolicy {
public:
    explicit LruPolicy(size_t key_count) : last_use_(key_count, 0) {}
    std::string_view name() const override { return "lru"; }
    void record_use(std::span<const uint32_t> ids) override;
    PolicyDecision decide(std::span<const uint32_t> misses, std::span<const uint32_t> residents, size_t free_slots,
                          size_t max_copies) override;
    double heat(uint32_t id) const override { return static_cast<double>(last_use_[id]); }  // recency

private:
    uint64_t clock_ = 0;              // steps recorded; last_use_ 0 = never used
    std::vector<uint64_t> last_use_;  // by id
    std::vector<uint32_t> victims_;   // decide's scratch (no allocation per step once grown)
};

// Least frequently used with decay: each use adds 1 to an expert's score and every step scales
// all scores by `decay` (lazily: score · decay^(steps since its last update)), so the cache follows
// a hot set that shifts (decay 1 is plain LFU). A miss replaces the lowest-scored resident only if
// its own score is strictly higher: a one-off expert does not flush a warm slot.
class LfuDecayPolicy final : public ExpertPolicy {
public:
    LfuDecayPolicy(size_t key_count, double decay);
    std::string_view name() const override { return "lfu-decay"; }
    void record_use(std::span<const uint32_t> ids) override;
    PolicyDecision decide(std::span<const uint32_t> misses, std::span<const uint32_t> residents, size_t free_slots,
                          size_t max_copies) override;
    double score(uint32_t id) const;  // as of the current step
    // The rank key below: orders experts as score() does, without a power per expert.
    double heat(uint32_t id) const override { return key_[id]; }

private:
    double decay_, log_decay_;
    uint64_t clock_ = 0;
    std::vector<double> score_;     // by id, as of stamp_
    std::vector<uint64_t> stamp_;   // step of the last update
    // log(score as of stamp) - stamp · log(decay): the log of the score now plus the same
    // clock · log(decay) for every expert, so comparing keys compares scores now. Kept at each
    // use; decide() ranks thousands of residents a step and took a pow for each (~8.7 ms of host
    // time a token at 10 GiB, bench/results/2026-11-30-split-feedback). -inf: never used.
    std::vector<double> key_;
};

enum class PolicyKind { Lru, LfuDecay };
std::optional<PolicyKind> policy_kind_from_name(std::string_view name);  // "lru", "lfu" (decayed)
std::unique_ptr<ExpertPolicy> make_expert_policy(PolicyKind kind, size_t key_count, double decay = 0.9);

// Replays a trace (one list of expert ids per step) against a policy with `slots` slots, as the
// store would: hits are looked up before the step's decision is applied. For tests and for
// choosing a policy from a recorded routing profile without loading the model.
struct TraceReplay {
    uint64_t hits = 0, misses = 0;
    std::vector<uint32_t> evictions;   // ids in eviction order
    std::vector<uint32_t> admissions;  // ids in admission order
    double hit_rate() const { return hits + misses ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 0.0; }
};
TraceReplay replay_trace(ExpertPolicy& policy, std::span<const std::vector<uint32_t>> steps, size_t key_count, size_t slots,
                         size_t max_copies);

}  // namespace strata
