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
    for (const EntryPlane& p : planes_) {
        for (const auto& b : p.layers) total += b.size();
    }
    return total;
}

void KvCache::add_index_keys(int64_t dim) {
    STRATA_CHECK(dim > 0 && index_.empty() && !storage_, "index keys are added once, to a host cache");
    index_dim_ = dim;
    for (size_t i = 0; i < k_.size(); ++i) index_.emplace_back(static_cast<size_t>(n_ctx_ * dim) * sizeof(float));
}

int KvCache::add_entry_plane(const std::vector<int64_t>& rows, int64_t dim) {
    STRATA_CHECK(dim > 0 && !storage_, "entry planes are added to a host cache, with a width");
    EntryPlane p;
    p.dim = dim;
    p.rows = rows;
    for (int64_t r : rows) p.layers.emplace_back(static_cast<size_t>(std::max<int64_t>(r, 0) * dim) * sizeof(float));
    planes_.push_back(std::move(p));
    return static_cast<int>(planes_.size()) - 1;
}

int64_t KvCache::entry_rows(int plane, int64_t layer) const {
    const EntryPlane& p = planes_[static_cast<size_t>(plane)];
    return layer >= 0 && layer < static_cast<int64_t>(p.rows.size()) ? p.rows[static_cast<size_t>(layer)] : 0;
}

float* KvCache::entry(int plane, int64_t layer, int64_t i) {
    STRATA_CHECK(plane >= 0 && static_cast<size_t>(plane) < planes_.size(), "no such entry plane");
    EntryPlane& p = planes_[static_cast<size_t>(plane)];
    STRATA_CHECK(i >= 0 && i < entry_rows(plane, layer), "entry past the plane's rows (the context is full)");
    return p.layers[static_cast<size_t>(layer)].as<float>() + i * p.dim;
}

void KvCache::key_row_f32(int64_t layer, int64_t pos, float* out) const {
    const void* r = key_row(layer, pos);
    switch (type_) {
        case KvCacheType::F32: std::copy_n(static_cast<const float*>(r), k_dim_, out); return;
        case KvCacheType::F16: {
            const auto* h = static_cast<const uint16_t*>(r);
            for (int64_t i = 0; i < k_dim_; ++i) out[i] = fp16_to_fp32(h[i]);
            return;
        }
        case KvCacheType::Q8_0: dequantize_row_q8_0(r, out, k_dim_); return;
    }
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
