#pragma once
// Causal multi-head attention with grouped KV heads, over the KV cache, on the CPU.
//
//   cpu_attention(q, kv, layer, n_tokens, pos0, params, out, ctx);
// q: n_tokens rows of n_head * head_dim_k (already roped); the cache holds positions
// [0, pos0 + n_tokens) of this layer, in f32 or f16 (widened as it is read, backend/cpu/f16_rows.h);
// out: n_tokens rows of n_head * head_dim_v.

#include <cstdint>

#include "backend/cpu/cpu_context.h"
#include "kv/kv_cache.h"

namespace strata {

// Key positions [begin, end) of the cache.
struct KeyRange {
    int64_t begin = 0;
    int64_t end = 0;
};
// The keys each query of a call reads when it does not read all it could (QSA's indexer,
// model/blocks/qsa_indexer.h): query t of the call reads ranges[offsets[t] .. offsets[t + 1]),
// ascending, disjoint, within its causal window.
struct KeySelection {
    const int64_t* offsets = nullptr;  // n_tokens + 1
    const KeyRange* ranges = nullptr;
};

struct AttentionParams {
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t head_dim_k = 0;
    int64_t head_dim_v = 0;
    float scale = 1.0f;  // usually 1/sqrt(head_dim_k)
    // Optional, for gpt-oss; the defaults give plain causal attention.
    const float* sinks = nullptr;  // [n_head] a per-head logit that joins each softmax and adds no value
    int64_t sliding_window = 0;    // > 0: a query at position p sees only keys p - window + 1 .. p
    const KeySelection* selection = nullptr;  // set: each query reads only its ranges (no sliding window)
};

void cpu_attention(const float* q, const KvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const AttentionParams& p, float* out, CpuContext& ctx);

}  // namespace strata
