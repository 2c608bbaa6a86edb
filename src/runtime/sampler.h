#pragma once
// Turns logits into the next token: penalties, then temperature, top-k, top-p and min-p
// filtering, then a seeded draw (or arg-max when temperature is 0). The order and formulas are
// those of llama.cpp's default sampler chain and the OpenAI API's penalty definitions.
//
// It runs on the host for every generated token, over the whole vocabulary (152k logits for
// Qwen3), so it never sorts more than it must: top-k selects its k in one linear pass, and without
// top-k the min-p floor, or a logit floor under which the remaining probability cannot matter to
// top-p, bounds what is sorted (bench/sampler_bench.cpp). The result is the one of sorting every
// token (tests/runtime/sampler_test.cpp compares with that on random vocabularies).
//
//   Sampler s(SamplingParams{.temperature = 0.7f, .top_p = 0.9f, .seed = 42});
//   int32_t next = s.sample(logits, n_vocab, history);
//   s.accept(next);

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace strata {

struct SamplingParams {
    float temperature = 0.8f;        // 0: greedy (arg-max)
    int32_t top_k = 40;              // 0: off
    float top_p = 0.95f;             // 1: off
    float min_p = 0.05f;             // 0: off; keep tokens with p >= min_p * p_max
    float repetition_penalty = 1.0f; // 1: off; divides positive logits of seen tokens, multiplies negative ones
    float presence_penalty = 0.0f;   // subtracted once from every token seen
    float frequency_penalty = 0.0f;  // subtracted per occurrence
    int32_t penalty_last_n = 64;     // how many recent tokens the penalties look at (-1: all)
    uint64_t seed = 0xC0FFEE;

    Status validate() const;
};

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);

    // Picks the next token from n_vocab logits (the logits are not modified).
    int32_t sample(const float* logits, int64_t n_vocab);
    // Records a token of the context (prompt or generated) for the penalties.
    void accept(int32_t token);
    void reset();

private:
    struct Candidate {
        int32_t id;
        float logit;
        float p;
    };
    // The logits after the penalties, in adjusted_ (or `logits` itself when none apply).
    const float* penalized(const float* logits, int64_t n_vocab);
    // candidates_ = the tokens that can survive top-k, min-p and top-p, in the order of the full
    // sort (logit descending, id ascending), with their probabilities; sum = Σ exp((l - max) / T)
    // over the set the probabilities are normalized by (the top k, or the whole vocabulary).
    void gather_candidates(const float* logits, int64_t n_vocab);

    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<int32_t> history_;
    std::vector<Candidate> candidates_;  // reused across calls
    std::vector<float> adjusted_;        // penalized logits, reused
    std::vector<float> work_;            // selection scratch, reused
};

}  // namespace strata
