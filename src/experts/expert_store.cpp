#include "experts/expert_store.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "core/check.h"
#include "plan/model_bytes.h"

namespace strata {
namespace {

// Each matrix of a slot or arena entry starts at the planner's part alignment, so a slot here is
// exactly the plan's expert_slot_bytes and the slot count the plan promised fits its VRAM share.
constexpr uint64_t kMatrixAlign = kExpertPartAlignment;
uint64_t align_up(uint64_t n) { return (n + kMatrixAlign - 1) / kMatrixAlign * kMatrixAlign; }

uint64_t matrix_bytes(const Weight& w) { return static_cast<uint64_t>(w.ne[1]) * w.row_bytes; }

// The same tensor seen as a single matrix at `data` (a copy of one expert).
Weight single_matrix(const Weight& stacked, const uint8_t* data) {
    Weight w = stacked;
    w.data = data;
    w.ne[2] = 1;
    w.ne[3] = 1;
    return w;
}

AlignedHostAllocator& default_allocator() {
    static AlignedHostAllocator host;  // stateless: sharing it keeps no per-model state
    return host;
}

}  // namespace

Result<std::vector<ExpertLayerTensors>> expert_tensors_from_gguf(const GgufFile& file) {
    // blk.N.ffn_gate_exps.weight names a MoE layer; its up and down tensors must exist beside it.
    std::map<uint32_t, ExpertLayerTensors> by_layer;
    WeightLoader load(file);
    const std::string suffix = ".ffn_gate_exps.weight";
    for (const GgufTensorInfo& t : file.tensors()) {
        if (t.name.rfind("blk.", 0) != 0 || t.name.size() <= suffix.size() ||
            t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        const std::string number = t.name.substr(4, t.name.size() - 4 - suffix.size());
        if (number.empty() || !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
            continue;
        const uint32_t il = static_cast<uint32_t>(std::stoul(number));
        const int64_t e = static_cast<int64_t>(t.ne[0]), ff = static_cast<int64_t>(t.ne[1]),
                      n_exp = static_cast<int64_t>(t.ne[2]);
        const std::string b = "blk." + number;
        ExpertLayerTensors& L = by_layer[il];
        L.layer = il;
        L.gate = load.require(b + ".ffn_gate_exps.weight", {e, ff, n_exp});
        L.up = load.require(b + ".ffn_up_exps.weight", {e, ff, n_exp});
        L.down = load.require(b + ".ffn_down_exps.weight", {ff, e, n_exp});
        L.gate_bias = load.optional_f32(b + ".ffn_gate_exps.bias", {ff, n_exp});
        L.up_bias = load.optional_f32(b + ".ffn_up_exps.bias", {ff, n_exp});
        L.down_bias = load.optional_f32(b + ".ffn_down_exps.bias", {e, n_exp});
    }
    STRATA_TRY(load.status());
    if (by_layer.empty())
        return Status::error("expert store: {} has no ffn_gate_exps tensors — it is not a MoE model", file.path());
    std::vector<ExpertLayerTensors> out;
    for (auto& [il, L] : by_layer) out.push_back(L);
    return out;
}

ExpertStore::ExpertStore(std::vector<ExpertLayerTensors> layers, const ExpertStoreOptions& options)
    : layers_(std::move(layers)) {
    STRATA_CHECK(!layers_.empty(), "expert store without MoE layers");
    n_expert_ = static_cast<uint32_t>(layers_[0].gate.ne[2]);
    uint32_t max_layer = 0;
    for (const ExpertLayerTensors& L : layers_) {
        STRATA_CHECK(L.gate.ne[2] == n_expert_ && L.up.ne[2] == n_expert_ && L.down.ne[2] == n_expert_,
                     "every MoE layer must stack the same number of experts");
        max_layer = std::max(max_layer, L.layer);
    }
    moe_index_of_layer_.assign(max_layer + 1, -1);
    for (size_t i = 0; i < layers_.size(); ++i) {
        const ExpertLayerTensors& L = layers_[i];
        STRATA_CHECK(moe_index_of_layer_[L.layer] < 0, "a layer is listed twice");
        moe_index_of_layer_[L.layer] = static_cast<int32_t>(i);
        layer_of_gate_[L.gate.data] = L.layer;
        const ExpertBytes b{matrix_bytes(L.gate), matrix_bytes(L.up), matrix_bytes(L.down)};
        layer_bytes_.push_back(b);
        const Offsets o{align_up(b.gate), align_up(b.gate) + align_up(b.up)};
        layer_offsets_.push_back(o);
        slot_bytes_ = std::max(slot_bytes_, o.down + align_up(b.down));
    }
    stats_.layers.resize(max_layer + 1);

    const size_t n_keys = layers_.size() * n_expert_;
    homes_.resize(n_keys);
    HostAllocator& slot_alloc = options.slot_memory ? *options.slot_memory : default_allocator();
    HostAllocator& ram_alloc = options.ram_memory ? *options.ram_memory : default_allocator();
    slot_owner_.assign(options.slots, -1);
    if (options.slots > 0) slot_memory_ = slot_alloc.allocate(options.slots * slot_bytes_);
    // Slot 0 is handed out first (the list is popped from the back).
    for (size_t s = options.slots; s-- > 0;) free_slots_.push_back(static_cast<int32_t>(s));

    // The arena holds the first ram_experts ids (layer-major). A routing profile will choose
    // them instead once `strata profile` exists; which experts live in RAM changes speed only.
    const size_t in_ram = std::min(options.ram_experts, n_keys);
    if (in_ram > 0) {
        arena_ = ram_alloc.allocate(in_ram * slot_bytes_);
        for (size_t id = 0; id < in_ram; ++id) {
            homes_[id].ram_index = static_cast<int32_t>(id);
            copy_packed(static_cast<uint32_t>(id), arena_->data() + id * slot_bytes_);
        }
    }
}

ExpertStoreOptions store_options_from_plan(const Plan& plan) {
    ExpertStoreOptions o;
    o.slots = static_cast<size_t>(plan.vram_expert_slots);
    o.ram_experts = static_cast<size_t>(plan.ram_arena_experts);
    return o;
}

uint32_t ExpertStore::id(ExpertKey k) const {
    STRATA_CHECK(k.layer < moe_index_of_layer_.size() && moe_index_of_layer_[k.layer] >= 0, "expert key of a non-MoE layer");
    STRATA_CHECK(k.expert < n_expert_, "expert index out of range");
    return static_cast<uint32_t>(moe_index_of_layer_[k.layer]) * n_expert_ + k.expert;
}

ExpertKey ExpertStore::key(uint32_t id) const {
    STRATA_CHECK(id < key_count(), "expert id out of range");
    return ExpertKey{layers_[id / n_expert_].layer, id % n_expert_};
}

int64_t ExpertStore::layer_of(const uint8_t* gate_data) const {
    auto it = layer_of_gate_.find(gate_data);
    return it == layer_of_gate_.end() ? -1 : static_cast<int64_t>(it->second);
}

ExpertView ExpertStore::packed_view(uint32_t id, const uint8_t* base) const {
    const ExpertLayerTensors& L = layers_[id / n_expert_];
    const Offsets& o = layer_offsets_[id / n_expert_];
    return ExpertView{single_matrix(L.gate, base), single_matrix(L.up, base + o.up), single_matrix(L.down, base + o.down),
                      0, Tier::Slot};
}

void ExpertStore::copy_packed(uint32_t id, uint8_t* dst) const {
    const ExpertLayerTensors& L = layers_[id / n_expert_];
    const ExpertBytes& b = layer_bytes_[id / n_expert_];
    const Offsets& o = layer_offsets_[id / n_expert_];
    const int64_t ex = id % n_expert_;
    std::memcpy(dst, L.gate.matrix(ex), b.gate);
    std::memcpy(dst + o.up, L.up.matrix(ex), b.up);
    std::memcpy(dst + o.down, L.down.matrix(ex), b.down);
}

ExpertView ExpertStore::view(uint32_t id) const {
    STRATA_CHECK(id < key_count(), "expert id out of range");
    const Home& h = homes_[id];
    if (h.slot >= 0) return packed_view(id, slot_memory_->data() + static_cast<uint64_t>(h.slot) * slot_bytes_);
    if (h.ram_index >= 0) {
        ExpertView v = packed_view(id, arena_->data() + static_cast<uint64_t>(h.ram_index) * slot_bytes_);
        v.tier = Tier::Ram;
        return v;
    }
    const ExpertLayerTensors& L = layers_[id / n_expert_];
    return ExpertView{L.gate, L.up, L.down, static_cast<int64_t>(id % n_expert_), Tier::Disk};
}

void ExpertStore::admit(uint32_t id) {
    STRATA_CHECK(id < key_count(), "expert id out of range");
    Home& h = homes_[id];
    STRATA_CHECK(h.slot < 0, "admitting an expert that already has a slot");
    STRATA_CHECK(!free_slots_.empty(), "admitting with no free slot: evict first");
    const int32_t slot = free_slots_.back();
    free_slots_.pop_back();
    uint8_t* dst = slot_memory_->data() + static_cast<uint64_t>(slot) * slot_bytes_;
    if (h.ram_index >= 0) std::memcpy(dst, arena_->data() + static_cast<uint64_t>(h.ram_index) * slot_bytes_, slot_bytes_);
    else copy_packed(id, dst);
    h.slot = slot;
    h.resident_pos = static_cast<int32_t>(residents_.size());
    residents_.push_back(id);
    slot_owner_[static_cast<size_t>(slot)] = id;
    ++stats_.admissions;
    stats_.tier(home(id)).bytes_copied_out += bytes(id).total();
}

void ExpertStore::evict(uint32_t id) {
    STRATA_CHECK(id < key_count(), "expert id out of range");
    Home& h = homes_[id];
    STRATA_CHECK(h.slot >= 0, "evicting an expert without a slot");
    // Swap-remove from the resident list, keeping the moved id's position current.
    const uint32_t last = residents_.back();
    residents_[static_cast<size_t>(h.resident_pos)] = last;
    homes_[last].resident_pos = h.resident_pos;
    residents_.pop_back();
    slot_owner_[static_cast<size_t>(h.slot)] = -1;
    free_slots_.push_back(h.slot);
    h.slot = -1;
    h.resident_pos = -1;
    ++stats_.evictions;
}

}  // namespace strata
