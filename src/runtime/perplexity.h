#pragma once
// Perplexity of a model on a text: how well it predicts each token from the ones before it.
// Windowing (shared with tools/builtin_model/train.py, so numbers compare across the two): the
// text's ids are cut into consecutive chunks of ctx-1 tokens, each chunk runs from an empty
// context as [BOS] + chunk (no BOS when the model has none: then chunks are ctx tokens and the
// first of each is not scored), and every scored token's negative log-likelihood is averaged.
//
//   PerplexityOptions opt{.ctx = 512};
//   STRATA_ASSIGN_OR_RETURN(PerplexityResult r, compute_perplexity(model, ids, tokenizer.bos_id(), opt, pool));
//   fmt::print("ppl {:.4f} over {} tokens\n", r.perplexity(), r.n_scored);

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "model/model.h"

namespace strata {

struct PerplexityOptions {
    int64_t ctx = 512;      // positions per window, BOS included
    int64_t n_batch = 512;  // tokens per forward pass within a window
    // Called after each window with (windows done, windows in all); may be empty.
    std::function<void(int64_t, int64_t)> progress;
};

struct PerplexityResult {
    double nll_sum = 0.0;   // natural log
    int64_t n_scored = 0;   // tokens predicted
    int64_t n_windows = 0;
    double mean_nll() const { return n_scored ? nll_sum / double(n_scored) : 0.0; }
    double perplexity() const { return std::exp(mean_nll()); }
};

// `bos`: the BOS id, or a negative value when the model has none.
Result<PerplexityResult> compute_perplexity(Model& model, const std::vector<int32_t>& ids, int32_t bos,
                                            const PerplexityOptions& options, ThreadPool& pool);

}  // namespace strata
