// Sampled speculative decoding draws from the target's distribution. A bigram model over six
// tokens (each row of logits depends on the last token only) makes the distribution of a three-
// token continuation computable exactly, here from the sampler's documented definitions
// (penalties over the window, temperature, top-k, min-p, top-p, in that order), written again in
// the test. Speculative decoding with fixed drafts, run with seeds 0 .. N - 1, must match it by a
// chi-square test at a fixed threshold; the same counts must fail against the distribution
// without the penalties, so the test can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "model/model.h"
#include "runtime/speculative.h"

namespace strata {
namespace {

constexpr int32_t kVocab = 6;
// Row t: the logits after token t. Chosen so that no probability sits on a filter's edge.
constexpr float kTable[kVocab][kVocab] = {
    {1.0f, 0.2f, 1.6f, 0.9f, -0.5f, 0.1f},  {0.3f, 1.2f, 0.8f, 2.0f, 0.0f, -1.0f},
    {1.5f, -0.3f, 0.4f, 1.1f, 0.7f, 0.2f},  {0.2f, 0.9f, 1.9f, -0.2f, 0.6f, 1.3f},
    {-0.4f, 1.4f, 0.5f, 0.8f, 1.0f, 0.1f},  {0.6f, 0.0f, 1.2f, 1.7f, -0.6f, 0.9f},
};

class BigramModel : public Model {
public:
    BigramModel() {
        config_.n_layer = 1;
        config_.n_vocab = kVocab;
        config_.n_head = config_.n_head_kv = 1;
        config_.head_dim_k = config_.head_dim_v = 1;
    }
    void forward(const Batch& batch, KvCache&, float* logits, LogitsFor which, CpuContext&) override {
        const int64_t first = which == LogitsFor::All ? 0 : batch.n_tokens - 1;
        for (int64_t t = first; t < batch.n_tokens; ++t) {
            std::copy_n(kTable[batch.tokens[t]], kVocab, logits + (t - first) * kVocab);
        }
    }
};

// Always the same drafts: often the likely tokens, sometimes filtered out.
class FixedDrafter : public Drafter {
public:
    std::string_view name() const override { return "fixed"; }
    void draft(std::span<const int32_t>, int64_t max, std::vector<int32_t>& out) override {
        out = {2, 3, 5};
        out.resize(static_cast<size_t>(std::min<int64_t>(max, 3)));
    }
};

// The target distribution of the next token, from the definitions.
std::vector<double> reference_distribution(int32_t last, const std::vector<int32_t>& history, const SamplingParams& sp,
                                           bool penalties) {
    std::vector<double> logit(kVocab);
    const size_t window = sp.penalty_last_n < 0 ? history.size() : std::min(history.size(), size_t(sp.penalty_last_n));
    std::vector<int> count(kVocab, 0);
    for (size_t i = history.size() - window; i < history.size(); ++i) ++count[size_t(history[i])];
    for (int32_t t = 0; t < kVocab; ++t) {
        float l = kTable[last][t];
        if (penalties && count[size_t(t)] > 0) {
            l = l > 0 ? l / sp.repetition_penalty : l * sp.repetition_penalty;
            l -= float(count[size_t(t)]) * sp.frequency_penalty + sp.presence_penalty;
        }
        logit[size_t(t)] = l;
    }
    std::vector<int32_t> order(kVocab);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logit[size_t(a)] > logit[size_t(b)]; });
    if (sp.top_k > 0 && sp.top_k < kVocab) order.resize(size_t(sp.top_k));
    std::vector<double> p;
    double sum = 0;
    for (int32_t t : order) sum += std::exp((logit[size_t(t)] - logit[size_t(order[0])]) / sp.temperature);
    for (int32_t t : order) p.push_back(std::exp((logit[size_t(t)] - logit[size_t(order[0])]) / sp.temperature) / sum);
    size_t keep = 1;
    while (keep < p.size() && p[keep] >= sp.min_p * p[0]) ++keep;
    double cum = 0;
    size_t n = 0;
    while (n < keep) {
        cum += p[n++];
        if (cum >= sp.top_p) break;
    }
    std::vector<double> out(kVocab, 0.0);
    double total = 0;
    for (size_t i = 0; i < n; ++i) total += p[i];
    for (size_t i = 0; i < n; ++i) out[size_t(order[i])] = p[i] / total;
    return out;
}

constexpr int kLength = 3;
const std::vector<int32_t> kPrompt = {0, 3, 2};

// P(continuation) for every continuation of kLength tokens, by its index in base kVocab.
std::vector<double> reference_joint(const SamplingParams& sp, bool penalties) {
    std::vector<double> joint(size_t(std::pow(kVocab, kLength)), 0.0);
    for (size_t code = 0; code < joint.size(); ++code) {
        std::vector<int32_t> history = kPrompt;
        double p = 1.0;
        size_t c = code;
        for (int i = 0; i < kLength; ++i, c /= kVocab) {
            const int32_t t = int32_t(c % kVocab);
            p *= reference_distribution(history.back(), history, sp, penalties)[size_t(t)];
            history.push_back(t);
        }
        joint[code] = p;
    }
    return joint;
}

// Counts of each continuation over seeds 0 .. n - 1, speculative or plain.
std::vector<int64_t> sample_counts(SamplingParams sp, int n, bool speculative, SpeculationStats* stats) {
    BigramModel model;
    ThreadPool pool(ThreadPool::Options{.threads = 1});
    std::vector<int64_t> counts(size_t(std::pow(kVocab, kLength)), 0);
    for (int seed = 0; seed < n; ++seed) {
        Session session(model, SessionOptions{.n_ctx = 16}, pool);
        EXPECT_TRUE(session.append(kPrompt));
        sp.seed = uint64_t(seed);
        Sampler sampler(sp);
        for (int32_t t : kPrompt) sampler.accept(t);
        Speculation spec(SpeculationOptions{.mode = DraftMode::Lookup, .k_max = 3}, std::make_unique<FixedDrafter>());
        size_t code = 0, scale = 1;
        auto full = decode_tokens(session, sampler, speculative ? &spec : nullptr, kLength, [&](int32_t t) {
            code += size_t(t) * scale;
            scale *= kVocab;
            return TokenVerdict::Continue;
        });
        EXPECT_TRUE(full && !*full);
        ++counts[code];
        if (stats) stats->add(spec.stats());
    }
    return counts;
}

// Pearson's statistic over the cells expected 5 or more times (the rest pooled into one), and
// its threshold: the chi-square quantile at p = 1e-4 for those degrees of freedom (Wilson-Hilferty).
struct ChiSquare {
    double statistic = 0, threshold = 0;
};

ChiSquare chi_square(const std::vector<int64_t>& counts, const std::vector<double>& p, int n) {
    ChiSquare r;
    double pooled_expected = 0, pooled_observed = 0;
    int cells = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
        const double e = p[i] * n;
        if (e < 5) {
            pooled_expected += e;
            pooled_observed += double(counts[i]);
            continue;
        }
        r.statistic += (double(counts[i]) - e) * (double(counts[i]) - e) / e;
        ++cells;
    }
    if (pooled_expected > 0) {
        r.statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
        ++cells;
    }
    const double df = cells - 1, z = 3.719;
    r.threshold = df * std::pow(1 - 2 / (9 * df) + z * std::sqrt(2 / (9 * df)), 3);
    return r;
}

struct Case {
    const char* name;
    SamplingParams params;
};

class SpeculativeSampling : public ::testing::TestWithParam<Case> {};

TEST_P(SpeculativeSampling, DrawsFromTheTargetDistribution) {
    const SamplingParams sp = GetParam().params;
    constexpr int kSeeds = 20000;
    const std::vector<double> want = reference_joint(sp, /*penalties=*/true);
    ASSERT_NEAR(std::accumulate(want.begin(), want.end(), 0.0), 1.0, 1e-9);

    // The reference is the sampler's: plain sampling matches it.
    const ChiSquare plain = chi_square(sample_counts(sp, kSeeds, false, nullptr), want, kSeeds);
    EXPECT_LT(plain.statistic, plain.threshold) << "plain sampling against the reference";

    SpeculationStats stats;
    const std::vector<int64_t> spec_counts = sample_counts(sp, kSeeds, true, &stats);
    const ChiSquare spec = chi_square(spec_counts, want, kSeeds);
    EXPECT_LT(spec.statistic, spec.threshold) << "speculative sampling against the reference";
    // Both outcomes of the acceptance test happened often.
    EXPECT_GT(stats.accepted, kSeeds / 4);
    EXPECT_GT(stats.drafted - stats.accepted, kSeeds / 4);

    // Power: the same counts against the distribution without penalties fail.
    const ChiSquare wrong = chi_square(spec_counts, reference_joint(sp, /*penalties=*/false), kSeeds);
    EXPECT_GT(wrong.statistic, wrong.threshold) << "the test cannot tell the penalties apart";
}

INSTANTIATE_TEST_SUITE_P(
    Settings, SpeculativeSampling,
    ::testing::Values(Case{"filters_and_penalties", SamplingParams{.temperature = 0.9f, .top_k = 5, .top_p = 0.9f, .min_p = 0.08f,
                                                                   .repetition_penalty = 1.4f, .presence_penalty = 0.3f,
                                                                   .frequency_penalty = 0.2f, .penalty_last_n = 3}},
                      Case{"penalties_only", SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f,
                                                            .repetition_penalty = 1.5f, .presence_penalty = 0.5f,
                                                            .frequency_penalty = 0.0f, .penalty_last_n = -1}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace strata
