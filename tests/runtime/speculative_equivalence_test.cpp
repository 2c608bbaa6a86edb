// Speculative decoding yields plain decoding's tokens on every model, for k = 1..4, with prompt
// lookup and with scripted drafts that are right and wrong in a fixed pattern (so every count of
// accepted drafts happens), without and with a repetition penalty (the penalties of a position see
// the drafts accepted before it): greedy, and sampled with the same seed (the verification draws
// each position's token with the random numbers plain decoding uses there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/speculative.h"
#include "runtime/speculative_models.h"

namespace strata {
namespace {

// Proposes plain decoding's own continuation, with every third position's token (by default)
// replaced by another: drafts right up to a point, then wrong.
class ScriptedDrafter : public Drafter {
public:
    // Every `wrong_every`-th position (0: none) drafts another token.
    ScriptedDrafter(std::vector<int32_t> expected, size_t prompt_size, int32_t n_vocab, size_t wrong_every = 3)
        : expected_(std::move(expected)), prompt_size_(prompt_size), n_vocab_(n_vocab), wrong_every_(wrong_every) {}
    std::string_view name() const override { return "scripted"; }
    void draft(std::span<const int32_t> context, int64_t max, std::vector<int32_t>& out) override {
        out.clear();
        for (size_t p = context.size() - prompt_size_; p < expected_.size() && static_cast<int64_t>(out.size()) < max; ++p) {
            const int32_t t = expected_[p];
            out.push_back(wrong_every_ > 0 && p % wrong_every_ == wrong_every_ - 1 ? (t + 1) % n_vocab_ : t);
        }
    }

private:
    std::vector<int32_t> expected_;
    size_t prompt_size_;
    int32_t n_vocab_;
    size_t wrong_every_;
};

struct Decoded {
    std::vector<int32_t> tokens;
    int64_t n_past = 0;
    std::vector<float> logits;
    SpeculationStats stats;
};

constexpr int64_t kGenerate = 24;

Decoded decode(Model& model, ThreadPool& pool, const std::vector<int32_t>& prompt, const SamplingParams& params,
               Speculation* speculation) {
    Session session(model, SessionOptions{.n_ctx = 96, .n_batch = 8}, pool);
    EXPECT_TRUE(session.append(prompt));
    Sampler sampler(params);
    for (int32_t t : prompt) sampler.accept(t);
    Decoded d;
    auto full = decode_tokens(session, sampler, speculation, kGenerate, [&](int32_t t) {
        d.tokens.push_back(t);
        return TokenVerdict::Continue;
    });
    EXPECT_TRUE(full) << full.status().message();
    d.n_past = session.n_past();
    d.logits.assign(session.logits(), session.logits() + session.n_vocab());
    if (speculation) d.stats = speculation->stats();
    return d;
}

class SpeculativeDecoding : public ::testing::TestWithParam<std::string> {};

TEST_P(SpeculativeDecoding, YieldsPlainDecodingsTokens) {
    const std::string path = test::speculative_model_path(GetParam());
    STRATA_SKIP_IF_MISSING(path);
    test::OpenedModel m = test::open_speculative_test_model(GetParam());
    ASSERT_TRUE(m.model);
    Model& model = *m.model;
    const int32_t n_vocab = static_cast<int32_t>(model.config().n_vocab);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    // A prompt that repeats itself, so that lookup finds n-grams to propose.
    std::vector<int32_t> prompt;
    for (int rep = 0; rep < 3; ++rep) {
        for (int32_t t : {5, 17, 99, 300, 41, 8, 77}) prompt.push_back(t % n_vocab);
    }
    int64_t accepted_somewhere = 0;
    const SamplingParams settings[] = {
        {.temperature = 0.0f},
        {.temperature = 0.0f, .repetition_penalty = 1.3f, .penalty_last_n = 16},
        {.temperature = 0.8f, .top_k = 20, .top_p = 0.95f, .min_p = 0.02f, .seed = 7},
        {.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .repetition_penalty = 1.2f, .presence_penalty = 0.4f,
         .seed = 11},
    };
    for (const SamplingParams& params : settings) {
        const Decoded plain = decode(model, pool, prompt, params, nullptr);
        ASSERT_EQ(static_cast<int64_t>(plain.tokens.size()), kGenerate);
        for (int64_t k = 1; k <= 4; ++k) {
            for (bool scripted : {false, true}) {
                SCOPED_TRACE("k " + std::to_string(k) + (scripted ? " scripted" : " lookup") + ", temperature " +
                             std::to_string(params.temperature) + ", repetition " + std::to_string(params.repetition_penalty));
                const SpeculationOptions options{.mode = DraftMode::Lookup, .k_max = k};
                Speculation spec = scripted ? Speculation(options, std::make_unique<ScriptedDrafter>(plain.tokens, prompt.size(), n_vocab))
                                            : Speculation(options);
                const Decoded got = decode(model, pool, prompt, params, &spec);
                EXPECT_EQ(got.tokens, plain.tokens);
                EXPECT_EQ(got.n_past, plain.n_past);
                double diff = 0;
                for (size_t i = 0; i < got.logits.size(); ++i) diff = std::max(diff, std::abs(double(got.logits[i]) - plain.logits[i]));
                EXPECT_LT(diff, 1e-3) << "the logits after the last token";
                if (scripted) {
                    EXPECT_GT(got.stats.passes, 0);
                    EXPECT_GT(got.stats.accepted, 0);
                    EXPECT_LT(got.stats.accepted, got.stats.drafted);
                }
                accepted_somewhere += got.stats.accepted;
            }
        }
    }
    EXPECT_GT(accepted_somewhere, 0);
}

// Stopping inside a verification: when the j-th token ends the generation (an end token or a stop
// string: not kept; the token limit: kept), the session holds what plain decoding leaves in it —
// the same tokens and the logits after them — for every j, so a next turn continues alike.
TEST_P(SpeculativeDecoding, StopsWhereAndAsPlainDecodingStops) {
    const std::string path = test::speculative_model_path(GetParam());
    STRATA_SKIP_IF_MISSING(path);
    test::OpenedModel m = test::open_speculative_test_model(GetParam());
    ASSERT_TRUE(m.model);
    Model& model = *m.model;
    const int32_t n_vocab = static_cast<int32_t>(model.config().n_vocab);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    std::vector<int32_t> prompt;
    for (int32_t t : {5, 17, 99, 300, 41, 8, 77}) prompt.push_back(t % n_vocab);
    const SamplingParams greedy{.temperature = 0.0f};
    const Decoded reference = decode(model, pool, prompt, greedy, nullptr);
    auto run = [&](Speculation* spec, int64_t stop_at, TokenVerdict how, std::vector<int32_t>& tokens, std::vector<float>& logits) {
        Session session(model, SessionOptions{.n_ctx = 96, .n_batch = 8}, pool);
        ASSERT_TRUE(session.append(prompt));
        Sampler sampler(greedy);
        int64_t n = 0;
        auto full = decode_tokens(session, sampler, spec, kGenerate, [&](int32_t) {
            return ++n == stop_at ? how : TokenVerdict::Continue;
        });
        ASSERT_TRUE(full);
        tokens = session.tokens();
        logits.assign(session.logits(), session.logits() + session.n_vocab());
    };
    for (TokenVerdict how : {TokenVerdict::StopDropping, TokenVerdict::StopKeeping}) {
        for (int64_t stop_at = 1; stop_at <= 9; ++stop_at) {
            SCOPED_TRACE("stop at token " + std::to_string(stop_at) + (how == TokenVerdict::StopDropping ? ", dropped" : ", kept"));
            std::vector<int32_t> want_tokens, got_tokens;
            std::vector<float> want_logits, got_logits;
            run(nullptr, stop_at, how, want_tokens, want_logits);
            // Drafts always right, so that the stop falls inside a verification pass.
            Speculation spec(SpeculationOptions{.mode = DraftMode::Lookup, .k_max = 4},
                             std::make_unique<ScriptedDrafter>(reference.tokens, prompt.size(), n_vocab, /*wrong_every=*/0));
            run(&spec, stop_at, how, got_tokens, got_logits);
            EXPECT_EQ(got_tokens, want_tokens);
            double diff = 0;
            for (size_t i = 0; i < got_logits.size(); ++i) diff = std::max(diff, std::abs(double(got_logits[i]) - want_logits[i]));
            EXPECT_LT(diff, 1e-3);
            if (stop_at > 1) {
                EXPECT_GT(spec.stats().accepted, 0) << "the stop falls inside a verification";
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Models, SpeculativeDecoding, ::testing::ValuesIn(test::speculative_test_models()),
                         [](const auto& param_info) { return test::model_fixture_label(param_info.param); });

}  // namespace
}  // namespace strata
