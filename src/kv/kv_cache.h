#pragma once
// The attention KV cache: for each attention layer, keys and values of every position seen so
// far, as rows of n_head_kv * head_dim elements, in f32, f16 or q8_0 (KvCacheType). Rows are
// written from f32 with store(), converted to the cache's type there, and read back by the CPU
// attention (backend/cpu/attention.cpp), which widens f16 rows to f32 as it reads them
// (backend/cpu/f16_rows.h) and dequantizes q8_0 rows head by head.
//
//   KvCache kv(cfg.n_layer, n_ctx, cfg.kv_dim_k(), cfg.kv_dim_v(), KvCacheType::F16);
//   kv.store(layer, pos, k_row, v_row);          // f32 in, f16 kept
//   const void* k = kv.key_row(layer, pos);      // elements of kv.type()
//
// Hybrid models (qwen3next, qwen35moe) give only their attention layers rows: the constructor
// taking a per-layer mask maps each such layer to a slot, and their recurrent layers cost nothing.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/check.h"
#include "core/status.h"
#include "kv/kv_type.h"

namespace strata {

// The --kv-type flag's value (run, chat, serve, bench, parity, perplexity and plan alike).
Result<KvCacheType> parse_kv_type(std::string_view name);

// Rows a backend keeps outside host memory (the GPU's device cache). The KvCache owns them, so
// they live exactly as long as the session whose cache they are.
class KvCacheStorage {
public:
    virtual ~KvCacheStorage() = default;
    virtual uint64_t bytes() const { return 0; }  // what the rows take where they live
};

class KvCache {
public:
    // Every one of n_layer layers gets rows.
    KvCache(int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvCacheType type = KvCacheType::F32);
    // Only layers with has_rows[il] get rows; the others must not be stored to or read.
    KvCache(const std::vector<bool>& has_rows, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvCacheType type);
    // A cache whose rows live in `storage` only: no row may be stored or read through it.
    KvCache(int64_t n_ctx, int64_t k_dim, int64_t v_dim, std::unique_ptr<KvCacheStorage> storage)
        : n_ctx_(n_ctx), k_dim_(k_dim), v_dim_(v_dim), storage_(std::move(storage)) {}
    KvCacheStorage* storage() const { return storage_.get(); }

    int64_t n_ctx() const { return n_ctx_; }
    int64_t k_dim() const { return k_dim_; }
    int64_t v_dim() const { return v_dim_; }
    KvCacheType type() const { return type_; }
    bool has_layer(int64_t layer) const { return slot_of(layer) >= 0; }
    int64_t n_stored_layers() const { return static_cast<int64_t>(k_.size()); }
    // Bytes of the rows: host buffers, or the storage's own.
    uint64_t bytes() const;

    // Writes position pos's key (k_dim floats) and value (v_dim floats) of a layer.
    void store(int64_t layer, int64_t pos, const float* k, const float* v);

    // Row addresses, elements of type() (float or IEEE half as uint16_t).
    const void* key_row(int64_t layer, int64_t pos) const { return row(k_, layer, pos, k_dim_); }
    const void* value_row(int64_t layer, int64_t pos) const { return row(v_, layer, pos, v_dim_); }

    // A third plane beside keys and values (qwen4exp's QSA): per stored layer and position, the
    // indexer's raw key, `dim` f32 values, from which the indexer pools its block keys. Kept in
    // f32 whatever type() is: it is a sixteenth of the K/V bytes of a real model, and the block
    // scores that choose what a query sees should not move with the cache's rounding.
    void add_index_keys(int64_t dim);
    int64_t index_key_dim() const { return index_dim_; }
    void store_index_key(int64_t layer, int64_t pos, const float* key);
    const float* index_key(int64_t layer, int64_t pos) const {
        return reinterpret_cast<const float*>(row(index_, layer, pos, index_dim_, KvCacheType::F32));
    }

    // Planes of entries that are not one per position (deepseek4's compressed attention: one
    // entry per `ratio` positions, written when its window of tokens is complete): per layer,
    // rows[layer] entries of `dim` f32 values (0: the layer has none). Kept in f32 whatever
    // type() is (the rows per token are a ratio'th of the K/V rows'). Returns the plane's id.
    int add_entry_plane(const std::vector<int64_t>& rows, int64_t dim);
    int64_t entry_dim(int plane) const { return planes_[static_cast<size_t>(plane)].dim; }
    int64_t entry_rows(int plane, int64_t layer) const;
    float* entry(int plane, int64_t layer, int64_t i);
    const float* entry(int plane, int64_t layer, int64_t i) const { return const_cast<KvCache*>(this)->entry(plane, layer, i); }

    // Key row `pos` of a layer widened to f32 (dim k_dim()), whatever type() is.
    void key_row_f32(int64_t layer, int64_t pos, float* out) const;

    // Float views of an f32 cache (tests, and code that fills rows in place).
    float* keys(int64_t layer, int64_t pos) { return f32_row(k_, layer, pos, k_dim_); }
    float* values(int64_t layer, int64_t pos) { return f32_row(v_, layer, pos, v_dim_); }
    const float* keys(int64_t layer, int64_t pos) const { return f32_row(k_, layer, pos, k_dim_); }
    const float* values(int64_t layer, int64_t pos) const { return f32_row(v_, layer, pos, v_dim_); }

private:
    int64_t slot_of(int64_t layer) const {
        return layer >= 0 && layer < static_cast<int64_t>(slot_.size()) ? slot_[static_cast<size_t>(layer)] : -1;
    }
    // One helper for the const and the mutable views: the buffers are the cache's own.
    uint8_t* row(const std::vector<AlignedBuffer>& rows, int64_t layer, int64_t pos, int64_t dim) const {
        return row(rows, layer, pos, dim, type_);
    }
    uint8_t* row(const std::vector<AlignedBuffer>& rows, int64_t layer, int64_t pos, int64_t dim, KvCacheType type) const {
        const int64_t s = slot_of(layer);
        STRATA_CHECK(s >= 0 && static_cast<size_t>(s) < rows.size(), "KV rows of a layer without a cache (a recurrent layer?)");
        return const_cast<uint8_t*>(rows[static_cast<size_t>(s)].data()) + pos * kv_row_bytes(type, dim);
    }
    float* f32_row(const std::vector<AlignedBuffer>& rows, int64_t layer, int64_t pos, int64_t dim) const {
        STRATA_CHECK(type_ == KvCacheType::F32, "float view of an f16 or q8_0 KV cache");
        return reinterpret_cast<float*>(row(rows, layer, pos, dim));
    }

    int64_t n_ctx_, k_dim_, v_dim_;
    KvCacheType type_ = KvCacheType::F32;
    std::vector<int32_t> slot_;  // per model layer: its index in k_/v_, or -1 (no rows)
    std::vector<AlignedBuffer> k_, v_;
    int64_t index_dim_ = 0;
    std::vector<AlignedBuffer> index_;  // the index-key plane, when added
    struct EntryPlane {
        int64_t dim = 0;
        std::vector<int64_t> rows;          // per model layer
        std::vector<AlignedBuffer> layers;  // per model layer (empty: no entries)
    };
    std::vector<EntryPlane> planes_;
    std::unique_ptr<KvCacheStorage> storage_;
};

}  // namespace strata
