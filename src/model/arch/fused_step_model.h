#pragma once
// The frame every CPU architecture shares: one run() over the steps of any number of sequences
// (forward() is a run of one step), their rows gathered into one batch (StepBatch) and embedded
// into the residual stream before the layers, the logits written to each step after them.
//
//   class MyArch final : public FusedStepModel {
//       void run(std::span<const SequenceStep> steps, MoeExpertSource* source, CpuContext& ctx) override {
//           float* x = nullptr;
//           const Batch& batch = gather_and_embed(steps, source, token_embd_, x);
//           ... layers over batch and x ...
//           gathered_.write_logits(x, output_norm_, output_, config_, block_slots::kNormed, ctx);
//       }
//   };

#include <span>
#include <vector>

#include "backend/cpu/matmul.h"
#include "model/arch/step_batch.h"
#include "model/model.h"

namespace strata {

class FusedStepModel : public Model {
public:
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        const SequenceStep step{batch.tokens, batch.n_tokens, batch.pos0, &kv, nullptr, logits, which};
        run(std::span(&step, 1), batch.expert_source, ctx);
    }
    void forward_multi(std::span<const SequenceStep> steps, CpuContext& ctx) override { run(steps, nullptr, ctx); }
    bool fuses_sequences() const override { return true; }

protected:
    // The forward pass of `steps`, one sequence or several: the same code for both.
    virtual void run(std::span<const SequenceStep> steps, MoeExpertSource* expert_source, CpuContext& ctx) = 0;

    // The steps gathered into one batch; x: their token embeddings, n_tokens rows of n_embd.
    const Batch& gather_and_embed(std::span<const SequenceStep> steps, MoeExpertSource* expert_source,
                                  const Weight& token_embd, float*& x) {
        const Batch& batch = gathered_.gather(steps, expert_source);
        residual_.resize(static_cast<size_t>(batch.n_tokens * config_.n_embd));
        x = residual_.data();
        cpu_get_rows(token_embd, batch.tokens, batch.n_tokens, x);
        return batch;
    }

    StepBatch gathered_;

private:
    std::vector<float> residual_;
};

}  // namespace strata
