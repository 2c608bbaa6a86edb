// The memory planner over several GPUs split by tensor (--split tensor): every GPU holds a part of
// every layer. Toy model numbers (toy_model.h) by hand: per layer the attention matrices (q 4096,
// k 2048, v 2048, o 4096 = 12288 bytes) are shared out, the norms and router (256 + 256 + 1024 =
// 1536) are on every GPU, the output head and norm (6400 + 256) on the first; KV 12800 per layer
// at context 100 shared out by heads; 4 experts per layer, half on each GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/layer_split.h"
#include "plan/planner.h"
#include "plan/tensor_split.h"
#include "toy_model.h"

namespace strata {
namespace {

PlanRequest tensor_request(uint64_t vram_each, size_t gpus = 2) {
    PlanRequest r;
    for (size_t i = 0; i < gpus; ++i) r.split_gpus.push_back(DeviceMemory{std::string(1, char('a' + i)), vram_each, vram_each});
    r.split_tensor = true;
    r.vram_reserve = 4096;
    r.ram_bytes = 1 << 20;
    r.ram_reserve = 1000;
    r.n_ctx = 100;
    r.n_batch = 8;
    return r;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(TensorSplit, ToyModelByHand) {
    const ModelInventory inv = test::toy_inventory();
    const ModelWeights w = summarize_weights(inv).value();
    const Plan p = make_plan(inv, w, tensor_request(1 << 20));
    ASSERT_TRUE(p.fits) << p.problems.front();
    ASSERT_EQ(p.gpu_shares.size(), 2u);
    const GpuShare& a = p.gpu_shares[0];
    const GpuShare& b = p.gpu_shares[1];
    EXPECT_EQ(a.dense, 2 * 1536u + 12288u + 6656u);  // the head on the first GPU
    EXPECT_EQ(b.dense, 2 * 1536u + 12288u);
    EXPECT_EQ(a.context, 12800u);  // 2 layers × 12800, half the KV heads each
    EXPECT_EQ(b.context, 12800u);
    EXPECT_GT(a.workspace.logits, 0u);
    EXPECT_EQ(b.workspace.logits, 0u);
    EXPECT_EQ(a.expert_count, 4u);  // experts 0-1 of both layers
    EXPECT_EQ(b.expert_count, 4u);
    EXPECT_EQ(a.expert_slots, 4u);
    EXPECT_EQ(b.expert_slots, 4u);
    EXPECT_EQ(a.layer_begin, 0u);
    EXPECT_EQ(b.layer_end, 2u);
    EXPECT_EQ(share_layers(b), "part 2 of 2 of every layer");
    EXPECT_TRUE(any_contains(p.explanation, "Split by tensor over 2 GPUs"));
    EXPECT_EQ(p.vram_expert_slots, w.expert_count);
}

TEST(TensorSplit, ExpertsThatDoNotFitAreAProblemNotACache) {
    const ModelInventory inv = test::toy_inventory();
    const ModelWeights w = summarize_weights(inv).value();
    // Room for the fixed part and one or two slots, not four: a layer split would cache; a
    // tensor split refuses.
    const GpuShare probe = make_plan(inv, w, tensor_request(1 << 20)).gpu_shares[0];
    const uint64_t vram = probe.fixed() + probe.reserve + 2 * w.expert_slot_bytes + 100;
    const Plan p = make_plan(inv, w, tensor_request(vram));
    EXPECT_FALSE(p.fits);
    EXPECT_TRUE(any_contains(p.problems, "--split tensor keeps every expert in VRAM, but GPU 0 (a) has room for 2 of its 4"))
        << (p.problems.empty() ? "" : p.problems.front());
}

TEST(TensorSplit, HeadsThatDoNotDivideAreAProblem) {
    const ModelInventory inv = test::toy_inventory();
    const ModelWeights w = summarize_weights(inv).value();
    const Plan p = make_plan(inv, w, tensor_request(1 << 20, 3));
    EXPECT_FALSE(p.fits);
    EXPECT_TRUE(any_contains(p.problems, "the model's 2 KV heads do not divide among them"));
}

}  // namespace
}  // namespace strata
