// Split-K ("flash-decoding") attention for steps of few query tokens over a deep cache
// (kernels/attention_paths.cuh). One block per (token, head) leaves most of the GPU idle at
// decode: 32 heads are 32 blocks on a 132-SM H200, each streaming the whole cache. Here each
// (token, head) is cut into n_split slices of its visible keys, a block per slice runs the rows
// kernel's warp loop over its slice and writes its partial softmax (max logit, Σ exp, Σ exp ·
// value, unnormalized) to scratch; a merge kernel then rescales the slices to a common max, adds
// the sink's logit once and normalizes.
//
// Graph replay: a captured decode step is replayed at every depth, with the depth read on the
// device from `positions`. So n_split (the grid) is fixed from what the host knows for every
// replay, the cache capacity; each block derives its slice from the depth it reads, and a block
// whose slice is empty (a shallow step) writes a neutral partial (max = -inf, Σ = 0) that the
// merge skips. The scratch is one size per device (about 1 MB on an H200), so it is never
// reallocated between replays, which would invalidate the graph.
#include <algorithm>
#include <cmath>

#include "backend/gpu/kernels/attention_paths.cuh"
#include "backend/gpu/kernels/attention_rows.cuh"

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
__global__ void __launch_bounds__(kMergeThreads)
    attention_merge_kernel(const float* part_ml, const float* part_acc, int n_split, GpuAttentionParams p, float* out) {
    __shared__ float weight[kSplitMaxSlices];
    const int64_t h = blockIdx.x, t = blockIdx.y;
    const int64_t first = (t * p.n_head + h) * n_split;
    const float sink = p.sinks ? p.sinks[h] : -INFINITY;
    // Slice 0 always holds keys (every query sees its own), so `top` is finite.
    float top = sink;
    for (int s = 0; s < n_split; ++s) top = fmaxf(top, part_ml[2 * (first + s)]);
    if (static_cast<int>(threadIdx.x) < n_split) {
        const float m = part_ml[2 * (first + threadIdx.x)];
        weight[threadIdx.x] = m == -INFINITY ? 0.0f : expf(m - top);
    }
    __syncthreads();
    float sum = p.sinks ? expf(sink - top) : 0.0f;
    for (int s = 0; s < n_split; ++s) sum += weight[s] * part_ml[2 * (first + s) + 1];
    const float inv = 1.0f / sum;
    float* o = out + (t * p.n_head + h) * p.head_dim_v;
    for (int64_t d = threadIdx.x; d < p.head_dim_v; d += blockDim.x) {
        float v = 0.0f;
        // An empty slice never wrote its accumulator: skip it rather than multiply garbage by 0.
        for (int s = 0; s < n_split; ++s) {
            if (weight[s] != 0.0f) v += weight[s] * part_acc[(first + s) * p.head_dim_v + d];
        }
        o[d] = v * inv;
    }
}

// The blocks the split path aims for on this device.
int64_t split_blocks_wanted(const GpuContext& ctx) {
    return static_cast<int64_t>(kSplitBlocksPerSm) * std::max(1, ctx.device().multiprocessors);
}

}  // namespace

int attention_split_count(const AttentionCall& call, const GpuContext& ctx) {
    if (call.n_tokens >= kAttentionFlashMinTokens) return 1;
    // The most keys any of the queries can see: with the positions on the device, whatever the
    // cache can hold, so that one grid serves every depth.
    int64_t max_keys = call.positions ? call.kv->n_ctx() : call.pos0 + call.n_tokens;
    if (call.p.sliding_window > 0) max_keys = std::min(max_keys, call.p.sliding_window);
    const int64_t rows = call.n_tokens * call.p.n_head;
    const int64_t by_keys = (max_keys + kSplitMinKeys - 1) / kSplitMinKeys;
    const int64_t by_device = (split_blocks_wanted(ctx) + rows - 1) / rows;
    return static_cast<int>(std::clamp<int64_t>(std::min(by_keys, by_device), 1, kSplitMaxSlices));
}

void launch_attention_split(const AttentionCall& call, int n_split, GpuContext& ctx) {
    STRATA_CHECK(n_split >= 1 && n_split <= kSplitMaxSlices, "gpu_attention: split count out of range");
    const GpuAttentionParams& p = call.p;
    // One scratch size for every call on this device, so that no shape (a decode step, a short
    // prompt chunk) makes it move under a captured graph. A split runs only while rows < blocks
    // wanted, with n_split ≤ ⌈blocks wanted / rows⌉, so entries < 2 · blocks wanted.
    const int64_t entries = call.n_tokens * p.n_head * n_split;
    const int64_t max_entries = 2 * split_blocks_wanted(ctx);
    STRATA_CHECK(entries <= max_entries, "gpu_attention: more split partials than the scratch holds");
    const auto scratch_floats = static_cast<uint64_t>(max_entries * (2 + kGpuMaxHeadDim));
    float* part_ml = ctx.scratch_floats(kGpuAttentionScratchSlot, scratch_floats);
    float* part_acc = part_ml + 2 * entries;
    const dim3 grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(n_split),
                    static_cast<unsigned>(call.n_tokens));
    const vendor::Stream stream = stream_of(ctx);
    if (call.kv->type() == KvType::F16) {
        attention_split_kernel<<<grid, kSplitThreads, 0, stream>>>(
            call.q, static_cast<const uint16_t*>(call.kv->keys(call.layer)),
            static_cast<const uint16_t*>(call.kv->values(call.layer)), call.positions, call.pos0, p, n_split, part_ml,
            part_acc);
    } else {
        attention_split_kernel<<<grid, kSplitThreads, 0, stream>>>(
            call.q, static_cast<const float*>(call.kv->keys(call.layer)),
            static_cast<const float*>(call.kv->values(call.layer)), call.positions, call.pos0, p, n_split, part_ml,
            part_acc);
    }
    STRATA_GPU_LAUNCHED();
    const dim3 merge_grid(static_cast<unsigned>(p.n_head), static_cast<unsigned>(call.n_tokens));
    attention_merge_kernel<<<merge_grid, kMergeThreads, 0, stream>>>(part_ml, part_acc, n_split, p, call.out);
    STRATA_GPU_LAUNCHED();
}

}  // namespace strata::gpu
