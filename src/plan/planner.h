#pragma once
// The memory planner: (device budget, host RAM, model, context, reserves) → where every byte goes,
// and whether it fits, explained in words. It runs before anything is loaded and touches no GPU,
// and loading follows the plan it returns (ARCHITECTURE.md decision 5):
//   1. everything allocated after the expert cache is sized — dense weights, KV cache, recurrent
//      state, workspaces, expert copy buffers — is reserved FIRST;
//   2. the user's reserve (driver, fragmentation, other programs) is kept free;
//   3. the expert cache takes the rest, in whole slots of one expert of one layer;
//   4. experts without a VRAM slot live in a pinned RAM arena, and when RAM is short the rest stay
//      in the mapped file (read from disk on use). The file stays mapped, so an expert evicted
//      from a slot is always readable.
// A plan that says FITS leaves room for every later allocation; one that does not names the
// shortfall and what would fix it (each suggestion checked by planning again with it).
//
//   PlanRequest req;
//   req.gpu = DeviceMemory{"RTX 4090", 24 * kGiB, 23 * kGiB};
//   req.ram_bytes = 64 * kGiB;
//   Plan plan = make_plan(inventory, weights, req);
//   if (!plan.fits) for (auto& s : plan.suggestions) puts(s.c_str());
// Several GPUs (req.split_gpus) split the model by layers: each is planned by the same rules for
// the layers it holds (plan/layer_split.h), and plan.gpu_shares says who holds what.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/allocations.h"
#include "plan/model_bytes.h"

namespace strata {

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGiB = uint64_t(1) << 30;

// One GPU's memory as the device layer (or the --vram flag) reports it.
struct DeviceMemory {
    std::string name;
    uint64_t total_bytes = 0;
    uint64_t free_bytes = 0;  // what other programs leave; the plan uses at most this
};

struct PlanRequest {
    std::optional<DeviceMemory> gpu;   // none (or 0 bytes): everything on the CPU
    uint64_t vram_budget = 0;          // > 0: behave as a card of this size (--vram-budget)
    uint64_t vram_reserve = 512 * kMiB;
    uint64_t ram_bytes = 0;            // host RAM the engine may use (MemAvailable by default)
    uint64_t ram_reserve = 1 * kGiB;   // left to the OS, the page cache of the file, other programs
    // The most the GPU may page-lock (plan/host_ram.h: about half of RAM under Windows' WDDM);
    // UINT64_MAX: no limit of the OS's own. Only explained: the load locks what it may.
    uint64_t page_lock_limit = UINT64_MAX;
    int64_t n_ctx = 4096;
    KvCacheType kv_type = KvCacheType::F16;
    int64_t n_batch = 512;             // tokens per forward pass (prompt chunks, verify windows)
    // --split layer: the GPUs in layer order (two or more; `gpu` is then ignored). vram_budget and
    // vram_reserve apply to each GPU separately.
    std::vector<DeviceMemory> split_gpus;
    // Explicit split points: the first layer of GPUs 1..n-1 (n-1 strictly increasing values in
    // 1..n_layer-1). Empty: split by capacity (plan/layer_split.h).
    std::vector<uint32_t> split_at;
    // --split tensor: split_gpus each hold a part of every layer (plan/tensor_split.h).
    bool split_tensor = false;
};

// One GPU's part of a layer split.
struct GpuShare {
    std::string name;                         // DeviceMemory::name
    uint32_t layer_begin = 0, layer_end = 0;  // its layers: [begin, end)
    uint64_t capacity = 0;                    // min(free, total, budget)
    uint64_t dense = 0;       // dense weights of its layers (+ output head and norm on the last GPU)
    uint64_t context = 0;     // KV cache and recurrent state of its layers
    Workspace workspace;      // a whole batch passes through every GPU; logits only on the last
    uint64_t reserve = 0;
    uint64_t expert_count = 0;  // routed experts of its layers
    uint64_t expert_slots = 0;  // ... of them cached in its VRAM (== expert_count: all resident)
    uint64_t unused = 0, shortfall = 0;
    uint32_t tensor_rank = 0, tensor_ranks = 0;  // tensor split: part tensor_rank of tensor_ranks (0: a layer split)
    uint64_t fixed() const { return dense + context + workspace.total(); }
};

// A labelled part of a memory bar.
struct MemorySegment {
    std::string key;    // "dense", "kv", "workspace", "experts", "reserve", "free", ...
    std::string label;  // "dense weights"
    uint64_t bytes = 0;
};

struct Plan {
    PlanRequest request;
    std::string model_name;
    std::string arch;
    ModelWeights weights;
    ContextMemory context;        // KV cache and recurrent state (in VRAM with a GPU, else in RAM)
    bool fits = false;

    // VRAM (all zero without a GPU).
    bool has_gpu = false;
    uint64_t vram_capacity = 0;   // min(free, budget): what the plan may use
    uint64_t vram_dense = 0;      // weights.dense_vram_bytes()
    uint64_t vram_context = 0;    // context.total()
    Workspace vram_workspace;     // incl. expert copy buffers when experts are not all resident
    uint64_t vram_reserve = 0;
    uint64_t vram_fixed() const { return vram_dense + vram_context + vram_workspace.total(); }
    uint64_t expert_slot_bytes = 0;
    uint64_t vram_expert_slots = 0;
    uint64_t vram_experts() const { return vram_expert_slots * expert_slot_bytes; }
    uint64_t vram_unused = 0;     // left over (less than one slot, or no experts to hold)
    uint64_t vram_shortfall = 0;  // > 0: how much more VRAM the fixed part + reserve need
    // Layer split: one entry per GPU, in layer order; the vram_* fields above are then the sums over
    // the GPUs (vram_capacity, vram_dense, vram_context, vram_workspace field by field, vram_reserve,
    // vram_expert_slots, vram_unused, vram_shortfall). Empty for one GPU or none.
    std::vector<GpuShare> gpu_shares;

    // Host RAM.
    uint64_t ram_capacity = 0;
    uint64_t ram_dense = 0;       // CPU only: all dense weights; with a GPU: the embedding table
    uint64_t ram_context = 0;     // CPU only: KV cache and recurrent state
    uint64_t ram_workspace = 0;
    uint64_t ram_reserve = 0;
    uint64_t ram_fixed() const { return ram_dense + ram_context + ram_workspace; }
    uint64_t ram_arena_experts = 0;  // experts in the pinned arena (slots of expert_slot_bytes)
    uint64_t ram_arena_bytes() const { return ram_arena_experts * expert_slot_bytes; }
    uint64_t ram_unused = 0;
    uint64_t ram_shortfall = 0;

    // Disk: experts read from the mapped file when used.
    uint64_t disk_experts = 0;
    uint64_t disk_expert_bytes = 0;
    // qwen4exp's n-gram (PLE) table: in RAM when the room left after the expert arena holds it
    // (experts first: a token reads ~1.4 KB of the table but megabytes of experts), otherwise
    // read from the SSD row by row (weights.ngram_rows_per_token a token). One of the two is set.
    uint64_t ram_ngram_table = 0;
    uint64_t disk_ngram_table = 0;

    std::vector<std::string> problems;     // why it does not fit (empty when it fits)
    std::vector<std::string> suggestions;  // what to change, each one checked to fit
    std::vector<std::string> notes;        // warnings that do not stop it (experts on disk, ...)
    std::vector<std::string> explanation;  // the plan in words, one sentence per line

    // Share of all experts (by count; by bytes too when every layer's experts have one size).
    double vram_expert_share() const;
    double ram_expert_share() const;
    double disk_expert_share() const;
    std::vector<MemorySegment> vram_segments() const;
    std::vector<MemorySegment> ram_segments() const;
};

Plan make_plan(const ModelInventory& inventory, const ModelWeights& weights, const PlanRequest& request);

}  // namespace strata
