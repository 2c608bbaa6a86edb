#pragma once
// The attention KV cache: for each layer, keys and values of every position seen so far, as f32
// rows of n_head_kv * head_dim. (f16 and int8 storage come with the GPU work.)
//
//   KvCache kv(cfg.n_layer, n_ctx, cfg.kv_dim_k(), cfg.kv_dim_v());
//   float* k = kv.keys(layer, pos);   // row for position pos

#include <cstdint>
#include <memory>
#include <vector>

#include "core/aligned_buffer.h"

namespace strata {

// Rows a backend keeps outside host memory (the GPU's device cache). The KvCache owns them, so
// they live exactly as long as the session whose cache they are.
class KvCacheStorage {
public:
    virtual ~KvCacheStorage() = default;
};

class KvCache {
public:
    KvCache(int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim);
    // A cache whose rows live in `storage` only: keys()/values() must not be called on it.
    KvCache(int64_t n_ctx, int64_t k_dim, int64_t v_dim, std::unique_ptr<KvCacheStorage> storage)
        : n_ctx_(n_ctx), k_dim_(k_dim), v_dim_(v_dim), storage_(std::move(storage)) {}
    KvCacheStorage* storage() const { return storage_.get(); }

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
    std::unique_ptr<KvCacheStorage> storage_;
};

}  // namespace strata
