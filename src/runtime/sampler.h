#pragma once
// Turns logits into the next token: penalties, then temperature, top-k, top-p and min-p
// filtering, then a seeded draw (or arg-max when temperature is 0). The order and formulas are
// those of llama.cpp's default sampler chain and the OpenAI API's penalty definitions.
//
// It runs for every generated token over the whole vocabulary (152k logits for Qwen3) in two
// parts, so that the first can run where the logits are (backend/logit_candidates.h):
// - a reduction to the candidates that can survive the filters (runtime/select_candidates.h on
//   the host, or the GPU's reduction: Session::sample), never a sort of the vocabulary;
// - choose(): the candidates sorted, normalized, filtered and drawn from, on the host.
// The result is the one of sorting every token (tests/runtime/sampler_test.cpp compares with that
// on random vocabularies, tests/gpu/sampling_gpu_test.cpp for the GPU's reduction).
//
//   Sampler s(SamplingParams{.temperature = 0.7f, .top_p = 0.9f, .seed = 42});
//   int32_t next = s.sample(logits, n_vocab);          // or session.sample(s)
//   s.accept(next);

#include <cstdint>
#include <random>
#include <vector>

#include "core/status.h"
#include "backend/logit_candidates.h"

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

    // Picks the next token from n_vocab host logits (the logits are not modified).
    int32_t sample(const float* logits, int64_t n_vocab);
    // The reduction's part: the settings and the penalties of the history, for n_vocab tokens.
    CandidateQuery query(int64_t n_vocab) const;
    // The host's part: picks the next token from a reduction's answer to query() (reorders `set`).
    int32_t choose(CandidateSet& set);
    // Records a token of the context (prompt or generated) for the penalties.
    void accept(int32_t token);
    void reset();

private:
    struct Candidate {
        int32_t id;
        float logit;
        float p;
    };

    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<int32_t> history_;
    CandidateSet set_;                   // sample()'s reduction, reused
    std::vector<Candidate> candidates_;  // reused across calls
    std::vector<float> adjusted_;        // penalized logits, reused
};

}  // namespace strata
