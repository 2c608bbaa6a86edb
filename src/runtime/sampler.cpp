#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/check.h"
#include "runtime/select_candidates.h"

namespace strata {

Status SamplingParams::validate() const {
    if (!(temperature >= 0.0f) || temperature > 100.0f) return Status::error("temperature: expected 0 to 100, got {}", temperature);
    if (top_k < 0) return Status::error("top_k: expected 0 (off) or more, got {}", top_k);
    if (!(top_p > 0.0f && top_p <= 1.0f)) return Status::error("top_p: expected a value in (0, 1], got {}", top_p);
    if (!(min_p >= 0.0f && min_p <= 1.0f)) return Status::error("min_p: expected a value in [0, 1], got {}", min_p);
    if (!(repetition_penalty > 0.0f)) return Status::error("repetition_penalty: expected a positive value, got {}", repetition_penalty);
    if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f)) return Status::error("presence_penalty: expected -2 to 2, got {}", presence_penalty);
    if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f)) return Status::error("frequency_penalty: expected -2 to 2, got {}", frequency_penalty);
    return Status::ok();
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

void Sampler::accept(int32_t token) { history_.push_back(token); }

void Sampler::reset() {
    history_.clear();
    rng_.seed(params_.seed);
}

CandidateQuery Sampler::query(int64_t n_vocab) const {
    CandidateQuery q{.temperature = params_.temperature,
                     .top_k = params_.top_k,
                     .top_p = params_.top_p,
                     .min_p = params_.min_p,
                     .repetition_penalty = params_.repetition_penalty,
                     .presence_penalty = params_.presence_penalty,
                     .frequency_penalty = params_.frequency_penalty,
                     .penalized_ids = {},
                     .penalized_counts = {}};
    const bool penalize = params_.repetition_penalty != 1.0f || params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
    if (!penalize || history_.empty()) return q;
    const size_t window = params_.penalty_last_n < 0 ? history_.size()
                                                     : std::min(history_.size(), static_cast<size_t>(params_.penalty_last_n));
    std::vector<int32_t> seen(history_.end() - static_cast<std::ptrdiff_t>(window), history_.end());
    std::sort(seen.begin(), seen.end());
    for (size_t i = 0; i < seen.size();) {
        size_t j = i;
        while (j < seen.size() && seen[j] == seen[i]) ++j;
        if (seen[i] >= 0 && seen[i] < n_vocab) {
            q.penalized_ids.push_back(seen[i]);
            q.penalized_counts.push_back(static_cast<int32_t>(j - i));
        }
        i = j;
    }
    return q;
}

namespace {
// The full sort's order: logit descending, then id ascending.
bool before(const LogitCandidate& a, const LogitCandidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}
}  // namespace

int32_t Sampler::sample(const float* logits, int64_t n_vocab) {
    select_candidates(logits, n_vocab, query(n_vocab), set_, adjusted_);
    return choose(set_);
}

int32_t Sampler::choose(CandidateSet& set) {
    STRATA_CHECK(!set.tokens.empty(), "a candidate set holds at least the largest logit");
    if (params_.temperature == 0.0f) return set.tokens.front().id;
    auto& tokens = set.tokens;
    // With top-k the probabilities are normalized over the k kept, else over the vocabulary.
    float top = set.top;
    double sum = set.sum;
    if (set.top_k > 0) {
        const size_t k = std::min(tokens.size(), static_cast<size_t>(set.top_k));
        std::partial_sort(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(k), tokens.end(), before);
        tokens.resize(k);
        top = tokens.front().logit;
    } else {
        std::sort(tokens.begin(), tokens.end(), before);
    }
    const float temperature = params_.temperature;
    // A token's unnormalized probability, computed as the full sort's softmax computes it.
    const auto weight = [&](float logit) -> float { return std::exp((logit - top) / temperature); };
    if (set.top_k > 0) {
        sum = 0.0;
        for (const LogitCandidate& c : tokens) sum += weight(c.logit);
    }
    candidates_.clear();
    for (const LogitCandidate& c : tokens) candidates_.push_back({c.id, c.logit, static_cast<float>(weight(c.logit) / sum)});

    // min-p: drop tokens less likely than min_p times the most likely one.
    if (params_.min_p > 0.0f) {
        const float floor = params_.min_p * candidates_[0].p;
        size_t n = 1;
        while (n < candidates_.size() && candidates_[n].p >= floor) ++n;
        candidates_.resize(n);
    }
    // top-p: the smallest prefix whose probability reaches top_p.
    if (params_.top_p < 1.0f) {
        double cum = 0.0;
        size_t n = 0;
        while (n < candidates_.size()) {
            cum += candidates_[n].p;
            ++n;
            if (cum >= params_.top_p) break;
        }
        candidates_.resize(n);
    }

    double total = 0.0;
    for (const auto& c : candidates_) total += c.p;
    std::uniform_real_distribution<double> uniform(0.0, total);
    double r = uniform(rng_);
    for (const auto& c : candidates_) {
        r -= c.p;
        if (r <= 0.0) return c.id;
    }
    return candidates_.back().id;
}

}  // namespace strata
