// apply_routed_experts (model/blocks/moe_routing.h) on the fixture MoE models' real expert
// tensors, for a prompt batch large enough that its weighted sum is split over the thread pool by
// tokens: the residual gets the bits a one-thread pool gives, gpt-oss's down biases included.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/thread_pool.h"
#include "experts/expert_store.h"
#include "gguf/reader.h"
#include "model/blocks/moe_routing.h"
#include "support/testdata.h"

namespace strata {
namespace {

class RoutedExpertsThreads : public ::testing::TestWithParam<std::string> {};

TEST_P(RoutedExpertsThreads, WeightedSumSplitByTokensSameBits) {
    const std::string path = test::testdata_path("models/" + GetParam() + ".gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.status().message();
    auto layers = expert_tensors_from_gguf(*file);
    ASSERT_TRUE(layers && !layers->empty()) << (layers ? "no expert layers" : layers.status().message());
    const ExpertLayerTensors& L = layers->front();
    const RoutedExpertWeights w{L.gate, L.up, L.down, L.gate_bias, L.up_bias, L.down_bias};
    const ExpertActivation act = L.biased() ? ExpertActivation::GptOssClampedSwiGlu : ExpertActivation::SwiGlu;
    const int64_t e = L.gate.ne[0], n_expert = L.gate.ne[2], k = 2;
    // Enough (token, expert) rows that the sum goes to the pool: over 64 Ki values.
    const int64_t n_tokens = (64 * 1024) / (k * e) + 37;
    std::mt19937 rng(21);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> h(static_cast<size_t>(n_tokens * e)), x0(h.size());
    for (float& v : h) v = dist(rng);
    for (float& v : x0) v = dist(rng);
    ExpertAssignments routed(static_cast<size_t>(n_expert));
    std::uniform_int_distribution<int64_t> pick(0, n_expert - 1);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const int64_t a = pick(rng), b = (a + 1 + pick(rng) % (n_expert - 1)) % n_expert;  // two distinct experts
        routed[static_cast<size_t>(a)].emplace_back(t, 0.75f);
        routed[static_cast<size_t>(b)].emplace_back(t, 0.25f);
    }
    const auto run = [&](int threads) {
        ThreadPool pool(ThreadPool::Options{.threads = threads});
        CpuContext ctx(pool);
        std::vector<float> x = x0;
        apply_routed_experts(w, act, h.data(), n_tokens, e, routed, x.data(), ctx);
        return x;
    };
    const std::vector<float> alone = run(1), split = run(4);
    EXPECT_EQ(std::memcmp(alone.data(), split.data(), alone.size() * sizeof(float)), 0);
    EXPECT_NE(std::memcmp(alone.data(), x0.data(), x0.size() * sizeof(float)), 0) << "the residual did not move";
}

INSTANTIATE_TEST_SUITE_P(Models, RoutedExpertsThreads, ::testing::Values("qwen3moe", "gptoss"),
                         [](const ::testing::TestParamInfo<std::string>& c) { return c.param; });

}  // namespace
}  // namespace strata
