#include "kv/kv_cache.h"

namespace strata {

KvCache::KvCache(int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim) : n_ctx_(n_ctx), k_dim_(k_dim), v_dim_(v_dim) {
    for (int64_t l = 0; l < n_layer; ++l) {
        k_.emplace_back(static_cast<size_t>(n_ctx * k_dim) * sizeof(float));
        v_.emplace_back(static_cast<size_t>(n_ctx * v_dim) * sizeof(float));
    }
}

uint64_t KvCache::bytes() const {
    uint64_t total = 0;
    for (const auto& b : k_) total += b.size();
    for (const auto& b : v_) total += b.size();
    return total;
}

}  // namespace strata
