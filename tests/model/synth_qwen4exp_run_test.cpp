// A small synthetic Qwen3.8-Flash-Next (4 blocks: 3 DeltaNet, 1 QSA; the PLE block; 16 experts;
// a 4,096-row table; 1,024 tokens) is written as the published packs lay it out (the PLE table
// alone in shard 2, its data at byte 192 as in the real file, REAL_GGUFS.md §A1), loads, and runs
// on the CPU with finite logits; the hash heads of a cut table address only rows it has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "model/gpu/gpu_model.h"
#include "model/ple_constants.h"
#include "model/synth_qwen4exp.h"
#include "support/scratch.h"

namespace strata {
namespace {

TEST(SynthQwen4ExpRun, ACutModelIsSplitLoadsAndRuns) {
    Qwen4ExpSynthSpec spec;
    spec.mix = "q2_0";  // the smallest mix; its BF16 routers and HC matrices are the GSQ-RCO dialect
    spec.n_layers = 4;
    spec.n_expert = 16;
    spec.ple_rows = 4096;
    spec.n_vocab = 1024;
    auto files = qwen4exp_trunk_plan(spec, nullptr);
    ASSERT_TRUE(files) << files.status().message();
    test::ScratchDir dir;
    const auto paths = qwen4exp_shard_paths(dir.path("flash.gguf"), files->size());
    ASSERT_EQ(paths.size(), 2u);
    EXPECT_EQ(paths[1], dir.path("flash-00002-of-00002.gguf"));
    ASSERT_TRUE(write_synth_files(*files, paths, {.seed = 7}, nullptr));

    auto file = GgufFile::open(paths[0]);
    ASSERT_TRUE(file) << file.status().message();
    EXPECT_EQ(file->file_count(), 2u);
    const GgufTensorInfo* table = file->tensor("per_layer_token_embd.weight");
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->file_index, 1u);
    EXPECT_EQ(table->offset, 192u);  // 3 split.* keys + 1 tensor info, as the real shard 2
    EXPECT_LE(table->ne[1], 4096u);
    EXPECT_EQ(std::filesystem::file_size(paths[1]), 192u + table->n_bytes);

    // Every head's rows lie inside the cut table.
    const GgufValue* offsets = file->find("qwen4exp.ple.head_offsets");
    const GgufValue* sizes = file->find("qwen4exp.ple.head_vocab_sizes");
    ASSERT_TRUE(offsets && sizes);
    ASSERT_EQ(offsets->as_array().items.size(), 16u);
    for (size_t h = 0; h < 16; ++h) {
        EXPECT_LE(offsets->as_array().items[h].as_uint() + sizes->as_array().items[h].as_uint(), table->ne[1]) << h;
    }

    auto model = load_model_on(*file, ComputeOptions{});
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    EXPECT_EQ((*model)->config().n_layer, 4u);
    EXPECT_EQ((*model)->config().n_vocab, 1024u);
    // 24 tokens with the end-of-turn token (276 before the end) inside, which cuts the n-grams.
    const int64_t n = 24;
    std::vector<int32_t> ids(n), pos(n);
    for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(40 + 37 * i % 900);
    ids[11] = 1024 - 276;
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    KvCache kv = (*model)->make_kv_cache(n);
    std::vector<float> logits(static_cast<size_t>((*model)->config().n_vocab));
    (*model)->forward(Batch{ids.data(), pos.data(), n, 0}, kv, logits.data(), LogitsFor::Last, ctx);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
    EXPECT_GT(*std::max_element(logits.begin(), logits.end()), *std::min_element(logits.begin(), logits.end()));
}

// --ple-rows N: the largest prime start whose padded table fits N rows.
TEST(SynthQwen4ExpRun, PleRowsGiveTheLargestTableThatFits) {
    for (uint64_t n : {512ull, 4096ull, 100000ull, 1000000ull}) {
        PleConstantsSpec spec{.vocab = 248320};
        spec.ngram_base = ple_base_for_rows(spec, n);
        ASSERT_GE(spec.ngram_base, 2u) << n;
        EXPECT_LE(ple_constants(spec).rows, n);
        ++spec.ngram_base;
        EXPECT_GT(ple_constants(spec).rows, n);
    }
    EXPECT_EQ(ple_base_for_rows({.vocab = 248320}, 100), 0u);  // 16 primes from 2 need 384 rows
}

TEST(SynthQwen4ExpRun, BadCutsAreRefusedByName) {
    Qwen4ExpSynthSpec spec;
    spec.n_layers = 1;
    auto r = qwen4exp_trunk_plan(spec, nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("--layers"), std::string::npos) << r.status().message();
    spec = {};
    spec.ple_rows = 100;
    r = qwen4exp_trunk_plan(spec, nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("--ple-rows"), std::string::npos) << r.status().message();
    spec = {};
    spec.mix = "q9_9";
    r = qwen4exp_trunk_plan(spec, nullptr);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("ud-q4_k_xl"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace strata
