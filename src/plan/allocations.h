#pragma once
// Every allocation the engine makes besides the weights, as formulas of the model's
// hyper-parameters, in one place: the KV cache, the recurrent state of linear-attention layers,
// and the workspaces of a forward pass. The memory planner reserves these BEFORE the expert cache
// is sized (ARCHITECTURE.md decision 5), so the runtime must allocate no more than they say: a
// backend that needs a new buffer adds its term here, and a test compares its real allocations
// with these numbers. Where a formula is deliberately generous it says so.
//
//   ContextMemory c = context_memory(cfg, 4096, KvCacheType::F16);   // c.kv_bytes
//   Workspace ws = device_workspace(cfg, weights, 512, /*stage_experts=*/true);
//   ws.total();

#include <cstdint>
#include <string_view>

#include "core/status.h"
#include "kv/kv_type.h"
#include "model/config.h"
#include "plan/model_bytes.h"

namespace strata {

// Storage of one KV cache element.
struct ContextMemory {
    uint32_t attention_layers = 0;   // layers with a KV cache
    uint32_t recurrent_layers = 0;   // DeltaNet layers (qwen3next / qwen35moe) with a fixed-size state
    uint64_t kv_bytes_per_token = 0; // Σ over attention layers of the K row + the V row
    uint64_t kv_bytes = 0;           // kv_bytes_per_token × n_ctx
    uint64_t recurrent_bytes = 0;    // f32 conv window + delta-rule state, independent of n_ctx
    // q8_0: one attention layer's rows in f16, through which the GPU's attention reads the cache
    // (backend/gpu/gpu_ops.h: GpuKvCache); a plan without a GPU drops it (the CPU reads the blocks).
    uint64_t kv_staging_bytes = 0;
    uint64_t total() const { return kv_bytes + recurrent_bytes + kv_staging_bytes; }
};
// Every attention layer holds n_ctx positions (sliding-window layers too: the cache is not yet a
// ring, so this is what is allocated). MLA layers (deepseek2) cache one latent row per position,
// which the config describes as one KV head of key_length / value_length.
// layer_begin/layer_end: only the layers [begin, end) (one GPU's share of a layer split); a layer
// is recurrent or not by its index in the whole model.
ContextMemory context_memory(const ModelConfig& cfg, int64_t n_ctx, KvCacheType type, uint32_t layer_begin = 0,
                             uint32_t layer_end = UINT32_MAX);

// The buffers a forward pass of up to n_batch tokens keeps live at once, in bytes. All
// activations are f32; every term is sized for the largest layer of the model.
struct Workspace {
    uint64_t activations = 0;  // residual stream, normed copy, block output, quantized matmul input
    uint64_t attention = 0;    // q/k/v/gate projections, attention output, one tile of scores
    uint64_t ffn = 0;          // dense FFN or MoE (router logits, per-pair gate/up/down outputs, sort)
    // n_vocab × n_batch f32: every position's logits (parity, perplexity); on a GPU also the
    // sampling reduction's buffers beside them (gpu_sampling_bytes).
    uint64_t logits = 0;
    uint64_t expert_staging = 0;  // copy buffers for experts that are not resident (see below)
    uint64_t total() const { return activations + attention + ffn + logits + expert_staging; }
};

// Keys of one attention tile per query row and head: the fused (flash-style) attention kernels
// keep only this many scores live, whatever the context length.
constexpr uint64_t kAttentionScoreTile = 256;

// On the GPU. With stage_experts (some experts not resident), two buffers of
// staging_slots_per_half expert slots each: misses of one layer are copied into one while the
// other is computed (decision 4's double buffering); prompt batches stream every used expert
// through the same pair, so a half holds a quarter of a layer's experts (at most kMaxStagingHalf):
// chunks of 8 left the GPU idle between small launches (measured on the H200: pp512 with every
// expert streamed ran at a quarter of the all-resident speed with halves of 8).
constexpr uint64_t kMaxStagingHalf = 32;
uint64_t staging_slots_per_half(const ModelConfig& cfg);  // max(n_expert_used, min(32, n_expert / 4))
Workspace device_workspace(const ModelConfig& cfg, const ModelWeights& weights, int64_t n_batch, bool stage_experts);

// VRAM of the GPU's sampling reduction (backend/gpu/gpu_sampling.h: GpuCandidateSelector, which
// allocates exactly this at load): a 32-byte header, room for every token as a candidate (id and
// logit), the penalized ids and their counts, and the penalized logits' saved values.
uint64_t gpu_sampling_bytes(uint64_t n_vocab);

// On the host beside a GPU: the CPU expert workers' inputs and outputs for the misses of one
// layer of a batch, plus the logits of the last position and the sampler's candidate list.
// Without a GPU the host runs the whole forward: device_workspace(..., false) + the sampler.
uint64_t host_workspace(const ModelConfig& cfg, const ModelWeights& weights, int64_t n_batch, bool has_gpu);

}  // namespace strata
