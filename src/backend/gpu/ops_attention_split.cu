// Split-K ("flash-decoding") attention for steps of few query tokens over a deep cache
// (kernels/attention_paths.cuh). One block per (token, head) leaves most of the GPU idle at
// decode: 32 heads are 32 blocks on a 132-SM H200, each streaming the whole cache. Here the
// visible keys of each token are cut into n_split slices, a block per slice writes its partial
// softmax (max logit, Σ exp, Σ exp · value, unnormalized) to scratch; a merge kernel then
// rescales the slices to a common max, adds the sink's logit once and normalizes.
//
// Two block kernels write those partials:
//   grouped (kernels/attention_decode_grouped.cuh)  a block per (KV head, slice, token) serving
//       all query heads of the KV head from K/V tiles staged in shared memory: grouped-query
//       attention with heads up to 128 dims (Qwen3's 32/4 × 128, gpt-oss's 64-dim heads);
//   rows (kernels/attention_rows.cuh' warp loop)    a block per (query head, slice, token):
//       one query head per KV head, heads above 128 dims, rows not 16-byte aligned.
//
// Graph replay: a captured decode step is replayed at every depth, with the depth read on the
// device from `positions`. So n_split (the grid) is fixed from what the host knows for every
// replay, the cache capacity; each block derives its slice from the depth it reads, and a block
// whose slice is empty (a shallow step) writes a neutral partial (max = -inf, Σ = 0) that the
// merge skips. The scratch is one size per device (about 2 MB on an H200), so it is never
// reallocated between replays, which would invalidate the graph.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "backend/gpu/gpu_ops_attention_mma.h"
#include "backend/gpu/kernels/attention_decode_grouped.cuh"
#include "backend/gpu/kernels/attention_paths.cuh"
#include "backend/gpu/kernels/attention_rows.cuh"
#include "backend/gpu/kernels/q8_quantize.cuh"

namespace strata::gpu {

namespace {

constexpr int kSplitThreads = 128;
constexpr int kSplitMaxWarps = kSplitThreads / 32;
// A slice shorter than this spends as much on its block's setup and partial write as on keys:
// two groups of keys per warp. Longer minimum slices serialize shallow steps: with 128, a decode
// step at depth 129 ran 32 keys one group after another in each warp and cost ~25 µs per layer
// more than the rows kernel (H200, tg128 225 -> 174 tok/s).
constexpr int64_t kSplitMinKeys = 32;
// Blocks wanted per SM. Four blocks of four warps, each warp with a group of key and value rows
// in flight, cover HBM latency × bandwidth (~3 MB on an H200) across the chip, and they all fit
// on the SMs at once (at ~80 registers a thread, six would), so no second partial wave of
// blocks doubles the step's time.
constexpr int kSplitBlocksPerSm = 4;
constexpr int kSplitMaxSlices = 64;
constexpr int kMergeThreads = 128;
static_assert(kMergeThreads >= kSplitMaxSlices, "the merge gives each slice's weight to one thread");

// Partial softmax of slice `split` of token t's keys for head h: [n_tokens][n_head][n_split]
// entries of (max, sum) in `part_ml` and head_dim_v floats in `part_acc`.
template <typename KV>
__global__ void __launch_bounds__(kSplitThreads)
    attention_split_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions, int64_t pos0,
                           GpuAttentionParams p, int n_split, float* part_ml, float* part_acc) {
    vendor::wait_for_previous_kernel();
    __shared__ RowShared<kSplitMaxWarps> shared;
    const int warp = static_cast<int>(threadIdx.x) / vendor::kWarpSize;
    const int n_warps = static_cast<int>(blockDim.x) / vendor::kWarpSize;
    const int64_t h = blockIdx.x, split = blockIdx.y, t = blockIdx.z;
    const int64_t entry = (t * p.n_head + h) * n_split + split;

    const KeySpan keys_seen = visible_keys(p, positions ? static_cast<int64_t>(positions[t]) : pos0 + t);
    const int64_t span = keys_seen.end - keys_seen.begin;
    // Slices at least kSplitMinKeys long: a shallow step fills the first slices and leaves the
    // rest empty rather than giving every block a handful of keys.
    const int64_t slice = max(kSplitMinKeys, (span + n_split - 1) / n_split);
    const int64_t begin = keys_seen.begin + split * slice;
    const int64_t end = min(keys_seen.end, begin + slice);
    if (begin >= end) {  // the whole block leaves; the merge skips a slice with max = -inf
        if (threadIdx.x == 0) part_ml[2 * entry] = -INFINITY, part_ml[2 * entry + 1] = 0.0f;
        return;
    }

    const int64_t kv_head = h / (p.n_head / p.n_head_kv);
    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const HeadRows<KV> rows{keys + kv_head * p.head_dim_k, values + kv_head * p.head_dim_v, k_stride, v_stride,
                            p.head_dim_k, p.head_dim_v};
    float qv[kRowPerLane], acc[kRowPerLane];
    load_query_row(q + (t * p.n_head + h) * p.head_dim_k, p.head_dim_k, p.scale, qv);
#pragma unroll
    for (int i = 0; i < kRowPerLane; ++i) acc[i] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    warp_attend(qv, rows, begin, end, warp, n_warps, m, l, acc);

    publish_warp(shared, warp, m, l, acc, p.head_dim_v);
    __syncthreads();
    const RowTotals totals = row_totals(shared, n_warps, -INFINITY);  // the sink joins in the merge
    if (threadIdx.x == 0) part_ml[2 * entry] = totals.max, part_ml[2 * entry + 1] = totals.sum;
    float* acc_out = part_acc + entry * p.head_dim_v;
    for (int64_t d = threadIdx.x; d < p.head_dim_v; d += blockDim.x) acc_out[d] = row_value(shared, n_warps, totals, d);
}

// out[t][h] = Σ_slices exp(max_s − top) · acc_s / (Σ_slices exp(max_s − top) · sum_s + exp(sink − top)).
// Every read is issued in as few rounds as possible: a thread per slice reads its (max, sum) and the
// block reduces them; each thread of a dim reads the slices' accumulators kMergeRound at a time.
// (Reading them one slice after another, with the skip of empty slices as a branch, kept each
// thread's reads one L2 round trip apart: ncu on the H200 timed this kernel at 9.2 µs against 19 µs
// for the 32-slice tensor-core pass before it, at depth 8192.)
constexpr int kMergeRound = 16;
__global__ void __launch_bounds__(kMergeThreads)
    attention_merge_kernel(const float* part_ml, const float* part_acc, int n_split, GpuAttentionParams p, float* out,
                           GpuQ8Rows q8) {
    vendor::wait_for_previous_kernel();
    __shared__ float weight[kSplitMaxSlices];
    __shared__ float reduce[kMaxWarpsPerBlock];
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int64_t first = (t * p.n_head + h) * n_split;
    const int tid = static_cast<int>(threadIdx.x);
    const bool mine = tid < n_split;
    const float m = mine ? part_ml[2 * (first + tid)] : -INFINITY;
    const float l = mine ? part_ml[2 * (first + tid) + 1] : 0.0f;
    const float sink = p.sinks ? p.sinks[h] : -INFINITY;
    // Slice 0 always holds keys (every query sees its own), so `top` is finite.
    const float top = fmaxf(block_max(m, reduce), sink);
    const float w = m == -INFINITY ? 0.0f : expf(m - top);
    if (mine) weight[tid] = w;
    // (block_sum's barriers also publish weight[] to the whole block.)
    const float sum = block_sum(w * l, reduce) + (p.sinks ? expf(sink - top) : 0.0f);
    const float inv = 1.0f / sum;
    float* o = out + (t * p.n_head + h) * p.head_dim_v;
    // With q8 set the row is also quantized for the int8 matrix-vector kernel (the output
    // projection reads it): every thread runs every round, so the 32-lane groups stay whole.
    const int64_t row = p.n_head * p.head_dim_v;
    int8_t* q_row = q8.q ? const_cast<int8_t*>(q8.q) + t * row : nullptr;
    float2* ds_row = q8.q ? reinterpret_cast<float2*>(const_cast<float*>(q8.ds)) + t * (row / 32) : nullptr;
    for (int64_t base = 0; base < p.head_dim_v; base += blockDim.x) {
        const int64_t d = base + threadIdx.x;
        float v = 0.0f;
        if (d < p.head_dim_v) {
            const float* acc = part_acc + first * p.head_dim_v + d;
            for (int s0 = 0; s0 < n_split; s0 += kMergeRound) {
                float a[kMergeRound];
                // An empty slice (weight 0) never wrote its accumulator: not read (a predicated load).
#pragma unroll
                for (int i = 0; i < kMergeRound; ++i) {
                    a[i] = s0 + i < n_split && weight[s0 + i] != 0.0f ? acc[(s0 + i) * p.head_dim_v] : 0.0f;
                }
#pragma unroll
                for (int i = 0; i < kMergeRound; ++i) {
                    if (s0 + i < n_split && weight[s0 + i] != 0.0f) v += weight[s0 + i] * a[i];
                }
            }
            v *= inv;
            o[d] = v;
        }
        if (q_row) quantize_q8_value(v, d < p.head_dim_v, q_row, ds_row, h * p.head_dim_v + d);
    }
}

// The blocks the split path aims for on this device.
int64_t split_blocks_wanted(const GpuContext& ctx) {
    return static_cast<int64_t>(kSplitBlocksPerSm) * std::max(1, ctx.device().multiprocessors);
}

// Grouped blocks wanted per SM. A grouped block has 8 warps (of 32) and keeps a K and V tile of
// ~32 KiB in flight while it computes the previous one; two per SM are ~8 MB in flight on an
// H200, well past HBM latency × bandwidth, and leave room for both to be resident at once.
constexpr int kGroupedBlocksPerSm = 2;
int64_t grouped_blocks_wanted(const GpuContext& ctx) {
    return static_cast<int64_t>(kGroupedBlocksPerSm) * std::max(1, ctx.device().multiprocessors);
}

// Partials the scratch holds: one size per device, whatever the shape. The rows kernel needs
// fewer than 2 · split_blocks_wanted (it splits only while rows < blocks wanted, with n_split ≤
// ⌈blocks wanted / rows⌉); the grouped kernel writes one partial per query head of its blocks,
// up to kSplitMaxSlices per (token, head), and its slice count is capped by this.
constexpr int kScratchEntriesPerSm = 16;
int64_t scratch_entries(const GpuContext& ctx) {
    return static_cast<int64_t>(kScratchEntriesPerSm) * std::max(1, ctx.device().multiprocessors);
}

// The grouped kernel's configuration for a call: its padded head width (0 when the rows kernel
// takes the shape) and its tile of keys, which is also the slices' granularity.
struct GroupedConfig {
    int dims = 0, tile = 0;
};
template <typename KV>
constexpr int grouped_tile(int dims) {
    return dims == 64 ? DecodeShape<KV, 64>::kTile : DecodeShape<KV, 128>::kTile;
}
GroupedConfig grouped_config(const AttentionCall& call) {
    const GpuAttentionParams& p = call.p;
    const bool f16 = call.kv->type() == KvCacheType::F16;
    const int64_t elem = f16 ? 2 : 4, per_chunk = 16 / elem;
    const int64_t widest = std::max(p.head_dim_k, p.head_dim_v);
    const auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
    // One query head per KV head gains nothing from sharing tiles; wider heads, and rows that
    // 16-byte loads cannot read, stay on the rows kernel.
    if (p.n_head / p.n_head_kv < 2 || widest > 128 || p.head_dim_k % per_chunk != 0 || p.head_dim_v % per_chunk != 0 ||
        !aligned(call.kv->keys(call.layer)) || !aligned(call.kv->values(call.layer))) {
        return {};
    }
    const int dims = widest <= 64 ? 64 : 128;
    return {dims, f16 ? grouped_tile<uint16_t>(dims) : grouped_tile<float>(dims)};
}

template <typename KV>
void launch_grouped(const AttentionCall& call, int dims, int n_split, float* part_ml, float* part_acc,
                    const GpuContext& ctx) {
    const GpuAttentionParams& p = call.p;
    const dim3 grid(static_cast<unsigned>(p.n_head_kv), static_cast<unsigned>(n_split),
                    static_cast<unsigned>(call.n_tokens));
    const auto* k = static_cast<const KV*>(call.kv->keys(call.layer));
    const auto* v = static_cast<const KV*>(call.kv->values(call.layer));
    const auto kernel = dims == 64 ? attention_decode_grouped_kernel<KV, 64> : attention_decode_grouped_kernel<KV, 128>;
    launch_chained(ctx, kernel, grid, kDecodeThreads, 0, call.q, k, v, call.positions, call.pos0, p, n_split, part_ml,
                   part_acc);
}

// The most slices a step takes: 32, or 1 .. kSplitMaxSlices under STRATA_GPU_ATTN_MAX_SPLITS (for
// timing studies). Fewer, longer slices let each grouped block pipeline more tiles: at depth 8192
// on an H200 (4 KV heads, tg128) 32 slices gave 275 and 273 tok/s, 64 gave 264 and 263, 16 gave
// 243 and 244 (bench/results/2026-11-30-decode-latency/, run r7).
constexpr int kSplitDefaultSlices = 32;
int64_t split_cap(const GpuContext& ctx) {
    const int n = ctx.tuning().attention_max_splits;
    return n >= 1 && n <= kSplitMaxSlices ? n : kSplitDefaultSlices;
}

}  // namespace

int attention_split_count(const AttentionCall& call, const GpuContext& ctx) {
    if (call.n_tokens >= kAttentionFlashMinTokens) return 1;
    // The most keys any of the queries can see: with the positions on the device, whatever the
    // cache can hold, so that one grid serves every depth.
    int64_t max_keys = call.positions ? call.kv->n_ctx() : call.pos0 + call.n_tokens;
    if (call.p.sliding_window > 0) max_keys = std::min(max_keys, call.p.sliding_window);
    const int64_t by_scratch = scratch_entries(ctx) / (call.n_tokens * call.p.n_head);
    int64_t by_keys = 0, by_device = 0;
    if (const GroupedConfig g = grouped_config(call); g.dims > 0) {
        // Slices of at least one tile: a shallow step (129 keys) runs three one-tile blocks per
        // KV head rather than one block walking every key.
        const int64_t blocks = call.n_tokens * call.p.n_head_kv;
        by_keys = (max_keys + g.tile - 1) / g.tile;
        by_device = (grouped_blocks_wanted(ctx) + blocks - 1) / blocks;
    } else {
        const int64_t rows = call.n_tokens * call.p.n_head;
        by_keys = (max_keys + kSplitMinKeys - 1) / kSplitMinKeys;
        by_device = (split_blocks_wanted(ctx) + rows - 1) / rows;
    }
    const int64_t n = std::min({by_keys, by_device, by_scratch, split_cap(ctx)});
    return static_cast<int>(std::max<int64_t>(n, 1));
}

bool launch_attention_split(const AttentionCall& call, int n_split, GpuContext& ctx) {
    STRATA_CHECK(n_split >= 1 && n_split <= kSplitMaxSlices, "gpu_attention: split count out of range");
    const GpuAttentionParams& p = call.p;
    // One scratch size for every call on this device, so that no shape (a decode step, a short
    // prompt chunk) makes it move under a captured graph.
    const int64_t entries = call.n_tokens * p.n_head * n_split;
    const int64_t max_entries = scratch_entries(ctx);
    STRATA_CHECK(entries <= max_entries, "gpu_attention: more split partials than the scratch holds");
    const auto scratch_floats = static_cast<uint64_t>(max_entries * (2 + kGpuMaxHeadDim));
    float* part_ml = ctx.scratch_floats(kGpuAttentionScratchSlot, scratch_floats);
    float* part_acc = part_ml + 2 * entries;
    const bool f16 = call.kv->type() == KvCacheType::F16;
    if (const GroupedConfig g = grouped_config(call); g.dims > 0) {
        if (f16 && launch_attention_mma_split(call, n_split, part_ml, part_acc, ctx)) {
            // the tensor-core kernel, in slices of the same tile of keys (64)
        } else if (f16) {
            launch_grouped<uint16_t>(call, g.dims, n_split, part_ml, part_acc, ctx);
        } else {
            launch_grouped<float>(call, g.dims, n_split, part_ml, part_acc, ctx);
        }
    } else {
        const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(n_split),
                        static_cast<unsigned>(call.n_tokens));
        if (f16) {
            launch_chained(ctx, attention_split_kernel<uint16_t>, grid, kSplitThreads, 0, call.q,
                           static_cast<const uint16_t*>(call.kv->keys(call.layer)),
                           static_cast<const uint16_t*>(call.kv->values(call.layer)), call.positions, call.pos0, p,
                           n_split, part_ml, part_acc);
        } else {
            launch_chained(ctx, attention_split_kernel<float>, grid, kSplitThreads, 0, call.q,
                           static_cast<const float*>(call.kv->keys(call.layer)),
                           static_cast<const float*>(call.kv->values(call.layer)), call.positions, call.pos0, p,
                           n_split, part_ml, part_acc);
        }
    }
    const bool q8 = call.q8_out.q != nullptr && p.head_dim_v % 32 == 0;
    STRATA_CHECK(!q8 || call.q8_out.n_in == p.n_head * p.head_dim_v, "gpu_attention: int8 output of another row width");
    const dim3 merge_grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(call.n_tokens));
    launch_chained(ctx, attention_merge_kernel, merge_grid, kMergeThreads, 0, part_ml, part_acc, n_split, p, call.out,
                   q8 ? call.q8_out : GpuQ8Rows{});
    return q8;
}

}  // namespace strata::gpu
