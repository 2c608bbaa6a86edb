#include "experts/expert_executor.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace strata {

ExpertExecutor::ExpertExecutor(ExpertStore& store, ExpertPolicy& policy, const ExpertExecutorOptions& options)
    : store_(store), policy_(policy) {
    max_copies_ = options.copy_budget_bytes == 0
                      ? std::numeric_limits<size_t>::max()
                      : static_cast<size_t>(std::max<uint64_t>(1, options.copy_budget_bytes / store.slot_bytes()));
}

void ExpertExecutor::begin_step(const MoeFfnWeights& w, std::span<const int64_t> tokens_per_expert) {
    STRATA_CHECK(!in_step_, "expert step begun twice without end_step");
    const int64_t layer = store_.layer_of(w.gate_exps.data);
    STRATA_CHECK(layer >= 0, "MoE block weights are not from the expert store's file");
    in_step_ = true;
    views_.resize(tokens_per_expert.size());
    selected_.assign(tokens_per_expert.size(), 0);
    used_.clear();
    misses_.clear();
    // Misses with more tokens first: when the copy budget binds, they are the ones worth a slot.
    std::vector<std::pair<int64_t, uint32_t>> weighted_misses;
    ExpertStats& stats = store_.stats();
    LayerCounters& per_layer = stats.layers[static_cast<size_t>(layer)];
    for (size_t ex = 0; ex < tokens_per_expert.size(); ++ex) {
        const int64_t n = tokens_per_expert[ex];
        if (n == 0) continue;
        const uint32_t id = store_.id({static_cast<uint32_t>(layer), static_cast<uint32_t>(ex)});
        views_[ex] = store_.view(id);
        selected_[ex] = 1;
        used_.push_back(id);
        TierCounters& t = stats.tier(views_[ex].tier);
        ++t.expert_uses;
        t.routed_pairs += static_cast<uint64_t>(n);
        t.bytes_read += store_.bytes(id).total();
        if (views_[ex].tier == Tier::Slot) {
            ++per_layer.hits;
        } else {
            ++per_layer.misses;
            weighted_misses.emplace_back(n, id);
        }
    }
    std::stable_sort(weighted_misses.begin(), weighted_misses.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [n, id] : weighted_misses) misses_.push_back(id);
}

MoeExpertMatrices ExpertExecutor::matrices(int64_t expert) {
    STRATA_CHECK(in_step_ && expert >= 0 && static_cast<size_t>(expert) < selected_.size() &&
                     selected_[static_cast<size_t>(expert)],
                 "expert matrices asked for an expert the step did not select");
    const ExpertView& v = views_[static_cast<size_t>(expert)];
    return MoeExpertMatrices{&v.gate, &v.up, &v.down, v.index};
}

void ExpertExecutor::end_step() {
    STRATA_CHECK(in_step_, "end_step without begin_step");
    in_step_ = false;
    ++store_.stats().steps;
    // Only now may slots be overwritten: the step's matmuls read from the views handed out.
    policy_.record_use(used_);
    const PolicyDecision d = policy_.decide(misses_, store_.residents(), store_.free_slots(), max_copies_);
    for (uint32_t id : d.evict) store_.evict(id);
    for (uint32_t id : d.admit) store_.admit(id);
}

}  // namespace strata
