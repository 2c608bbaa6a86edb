#pragma once
// A model split by tensor over several GPUs (--split tensor): every GPU holds every layer, with its
// share of each layer's attention projections (by KV-head groups) and KV cache, of each dense
// FFN's hidden units, and of each layer's routed experts; norms and routers are on every GPU, the
// output head and the logits on the first. An untied embedding table stays in RAM, as with one
// GPU. There is no expert cache under a tensor split: each GPU must hold all of its experts, or the
// plan does not fit (a layer split caches experts per GPU instead).
//
//   LayerSplit split = split_by_tensors(inventory, weights, request);   // request.split_tensor
//   split.shares[0].dense;   // the first GPU's weights, output head included

#include "plan/layer_split.h"

namespace strata {

LayerSplit split_by_tensors(const ModelInventory& inventory, const ModelWeights& weights, const PlanRequest& request);

}  // namespace strata
