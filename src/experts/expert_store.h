#pragma once
// The expert store: every routed expert of a MoE model, keyed by (layer, expert), with the tier
// its bytes are read from. Each expert has a home — the pinned RAM arena (a copy made at load) or
// the mapped GGUF itself (no copy, when the plan gives RAM too little room) — and may in addition
// hold a copy in one of the fast tier's slots (VRAM; plain host memory in the CPU emulation). The
// slot count and the arena's share come from the memory plan (plan/planner.h). Which experts get
// slots is not decided here: an ExpertPolicy decides, the store copies and counts.
//
//   STRATA_ASSIGN_OR_RETURN(auto layers, expert_tensors_from_gguf(gguf));
//   ExpertStore store(std::move(layers), {.slots = plan.vram_expert_slots, .ram_experts = plan.ram_arena_experts});
//   uint32_t id = store.id({.layer = 3, .expert = 17});
//   store.admit(id);                       // copies gate|up|down into a free slot
//   ExpertView v = store.view(id);         // Weights over the slot's copy; v.tier == Tier::Slot

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "experts/expert_stats.h"
#include "experts/host_memory.h"
#include "gguf/reader.h"
#include "model/weights.h"
#include "plan/planner.h"

namespace strata {

struct ExpertKey {
    uint32_t layer = 0;   // model layer index (blk.N)
    uint32_t expert = 0;  // index within the layer's stacked tensors
    bool operator==(const ExpertKey&) const = default;
};

// One MoE layer's stacked expert tensors, as views into the mapped file.
struct ExpertLayerTensors {
    uint32_t layer = 0;
    Weight gate, up;  // [n_embd, n_ff_expert, n_expert]
    Weight down;      // [n_ff_expert, n_embd, n_expert]
    // gpt-oss: per-expert biases, [n_ff_expert, n_expert] ×2 and [n_embd, n_expert]; absent otherwise.
    Weight gate_bias, up_bias, down_bias;
    bool biased() const { return gate_bias || up_bias || down_bias; }
};
// Every blk.N.ffn_{gate,up,down}_exps.weight triple of the file (with their biases where the file
// has them), by increasing N.
Result<std::vector<ExpertLayerTensors>> expert_tensors_from_gguf(const GgufFile& file);

struct ExpertBytes {
    uint64_t gate = 0, up = 0, down = 0;
    uint64_t total() const { return gate + up + down; }
};

// One expert's three matrices where they are read from now; matrix 0 of each is the expert when
// read from a slot or the arena, matrix `index` when read from the stacked tensor in the file.
struct ExpertView {
    Weight gate, up, down;
    int64_t index = 0;
    Tier tier = Tier::Disk;
};

struct ExpertStoreOptions {
    size_t slots = 0;        // fast-tier slots (plan.vram_expert_slots)
    size_t ram_experts = 0;  // experts homed in the arena (plan.ram_arena_experts); the rest: disk
    HostAllocator* slot_memory = nullptr;  // null: aligned host memory (the CPU emulation)
    HostAllocator* ram_memory = nullptr;   // null: aligned host memory (pinned memory later)
};

// The tier sizes the memory plan computed (slots in VRAM, experts in the arena); allocators stay
// the defaults.
ExpertStoreOptions store_options_from_plan(const Plan& plan);

class ExpertStore {
public:
    ExpertStore(std::vector<ExpertLayerTensors> layers, const ExpertStoreOptions& options);

    // Dense ids: layer-major over the MoE layers, so per-expert state (residency, policy scores)
    // is a flat array and every lookup is O(1).
    size_t key_count() const { return homes_.size(); }
    uint32_t id(ExpertKey key) const;
    ExpertKey key(uint32_t id) const;
    // The model layer whose stacked gate tensor starts at `gate_data`, or -1: how the MoE block's
    // weights (which do not carry their layer index) are matched to the store's layers.
    int64_t layer_of(const uint8_t* gate_data) const;

    ExpertBytes bytes(uint32_t id) const { return layer_bytes_[id / n_expert_]; }
    uint64_t slot_bytes() const { return slot_bytes_; }  // the largest expert, parts aligned as the plan does
    Tier home(uint32_t id) const { return homes_[id].ram_index >= 0 ? Tier::Ram : Tier::Disk; }
    Tier tier(uint32_t id) const { return homes_[id].slot >= 0 ? Tier::Slot : home(id); }
    ExpertView view(uint32_t id) const;

    size_t slot_count() const { return slot_owner_.size(); }
    size_t free_slots() const { return free_slots_.size(); }
    std::span<const uint32_t> residents() const { return residents_; }  // ids in slots, any order
    // Copies the expert from its home into a free slot (the expert must not be in one already).
    void admit(uint32_t id);
    // Frees the expert's slot; its home copy stays.
    void evict(uint32_t id);

    ExpertStats& stats() { return stats_; }
    const ExpertStats& stats() const { return stats_; }

private:
    struct Home {
        int32_t ram_index = -1;  // entry in the arena, or -1: read from the mapped file
        int32_t slot = -1;       // slot holding a copy, or -1
        int32_t resident_pos = -1;  // position in residents_ while in a slot (O(1) removal)
    };
    struct Offsets {
        uint64_t up = 0, down = 0;  // gate at 0; parts aligned as the planner aligns them
    };
    ExpertView packed_view(uint32_t id, const uint8_t* base) const;
    void copy_packed(uint32_t id, uint8_t* dst) const;  // gate|up|down from the file

    std::vector<ExpertLayerTensors> layers_;
    uint32_t n_expert_ = 0;
    std::vector<int32_t> moe_index_of_layer_;  // model layer → position in layers_, or -1
    std::unordered_map<const uint8_t*, uint32_t> layer_of_gate_;
    std::vector<ExpertBytes> layer_bytes_;  // by position in layers_
    std::vector<Offsets> layer_offsets_;
    uint64_t slot_bytes_ = 0;

    std::vector<Home> homes_;            // by id
    std::vector<uint32_t> residents_;
    std::vector<int64_t> slot_owner_;    // by slot: id, or -1 when free
    std::vector<int32_t> free_slots_;    // free list (LIFO: the slot freed last is reused first)
    std::unique_ptr<HostBuffer> slot_memory_, arena_;
    ExpertStats stats_;
};

}  // namespace strata
