// qwen4exp's metadata (NEW_ARCHS.md §A2.1; the key names are llama.cpp's). Published files and
// llama.cpp's converter store the PLE constants as u64 or i64 arrays and the per-block lists as
// i32 or u32 arrays; both are read.
#include "model/arch/qwen4exp_keys.h"

#include <vector>

namespace strata {

namespace {

// An integer array's items; false when the key is absent or holds something else.
bool read_uint_array(const GgufFile& f, const std::string& key, std::vector<uint64_t>& out) {
    const GgufValue* v = f.find(key);
    if (v == nullptr || !v->is_array()) return false;
    out.clear();
    for (const GgufValue& item : v->as_array().items) {
        if (!item.is_integer()) return false;
        out.push_back(item.as_uint());
    }
    return true;
}

Status positive(const GgufFile& f, const std::string& key, uint64_t v) {
    if (v == 0 || v > (1u << 30)) return Status::error("{}: {}: expected a positive size, got {}", f.path(), key, v);
    return Status::ok();
}

Status read_layer_kinds(const GgufFile& f, const std::string& p, ModelConfig& c) {
    const uint32_t blocks = c.n_layer + c.n_mtp_layers;
    std::vector<uint64_t> ratios;
    if (f.find(p + "attention.compress_ratios") != nullptr) {
        if (!read_uint_array(f, p + "attention.compress_ratios", ratios) || ratios.size() < c.n_layer) {
            return Status::error("{}: {}attention.compress_ratios: expected an integer per block ({}), got {}", f.path(), p,
                                 blocks, ratios.size());
        }
    }
    // A block is QSA attention where the interval rule puts attention (llama.cpp's rule for the
    // hybrids) or where the file gives it a compress ratio: the converter writes ratios only on
    // attention blocks, and a file whose config spelled the attention layers in another way than
    // the interval (the tiny reference models) still names each one by its ratio. An attention
    // block with ratio 0 attends densely, as the file says. The MTP blocks are attention blocks.
    c.attention_layers.assign(blocks, 0);
    c.indexer.compress_ratio.assign(blocks, 0);
    for (uint32_t il = 0; il < blocks; ++il) {
        const uint64_t ratio = il < ratios.size() ? ratios[il] : 0;
        if (ratio > (1u << 16)) return Status::error("{}: {}attention.compress_ratios[{}] = {}", f.path(), p, il, ratio);
        const bool interval_attention = c.full_attention_interval > 0 && (il + 1) % c.full_attention_interval == 0;
        c.attention_layers[il] = il >= c.n_layer || interval_attention || ratio > 0;
        c.indexer.compress_ratio[il] = static_cast<uint32_t>(ratio);
    }
    return Status::ok();
}

Status read_indexer(const GgufFile& f, const std::string& p, ModelConfig& c) {
    QsaIndexerConfig& ix = c.indexer;
    bool any_ratio = false;
    for (uint32_t r : ix.compress_ratio) any_ratio = any_ratio || r > 0;
    if (!any_ratio) return Status::ok();
    ix.n_head = static_cast<uint32_t>(f.get_uint(p + "attention.indexer.head_count", 0));
    ix.head_dim = static_cast<uint32_t>(f.get_uint(p + "attention.indexer.key_length", 0));
    ix.top_k = static_cast<uint32_t>(f.get_uint(p + "attention.indexer.top_k", 0));
    STRATA_TRY(positive(f, p + "attention.indexer.head_count", ix.n_head));
    STRATA_TRY(positive(f, p + "attention.indexer.key_length", ix.head_dim));
    STRATA_TRY(positive(f, p + "attention.indexer.top_k", ix.top_k));
    for (uint32_t il = 0; il < ix.compress_ratio.size(); ++il) {
        const uint32_t r = ix.compress_ratio[il];
        if (r > 0 && ix.top_k % r != 0) {
            return Status::error("{}: {}attention.indexer.top_k ({}) must be a multiple of compress ratio {} (block {})",
                                 f.path(), p, ix.top_k, r, il);
        }
    }
    // The indexer's queries and pooled keys take the attention's rope (its rotated dimensions).
    if (c.rope_dims > ix.head_dim) {
        return Status::error("{}: {}attention.indexer.key_length ({}) is below rope.dimension_count ({})", f.path(), p,
                             ix.head_dim, c.rope_dims);
    }
    return Status::ok();
}

Status read_ple(const GgufFile& f, const std::string& p, ModelConfig& c) {
    std::vector<uint64_t> layers;
    if (!read_uint_array(f, p + "ple.layers", layers) || layers.empty()) return Status::ok();  // no PLE block
    if (layers.size() > 1) {
        return Status::error("{}: {}ple.layers: one PLE block is supported, the file has {}", f.path(), p, layers.size());
    }
    PleConfig& ple = c.ple;
    if (layers[0] >= c.n_layer || !c.is_recurrent_layer(static_cast<uint32_t>(layers[0]))) {
        return Status::error("{}: {}ple.layers: block {} is not a DeltaNet block of the {} (the PLE block keeps its "
                             "convolution history beside a DeltaNet state)",
                             f.path(), p, layers[0], c.n_layer);
    }
    ple.layer = static_cast<int32_t>(layers[0]);
    const auto size = [&](const char* key, uint32_t& out) -> Status {
        out = static_cast<uint32_t>(f.get_uint(p + key, 0));
        return positive(f, p + key, out);
    };
    STRATA_TRY(size("ple.ngram_size", ple.ngram_size));
    STRATA_TRY(size("ple.heads_per_ngram", ple.heads_per_ngram));
    STRATA_TRY(size("ple.conv_kernel", ple.conv_kernel));
    STRATA_TRY(size("embedding_length_per_layer_input", ple.row_width));
    if (ple.ngram_size < 2) return Status::error("{}: {}ple.ngram_size: expected >= 2, got {}", f.path(), p, ple.ngram_size);
    const GgufValue* eos = f.find(p + "ple.eos_token_id");
    if (eos == nullptr || !eos->is_integer()) {
        return Status::error("{}: {}ple.eos_token_id is missing (the n-gram context restarts after it)", f.path(), p);
    }
    ple.eos_token = static_cast<int32_t>(eos->as_int());
    const auto array = [&](const char* key, size_t n, std::vector<uint64_t>& out) -> Status {
        if (!read_uint_array(f, p + key, out) || out.size() != n) {
            return Status::error("{}: {}{}: expected {} integers, got {}", f.path(), p, key, n, out.size());
        }
        return Status::ok();
    };
    STRATA_TRY(array("ple.layer_multipliers", ple.ngram_size, ple.multipliers));
    STRATA_TRY(array("ple.head_offsets", ple.n_heads(), ple.head_offsets));
    STRATA_TRY(array("ple.head_vocab_sizes", ple.n_heads(), ple.head_sizes));
    for (size_t h = 0; h < ple.head_sizes.size(); ++h) {
        if (ple.head_sizes[h] == 0 || ple.head_sizes[h] > (uint64_t{1} << 40)) {
            return Status::error("{}: {}ple.head_vocab_sizes[{}] = {}", f.path(), p, h, ple.head_sizes[h]);
        }
    }
    // The hash multiplies token ids by the multipliers in 64 bits, as HF does in int64: a product
    // must stay below 2^63 for the same bits (the converter's multipliers are < 2^63 / vocab).
    for (uint64_t m : ple.multipliers) {
        if (m == 0 || m > (uint64_t{1} << 63) / std::max<uint64_t>(c.n_vocab, 1)) {
            return Status::error("{}: {}ple.layer_multipliers: {} overflows 63 bits with a vocabulary of {}", f.path(), p,
                                 m, c.n_vocab);
        }
    }
    return Status::ok();
}

}  // namespace

Status read_qwen4exp_keys(const GgufFile& f, const std::string& p, ModelConfig& c) {
    c.n_mtp_layers = static_cast<uint32_t>(f.get_uint(p + "nextn_predict_layers", 0));
    if (c.n_mtp_layers >= c.n_layer) {
        return Status::error("{}: {}nextn_predict_layers ({}) leaves no trunk of block_count {}", f.path(), p,
                             c.n_mtp_layers, c.n_layer);
    }
    c.n_layer -= c.n_mtp_layers;  // the trunk; the MTP blocks follow it
    STRATA_TRY(read_hybrid_keys(f, p, c));
    c.hc_count = static_cast<uint32_t>(f.get_uint(p + "hyper_connection.count", 0));
    c.hc_lowrank = static_cast<uint32_t>(f.get_uint(p + "hyper_connection.low_rank", 0));
    if (c.hc_count < 2 || c.hc_count > 64) {
        return Status::error("{}: {}hyper_connection.count: expected 2..64 residual streams, got {}", f.path(), p, c.hc_count);
    }
    STRATA_TRY(positive(f, p + "hyper_connection.low_rank", c.hc_lowrank));
    STRATA_TRY(read_layer_kinds(f, p, c));
    STRATA_TRY(read_indexer(f, p, c));
    STRATA_TRY(read_ple(f, p, c));
    return Status::ok();
}

}  // namespace strata
