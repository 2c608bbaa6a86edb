#include "kv/kv_cache.h"

#include <algorithm>

#include "core/fp16.h"
#include "quant/legacy.h"

namespace strata {

Result<KvCacheType> parse_kv_type(std::string_view name) {
    if (auto type = kv_type_from_name(name)) return *type;
    return Status::error("--kv-type: expected f16, f32 or q8_0, got {:?}", name);
}

KvCache::KvCache(int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvCacheType type)
    : KvCache(std::vector<bool>(static_cast<size_t>(n_layer), true), n_ctx, k_dim, v_dim, type) {}

KvCache::KvCache(const std::vector<bool>& has_rows, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvCacheType type)
    : n_ctx_(n_ctx), k_dim_(k_dim), v_dim_(v_dim), type_(type) {
    STRATA_CHECK(type != KvCacheType::Q8_0 || (k_dim % 32 == 0 && v_dim % 32 == 0),
                 "a q8_0 KV cache needs rows of whole 32-value blocks (check kv_type_fits first)");
    for (bool rows : has_rows) {
        slot_.push_back(rows ? static_cast<int32_t>(k_.size()) : -1);
        if (!rows) continue;
        k_.emplace_back(static_cast<size_t>(n_ctx * kv_row_bytes(type, k_dim)));
        v_.emplace_back(static_cast<size_t>(n_ctx * kv_row_bytes(type, v_dim)));
    }
}

uint64_t KvCache::bytes() const {
    if (storage_) return storage_->bytes();
    uint64_t total = 0;
    for (const auto& b : k_) total += b.size();
    for (const auto& b : v_) total += b.size();
    for (const auto& b : index_) total += b.size();
    return total;
}

void KvCache::add_index_keys(int64_t dim) {
    STRATA_CHECK(dim > 0 && index_.empty() && !storage_, "index keys are added once, to a host cache");
    index_dim_ = dim;
    for (size_t i = 0; i < k_.size(); ++i) index_.emplace_back(static_cast<size_t>(n_ctx_ * dim) * sizeof(float));
}

namespace {
// One row per token and layer: the scalar conversion (ggml's rounding, nearest even) costs
// nothing next to the projections that produced the row, so it needs no SIMD path.
void store_row(const float* src, int64_t n, KvCacheType type, uint8_t* dst) {
    if (type == KvCacheType::F32) {
        std::copy_n(src, n, reinterpret_cast<float*>(dst));
        return;
    }
    if (type == KvCacheType::Q8_0) {
        quantize_row_q8_0(src, dst, n);  // the reference quantizer: ggml's bytes
        return;
    }
    auto* h = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
}
}  // namespace

void KvCache::store(int64_t layer, int64_t pos, const float* k, const float* v) {
    STRATA_CHECK(pos >= 0 && pos < n_ctx_, "KV store past the cache's context");
    store_row(k, k_dim_, type_, row(k_, layer, pos, k_dim_));
    store_row(v, v_dim_, type_, row(v_, layer, pos, v_dim_));
}

void KvCache::store_index_key(int64_t layer, int64_t pos, const float* key) {
    STRATA_CHECK(pos >= 0 && pos < n_ctx_, "index key past the cache's context");
    std::copy_n(key, index_dim_, reinterpret_cast<float*>(row(index_, layer, pos, index_dim_, KvCacheType::F32)));
}

}  // namespace strata
