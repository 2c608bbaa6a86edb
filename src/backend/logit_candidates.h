#pragma once
// What a sampler needs of one row of logits, reduced where the logits are. The sampler
// (runtime/sampler.h) asks a CandidateQuery (its settings and the penalties of its history); a
// reduction over the vocabulary answers with a CandidateSet: every token that can survive the
// query's filters, with its penalized logit, and the two numbers the probabilities need from the
// rest of the vocabulary. The host does it over host logits (runtime/select_candidates.h); a GPU
// model does it on the device (backend/gpu/gpu_sampling.h), so that a few hundred candidates
// come back instead of the whole row (152k floats for Qwen3). The sampler then sorts, filters
// and draws on the host alike, so both give the same tokens.

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/host_device.h"

namespace strata {

struct CandidateQuery {
    float temperature = 0.8f;  // 0: greedy (the arg-max alone is returned)
    int32_t top_k = 0;         // 0: off
    float top_p = 1.0f;        // 1: off
    float min_p = 0.0f;        // 0: off
    float repetition_penalty = 1.0f;
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    // The tokens the penalties apply to: distinct ids inside the vocabulary, with how often each
    // occurs in the penalty window.
    std::vector<int32_t> penalized_ids;
    std::vector<int32_t> penalized_counts;

    // top-k applies when it keeps fewer tokens than the vocabulary holds.
    bool takes_top_k(int64_t n_vocab) const { return top_k > 0 && top_k < n_vocab; }
};

struct LogitCandidate {
    int32_t id = 0;
    float logit = 0.0f;  // after the penalties
};

struct CandidateSet {
    // A superset of the tokens the filters keep, in any order (the sampler sorts them). Greedy:
    // exactly one, the first largest logit.
    std::vector<LogitCandidate> tokens;
    // The k of top-k when the reduction applied it (the query's top_k, below the vocabulary's
    // size): the probabilities are then normalized over the k first of `tokens`. 0: not applied.
    int32_t top_k = 0;
    // Without top-k: the largest penalized logit of the vocabulary, and Σ exp((l − top) / T) over
    // the whole vocabulary, what the probabilities are normalized by.
    float top = 0.0f;
    double sum = 0.0;
};

// A penalized logit: repetition divides a positive logit and multiplies a negative one, then the
// frequency penalty is taken count times and the presence penalty once (OpenAI's definitions).
// Device code must not fuse the multiply-add (host code is built without FMA contraction), or a
// penalized token's logit would differ in its last bit.
inline float penalized_logit(float logit, int32_t count, float repetition, float presence, float frequency) {
    const float l = logit > 0 ? logit / repetition : logit * repetition;
    return l - (static_cast<float>(count) * frequency + presence);
}

// ---- the floors under which no token survives (host and device alike) ---------------------------
// Without top-k the reduction sums each token's probability mass into bands a quarter
// temperature wide below the top logit; the band where the mass passes top_p bounds where top-p's
// prefix can end. The floors are lowered by a margin for rounding: they only bound the candidate
// set, the sampler decides on the exact probabilities.
constexpr int kMassBands = 128;

STRATA_HOST_DEVICE inline int mass_band(float top, float logit, float temperature) {
    const float depth = (top - logit) / temperature * 4.0f;
    return depth < kMassBands - 1 ? static_cast<int>(depth) : kMassBands - 1;
}

STRATA_HOST_DEVICE inline float with_rounding_margin(float floor, float temperature) {
    return floor - (1e-3f * temperature + 1e-5f * fabsf(floor));
}

// The lower edge of the band where the cumulative mass passes top_p of `sum` (with 1e-6 to
// spare), or -inf when it never does before the last band.
STRATA_HOST_DEVICE inline float top_p_floor(const double* band_mass, double sum, float top, float temperature, float top_p) {
    double mass = 0.0;
    for (int band = 0; band < kMassBands - 1; ++band) {
        mass += band_mass[band];
        if (mass >= (static_cast<double>(top_p) + 1e-6) * sum) {
            return with_rounding_margin(top - static_cast<float>(band + 1) * temperature / 4.0f, temperature);
        }
    }
    return -INFINITY;
}

// min-p keeps p ≥ min_p · p_max, that is logits ≥ top + T · ln(min_p).
STRATA_HOST_DEVICE inline float min_p_floor(float top, float temperature, float min_p) {
    return with_rounding_margin(top + temperature * logf(min_p), temperature);
}

}  // namespace strata
