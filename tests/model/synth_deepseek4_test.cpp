// The synthetic DeepSeek-V4-Flash against the published files (REAL_GGUFS.md part B): the whole
// 43-block plan has the 1,328 tensors of §B3 with their per-role counts, the ds4 q2 file's type
// census, and tensor bytes equal to what §B3 derives from the real q2 and q4 files' sizes; a cut
// model (4 blocks, 8 experts, 512 tokens) is written, loads (F16 compressor tables and HC
// matrices, as the ds4 files keep them) and runs on the CPU with finite logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "model/gpu/gpu_model.h"
#include "model/synth_deepseek4.h"
#include "support/scratch.h"

namespace strata {
namespace {

size_t count_named(const SynthFile& f, const std::string& suffix) {
    return static_cast<size_t>(std::count_if(f.tensors.begin(), f.tensors.end(), [&](const SynthTensor& t) {
        return t.name.size() >= suffix.size() && t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    }));
}

TEST(SynthDeepseek4, TheWholePlanIsThePublishedLayout) {
    auto plan = deepseek4_plan({}, nullptr);
    ASSERT_TRUE(plan) << plan.status().message();
    const SynthFile& f = *plan;
    EXPECT_EQ(f.tensors.size(), 1328u);  // 2 × 24 + 20 × 28 + 21 × 34 + 6 (§B3)
    // The per-role counts read from the UD-Q4_K_XL file (§B3).
    EXPECT_EQ(count_named(f, "attn_compressor_kv.weight"), 41u);
    EXPECT_EQ(count_named(f, "exp_probs_b.bias"), 40u);
    EXPECT_EQ(count_named(f, "indexer.proj.weight"), 21u);
    EXPECT_EQ(count_named(f, "ffn_gate_tid2eid.weight"), 3u);
    // ds4 q2's census (§B3): F32 492, F16 359, Q8_0 345, IQ2_XXS 86, Q2_K 43, I32 3.
    std::map<TensorType, int> census;
    for (const SynthTensor& t : f.tensors) ++census[t.type];
    EXPECT_EQ(census[TensorType::F32], 492);
    EXPECT_EQ(census[TensorType::F16], 359);
    EXPECT_EQ(census[TensorType::Q8_0], 345);
    EXPECT_EQ(census[TensorType::IQ2_XXS], 86);
    EXPECT_EQ(census[TensorType::Q2_K], 43);
    EXPECT_EQ(census[TensorType::I32], 3);
    // The real q2 file is 86,720,111,200 bytes, 5,335,300 of them header and tokenizer (§B3).
    EXPECT_EQ(f.tensor_bytes(), 86714775900ull);
    // 44 compress ratios for 43 blocks (the MTP block's too), 0, 0, then 4 and 128 alternating.
    const GgufValue* ratios = f.find("deepseek4.attention.compress_ratios");
    ASSERT_NE(ratios, nullptr);
    const auto& items = ratios->as_array().items;
    ASSERT_EQ(items.size(), 44u);
    EXPECT_EQ(items[0].as_uint(), 0u);
    EXPECT_EQ(items[1].as_uint(), 0u);
    EXPECT_EQ(items[2].as_uint(), 4u);
    EXPECT_EQ(items[3].as_uint(), 128u);
    EXPECT_EQ(items[42].as_uint(), 4u);

    Deepseek4SynthSpec q4;
    q4.mix = "ds4-q4";
    auto plan4 = deepseek4_plan(q4, nullptr);
    ASSERT_TRUE(plan4) << plan4.status().message();
    EXPECT_EQ(plan4->tensor_bytes(), 164628167004ull);  // the q4 file's 164,633,502,304 less the same header
}

TEST(SynthDeepseek4, ACutModelLoadsAndRuns) {
    Deepseek4SynthSpec spec;
    spec.n_layers = 4;  // ratios 0, 0, 4, 128: every kind of block
    spec.n_expert = 8;
    spec.n_vocab = 512;
    auto plan = deepseek4_plan(spec, nullptr);
    ASSERT_TRUE(plan) << plan.status().message();
    test::ScratchDir dir;
    const std::string path = dir.path("v4.gguf");
    ASSERT_TRUE(write_synth_files({*plan}, {path}, {.seed = 7}, nullptr));
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.status().message();
    // The ids of the hash-routed blocks name experts the model has.
    const GgufTensorInfo* ids = file->tensor("blk.0.ffn_gate_tid2eid.weight");
    ASSERT_NE(ids, nullptr);
    const auto* values = reinterpret_cast<const int32_t*>(file->tensor_data(*ids));
    const auto [lo, hi] = std::minmax_element(values, values + ids->ne[0] * ids->ne[1]);
    EXPECT_GE(*lo, 0);
    EXPECT_LT(*hi, 8);

    auto model = load_model_on(*file, ComputeOptions{});
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    EXPECT_EQ((*model)->config().n_layer, 4u);
    const int64_t n = 9;
    std::vector<int32_t> tokens(n), pos(n);
    for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>(65 + 29 * i % 400);
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    KvCache kv = (*model)->make_kv_cache(n);
    std::vector<float> logits(static_cast<size_t>((*model)->config().n_vocab));
    (*model)->forward(Batch{tokens.data(), pos.data(), n, 0}, kv, logits.data(), LogitsFor::Last, ctx);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
    EXPECT_GT(*std::max_element(logits.begin(), logits.end()), *std::min_element(logits.begin(), logits.end()));
}

TEST(SynthDeepseek4, BadCutsAreRefusedByName) {
    Deepseek4SynthSpec spec;
    spec.n_layers = 3;
    auto r = deepseek4_plan(spec, nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("--layers"), std::string::npos) << r.status().message();
    spec = {};
    spec.mix = "q9_9";
    r = deepseek4_plan(spec, nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("ds4-q2"), std::string::npos) << r.status().message();
    spec = {};
    spec.n_vocab = 100;
    r = deepseek4_plan(spec, nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("vocabulary"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace strata
