#include "experts/expert_counter.h"

#include "core/check.h"

namespace strata {

ExpertCounter::ExpertCounter(std::span<const ExpertLayerTensors> layers, uint32_t n_expert) {
    for (const ExpertLayerTensors& L : layers) {
        STRATA_CHECK(L.gate.ne[2] == n_expert, "every MoE layer must stack n_expert experts");
        STRATA_CHECK(layers_.empty() || L.layer > layers_.back().layer, "MoE layers must come by increasing index");
        index_of_gate_[L.gate.data] = layers_.size();
        layers_.push_back({L.layer, std::vector<uint64_t>(n_expert, 0)});
    }
}

void ExpertCounter::begin_step(const MoeFfnWeights& w, std::span<const int64_t> tokens_per_expert) {
    STRATA_CHECK(step_weights_ == nullptr, "expert step begun twice without end_step");
    auto it = index_of_gate_.find(w.gate_exps.data);
    STRATA_CHECK(it != index_of_gate_.end(), "MoE block weights are not from the counted model's file");
    std::vector<uint64_t>& counts = layers_[it->second].counts;
    STRATA_CHECK(tokens_per_expert.size() == counts.size(), "the MoE block routed over a different expert count");
    for (size_t e = 0; e < counts.size(); ++e) counts[e] += static_cast<uint64_t>(tokens_per_expert[e]);
    step_weights_ = &w;
    ++steps_;
}

MoeExpertMatrices ExpertCounter::matrices(int64_t expert) {
    STRATA_CHECK(step_weights_ != nullptr, "expert matrices asked for outside a step");
    // The stacked tensors themselves: what the block reads when no source is set.
    return MoeExpertMatrices{&step_weights_->gate_exps, &step_weights_->up_exps, &step_weights_->down_exps, expert};
}

void ExpertCounter::end_step() {
    STRATA_CHECK(step_weights_ != nullptr, "end_step without begin_step");
    step_weights_ = nullptr;
}

}  // namespace strata
