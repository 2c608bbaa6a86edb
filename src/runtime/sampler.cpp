#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

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

int32_t Sampler::sample(const float* logits, int64_t n_vocab) {
    candidates_.resize(static_cast<size_t>(n_vocab));
    for (int64_t i = 0; i < n_vocab; ++i) candidates_[static_cast<size_t>(i)] = {static_cast<int32_t>(i), logits[i], 0.0f};

    // Penalties over the recent window.
    const bool penalize = params_.repetition_penalty != 1.0f || params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
    if (penalize && !history_.empty()) {
        size_t window = params_.penalty_last_n < 0 ? history_.size()
                                                   : std::min(history_.size(), static_cast<size_t>(params_.penalty_last_n));
        std::unordered_map<int32_t, int> counts;
        for (size_t i = history_.size() - window; i < history_.size(); ++i) counts[history_[i]]++;
        for (const auto& [id, count] : counts) {
            if (id < 0 || id >= n_vocab) continue;
            float& l = candidates_[static_cast<size_t>(id)].logit;
            l = l > 0 ? l / params_.repetition_penalty : l * params_.repetition_penalty;
            l -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
        }
    }

    if (params_.temperature == 0.0f) {
        auto best = std::max_element(candidates_.begin(), candidates_.end(),
                                     [](const Candidate& a, const Candidate& b) { return a.logit < b.logit; });
        return best->id;
    }

    // Sort by logit (descending), keeping the first top_k.
    auto by_logit = [](const Candidate& a, const Candidate& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); };
    size_t keep = candidates_.size();
    if (params_.top_k > 0) keep = std::min(keep, static_cast<size_t>(params_.top_k));
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<long>(keep), candidates_.end(), by_logit);
    candidates_.resize(keep);

    // Softmax at the temperature.
    const float max = candidates_[0].logit;
    double sum = 0.0;
    for (auto& c : candidates_) {
        c.p = std::exp((c.logit - max) / params_.temperature);
        sum += c.p;
    }
    for (auto& c : candidates_) c.p = static_cast<float>(c.p / sum);

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
