// DeepSeek-V4's attention (compressed_attention.h), in HF's order of float operations where it
// matters: the norms and ropes as DeepseekV4Attention applies them, the softmax with its sink
// over [window keys, then entries in index order].
#include "model/blocks/compressed_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/f32_rows.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/blocks/lightning_indexer.h"

namespace strata {

namespace {

// Scratch above every other block's slots (and the mHC's, manifold_hyper_connection.cpp).
constexpr int kC = CpuContext::kFirstFreeSlot + 64, kQ = kC + 1, kKv = kC + 2, kCompKv = kC + 3, kCompGate = kC + 4;
constexpr int kIndexKv = kC + 5, kIndexGate = kC + 6, kIndexQ = kC + 7, kIndexW = kC + 8, kHeads = kC + 9;
constexpr int kGroupIn = kC + 10, kGroupOut = kC + 11, kLowRank = kC + 12;

constexpr int64_t kCsaRatio = 4;

}  // namespace

CompressedAttentionRopes compressed_attention_ropes(const ModelConfig& c) {
    CompressedAttentionRopes r;
    r.main = rope_table_default(RopeStyle::Normal, c.rope_dims, c.rope_base);
    if (c.rope_yarn) {
        YarnParams y;
        y.factor = c.rope_scaling_factor;
        y.original_ctx = c.rope_orig_ctx;
        y.beta_fast = c.yarn_beta_fast;
        y.beta_slow = c.yarn_beta_slow;
        y.attn_factor = 1.0f;  // the V4 reference does not scale cos and sin (TD config, LD dsv4_rope_attn_factor)
        r.compress = rope_table_yarn(RopeStyle::Normal, c.rope_dims, c.dsv4.compress_rope_base, y);
    } else {
        r.compress = rope_table_default(RopeStyle::Normal, c.rope_dims, c.dsv4.compress_rope_base);
    }
    return r;
}

KvCompressorShape dsv4_compressor_shape(const ModelConfig& c, uint32_t il) {
    const uint32_t ratio = c.indexer.ratio(il);
    if (ratio == 0) return {};
    return {.ratio = ratio, .dim = c.head_dim_k, .overlap = ratio == kCsaRatio};
}

KvCompressorShape dsv4_index_compressor_shape(const ModelConfig& c, uint32_t il) {
    if (c.indexer.ratio(il) != kCsaRatio) return {};
    return {.ratio = kCsaRatio, .dim = c.indexer.head_dim, .overlap = true};
}

int64_t dsv4_compressor_floats(const ModelConfig& c, uint32_t il) {
    const KvCompressorShape a = dsv4_compressor_shape(c, il), b = dsv4_index_compressor_shape(c, il);
    return (a.ratio > 0 ? a.state_floats() : 0) + (b.ratio > 0 ? b.state_floats() : 0);
}

KvCache make_dsv4_kv_cache(const ModelConfig& c, int64_t n_ctx, KvCacheType type) {
    // Keys only: the value of a position is its key (K = V).
    KvCache kv(c.n_layer, n_ctx, c.head_dim_k, 0, type);
    std::vector<int64_t> entries(c.n_layer, 0), index_keys(c.n_layer, 0);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        const uint32_t ratio = c.indexer.ratio(il);
        if (ratio > 0) entries[il] = n_ctx / ratio;
        if (ratio == kCsaRatio) index_keys[il] = n_ctx / ratio;
    }
    STRATA_CHECK(kv.add_entry_plane(entries, c.head_dim_k) == kDsv4EntryPlane, "entry plane order");
    STRATA_CHECK(kv.add_entry_plane(index_keys, c.indexer.head_dim) == kDsv4IndexPlane, "entry plane order");
    return kv;
}

RecurrentState make_dsv4_state(const ModelConfig& c) {
    RecurrentState state(std::vector<bool>(c.n_layer, false), 0, 0);
    for (uint32_t il = 0; il < c.n_layer; ++il) {
        if (const int64_t floats = dsv4_compressor_floats(c, il); floats > 0) state.add_history(il, floats, 0, 0);
    }
    state.clear();
    return state;
}

namespace {

// One head of one query row over its keys (rows of head_dim): the softmax with the head's sink,
// the weighted sum of the same rows (K = V), with the CPU attention's row kernels (eight-lane
// dots, AVX2 where the CPU has it).
void attend_head(const F32RowKernels& k, const float* qh, const float* keys, int64_t n_keys, int64_t hd, float scale,
                 float sink, std::vector<float>& logits, float* oh) {
    logits.resize(static_cast<size_t>(n_keys));
    k.dots(qh, keys, hd, n_keys, hd, scale, logits.data());
    float mx = sink;
    for (int64_t j = 0; j < n_keys; ++j) mx = std::max(mx, logits[static_cast<size_t>(j)]);
    float sum = std::exp(sink - mx);
    for (int64_t j = 0; j < n_keys; ++j) sum += logits[static_cast<size_t>(j)] = std::exp(logits[static_cast<size_t>(j)] - mx);
    std::fill(oh, oh + hd, 0.0f);
    k.accumulate(logits.data(), 1.0f / sum, keys, hd, n_keys, hd, oh);
}

}  // namespace

void compressed_attention(const CompressedAttentionWeights& w, const ModelConfig& c, const CompressedAttentionRopes& ropes,
                          const float* x, const Batch& batch, uint32_t il, float* out, CpuContext& ctx) {
    const int64_t n = batch.n_tokens, H = c.n_head, hd = c.head_dim_k, r = c.rope_dims, ql = c.q_lora_rank;
    const uint32_t ratio = c.indexer.ratio(il);
    const RopeTable& rope = ratio > 0 ? ropes.compress : ropes.main;
    const float eps = c.rms_eps;

    // q: low rank, its norm (kept: the indexer reads it too), per-head unweighted norm, rope.
    float* cq = ctx.scratch_floats(kC, static_cast<size_t>(n * ql));
    cpu_matmul(w.wq_a, 0, x, n, cq, ctx);
    cpu_rms_norm(cq, w.q_a_norm.f32(), n, ql, eps, cq, ctx);
    float* q = ctx.scratch_floats(kQ, static_cast<size_t>(n * H * hd));
    cpu_matmul(w.wq_b, 0, cq, n, q, ctx);
    cpu_rms_norm(q, nullptr, n * H, hd, eps, q, ctx);
    cpu_rope_table(q + hd - r, n, H, hd, rope, batch.positions);
    // The shared K = V row, stored at each token's position.
    float* kv = ctx.scratch_floats(kKv, static_cast<size_t>(n * hd));
    cpu_matmul(w.wkv, 0, x, n, kv, ctx);
    cpu_rms_norm(kv, w.kv_norm.f32(), n, hd, eps, kv, ctx);
    cpu_rope_table(kv + hd - r, n, 1, hd, rope, batch.positions);
    for (const BatchSequence& s : batch.sequences) {
        for (int64_t t = 0; t < s.n_tokens; ++t) {
            const float* row = kv + (s.first + t) * hd;
            s.kv->store(il, s.pos0 + t, row, row);
        }
    }

    // The compressors fold the batch into their state, writing the entries its windows complete.
    const KvCompressorShape shape = dsv4_compressor_shape(c, il), index_shape = dsv4_index_compressor_shape(c, il);
    const auto compress = [&](const KvCompressorShape& sh, const KvCompressorWeights& cw, int plane, int64_t state_offset,
                              int kv_slot, int gate_slot) {
        const int64_t width = sh.width();
        float* ckv = ctx.scratch_floats(kv_slot, static_cast<size_t>(n * width));
        float* cgate = ctx.scratch_floats(gate_slot, static_cast<size_t>(n * width));
        const MatmulJob jobs[] = {{&cw.wkv, 0, x, n, ckv}, {&cw.wgate, 0, x, n, cgate}};
        cpu_matmul_grouped(jobs, ctx);
        for (const BatchSequence& s : batch.sequences) {
            STRATA_CHECK(s.state != nullptr && s.state->has_history(il), "a deepseek4 sequence needs its compressor state");
            KvCache& cache = *s.kv;
            kv_compressor_step(sh, cw, ckv + s.first * width, cgate + s.first * width, s.n_tokens, s.pos0, eps,
                               ropes.compress, s.state->history(il) + state_offset,
                               [&](int64_t e) { return cache.entry(plane, il, e); });
        }
    };
    float* index_q = nullptr;
    float* index_w = nullptr;
    const int64_t ih = c.indexer.n_head, idim = c.indexer.head_dim;
    if (ratio > 0) compress(shape, w.compressor, kDsv4EntryPlane, 0, kCompKv, kCompGate);
    if (index_shape.ratio > 0) {
        compress(index_shape, w.index_compressor, kDsv4IndexPlane, shape.state_floats(), kIndexKv, kIndexGate);
        index_q = ctx.scratch_floats(kIndexQ, static_cast<size_t>(n * ih * idim));
        cpu_matmul(w.index_wq_b, 0, cq, n, index_q, ctx);
        cpu_rope_table(index_q + idim - r, n, ih, idim, ropes.compress, batch.positions);
        index_w = ctx.scratch_floats(kIndexW, static_cast<size_t>(n * ih));
        cpu_matmul(w.index_proj, 0, x, n, index_w, ctx);
        const float head_scale = 1.0f / std::sqrt(static_cast<float>(ih));
        for (int64_t i = 0; i < n * ih; ++i) index_w[i] *= head_scale;
    }

    // Each query: its window of raw rows, then its entries; rows of the batch are independent.
    // Kept per thread, as the other buffers below, so that a decode step allocates nothing once
    // warm; the workers read the calling thread's through a pointer.
    thread_local std::vector<int32_t> seq_of_row_storage;
    seq_of_row_storage.resize(static_cast<size_t>(n));
    int32_t* const seq_of_row = seq_of_row_storage.data();
    for (size_t i = 0; i < batch.sequences.size(); ++i) {
        const BatchSequence& s = batch.sequences[i];
        std::fill_n(seq_of_row + s.first, s.n_tokens, static_cast<int32_t>(i));
    }
    float* heads = ctx.scratch_floats(kHeads, static_cast<size_t>(n * H * hd));
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const int64_t window = c.sliding_window;
    const float index_scale = 1.0f / std::sqrt(static_cast<float>(idim));
    int64_t n_ctx = 0;
    for (const BatchSequence& s : batch.sequences) n_ctx = std::max(n_ctx, s.kv->n_ctx());
    // A row's keys: its window's raw rows, then its entries (the indexer's picks on CSA layers).
    const auto gather_keys = [&](int64_t t, std::vector<float>& keys, std::vector<int64_t>& picks) {
        const BatchSequence& s = batch.sequences[static_cast<size_t>(seq_of_row[t])];
        const KvCache& cache = *s.kv;
        const int64_t pos = batch.positions[t];
        const int64_t first = std::max<int64_t>(0, pos - window + 1);
        const int64_t visible = ratio > 0 ? (pos + 1) / ratio : 0;
        int64_t n_entries = 0;
        if (ratio == kCsaRatio) {
            picks.resize(static_cast<size_t>(c.indexer.top_k));
            thread_local IndexScoreScratch scratch;
            scratch.reserve(n_ctx / ratio);
            const float* index_keys = visible > 0 ? cache.entry(kDsv4IndexPlane, il, 0) : nullptr;
            n_entries = lightning_indexer_top_k(index_q + t * ih * idim, index_w + t * ih, ih, idim, index_keys, visible,
                                                c.indexer.top_k, index_scale, picks.data(), scratch);
        } else if (ratio > 0) {
            n_entries = visible;
        }
        const int64_t n_raw = pos - first + 1, n_keys = n_raw + n_entries;
        keys.resize(static_cast<size_t>(n_keys * hd));
        for (int64_t j = 0; j < n_raw; ++j) cache.key_row_f32(il, first + j, keys.data() + j * hd);
        for (int64_t j = 0; j < n_entries; ++j) {
            const int64_t e = ratio == kCsaRatio ? picks[static_cast<size_t>(j)] : j;
            std::copy_n(cache.entry(kDsv4EntryPlane, il, e), hd, keys.data() + (n_raw + j) * hd);
        }
        return n_keys;
    };
    const float* sinks = w.sinks.f32();
    const F32RowKernels& kernels = f32_row_kernels();
    // The most keys a row of any layer can have (its window and every entry it may see): the
    // buffers are reserved for it once, so that they never grow as the context does. The bound is
    // the model's, not this layer's: a worker may first run heads of a layer with few entries and
    // only later, in the token loop, those of one with many.
    int64_t max_entries = 0;
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        const uint32_t layer_ratio = c.indexer.ratio(l);
        const int64_t entries = layer_ratio == kCsaRatio ? int64_t{c.indexer.top_k}
                                : layer_ratio > 0        ? n_ctx / layer_ratio
                                                         : 0;
        max_entries = std::max(max_entries, entries);
    }
    const int64_t max_keys = window + max_entries;
    const auto reserve = [&](std::vector<float>& keys, std::vector<float>* logits) {
        keys.reserve(static_cast<size_t>(max_keys * hd));
        if (logits) logits->reserve(static_cast<size_t>(max_keys));
    };
    if (n >= ctx.pool().size()) {
        // A prompt: rows over the threads, each gathering its own keys.
        ctx.pool().parallel_for(n, [&](int64_t r0, int64_t r1, int) {
            thread_local std::vector<float> keys, logits;
            thread_local std::vector<int64_t> picks;
            reserve(keys, &logits);
            for (int64_t t = r0; t < r1; ++t) {
                const int64_t n_keys = gather_keys(t, keys, picks);
                for (int64_t h = 0; h < H; ++h) {
                    attend_head(kernels, q + (t * H + h) * hd, keys.data(), n_keys, hd, scale, sinks[h], logits,
                                heads + (t * H + h) * hd);
                }
            }
        });
    } else {
        // A decode step: each row's keys gathered once, its heads over the threads (the same
        // arithmetic per head, so the same bits either way).
        // (The calling thread's buffers, kept from step to step; the workers read them through
        // the pointer, a thread_local named inside the lambda would be each worker's own.)
        // The heads' logits per range, not per thread, and reserved here: the pool's ranges are
        // claimed, so which thread runs heads differs from step to step, and a worker's own
        // buffer would first grow in whichever token step it first took a range.
        thread_local std::vector<float> keys;
        thread_local std::vector<int64_t> picks;
        thread_local std::vector<std::vector<float>> range_logits;
        reserve(keys, nullptr);
        if (range_logits.size() < static_cast<size_t>(ctx.pool().size())) range_logits.resize(static_cast<size_t>(ctx.pool().size()));
        for (std::vector<float>& logits : range_logits) logits.reserve(static_cast<size_t>(max_keys));
        std::vector<float>* const logits_of_range = range_logits.data();  // the calling thread's, for the workers
        for (int64_t t = 0; t < n; ++t) {
            const int64_t n_keys = gather_keys(t, keys, picks);
            const float* key_rows = keys.data();
            ctx.pool().parallel_for(H, [&](int64_t h0, int64_t h1, int range) {
                std::vector<float>& logits = logits_of_range[range];
                for (int64_t h = h0; h < h1; ++h) {
                    attend_head(kernels, q + (t * H + h) * hd, key_rows, n_keys, hd, scale, sinks[h], logits,
                                heads + (t * H + h) * hd);
                }
            });
        }
    }
    // K = V carried the rope into the output: turned back by the query's own angle.
    thread_local std::vector<int32_t> back;
    back.assign(batch.positions, batch.positions + n);
    for (int32_t& p : back) p = -p;
    cpu_rope_table(heads + hd - r, n, H, hd, rope, back.data());

    // Grouped low-rank output: group g's heads through W_oa slice g, the groups then mixed by W_ob.
    const int64_t groups = c.dsv4.o_groups, lora = c.dsv4.o_lora_rank, group_width = H * hd / groups;
    float* group_in = ctx.scratch_floats(kGroupIn, static_cast<size_t>(n * group_width));
    float* group_out = ctx.scratch_floats(kGroupOut, static_cast<size_t>(n * lora));
    float* low = ctx.scratch_floats(kLowRank, static_cast<size_t>(n * groups * lora));
    for (int64_t g = 0; g < groups; ++g) {
        for (int64_t t = 0; t < n; ++t) std::copy_n(heads + t * H * hd + g * group_width, group_width, group_in + t * group_width);
        cpu_matmul(w.wo_a, g, group_in, n, group_out, ctx);
        for (int64_t t = 0; t < n; ++t) std::copy_n(group_out + t * lora, lora, low + t * groups * lora + g * lora);
    }
    cpu_matmul(w.wo_b, 0, low, n, out, ctx);
}

}  // namespace strata
