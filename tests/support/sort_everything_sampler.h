#pragma once
// The sampler's definition, sorting every token: penalties, then the k largest logits (ties by
// id), the softmax at the temperature over them (over every token without top-k), min-p and top-p
// on that order, and the draw walking it. runtime/sampler.h selects and sorts only what can
// survive, on the host or with the GPU's reduction; it must draw the same tokens
// (tests/runtime/sampler_test.cpp, tests/gpu/sampling_gpu_test.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "runtime/sampler.h"

namespace strata::test {

struct SortEverything {
    explicit SortEverything(const SamplingParams& p) : params(p), rng(p.seed) {}
    SamplingParams params;
    std::mt19937_64 rng;
    std::vector<int32_t> history;

    int32_t sample(const float* logits, int64_t n_vocab) {
        struct C {
            int32_t id;
            float logit;
            float p;
        };
        std::vector<C> c(static_cast<size_t>(n_vocab));
        for (int64_t i = 0; i < n_vocab; ++i) c[static_cast<size_t>(i)] = {static_cast<int32_t>(i), logits[i], 0.0f};
        if (params.repetition_penalty != 1.0f || params.presence_penalty != 0.0f || params.frequency_penalty != 0.0f) {
            const size_t window = params.penalty_last_n < 0 ? history.size()
                                                            : std::min(history.size(), static_cast<size_t>(params.penalty_last_n));
            std::map<int32_t, int> counts;
            for (size_t i = history.size() - window; i < history.size(); ++i) counts[history[i]]++;
            for (const auto& [id, count] : counts) {
                float& l = c[static_cast<size_t>(id)].logit;
                l = l > 0 ? l / params.repetition_penalty : l * params.repetition_penalty;
                l -= static_cast<float>(count) * params.frequency_penalty + params.presence_penalty;
            }
        }
        if (params.temperature == 0.0f) {
            return std::max_element(c.begin(), c.end(), [](const C& a, const C& b) { return a.logit < b.logit; })->id;
        }
        std::sort(c.begin(), c.end(), [](const C& a, const C& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); });
        if (params.top_k > 0 && static_cast<size_t>(params.top_k) < c.size()) c.resize(static_cast<size_t>(params.top_k));
        const float max = c[0].logit;
        double sum = 0.0;
        for (auto& x : c) {
            x.p = std::exp((x.logit - max) / params.temperature);
            sum += x.p;
        }
        for (auto& x : c) x.p = static_cast<float>(x.p / sum);
        if (params.min_p > 0.0f) {
            const float floor = params.min_p * c[0].p;
            size_t n = 1;
            while (n < c.size() && c[n].p >= floor) ++n;
            c.resize(n);
        }
        if (params.top_p < 1.0f) {
            double cum = 0.0;
            size_t n = 0;
            while (n < c.size()) {
                cum += c[n].p;
                ++n;
                if (cum >= params.top_p) break;
            }
            c.resize(n);
        }
        double total = 0.0;
        for (const auto& x : c) total += x.p;
        std::uniform_real_distribution<double> uniform(0.0, total);
        double r = uniform(rng);
        for (const auto& x : c) {
            r -= x.p;
            if (r <= 0.0) return x.id;
        }
        return c.back().id;
    }
};

}  // namespace strata::test
