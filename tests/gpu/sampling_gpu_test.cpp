// Sampling on the GPU (backend/gpu/gpu_sampling.h) against the host:
// - the reduction: the same candidates (ids and penalized logits, bit for bit), the same largest
//   logit, the mass sum to float rounding, and the row unchanged afterwards (the penalties are
//   undone), on Qwen3's vocabulary size and a small one with many ties, for every kind of query;
// - the draws: the device reduction followed by Sampler::choose draws what sorting every token
//   draws (tests/support/sort_everything_sampler.h), as the host sampler does;
// - a session on a GPU model that keeps its logits on the device generates the tokens the host
//   sampler picks from the copied logits, and logits() still gives the row when asked.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "fixture_model.h"
#include "op_parity.h"
#include "runtime/select_candidates.h"
#include "runtime/session.h"
#include "support/generate_tokens.h"
#include "support/sort_everything_sampler.h"

#if STRATA_HAS_GPU
#include "backend/gpu/gpu_sampling.h"
#endif

namespace strata {
namespace {

#if STRATA_HAS_GPU

// The sampler's settings the tests walk: every filter alone and together, with penalties.
std::vector<SamplingParams> settings() {
    return {
        {.temperature = 0.0f},
        {},  // T 0.8, top-k 40, top-p 0.95, min-p 0.05
        {.temperature = 0.7f, .top_k = 0, .top_p = 0.9f, .min_p = 0.0f},
        {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.05f},
        {.temperature = 1.3f, .top_k = 0, .top_p = 0.5f, .min_p = 0.01f},
        {.temperature = 2.0f, .top_k = 0, .top_p = 0.99f, .min_p = 0.0f},
        {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f},  // every token a candidate
        {.temperature = 0.9f, .top_k = 5, .top_p = 1.0f, .min_p = 0.0f},
        {.temperature = 0.5f, .top_k = 3000, .top_p = 0.8f, .min_p = 0.0f},
        {.repetition_penalty = 1.3f, .presence_penalty = 0.5f, .frequency_penalty = 0.7f},
        {.temperature = 0.0f, .repetition_penalty = 1.5f},
        {.temperature = 0.7f, .top_k = 0, .top_p = 0.9f, .repetition_penalty = 1.2f, .frequency_penalty = 0.3f,
         .penalty_last_n = -1},
    };
}

// Logits as a language model's: a normal body, a few tokens far above it; coarse: on a 0.25 grid,
// so that many tie.
std::vector<float> random_logits(std::mt19937& rng, int64_t n_vocab, bool coarse, float spread) {
    std::normal_distribution<float> body(0.0f, spread);
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    for (float& l : logits) l = coarse ? std::round(body(rng) * 4.0f) / 4.0f : body(rng);
    for (int i = 0; i < 10; ++i) logits[static_cast<size_t>(rng() % n_vocab)] += 10.0f;
    return logits;
}

bool by_id(const LogitCandidate& a, const LogitCandidate& b) { return a.id < b.id; }

class GpuSampling : public test::GpuOpTest {
protected:
    void SetUp() override {
        test::GpuOpTest::SetUp();
        if (IsSkipped()) return;
        for (const int64_t n : {int64_t{5000}, int64_t{151936}}) {
            selectors_.emplace_back();
            ASSERT_TRUE(selectors_.back().allocate(ctx(), n));
        }
    }
    void TearDown() override {
        selectors_.clear();  // their buffers go back to the fixture's pool before it is destroyed
        test::GpuOpTest::TearDown();
    }
    gpu::GpuCandidateSelector& selector(int64_t n_vocab) { return selectors_[n_vocab == 5000 ? 0 : 1]; }
    std::vector<gpu::GpuCandidateSelector> selectors_;
};

TEST_F(GpuSampling, ReductionMatchesTheHost) {
    std::mt19937 rng(5);
    const auto all = settings();
    for (size_t si = 0; si < all.size(); ++si) {
        for (const int64_t n_vocab : {int64_t{5000}, int64_t{151936}}) {
            for (const bool coarse : {false, true}) {
                SCOPED_TRACE(testing::Message() << "setting " << si << ", vocabulary " << n_vocab << (coarse ? ", ties" : ""));
                Sampler sampler(all[si]);
                for (int t = 0; t < 80; ++t) sampler.accept(static_cast<int32_t>(rng() % n_vocab));
                const std::vector<float> logits = random_logits(rng, n_vocab, coarse, si == 5 ? 0.5f : 3.0f);
                const CandidateQuery query = sampler.query(n_vocab);
                CandidateSet want, got;
                std::vector<float> scratch;
                select_candidates(logits.data(), n_vocab, query, want, scratch);
                float* row = to_device(logits);
                selector(n_vocab).select(row, query, got, ctx());

                EXPECT_EQ(got.top_k, want.top_k);
                EXPECT_EQ(got.top, want.top);
                if (want.sum == 0.0) EXPECT_EQ(got.sum, 0.0);
                else EXPECT_NEAR(got.sum / want.sum, 1.0, 1e-6);
                ASSERT_EQ(got.tokens.size(), want.tokens.size());
                std::sort(got.tokens.begin(), got.tokens.end(), by_id);
                std::sort(want.tokens.begin(), want.tokens.end(), by_id);
                for (size_t i = 0; i < want.tokens.size(); ++i) {
                    ASSERT_EQ(got.tokens[i].id, want.tokens[i].id) << "candidate " << i;
                    ASSERT_EQ(got.tokens[i].logit, want.tokens[i].logit) << "token " << want.tokens[i].id;
                }
                const std::vector<float> after = from_device(row, logits.size());
                EXPECT_EQ(std::memcmp(after.data(), logits.data(), logits.size() * sizeof(float)), 0)
                    << "the penalized logits were not restored";
            }
        }
    }
}

TEST_F(GpuSampling, DrawsWhatSortingEveryTokenDraws) {
    std::mt19937 rng(11);
    const auto all = settings();
    for (size_t si = 0; si < all.size(); ++si) {
        for (const int64_t n_vocab : {int64_t{5000}, int64_t{151936}}) {
            SamplingParams p = all[si];
            p.seed = 3 + si;
            Sampler device_sampler(p);
            test::SortEverything reference(p);
            for (int step = 0; step < 12; ++step) {
                const std::vector<float> logits = random_logits(rng, n_vocab, step % 2 == 1, si == 5 ? 0.5f : 3.0f);
                CandidateSet set;
                selector(n_vocab).select(to_device(logits), device_sampler.query(n_vocab), set, ctx());
                const int32_t a = device_sampler.choose(set);
                const int32_t b = reference.sample(logits.data(), n_vocab);
                ASSERT_EQ(a, b) << "setting " << si << ", vocabulary " << n_vocab << ", step " << step;
                device_sampler.accept(a);
                reference.history.push_back(b);
            }
        }
    }
}

TEST_F(GpuSampling, PenaltiesOfEveryTokenFitTheBuffers) {
    // penalty_last_n -1 over a long history: every token of the vocabulary can be penalized.
    const int64_t n_vocab = 5000;
    Sampler sampler(SamplingParams{.temperature = 0.0f, .repetition_penalty = 2.0f, .penalty_last_n = -1});
    for (int32_t t = 0; t < n_vocab; ++t) sampler.accept(t);
    sampler.accept(7);
    std::mt19937 rng(2);
    const std::vector<float> logits = random_logits(rng, n_vocab, false, 3.0f);
    CandidateSet want, got;
    std::vector<float> scratch;
    const CandidateQuery query = sampler.query(n_vocab);
    ASSERT_EQ(query.penalized_ids.size(), static_cast<size_t>(n_vocab));
    select_candidates(logits.data(), n_vocab, query, want, scratch);
    selector(n_vocab).select(to_device(logits), query, got, ctx());
    ASSERT_EQ(got.tokens.size(), 1u);
    EXPECT_EQ(got.tokens[0].id, want.tokens[0].id);
    EXPECT_EQ(got.tokens[0].logit, want.tokens[0].logit);
}

TEST(GpuSamplingBuffers, AreWhatThePlanCounts) {
    // plan/allocations.h's gpu_sampling_bytes is what the selector allocates at load.
    EXPECT_EQ(gpu::GpuCandidateSelector::device_bytes(151936), 32u + 151936u * 20u);
}

#else
TEST(GpuSampling, SkippedWithoutGpuSupport) { GTEST_SKIP() << "built without a GPU backend"; }
#endif

class GpuSessionSampling : public test::GpuFixtureModel {};

// Two sessions on one GPU model, one keeping its logits on the device: the same prompt and
// sampler settings give the same tokens, and the device-kept row equals the copied one.
TEST_P(GpuSessionSampling, DeviceSamplingGeneratesWhatHostSamplingDoes) {
    auto model = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(model) << model.status().message();
    Model& m = **model;
    ASSERT_TRUE(m.keeps_logits_on_device());
    const int64_t vocab = m.config().n_vocab;
    std::vector<int32_t> prompt;
    for (int32_t i = 0; i < 12; ++i) prompt.push_back(static_cast<int32_t>((i * 37 + 5) % vocab));
    for (const SamplingParams& p : {SamplingParams{.temperature = 0.0f},
                                    SamplingParams{.temperature = 0.9f, .seed = 17},
                                    SamplingParams{.temperature = 1.1f, .top_k = 0, .top_p = 0.9f,
                                                   .repetition_penalty = 1.2f, .seed = 23}}) {
        Session host(m, SessionOptions{.n_ctx = 64, .n_batch = 8}, pool);
        Session device(m, SessionOptions{.n_ctx = 64, .n_batch = 8, .logits_on_device = true}, pool);
        const std::vector<int32_t> host_tokens = test::generate_tokens(host, p, prompt, 10);
        EXPECT_EQ(test::generate_tokens(device, p, prompt, 10), host_tokens) << "temperature " << p.temperature;
        // The last rows: the host session's copy and the device session's row fetched on demand.
        std::vector<float> host_row(host.logits(), host.logits() + vocab);
        std::vector<float> device_row(device.logits(), device.logits() + vocab);
        EXPECT_EQ(device_row, host_row);
    }
}

INSTANTIATE_TEST_SUITE_P(Models, GpuSessionSampling, ::testing::Values("qwen3moe", "qwen3next"));

}  // namespace
}  // namespace strata
