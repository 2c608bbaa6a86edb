// Plans of real files: every model of testdata/models, a split copy of one, and the benchmark
// model of docs/BENCHMARKS.md (synth-qwen3-30b-a3b) from its shapes alone.
#include <algorithm>
#include <gtest/gtest.h>

#include <cstdio>

#include "core/file.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/synth.h"
#include "model/tensor_roles.h"
#include "plan/planner.h"
#include "plan/units.h"
#include "support/scratch.h"
#include "support/testdata.h"
#include "synth_inventory.h"

namespace strata {
namespace {

struct Planned {
    ModelInventory inventory;
    ModelWeights weights;
};

Planned open_and_summarize(const std::string& path) {
    auto f = GgufFile::open(path);
    EXPECT_TRUE(f) << f.status().message();
    if (!f) return {};
    auto inv = inventory_from_gguf(*f);
    EXPECT_TRUE(inv) << inv.status().message();
    if (!inv) return {};
    auto w = summarize_weights(*inv);
    EXPECT_TRUE(w) << w.status().message();
    return {*inv, w ? *w : ModelWeights{}};
}

PlanRequest small_machine(uint64_t vram) {
    PlanRequest r;
    if (vram) r.gpu = DeviceMemory{"test", vram, vram};
    r.vram_reserve = 8 * kMiB;
    r.ram_bytes = 1 * kGiB;
    r.ram_reserve = 0;
    r.n_ctx = 512;
    return r;
}

std::vector<std::string> model_files() {
    std::vector<std::string> out;
    for (const auto& p : test::testdata_files("models", ".gguf")) {
        if (p.size() < 9 || p.compare(p.size() - 9, 9, ".ref.gguf") != 0) out.push_back(p);  // .ref: logits
    }
    return out;
}

TEST(PlanTestdataModels, EachModelPlansAndAgreesWithTheTensorRoleSummary) {
    auto files = model_files();
    if (files.empty()) GTEST_SKIP() << "test data missing: " << test::testdata_path("models");
    for (const auto& path : files) {
        SCOPED_TRACE(path);
        Planned m = open_and_summarize(path);
        auto f = GgufFile::open(path);
        ASSERT_TRUE(f);
        // The planner's totals agree with model/tensor_roles.h's reading of the same file.
        ModelByteSummary s = summarize_model_bytes(*f);
        EXPECT_EQ(m.weights.total_bytes, s.total_bytes);
        EXPECT_EQ(m.weights.bytes_per_token, s.bytes_per_token);
        // (gpt-oss's expert biases are routed-expert bytes by role, dense bytes to the planner.)
        const uint64_t expert_bytes = m.weights.expert_bytes + m.weights.expert_bias_bytes;
        EXPECT_EQ(expert_bytes, s.bytes_by_role[static_cast<int>(TensorRole::RoutedExperts)]);
        EXPECT_EQ(m.weights.expert_count, s.expert_count * s.moe_layers);
        EXPECT_EQ(expert_bytes / std::max<uint64_t>(1, m.weights.expert_count), s.bytes_per_expert);
        EXPECT_GE(m.weights.expert_slot_bytes, m.weights.average_expert_bytes());

        // These test models are tiny: 64 MiB holds everything.
        Plan roomy = make_plan(m.inventory, m.weights, small_machine(64 * kMiB));
        EXPECT_TRUE(roomy.fits) << (roomy.problems.empty() ? "" : roomy.problems[0]);
        EXPECT_EQ(roomy.vram_expert_slots, m.weights.expert_count);
        EXPECT_EQ(roomy.disk_experts, 0u);
        // A 1 MiB card cannot hold the workspaces: refused, with the shortfall named.
        Plan tiny = make_plan(m.inventory, m.weights, small_machine(1 * kMiB));
        EXPECT_FALSE(tiny.fits);
        EXPECT_GT(tiny.vram_shortfall, 0u);
        ASSERT_FALSE(tiny.problems.empty());
        EXPECT_NE(tiny.problems[0].find(format_bytes(tiny.vram_shortfall) + " short"), std::string::npos);
        // Without a GPU everything lives in RAM.
        Plan cpu = make_plan(m.inventory, m.weights, small_machine(0));
        EXPECT_TRUE(cpu.fits);
        EXPECT_EQ(cpu.ram_dense, m.weights.dense_bytes);
        EXPECT_EQ(cpu.ram_arena_experts, m.weights.expert_count);
    }
}

// A model split into parts the way gguf-split writes them plans exactly like the whole file.
TEST(PlanTestdataModels, SplitFilePlansLikeTheWholeFile) {
    const std::string path = test::testdata_path("models/qwen3moe.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto whole = GgufFile::open(path);
    ASSERT_TRUE(whole) << whole.status().message();
    test::ScratchDir dir;
    const auto& tensors = whole->tensors();
    for (uint16_t part = 0; part < 2; ++part) {
        GgufWriter w;
        if (part == 0) {
            for (const auto& e : whole->metadata()) {
                if (e.key != "general.alignment") w.set(e.key, e.value);
            }
        }
        ASSERT_TRUE(w.set_alignment(static_cast<uint32_t>(whole->alignment())));
        w.set_u16("split.no", part);
        w.set_u16("split.count", 2);
        w.set_i32("split.tensors.count", static_cast<int32_t>(tensors.size()));
        for (size_t i = part; i < tensors.size(); i += 2) {  // alternate tensors between the parts
            const GgufTensorInfo& t = tensors[i];
            const uint8_t* data = whole->tensor_data(t);
            ASSERT_TRUE(w.add_tensor(t.name, t.type, std::vector<uint64_t>(t.ne, t.ne + t.n_dims),
                                     std::vector<uint8_t>(data, data + t.n_bytes)));
        }
        char name[64];
        std::snprintf(name, sizeof(name), "m-%05d-of-00002.gguf", part + 1);
        ASSERT_TRUE(w.write(dir.path(name)));
    }
    Planned split = open_and_summarize(dir.path("m-00001-of-00002.gguf"));
    Planned one = open_and_summarize(path);
    EXPECT_EQ(split.inventory.tensors.size(), one.inventory.tensors.size());
    const PlanRequest r = small_machine(32 * kMiB);
    Plan a = make_plan(split.inventory, split.weights, r), b = make_plan(one.inventory, one.weights, r);
    EXPECT_EQ(a.weights.total_bytes, b.weights.total_bytes);
    EXPECT_EQ(a.vram_fixed(), b.vram_fixed());
    EXPECT_EQ(a.vram_expert_slots, b.vram_expert_slots);
    EXPECT_EQ(a.explanation, b.explanation);
}

// The test-side inventory of a synth model must describe what write_synth_model writes: checked on
// two small specs (the tiny preset in Q8_0, and the benchmark preset's K-quant types shrunk).
TEST(SynthInventory, MatchesWrittenFiles) {
    SynthSpec small_k = synth_preset("qwen3-30b-a3b").value();
    small_k.n_layers = 2;
    small_k.n_embd = 256;
    small_k.n_head = 4;
    small_k.n_head_kv = 2;
    small_k.head_dim = 64;
    small_k.n_expert = 4;
    small_k.n_expert_used = 2;
    small_k.n_ff_expert = 256;
    small_k.n_vocab = 256;
    for (const SynthSpec& spec : {synth_preset("tiny").value(), small_k}) {
        SCOPED_TRACE(spec.name);
        test::ScratchDir dir;
        ASSERT_TRUE(write_synth_model(spec, nullptr, dir.path("m.gguf"), nullptr));
        Planned written = open_and_summarize(dir.path("m.gguf"));
        ModelInventory mirrored = test::synth_inventory(spec);
        ASSERT_EQ(mirrored.tensors.size(), written.inventory.tensors.size());
        for (size_t i = 0; i < mirrored.tensors.size(); ++i) {
            const GgufTensorInfo &m = mirrored.tensors[i], &w = written.inventory.tensors[i];
            EXPECT_EQ(m.name, w.name);
            EXPECT_EQ(m.type, w.type) << m.name;
            EXPECT_EQ(m.shape_string(), w.shape_string()) << m.name;
            EXPECT_EQ(m.n_bytes, w.n_bytes) << m.name;
        }
        const ModelConfig &a = mirrored.config, &c = written.inventory.config;
        EXPECT_EQ(a.n_layer, c.n_layer);
        EXPECT_EQ(a.n_embd, c.n_embd);
        EXPECT_EQ(a.n_vocab, c.n_vocab);
        EXPECT_EQ(a.n_ctx_train, c.n_ctx_train);
        EXPECT_EQ(a.n_head, c.n_head);
        EXPECT_EQ(a.n_head_kv, c.n_head_kv);
        EXPECT_EQ(a.head_dim_k, c.head_dim_k);
        EXPECT_EQ(a.head_dim_v, c.head_dim_v);
        EXPECT_EQ(a.n_ff, c.n_ff);
        EXPECT_EQ(a.n_expert, c.n_expert);
        EXPECT_EQ(a.n_expert_used, c.n_expert_used);
        EXPECT_EQ(a.n_ff_expert, c.n_ff_expert);
    }
}

// synth-qwen3-30b-a3b, by hand (Q4_K: 144 bytes per 256 values; Q6_K: 210 per 256):
//   per layer  attn_q, attn_output 2048·4096 Q4_K = 4718592 each; attn_k 2048·512 Q4_K = 589824;
//              attn_v 2048·512 Q6_K = 860160                     → attention 10887168
//              norms (2048 + 128 + 128 + 2048) · 4 = 17408; router 2048 · 128 · 4 = 1048576
//              gate, up 2048·768·128 Q4_K = 113246208 each; down Q6_K = 165150720
//              → one expert 884736 + 884736 + 1290240 = 3059712 (all 256-aligned already)
//   token_embd 2048·32000 Q4_K = 36864000; output Q6_K = 53760000; output_norm 8192
//   dense 48 · (10887168 + 17408 + 1048576) + 36864000 + 53760000 + 8192 = 664383488
//   experts 48 · 391643136 = 18798870528; total 19463254016 = 18.13 GiB (BENCHMARKS.md)
//   per token: 664383488 - 36864000 + 1152 (one embedding row) + 8 · 48 · 3059712 (1174929408)
//              = 1802450048 ≈ 1.8 GB (attention 0.52 GB, experts 1.18 GB, router and head 0.1 GB)
ModelInventory synth_30b() {
    SynthSpec spec = synth_preset("qwen3-30b-a3b").value();
    spec.n_vocab = 32000;  // the SPM vocabulary the benchmark file is written with
    return test::synth_inventory(spec);
}

TEST(Synth30B, WeightsMatchTheBenchmarkModel) {
    ModelInventory inv = synth_30b();
    auto w = summarize_weights(inv);
    ASSERT_TRUE(w) << w.status().message();
    uint64_t params = 0;
    for (const auto& t : inv.tensors) params += t.n_elements;
    EXPECT_EQ(params, 30040864768u);  // 30.04 B
    EXPECT_EQ(w->total_bytes, 19463254016u);
    EXPECT_EQ(format_bytes(w->total_bytes), "18.13 GiB");
    EXPECT_EQ(w->dense_bytes, 664383488u);
    EXPECT_EQ(w->dense_vram_bytes(), 627519488u);
    EXPECT_EQ(w->expert_bytes, 18798870528u);
    EXPECT_EQ(w->expert_count, 6144u);
    EXPECT_EQ(w->expert_slot_bytes, 3059712u);
    EXPECT_EQ(w->expert_bytes_per_token, 1174929408u);
    EXPECT_EQ(w->bytes_per_token, 1802450048u);
}

// Context 4096 f16: KV 48 · 4096 · 1024 · 2 = 402653184 (384 MiB). Batch 512 workspaces:
//   activations 512 · (3 · 2048 · 4 + 2 · 4096) = 16777216
//   attention   512 · (2·32·128 + 512 + 512 + 32·128) · 4 + 512 · 32 · 256 · 4 = 44040192
//   ffn         512 · (128 + 8 · (2·768 + 2048)) · 4 + 512 · 8 · 16 = 59047936
//   logits      512 · 32000 · 4 = 65536000, + sampling 32 + 32000 · 20 = 640032
//                                                             → 186041376
//   copy buffers 2 · 32 · 3059712 = 195821568 (two halves of a quarter of a layer's 128 experts)
//                                                             → 381862944 when experts are off-GPU
// Fixed 627519488 + 402653184 + 381862944 = 1412035616, + 512 MiB reserve = 1948906528.
PlanRequest bench_request(uint64_t vram) {
    PlanRequest r;
    r.gpu = DeviceMemory{"H200 with --vram-budget", 141 * kGiB, 140 * kGiB};
    r.vram_budget = vram;
    r.ram_bytes = 64 * kGiB;
    return r;
}

TEST(Synth30B, TenGiBCardHoldsAboutHalfTheExperts) {
    ModelInventory inv = synth_30b();
    ModelWeights w = summarize_weights(inv).value();
    Plan p = make_plan(inv, w, bench_request(10 * kGiB));
    ASSERT_TRUE(p.fits);
    EXPECT_EQ(p.context.kv_bytes, 402653184u);
    EXPECT_EQ(p.vram_workspace.total(), 381862944u);
    EXPECT_EQ(p.vram_fixed(), 1412035616u);
    // (10737418240 - 1948906528) / 3059712 = 2872 slots, 1018848 left over: 46.7% of the experts
    // (BENCHMARKS.md's "about a 10 GB card" keeps layers 24-47's experts in RAM: 50%).
    EXPECT_EQ(p.vram_expert_slots, 2872u);
    EXPECT_EQ(p.vram_unused, 1018848u);
    // RAM: embedding 36864000 + host workspace 69590016 + 1 GiB reserve; the other 3272 experts
    // (9.32 GiB) all fit in the arena of a 64 GiB machine.
    EXPECT_EQ(p.ram_workspace, 69590016u);
    EXPECT_EQ(p.ram_arena_experts, 3272u);
    EXPECT_EQ(p.disk_experts, 0u);
}

TEST(Synth30B, TwoGiBCardKeepsAlmostAllExpertsInRam) {
    ModelInventory inv = synth_30b();
    ModelWeights w = summarize_weights(inv).value();
    Plan p = make_plan(inv, w, bench_request(2 * kGiB));
    ASSERT_TRUE(p.fits);
    // (2147483648 - 1948906528) / 3059712 = 64 slots, 2755552 left over: 1.0% of the experts.
    EXPECT_EQ(p.vram_expert_slots, 64u);
    EXPECT_EQ(p.vram_unused, 2755552u);
    EXPECT_EQ(p.ram_arena_experts, 6144u - 64u);
}

TEST(Synth30B, WholeModelFitsA24GiBCardAndNotAOneGiBOne) {
    ModelInventory inv = synth_30b();
    ModelWeights w = summarize_weights(inv).value();
    // 627519488 + 402653184 + 186041376 + 536870912 + 6144 · 3059712 = 20551955488 ≤ 24 GiB.
    Plan all = make_plan(inv, w, bench_request(24 * kGiB));
    ASSERT_TRUE(all.fits);
    EXPECT_EQ(all.vram_expert_slots, 6144u);
    EXPECT_EQ(all.vram_workspace.expert_staging, 0u);
    EXPECT_EQ(all.vram_unused, 24 * kGiB - 20551955488u);
    EXPECT_EQ(all.ram_arena_experts, 0u);
    // 1 GiB: 1948906528 - 1073741824 = 875164704 short.
    Plan one = make_plan(inv, w, bench_request(1 * kGiB));
    ASSERT_FALSE(one.fits);
    EXPECT_EQ(one.vram_shortfall, 875164704u);
}

TEST(Synth30B, LongContextOnASmallCardSuggestsShorterContextAndQ8Kv) {
    ModelInventory inv = synth_30b();
    ModelWeights w = summarize_weights(inv).value();
    PlanRequest r = bench_request(4 * kGiB);
    r.n_ctx = 40960;  // KV 48 · 40960 · 2048 = 4026531840: with the rest, more than 4 GiB
    Plan p = make_plan(inv, w, r);
    ASSERT_FALSE(p.fits);
    bool ctx = false, q8 = false;
    for (const auto& s : p.suggestions) {
        ctx |= s.rfind("--ctx ", 0) == 0;
        q8 |= s.rfind("--kv-type q8_0", 0) == 0;
    }
    EXPECT_TRUE(ctx);
    // q8_0 KV: 48 · 40960 · 1088 = 2139095040, plus one layer's rows in f16 for the GPU's attention,
    // 40960 · 2048 = 83886080; 627519488 + 2139095040 + 83886080 + 234356736 + 536870912 = 3621728256
    // ≤ 4294967296: fits.
    EXPECT_TRUE(q8);
}

}  // namespace
}  // namespace strata
