#pragma once
// What the memory planner needs to know about a model: its hyper-parameters and the names, shapes
// and sizes of its tensors (never their bytes). Taking a tensor list instead of an open file lets
// the planner be tested on shapes that would take gigabytes to write, such as the benchmark model
// of docs/BENCHMARKS.md.
//
//   STRATA_ASSIGN_OR_RETURN(ModelInventory inv, inventory_from_gguf(gguf));
//   STRATA_ASSIGN_OR_RETURN(ModelWeights w, summarize_weights(inv));
//   w.expert_count;        // 48 layers × 128 experts = 6144 for Qwen3-30B-A3B
//   w.expert_slot_bytes;   // one expert of one layer (gate + up + down)

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/config.h"

namespace strata {

struct ModelInventory {
    std::string name;                     // general.name, else the file name
    uint64_t file_bytes = 0;              // all split parts together (0 when not from a file)
    ModelConfig config;
    std::vector<GgufTensorInfo> tensors;  // name, ne, n_dims and n_bytes are used; data is not
};

// Reads config and tensor list; works on split files (the reader joins the parts).
Result<ModelInventory> inventory_from_gguf(const GgufFile& file);

// Expert slots (VRAM cache and RAM arena) hold each part of an expert at this alignment, so the
// GPU kernels read every part from an aligned address.
constexpr uint64_t kExpertPartAlignment = 256;

struct ModelWeights {
    uint64_t total_bytes = 0;
    uint64_t dense_bytes = 0;       // every tensor except routed expert weights (embedding and expert biases included)
    uint64_t embedding_bytes = 0;   // token_embd
    bool embedding_is_output = false;  // tied embeddings: no output.weight, the table is the LM head

    uint32_t moe_layers = 0;          // layers with routed experts
    uint32_t experts_per_layer = 0;   // config.n_expert (0 for dense models)
    uint64_t expert_count = 0;        // moe_layers × experts_per_layer: the units the tiers hold
    uint64_t expert_bytes = 0;        // all routed expert weight tensors
    uint64_t expert_bias_bytes = 0;   // gpt-oss's per-expert biases (counted in dense_bytes too)
    // The size of one slot: the largest (over layers) of one expert's parts (gate, up, down), each
    // part rounded up to kExpertPartAlignment. Layers may differ in type (a Q4_K_M
    // file keeps ffn_down in Q6_K on some layers only), and a slot must take any expert.
    uint64_t expert_slot_bytes = 0;

    // qwen4exp's n-gram (PLE) table: neither dense nor expert weight. It never goes to VRAM; the
    // plan puts it in RAM when there is room after the experts, else it stays on the SSD and a
    // token reads its ngram_rows_per_token rows (model/ple_table.h).
    uint64_t ngram_table_bytes = 0;
    uint64_t ngram_row_bytes = 0;
    uint32_t ngram_rows_per_token = 0;

    bool has_dense_ffn = false;       // some layer has a dense (non-expert) FFN
    // Bytes one decoded token reads: non-expert weights except the embedding (one row of it; the
    // whole table when it is also the LM head), plus n_expert_used experts of each MoE layer.
    uint64_t bytes_per_token = 0;
    uint64_t expert_bytes_per_token = 0;

    // Bytes of the weights that stay on the GPU when it is used: dense weights, minus the
    // embedding table unless it is the LM head (a token reads one row of it, which the host copies).
    uint64_t dense_vram_bytes() const { return dense_bytes - (embedding_is_output ? 0 : embedding_bytes); }
    uint64_t dense_host_bytes() const { return dense_bytes - dense_vram_bytes(); }
    // The average expert (for byte shares of expert counts).
    uint64_t average_expert_bytes() const { return expert_count ? expert_bytes / expert_count : 0; }
};

// Fails when the expert tensors disagree with the config (an expert tensor whose last dimension is
// not n_expert), naming the tensor.
Result<ModelWeights> summarize_weights(const ModelInventory& inventory);

}  // namespace strata
