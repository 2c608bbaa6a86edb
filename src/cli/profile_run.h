#pragma once
// The forward passes of `strata profile`: each prompt from position 0 in a fresh context, in
// chunks of n_batch tokens, then up to n_generate greedy tokens (argmax, stopping at the end of
// generation), every pass with the expert source set so it sees the routing. Greedy keeps a
// profile reproducible: the same prompts give the same counts.
//
//   ProfileRunOptions o{.n_ctx = 4096, .n_batch = 512};
//   STRATA_ASSIGN_OR_RETURN(ProfileRunTotals t, run_profile_prompts(*lm, prompts, counter, o, pool, on_progress));

#include <cstdint>
#include <functional>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "cli/profile_prompts.h"
#include "model/blocks/blocks.h"
#include "runtime/engine.h"

namespace strata::cli {

struct ProfileRunOptions {
    int64_t n_ctx = 4096;               // positions per prompt (prompt + generated)
    int64_t n_batch = 512;              // prompt tokens per forward pass
    int64_t max_prompt_tokens = 0;      // longer prompts are cut to their first N tokens; 0: n_ctx
    int64_t n_generate = 0;             // greedy tokens generated after each prompt
};

struct ProfileRunTotals {
    uint64_t prompts = 0;
    uint64_t tokens = 0;            // run through the model, prompt and generated
    uint64_t generated_tokens = 0;
    uint64_t truncated_prompts = 0; // cut to fit max_prompt_tokens or the context
};

// Called after every forward pass with the totals so far; returning false stops the run there
// (what ran is returned).
using ProfileProgress = std::function<bool(const ProfileRunTotals&)>;

Result<ProfileRunTotals> run_profile_prompts(const Engine& lm, const std::vector<ProfilePrompt>& prompts,
                                             MoeExpertSource& source, const ProfileRunOptions& options,
                                             CpuContext& ctx, const ProfileProgress& progress);

}  // namespace strata::cli
