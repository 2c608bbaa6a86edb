#include "plan/tensor_split.h"

#include <algorithm>

#include "model/tensor_roles.h"
#include "plan/units.h"

namespace strata {

bool tensor_split_shards_attention(const ModelConfig& cfg) { return cfg.kv_lora_rank == 0; }  // not MLA

TensorSplitPlace tensor_split_place(const ModelConfig& cfg, std::string_view name) {
    const TensorRole role = tensor_role(name);
    const int layer = tensor_layer(name);
    if (role == TensorRole::SharedExperts) return TensorSplitPlace::FirstGpu;
    if (layer >= 0 && cfg.is_recurrent_layer(static_cast<uint32_t>(layer)) && role != TensorRole::Norm &&
        role != TensorRole::Router && role != TensorRole::RoutedExperts) {
        return TensorSplitPlace::FirstGpu;  // a DeltaNet layer's mixer
    }
    if (role == TensorRole::Attention) {
        return tensor_split_shards_attention(cfg) ? TensorSplitPlace::SharedOut : TensorSplitPlace::FirstGpu;
    }
    if (role == TensorRole::DenseFfn) {
        return tensor_split_shards_attention(cfg) ? TensorSplitPlace::SharedOut : TensorSplitPlace::FirstGpu;
    }
    return TensorSplitPlace::EveryGpu;
}

LayerSplit split_by_tensors(const ModelInventory& inv, const ModelWeights& w, const PlanRequest& req) {
    const ModelConfig& cfg = inv.config;
    const auto n = static_cast<uint32_t>(req.split_gpus.size());
    LayerSplit out;
    const bool shard_heads = tensor_split_shards_attention(cfg);
    if (shard_heads && (cfg.n_head_kv == 0 || cfg.n_head_kv % n != 0)) {
        out.problems.push_back(fmt::format("--split tensor over {} GPUs: the model's {} KV heads do not divide among "
                                           "them; use --split layer",
                                           n, cfg.n_head_kv));
    }
    if (cfg.n_expert > 0 && cfg.n_expert < n) {
        out.problems.push_back(fmt::format("--split tensor over {} GPUs: the model has only {} experts per layer", n,
                                           cfg.n_expert));
    }
    // Bytes on every GPU, bytes shared out among them, and bytes on the first GPU only.
    uint64_t whole = 0, sharded = 0, first_only = 0;
    for (const GgufTensorInfo& t : inv.tensors) {
        const TensorRole role = tensor_role(t.name);
        if (role == TensorRole::RoutedExperts && !is_routed_expert_bias(t.name)) continue;  // shared out below
        if (tensor_layer(t.name) < 0) {
            if (role == TensorRole::Embedding && !w.embedding_is_output) continue;  // in RAM
            first_only += t.n_bytes;  // the output head and norm
            continue;
        }
        switch (tensor_split_place(cfg, t.name)) {
            case TensorSplitPlace::SharedOut: sharded += t.n_bytes; break;
            case TensorSplitPlace::FirstGpu: first_only += t.n_bytes; break;
            case TensorSplitPlace::EveryGpu: whole += t.n_bytes; break;
        }
    }
    // KV rows by heads (or all on the first GPU); recurrent states on the first GPU.
    const ContextMemory context = context_memory(cfg, req.n_ctx, req.kv_type);
    for (uint32_t g = 0; g < n; ++g) {
        ModelWeights part = w;
        const uint64_t first = uint64_t(cfg.n_expert) * g / n, end = uint64_t(cfg.n_expert) * (g + 1) / n;
        part.expert_count = uint64_t(w.moe_layers) * (end - first);
        // As plan_gpu_share, without its expert copy buffers: nothing is staged under a tensor split.
        GpuShare s;
        s.capacity = gpu_capacity(req.split_gpus[g], req.vram_budget);
        s.reserve = req.vram_reserve;
        s.dense = whole + (sharded + n - 1) / n + (g == 0 ? first_only : 0);
        const uint64_t kv = context.kv_bytes + context.kv_staging_bytes;  // each rank stages its own heads
        s.context = shard_heads ? (kv + n - 1) / n : (g == 0 ? kv : 0);
        if (g == 0) s.context += context.recurrent_bytes;
        s.expert_count = part.expert_count;
        s.workspace = device_workspace(cfg, part, req.n_batch, false);
        if (g != 0) s.workspace.logits = 0;
        const uint64_t need = s.fixed() + s.reserve;
        if (need > s.capacity) {
            s.shortfall = need - s.capacity;
        } else {
            if (w.expert_slot_bytes > 0) {
                s.expert_slots = std::min<uint64_t>(s.expert_count, (s.capacity - need) / w.expert_slot_bytes);
            }
            s.unused = s.capacity - need - s.expert_slots * w.expert_slot_bytes;
        }
        s.name = req.split_gpus[g].name;
        s.layer_begin = 0;
        s.layer_end = cfg.n_layer;
        s.tensor_rank = g;
        s.tensor_ranks = n;
        if (s.shortfall == 0 && s.expert_slots < s.expert_count) {
            out.problems.push_back(fmt::format(
                "--split tensor keeps every expert in VRAM, but GPU {}{} has room for {} of its {} experts: use "
                "--split layer (each GPU caches its layers' experts), more GPUs, or a larger budget",
                g, s.name.empty() ? std::string() : " (" + s.name + ")", s.expert_slots, s.expert_count));
        }
        out.shares.push_back(std::move(s));
    }
    return out;
}

}  // namespace strata
