#pragma once
// A model split by layers over several GPUs (--split layer): which contiguous layers each GPU
// holds, and each GPU's VRAM planned by the same rule as a single GPU's (plan_gpu_share) for the
// tensors of its layers. Activations of a whole batch pass from one GPU to the next; the output
// head, its norm and the logits live on the last, and the embedding table where the one-GPU plan
// puts it (RAM, unless it is also the output head). The logits then go back to the first GPU,
// where the step's results are read (and sampling reduces them): it holds a logits workspace too.
//
//   LayerSplit split = split_by_layers(inventory, weights, request);   // request.split_gpus: 2+ GPUs
//   split.shares[1].layer_begin;   // the first layer of the second GPU
//   split.problems;                // a split that cannot be made (fits = false), in words

#include <cstdint>
#include <string>
#include <vector>

#include "plan/planner.h"

namespace strata {

// What the plan may use of one GPU: min(free, total, budget when > 0).
uint64_t gpu_capacity(const DeviceMemory& gpu, uint64_t vram_budget);

// One GPU's VRAM (ARCHITECTURE.md decision 5), for a whole model on one GPU and for one share of a
// split alike: dense weights, context and workspaces first, then the reserve, then expert slots of
// weights.expert_slot_bytes from the rest. Expert copy buffers only when its experts do not all fit.
// `weights` are those on this GPU; holds_logits: it keeps logits rows (under a layer split, the
// last GPU, which computes them, and the first, to which they are copied).
GpuShare plan_gpu_share(const ModelConfig& cfg, const ModelWeights& weights, uint64_t context_bytes,
                        uint64_t capacity, uint64_t reserve, int64_t n_batch, bool holds_logits);

struct LayerSplit {
    std::vector<GpuShare> shares;       // one per request.split_gpus entry, in layer order
    std::vector<std::string> problems;  // malformed --split-at, a GPU without room, more GPUs than layers
};
LayerSplit split_by_layers(const ModelInventory& inventory, const ModelWeights& weights, const PlanRequest& request);

// Split points (the first layer of GPUs 1..n-1) giving each GPU a share of the total layer cost
// proportional to its room: layer l goes to the GPU whose cumulative-room interval holds the
// midpoint of l's cumulative cost. Every GPU gets at least one layer when there are enough.
std::vector<uint32_t> split_points(const std::vector<uint64_t>& layer_cost, const std::vector<uint64_t>& room);

// "layers 24–47" (or "layer 5", "no layers"), and "GPU 1 (RTX 3090, layers 24–47)": how plans
// name a share (index in layer order, 0-based).
std::string share_layers(const GpuShare& share);
std::string share_label(const GpuShare& share, size_t index);

}  // namespace strata
