#pragma once
// The tile kernel and the merge of multi-head latent attention (ops_attention_mla.cu). The cache
// has one KV head: every query head of every token attends to the same rows, so the op is a pair
// of matrix products with a causal mask between them,
//     S = scale · Q Kᵀ   (rows × keys, over the key width D = latent + rope ≤ 576)
//     O = softmax(S) V   (rows × latent ≤ 512)
// where a "row" is one (token, head) pair: row r = t · n_head + h is also q's and out's row r.
// A block owns kRows rows and a slice of the keys; every key and value row it stages in shared
// memory serves all its rows (32 heads of a DeepSeek-V3 token, or 8 tokens of a 4-head fixture).
//
// Per key tile of kKeys keys (flash-style online softmax per row):
//   scores:  the key dims in chunks of kDims; each chunk of Q (scaled) and K goes to shared
//            memory and every thread adds its 4 rows × 4 keys of S (float4 reads: the 16 threads
//            of a row group share their Q reads, the row groups their K reads);
//   softmax: the tile's row max over the 16 threads of the row group (shuffles within 16 lanes:
//            right for warps of 32 and 64), the running max and sum rescaled, weights to shared;
//   values:  the latent in chunks of kCols columns; each V chunk goes to shared memory and every
//            thread adds its 4 rows × 4 columns of O, for all chunks (4 × 4 × 8 registers).
// Cache rows are widened to f32 as they are staged, so the inner loops are plain f32 FMA for
// both cache types, and sums stay in f32. The accumulators take 128 registers of a thread and
// the kernel ~251-254 in all (sm_90, no spills), which leaves no room to prefetch the next chunk
// into registers while computing this one: a chunk's loads are issued together (one round trip
// per chunk), and two blocks per SM overlap one's staging with the other's arithmetic.
//
// Limits: FMA arithmetic, no tensor cores (one source for CUDA and HIP): at DeepSeek-V3's shape a
// key costs 128 heads × 1088 × 2 FLOP, so deep decode and long prompts are bound by the FP32
// rate, not by HBM. Shared memory is 26 KiB a block (static, under the 48 KiB any target takes
// without opt-in), so Q cannot stay resident: its chunks are staged again for every key tile
// (from L1/L2). Fewer than kRows rows (one token of a 16-head model) leave part of a block idle.
// On AMD the same code needs all 256 VGPRs and spills some (clang-19: f16 cache 5 on gfx11/12,
// 10-23 on gfx1030/gfx906; f32 cache ~40): a cost in speed, not in results.
//
// Two ways out, chosen by the host: a block covering all the keys its rows see writes the
// normalized output (n_split = 1); otherwise each block writes its rows' partial softmax
// (max, sum, unnormalized Σ p·v) for its slice and mla_merge_kernel combines the slices.
#include <cmath>
#include <cstdint>

#include "backend/gpu/gpu_ops_mla.h"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

// The tile shape, the same for f32 and f16 caches (staged tiles are f32).
struct MlaTile {
    static constexpr int kLanes = 16;      // threads of a row group: they split keys / columns
    static constexpr int kRowGroups = 8;
    static constexpr int kThreads = kLanes * kRowGroups;  // 128
    static constexpr int kRowsPerThread = 4;              // rows rg, rg + 8, rg + 16, rg + 24
    static constexpr int kRows = kRowGroups * kRowsPerThread;  // 32 (token, head) rows a block
    static constexpr int kKeys = 64;                      // keys per tile
    static constexpr int kKeysPerThread = kKeys / kLanes; // keys lane, lane + 16, ...
    static constexpr int kDims = 64;                      // key dims per staged chunk
    static constexpr int kCols = 64;                      // value columns per staged chunk
    static constexpr int kColsPerThread = kCols / kLanes; // 4 consecutive columns: one float4
    static constexpr int kValueChunks = static_cast<int>(kGpuMaxMlaLatent) / kCols;  // 8
    // Row strides of 68 floats (17 × 16 bytes): the 16 key rows a row group reads at one dim fall
    // in 8 different 16-byte bank groups, two reads each, the least 256 bytes take.
    static constexpr int kQStride = kDims + 4;
    static constexpr int kKStride = kDims + 4;
    static constexpr int kPStride = kKeys + 4;
    static constexpr int kVStride = kCols;  // read along the row (lanes own columns): no conflicts
    // 16-byte global loads per thread for one staged chunk: Q (always f32), K or V (cache type).
    static constexpr int kQLoads = kRows * kDims / 4 / kThreads;
    template <typename KV>
    static constexpr int kv_loads() {
        return kKeys * kDims / (16 / static_cast<int>(sizeof(KV))) / kThreads;
    }
    static_assert(kDims == kCols, "K and V chunks are staged by the same code (CacheChunk)");
    static_assert(kKeysPerThread == 4 && kColsPerThread == 4, "the inner loops read float4s");
    static_assert(kLanes <= 32 && 32 % kLanes == 0, "a row group must sit inside one warp of 32 or 64");
    static_assert(kRows * kDims % (4 * kThreads) == 0, "a Q chunk must split evenly into 16-byte loads");
    static_assert(kGpuMaxMlaLatent % kCols == 0 && kGpuMaxMlaRope % 8 == 0, "chunks must cover the widest rows");
};

// The sizes of one call, as the kernels need them.
struct MlaDims {
    int64_t n_rows;  // n_tokens · n_head
    int64_t n_head;
    int64_t latent;  // kv_lora_rank: the value width
    int64_t width;   // latent + rope_dims: the key width
    int64_t n_ctx;   // cache rows: a position past them is clamped (the host checked them)
    float scale;
};

// Shared memory: the score stage's Q and K chunks, or the value stage's weights and V chunk (one
// after the other within a tile, separated by barriers), and the rows' key ends.
struct alignas(16) MlaScoreTiles {
    float q[MlaTile::kRows][MlaTile::kQStride];
    float k[MlaTile::kKeys][MlaTile::kKStride];
};
struct alignas(16) MlaValueTiles {
    float p[MlaTile::kRows][MlaTile::kPStride];
    float v[MlaTile::kKeys][MlaTile::kVStride];
};
union MlaTiles {
    MlaScoreTiles s;
    MlaValueTiles v;
};
static_assert(sizeof(MlaTiles) + sizeof(int32_t) * MlaTile::kRows <= 48 * 1024,
              "static shared memory is limited to 48 KiB per block");

// Writes one 16-byte chunk of cache elements to shared memory as floats (dst 16-byte aligned):
// four f32 values, or eight f16 values widened.
__device__ __forceinline__ void store_widened(float* dst, const uint4& u, const float*) {
    *reinterpret_cast<uint4*>(dst) = u;
}
__device__ __forceinline__ void store_widened(float* dst, const uint4& u, const uint16_t*) {
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
    float f[8];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = vendor::half_bits_to_float(static_cast<uint16_t>(w[i] & 0xffffu));
        f[2 * i + 1] = vendor::half_bits_to_float(static_cast<uint16_t>(w[i] >> 16));
    }
    *reinterpret_cast<float4*>(dst) = make_float4(f[0], f[1], f[2], f[3]);
    *reinterpret_cast<float4*>(dst + 4) = make_float4(f[4], f[5], f[6], f[7]);
}

// Four floats at p (16-byte aligned).
__device__ __forceinline__ float4 float4_at(const float* p) { return *reinterpret_cast<const float4*>(p); }

// Max and sum over the kLanes consecutive lanes of a row group (xor offsets below 16 stay
// inside the group whatever the warp size).
__device__ __forceinline__ float row_group_max(float v) {
    for (int offset = MlaTile::kLanes / 2; offset > 0; offset /= 2) v = fmaxf(v, vendor::shfl_xor(v, offset));
    return v;
}
__device__ __forceinline__ float row_group_sum(float v) {
    for (int offset = MlaTile::kLanes / 2; offset > 0; offset /= 2) v += vendor::shfl_xor(v, offset);
    return v;
}

// Staging of one chunk, in two steps so that all of a chunk's global loads (Q and K, or V) are
// in flight together, one memory round trip per chunk: load_* into registers, then store_* to
// shared memory as floats. Loads are 16 bytes; consecutive threads read consecutive 16 bytes.

// Key or value rows k0 .. k0 + kKeys − 1 of `rows` (rows of `width` cache elements), elements
// [first, first + kDims). Keys at or past `end` (perhaps never written) and elements past the row
// are zeros, so padded products add nothing and no NaN of an unwritten row gets in.
template <typename KV>
struct CacheChunk {
    static constexpr int kPerLoad = 16 / static_cast<int>(sizeof(KV));  // elements per 16-byte load
    static constexpr int kLoadsPerRow = MlaTile::kDims / kPerLoad;
    uint4 reg[MlaTile::kv_loads<KV>()];
};
// (Offsets from the chunk's first element are 32-bit: one base address for the block, not a
// 64-bit address per load, which matters to the register budget, most of all on AMD.)
template <typename KV>
__device__ __forceinline__ void load_cache_chunk(const KV* rows, int width, int k0, int end, int first,
                                                 CacheChunk<KV>& c) {
    using C = CacheChunk<KV>;
    const KV* base = rows + static_cast<int64_t>(k0) * width + first;
    const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < MlaTile::kv_loads<KV>(); ++i) {
        const int e = tid + i * MlaTile::kThreads;
        const int key = e / C::kLoadsPerRow, d = (e % C::kLoadsPerRow) * C::kPerLoad;
        c.reg[i] = k0 + key < end && first + d < width ? *reinterpret_cast<const uint4*>(base + key * width + d)
                                                       : make_uint4(0u, 0u, 0u, 0u);
    }
}
template <typename KV, int kStride>
__device__ __forceinline__ void store_cache_chunk(const CacheChunk<KV>& c, float (*tile)[kStride]) {
    using C = CacheChunk<KV>;
    const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < MlaTile::kv_loads<KV>(); ++i) {
        const int e = tid + i * MlaTile::kThreads;
        store_widened(&tile[e / C::kLoadsPerRow][(e % C::kLoadsPerRow) * C::kPerLoad], c.reg[i],
                      static_cast<const KV*>(nullptr));
    }
}

// Query rows row0 .. row0 + kRows − 1 (rows of `width` floats, n_rows of them), dims [first,
// first + kDims), stored times `scale`; zeros past the rows and dims.
struct QueryChunk {
    static constexpr int kLoadsPerRow = MlaTile::kDims / 4;
    float4 reg[MlaTile::kQLoads];
};
__device__ __forceinline__ void load_query_chunk(const float* q, int64_t n_rows, int width, int64_t row0, int first,
                                                 QueryChunk& c) {
    const float* base = q + row0 * width + first;
    const int rows = static_cast<int>(min(n_rows - row0, static_cast<int64_t>(MlaTile::kRows)));
    const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < MlaTile::kQLoads; ++i) {
        const int e = tid + i * MlaTile::kThreads;
        const int r = e / QueryChunk::kLoadsPerRow, d = 4 * (e % QueryChunk::kLoadsPerRow);
        c.reg[i] = r < rows && first + d < width ? *reinterpret_cast<const float4*>(base + r * width + d)
                                                 : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}
__device__ __forceinline__ void store_query_chunk(const QueryChunk& c, float scale, float (*tile)[MlaTile::kQStride]) {
    const int tid = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < MlaTile::kQLoads; ++i) {
        const int e = tid + i * MlaTile::kThreads;
        const float4 v = c.reg[i];
        *reinterpret_cast<float4*>(&tile[e / QueryChunk::kLoadsPerRow][4 * (e % QueryChunk::kLoadsPerRow)]) =
            make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale);
    }
}

#if defined(__HIP__) || defined(STRATA_GPU_HIP)
constexpr int kMlaMinBlocks = 1;  // left to the compiler on AMD (a CU's LDS holds two blocks)
// AMD's compiler hoists the shared-memory reads of unrolled steps and runs out of VGPRs sooner.
constexpr int kMlaScoreUnroll = 1;
#else
constexpr int kMlaMinBlocks = 2;  // two blocks an SM: one computes while the other waits at a barrier
constexpr int kMlaScoreUnroll = 2;
#endif

// Block (x: tile of kRows rows, heaviest first; y: slice of keys). `positions` holds each token's
// position (it sees cache rows 0 .. positions[t]). n_split = 1: writes out; otherwise entries
// [row][split] of (max, sum) in part_ml and `latent` floats in part_acc.
template <typename KV>
__global__ void __launch_bounds__(MlaTile::kThreads, kMlaMinBlocks)
    mla_attention_tile_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions, MlaDims dims,
                              int n_split, float* out, float* part_ml, float* part_acc) {
    using T = MlaTile;
    constexpr int R = T::kRowsPerThread, BK = T::kKeys, KPT = T::kKeysPerThread, CPT = T::kColsPerThread;
    constexpr int VC = T::kValueChunks;
    __shared__ MlaTiles tiles;
    __shared__ int32_t row_end[T::kRows];

    const int tid = static_cast<int>(threadIdx.x);
    const int rg = tid / T::kLanes, lane = tid % T::kLanes;
    // Later rows (later tokens) see more keys: those tiles go first, short ones fill in behind.
    const int64_t row0 = (static_cast<int64_t>(gridDim.x) - 1 - blockIdx.x) * T::kRows;
    const int split = static_cast<int>(blockIdx.y);

    if (tid < T::kRows) {  // a row past the batch sees no key
        const int64_t row = row0 + tid;
        int64_t e = 0;
        if (row < dims.n_rows) e = max(static_cast<int64_t>(positions[row / dims.n_head]) + 1, int64_t{0});
        row_end[tid] = static_cast<int32_t>(min(e, dims.n_ctx));
    }
    __syncthreads();
    // The block's keys: a slice of [0, the last key any of its rows sees), in whole tiles. The
    // same in every thread, so every loop below (with its barriers) runs alike in all of them.
    int span = 0;
    for (int r = 0; r < T::kRows; ++r) span = max(span, row_end[r]);
    const int per_split = (span + n_split - 1) / n_split;
    const int slice = (per_split + BK - 1) / BK * BK;
    const int begin = split * slice;
    const int end = min(span, begin + slice);  // begin ≥ end: an empty slice (a shallow step)

    int my_end[R];
    float m[R], l[R], acc[VC][R][CPT];  // l: this thread's part of the row's Σ exp(s − m)
#pragma unroll
    for (int i = 0; i < R; ++i) {
        my_end[i] = min(row_end[rg + i * T::kRowGroups], end);
        m[i] = -INFINITY, l[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < VC; ++c) {
#pragma unroll
            for (int j = 0; j < CPT; ++j) acc[c][i][j] = 0.0f;
        }
    }
    const int width = static_cast<int>(dims.width), latent = static_cast<int>(dims.latent);
    const int n_score_chunks = (width + T::kDims - 1) / T::kDims;
    const int n_value_chunks = (latent + T::kCols - 1) / T::kCols;

    for (int k0 = begin; k0 < end; k0 += BK) {
        // Scores of rows rg + 8i against keys lane + 16k, over the key dims chunk by chunk.
        float s[R][KPT];
#pragma unroll
        for (int i = 0; i < R; ++i) {
#pragma unroll
            for (int k = 0; k < KPT; ++k) s[i][k] = 0.0f;
        }
        for (int sc = 0; sc < n_score_chunks; ++sc) {
            const int first = sc * T::kDims;
            QueryChunk qc;
            CacheChunk<KV> kc;
            load_query_chunk(q, dims.n_rows, width, row0, first, qc);
            load_cache_chunk(keys, width, k0, end, first, kc);
            store_query_chunk(qc, dims.scale, tiles.s.q);
            store_cache_chunk(kc, tiles.s.k);
            __syncthreads();
#pragma unroll kMlaScoreUnroll
            for (int d = 0; d < T::kDims; d += 4) {
                float4 qv[R], kv[KPT];
#pragma unroll
                for (int i = 0; i < R; ++i) qv[i] = float4_at(&tiles.s.q[rg + i * T::kRowGroups][d]);
#pragma unroll
                for (int k = 0; k < KPT; ++k) kv[k] = float4_at(&tiles.s.k[lane + k * T::kLanes][d]);
#pragma unroll
                for (int i = 0; i < R; ++i) {
#pragma unroll
                    for (int k = 0; k < KPT; ++k) {
                        float a = s[i][k];
                        a = fmaf(qv[i].x, kv[k].x, a);
                        a = fmaf(qv[i].y, kv[k].y, a);
                        a = fmaf(qv[i].z, kv[k].z, a);
                        s[i][k] = fmaf(qv[i].w, kv[k].w, a);
                    }
                }
            }
            __syncthreads();  // the next chunk overwrites these
        }

        // Online softmax per row: the tile's max joins the running max, earlier sums and
        // accumulators are rescaled to it, the weights go to shared memory for the values.
#pragma unroll
        for (int i = 0; i < R; ++i) {
            float tile_max = -INFINITY;
#pragma unroll
            for (int k = 0; k < KPT; ++k) {
                if (k0 + lane + k * T::kLanes >= my_end[i]) s[i][k] = -INFINITY;
                tile_max = fmaxf(tile_max, s[i][k]);
            }
            const float m_new = fmaxf(m[i], row_group_max(tile_max));
            // A row that has seen no key yet (m_new = -inf: its keys start past this slice's
            // first tiles, or it has none here) keeps l = acc = 0 and weighs nothing.
            const bool none = m_new == -INFINITY;
            const float correction = none ? 1.0f : expf(m[i] - m_new);
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < KPT; ++k) {
                const float w = none ? 0.0f : expf(s[i][k] - m_new);
                tiles.v.p[rg + i * T::kRowGroups][lane + k * T::kLanes] = w;
                sum += w;
            }
            l[i] = l[i] * correction + sum;
            m[i] = m_new;
#pragma unroll
            for (int c = 0; c < VC; ++c) {
#pragma unroll
                for (int j = 0; j < CPT; ++j) acc[c][i][j] *= correction;
            }
        }

        // Values, chunk by chunk of columns; unrolled so that acc[c] stays in registers.
        const int n_keys4 = (min(BK, end - k0) + 3) / 4 * 4;
#pragma unroll
        for (int c = 0; c < VC; ++c) {
            if (c < n_value_chunks) {
                CacheChunk<KV> vc;
                load_cache_chunk(values, latent, k0, end, c * T::kCols, vc);
                store_cache_chunk(vc, tiles.v.v);
                __syncthreads();  // the V chunk and (first chunk) the weights are in shared memory
#pragma unroll 1
                for (int j = 0; j < n_keys4; j += 4) {
                    float4 pv[R], vv[4];
#pragma unroll
                    for (int i = 0; i < R; ++i) pv[i] = float4_at(&tiles.v.p[rg + i * T::kRowGroups][j]);
#pragma unroll
                    for (int k = 0; k < 4; ++k) vv[k] = float4_at(&tiles.v.v[j + k][lane * CPT]);
#pragma unroll
                    for (int i = 0; i < R; ++i) {
                        const float w[4] = {pv[i].x, pv[i].y, pv[i].z, pv[i].w};
                        float* a = acc[c][i];
#pragma unroll
                        for (int k = 0; k < 4; ++k) {
                            a[0] = fmaf(w[k], vv[k].x, a[0]);
                            a[1] = fmaf(w[k], vv[k].y, a[1]);
                            a[2] = fmaf(w[k], vv[k].z, a[2]);
                            a[3] = fmaf(w[k], vv[k].w, a[3]);
                        }
                    }
                }
                __syncthreads();  // the next stage overwrites the weights and the chunk
            }
        }
    }

    // Each lane holds part of its rows' sums; all lanes reduce before any row is skipped.
    float row_sum[R];
#pragma unroll
    for (int i = 0; i < R; ++i) row_sum[i] = row_group_sum(l[i]);
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int64_t row = row0 + rg + i * T::kRowGroups;
        if (row >= dims.n_rows) continue;
        float* dst = out + row * dims.latent;
        float factor = row_sum[i] > 0.0f ? 1.0f / row_sum[i] : 0.0f;
        if (n_split > 1) {
            const int64_t entry = row * n_split + split;
            if (lane == 0) part_ml[2 * entry] = m[i], part_ml[2 * entry + 1] = row_sum[i];
            if (m[i] == -INFINITY) continue;  // the merge skips this slice's accumulator
            dst = part_acc + entry * dims.latent;
            factor = 1.0f;
        }
#pragma unroll
        for (int c = 0; c < VC; ++c) {
            const int64_t col = static_cast<int64_t>(c) * T::kCols + lane * CPT;
            if (col < dims.latent) {
                *reinterpret_cast<float4*>(dst + col) = make_float4(acc[c][i][0] * factor, acc[c][i][1] * factor,
                                                                    acc[c][i][2] * factor, acc[c][i][3] * factor);
            }
        }
    }
}

constexpr int kMlaMergeThreads = 128;
constexpr int kMlaMaxSplit = 128;
static_assert(kMlaMergeThreads * 4 >= kGpuMaxMlaLatent, "the merge gives each thread one float4 of a row");

// out[row] = Σ_s exp(max_s − top) · acc_s / Σ_s exp(max_s − top) · sum_s over the slices of one
// row (block x). A slice that saw none of the row's keys (max = -inf) never wrote its
// accumulator: it is skipped, not multiplied by zero.
__global__ void __launch_bounds__(kMlaMergeThreads)
    mla_merge_kernel(const float* part_ml, const float* part_acc, int n_split, int64_t latent, float* out) {
    __shared__ float weight[kMlaMaxSplit];
    const int64_t row = blockIdx.x, first = row * n_split;
    float top = -INFINITY;  // finite: slice 0 holds key 0, which every row sees
    for (int s = 0; s < n_split; ++s) top = fmaxf(top, part_ml[2 * (first + s)]);
    for (int s = static_cast<int>(threadIdx.x); s < n_split; s += static_cast<int>(blockDim.x)) {
        const float m = part_ml[2 * (first + s)];
        weight[s] = m == -INFINITY ? 0.0f : expf(m - top);
    }
    __syncthreads();
    float sum = 0.0f;
    for (int s = 0; s < n_split; ++s) sum += weight[s] * part_ml[2 * (first + s) + 1];
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int64_t col = 4 * static_cast<int64_t>(threadIdx.x); col < latent; col += 4 * static_cast<int64_t>(blockDim.x)) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int s = 0; s < n_split; ++s) {
            if (weight[s] == 0.0f) continue;
            const float4 a = *reinterpret_cast<const float4*>(part_acc + (first + s) * latent + col);
            v.x += weight[s] * a.x, v.y += weight[s] * a.y, v.z += weight[s] * a.z, v.w += weight[s] * a.w;
        }
        *reinterpret_cast<float4*>(out + row * latent + col) = make_float4(v.x * inv, v.y * inv, v.z * inv, v.w * inv);
    }
}

}  // namespace strata::gpu
