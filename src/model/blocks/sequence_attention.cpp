// store_and_attend (blocks.h): the one place where a batch's rows meet the KV caches. Rows are
// concatenated over sequences for the projections; here each sequence writes its own cache and
// attends over it alone, with the same call a one-sequence batch makes, so a row's attention
// output does not depend on what else shares its batch.
#include "backend/cpu/cpu_op_profile.h"
#include "core/check.h"
#include "model/blocks/blocks.h"

namespace strata {

void store_and_attend(const Batch& batch, int64_t layer, const float* k, int64_t k_stride, const float* v,
                      int64_t v_stride, const float* q, const AttentionParams& p, float* out, CpuContext& ctx) {
    CpuOpScope profile_scope("attention (KV store, attend)");
    STRATA_CHECK(!batch.sequences.empty(), "an attention batch needs its sequences (model/arch/step_batch.h)");
    const int64_t q_stride = p.n_head * p.head_dim_k, out_stride = p.n_head * p.head_dim_v;
    for (const BatchSequence& s : batch.sequences) {
        KvCache& kv = *s.kv;
        STRATA_CHECK(s.pos0 + s.n_tokens <= kv.n_ctx(), "batch runs past the KV cache");
        for (int64_t t = 0; t < s.n_tokens; ++t) {
            const int64_t row = s.first + t;
            kv.store(layer, s.pos0 + t, k + row * k_stride, v + row * v_stride);  // converted to the cache's type
        }
        cpu_attention(q + s.first * q_stride, kv, layer, s.n_tokens, s.pos0, p, out + s.first * out_stride, ctx);
    }
}

}  // namespace strata
