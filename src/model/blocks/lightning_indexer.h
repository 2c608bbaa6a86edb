#pragma once
// DeepSeek-V4's lightning indexer (HF DeepseekV4Indexer / DeepseekV4IndexerScorer; NEW_ARCHS.md
// §B1.4): which compressed entries a query of a CSA layer attends to. The query's indexer heads
// q_h score every entry key K_w it may see (w < (pos + 1) / ratio):
//   score(w) = Σ_h weight_h · relu(q_h · K_w) · scale
// and the best k are kept (all of them when fewer are visible).
//
//   IndexScoreScratch scratch;
//   scratch.reserve(n_ctx / ratio);  // once, so that decode steps never grow it
//   int64_t kept = lightning_indexer_top_k(q, weights, n_head, dim, keys, n_visible, k, scale, picks, scratch);

#include <cstdint>

#include "model/blocks/index_score_scratch.h"

namespace strata {

// q: n_head rows of dim; weights: n_head (already scaled); keys: n_visible rows of dim.
// Writes the kept entries' indices to `picks` in ascending order and returns their count,
// min(k, n_visible). Ties keep the lower index.
int64_t lightning_indexer_top_k(const float* q, const float* weights, int64_t n_head, int64_t dim, const float* keys,
                                int64_t n_visible, int64_t k, float scale, int64_t* picks,
                                IndexScoreScratch& scratch);

}  // namespace strata
