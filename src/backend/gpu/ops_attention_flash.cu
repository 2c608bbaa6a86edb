// Flash-style attention for prompt batches (kernels/attention_paths.cuh). The rows kernel gives
// every (query token, head) its own block, so each key and value row is fetched from L2 once per
// query token: a 4096-token prompt reads the cache thousands of times. Here a block owns a tile of
// BQ query tokens of one head: it stages a tile of BK keys and their values in shared memory once
// and every query of the tile scores and accumulates against it, with an online softmax per row.
// Key tiles beyond the block's last query (causal) or before its first window start are never
// visited; the diagonal tile and windows are masked per (row, key).
//
// Thread layout (kFlashThreads = 128): a thread owns kRows = 4 consecutive query rows; the
// kLanes threads that share those rows split the tile's keys (scores) and the value dimensions
// (accumulators) between them, interleaved so neighbouring lanes read neighbouring shared-memory
// banks. The row max of a tile is reduced over those lanes with shuffles (kLanes divides any warp
// size, 32 or 64); the row sums stay per lane until the end. Plain FMA arithmetic, one source for
// CUDA and HIP. An f16 cache on CUDA sm_80+ takes the tensor-core kernel instead
// (ops_attention_flash_mma.cu) where its shape fits.
#include <algorithm>
#include <cmath>

#include "backend/gpu/gpu_ops_attention_mma.h"
#include "backend/gpu/kernels/attention_paths.cuh"
#include "backend/gpu/kernels/attention_rows.cuh"

namespace strata::gpu {

namespace {

constexpr int kFlashThreads = 128;

// Compile-time shape of one configuration: D head dims (padded with zeros up to it), BQ query
// rows and BK keys per tile, the cache element KV kept as it is in shared memory (f16 tiles are
// half the bytes; the widening happens as they are read).
template <typename KV, int D, int BQ, int BK>
struct FlashShape {
    static constexpr int kRows = 4;  // query rows per thread
    static constexpr int kLanes = kFlashThreads / (BQ / kRows);  // threads sharing those rows
    static constexpr int kKeys = BK / kLanes;    // scores per row per thread
    static constexpr int kCols = D / kLanes;     // value dims per row per thread
    // Row strides of an odd number of 32-bit words: the lanes of a row group read different rows
    // at the same dim, and these strides put those rows in different banks.
    static constexpr int kQStride = D + 1;
    static constexpr int kKStride = D + (sizeof(KV) == 4 ? 1 : 2);
    static constexpr int kPStride = BK + 1;
    static constexpr size_t kSharedBytes = sizeof(float) * (BQ * kQStride + BQ * kPStride) +
                                           sizeof(KV) * (BK * kKStride + BK * D) + sizeof(int64_t) * 2 * BQ;
    static_assert(BQ % kRows == 0 && kFlashThreads % (BQ / kRows) == 0, "row groups must tile the block");
    static_assert(kLanes <= 32 && 32 % kLanes == 0, "a row group's lanes must sit in one warp");
    static_assert(kKeys >= 1 && BK % kLanes == 0 && D % kLanes == 0, "keys and dims must split evenly");
    static_assert(kSharedBytes <= 48 * 1024, "static shared memory is limited to 48 KiB per block");
};

// Max over the kLanes consecutive lanes that share a row group.
template <int kLanes>
__device__ __forceinline__ float lanes_max(float v) {
    for (int offset = kLanes / 2; offset > 0; offset /= 2) v = fmaxf(v, vendor::shfl_xor(v, offset));
    return v;
}
template <int kLanes>
__device__ __forceinline__ float lanes_sum(float v) {
    for (int offset = kLanes / 2; offset > 0; offset /= 2) v += vendor::shfl_xor(v, offset);
    return v;
}

// Block (x: head, y: query tile, heaviest first). Token t sits at positions[t] when `positions`
// is set, else at pos0 + t.
template <typename KV, int D, int BQ, int BK>
__global__ void __launch_bounds__(kFlashThreads)
    attention_flash_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions, int64_t pos0,
                           int64_t n_tokens, GpuAttentionParams p, float* out) {
    vendor::wait_for_previous_kernel();
    using S = FlashShape<KV, D, BQ, BK>;
    constexpr int R = S::kRows, L = S::kLanes;
    __shared__ float qs[BQ][S::kQStride];  // the tile's queries, scaled, zero past head_dim_k
    __shared__ KV ks[BK][S::kKStride];     // keys, zero past head_dim_k and past the last key
    __shared__ KV vs[BK][D];               // values, likewise
    __shared__ float ps[BQ][S::kPStride];  // this tile's softmax weights
    __shared__ int64_t row_begin[BQ], row_end[BQ];

    const int tid = static_cast<int>(threadIdx.x);
    const int lane = tid % L, row0 = (tid / L) * R;  // this thread's rows: row0 .. row0 + R - 1
    const int64_t h = blockIdx.x;
    // Later tiles see more keys: schedule them first so the short ones fill in behind.
    const int64_t t0 = (static_cast<int64_t>(gridDim.y) - 1 - blockIdx.y) * BQ;
    const int64_t kv_head = h / (p.n_head / p.n_head_kv);
    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const KV* k_head = keys + kv_head * p.head_dim_k;
    const KV* v_head = values + kv_head * p.head_dim_v;

    for (int e = tid; e < BQ * D; e += kFlashThreads) {
        const int r = e / D, d = e % D;
        const int64_t t = t0 + r;
        qs[r][d] = t < n_tokens && d < p.head_dim_k ? q[(t * p.n_head + h) * p.head_dim_k + d] * p.scale : 0.0f;
    }
    if (tid < BQ) {  // a row past the batch sees no key
        const int64_t t = t0 + tid;
        KeySpan span{0, 0};
        if (t < n_tokens) span = visible_keys(p, positions ? static_cast<int64_t>(positions[t]) : pos0 + t);
        row_begin[tid] = span.begin, row_end[tid] = span.end;
    }
    __syncthreads();
    // The keys any row of the tile sees; the same in every thread, so the loop below (with its
    // barriers and shuffles) runs the same number of times everywhere.
    int64_t lo = INT64_MAX, hi = 0;
    for (int r = 0; r < BQ; ++r) {
        if (row_end[r] > row_begin[r]) lo = min(lo, row_begin[r]), hi = max(hi, row_end[r]);
    }
    int64_t my_begin[R], my_end[R];
    float m[R], l[R], acc[R][S::kCols];
#pragma unroll
    for (int i = 0; i < R; ++i) {
        my_begin[i] = row_begin[row0 + i], my_end[i] = row_end[row0 + i];
        m[i] = -INFINITY, l[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < S::kCols; ++c) acc[i][c] = 0.0f;
    }

    for (int64_t k0 = lo; k0 < hi; k0 += BK) {
        for (int e = tid; e < BK * D; e += kFlashThreads) {
            const int k = e / D, d = e % D;
            const int64_t j = k0 + k;
            // Rows at or past hi may not have been written: never read them.
            ks[k][d] = j < hi && d < p.head_dim_k ? k_head[j * k_stride + d] : static_cast<KV>(0);
            vs[k][d] = j < hi && d < p.head_dim_v ? v_head[j * v_stride + d] : static_cast<KV>(0);
        }
        __syncthreads();

        // Scores of this thread's rows against keys lane, lane + L, ...
        float s[R][S::kKeys];
#pragma unroll
        for (int i = 0; i < R; ++i) {
#pragma unroll
            for (int k = 0; k < S::kKeys; ++k) s[i][k] = 0.0f;
        }
#pragma unroll 8
        for (int d = 0; d < D; ++d) {
            float qv[R], kv[S::kKeys];
#pragma unroll
            for (int i = 0; i < R; ++i) qv[i] = qs[row0 + i][d];
#pragma unroll
            for (int k = 0; k < S::kKeys; ++k) kv[k] = load_kv(ks[lane + k * L], d);
#pragma unroll
            for (int i = 0; i < R; ++i) {
#pragma unroll
                for (int k = 0; k < S::kKeys; ++k) s[i][k] += qv[i] * kv[k];
            }
        }

        // Online softmax per row: the tile's max joins the running max, earlier sums and
        // accumulators are rescaled to it, and the weights go to shared memory for the values.
#pragma unroll
        for (int i = 0; i < R; ++i) {
            float tile_max = -INFINITY;
#pragma unroll
            for (int k = 0; k < S::kKeys; ++k) {
                const int64_t j = k0 + lane + k * L;
                if (j < my_begin[i] || j >= my_end[i]) s[i][k] = -INFINITY;
                tile_max = fmaxf(tile_max, s[i][k]);
            }
            const float m_new = fmaxf(m[i], lanes_max<L>(tile_max));
            // A row that has seen no key yet (m_new = -inf) keeps l = acc = 0 and weighs nothing.
            const float correction = m_new == -INFINITY ? 1.0f : expf(m[i] - m_new);
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < S::kKeys; ++k) {
                const float w = m_new == -INFINITY ? 0.0f : expf(s[i][k] - m_new);
                ps[row0 + i][lane + k * L] = w;
                sum += w;
            }
            l[i] = l[i] * correction + sum;
            m[i] = m_new;
#pragma unroll
            for (int c = 0; c < S::kCols; ++c) acc[i][c] *= correction;
        }
        __syncthreads();

#pragma unroll 4
        for (int k = 0; k < BK; ++k) {
            float w[R], v[S::kCols];
#pragma unroll
            for (int i = 0; i < R; ++i) w[i] = ps[row0 + i][k];
#pragma unroll
            for (int c = 0; c < S::kCols; ++c) v[c] = load_kv(vs[k], lane + c * L);
#pragma unroll
            for (int i = 0; i < R; ++i) {
#pragma unroll
                for (int c = 0; c < S::kCols; ++c) acc[i][c] += w[i] * v[c];
            }
        }
        __syncthreads();  // the next tile overwrites ks, vs and ps
    }

    // Every lane of a row group holds the row's max; its sum is spread over the lanes. A sink
    // joins the normalization as one more logit and adds no value.
    const float sink = p.sinks ? p.sinks[h] : -INFINITY;
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const float row_sum = lanes_sum<L>(l[i]);  // all lanes, before any row is skipped
        const int64_t t = t0 + row0 + i;
        if (t >= n_tokens) continue;
        const float top = fmaxf(m[i], sink);  // m[i] is finite: a row sees at least its own key
        const float rescale = expf(m[i] - top);
        const float inv = rescale / (row_sum * rescale + (p.sinks ? expf(sink - top) : 0.0f));
        float* o = out + (t * p.n_head + h) * p.head_dim_v;
#pragma unroll
        for (int c = 0; c < S::kCols; ++c) {
            const int64_t d = lane + c * L;
            if (d < p.head_dim_v) o[d] = acc[i][c] * inv;
        }
    }
}

template <typename KV, int D, int BQ, int BK>
void launch_flash(const AttentionCall& call, GpuContext& ctx) {
    const int64_t n_tiles = (call.n_tokens + BQ - 1) / BQ;
    const dim3 grid(static_cast<unsigned>(call.p.n_head), static_cast<unsigned>(n_tiles));
    launch_chained(ctx, attention_flash_kernel<KV, D, BQ, BK>, grid, kFlashThreads, 0, call.q,
                   static_cast<const KV*>(call.kv->keys(call.layer)), static_cast<const KV*>(call.kv->values(call.layer)),
                   call.positions, call.pos0, call.n_tokens, call.p, call.out);
}

}  // namespace

bool launch_attention_flash(const AttentionCall& call, GpuContext& ctx) {
    if (launch_attention_flash_mma(call, ctx)) return true;
    const int64_t dim = std::max(call.p.head_dim_k, call.p.head_dim_v);
    const bool f16 = call.kv->type() == KvCacheType::F16;
    // Shared memory holds a 48 KiB block: the query tile (f32) is the largest part, so wider
    // heads take fewer query rows, and f32 caches (twice the bytes per key) fewer keys.
    if (dim <= 64) {
        if (f16) launch_flash<uint16_t, 64, 64, 32>(call, ctx);
        else launch_flash<float, 64, 64, 32>(call, ctx);
        return true;
    }
    if (dim <= 128) {
        if (f16) launch_flash<uint16_t, 128, 32, 32>(call, ctx);
        else launch_flash<float, 128, 32, 16>(call, ctx);
        return true;
    }
    return false;  // 256-wide heads: the rows kernel
}

}  // namespace strata::gpu
