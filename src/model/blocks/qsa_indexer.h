#pragma once
// QSA's lightning indexer (qwen4exp, HF Qwen4ExpTextQSAIndexer): which keys each query of an
// attention layer reads. Every token's raw indexer key goes into the KV cache's index plane; a
// query at position p, which could see n = p + 1 positions, splits them into B = n / r complete
// blocks of r (the compress ratio) and a tail, scores each block
//   s_b = Σ_h relu(q_h · k̄_b) / sqrt(d),   k̄_b = rope(rmsnorm(mean of the block's raw keys), 4b)
// (q_h = rope(rmsnorm(q_h), p)), and reads the top_k / r best blocks (the lower index on ties)
// plus the tail. With B <= top_k / r it reads everything: dense causal attention.
//
//   QsaSelections sel;
//   qsa_select(w, cfg, h, batch, layer, ctx, sel);                  // stores the batch's index keys
//   store_and_attend(batch, layer, k, ..., ctx, sel.per_sequence());

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/cpu/cpu_context.h"
#include "backend/weight.h"
#include "model/config.h"

namespace strata {

struct Batch;

struct QsaIndexerWeights {
    Weight wq;              // indexer.q_proj [n_embd, n_head·head_dim]
    Weight wk;              // indexer.k_proj [n_embd, head_dim]: the one key head
    Weight q_norm, k_norm;  // indexer.q_norm, indexer.k_norm [head_dim] (the converter added the 1)
    explicit operator bool() const { return static_cast<bool>(wq); }
};

// Per sequence of a batch, the key ranges of each of its queries.
class QsaSelections {
public:
    std::span<const KeySelection> per_sequence() const { return views_; }

private:
    friend void qsa_select(const QsaIndexerWeights&, const ModelConfig&, const float*, const Batch&, int64_t,
                           CpuContext&, QsaSelections&);
    std::vector<std::vector<int64_t>> offsets_;
    std::vector<std::vector<KeyRange>> ranges_;
    std::vector<KeySelection> views_;
};

// h: the attention's input rows (normalized); stores each row's raw index key in its sequence's
// cache (KvCache::add_index_keys) and fills `out`.
void qsa_select(const QsaIndexerWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch, int64_t layer,
                CpuContext& ctx, QsaSelections& out);

// The selection rule for one query, exposed for tests and the GPU op's reference: block scores
// s[0..n_blocks) in, the kept blocks' ranges merged with the tail [tail_begin, n_visible) out.
void qsa_query_ranges(const float* block_scores, int64_t n_blocks, int64_t keep, int64_t ratio, int64_t n_visible,
                      std::vector<KeyRange>& out);

}  // namespace strata
