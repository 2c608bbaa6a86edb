#pragma once
// Rotary position embedding from a precomputed table of per-pair frequencies, for the rope
// variants whose frequencies are not simply base^(-2i/d): YaRN context extension (gpt-oss,
// DeepSeek-V3 long-context checkpoints), and heads whose rotated part is not at offset 0 (MLA).
// The table is built once per model; applying it is the same rotation as cpu_rope.
//
//   RopeTable t = rope_table_yarn(RopeStyle::Neox, head_dim, head_dim, base, yarn);
//   cpu_rope_table(q, n_tokens, n_head, head_dim, t, positions);         // whole heads
//   cpu_rope_table(q + 16, n_tokens, n_head, 24, t, positions);          // dims 16..16+rope_dims of each 24-wide head

#include <cstdint>
#include <vector>

#include "backend/rope_style.h"

namespace strata {

struct RopeTable {
    RopeStyle style = RopeStyle::Normal;
    int64_t rope_dims = 0;          // rotated values per head
    std::vector<double> inv_freq;   // [rope_dims / 2] radians per position for pair i
    float attn_factor = 1.0f;       // multiplies cos and sin (YaRN's magnitude correction)
};

// theta_i = pos * base^(-2i/d): the same rotation as cpu_rope.
RopeTable rope_table_default(RopeStyle style, int64_t rope_dims, float base);

struct YarnParams {
    float factor = 1.0f;          // context extension factor (rope.scaling.factor)
    int64_t original_ctx = 0;     // pretraining context (rope.scaling.original_context_length)
    float beta_fast = 32.0f;      // rotations per context above which a pair keeps its frequency
    float beta_slow = 1.0f;       // ... below which it is fully interpolated (divided by factor)
    float attn_factor = 1.0f;     // cos/sin multiplier
    bool truncate = true;         // round the ramp's ends to whole dimensions (HF default; gpt-oss: false)
};
// YaRN ("NTK-by-parts") frequencies as HF transformers' _compute_yarn_parameters.
RopeTable rope_table_yarn(RopeStyle style, int64_t rope_dims, float base, const YarnParams& y);

// HF's default YaRN magnitude, get_mscale: 0.1 * mscale * ln(factor) + 1 for factor > 1.
float yarn_mscale(float factor, float mscale = 1.0f);

// Rotates, in place, the first t.rope_dims values at x + (tok * n_head + h) * head_stride for
// every token and head.
void cpu_rope_table(float* x, int64_t n_tokens, int64_t n_head, int64_t head_stride, const RopeTable& t,
                    const int32_t* positions);

}  // namespace strata
