#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <functional>

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

const float* Sampler::penalized(const float* logits, int64_t n_vocab) {
    const bool penalize = params_.repetition_penalty != 1.0f || params_.presence_penalty != 0.0f || params_.frequency_penalty != 0.0f;
    if (!penalize || history_.empty()) return logits;
    adjusted_.assign(logits, logits + n_vocab);
    const size_t window = params_.penalty_last_n < 0 ? history_.size()
                                                     : std::min(history_.size(), static_cast<size_t>(params_.penalty_last_n));
    std::unordered_map<int32_t, int> counts;
    for (size_t i = history_.size() - window; i < history_.size(); ++i) counts[history_[i]]++;
    for (const auto& [id, count] : counts) {
        if (id < 0 || id >= n_vocab) continue;
        float& l = adjusted_[static_cast<size_t>(id)];
        l = l > 0 ? l / params_.repetition_penalty : l * params_.repetition_penalty;
        l -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
    }
    return adjusted_.data();
}

namespace {
// The full sort's order: logit descending, then id ascending.
bool before(float la, int32_t ia, float lb, int32_t ib) { return la > lb || (la == lb && ia < ib); }

// The largest of n values, by eight independent lanes (std::max_element walks one dependent
// compare after another; this loop vectorizes).
float max_of(const float* x, size_t n) {
    float lanes[8];
    std::fill(lanes, lanes + 8, -INFINITY);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 8; ++j) lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
    }
    float top = *std::max_element(lanes, lanes + 8);
    for (; i < n; ++i) top = x[i] > top ? x[i] : top;
    return top;
}

// The first index of the largest value, as std::max_element gives it.
size_t first_max(const float* x, size_t n) {
    const float top = max_of(x, n);
    for (size_t k = 0; k < n; ++k) {
        if (x[k] == top) return k;
    }
    return 0;  // only NaNs: as max_element, the first
}
}  // namespace

void Sampler::gather_candidates(const float* logits, int64_t n_vocab) {
    candidates_.clear();
    const auto n = static_cast<size_t>(n_vocab);
    const bool top_k = params_.top_k > 0 && static_cast<size_t>(params_.top_k) < n;
    // The largest logit (with top-k: the first candidate, once they are sorted).
    float top = top_k ? 0.0f : max_of(logits, n);
    const float temperature = params_.temperature;
    // A token's unnormalized probability, computed as the full sort's softmax computes it.
    const auto weight = [&](float logit) -> float { return std::exp((logit - top) / temperature); };
    const auto worse = [](const Candidate& a, const Candidate& b) { return before(a.logit, a.id, b.logit, b.id); };
    double sum = 0.0;  // what the probabilities are normalized by
    if (top_k) {
        // The k first in the full sort's order are among the logits at or above the smallest of
        // k chunks' maxima (each chunk's maximum is such a logit: at least k of them), which is
        // near the k-th largest: two fast passes, then a sort of few.
        const auto k = static_cast<size_t>(params_.top_k);
        const size_t chunk = n / k;
        float floor = INFINITY;
        for (size_t c = 0; c < k; ++c) floor = std::min(floor, max_of(logits + c * chunk, chunk));
        for (size_t i = 0; i < n; ++i) {
            if (logits[i] >= floor) candidates_.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
        }
        std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<long>(k), candidates_.end(), worse);
        candidates_.resize(k);
        top = candidates_.front().logit;
    } else {
        // Normalized over every token; the tokens that cannot survive are not sorted.
        // - min-p keeps p ≥ min_p · p_max: logits at or above top + T · ln(min_p), less a margin
        //   (the probabilities decide at the edge, as in the full sort).
        // - top-p ends its prefix where the mass reaches top_p: the mass is summed in bands of a
        //   quarter temperature below the top, and the floor is the lower edge of the band where
        //   it passes top_p (with room to spare), so the prefix ends above the floor.
        constexpr int kBands = 128;
        double band_mass[kBands] = {};
        for (size_t i = 0; i < n; ++i) {
            const float e = weight(logits[i]);
            sum += e;
            const float depth = (top - logits[i]) / temperature * 4.0f;
            band_mass[depth < kBands - 1 ? static_cast<int>(depth) : kBands - 1] += e;
        }
        float floor = -INFINITY;
        if (params_.top_p < 1.0f) {
            double mass = 0.0;
            for (int band = 0; band < kBands - 1; ++band) {
                mass += band_mass[band];
                if (mass >= (params_.top_p + 1e-6) * sum) {
                    floor = top - static_cast<float>(band + 1) * temperature / 4.0f;
                    floor -= 1e-3f * temperature + 1e-5f * std::fabs(floor);  // the band edge's rounding
                    break;
                }
            }
        }
        if (params_.min_p > 0.0f) {
            float min_p_floor = top + temperature * std::log(params_.min_p);
            min_p_floor -= 1e-3f * temperature + 1e-5f * std::fabs(min_p_floor);
            floor = std::max(floor, min_p_floor);
        }
        for (size_t i = 0; i < n; ++i) {
            if (logits[i] >= floor) candidates_.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
        }
    }
    std::sort(candidates_.begin(), candidates_.end(), worse);
    if (top_k) {
        for (const Candidate& c : candidates_) sum += weight(c.logit);
    }
    for (Candidate& c : candidates_) c.p = static_cast<float>(weight(c.logit) / sum);
}

int32_t Sampler::sample(const float* raw_logits, int64_t n_vocab) {
    const float* logits = penalized(raw_logits, n_vocab);
    if (params_.temperature == 0.0f) return static_cast<int32_t>(first_max(logits, static_cast<size_t>(n_vocab)));
    gather_candidates(logits, n_vocab);

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
