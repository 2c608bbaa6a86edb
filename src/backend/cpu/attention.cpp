#include "backend/cpu/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "backend/cpu/f16_rows.h"
#include "backend/cpu/f32_rows.h"
#include "backend/cpu/q8_rows.h"
#include "backend/cpu/softmax_weights.h"
#include "core/check.h"
#include "core/env_switch.h"

namespace strata {

namespace {
// One kv head's keys or values of one layer: f32 rows go through the F32RowKernels in place; f16
// rows through the F16RowKernels, which widen as they read and do the same float operations per
// row; q8_0 rows through the Q8RowKernels, which compute the reference dequantizer's values and
// then the f32 path's operations, so a q8_0 cache gives the attention of an f32 cache holding the
// dequantized values, bit for bit. The dot product keeps eight independent partial sums
// (dot_eight_lanes): one running sum is a chain of dependent adds that the compiler may not
// reorder, which made this loop ~4% of a decode step at a depth of only ~30.
class HeadRows {
public:
    HeadRows(const void* layer_rows, int64_t row_dim, int64_t offset, int64_t head_dim, KvCacheType type,
             const F32RowKernels& f32, const F16RowKernels& f16, const Q8RowKernels& q8)
        : base_(layer_rows), row_dim_(row_dim), offset_(offset), head_dim_(head_dim), type_(type), f32_(f32), f16_(f16), q8_(q8) {}

    // scores[j] = (q · row j) · scale for j in [j0, j1).
    void dots(const float* q, int64_t j0, int64_t j1, float scale, float* scores) const {
        if (type_ == KvCacheType::F16) {
            f16_.dots(q, half_row(j0), row_dim_, j1 - j0, head_dim_, scale, scores + j0);
            return;
        }
        if (type_ == KvCacheType::Q8_0) {
            q8_.dots(q, q8_row(j0), q8_row_bytes(), j1 - j0, head_dim_, scale, scores + j0);
            return;
        }
        f32_.dots(q, float_row(j0), row_dim_, j1 - j0, head_dim_, scale, scores + j0);
    }
    // out += (weights[j] · inv) · row j for j in [j0, j1).
    void accumulate(const float* weights, float inv, int64_t j0, int64_t j1, float* out) const {
        if (type_ == KvCacheType::F16) {
            f16_.accumulate(weights + j0, inv, half_row(j0), row_dim_, j1 - j0, head_dim_, out);
            return;
        }
        if (type_ == KvCacheType::Q8_0) {
            q8_.accumulate(weights + j0, inv, q8_row(j0), q8_row_bytes(), j1 - j0, head_dim_, out);
            return;
        }
        f32_.accumulate(weights + j0, inv, float_row(j0), row_dim_, j1 - j0, head_dim_, out);
    }

private:
    const float* float_row(int64_t j) const { return static_cast<const float*>(base_) + j * row_dim_ + offset_; }
    const uint16_t* half_row(int64_t j) const { return static_cast<const uint16_t*>(base_) + j * row_dim_ + offset_; }
    // Heads start on a block (kv_type_fits): head row j is whole blocks of its cache row.
    int64_t q8_row_bytes() const { return static_cast<int64_t>(kv_row_bytes(KvCacheType::Q8_0, row_dim_)); }
    const uint8_t* q8_row(int64_t j) const {
        return static_cast<const uint8_t*>(base_) + j * q8_row_bytes() + kv_row_bytes(KvCacheType::Q8_0, offset_);
    }

    const void* base_;
    int64_t row_dim_, offset_, head_dim_;
    KvCacheType type_;
    const F32RowKernels& f32_;
    const F16RowKernels& f16_;
    const Q8RowKernels& q8_;
};
// Scores more than 50 below the largest get weight zero instead of exp(): their weights (under
// e^-50, 2e-22 of the largest) cannot move the sum, which is at least one, nor the output beyond
// rounding, and kept they turn subnormal once scaled by 1/sum and by the values, which Intel cores
// compute through microcode assists of ~100+ cycles each (bench/results/2026-11-30-tiers-split:
// the Xeon's prompt attention ran 5x slower per thread than a Zen core's).
// STRATA_CPU_ATTN_ALL_EXP=1 computes every exp(), to compare (with std::exp, one score at a time:
// the eight-lane e^x of backend/cpu/softmax_weights.h clamps below -87).
float negligible_logit() {
    static const float floor = env_equals("STRATA_CPU_ATTN_ALL_EXP", "1") ? -INFINITY : -50.0f;
    return floor;
}

// Query heads of one kv head that one work item takes (a divisor of the group): all of them when
// there are enough items for the threads (a prompt's tokens, or few threads), fewer for a decode
// step on many threads, so that each thread still has an item (a decode step's items are equal).
int64_t heads_per_item(int64_t group, int64_t n_tokens, int64_t n_head_kv, int threads) {
    int64_t heads = group;
    while (heads > 1 && n_tokens * n_head_kv * (group / heads) < static_cast<int64_t>(threads)) {
        do --heads;
        while (group % heads != 0);
    }
    return heads;
}

// Rows of a block that the heads of an item read in turn while it stays in L1 (at least eight:
// the f16 dot kernel's pass).
int64_t rows_per_block(int64_t head_dim, KvCacheType type) {
    constexpr int64_t kBlockBytes = 16 * 1024;
    const int64_t row_bytes = std::max<int64_t>(1, static_cast<int64_t>(kv_row_bytes(type, head_dim)));
    return std::max<int64_t>(8, kBlockBytes / row_bytes / 8 * 8);
}


// The value sum of a row is taken in chunks of kValueChunk absolute positions: each chunk's rows
// are summed from zero in row order, and the chunk sums are added to the output in chunk order.
// A decode step on more threads than kv heads computes the chunks side by side; a prompt batch
// or a decode step on few threads one after another. The chunks depend on the positions only, so
// every path and every thread count gives the same bits.
constexpr int64_t kValueChunk = 512;

// What the work items of one call share.
struct Attend {
    const float* q;
    const AttentionParams& p;
    int64_t pos0, group;
    const void* key_rows;
    const void* value_rows;
    const KvCache& kv;
    const F32RowKernels& f32;
    const F16RowKernels& f16;
    const Q8RowKernels& q8;
    const SoftmaxWeightKernels& softmax;
    float negligible;
    int64_t key_block, value_block;

    int64_t n_kv(int64_t t) const { return pos0 + t + 1; }  // causal: a token sees positions <= its own
    int64_t first_row(int64_t t) const {
        return p.sliding_window > 0 ? std::max<int64_t>(0, n_kv(t) - p.sliding_window) : 0;
    }
    // Chunks [first_chunk(t), last_chunk(t)] hold token t's rows.
    int64_t first_chunk(int64_t t) const { return first_row(t) / kValueChunk; }
    int64_t last_chunk(int64_t t) const { return (n_kv(t) - 1) / kValueChunk; }
    // Token t's rows in chunk c.
    int64_t chunk_begin(int64_t t, int64_t c) const { return std::max(first_row(t), c * kValueChunk); }
    int64_t chunk_end(int64_t t, int64_t c) const { return std::min(n_kv(t), (c + 1) * kValueChunk); }

    HeadRows keys(int64_t h) const {
        return HeadRows(key_rows, kv.k_dim(), h / group * p.head_dim_k, p.head_dim_k, kv.type(), f32, f16, q8);
    }
    HeadRows values(int64_t h) const {
        return HeadRows(value_rows, kv.v_dim(), h / group * p.head_dim_v, p.head_dim_v, kv.type(), f32, f16, q8);
    }

    // Scores of query heads [h0, h0 + heads) (one kv head's) for token t's rows [lo, hi): the heads
    // take each block of key rows in turn while it is in L1. scores(i) is head h0 + i's row.
    template <class Scores>
    void dots(int64_t t, int64_t h0, int64_t heads, int64_t lo, int64_t hi, Scores scores) const {
        const HeadRows rows = keys(h0);
        for (int64_t b = lo; b < hi; b += key_block) {
            for (int64_t i = 0; i < heads; ++i) {
                const float* qh = q + (t * p.n_head + h0 + i) * p.head_dim_k;
                rows.dots(qh, b, std::min(hi, b + key_block), p.scale, scores(i));
            }
        }
    }
    // Turns token t's scores of head h into weights in place; returns 1/(their sum).
    float softmax_row(int64_t t, int64_t h, float* sc) const {
        const int64_t j0 = first_row(t), n = n_kv(t) - j0;
        // A sink takes part in the normalization as one more logit, so with it the kept weights
        // sum to less than one.
        const float sink = p.sinks ? p.sinks[h] : -INFINITY;
        const float max = softmax.max(sc + j0, n, sink);
        const float sum = (p.sinks ? std::exp(sink - max) : 0.0f) + softmax.weights(sc + j0, n, max, negligible);
        return 1.0f / sum;
    }
    // Adds the weighted value rows [lo, hi) of heads [h0, h0 + heads) (one kv head's) to
    // target(i), block by block, each head in turn while the block is in L1.
    template <class Weights, class Inv, class Target>
    void values_into(int64_t h0, int64_t heads, int64_t lo, int64_t hi, Weights weights, Inv inv, Target target) const {
        const HeadRows rows = values(h0);
        for (int64_t b = lo; b < hi; b += value_block) {
            for (int64_t i = 0; i < heads; ++i) rows.accumulate(weights(i), inv(i), b, std::min(hi, b + value_block), target(i));
        }
    }
};

void add_into(float* out, const float* x, int64_t n) {
    for (int64_t d = 0; d < n; ++d) out[d] += x[d];
}

// A decode step (few tokens, more threads than their kv heads): the work items are (token, kv
// head, chunk of rows) with every query head of the group, in four passes: scores, softmax per
// head, each chunk's value sum, and the chunk sums added in order. Splitting the group's heads
// among threads instead had each thread read the kv head's every row for two of its eight heads.
void attend_by_chunks(const Attend& a, int64_t n_tokens, float* out, CpuContext& ctx) {
    const AttentionParams& p = a.p;
    const int64_t n_kv_max = a.n_kv(n_tokens - 1);
    const int64_t max_chunks = a.last_chunk(n_tokens - 1) + 1;
    // items: token t's chunks, for each kv head, counted from item_base[t].
    std::vector<int64_t> item_base(static_cast<size_t>(n_tokens + 1), 0);
    for (int64_t t = 0; t < n_tokens; ++t) {
        item_base[t + 1] = item_base[t] + p.n_head_kv * (a.last_chunk(t) - a.first_chunk(t) + 1);
    }
    const int64_t n_items = item_base[n_tokens];
    const auto item = [&](int64_t w, int64_t& t, int64_t& kvh, int64_t& c) {
        t = static_cast<int64_t>(std::upper_bound(item_base.begin(), item_base.end(), w) - item_base.begin()) - 1;
        const int64_t chunks = a.last_chunk(t) - a.first_chunk(t) + 1, r = w - item_base[t];
        kvh = r / chunks;
        c = a.first_chunk(t) + r % chunks;
    };
    // Scores of every (token, head) row, 1/sum of each, and each chunk's value sum.
    const int64_t rows = n_tokens * p.n_head;
    const int64_t scores_floats = rows * n_kv_max, inv_floats = rows, chunk_floats = rows * max_chunks * p.head_dim_v;
    float* scores = ctx.scratch_floats(CpuContext::kAttentionScoresSlot, static_cast<size_t>(scores_floats + inv_floats));
    float* inv_sum = scores + scores_floats;
    float* chunk_sums = ctx.scratch_floats(CpuContext::kAttentionChunkSumsSlot, static_cast<size_t>(chunk_floats));
    const auto row_scores = [&](int64_t t, int64_t h) { return scores + (t * p.n_head + h) * n_kv_max; };
    const auto chunk_sum = [&](int64_t t, int64_t h, int64_t c) {
        return chunk_sums + ((t * p.n_head + h) * max_chunks + c) * p.head_dim_v;
    };

    ctx.pool().parallel_for(n_items, [&](int64_t w0, int64_t w1, int) {
        for (int64_t w = w0; w < w1; ++w) {
            int64_t t, kvh, c;
            item(w, t, kvh, c);
            const int64_t h0 = kvh * a.group;
            a.dots(t, h0, a.group, a.chunk_begin(t, c), a.chunk_end(t, c), [&](int64_t i) { return row_scores(t, h0 + i); });
        }
    });
    ctx.pool().parallel_for(rows, [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) inv_sum[r] = a.softmax_row(r / p.n_head, r % p.n_head, row_scores(r / p.n_head, r % p.n_head));
    });
    ctx.pool().parallel_for(n_items, [&](int64_t w0, int64_t w1, int) {
        for (int64_t w = w0; w < w1; ++w) {
            int64_t t, kvh, c;
            item(w, t, kvh, c);
            const int64_t h0 = kvh * a.group;
            for (int64_t i = 0; i < a.group; ++i) std::fill_n(chunk_sum(t, h0 + i, c), p.head_dim_v, 0.0f);
            a.values_into(
                h0, a.group, a.chunk_begin(t, c), a.chunk_end(t, c), [&](int64_t i) { return row_scores(t, h0 + i); },
                [&](int64_t i) { return inv_sum[t * p.n_head + h0 + i]; }, [&](int64_t i) { return chunk_sum(t, h0 + i, c); });
        }
    });
    ctx.pool().parallel_for(rows, [&](int64_t r0, int64_t r1, int) {
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t t = r / p.n_head, h = r % p.n_head;
            float* o = out + r * p.head_dim_v;
            std::copy_n(chunk_sum(t, h, a.first_chunk(t)), p.head_dim_v, o);
            for (int64_t c = a.first_chunk(t) + 1; c <= a.last_chunk(t); ++c) add_into(o, chunk_sum(t, h, c), p.head_dim_v);
        }
    });
}

}  // namespace

void cpu_attention(const float* q, const KvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const AttentionParams& p, float* out, CpuContext& ctx) {
    const int64_t group = p.n_head / p.n_head_kv;
    const int64_t n_kv_max = pos0 + n_tokens;
    STRATA_CHECK(kv.type() != KvCacheType::Q8_0 || kv_type_fits(kv.type(), p.head_dim_k, p.head_dim_v),
                 "q8_0 KV rows need heads of whole 32-value blocks");
    const float negligible = negligible_logit();
    const Attend a{q, p, pos0, group, kv.key_row(layer, 0), kv.value_row(layer, 0), kv, f32_row_kernels(), f16_row_kernels(),
                   q8_row_kernels(), softmax_weight_kernels(negligible), negligible, rows_per_block(p.head_dim_k, kv.type()),
                   rows_per_block(p.head_dim_v, kv.type())};
    const int threads_max = ctx.pool().size();
    // More threads than the tokens' kv heads, and rows enough for chunks to share among them.
    const int64_t kv_items = n_tokens * p.n_head_kv;
    if (kv_items < threads_max && kv_items * (a.last_chunk(n_tokens - 1) - a.first_chunk(n_tokens - 1) + 1) >= threads_max) {
        attend_by_chunks(a, n_tokens, out, ctx);
        return;
    }
    // An item is one token and `heads` query heads of one kv head. Its heads take each block of
    // key rows, and then of value rows, in turn while the block is in L1: a kv head's rows are
    // read from memory once for the group (8 query heads in Qwen3-30B-A3B, 128 in DeepSeek's
    // latent attention) instead of once per head, which at a depth of 4096 had made attention
    // half of a 2-core decode step (bench/results/2026-12-01-cpu-attention-groups). Each head's
    // arithmetic is that of a lone head, row by row and in row order, so the bits do not depend
    // on the grouping.
    const int64_t heads = heads_per_item(group, n_tokens, p.n_head_kv, threads_max);
    const int64_t items_per_token = p.n_head / heads;
    const int64_t n_work = n_tokens * items_per_token;
    // Per thread: a row of scores for each head of an item, each head's 1/sum, and each head's
    // sum of one chunk of value rows.
    const int64_t per_thread = heads * n_kv_max + heads + heads * p.head_dim_v;
    float* scratch = ctx.scratch_floats(CpuContext::kAttentionScoresSlot, static_cast<size_t>(threads_max * per_thread));
    // Items are claimed in chunks from a shared counter, the last tokens (the longest rows:
    // causal attention costs a token its position) first. Split into equal contiguous ranges,
    // the thread holding the last tokens had ~2x the average work on 16 threads, and the others
    // waited for it. Each item is computed the same wherever it runs.
    const int threads = static_cast<int>(std::min<int64_t>(threads_max, n_work));
    const int64_t claim = std::max<int64_t>(1, n_work / (8 * static_cast<int64_t>(threads)));
    std::atomic<int64_t> next{0};
    ctx.pool().parallel_for(threads, [&](int64_t, int64_t, int worker) {
        float* scores = scratch + worker * per_thread;
        float* inv_sum = scores + heads * n_kv_max;
        float* chunk_sums = inv_sum + heads;
        const auto head_scores = [&](int64_t i) { return scores + i * n_kv_max; };
        const auto chunk_sum = [&](int64_t i) { return chunk_sums + i * p.head_dim_v; };
        for (;;) {
            const int64_t c0 = next.fetch_add(claim, std::memory_order_relaxed);
            if (c0 >= n_work) break;
            for (int64_t c = c0; c < std::min(n_work, c0 + claim); ++c) {
                const int64_t w = n_work - 1 - c;
                const int64_t t = w / items_per_token, h0 = (w % items_per_token) * heads;
                const auto head_out = [&](int64_t i) { return out + (t * p.n_head + h0 + i) * p.head_dim_v; };
                a.dots(t, h0, heads, a.first_row(t), a.n_kv(t), head_scores);
                for (int64_t i = 0; i < heads; ++i) {
                    inv_sum[i] = a.softmax_row(t, h0 + i, head_scores(i));
                    std::fill_n(head_out(i), p.head_dim_v, 0.0f);
                }
                const auto inv = [&](int64_t i) { return inv_sum[i]; };
                // The first chunk's sum is taken in the output itself (0 + x is x).
                for (int64_t k = a.first_chunk(t); k <= a.last_chunk(t); ++k) {
                    const bool first = k == a.first_chunk(t);
                    if (!first) std::fill_n(chunk_sums, heads * p.head_dim_v, 0.0f);
                    a.values_into(h0, heads, a.chunk_begin(t, k), a.chunk_end(t, k), head_scores, inv,
                                  [&](int64_t i) { return first ? head_out(i) : chunk_sum(i); });
                    if (!first) {
                        for (int64_t i = 0; i < heads; ++i) add_into(head_out(i), chunk_sum(i), p.head_dim_v);
                    }
                }
            }
        }
    });
}

}  // namespace strata
