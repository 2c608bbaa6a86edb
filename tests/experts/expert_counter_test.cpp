// The routing counter of `strata profile` (experts/expert_counter.h) on a fixture MoE model: a
// counted run gives the same logits bit for bit as a run without a source, as one batch and token
// by token, and every MoE layer's counts add up to tokens × n_expert_used. A profile made from the
// counts matches the model it was recorded on.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "experts/expert_counter.h"
#include "experts/expert_profile.h"
#include "model/model.h"
#include "support/scratch.h"
#include "support/testdata.h"

namespace strata {
namespace {

// Every MoE architecture's fixture: softmax top-k blocks (qwen3moe, qwen3next's), DeepSeek-V3's
// grouped sigmoid routing with leading dense layers, gpt-oss's routed pass with biases.
class ExpertCounterModels : public ::testing::TestWithParam<const char*> {};
INSTANTIATE_TEST_SUITE_P(MoeFixtures, ExpertCounterModels, ::testing::Values("qwen3moe", "qwen3next", "deepseek3", "gptoss"));

TEST_P(ExpertCounterModels, LogitsUnchangedAndCountsAddUp) {
    const std::string path = test::testdata_path(std::string("models/") + GetParam() + ".gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.status().message();
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    const ModelConfig& cfg = (*model)->config();
    ASSERT_TRUE(cfg.is_moe());
    const int64_t vocab = cfg.n_vocab;
    const std::vector<int32_t> tokens = {1, 450, 7, 3001, 29, 12, 998, 5, 64, 77, 2048, 3, 17};
    const int64_t n = static_cast<int64_t>(tokens.size());
    std::vector<int32_t> pos(static_cast<size_t>(n));
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);

    // The prompt as one batch, then again token by token: both logit tables.
    auto run = [&](MoeExpertSource* source) {
        std::vector<float> out(static_cast<size_t>(2 * n * vocab));
        KvCache kv = (*model)->make_kv_cache(n);
        (*model)->forward(Batch{tokens.data(), pos.data(), n, 0, source}, kv, out.data(), LogitsFor::All, ctx);
        KvCache kv1 = (*model)->make_kv_cache(n);
        for (int64_t t = 0; t < n; ++t)
            (*model)->forward(Batch{tokens.data() + t, pos.data() + t, 1, t, source}, kv1,
                              out.data() + (n + t) * vocab, LogitsFor::All, ctx);
        return out;
    };
    const std::vector<float> want = run(nullptr);

    auto layers = expert_tensors_from_gguf(*file);
    ASSERT_TRUE(layers) << layers.status().message();
    ExpertCounter counter(*layers, cfg.n_expert);
    const std::vector<float> got = run(&counter);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
        << "counting changed the logits";

    // Two passes over the prompt: every token went through every MoE layer twice.
    const uint64_t routed_per_layer = 2 * static_cast<uint64_t>(n) * cfg.n_expert_used;
    ASSERT_EQ(counter.layers().size(), layers->size());
    EXPECT_EQ(counter.steps(), (1 + static_cast<uint64_t>(n)) * layers->size());
    for (size_t i = 0; i < layers->size(); ++i) {
        const ExpertProfileLayer& L = counter.layers()[i];
        EXPECT_EQ(L.layer, (*layers)[i].layer);
        ASSERT_EQ(L.counts.size(), cfg.n_expert);
        EXPECT_EQ(std::accumulate(L.counts.begin(), L.counts.end(), uint64_t{0}), routed_per_layer)
            << "layer " << L.layer;
        // Top-k picks distinct experts: none can take a token twice in one pass.
        for (uint64_t c : L.counts) EXPECT_LE(c, 2 * static_cast<uint64_t>(n));
    }

    // A profile of these counts saves, loads back against the model, and lists every expert.
    auto who = expert_profile_model(*file);
    ASSERT_TRUE(who) << who.status().message();
    EXPECT_EQ(who->n_expert, cfg.n_expert);
    EXPECT_EQ(who->n_layer, cfg.n_layer);
    ExpertProfile profile;
    profile.model = *who;
    profile.prompts = 2;
    profile.tokens = 2 * static_cast<uint64_t>(n);
    profile.layers = counter.layers();
    test::ScratchDir dir;
    ASSERT_TRUE(save_expert_profile(dir.path("p.json"), profile));
    auto loaded = load_expert_profile(dir.path("p.json"), *who);
    ASSERT_TRUE(loaded) << loaded.status().message();
    EXPECT_EQ(hottest_first(*loaded).size(), layers->size() * cfg.n_expert);
}

TEST(ExpertCounter, DenseModelsHaveNoProfileIdentity) {
    const std::string path = test::testdata_path("models/qwen3.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto who = expert_profile_model(*file);
    ASSERT_FALSE(who);
    EXPECT_NE(who.status().message().find("not a MoE model"), std::string::npos) << who.status().message();
}

}  // namespace
}  // namespace strata
