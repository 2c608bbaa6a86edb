#pragma once
// The frame of the architectures with recurrent (DeltaNet) layers: a FusedStepModel whose
// sequences each carry a RecurrentState besides their KV cache. Plain forward() runs through the
// model's own state, one sequence at a time; forward_with_state() and forward_multi() take the
// caller's. A state only moves forward: a batch at position 0 starts it over, any other batch
// must start where the last one ended.

#include <cstdint>
#include <span>
#include <vector>

#include "core/check.h"
#include "kv/recurrent_state.h"
#include "model/arch/fused_step_model.h"

namespace strata {

// The DeltaNet layers' state of a hybrid config: per recurrent layer the conv tail of
// (kernel - 1) rows of the conv channels, and the dt_rank heads' d_state x d_v matrices.
inline RecurrentState hybrid_recurrent_state(const ModelConfig& c) {
    std::vector<bool> recurrent(c.n_layer);
    for (uint32_t il = 0; il < c.n_layer; ++il) recurrent[il] = c.is_recurrent_layer(il);
    const int64_t conv_ch = 2 * int64_t{c.ssm_n_group} * c.ssm_d_state + c.ssm_d_inner;
    const int64_t d_v = c.ssm_d_inner / c.ssm_dt_rank;
    return RecurrentState(recurrent, (c.ssm_conv_kernel - 1) * conv_ch, int64_t{c.ssm_dt_rank} * c.ssm_d_state * d_v);
}

class RecurrentStepModel : public FusedStepModel {
public:
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        STRATA_CHECK(batch.pos0 == 0 || &kv == own_state_kv_,
                     "plain forward() of a hybrid model serves one sequence at a time: use forward_with_state()");
        own_state_kv_ = &kv;
        forward_with_state(batch, kv, own_state_, logits, which, ctx);
    }

    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& ctx) override {
        const SequenceStep step{batch.tokens, batch.n_tokens, batch.pos0, &kv, &state, logits, which};
        run(std::span(&step, 1), batch.expert_source, ctx);
    }

protected:
    // Called by a loader once the config is final: the state plain forward() uses.
    void reset_own_state() { own_state_ = make_recurrent_state(); }

    // Before the layers: each step's state starts over at position 0 and otherwise continues.
    static void begin_steps(std::span<const SequenceStep> steps) {
        for (const SequenceStep& s : steps) {
            STRATA_CHECK(s.state != nullptr, "a hybrid model needs each sequence's recurrent state");
            if (s.pos0 == 0) s.state->clear();
            STRATA_CHECK(s.pos0 == s.state->n_past(),
                         "a recurrent state cannot be rewound: the batch must start where the last one ended");
        }
    }

    // After the layers: every state has taken its step's tokens.
    static void end_steps(std::span<const SequenceStep> steps) {
        for (const SequenceStep& s : steps) s.state->advance(s.n_tokens);
    }

private:
    RecurrentState own_state_;               // the state plain forward() uses
    const KvCache* own_state_kv_ = nullptr;  // the cache of the sequence own_state_ belongs to
};

}  // namespace strata
