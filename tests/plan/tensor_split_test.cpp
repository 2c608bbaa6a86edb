// The memory planner over several GPUs split by tensor (--split tensor): every GPU holds a part of
// every layer. Toy model numbers (toy_model.h) by hand: per layer the attention matrices (q 4096,
// k 2048, v 2048, o 4096 = 12288 bytes) are shared out, the norms and router (256 + 256 + 1024 =
// 1536) are on every GPU, the output head and norm (6400 + 256) on the first; KV 12800 per layer
// at context 100 shared out by heads; 4 experts per layer, half on each GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/layer_split.h"
#include "plan/planner.h"
#include "gguf/reader.h"
#include "plan/allocations.h"
#include "plan/tensor_split.h"
#include "support/testdata.h"
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

// The architectures whose blocks stay whole on the first GPU, from the reference fixtures: the
// expected bytes are summed here from the tensor names (the GGUF names of llama.cpp's qwen3next
// and deepseek2), independently of tensor_split_place's roles.
bool has(const std::string& name, const char* part) { return name.find(part) != std::string::npos; }

struct FixturePlan {
    ModelInventory inv;
    Plan plan;
};

FixturePlan plan_fixture(const std::string& name) {
    FixturePlan out;
    auto f = GgufFile::open(test::testdata_path("models/" + name + ".gguf"));
    if (!f) return out;
    out.inv = inventory_from_gguf(*f).value();
    PlanRequest req = tensor_request(1ull << 34);
    req.n_ctx = 64;
    out.plan = make_plan(out.inv, summarize_weights(out.inv).value(), req);
    return out;
}

TEST(TensorSplit, DeltaNetLayersAndSharedExpertsStayOnTheFirstGpu) {
    STRATA_SKIP_IF_MISSING(test::testdata_path("models/qwen3next.gguf"));
    const FixturePlan f = plan_fixture("qwen3next");
    ASSERT_TRUE(f.plan.fits) << f.plan.problems.front();
    ASSERT_EQ(f.plan.gpu_shares.size(), 2u);
    // First GPU only: output head and norm, shared experts, every tensor of a DeltaNet layer
    // but its norms and routers. Shared out: the full-attention layers' q/k/v/o.
    uint64_t first_only = 0, shared_out = 0;
    const ModelConfig& c = f.inv.config;
    for (const GgufTensorInfo& t : f.inv.tensors) {
        if (has(t.name, "_exps") || has(t.name, "token_embd")) continue;
        const bool layer = t.name.rfind("blk.", 0) == 0;
        const uint32_t il = layer ? static_cast<uint32_t>(std::stoul(t.name.substr(4))) : 0;
        const bool delta = layer && (il + 1) % c.full_attention_interval != 0;
        const bool norm_or_router = has(t.name, "norm") || has(t.name, "ffn_gate_inp.");
        if (!layer || has(t.name, "_shexp") || (delta && !norm_or_router)) first_only += t.n_bytes;
        else if (!delta && !norm_or_router && has(t.name, "attn_")) shared_out += t.n_bytes;
    }
    ASSERT_GT(shared_out, 0u);
    const GpuShare& a = f.plan.gpu_shares[0];
    const GpuShare& b = f.plan.gpu_shares[1];
    EXPECT_EQ(a.dense - b.dense, first_only);
    // KV rows of the attention layers by heads; every recurrent state on the first GPU.
    const ContextMemory ctx = context_memory(c, 64, KvCacheType::F16);
    ASSERT_GT(ctx.recurrent_bytes, 0u);
    EXPECT_EQ(b.context, ctx.kv_bytes / 2);
    EXPECT_EQ(a.context, ctx.kv_bytes / 2 + ctx.recurrent_bytes);
}

TEST(TensorSplit, LatentAttentionStaysOnTheFirstGpu) {
    STRATA_SKIP_IF_MISSING(test::testdata_path("models/deepseek3.gguf"));
    const FixturePlan f = plan_fixture("deepseek3");
    ASSERT_TRUE(f.plan.fits) << f.plan.problems.front();
    uint64_t first_only = 0;
    for (const GgufTensorInfo& t : f.inv.tensors) {
        const bool layer = t.name.rfind("blk.", 0) == 0;
        if (has(t.name, "_exps") || has(t.name, "token_embd") || (layer && has(t.name, "norm")) ||
            has(t.name, "ffn_gate_inp.") || has(t.name, "exp_probs_b")) {
            continue;
        }
        first_only += t.n_bytes;  // attention, the leading dense FFNs, shared experts, the head and its norm
    }
    const GpuShare& a = f.plan.gpu_shares[0];
    const GpuShare& b = f.plan.gpu_shares[1];
    EXPECT_EQ(a.dense - b.dense, first_only);
    EXPECT_EQ(a.context, context_memory(f.inv.config, 64, KvCacheType::F16).kv_bytes);
    EXPECT_EQ(b.context, 0u);
}

}  // namespace
}  // namespace strata
