// Flash attention for prompt batches on f16 tensor cores (CUDA sm_80+) over an f16 KV cache
// (gpu_ops_attention_mma.h); the FMA tiles of ops_attention_flash.cu take every other case, with
// the same semantics: causal by positions, sliding windows, sinks, grouped-query heads.
//
// Rows. A block of 4 warps owns 64 query rows of one KV head, and a row is a (token, query head)
// pair of that KV head's group: row r is token t0 + r / G, head kv · G + r % G, for the
// G = n_head / n_head_kv heads that read the same keys (64 / G tokens per block, G ≤ 64). Each
// staged key and value tile then serves all the heads that need it, and compared with blocks of
// 64 tokens of one head (as the FMA tiles have): the causal diagonal of a block is 64 / G tokens
// wide (G = 8: 8 instead of 64, so fewer masked scores and fewer keys visited past a block's
// first row), and a short batch fills its blocks (32 tokens: every row busy, not half of them).
// Rows a block holds past the batch (or past 64 / G · G) compute on zero queries, never written.
//
// Products. Warp w owns rows 16w .. 16w + 15 and walks the block's keys in tiles of 64:
//   S = Q · Kᵀ   16 × 64 scores, mma.m16n8k16 over head_dim / 16 steps, K by ldmatrix;
//   online softmax in f32 on the S fragments (row max over the 4 lanes sharing a row);
//   O += P · V   the weights rounded to f16 are A fragments as they lie (mma_f16.cuh), V by
//                ldmatrix.trans, 16 × head_dim f32 accumulators.
// Q is read from global memory once, straight into A fragments, scaled by scale · log2(e) before
// its f16 rounding: the scale costs one multiply per query value instead of one per score and
// tile, and scores come out in base 2, so each weight is one exp2 (q · scale is smaller than q:
// no new f16 overflow). Sinks are moved to base 2 for the final normalization.
//
// Shared memory. One key tile and one value tile (64 rows of head_dim halves each), rows padded
// by 16 bytes: the 8 rows of an ldmatrix matrix then start 16 bytes apart modulo 128 and cover
// all 32 banks once (no conflicts), and each row stays 16-byte aligned for cp.async. Per tile:
// wait for K, start copying V, compute S and P; wait for V, start copying the next K, compute
// P · V, so each copy overlaps the other product. 34.8 KiB (head dim 128), static.
//
// Registers. Q (32), O (64) and S (32) fragments of a 128-wide head stay in registers; capped at
// 168 per thread (ptxas: no spills) so three blocks share a multiprocessor (12 warps: one warp's
// softmax overlaps another's products). H200, synthetic Qwen3-30B-A3B with 8 layers, pp4096 at
// depth 8192: 60.0k tok/s (attention 29% of the time, ~270 TFLOP/s) against 12.0k with the FMA
// tiles (85%); 208 registers and two blocks per multiprocessor measured the same.
//
// Visiting. Tiles cover [lo, hi): the first key any row of the block sees to the last one, so
// tiles before every window or past the causal limit of every row are never visited; a tile all
// rows see entirely skips masking, the others mask per (row, key). A warp whose 16 rows see
// nothing of a tile skips its products (it still copies and meets the barriers).
// STRATA_GPU_FLASH_MMA=0 turns this path off (A/B against the FMA tiles).
//
// Decode (split keys). A one-token step has G rows per KV head, one block per head: too few blocks
// to read a deep cache. launch_attention_mma_split gives the grid a third dimension of n_split
// slices of whole tiles over the keys [lo, hi) (the split path's merge kernel then combines them);
// each block writes its rows' running max (natural log), sum and unnormalized output as partials
// instead of the normalized rows. The products are the same, so the G query heads of a group share
// each staged tile and run as one 16-row mma tile, where the FMA decode kernel
// (attention_decode_grouped.cuh) converts and multiplies every staged value once per head.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/gpu/gpu_ops_attention_mma.h"
#include "backend/gpu/kernels/attention_paths.cuh"
#include "backend/gpu/kernels/attention_rows.cuh"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/mma_f16.cuh"

namespace strata::gpu {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kRows = 16 * kWarps;  // (token, query head) rows per block
constexpr int kKeys = 64;           // keys per staged tile
[[maybe_unused]] constexpr float kLog2e = 1.4426950408889634f;
[[maybe_unused]] constexpr float kLn2 = 0.6931471805599453f;

// Tile geometry for head dims padded up to D (64 or 128).
template <int D>
struct MmaTiles {
    static constexpr int kStride = D + 8;        // halves per staged row: 16 bytes of padding
    static constexpr int kDimSteps = D / 16;     // k steps of Q · Kᵀ, pairs of dim tiles of P · V
    static constexpr int kKeySteps = kKeys / 16; // pairs of key tiles of S, k steps of P · V
    static constexpr int kRowPieces = D / 8;     // 16-byte pieces of a staged row
    static constexpr int kRowStep = kThreads / kRowPieces;  // rows a pass of the block stages
    static_assert(D % 16 == 0 && kKeys % 16 == 0, "tiles are whole mma steps");
    static_assert(kThreads % kRowPieces == 0 && kKeys % kRowStep == 0, "a tile's pieces split evenly over the threads");
    static_assert(2 * kKeys * kStride * 2 + 2 * kRows * 4 <= 48 * 1024, "static shared memory is limited to 48 KiB");
};

// Block (x: KV head, y: row tile, heaviest first, z: slice of the keys). Token t sits at
// positions[t] when `positions` is set, else at pos0 + t. Three blocks per multiprocessor (see
// Registers above). part_ml null: normalized rows into `out`; else partials of slice z of n_split
// into part_ml / part_acc, laid out as the split path's merge reads them.
template <int D>
__global__ void __launch_bounds__(kThreads, 3)
    attention_flash_mma_kernel(const float* q, const uint16_t* keys, const uint16_t* values, const int32_t* positions,
                               int64_t pos0, int64_t n_tokens, GpuAttentionParams p, float* out, int n_split,
                               float* part_ml, float* part_acc) {
    vendor::wait_for_previous_kernel();
#if STRATA_MMA_F16
    using T = MmaTiles<D>;
    __shared__ __align__(16) uint16_t k_tile[kKeys * T::kStride];
    __shared__ __align__(16) uint16_t v_tile[kKeys * T::kStride];
    __shared__ int row_begin[kRows], row_end[kRows];  // each row's visible keys; empty past the batch

    const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t4 = lane % 4;  // this lane's rows g and g + 8, columns 2·t4, 2·t4 + 1
    const int group = static_cast<int>(p.n_head / p.n_head_kv);
    const int tokens = kRows / group;  // per block
    const int64_t kv_head = blockIdx.x;
    // Later tiles see more keys: schedule them first so the short ones fill in behind.
    const int64_t t0 = (static_cast<int64_t>(gridDim.y) - 1 - blockIdx.y) * tokens;
    auto row_valid = [&](int r) { return r < tokens * group && t0 + r / group < n_tokens; };
    auto row_offset = [&](int r) { return (t0 + r / group) * p.n_head + kv_head * group + r % group; };

    if (tid < kRows) {
        KeySpan span{0, 0};
        if (row_valid(tid)) {
            const int64_t t = t0 + tid / group;
            span = visible_keys(p, positions ? static_cast<int64_t>(positions[t]) : pos0 + t);
        }
        row_begin[tid] = static_cast<int>(span.begin), row_end[tid] = static_cast<int>(span.end);
    }

    // This warp's 16 query rows as A fragments of head_dim / 16 steps (zero past head_dim_k).
    const float q_scale = p.scale * kLog2e;
    uint32_t qa[T::kDimSteps][4];
    {
        const float* q_rows[2];
        bool valid[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int r = 16 * warp + g + 8 * i;
            valid[i] = row_valid(r);
            q_rows[i] = valid[i] ? q + row_offset(r) * p.head_dim_k : q;
        }
#pragma unroll
        for (int c = 0; c < T::kDimSteps; ++c) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const int d = 16 * c + 8 * half + 2 * t4;
                    float2 v = make_float2(0.0f, 0.0f);
                    if (valid[i] && d < p.head_dim_k) v = *reinterpret_cast<const float2*>(q_rows[i] + d);
                    qa[c][2 * half + i] = pack_half2(v.x * q_scale, v.y * q_scale);
                }
            }
        }
    }
    __syncthreads();

    // [lo, hi): the keys any row of the block sees; [open_lo, open_hi): the keys all of them see.
    // The same in every thread, so the loop below (with its barriers) runs alike everywhere.
    int lo = INT_MAX, hi = 0, open_lo = 0, open_hi = INT_MAX;
    for (int r = 0; r < kRows; ++r) {
        const int b = row_begin[r], e = row_end[r];
        if (e > b) lo = min(lo, b), hi = max(hi, e), open_lo = max(open_lo, b), open_hi = min(open_hi, e);
    }
    if (part_ml && lo < hi) {  // this block's slice: whole tiles from lo, so no tile crosses a slice's end
        const int tiles = (hi - lo + kKeys - 1) / kKeys, per_slice = (tiles + n_split - 1) / n_split;
        const int slice_lo = lo + static_cast<int>(blockIdx.z) * per_slice * kKeys;
        hi = min(hi, slice_lo + per_slice * kKeys);
        lo = slice_lo;  // lo >= hi: an empty slice, which writes max -inf
    }
    int warp_lo = INT_MAX, warp_hi = 0;
    for (int r = 16 * warp; r < 16 * warp + 16; ++r) {
        if (row_end[r] > row_begin[r]) warp_lo = min(warp_lo, row_begin[r]), warp_hi = max(warp_hi, row_end[r]);
    }
    int my_begin[2], my_end[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        my_begin[i] = row_begin[16 * warp + g + 8 * i];
        my_end[i] = row_end[16 * warp + g + 8 * i];
    }

    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const uint16_t* k_head = keys + kv_head * p.head_dim_k;
    const uint16_t* v_head = values + kv_head * p.head_dim_v;
    // Keys k0 .. k0 + kKeys - 1 of one head into `tile`; zeros past hi (rows there may never have
    // been written, and a NaN there would survive a zero weight) and past the head's width. This
    // thread copies the 16 bytes at dim `piece` of rows first_row + i · kRowStep.
    const int first_row = tid / T::kRowPieces, piece = tid % T::kRowPieces * 8;
    auto stage = [&](uint16_t* tile, const uint16_t* head, int64_t stride, int64_t width, int k0) {
        const uint16_t* src = head + (k0 + first_row) * stride + piece;
        uint16_t* dst = tile + first_row * T::kStride + piece;
        const bool in_width = piece < width;
#pragma unroll
        for (int i = 0; i < kKeys / T::kRowStep; ++i) {
            const bool fill = in_width && k0 + first_row + i * T::kRowStep < hi;
            cp_async_16(dst + i * T::kRowStep * T::kStride, fill ? src + i * T::kRowStep * stride : head, fill);
        }
        cp_async_commit();
    };
    // Where this lane's ldmatrix rows start: for K, matrices (keys 0-7 | 8-15) × (dims 0-7 | 8-15)
    // give the b[0], b[1] of two key tiles; for V (transposed), (keys 0-7 | 8-15) × (dims 0-7 |
    // 8-15) give the b[0], b[1] of two dim tiles.
    const int k_lane = ((lane & 7) + 8 * (lane >> 4)) * T::kStride + 8 * ((lane >> 3) & 1);
    const int v_lane = ((lane & 7) + 8 * ((lane >> 3) & 1)) * T::kStride + 8 * (lane >> 4);

    float o[2 * T::kDimSteps][4];  // O fragments: dim tile n holds dims 8n + 2·t4, + 1
#pragma unroll
    for (int n = 0; n < 2 * T::kDimSteps; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};  // per row: max (base 2), this lane's sum

    if (lo < hi) stage(k_tile, k_head, k_stride, p.head_dim_k, lo);
    for (int k0 = lo; k0 < hi; k0 += kKeys) {
        cp_async_wait_all();
        __syncthreads();  // K staged; every warp is done with the previous V
        stage(v_tile, v_head, v_stride, p.head_dim_v, k0);
        const bool active = k0 < warp_hi && k0 + kKeys > warp_lo;
        uint32_t pa[T::kKeySteps][4];  // P as A fragments, keys 16j .. 16j + 15
        if (active) {
            float s[2 * T::kKeySteps][4];  // key tile n holds keys k0 + 8n + 2·t4, + 1
#pragma unroll
            for (int n = 0; n < 2 * T::kKeySteps; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
            for (int c = 0; c < T::kDimSteps; ++c) {
#pragma unroll
                for (int j = 0; j < T::kKeySteps; ++j) {
                    uint32_t b[4];
                    ldmatrix_x4(b, k_tile + k_lane + 16 * j * T::kStride + 16 * c);
                    mma_f16_k16(s[2 * j], qa[c], b[0], b[1]);
                    mma_f16_k16(s[2 * j + 1], qa[c], b[2], b[3]);
                }
            }
            if (k0 < open_lo || k0 + kKeys > open_hi) {
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const int begin = my_begin[i] - k0, end = my_end[i] - k0;
#pragma unroll
                    for (int n = 0; n < 2 * T::kKeySteps; ++n) {
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int key = 8 * n + 2 * t4 + e;
                            if (key < begin || key >= end) s[n][2 * i + e] = -INFINITY;
                        }
                    }
                }
            }
            // Online softmax per row: the tile's max joins the running max, the earlier sum and
            // accumulators are rescaled to it (skipped while no row of the warp has a new max,
            // as in most tiles once the largest scores have been seen). A row that has seen no
            // key yet (max -inf) keeps weights, sum and accumulators at zero: exp2(-inf - 0).
            float correction[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                float top = m[i];
#pragma unroll
                for (int n = 0; n < 2 * T::kKeySteps; ++n) top = fmaxf(top, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
                top = fmaxf(top, vendor::shfl_xor(top, 1));
                top = fmaxf(top, vendor::shfl_xor(top, 2));
                const float base = top == -INFINITY ? 0.0f : top;
                correction[i] = exp2_flush(m[i] - base);
                m[i] = top;
                float sum = 0.0f;
#pragma unroll
                for (int n = 0; n < 2 * T::kKeySteps; ++n) {
                    s[n][2 * i] = exp2_flush(s[n][2 * i] - base);
                    s[n][2 * i + 1] = exp2_flush(s[n][2 * i + 1] - base);
                    sum += s[n][2 * i] + s[n][2 * i + 1];
                }
                l[i] = l[i] * correction[i] + sum;
            }
            if (!warp_all(correction[0] == 1.0f && correction[1] == 1.0f)) {
#pragma unroll
                for (int n = 0; n < 2 * T::kDimSteps; ++n) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) o[n][e] *= correction[e / 2];
                }
            }
#pragma unroll
            for (int j = 0; j < T::kKeySteps; ++j) {
                pa[j][0] = pack_half2(s[2 * j][0], s[2 * j][1]);
                pa[j][1] = pack_half2(s[2 * j][2], s[2 * j][3]);
                pa[j][2] = pack_half2(s[2 * j + 1][0], s[2 * j + 1][1]);
                pa[j][3] = pack_half2(s[2 * j + 1][2], s[2 * j + 1][3]);
            }
        }
        cp_async_wait_all();
        __syncthreads();  // V staged; every warp is done with K
        if (k0 + kKeys < hi) stage(k_tile, k_head, k_stride, p.head_dim_k, k0 + kKeys);
        if (active) {
#pragma unroll
            for (int j = 0; j < T::kKeySteps; ++j) {
#pragma unroll
                for (int c = 0; c < T::kDimSteps; ++c) {
                    uint32_t b[4];
                    ldmatrix_x4_trans(b, v_tile + v_lane + 16 * j * T::kStride + 16 * c);
                    mma_f16_k16(o[2 * c], pa[j], b[0], b[1]);
                    mma_f16_k16(o[2 * c + 1], pa[j], b[2], b[3]);
                }
            }
        }
    }

    // The four lanes of a row hold its max alike and parts of its sum. A sink joins the
    // normalization as one more logit and adds no value.
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        l[i] += vendor::shfl_xor(l[i], 1);
        l[i] += vendor::shfl_xor(l[i], 2);
    }
    if (part_ml) {  // a slice's partials; the merge adds the sink
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int r = 16 * warp + g + 8 * i;
            if (!row_valid(r)) continue;
            const int64_t t = t0 + r / group, h = kv_head * group + r % group;
            const int64_t entry = (t * p.n_head + h) * n_split + blockIdx.z;
            if (t4 == 0) part_ml[2 * entry] = m[i] == -INFINITY ? -INFINITY : m[i] * kLn2, part_ml[2 * entry + 1] = l[i];
            float* acc = part_acc + entry * p.head_dim_v;
#pragma unroll
            for (int n = 0; n < 2 * T::kDimSteps; ++n) {
                const int d = 8 * n + 2 * t4;
                if (d < p.head_dim_v) *reinterpret_cast<float2*>(acc + d) = make_float2(o[n][2 * i], o[n][2 * i + 1]);
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int r = 16 * warp + g + 8 * i;
        if (!row_valid(r)) continue;
        const int64_t h = kv_head * group + r % group;
        const float sink = p.sinks ? p.sinks[h] * kLog2e : -INFINITY;
        const float top = fmaxf(m[i], sink);  // m[i] is finite: a row sees at least its own key
        const float rescale = exp2_flush(m[i] - top);
        const float inv = rescale / (l[i] * rescale + (p.sinks ? exp2_flush(sink - top) : 0.0f));
        float* row = out + row_offset(r) * p.head_dim_v;
#pragma unroll
        for (int n = 0; n < 2 * T::kDimSteps; ++n) {
            const int d = 8 * n + 2 * t4;
            if (d < p.head_dim_v) {
                *reinterpret_cast<float2*>(row + d) = make_float2(o[n][2 * i] * inv, o[n][2 * i + 1] * inv);
            }
        }
    }
#endif
}

bool aligned_to(const void* ptr, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

// False when the kernel as loaded for this device lacks its body (a build for targets below sm_80
// running through its PTX).
template <int D>
bool launch_mma(const AttentionCall& call, int n_split, float* part_ml, float* part_acc, GpuContext& ctx) {
    int ptx = 0;
    auto* const kernel = &attention_flash_mma_kernel<D>;
    if (!vendor::ok(vendor::kernel_ptx_version(reinterpret_cast<const void*>(kernel), &ptx)) || ptx < 80) return false;
    const int64_t tokens = kRows / (call.p.n_head / call.p.n_head_kv);
    const int64_t n_tiles = (call.n_tokens + tokens - 1) / tokens;
    const dim3 grid(static_cast<unsigned>(call.p.n_head_kv), static_cast<unsigned>(n_tiles), static_cast<unsigned>(n_split));
    launch_chained(ctx, kernel, grid, kThreads, 0, call.q, static_cast<const uint16_t*>(call.kv->keys(call.layer)),
                   static_cast<const uint16_t*>(call.kv->values(call.layer)), call.positions, call.pos0, call.n_tokens,
                   call.p, call.out, n_split, part_ml, part_acc);
    return true;
}

}  // namespace

bool gpu_attention_flash_mma(const GpuContext& ctx) {
#if defined(__HIP__) || defined(__HIPCC__) || defined(STRATA_GPU_HIP)
    constexpr bool kHasF16Mma = false;  // no HIP tensor-core attention yet: the FMA tiles
#else
    constexpr bool kHasF16Mma = true;
#endif
    const std::string& arch = ctx.device().arch;  // "sm_90"
    return kHasF16Mma && ctx.tuning().flash_mma && arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 80;
}

bool gpu_attention_decode_mma(const GpuContext& ctx) {
    return ctx.tuning().decode_mma && gpu_attention_flash_mma(ctx);
}

namespace {

// Whether the tensor-core kernel takes this call's shape (on a device that has it).
bool mma_takes(const AttentionCall& call) {
    const GpuAttentionParams& p = call.p;
    if (call.kv->type() != KvCacheType::F16) return false;
    const void* keys = call.kv->keys(call.layer);
    const void* values = call.kv->values(call.layer);
    // 16-byte copies of key and value rows, float2 reads of queries and writes of outputs; key
    // indices in 32 bits.
    const bool fits = p.n_head / p.n_head_kv <= kRows && p.head_dim_k % 8 == 0 && p.head_dim_v % 8 == 0 &&
                      aligned_to(keys, 16) && aligned_to(values, 16) && aligned_to(call.q, 8) &&
                      aligned_to(call.out, 8) && call.kv->n_ctx() < INT_MAX;
    return fits && std::max(p.head_dim_k, p.head_dim_v) <= 128;
}

}  // namespace

bool launch_attention_flash_mma(const AttentionCall& call, GpuContext& ctx) {
    if (!gpu_attention_flash_mma(ctx) || !mma_takes(call)) return false;
    const int64_t dim = std::max(call.p.head_dim_k, call.p.head_dim_v);
    return dim <= 64 ? launch_mma<64>(call, 1, nullptr, nullptr, ctx) : launch_mma<128>(call, 1, nullptr, nullptr, ctx);
}

bool launch_attention_mma_split(const AttentionCall& call, int n_split, float* part_ml, float* part_acc,
                                GpuContext& ctx) {
    if (!gpu_attention_decode_mma(ctx) || !mma_takes(call)) return false;
    const int64_t dim = std::max(call.p.head_dim_k, call.p.head_dim_v);
    return dim <= 64 ? launch_mma<64>(call, n_split, part_ml, part_acc, ctx)
                     : launch_mma<128>(call, n_split, part_ml, part_acc, ctx);
}

}  // namespace strata::gpu
