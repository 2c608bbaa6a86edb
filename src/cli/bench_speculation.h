#pragma once
// `strata bench --draft ...`: greedy generation of the same text with and without speculative
// decoding, timed alike, so that the speedup, the acceptance and the tokens per verification pass
// are read side by side (and the tokens compared: speculation must not change them).
//
// Random weights predict nothing, so a synthetic model accepts no lookup drafts; `forced_acceptance`
// replaces the drafter with one that proposes the plain run's own tokens, each right with that
// probability (a fixed pseudo-random choice per position), for the verification's cost at a
// chosen acceptance.

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "core/thread_pool.h"
#include "model/model.h"
#include "runtime/speculative.h"

namespace strata::cli {

struct SpeculationBenchOptions {
    std::vector<int32_t> prompt;
    int64_t n_gen = 128;
    int repetitions = 3;  // measured runs, after one warm-up
    int64_t n_batch = 512;
    SpeculationOptions speculation;
    double forced_acceptance = -1.0;  // < 0: the drafter's own guesses
};

struct SpeculationBenchResult {
    std::vector<double> plain_rates, speculative_rates;  // tokens per second per repetition
    SpeculationStats stats;                               // over the measured repetitions
    int64_t differing_runs = 0;  // repetitions whose tokens differ from plain decoding's (should be 0)
    int64_t final_draft_length = 0;
    // The last run's estimates of a pass of n = 1 .. k_max + 1 tokens, in seconds (rollback included).
    std::vector<double> pass_seconds;
    nlohmann::ordered_json json() const;
    std::string describe(const std::string& name) const;
};

Result<SpeculationBenchResult> bench_speculation(Model& model, ThreadPool& pool, const SpeculationBenchOptions& options);

}  // namespace strata::cli
