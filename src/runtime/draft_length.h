#pragma once
// How many tokens to draft: speculation pays only when the tokens a verification pass yields
// outrun what the pass costs beyond a decode step (with experts offloaded, a pass of several
// tokens can cost several steps). This keeps two online estimates, fed by each step:
// - α, the chance that a draft is accepted given that the one before it was (counts with decay);
// - t(n), the seconds of a pass of n tokens, rollback included (per n, with decay; an n not
//   measured yet is extrapolated from the measured ones, optimistically at first so it is tried),
// and picks k in 0..k_max for the largest expected tokens per second,
//   E(k) / t(k + 1), with E(k) = 1 + α + … + α^k (tokens a pass of k drafts yields),
// against 1 / t(1) for plain decoding (k = 0). While k = 0 wins it still drafts one token every
// `probe_every` steps, so that a change of text (a quote begins) can turn speculation back on.
// Deterministic: it reads only what it is fed.
//
//   DraftLength length({.k_max = 4});
//   int64_t k = length.choose();
//   ... decode with up to k drafts ...
//   length.record(drafted, accepted, seconds);   // drafted == 0: a plain step

#include <cstdint>
#include <vector>

namespace strata {

struct DraftLengthOptions {
    int64_t k_max = 4;
    bool adaptive = true;       // false: always k_max
    int64_t probe_every = 64;   // steps between probes while k = 0 wins (one short pass per 64 steps)
    double decay = 0.97;        // weight of the past per recorded step
};

class DraftLength {
public:
    explicit DraftLength(const DraftLengthOptions& options);

    // The draft length for the next step.
    int64_t choose();
    // A step that verified `drafted` drafts (0: a plain decode step) of which the first
    // `accepted` passed, taking `seconds` (the pass and its rollback).
    void record(int64_t drafted, int64_t accepted, double seconds);

    double acceptance() const;                 // α
    double pass_seconds(int64_t n_tokens) const;  // t(n); 0 before anything was measured
    double expected_tokens(int64_t k) const;   // E(k)
    int64_t best() const;                      // the k choose() would take without probing

private:
    DraftLengthOptions options_;
    double accepted_ = 0.0, checked_ = 0.0;    // decayed counts of acceptance tests
    std::vector<double> seconds_, weight_;     // per pass size n = 1 .. k_max + 1, decayed sums
    int64_t steps_since_probe_ = 0;
};

}  // namespace strata
