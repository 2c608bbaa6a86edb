// The memory planner over several GPUs split by layers (--split layer): which layers each GPU
// takes, what each GPU's VRAM holds, the problems a split can have, and how plans show it.
// Numbers of the toy model are in toy_model.h and planner_test.cpp; those of the benchmark model
// (synth-qwen3-30b-a3b) in models_test.cpp: per layer 11953152 dense bytes, 128 experts in slots
// of 3059712, KV 8388608 at context 4096 (f16); output head and norm 53768192.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "plan/layer_split.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "plan/units.h"
#include "synth_inventory.h"
#include "toy_model.h"

namespace strata {
namespace {

constexpr uint64_t kLayerDense = 11953152, kHead = 53768192, kLayerKv = 8388608, kSlot = 3059712;

struct Model {
    ModelInventory inventory;
    ModelWeights weights;
};

const Model& synth_30b() {
    static const Model model = [] {
        SynthSpec spec = synth_preset("qwen3-30b-a3b").value();
        spec.n_vocab = 32000;  // as models_test.cpp: the benchmark file's vocabulary
        Model m{test::synth_inventory(spec), {}};
        m.weights = summarize_weights(m.inventory).value();
        return m;
    }();
    return model;
}

PlanRequest split_request(std::vector<uint64_t> vram) {
    PlanRequest r;
    for (size_t i = 0; i < vram.size(); ++i) {
        r.split_gpus.push_back(DeviceMemory{"card " + std::to_string(i), vram[i], vram[i]});
    }
    r.ram_bytes = 64 * kGiB;
    return r;
}

Plan plan_30b(const PlanRequest& r) { return make_plan(synth_30b().inventory, synth_30b().weights, r); }

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

uint32_t layers_of(const GpuShare& s) { return s.layer_end - s.layer_begin; }

// The vram_* fields of a split plan are the sums over its GPUs.
void expect_sums(const Plan& p) {
    GpuShare sum;
    for (const GpuShare& s : p.gpu_shares) {
        sum.capacity += s.capacity;
        sum.dense += s.dense;
        sum.context += s.context;
        sum.workspace.activations += s.workspace.activations;
        sum.workspace.attention += s.workspace.attention;
        sum.workspace.ffn += s.workspace.ffn;
        sum.workspace.logits += s.workspace.logits;
        sum.workspace.expert_staging += s.workspace.expert_staging;
        sum.reserve += s.reserve;
        sum.expert_count += s.expert_count;
        sum.expert_slots += s.expert_slots;
        sum.unused += s.unused;
        sum.shortfall += s.shortfall;
    }
    EXPECT_EQ(p.vram_capacity, sum.capacity);
    EXPECT_EQ(p.vram_dense, sum.dense);
    EXPECT_EQ(p.vram_context, sum.context);
    EXPECT_EQ(p.vram_workspace.activations, sum.workspace.activations);
    EXPECT_EQ(p.vram_workspace.attention, sum.workspace.attention);
    EXPECT_EQ(p.vram_workspace.ffn, sum.workspace.ffn);
    EXPECT_EQ(p.vram_workspace.logits, sum.workspace.logits);
    EXPECT_EQ(p.vram_workspace.expert_staging, sum.workspace.expert_staging);
    EXPECT_EQ(p.vram_reserve, sum.reserve);
    EXPECT_EQ(p.vram_expert_slots, sum.expert_slots);
    EXPECT_EQ(p.vram_unused, sum.unused);
    EXPECT_EQ(p.vram_shortfall, sum.shortfall);
    // Every layer on exactly one GPU, in order; every dense VRAM byte and every expert counted once.
    uint32_t next = 0;
    for (const GpuShare& s : p.gpu_shares) {
        EXPECT_EQ(s.layer_begin, next);
        next = s.layer_end;
    }
    EXPECT_EQ(next, synth_30b().inventory.config.n_layer);
    EXPECT_EQ(sum.dense, p.weights.dense_vram_bytes());
    EXPECT_EQ(sum.context, p.context.total());
    EXPECT_EQ(sum.expert_count, p.weights.expert_count);
}

TEST(SplitPoints, ProportionalToRoomWithAtLeastOneLayerEach) {
    const std::vector<uint64_t> uniform(48, 1);
    EXPECT_EQ(split_points(uniform, {1, 1}), (std::vector<uint32_t>{24}));
    EXPECT_EQ(split_points(uniform, {2, 1}), (std::vector<uint32_t>{32}));
    EXPECT_EQ(split_points(uniform, {1, 1, 1, 1}), (std::vector<uint32_t>{12, 24, 36}));
    // A costly first layer: its midpoint (5 of 14) falls in the first GPU's half, the rest follow.
    EXPECT_EQ(split_points({10, 1, 1, 1, 1}, {1, 1}), (std::vector<uint32_t>{1}));
    // A GPU with (almost) no room still gets one layer while there are enough.
    EXPECT_EQ(split_points(std::vector<uint64_t>(10, 1), {1000, 1}), (std::vector<uint32_t>{9}));
    EXPECT_EQ(split_points({1, 1, 1}, {0, 0, 5}), (std::vector<uint32_t>{1, 2}));
    // No room anywhere: equal shares of the layers.
    EXPECT_EQ(split_points(std::vector<uint64_t>(6, 1), {0, 0}), (std::vector<uint32_t>{3}));
    // More GPUs than layers: one each to the first, none to the rest.
    EXPECT_EQ(split_points({1, 1}, {1, 1, 1}), (std::vector<uint32_t>{1, 2}));
}

TEST(LayerContext, ARangeCountsItsOwnLayersAndKeepsTheHybridPattern) {
    ModelConfig cfg = test::toy_config();
    cfg.n_layer = 8;
    cfg.full_attention_interval = 4;  // layers 3 and 7 attend, the others are DeltaNet layers
    cfg.ssm_conv_kernel = 4;
    cfg.ssm_d_state = 16;
    cfg.ssm_n_group = 2;
    cfg.ssm_dt_rank = 4;
    cfg.ssm_d_inner = 64;
    const ContextMemory all = context_memory(cfg, 100, KvCacheType::F16);
    const ContextMemory first = context_memory(cfg, 100, KvCacheType::F16, 0, 3);
    const ContextMemory rest = context_memory(cfg, 100, KvCacheType::F16, 3, 8);
    EXPECT_EQ(first.attention_layers, 0u);
    EXPECT_EQ(first.recurrent_layers, 3u);
    EXPECT_EQ(rest.attention_layers, 2u);
    EXPECT_EQ(rest.recurrent_layers, 3u);
    EXPECT_EQ(first.total() + rest.total(), all.total());
    EXPECT_EQ(context_memory(cfg, 100, KvCacheType::F16, 0, 100).total(), all.total());  // clipped to n_layer
}

TEST(LayerSplit, ToyModelOneLayerEachByHand) {
    // Layer 0: dense 13824, KV 12800, workspace 61936 (the logits come back to the first GPU:
    // 8 · 100 · 4, and the sampling buffers beside them, 2032). Layer 1 and the head: 13824 + 6400
    // + 256 = 20480, KV 12800, workspace 61936. 4 experts each.
    ModelInventory inv = test::toy_inventory();
    ModelWeights w = summarize_weights(inv).value();
    PlanRequest r;
    r.split_gpus = {DeviceMemory{"a", 1 << 20, 1 << 20}, DeviceMemory{"b", 1 << 20, 1 << 20}};
    r.vram_reserve = 4096;
    r.ram_bytes = 1 << 20;
    r.ram_reserve = 1000;
    r.n_ctx = 100;
    r.n_batch = 8;
    Plan p = make_plan(inv, w, r);
    ASSERT_TRUE(p.fits) << p.problems.front();
    ASSERT_EQ(p.gpu_shares.size(), 2u);
    const GpuShare& a = p.gpu_shares[0];
    const GpuShare& b = p.gpu_shares[1];
    EXPECT_EQ(a.layer_begin, 0u);
    EXPECT_EQ(a.layer_end, 1u);
    EXPECT_EQ(b.layer_end, 2u);
    EXPECT_EQ(a.dense, 13824u);
    EXPECT_EQ(b.dense, 20480u);
    EXPECT_EQ(a.context, 12800u);
    EXPECT_EQ(b.context, 12800u);
    EXPECT_EQ(a.workspace.logits, 5232u);
    EXPECT_EQ(a.workspace.total(), 61936u);
    EXPECT_EQ(b.workspace.total(), 61936u);
    EXPECT_EQ(a.expert_slots, 4u);
    EXPECT_EQ(b.expert_slots, 4u);
    EXPECT_EQ(a.unused, (1u << 20) - 13824u - 12800u - 61936u - 4096u - 4 * 3072u);
    EXPECT_TRUE(p.has_gpu);
    EXPECT_EQ(p.vram_dense, 34304u);  // the one-GPU plan's dense VRAM
    EXPECT_EQ(p.ram_dense, 6400u);    // the embedding stays in RAM
    EXPECT_EQ(p.ram_arena_experts, 0u);
    EXPECT_TRUE(any_contains(p.explanation, "GPU 1 (b, layer 1): may use"));
}

TEST(LayerSplit, ATiedEmbeddingIsTheOutputHeadOnTheLastGpu) {
    // Without output.weight the 6400-byte embedding table is the LM head: VRAM of the last GPU.
    ModelInventory inv = test::toy_inventory();
    std::erase_if(inv.tensors, [](const GgufTensorInfo& t) { return t.name == "output.weight"; });
    ModelWeights w = summarize_weights(inv).value();
    ASSERT_TRUE(w.embedding_is_output);
    PlanRequest r;
    r.split_gpus = {DeviceMemory{"a", 1 << 20, 1 << 20}, DeviceMemory{"b", 1 << 20, 1 << 20}};
    r.ram_bytes = 1 << 20;
    r.n_ctx = 100;
    r.n_batch = 8;
    Plan p = make_plan(inv, w, r);
    ASSERT_EQ(p.gpu_shares.size(), 2u);
    EXPECT_EQ(p.gpu_shares[0].dense, 13824u);
    EXPECT_EQ(p.gpu_shares[1].dense, 13824u + 256u + 6400u);
    EXPECT_EQ(p.ram_dense, 0u);
}

TEST(LayerSplit, OneGpuIsNotASplit) {
    ModelInventory inv = test::toy_inventory();
    ModelWeights w = summarize_weights(inv).value();
    PlanRequest one;
    one.gpu = DeviceMemory{"toy GPU", 148032, 148032};
    one.vram_reserve = 4096;
    one.ram_bytes = 28156;
    one.ram_reserve = 1000;
    one.n_ctx = 100;
    one.n_batch = 8;
    Plan p = make_plan(inv, w, one);
    EXPECT_TRUE(p.gpu_shares.empty());
    EXPECT_EQ(p.vram_expert_slots, 3u);  // planner_test.cpp's partial cache
    // A "split" over one GPU is that GPU.
    PlanRequest listed = one;
    listed.gpu.reset();
    listed.split_gpus = {*one.gpu};
    Plan q = make_plan(inv, w, listed);
    EXPECT_TRUE(q.gpu_shares.empty());
    EXPECT_EQ(q.vram_expert_slots, 3u);
    EXPECT_EQ(q.explanation, p.explanation);
}

TEST(LayerSplit, TwoEqualGpusTakeHalfTheLayersEach) {
    Plan p = plan_30b(split_request({24 * kGiB, 24 * kGiB}));
    ASSERT_TRUE(p.fits) << p.problems.front();
    ASSERT_EQ(p.gpu_shares.size(), 2u);
    PlanRequest single = split_request({});
    single.gpu = DeviceMemory{"one", 48 * kGiB, 48 * kGiB};
    Plan one = plan_30b(single);
    const GpuShare& a = p.gpu_shares[0];
    const GpuShare& b = p.gpu_shares[1];
    EXPECT_EQ(layers_of(a), 24u);
    EXPECT_EQ(layers_of(b), 24u);
    // Half of the one-GPU plan's dense weights and KV cache each; the head on the last.
    EXPECT_EQ(a.dense, 24 * kLayerDense);
    EXPECT_EQ(b.dense, 24 * kLayerDense + kHead);
    EXPECT_EQ(a.dense + b.dense, one.vram_dense);
    EXPECT_EQ(a.context, 24 * kLayerKv);
    EXPECT_EQ(a.context, one.vram_context / 2);
    // Everything resident: no copy buffers; logits where the output head computes them and on the
    // first GPU, where they are copied back.
    EXPECT_EQ(a.expert_slots, 24u * 128);
    EXPECT_EQ(b.expert_slots, 24u * 128);
    EXPECT_EQ(a.workspace.expert_staging + b.workspace.expert_staging, 0u);
    EXPECT_EQ(a.workspace.logits, one.vram_workspace.logits);
    EXPECT_EQ(b.workspace.logits, one.vram_workspace.logits);
    EXPECT_EQ(b.workspace.total(), one.vram_workspace.total());
    expect_sums(p);
    EXPECT_EQ(p.ram_arena_experts + p.disk_experts, 0u);
}

TEST(LayerSplit, UnequalGpusTakeLayersInProportionToTheirRoom) {
    Plan p = plan_30b(split_request({24 * kGiB, 12 * kGiB}));
    ASSERT_TRUE(p.fits) << p.problems.front();
    const GpuShare& a = p.gpu_shares[0];
    const GpuShare& b = p.gpu_shares[1];
    // Room: capacity less reserve, workspaces and (on the last) the head; every expert is resident,
    // so the workspaces have no copy buffers and the split follows the room within one layer.
    const double room_a = static_cast<double>(a.capacity - a.reserve - a.workspace.total());
    const double room_b = static_cast<double>(b.capacity - b.reserve - b.workspace.total() - kHead);
    const double expected = 48.0 * room_a / (room_a + room_b);
    EXPECT_NEAR(static_cast<double>(layers_of(a)), expected, 1.0);
    EXPECT_EQ(layers_of(a), 32u);  // about two thirds
    EXPECT_EQ(a.expert_slots, a.expert_count);
    EXPECT_EQ(b.expert_slots, b.expert_count);
    expect_sums(p);
}

TEST(LayerSplit, ExplicitSplitPointsAreHonoured) {
    PlanRequest r = split_request({24 * kGiB, 24 * kGiB});
    r.split_at = {10};
    Plan p = plan_30b(r);
    ASSERT_TRUE(p.fits) << p.problems.front();
    EXPECT_EQ(p.gpu_shares[0].layer_end, 10u);
    EXPECT_EQ(p.gpu_shares[1].layer_begin, 10u);
    EXPECT_EQ(p.gpu_shares[0].dense, 10 * kLayerDense);
    EXPECT_EQ(p.gpu_shares[0].expert_count, 10u * 128);
    expect_sums(p);

    PlanRequest three = split_request({16 * kGiB, 16 * kGiB, 16 * kGiB});
    three.split_at = {16, 32};
    Plan q = plan_30b(three);
    ASSERT_TRUE(q.fits) << q.problems.front();
    ASSERT_EQ(q.gpu_shares.size(), 3u);
    EXPECT_EQ(q.gpu_shares[1].layer_begin, 16u);
    EXPECT_EQ(q.gpu_shares[2].layer_begin, 32u);
    EXPECT_TRUE(any_contains(q.explanation, "GPU 2 (card 2, layers 32–47): may use"));
    expect_sums(q);
}

TEST(LayerSplit, MalformedSplitPointsAreAProblemNamingTheExpectedForm) {
    struct Case {
        std::vector<uint64_t> vram;
        std::vector<uint32_t> at;
        std::string says;
    };
    for (const Case& c : {Case{{24 * kGiB, 24 * kGiB}, {10, 40}, "--split-at 10,40: expected 1 value(s) for 2 GPUs"},
                          Case{{24 * kGiB, 24 * kGiB}, {0}, "--split-at 0: expected 1 value(s)"},
                          Case{{24 * kGiB, 24 * kGiB}, {48}, "(1 to 47)"},
                          Case{{16 * kGiB, 16 * kGiB, 16 * kGiB}, {30, 20}, "strictly increasing"}}) {
        PlanRequest r = split_request(c.vram);
        r.split_at = c.at;
        Plan p = plan_30b(r);
        SCOPED_TRACE(c.says);
        EXPECT_FALSE(p.fits);
        EXPECT_TRUE(any_contains(p.problems, c.says));
        // The plan shown splits by capacity, and the suggestions say where.
        EXPECT_EQ(p.gpu_shares.size(), c.vram.size());
        EXPECT_TRUE(any_contains(p.suggestions, "--split-at "));
    }
}

TEST(LayerSplit, ExpertsThatDoNotFitAreCachedPerGpuWithCopyBuffers) {
    // 2 × 8 GiB against 17.5 GiB of experts: each GPU reserves copy buffers, then caches what it can.
    Plan p = plan_30b(split_request({8 * kGiB, 8 * kGiB}));
    ASSERT_TRUE(p.fits) << p.problems.front();
    for (const GpuShare& s : p.gpu_shares) {
        EXPECT_EQ(s.workspace.expert_staging, 2 * 32 * kSlot);
        EXPECT_LT(s.expert_slots, s.expert_count);
        EXPECT_EQ(s.expert_slots, (s.capacity - s.fixed() - s.reserve) / kSlot);
        EXPECT_EQ(s.fixed() + s.reserve + s.expert_slots * kSlot + s.unused, s.capacity);
    }
    expect_sums(p);
    // One GPU of the summed size, less what the split holds twice (the first GPU's reserve and
    // workspaces, copy buffers included), caches as many experts but for the rounding on each GPU.
    const GpuShare& a = p.gpu_shares[0];
    PlanRequest single = split_request({});
    const uint64_t size = 16 * kGiB - a.reserve - a.workspace.total();
    single.gpu = DeviceMemory{"one", size, size};
    Plan one = plan_30b(single);
    EXPECT_LE(std::llabs(static_cast<long long>(p.vram_expert_slots) - static_cast<long long>(one.vram_expert_slots)), 2);
    // The RAM arena of a 64 GiB machine holds every other expert.
    EXPECT_EQ(p.ram_arena_experts, p.weights.expert_count - p.vram_expert_slots);
    EXPECT_EQ(p.disk_experts, 0u);
    EXPECT_TRUE(any_contains(p.explanation, "The expert caches together"));
}

TEST(LayerSplit, CopyBuffersOnlyWhereTheExpertsDoNotFit) {
    // Layers 0–7 (8 · 128 experts, 2.92 GiB) all fit the 24 GiB card; layers 8–47 do not fit 8 GiB.
    PlanRequest r = split_request({24 * kGiB, 8 * kGiB});
    r.split_at = {8};
    Plan p = plan_30b(r);
    ASSERT_TRUE(p.fits) << p.problems.front();
    EXPECT_EQ(p.gpu_shares[0].expert_slots, 8u * 128);
    EXPECT_EQ(p.gpu_shares[0].workspace.expert_staging, 0u);
    EXPECT_GT(p.gpu_shares[1].workspace.expert_staging, 0u);
    EXPECT_LT(p.gpu_shares[1].expert_slots, p.gpu_shares[1].expert_count);
    expect_sums(p);
}

TEST(LayerSplit, AGpuTooSmallForItsLayersIsNamedInItsOwnProblem) {
    // 24 layers of dense weights (274 MiB) do not fit a 256 MiB card.
    PlanRequest r = split_request({24 * kGiB, 256 * kMiB});
    r.split_gpus[1].name = "small card";
    r.vram_reserve = 64 * kMiB;
    r.split_at = {24};
    Plan p = plan_30b(r);
    ASSERT_FALSE(p.fits);
    EXPECT_EQ(p.gpu_shares[0].shortfall, 0u);
    EXPECT_GT(p.gpu_shares[1].shortfall, 0u);
    ASSERT_EQ(p.problems.size(), 1u);
    EXPECT_EQ(p.problems[0].rfind("GPU 1 (small card, layers 24–47): ", 0), 0u) << p.problems[0];
    EXPECT_TRUE(any_contains(p.problems, format_bytes(p.gpu_shares[1].shortfall) + " short"));
    EXPECT_TRUE(any_contains(p.suggestions, "a larger GPU or budget for GPU 1 (small card, layers 24–47)"));
    expect_sums(p);
}

TEST(LayerSplit, SuggestionsOfASplitFitWhenApplied) {
    // Layer 0 alone on the 24 GiB card leaves 47 layers to a 1 GiB one: by capacity it takes one.
    PlanRequest r = split_request({24 * kGiB, 1 * kGiB});
    r.split_at = {1};
    Plan p = plan_30b(r);
    ASSERT_FALSE(p.fits);
    PlanRequest by_capacity = r;
    by_capacity.split_at.clear();
    Plan q = plan_30b(by_capacity);
    ASSERT_TRUE(q.fits) << q.problems.front();
    EXPECT_TRUE(any_contains(p.suggestions, "--split-at " + std::to_string(q.gpu_shares[1].layer_begin) + ":"));
    // "--vram 0" drops every GPU of the split, and with 64 GiB of RAM the CPU carries the model.
    EXPECT_TRUE(any_contains(p.suggestions, "--vram 0"));
    PlanRequest cpu = r;
    cpu.split_gpus.clear();
    cpu.split_at.clear();
    EXPECT_TRUE(plan_30b(cpu).fits);
}

TEST(LayerSplit, AGpuWithoutRoomIsAProblem) {
    PlanRequest r = split_request({24 * kGiB, 400 * kMiB});  // less than the 512 MiB reserve
    Plan p = plan_30b(r);
    ASSERT_FALSE(p.fits);
    EXPECT_TRUE(any_contains(p.problems, "GPU 1 (card 1): its 400.00 MiB leaves no room for layers"));
    EXPECT_TRUE(any_contains(p.problems, "drop it from the split"));
    EXPECT_EQ(layers_of(p.gpu_shares[1]), 1u);  // it still takes one layer, and is short
}

TEST(LayerSplit, MoreGpusThanLayersIsAProblem) {
    ModelInventory inv = test::toy_inventory();  // 2 layers
    PlanRequest r;
    r.split_gpus.assign(3, DeviceMemory{"", 1 << 20, 1 << 20});
    r.ram_bytes = 1 << 20;
    r.n_ctx = 100;
    r.n_batch = 8;
    Plan p = make_plan(inv, summarize_weights(inv).value(), r);
    ASSERT_FALSE(p.fits);
    EXPECT_TRUE(any_contains(p.problems, "3 GPUs for a model of 2 layers"));
    ASSERT_EQ(p.gpu_shares.size(), 3u);
    EXPECT_EQ(layers_of(p.gpu_shares[2]), 0u);
    EXPECT_TRUE(any_contains(p.explanation, "GPU 2 (no layers)"));
}

TEST(LayerSplitRender, ABarAndAJsonEntryPerGpu) {
    Plan p = plan_30b(split_request({24 * kGiB, 12 * kGiB}));
    const std::string text = render_plan_text(p, 40);
    EXPECT_NE(text.find("GPU 0 ["), std::string::npos) << text;
    EXPECT_NE(text.find("GPU 1 ["), std::string::npos) << text;
    EXPECT_NE(text.find("] 24.00 GiB — card 0, layers 0–31\n"), std::string::npos) << text;
    EXPECT_NE(text.find("] 12.00 GiB — card 1, layers 32–47\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("VRAM  ["), std::string::npos) << text;  // no bar for the sums
    EXPECT_NE(text.find("RAM   ["), std::string::npos) << text;
    EXPECT_NE(text.find("2048 of 2048 experts (100.0%)"), std::string::npos) << text;  // GPU 1's 16 layers

    const std::string svg = render_plan_svg(p);
    EXPECT_NE(svg.find("GPU 1 — card 1, layers 32–47 — 12.00 GiB"), std::string::npos);

    auto j = plan_to_json(p);
    ASSERT_EQ(j["gpus"].size(), 2u);
    EXPECT_EQ(j["gpus"][1]["name"], "card 1");
    EXPECT_EQ(j["gpus"][1]["layer_begin"], 32u);
    EXPECT_EQ(j["gpus"][1]["layer_end"], 48u);
    EXPECT_EQ(j["gpus"][1]["dense"], p.gpu_shares[1].dense);
    EXPECT_EQ(j["gpus"][1]["expert_slots"], 16u * 128);
    EXPECT_EQ(j["gpus"][0]["workspace"]["logits"], p.gpu_shares[0].workspace.logits);
    EXPECT_GT(p.gpu_shares[0].workspace.logits, 0u);
    EXPECT_EQ(j["vram"]["expert_slots"], 48u * 128);
    EXPECT_EQ(j["request"]["split_gpus"].size(), 2u);
    // One GPU: no entries.
    PlanRequest single = split_request({});
    single.gpu = DeviceMemory{"one", 24 * kGiB, 24 * kGiB};
    EXPECT_TRUE(plan_to_json(plan_30b(single))["gpus"].empty());
}

}  // namespace
}  // namespace strata
