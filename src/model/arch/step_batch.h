#pragma once
// The two ends of a fused multi-sequence forward pass (Model::forward_multi), shared by the CPU
// architectures: the steps' tokens concatenated into one Batch whose `sequences` tell the
// attention and recurrent blocks which rows belong to which cache and state; and, after the
// layers, the final norm and output head run once over the rows whose logits some step wants,
// each row then copied to its step. A one-step pass writes straight into the step's logits, as
// the single-sequence forward always did.
//
//   const Batch& b = gathered_.gather(steps, expert_source);
//   cpu_get_rows(token_embd, b.tokens, b.n_tokens, x);  ... blocks over b ...
//   gathered_.write_logits(x, output_norm, output, cfg, block_slots::kNormed, ctx);

#include <functional>
#include <span>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "model/blocks/blocks.h"
#include "model/model.h"

namespace strata {

class StepBatch {
public:
    // Checks every step (a cache, tokens that fit in it) and concatenates them. The Batch and the
    // steps must outlive write_logits().
    const Batch& gather(std::span<const SequenceStep> steps, MoeExpertSource* expert_source);
    // x: the final residual stream of the gathered rows. Steps with null logits get none.
    void write_logits(const float* x, const Weight& output_norm, const Weight& output, const ModelConfig& cfg,
                      int normed_slot, CpuContext& ctx);
    // The same where the head's input is made otherwise than by a final norm (qwen4exp: the final
    // hyper-connection mixer over the row's streams): x holds rows of row_floats, and
    // head_input(rows, count, out) writes count rows of n_embd.
    using HeadInput = std::function<void(const float* rows, int64_t count, float* out)>;
    void write_logits(const float* x, int64_t row_floats, const HeadInput& head_input, const Weight& output,
                      const ModelConfig& cfg, int normed_slot, CpuContext& ctx);

private:
    std::span<const SequenceStep> steps_;
    std::vector<int32_t> tokens_, positions_;
    std::vector<BatchSequence> sequences_;
    std::vector<float> logits_;  // all wanted rows, before they are copied to their steps
    Batch batch_;
};

}  // namespace strata
