#pragma once
// A MoeExpertSource that only counts: per MoE layer, how many tokens were routed to each expert
// (`strata profile` records routing profiles with it). It hands every expert's matrices back from
// the stacked tensors exactly as the MoE block reads them without a source, so a counted run gives
// the same logits bit for bit as a plain one (tests/experts/expert_counter_test.cpp).
//
//   STRATA_ASSIGN_OR_RETURN(auto layers, expert_tensors_from_gguf(gguf));
//   ExpertCounter counter(layers, cfg.n_expert);
//   model->forward(Batch{tokens, positions, n, 0, &counter}, kv, logits, LogitsFor::Last, ctx);
//   counter.layers()[0].counts[5];   // tokens the first MoE layer routed to expert 5

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "experts/expert_profile.h"
#include "experts/expert_store.h"
#include "model/blocks/blocks.h"

namespace strata {

class ExpertCounter final : public MoeExpertSource {
public:
    // `layers`: the model's MoE layers (expert_tensors_from_gguf on the file the model was loaded
    // from), whose gate tensors identify the layer a step belongs to.
    ExpertCounter(std::span<const ExpertLayerTensors> layers, uint32_t n_expert);

    void begin_step(const MoeFfnWeights& w, std::span<const int64_t> tokens_per_expert) override;
    MoeExpertMatrices matrices(int64_t expert) override;
    void end_step() override;

    // Counts so far, one entry per MoE layer by increasing layer index (ExpertProfile::layers).
    const std::vector<ExpertProfileLayer>& layers() const { return layers_; }
    uint64_t steps() const { return steps_; }  // MoE layer steps counted

private:
    std::vector<ExpertProfileLayer> layers_;
    // The stacked gate tensor's data pointer → position in layers_: the MoE block's weights do
    // not carry their layer index (as ExpertStore::layer_of).
    std::unordered_map<const uint8_t*, size_t> index_of_gate_;
    const MoeFfnWeights* step_weights_ = nullptr;  // set between begin_step and end_step
    uint64_t steps_ = 0;
};

}  // namespace strata
