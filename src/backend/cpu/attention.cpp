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

    // scores[j - j0] = (q · row j) · scale for j in [j0, j1).
    void dots(const float* q, int64_t j0, int64_t j1, float scale, float* scores) const {
        if (type_ == KvCacheType::F16) {
            f16_.dots(q, half_row(j0), row_dim_, j1 - j0, head_dim_, scale, scores);
            return;
        }
        if (type_ == KvCacheType::Q8_0) {
            q8_.dots(q, q8_row(j0), q8_row_bytes(), j1 - j0, head_dim_, scale, scores);
            return;
        }
        f32_.dots(q, float_row(j0), row_dim_, j1 - j0, head_dim_, scale, scores);
    }
    // dots() for `heads` query heads (q_h = q + h · q_stride) into scores + h · scores_stride. The
    // q8_0 kernel takes four heads at once, dequantizing each row once for them.
    void dots_heads(const float* q, int64_t q_stride, int64_t heads, int64_t j0, int64_t j1, float scale, float* scores,
                    int64_t scores_stride) const {
        if (type_ == KvCacheType::Q8_0) {
            q8_.dots_heads(q, q_stride, heads, q8_row(j0), q8_row_bytes(), j1 - j0, head_dim_, scale, scores, scores_stride);
            return;
        }
        for (int64_t h = 0; h < heads; ++h) dots(q + h * q_stride, j0, j1, scale, scores + h * scores_stride);
    }
    // out += (weights[j - j0] · inv) · row j for j in [j0, j1).
    void accumulate(const float* weights, float inv, int64_t j0, int64_t j1, float* out) const {
        if (type_ == KvCacheType::F16) {
            f16_.accumulate(weights, inv, half_row(j0), row_dim_, j1 - j0, head_dim_, out);
            return;
        }
        if (type_ == KvCacheType::Q8_0) {
            q8_.accumulate(weights, inv, q8_row(j0), q8_row_bytes(), j1 - j0, head_dim_, out);
            return;
        }
        f32_.accumulate(weights, inv, float_row(j0), row_dim_, j1 - j0, head_dim_, out);
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
// CpuTuning::attention_all_exp computes every exp(), to compare (with std::exp, one score at a
// time: the eight-lane e^x of backend/cpu/softmax_weights.h clamps below -87).
float negligible_logit(const CpuTuning& tuning) { return tuning.attention_all_exp ? -INFINITY : -50.0f; }

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

}  // namespace

void cpu_attention(const float* q, const KvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const AttentionParams& p, float* out, CpuContext& ctx) {
    const int64_t group = p.n_head / p.n_head_kv;
    const int64_t n_kv_max = pos0 + n_tokens;
    const F32RowKernels& f32 = f32_row_kernels();
    const F16RowKernels& f16 = f16_row_kernels();
    const Q8RowKernels& q8 = q8_row_kernels();
    const void* key_rows = kv.key_row(layer, 0);
    const void* value_rows = kv.value_row(layer, 0);
    STRATA_CHECK(kv.type() != KvCacheType::Q8_0 || kv_type_fits(kv.type(), p.head_dim_k, p.head_dim_v),
                 "q8_0 KV rows need heads of whole 32-value blocks");
    const float negligible = negligible_logit(ctx.tuning());
    const SoftmaxWeightKernels& softmax = softmax_weight_kernels(negligible);
    // An item is one token and `heads` query heads of one kv head. Its heads take each block of
    // key rows, and then of value rows, in turn while the block is in L1: a kv head's rows are
    // read from memory once for the group (8 query heads in Qwen3-30B-A3B, 128 in DeepSeek's
    // latent attention) instead of once per head, which at a depth of 4096 had made attention
    // half of a 2-core decode step (bench/results/2026-12-01-cpu-attention-groups). Each head's
    // arithmetic is that of a lone head, row by row and in row order, so the bits do not depend
    // on the grouping.
    const int threads_max = ctx.pool().size();
    const int64_t heads = heads_per_item(group, n_tokens, p.n_head_kv, threads_max);
    const int64_t items_per_token = p.n_head / heads;
    const int64_t n_work = n_tokens * items_per_token;
    const int64_t key_block = rows_per_block(p.head_dim_k, kv.type());
    const int64_t value_block = rows_per_block(p.head_dim_v, kv.type());
    // Per thread: a row of scores for each head of an item, then each head's 1/sum.
    const int64_t per_thread = heads * n_kv_max + heads;
    float* scratch = ctx.scratch_floats(CpuContext::kAttentionScoresSlot, static_cast<size_t>(threads_max * per_thread));
    // Items are claimed in chunks from a shared counter, the last tokens (the longest rows:
    // causal attention costs a token its position) first. Split into equal contiguous ranges,
    // the thread holding the last tokens had ~2x the average work on 16 threads, and the others
    // waited for it. Each item is computed the same wherever it runs.
    const int threads = static_cast<int>(std::min<int64_t>(threads_max, n_work));
    const int64_t chunk = std::max<int64_t>(1, n_work / (8 * static_cast<int64_t>(threads)));
    std::atomic<int64_t> next{0};
    ctx.pool().parallel_for(threads, [&](int64_t, int64_t, int worker) {
        float* scores = scratch + worker * per_thread;
        float* inv_sum = scores + heads * n_kv_max;
        for (;;) {
            const int64_t c0 = next.fetch_add(chunk, std::memory_order_relaxed);
            if (c0 >= n_work) break;
            for (int64_t c = c0; c < std::min(n_work, c0 + chunk); ++c) {
                const int64_t w = n_work - 1 - c;
                const int64_t t = w / items_per_token, h0 = (w % items_per_token) * heads, kvh = h0 / group;
                const int64_t n_kv = pos0 + t + 1;  // causal: this token sees positions <= its own
                const int64_t j0 = p.sliding_window > 0 ? std::max<int64_t>(0, n_kv - p.sliding_window) : 0;
                // The positions it reads, as ranges: [j0, n_kv), unless a selection names them.
                const KeyRange causal{j0, n_kv};
                const KeyRange* ranges = &causal;
                int64_t n_ranges = 1;
                if (p.selection != nullptr) {
                    ranges = p.selection->ranges + p.selection->offsets[t];
                    n_ranges = p.selection->offsets[t + 1] - p.selection->offsets[t];
                }
                const HeadRows keys(key_rows, kv.k_dim(), kvh * p.head_dim_k, p.head_dim_k, kv.type(), f32, f16, q8);
                const HeadRows values(value_rows, kv.v_dim(), kvh * p.head_dim_v, p.head_dim_v, kv.type(), f32, f16, q8);
                // A head's scores sit packed, range after range: score c is the c-th position read.
                const auto head_scores = [&](int64_t i) { return scores + i * n_kv_max; };
                int64_t n_read = 0;
                for (int64_t r = 0; r < n_ranges; ++r) {
                    for (int64_t b = ranges[r].begin; b < ranges[r].end; b += key_block) {
                        const int64_t b1 = std::min(ranges[r].end, b + key_block);
                        keys.dots_heads(q + (t * p.n_head + h0) * p.head_dim_k, p.head_dim_k, heads, b, b1, p.scale,
                                        head_scores(0) + n_read, n_kv_max);
                        n_read += b1 - b;
                    }
                }
                for (int64_t i = 0; i < heads; ++i) {
                    const int64_t h = h0 + i;
                    float* sc = head_scores(i);
                    // A sink takes part in the normalization as one more logit, so with it the
                    // kept weights sum to less than one.
                    const float sink = p.sinks ? p.sinks[h] : -INFINITY;
                    const float max = softmax.max(sc, n_read, sink);
                    const float sum = (p.sinks ? std::exp(sink - max) : 0.0f) + softmax.weights(sc, n_read, max, negligible);
                    inv_sum[i] = 1.0f / sum;
                    float* o = out + (t * p.n_head + h) * p.head_dim_v;
                    std::fill(o, o + p.head_dim_v, 0.0f);
                }
                int64_t done = 0;  // positions accumulated so far: the packed scores' index
                for (int64_t r = 0; r < n_ranges; ++r) {
                    for (int64_t b = ranges[r].begin; b < ranges[r].end; b += value_block) {
                        const int64_t b1 = std::min(ranges[r].end, b + value_block);
                        for (int64_t i = 0; i < heads; ++i) {
                            float* o = out + (t * p.n_head + h0 + i) * p.head_dim_v;
                            values.accumulate(head_scores(i) + done, inv_sum[i], b, b1, o);
                        }
                        done += b1 - b;
                    }
                }
            }
        }
    });
}

}  // namespace strata
