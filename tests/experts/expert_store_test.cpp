// The expert store's bookkeeping on a small synthetic model (F32 stacked tensors over a buffer the
// test owns): ids, bytes per expert, homes (arena or file), slot copies, the free list, residency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "experts/expert_store.h"
#include "support/testdata.h"

namespace strata {
namespace {

// Two MoE layers (model layers 1 and 3) of 4 experts, n_embd 8, n_ff 4, every float distinct so
// a copy of the wrong expert cannot pass.
class SyntheticExperts : public ::testing::Test {
protected:
    static constexpr int64_t kEmbd = 8, kFf = 4, kExperts = 4;
    void SetUp() override {
        const size_t per_tensor = static_cast<size_t>(kEmbd * kFf * kExperts);
        data_.resize(per_tensor * 6);
        for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<float>(i);
        auto tensor = [&](size_t which, int64_t n_in, int64_t n_out) {
            Weight w;
            w.data = reinterpret_cast<const uint8_t*>(data_.data() + which * per_tensor);
            w.type = TensorType::F32;
            w.ne[0] = n_in;
            w.ne[1] = n_out;
            w.ne[2] = kExperts;
            w.row_bytes = static_cast<uint64_t>(n_in) * sizeof(float);
            return w;
        };
        for (uint32_t i = 0; i < 2; ++i) {
            ExpertLayerTensors L;
            L.layer = 1 + 2 * i;
            L.gate = tensor(3 * i, kEmbd, kFf);
            L.up = tensor(3 * i + 1, kEmbd, kFf);
            L.down = tensor(3 * i + 2, kFf, kEmbd);
            layers_.push_back(L);
        }
    }
    std::vector<float> data_;
    std::vector<ExpertLayerTensors> layers_;
};

TEST_F(SyntheticExperts, IdsAreDenseAndRoundTrip) {
    ExpertStore store(layers_, {.slots = 2});
    EXPECT_EQ(store.key_count(), 8u);
    EXPECT_EQ(store.id({.layer = 1, .expert = 0}), 0u);
    EXPECT_EQ(store.id({.layer = 3, .expert = 2}), 6u);
    EXPECT_EQ(store.key(6), (ExpertKey{3, 2}));
    EXPECT_EQ(store.layer_of(layers_[1].gate.data), 3);
    EXPECT_EQ(store.layer_of(layers_[1].up.data), -1);
}

TEST_F(SyntheticExperts, BytesAndSlotSize) {
    ExpertStore store(layers_, {.slots = 1});
    const ExpertBytes b = store.bytes(5);
    EXPECT_EQ(b.gate, static_cast<uint64_t>(kEmbd * kFf * 4));  // 128 bytes each
    EXPECT_EQ(b.up, b.gate);
    EXPECT_EQ(b.down, b.gate);
    EXPECT_EQ(store.slot_bytes(), 3u * 256);  // each part padded to the planner's 256-byte alignment
}

// Homes: the first ram_experts ids live in the arena, the rest are read from the file; a view
// always shows the expert's own bytes, from whichever tier.
TEST_F(SyntheticExperts, ViewsShowTheExpertsBytesFromEveryTier) {
    ExpertStore store(layers_, {.slots = 2, .ram_experts = 3});
    auto expect_bytes_of = [&](uint32_t id) {
        const ExpertView v = store.view(id);
        const ExpertLayerTensors& L = layers_[id / 4];
        const int64_t ex = id % 4;
        EXPECT_EQ(std::memcmp(v.gate.matrix(v.index), L.gate.matrix(ex), store.bytes(id).gate), 0) << id;
        EXPECT_EQ(std::memcmp(v.up.matrix(v.index), L.up.matrix(ex), store.bytes(id).up), 0) << id;
        EXPECT_EQ(std::memcmp(v.down.matrix(v.index), L.down.matrix(ex), store.bytes(id).down), 0) << id;
    };
    EXPECT_EQ(store.tier(2), Tier::Ram);
    EXPECT_EQ(store.tier(3), Tier::Disk);
    EXPECT_EQ(store.view(3).index, 3);
    EXPECT_EQ(store.view(2).index, 0);  // the arena holds one matrix per entry
    EXPECT_NE(store.view(2).gate.data, layers_[0].gate.matrix(2));
    for (uint32_t id = 0; id < 8; ++id) expect_bytes_of(id);
    store.admit(2);  // from the arena
    store.admit(7);  // from the file
    EXPECT_EQ(store.tier(2), Tier::Slot);
    EXPECT_EQ(store.tier(7), Tier::Slot);
    EXPECT_NE(store.view(7).gate.data, layers_[1].gate.matrix(3));  // read from the slot's copy
    for (uint32_t id = 0; id < 8; ++id) expect_bytes_of(id);
    EXPECT_EQ(store.stats().tier(Tier::Ram).bytes_copied_out, 384u);  // the expert's bytes, not the padding
    EXPECT_EQ(store.stats().tier(Tier::Disk).bytes_copied_out, 384u);
    EXPECT_EQ(store.stats().bytes_copied_to_slots(), 768u);
}

// The free list hands out the slot freed last; eviction keeps the home copy and the resident
// list stays exact under swap-removal.
TEST_F(SyntheticExperts, SlotPoolReusesFreedSlots) {
    ExpertStore store(layers_, {.slots = 3});
    store.admit(0);
    store.admit(1);
    store.admit(2);
    EXPECT_EQ(store.free_slots(), 0u);
    const uint8_t* slot_of_1 = store.view(1).gate.data;
    store.evict(1);
    EXPECT_EQ(store.tier(1), Tier::Disk);
    EXPECT_EQ(store.residents().size(), 2u);
    store.admit(6);
    EXPECT_EQ(store.view(6).gate.data, slot_of_1);
    std::vector<uint32_t> r(store.residents().begin(), store.residents().end());
    std::sort(r.begin(), r.end());
    EXPECT_EQ(r, (std::vector<uint32_t>{0, 2, 6}));
    store.evict(0);
    store.evict(6);
    EXPECT_EQ(std::vector<uint32_t>(store.residents().begin(), store.residents().end()), std::vector<uint32_t>{2});
    EXPECT_EQ(store.stats().admissions, 4u);
    EXPECT_EQ(store.stats().evictions, 3u);
}

// The fixture's tensors are found by name, with the expert bytes the file holds.
TEST(ExpertTensors, FoundInTheFixture) {
    const std::string path = test::testdata_path("models/qwen3moe.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto layers = expert_tensors_from_gguf(*file);
    ASSERT_TRUE(layers) << layers.status().message();
    ASSERT_FALSE(layers->empty());
    const ExpertLayerTensors& L = layers->front();
    ExpertStore store(*layers, {.slots = 1});
    EXPECT_EQ(store.bytes(0).gate * static_cast<uint64_t>(L.gate.ne[2]), file->tensor(L.gate.info->name)->n_bytes);
}

// The store sizes its tiers from the memory plan, and its slots are the plan's slots, byte for
// byte: a plan that says N slots fit in VRAM must be what the store allocates.
TEST(ExpertTensors, StoreFollowsThePlan) {
    const std::string path = test::testdata_path("models/mixtral.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto inventory = inventory_from_gguf(*file);
    ASSERT_TRUE(inventory) << inventory.status().message();
    auto weights = summarize_weights(*inventory);
    ASSERT_TRUE(weights) << weights.status().message();
    auto layers = expert_tensors_from_gguf(*file);
    ASSERT_TRUE(layers);
    // A budget of dense + context + 3 slots' worth would be fiddly to hand-build; a plan's numbers
    // are what the store must honour, so set them directly as the planner would.
    Plan plan;
    plan.expert_slot_bytes = weights->expert_slot_bytes;
    plan.vram_expert_slots = 3;
    plan.ram_arena_experts = 5;
    ExpertStore store(*layers, store_options_from_plan(plan));
    EXPECT_EQ(store.slot_bytes(), plan.expert_slot_bytes);
    EXPECT_EQ(store.slot_count(), 3u);
    EXPECT_EQ(store.tier(4), Tier::Ram);
    EXPECT_EQ(store.tier(5), Tier::Disk);
}

TEST(ExpertTensors, DenseModelIsRefused) {
    const std::string path = test::testdata_path("models/qwen3.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto layers = expert_tensors_from_gguf(*file);
    ASSERT_FALSE(layers);
    EXPECT_NE(layers.status().message().find("not a MoE model"), std::string::npos);
}

}  // namespace
}  // namespace strata
