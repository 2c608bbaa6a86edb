#pragma once
// The attention KV cache: for each layer, keys and values of every position seen so far, as f32
// rows of n_head_kv * head_dim. (f16 and int8 storage come with the GPU work.)
//
//   KvCache kv(cfg.n_layer, n_ctx, cfg.kv_dim_k(), cfg.kv_dim_v());
//   float* k = kv.keys(layer, pos);   // row for position pos

#include <cstdint>
#include <vector>

#include "core/aligned_buffer.h"

namespace strata {

class KvCache {
public:
    KvCache(int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim);

    int64_t n_ctx() const { return n_ctx_; }
    int64_t k_dim() const { return k_dim_; }
    int64_t v_dim() const { return v_dim_; }
    uint64_t bytes() const;

    float* keys(int64_t layer, int64_t pos) { return k_[static_cast<size_t>(layer)].as<float>() + pos * k_dim_; }
    float* values(int64_t layer, int64_t pos) { return v_[static_cast<size_t>(layer)].as<float>() + pos * v_dim_; }
    const float* keys(int64_t layer, int64_t pos) const { return k_[static_cast<size_t>(layer)].as<float>() + pos * k_dim_; }
    const float* values(int64_t layer, int64_t pos) const { return v_[static_cast<size_t>(layer)].as<float>() + pos * v_dim_; }

private:
    int64_t n_ctx_, k_dim_, v_dim_;
    std::vector<AlignedBuffer> k_, v_;
};

}  // namespace strata
