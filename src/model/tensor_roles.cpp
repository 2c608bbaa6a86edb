#include "model/tensor_roles.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

namespace strata {

namespace {
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

bool is_routed_expert_bias(std::string_view name) {
    return name.find("_exps") != std::string_view::npos && name.size() > 5 && name.substr(name.size() - 5) == ".bias";
}

TensorRole tensor_role(std::string_view name) {
    if (starts_with(name, "token_embd")) return TensorRole::Embedding;
    if (starts_with(name, "per_layer_token_embd")) return TensorRole::NgramTable;
    if (starts_with(name, "output.")) return TensorRole::Output;
    if (contains(name, "_exps")) return TensorRole::RoutedExperts;
    if (contains(name, "_shexp")) return TensorRole::SharedExperts;
    // deepseek4's tid2eid: the token-id routing table of its hash-routed layers.
    if (contains(name, "ffn_gate_inp") || contains(name, "exp_probs_b") || contains(name, "ffn_gate_tid2eid")) {
        return TensorRole::Router;
    }
    if (contains(name, "norm")) return TensorRole::Norm;
    if (contains(name, "attn_")) return TensorRole::Attention;
    if (contains(name, "ssm_")) return TensorRole::LinearAttention;
    if (contains(name, "ffn_")) return TensorRole::DenseFfn;
    return TensorRole::Other;
}

std::string_view tensor_role_name(TensorRole role) {
    static constexpr std::string_view kNames[kTensorRoleCount] = {
        "embedding", "output", "attention", "linear-attention", "router",
        "routed-experts", "shared-experts", "dense-ffn", "norm", "other", "ngram-table"};
    return kNames[static_cast<int>(role)];
}

int tensor_layer(std::string_view name) {
    if (!starts_with(name, "blk.")) return -1;
    std::string_view rest = name.substr(4);
    int layer = -1;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
    if (ec != std::errc() || ptr == rest.data()) return -1;
    return layer;
}

ModelByteSummary summarize_model_bytes(const GgufFile& file) {
    ModelByteSummary s;
    std::string arch = file.get_string("general.architecture", "");
    s.expert_count = file.get_uint(arch + ".expert_count", 0);
    s.experts_used = file.get_uint(arch + ".expert_used_count", 0);

    uint64_t expert_bytes = 0;
    std::set<int> moe_layers;
    for (const auto& t : file.tensors()) {
        TensorRole role = tensor_role(t.name);
        s.total_bytes += t.n_bytes;
        s.bytes_by_role[static_cast<int>(role)] += t.n_bytes;
        if (role == TensorRole::RoutedExperts) {
            expert_bytes += t.n_bytes;
            moe_layers.insert(tensor_layer(t.name));
        }
    }
    s.moe_layers = moe_layers.size();
    uint64_t embedding = s.bytes_by_role[static_cast<int>(TensorRole::Embedding)];
    // The n-gram table: a token reads its n_heads rows, not the table.
    const uint64_t ngram_table = s.bytes_by_role[static_cast<int>(TensorRole::NgramTable)];
    uint64_t ngram_rows = 0;
    if (const GgufTensorInfo* t = file.tensor("per_layer_token_embd.weight"); t && t->rows() > 0) {
        const int64_t heads = file.get_int(file.get_string("general.architecture", "") + ".ple.heads_per_ngram", 0) *
                              (file.get_int(file.get_string("general.architecture", "") + ".ple.ngram_size", 1) - 1);
        ngram_rows = static_cast<uint64_t>(std::max<int64_t>(heads, 0)) * (t->n_bytes / t->rows());
    }
    uint64_t non_expert = s.total_bytes - expert_bytes - embedding - ngram_table + ngram_rows;
    uint64_t embedding_row = 0;
    if (const GgufTensorInfo* e = file.tensor("token_embd.weight"); e && e->rows() > 0) {
        embedding_row = e->n_bytes / e->rows();
    }
    if (s.expert_count > 0 && s.moe_layers > 0) {
        s.bytes_per_expert = expert_bytes / (s.expert_count * s.moe_layers);
        s.bytes_per_token = non_expert + embedding_row + s.bytes_per_expert * s.experts_used * s.moe_layers;
    } else {
        s.bytes_per_token = non_expert + embedding_row + expert_bytes;
    }
    // Tied embeddings: without an output tensor the embedding table is the LM head, read whole.
    if (!file.tensor("output.weight")) s.bytes_per_token += embedding - embedding_row;
    return s;
}

}  // namespace strata
