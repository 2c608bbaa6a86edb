#pragma once
// A model split by tensor over several GPUs (--split tensor): every GPU holds every layer, with its
// share of each layer's attention projections (by KV-head groups) and KV cache, of each dense
// FFN's hidden units, and of each layer's routed experts; norms and routers are on every GPU, the
// output head and the logits on the first. An untied embedding table stays in RAM, as with one
// GPU. There is no expert cache under a tensor split: each GPU must hold all of its experts, or the
// plan does not fit (a layer split caches experts per GPU instead).
// What an architecture cannot share out stays whole on the first GPU (tensor_split_place): DeepSeek's
// latent attention with its KV cache (one latent row serves every head), its leading dense FFNs,
// the DeltaNet layers of Qwen3-Next / Qwen3.5 with every sequence's recurrent state, and shared
// experts.
//
//   LayerSplit split = split_by_tensors(inventory, weights, request);   // request.split_tensor
//   split.shares[0].dense;   // the first GPU's weights, output head included

#include "plan/layer_split.h"

namespace strata {

// Where a layer tensor's bytes go under a tensor split.
enum class TensorSplitPlace { EveryGpu, SharedOut, FirstGpu };
TensorSplitPlace tensor_split_place(const ModelConfig& cfg, std::string_view name);
// Whether the model's attention heads and KV cache are shared out (else the first GPU holds them).
bool tensor_split_shards_attention(const ModelConfig& cfg);

LayerSplit split_by_tensors(const ModelInventory& inventory, const ModelWeights& weights, const PlanRequest& request);

}  // namespace strata
