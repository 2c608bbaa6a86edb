// store_and_attend (blocks.h): the one place where a batch's rows meet the KV caches. Rows are
// concatenated over sequences for the projections; here each sequence writes its own cache and
// attends over it alone, with the same call a one-sequence batch makes, so a row's attention
// output does not depend on what else shares its batch.
#include "backend/cpu/cpu_context.h"
#include "backend/cpu/cpu_op_profile.h"
#include "core/check.h"
#include "model/blocks/blocks.h"

namespace strata {

namespace {
// Tokens from which a sequence's KV rows are stored by the pool: a decode step's one row (or a
// few) would cost less than waking it.
constexpr int64_t kParallelStoreTokens = 16;
}  // namespace

void store_and_attend(const Batch& batch, int64_t layer, const float* k, int64_t k_stride, const float* v,
                      int64_t v_stride, const float* q, const AttentionParams& p, float* out, CpuContext& ctx,
                      std::span<const KeySelection> selections) {
    CpuOpScope profile_scope("attention (KV store, attend)");
    STRATA_CHECK(!batch.sequences.empty(), "an attention batch needs its sequences (model/arch/step_batch.h)");
    const int64_t q_stride = p.n_head * p.head_dim_k, out_stride = p.n_head * p.head_dim_v;
    STRATA_CHECK(selections.empty() || selections.size() == batch.sequences.size(), "one key selection per sequence");
    for (size_t i = 0; i < batch.sequences.size(); ++i) {
        const BatchSequence& s = batch.sequences[i];
        KvCache& kv = *s.kv;
        STRATA_CHECK(s.pos0 + s.n_tokens <= kv.n_ctx(), "batch runs past the KV cache");
        // Rows converted to the cache's type; a prompt's rows over the pool (each row its own).
        const auto store_rows = [&](int64_t t0, int64_t t1, int) {
            for (int64_t t = t0; t < t1; ++t) {
                const int64_t row = s.first + t;
                kv.store(layer, s.pos0 + t, k + row * k_stride, v + row * v_stride);
            }
        };
        if (s.n_tokens >= kParallelStoreTokens && ctx.pool().size() > 1) ctx.pool().parallel_for(s.n_tokens, store_rows);
        else store_rows(0, s.n_tokens, 0);
        AttentionParams sp = p;
        if (!selections.empty()) sp.selection = &selections[i];
        cpu_attention(q + s.first * q_stride, kv, layer, s.n_tokens, s.pos0, sp, out + s.first * out_stride, ctx);
    }
}

}  // namespace strata
