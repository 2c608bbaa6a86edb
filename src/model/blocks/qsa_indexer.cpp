// The QSA indexer (qsa_indexer.h), after HF transformers' Qwen4ExpTextQSAIndexer.forward.
#include "model/blocks/qsa_indexer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/blocks/blocks.h"
#include "model/blocks/index_score_scratch.h"

namespace strata {

namespace {

// The indexer's working rows, kept per thread from call to call so that a decode step allocates
// nothing once warm.
struct IndexerScratch {
    std::vector<float> q, k, pooled;
    std::vector<int32_t> starts;
    std::vector<std::vector<KeyRange>> per_query;
};

IndexerScratch& indexer_scratch() {
    thread_local IndexerScratch scratch;
    return scratch;
}

// Per thread that scores queries: the block scores and their order.
IndexScoreScratch& query_scratch() {
    thread_local IndexScoreScratch scratch;
    return scratch;
}

// Pooled, normed and roped keys of blocks [0, n_blocks) of one sequence's cache: n_blocks rows of d.
void pooled_block_keys(const KvCache& kv, int64_t layer, int64_t n_blocks, int64_t ratio, const QsaIndexerWeights& w,
                       const ModelConfig& cfg, std::vector<float>& out, std::vector<int32_t>& starts) {
    const int64_t d = kv.index_key_dim();
    out.assign(static_cast<size_t>(n_blocks * d), 0.0f);
    starts.resize(static_cast<size_t>(n_blocks));
    for (int64_t b = 0; b < n_blocks; ++b) {
        float* row = out.data() + b * d;
        for (int64_t j = 0; j < ratio; ++j) {
            const float* key = kv.index_key(layer, b * ratio + j);
            for (int64_t i = 0; i < d; ++i) row[i] += key[i];
        }
        for (int64_t i = 0; i < d; ++i) row[i] /= static_cast<float>(ratio);
        starts[static_cast<size_t>(b)] = static_cast<int32_t>(b * ratio);
    }
    cpu_rms_norm(out.data(), w.k_norm.f32(), n_blocks, d, cfg.rms_eps, out.data());
    // The block's key is roped at the position of its first token.
    const RopeParams rope{cfg.rope_style, d, cfg.rope_dims, cfg.rope_base};
    cpu_rope(out.data(), n_blocks, 1, rope, starts.data());
}

}  // namespace

void qsa_query_ranges(const float* block_scores, int64_t n_blocks, int64_t keep, int64_t ratio, int64_t n_visible,
                      std::vector<KeyRange>& out) {
    out.clear();
    out.reserve(static_cast<size_t>(keep + 1));  // at most the kept blocks and the tail
    const int64_t tail = n_blocks * ratio;
    std::vector<int64_t>& order = query_scratch().order;
    if (keep >= n_blocks) {
        order.resize(static_cast<size_t>(n_blocks));
        std::iota(order.begin(), order.end(), 0);
    } else {
        order.resize(static_cast<size_t>(n_blocks));
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + keep, order.end(), [&](int64_t a, int64_t b) {
            return block_scores[a] > block_scores[b] || (block_scores[a] == block_scores[b] && a < b);
        });
        order.resize(static_cast<size_t>(keep));
        std::sort(order.begin(), order.end());
    }
    // Adjacent kept blocks (and the tail after the last block) merge into one range, so that a
    // query that keeps everything reads [0, n_visible) in one pass, as dense attention does.
    for (int64_t b : order) {
        if (!out.empty() && out.back().end == b * ratio) out.back().end = (b + 1) * ratio;
        else out.push_back({b * ratio, (b + 1) * ratio});
    }
    if (tail < n_visible) {
        if (!out.empty() && out.back().end == tail) out.back().end = n_visible;
        else out.push_back({tail, n_visible});
    }
}

void qsa_select(const QsaIndexerWeights& w, const ModelConfig& cfg, const float* h, const Batch& batch, int64_t layer,
                CpuContext& ctx, QsaSelections& out) {
    const int64_t n = batch.n_tokens, n_head = cfg.indexer.n_head, d = cfg.indexer.head_dim;
    const int64_t ratio = cfg.indexer.ratio(static_cast<uint32_t>(layer));
    STRATA_CHECK(ratio > 0, "qsa_select on a layer without a compress ratio");
    const int64_t keep = cfg.indexer.top_k / ratio;

    IndexerScratch& sc = indexer_scratch();
    std::vector<float>& q = sc.q;
    std::vector<float>& k = sc.k;
    q.resize(static_cast<size_t>(n * n_head * d));
    k.resize(static_cast<size_t>(n * d));
    cpu_matmul(w.wq, 0, h, n, q.data(), ctx);
    cpu_matmul(w.wk, 0, h, n, k.data(), ctx);
    cpu_rms_norm(q.data(), w.q_norm.f32(), n * n_head, d, cfg.rms_eps, q.data());
    const RopeParams rope{cfg.rope_style, d, cfg.rope_dims, cfg.rope_base};
    cpu_rope(q.data(), n, n_head, rope, batch.positions);

    const size_t n_seq = batch.sequences.size();
    out.offsets_.resize(n_seq);
    out.ranges_.resize(n_seq);
    out.views_.resize(n_seq);
    const float inv_sqrt_d = 1.0f / std::sqrt(static_cast<float>(d));
    std::vector<float>& pooled = sc.pooled;
    for (size_t si = 0; si < n_seq; ++si) {
        const BatchSequence& s = batch.sequences[si];
        KvCache& kv = *s.kv;
        STRATA_CHECK(kv.index_key_dim() == d, "a QSA layer's cache has no index-key plane of its width");
        for (int64_t t = 0; t < s.n_tokens; ++t) kv.store_index_key(layer, s.pos0 + t, k.data() + (s.first + t) * d);
        // Room for the whole cache's blocks, taken on the first call: decode steps then allocate
        // nothing as blocks complete (the pool's workers take theirs in a prompt's first pass).
        const int64_t blocks_cap = kv.n_ctx() / ratio;
        pooled.reserve(static_cast<size_t>(blocks_cap * d));
        sc.starts.reserve(static_cast<size_t>(blocks_cap));
        query_scratch().reserve(blocks_cap);
        const int64_t n_blocks_max = (s.pos0 + s.n_tokens) / ratio;
        const bool any_selects = n_blocks_max > keep;
        if (any_selects) pooled_block_keys(kv, layer, n_blocks_max, ratio, w, cfg, pooled, sc.starts);

        // Each query's ranges, queries over the pool (each computed alone), then packed.
        std::vector<std::vector<KeyRange>>& per_query = sc.per_query;
        if (per_query.size() < static_cast<size_t>(s.n_tokens)) per_query.resize(static_cast<size_t>(s.n_tokens));
        const auto select = [&](int64_t t0, int64_t t1, int) {
            std::vector<float>& scores = query_scratch().scores;
            for (int64_t t = t0; t < t1; ++t) {
                const int64_t n_visible = s.pos0 + t + 1, n_blocks = n_visible / ratio;
                scores.assign(static_cast<size_t>(n_blocks > keep ? n_blocks : 0), 0.0f);
                if (n_blocks > keep) {
                    const float* qt = q.data() + (s.first + t) * n_head * d;
                    for (int64_t b = 0; b < n_blocks; ++b) {
                        const float* kb = pooled.data() + b * d;
                        float sum = 0.0f;
                        for (int64_t hh = 0; hh < n_head; ++hh) {
                            float dot = 0.0f;
                            for (int64_t i = 0; i < d; ++i) dot += qt[hh * d + i] * kb[i];
                            sum += std::max(dot, 0.0f);
                        }
                        scores[static_cast<size_t>(b)] = sum * inv_sqrt_d;
                    }
                }
                qsa_query_ranges(scores.data(), n_blocks, keep, ratio, n_visible, per_query[static_cast<size_t>(t)]);
            }
        };
        if (any_selects && s.n_tokens > 1 && ctx.pool().size() > 1) ctx.pool().parallel_for(s.n_tokens, select);
        else select(0, s.n_tokens, 0);

        std::vector<int64_t>& offsets = out.offsets_[si];
        std::vector<KeyRange>& ranges = out.ranges_[si];
        offsets.assign(1, 0);
        ranges.clear();
        ranges.reserve(static_cast<size_t>(s.n_tokens * (keep + 1)));
        for (int64_t t = 0; t < s.n_tokens; ++t) {
            const std::vector<KeyRange>& r = per_query[static_cast<size_t>(t)];
            ranges.insert(ranges.end(), r.begin(), r.end());
            offsets.push_back(static_cast<int64_t>(ranges.size()));
        }
        out.views_[si] = KeySelection{offsets.data(), ranges.data()};
    }
}

}  // namespace strata
