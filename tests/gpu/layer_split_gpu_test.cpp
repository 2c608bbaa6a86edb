// A model split by layers over GPUs (--split layer, gpu_shard.h) against the same model on one
// GPU. Each share holds a copy of the next share's first input norm and the activations cross
// as they are (x, h and h as int8), so the split must give the one-GPU logits bit for bit: for a
// prompt batch and for decode steps, in two and three shares. On a one-GPU machine the shares are
// parts of the same card (separate pools, streams, KV caches and events, the same copies); with
// two GPUs the split crosses them. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "backend/gpu/device_runtime.h"
#include "model/gpu/gpu_model.h"
#include "fixture_model.h"
#include "model/model.h"
#include "model/parity.h"
#include "runtime/gpu_placement.h"
#include "split_logits.h"
#include "support/testdata.h"

namespace strata {
namespace {



size_t differing(const std::vector<float>& a, const std::vector<float>& b) {
    size_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
    return n;
}

class GpuLayerSplit : public test::GpuFixtureModel {};

TEST_P(GpuLayerSplit, EqualsOneGpuBitForBit) {
    auto one = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(one) << one.status().message();
    const std::vector<float> want = test::split_test_logits(**one, cpu);
    const uint32_t n_layer = (*one)->config().n_layer;
    ASSERT_GE(n_layer, 2u);
    const int other = test::second_gpu();

    std::vector<std::vector<uint32_t>> splits = {{n_layer / 2}};
    if (n_layer >= 3) splits.push_back({1, n_layer - 1});
    for (const auto& at : splits) {
        ComputeOptions options{.device = ComputeDevice::Gpu};
        uint32_t begin = 0;
        for (size_t i = 0; i <= at.size(); ++i) {
            const uint32_t end = i < at.size() ? at[i] : n_layer;
            options.layer_split.push_back(GpuLayerShare{i % 2 ? other : 0, begin, end, 0, nullptr});
            begin = end;
        }
        auto split = load_model_on(*file, options);
        ASSERT_TRUE(split) << split.status().message();
        const std::vector<float> got = test::split_test_logits(**split, cpu);
        std::printf("gpu-split %-9s %zu shares: %s\n", GetParam().c_str(), at.size() + 1, (*split)->device_name().c_str());
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(differing(got, want), 0u) << at.size() + 1 << " shares";
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, GpuLayerSplit,
                         ::testing::Values("llama", "qwen3", "qwen3moe", "mixtral", "gptoss", "qwen3next", "qwen35moe",
                                           "deepseek3"));

// Planned by the placement, each GPU with its own expert tiers: the logits still match HF
// transformers', and streaming every miss gives the one-GPU all-resident bits.
TEST(GpuLayerSplitPlacement, TiersPerGpuMatchReference) {
    const std::string why = gpu_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
    const std::string model_path = test::testdata_path("models/qwen3moe.gguf");
    const std::string ref_path = test::testdata_path("models/qwen3moe.ref.gguf");
    STRATA_SKIP_IF_MISSING(model_path);
    STRATA_SKIP_IF_MISSING(ref_path);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    const auto load = [&](const GgufFile& f, int64_t slots, const std::string& lane, GpuPlacement* placement) {
        ComputeOptions options{.device = ComputeDevice::Gpu};
        options.split_ordinals = {0, test::second_gpu()};
        GpuPlacementRequest req;
        req.expert_slots = slots;
        req.force_tiers = true;
        req.miss_lane = miss_lane_from_name(lane).value();
        req.n_ctx = 256;
        auto placed = place_on_gpu(f, options, req);
        if (!placed) return Result<std::unique_ptr<Model>>(placed.status());
        *placement = std::move(*placed);
        return load_model_on(f, options);
    };
    for (int64_t chunk : {0, 1}) {
        GpuPlacement placement;
        auto report = run_parity(model_path, ref_path, chunk, pool,
                                 [&](const GgufFile& f) { return load(f, 3, "auto", &placement); });
        ASSERT_TRUE(report) << report.status().message();
        ASSERT_EQ(placement.plan.gpu_shares.size(), 2u);
        ASSERT_TRUE(placement.tiered);
        const GpuExpertTierStats& st = *placement.stats;
        std::printf("gpu-split-tiers chunk %lld: nmse %.3e top-1 %lld/%lld, uses %llu = %llu hits + %llu cpu + %llu streamed\n%s\n",
                    static_cast<long long>(chunk), report->nmse, static_cast<long long>(report->top1_agree),
                    static_cast<long long>(report->n_tokens), static_cast<unsigned long long>(st.expert_uses),
                    static_cast<unsigned long long>(st.hits), static_cast<unsigned long long>(st.cpu_experts),
                    static_cast<unsigned long long>(st.streamed_experts), placement.describe().c_str());
        EXPECT_LT(report->nmse, 1e-5);
        EXPECT_GE(report->top1_agree, report->n_tokens - 1);
        EXPECT_EQ(st.expert_uses, st.hits + st.cpu_experts + st.streamed_experts);
        EXPECT_GT(st.expert_uses, 0u);
        for (const auto& summary : placement.share_summaries) {
            ASSERT_TRUE(summary);
            EXPECT_EQ(summary->cache_slots, 3u);
        }
    }

    auto file = GgufFile::open(model_path);
    ASSERT_TRUE(file);
    auto resident = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(resident) << resident.status().message();
    const std::vector<float> want = test::split_test_logits(**resident, cpu);
    GpuPlacement placement;
    auto streamed = load(*file, 0, "stream", &placement);
    ASSERT_TRUE(streamed) << streamed.status().message();
    const std::vector<float> got = test::split_test_logits(**streamed, cpu);
    EXPECT_EQ(differing(got, want), 0u);
    EXPECT_GT(placement.stats->streamed_experts, 0u);
}

// A split that leaves a layer out, or holds one twice, is refused before anything runs.
TEST(GpuLayerSplitPlacement, MalformedSplitIsRefused) {
    const std::string why = gpu_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
    const std::string path = test::testdata_path("models/llama.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto config = ModelConfig::from_gguf(*file);
    ASSERT_TRUE(config);
    const uint32_t n = config->n_layer;
    const std::vector<std::vector<GpuLayerShare>> bad = {
        {{0, 0, 1, 0, nullptr}, {0, 2, n, 0, nullptr}},      // layer 1 left out
        {{0, 0, 2, 0, nullptr}, {0, 1, n, 0, nullptr}},      // layer 1 twice
        {{0, 0, 1, 0, nullptr}, {0, 1, n - 1, 0, nullptr}},  // the last layer left out
    };
    for (const auto& split : bad) {
        ComputeOptions options{.device = ComputeDevice::Gpu};
        options.layer_split = split;
        auto model = load_model_on(*file, options);
        ASSERT_FALSE(model);
        EXPECT_NE(model.status().message().find("--split layer"), std::string::npos) << model.status().message();
    }
}

}  // namespace
}  // namespace strata
