#include "plan/model_bytes.h"

#include <algorithm>
#include <map>

#include "model/tensor_roles.h"

namespace strata {

namespace {
uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }
}  // namespace

Result<ModelInventory> inventory_from_gguf(const GgufFile& file) {
    ModelInventory inv;
    STRATA_ASSIGN_OR_RETURN(inv.config, ModelConfig::from_gguf(file));
    inv.file_bytes = file.total_file_bytes();
    inv.tensors = file.tensors();
    inv.name = file.get_string("general.name", "");
    if (inv.name.empty()) {
        const std::string& path = file.path();
        size_t slash = path.find_last_of("/\\");
        inv.name = slash == std::string::npos ? path : path.substr(slash + 1);
    }
    return inv;
}

Result<ModelWeights> summarize_weights(const ModelInventory& inv) {
    const ModelConfig& cfg = inv.config;
    ModelWeights w;
    w.experts_per_layer = cfg.n_expert;
    // Per MoE layer: the slot bytes of one expert (aligned parts) and the layer's expert bytes.
    std::map<int, uint64_t> slot_bytes_of_layer;
    uint64_t embedding_row = 0;
    bool has_output = false;
    for (const GgufTensorInfo& t : inv.tensors) {
        const TensorRole role = tensor_role(t.name);
        w.total_bytes += t.n_bytes;
        if (role == TensorRole::DenseFfn) w.has_dense_ffn = true;
        if (role == TensorRole::Output) has_output = true;
        if (role == TensorRole::Embedding) {
            w.embedding_bytes += t.n_bytes;
            if (t.rows() > 0) embedding_row = t.n_bytes / t.rows();
        }
        if (role == TensorRole::NgramTable) {
            w.ngram_table_bytes += t.n_bytes;
            if (t.rows() > 0) w.ngram_row_bytes = t.n_bytes / t.rows();
            w.ngram_rows_per_token = cfg.ple.n_heads();
            continue;
        }
        // gpt-oss's per-expert biases ([out, n_expert]) stay whole in VRAM beside the expert cache
        // (a few MB per layer; the kernels index them by expert id), so they count as dense.
        if (role != TensorRole::RoutedExperts || is_routed_expert_bias(t.name)) {
            w.dense_bytes += t.n_bytes;
            if (role == TensorRole::RoutedExperts) w.expert_bias_bytes += t.n_bytes;
            continue;
        }
        // Expert weights stack the experts in their last dimension: [in, out, n_expert].
        const uint64_t stacked = t.n_dims > 0 ? t.ne[t.n_dims - 1] : 0;
        const int layer = tensor_layer(t.name);
        if (cfg.n_expert == 0 || stacked != cfg.n_expert || t.n_bytes % cfg.n_expert != 0 || layer < 0) {
            return Status::error("{}: expected a per-layer expert tensor with {} experts in its last dimension, got "
                                 "shape {} ({} bytes)",
                                 t.name, cfg.n_expert, t.shape_string(), t.n_bytes);
        }
        w.expert_bytes += t.n_bytes;
        slot_bytes_of_layer[layer] += align_up(t.n_bytes / cfg.n_expert, kExpertPartAlignment);
    }
    w.embedding_is_output = !has_output && w.embedding_bytes > 0;
    w.moe_layers = static_cast<uint32_t>(slot_bytes_of_layer.size());
    w.expert_count = uint64_t(w.moe_layers) * cfg.n_expert;
    for (const auto& [layer, bytes] : slot_bytes_of_layer) w.expert_slot_bytes = std::max(w.expert_slot_bytes, bytes);
    if (w.moe_layers == 0) w.experts_per_layer = 0;

    // The same reading of a decode step as summarize_model_bytes (model/tensor_roles.h).
    // A token reads its experts' biases only, as it reads their weights.
    const uint64_t non_expert_but_embedding = w.dense_bytes - w.embedding_bytes - w.expert_bias_bytes;
    w.expert_bytes_per_token =
        w.expert_count ? (w.expert_bytes + w.expert_bias_bytes) / w.expert_count * cfg.n_expert_used * w.moe_layers : 0;
    w.bytes_per_token = non_expert_but_embedding + (w.embedding_is_output ? w.embedding_bytes : embedding_row) +
                        w.expert_bytes_per_token + uint64_t(w.ngram_rows_per_token) * w.ngram_row_bytes;
    return w;
}

}  // namespace strata
