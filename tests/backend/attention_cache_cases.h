#pragma once
// Shared by the CPU attention tests over reduced-precision KV caches (f16, q8_0): one layer of
// random keys and values stored in a cache of a given type, optionally passed through a rounding
// of each row first (what another cache type would keep), then the attention of random queries.
// Comparing a cache of type T with an f32 cache of T-rounded rows isolates the read path.
//
//   const std::vector<float> a = attend(c, KvCacheType::F16, nullptr, ctx);
//   const std::vector<float> b = attend(c, KvCacheType::F32, round_to_f16, ctx);   // same bits
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "backend/cpu/attention.h"

namespace strata::test {

struct AttentionCase {
    AttentionParams p;
    int64_t n_tokens, pos0;
};

// round_row (optional) changes a row of floats in place before it is stored.
inline std::vector<float> attend(const AttentionCase& c, KvCacheType type,
                                 const std::function<void(std::vector<float>&)>& round_row, CpuContext& ctx) {
    const AttentionParams& p = c.p;
    const int64_t n_kv = c.pos0 + c.n_tokens, k_dim = p.n_head_kv * p.head_dim_k, v_dim = p.n_head_kv * p.head_dim_v;
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    KvCache kv(1, n_kv, k_dim, v_dim, type);
    std::vector<float> k(static_cast<size_t>(k_dim)), v(static_cast<size_t>(v_dim));
    for (int64_t j = 0; j < n_kv; ++j) {
        for (auto& x : k) x = normal(rng);
        for (auto& x : v) x = normal(rng);
        if (round_row) round_row(k), round_row(v);
        kv.store(0, j, k.data(), v.data());
    }
    std::vector<float> q(static_cast<size_t>(c.n_tokens * p.n_head * p.head_dim_k));
    for (auto& x : q) x = normal(rng);
    std::vector<float> out(static_cast<size_t>(c.n_tokens * p.n_head * p.head_dim_v));
    cpu_attention(q.data(), kv, 0, c.n_tokens, c.pos0, p, out.data(), ctx);
    return out;
}

}  // namespace strata::test
