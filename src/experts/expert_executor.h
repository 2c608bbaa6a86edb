#pragma once
// Tiered execution of the MoE blocks, CPU emulation: the MoE block (model/blocks/ffn_blocks.cpp)
// asks this executor where each selected expert lives. Hits — experts holding a slot — are
// computed from the slot's copy that the store made on admission; misses are computed from the
// RAM arena or the mapped file. Both go through the same CPU matmul in the block's grouped pass,
// and the block combines them as before, so a tiered run gives the same logits bit for bit as an
// all-resident one (tests/experts/tiered_parity_test.cpp). After the step's matmuls the policy
// decides admissions and evictions, at most `copy_budget_bytes` of copies per layer step.
//
// On the GPU the same split will send hits to the GPU kernels and misses to CPU workers (or copy
// them first, when the batch makes the copy pay); the bookkeeping here stays as it is.
//
//   ExpertStore store(std::move(layers), {.slots = 3});
//   LruPolicy lru(store.key_count());
//   ExpertExecutor tiers(store, lru, {});
//   Batch batch{tokens, positions, n, pos0, &tiers};
//   model->forward(batch, kv, logits, LogitsFor::All, ctx);   // store.stats() counts the steps

#include <cstdint>
#include <span>
#include <vector>

#include "experts/expert_policy.h"
#include "experts/expert_store.h"
#include "model/blocks/blocks.h"

namespace strata {

struct ExpertExecutorOptions {
    uint64_t copy_budget_bytes = 0;  // per layer step; 0: unlimited
};

class ExpertExecutor final : public MoeExpertSource {
public:
    ExpertExecutor(ExpertStore& store, ExpertPolicy& policy, const ExpertExecutorOptions& options);

    void begin_step(const MoeFfnWeights& w, std::span<const int64_t> tokens_per_expert) override;
    MoeExpertMatrices matrices(int64_t expert) override;
    void end_step() override;

    // Copies the policy may issue per step: the byte budget in whole slots (at least one).
    size_t max_copies() const { return max_copies_; }

private:
    ExpertStore& store_;
    ExpertPolicy& policy_;
    size_t max_copies_;
    bool in_step_ = false;
    std::vector<ExpertView> views_;    // by expert index within the layer, this step
    std::vector<char> selected_;       // by expert index: views_ entry is valid
    std::vector<uint32_t> used_, misses_;  // ids of this step
};

}  // namespace strata
