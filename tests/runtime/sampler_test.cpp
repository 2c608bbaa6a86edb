#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "runtime/sampler.h"
#include "support/sort_everything_sampler.h"

namespace strata {
namespace {

TEST(Sampler, GreedyPicksTheLargestLogit) {
    Sampler s(SamplingParams{.temperature = 0.0f});
    std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.9f};
    EXPECT_EQ(s.sample(logits.data(), 4), 1);
}

TEST(Sampler, TopKOneIsGreedyAtAnyTemperature) {
    Sampler s(SamplingParams{.temperature = 5.0f, .top_k = 1, .top_p = 1.0f, .min_p = 0.0f});
    std::vector<float> logits = {0.1f, 0.2f, 3.0f, 0.0f};
    for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(logits.data(), 4), 2);
}

TEST(Sampler, SameSeedSameSequence) {
    SamplingParams p{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 7};
    Sampler a(p), b(p);
    std::vector<float> logits(50);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(i % 7) * 0.3f;
    for (int i = 0; i < 100; ++i) EXPECT_EQ(a.sample(logits.data(), 50), b.sample(logits.data(), 50));
}

// With temperature 1 and no filters the draw follows softmax(logits): check frequencies.
TEST(Sampler, DrawsFollowTheSoftmax) {
    Sampler s(SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 1});
    std::vector<float> logits = {0.0f, std::log(3.0f)};  // probabilities 1/4 and 3/4
    int ones = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) ones += s.sample(logits.data(), 2);
    EXPECT_NEAR(static_cast<double>(ones) / n, 0.75, 0.015);
}

TEST(Sampler, TopPKeepsTheSmallestSufficientSet) {
    // probabilities ~ 0.64, 0.24, 0.09, 0.03: top_p 0.8 keeps the first two only.
    Sampler s(SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 0.8f, .min_p = 0.0f, .seed = 3});
    std::vector<float> logits = {3.0f, 2.0f, 1.0f, 0.0f};
    std::map<int, int> seen;
    for (int i = 0; i < 2000; ++i) seen[s.sample(logits.data(), 4)]++;
    EXPECT_GT(seen[0], 0);
    EXPECT_GT(seen[1], 0);
    EXPECT_EQ(seen.count(2) + seen.count(3), 0u);
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
    Sampler s(SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.5f, .seed = 3});
    std::vector<float> logits = {1.0f, 0.9f, -3.0f};  // token 2 is far below half the top probability
    for (int i = 0; i < 1000; ++i) EXPECT_NE(s.sample(logits.data(), 3), 2);
}

TEST(Sampler, PenaltiesFollowTheirDefinitions) {
    // Token 0 seen twice: repetition 2 halves its positive logit (4 -> 2), frequency 0.5 subtracts
    // 2 * 0.5, presence 0.6 subtracts 0.6: 2 - 1 - 0.6 = 0.4 < token 1's 1.0, so greedy picks 1.
    Sampler s(SamplingParams{.temperature = 0.0f, .repetition_penalty = 2.0f, .presence_penalty = 0.6f,
                             .frequency_penalty = 0.5f});
    s.accept(0);
    s.accept(0);
    std::vector<float> logits = {4.0f, 1.0f};
    EXPECT_EQ(s.sample(logits.data(), 2), 1);
    Sampler fresh(SamplingParams{.temperature = 0.0f});
    EXPECT_EQ(fresh.sample(logits.data(), 2), 0);
}

TEST(Sampler, DrawsWhatSortingEveryTokenDraws) {
    const SamplingParams settings[] = {
        {.temperature = 0.0f},
        {},  // T 0.8, top-k 40, top-p 0.95, min-p 0.05
        {.temperature = 0.7f, .top_k = 0, .top_p = 0.9f, .min_p = 0.0f},
        {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.05f},
        {.temperature = 1.3f, .top_k = 0, .top_p = 0.5f, .min_p = 0.01f},
        {.temperature = 2.0f, .top_k = 0, .top_p = 0.99f, .min_p = 0.0f},  // a flat tail: the floor must not cut
        {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f},
        {.temperature = 0.9f, .top_k = 5, .top_p = 1.0f, .min_p = 0.0f},
        {.temperature = 0.5f, .top_k = 3000, .top_p = 0.8f, .min_p = 0.0f},
        {.repetition_penalty = 1.3f, .presence_penalty = 0.5f, .frequency_penalty = 0.7f},
        {.temperature = 0.0f, .repetition_penalty = 1.5f},
    };
    std::mt19937 rng(99);
    for (size_t si = 0; si < std::size(settings); ++si) {
        for (const bool coarse : {false, true}) {  // coarse: logits on a 0.25 grid, many ties
            SamplingParams p = settings[si];
            p.seed = 7 + si;
            Sampler fast(p);
            test::SortEverything slow(p);
            const int64_t n_vocab = 5000;
            std::normal_distribution<float> body(0.0f, si == 5 ? 0.5f : 3.0f);
            for (int step = 0; step < 40; ++step) {
                std::vector<float> logits(static_cast<size_t>(n_vocab));
                for (float& l : logits) l = coarse ? std::round(body(rng) * 4.0f) / 4.0f : body(rng);
                for (int i = 0; i < 10; ++i) logits[static_cast<size_t>(rng() % n_vocab)] += 10.0f;
                const int32_t a = fast.sample(logits.data(), n_vocab);
                const int32_t b = slow.sample(logits.data(), n_vocab);
                ASSERT_EQ(a, b) << "setting " << si << (coarse ? " (ties)" : "") << ", step " << step;
                fast.accept(a);
                slow.history.push_back(b);
            }
        }
    }
}

TEST(SamplingParams, RejectsOutOfRangeValues) {
    EXPECT_FALSE(SamplingParams{.temperature = -1.0f}.validate());
    EXPECT_FALSE(SamplingParams{.top_p = 0.0f}.validate());
    EXPECT_FALSE(SamplingParams{.min_p = 1.5f}.validate());
    EXPECT_FALSE(SamplingParams{.presence_penalty = 3.0f}.validate());
    EXPECT_TRUE(SamplingParams{}.validate());
}

}  // namespace
}  // namespace strata
