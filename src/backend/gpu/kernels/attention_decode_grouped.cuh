#pragma once
// GQA-grouped flash-decoding block for the split path (ops_attention_split.cu). One block owns
// one (KV head, slice of keys, query token) and serves every query head of that KV head, so each
// key and value row of the slice leaves HBM once per token instead of once per query head.
//
//   tiles of BK keys: all threads load the K and V tile with 16-byte loads into registers, store
//   them to shared memory (f16 stays f16 there), and while a tile is being computed the next one
//   is already in flight into registers (register double-buffering, plain loads only);
//   scores: warp w takes query head w of the group (more heads than warps: rounds over the
//   slice); lane j scores keys j, j + warp size, ... with a dot product over the head reading K
//   rows from shared memory, so there is no reduction per key;
//   softmax: the tile's max over the warp by shuffles, running max / sum per warp, the weights
//   through shared memory;
//   values: lane owns dim pairs (2p, 2p + 1), p = lane + i · warp size, accumulated over the
//   tile's keys from shared memory.
//
// The block writes the same partial as the rows split kernel (max logit, Σ exp, Σ exp · value,
// unnormalized) for each of its query heads; the merge is shared.
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/attention_rows.cuh"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/kv_access.cuh"

namespace strata::gpu {

constexpr int kDecodeThreads = 256;
constexpr int kDecodeMaxWarps = kDecodeThreads / 32;
// Blocks resident per SM the register allocation must allow (the split path aims for two; left
// to the compiler on AMD, where a CU's 64 KiB of LDS holds one block of the larger shapes anyway).
#if defined(__HIP__) || defined(STRATA_GPU_HIP)
constexpr int kDecodeMinBlocks = 1;
#else
constexpr int kDecodeMinBlocks = 2;
#endif

// Compile-time shape: cache element KV, D head dims (zero-padded up to it), BK keys per tile.
template <typename KV, int D>
struct DecodeShape {
    // Keys per tile: 64 while a row is at most 256 bytes (f16 up to 128 dims, f32 up to 64), else
    // 32, which keeps the K and V tiles near 32 KiB either way.
    static constexpr int kTile = sizeof(KV) * D <= 256 ? 64 : 32;
    static constexpr int kPerChunk = 16 / static_cast<int>(sizeof(KV));  // elements per 16-byte load
    static constexpr int kChunksPerRow = D / kPerChunk;
    // K rows padded by 16 bytes: lanes read different rows at the same dims with 16-byte loads,
    // and a stride of an odd number of 16-byte units spreads 8 consecutive rows over all banks.
    static constexpr int kKStride = D + kPerChunk;
    static constexpr int kVStride = D;  // read along the row (lanes own dims): no conflicts
    static constexpr int kChunksPerThread = kTile * kChunksPerRow / kDecodeThreads;  // per matrix
    static constexpr size_t kSharedBytes = sizeof(KV) * kTile * (kKStride + kVStride) +
                                           sizeof(float) * kDecodeMaxWarps * (D + kTile);
    static_assert(D % kPerChunk == 0 && kChunksPerThread >= 1 &&
                      kTile * kChunksPerRow == kChunksPerThread * kDecodeThreads,
                  "a tile must split evenly into the block's 16-byte loads");
    static_assert((kKStride * sizeof(KV)) % 32 == 16, "K rows must start in a different bank group");
    static_assert(kSharedBytes <= 48 * 1024, "static shared memory is limited to 48 KiB per block");
};

// Eight (f16) or four (f32) consecutive elements at p (16-byte aligned, shared memory) as floats.
__device__ __forceinline__ void chunk_floats(const uint16_t* p, float* out) {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[2 * i] = vendor::half_bits_to_float(static_cast<uint16_t>(w[i] & 0xffffu));
        out[2 * i + 1] = vendor::half_bits_to_float(static_cast<uint16_t>(w[i] >> 16));
    }
}
__device__ __forceinline__ void chunk_floats(const float* p, float* out) {
    const float4 f = *reinterpret_cast<const float4*>(p);
    out[0] = f.x, out[1] = f.y, out[2] = f.z, out[3] = f.w;
}
// Two consecutive elements at p (4- or 8-byte aligned, shared memory) as floats.
__device__ __forceinline__ void pair_floats(const uint16_t* p, float& a, float& b) {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    a = vendor::half_bits_to_float(static_cast<uint16_t>(w & 0xffffu));
    b = vendor::half_bits_to_float(static_cast<uint16_t>(w >> 16));
}
__device__ __forceinline__ void pair_floats(const float* p, float& a, float& b) {
    const float2 f = *reinterpret_cast<const float2*>(p);
    a = f.x, b = f.y;
}

// Partial softmax of slice `split` of token t's keys for every query head of KV head
// blockIdx.x: entries [t][h][split] of (max, sum) in part_ml and head_dim_v floats in part_acc,
// as attention_split_kernel writes them. `slice_unit` is the granularity of slices (the tile).
template <typename KV, int D>
__global__ void __launch_bounds__(kDecodeThreads, kDecodeMinBlocks)
    attention_decode_grouped_kernel(const float* q, const KV* keys, const KV* values, const int32_t* positions,
                                    int64_t pos0, GpuAttentionParams p, int n_split, float* part_ml,
                                    float* part_acc) {
    vendor::wait_for_previous_kernel();
    using S = DecodeShape<KV, D>;
    constexpr int BK = S::kTile, EPC = S::kPerChunk, CPR = S::kChunksPerRow, CPT = S::kChunksPerThread;
    constexpr int WS = vendor::kWarpSize;
    constexpr int kKeysPerLane = (BK + WS - 1) / WS;
    constexpr int kPairsPerLane = (D / 2 + WS - 1) / WS;
    alignas(16) __shared__ KV ks[BK * S::kKStride];
    alignas(16) __shared__ KV vs[BK * S::kVStride];
    alignas(16) __shared__ float qs[kDecodeMaxWarps][D];  // each warp's query, scaled, zero past head_dim_k
    __shared__ float ps[kDecodeMaxWarps][BK];             // each warp's weights of the tile's keys

    const int tid = static_cast<int>(threadIdx.x);
    const int warp = tid / WS, lane = tid % WS;
    const int n_warps = kDecodeThreads / WS;
    const int64_t kv_head = blockIdx.x, split = blockIdx.y, t = blockIdx.z;
    const int64_t group = p.n_head / p.n_head_kv;

    // The block's slice; the same in every thread, so every loop below (with its barriers) runs
    // the same number of times in all of them.
    const KeySpan keys_seen = visible_keys(p, positions ? static_cast<int64_t>(positions[t]) : pos0 + t);
    const int64_t span = keys_seen.end - keys_seen.begin;
    const int64_t per_split = (span + n_split - 1) / n_split;
    const int64_t slice = (per_split + BK - 1) / BK * BK;  // whole tiles, at least one
    const int64_t begin = keys_seen.begin + split * slice;
    const int64_t end = min(keys_seen.end, begin + slice);
    if (begin >= end) {  // a shallow step: the merge skips a slice with max = -inf
        for (int64_t g = tid; g < group; g += kDecodeThreads) {
            const int64_t entry = (t * p.n_head + kv_head * group + g) * n_split + split;
            part_ml[2 * entry] = -INFINITY, part_ml[2 * entry + 1] = 0.0f;
        }
        return;
    }

    const int64_t k_stride = p.n_head_kv * p.head_dim_k, v_stride = p.n_head_kv * p.head_dim_v;
    const KV* k_head = keys + kv_head * p.head_dim_k;
    const KV* v_head = values + kv_head * p.head_dim_v;
    const int k_chunks = static_cast<int>(p.head_dim_k / EPC), v_chunks = static_cast<int>(p.head_dim_v / EPC);

    // Tile staging in registers: chunk e = tid + i · threads is row e / CPR, chunk e % CPR, so
    // consecutive threads read consecutive 16 bytes of a row. Rows at or past `end` (perhaps
    // never written) and dims past the head are zeros, never read.
    uint4 k_reg[CPT], v_reg[CPT];
    auto load_tile = [&](int64_t k0) {
#pragma unroll
        for (int i = 0; i < CPT; ++i) {
            const int e = tid + i * kDecodeThreads, r = e / CPR, c = e % CPR;
            const int64_t j = k0 + r;
            const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
            k_reg[i] = j < end && c < k_chunks ? *reinterpret_cast<const uint4*>(k_head + j * k_stride + c * EPC) : zero;
            v_reg[i] = j < end && c < v_chunks ? *reinterpret_cast<const uint4*>(v_head + j * v_stride + c * EPC) : zero;
        }
    };
    auto store_tile = [&]() {
#pragma unroll
        for (int i = 0; i < CPT; ++i) {
            const int e = tid + i * kDecodeThreads, r = e / CPR, c = e % CPR;
            *reinterpret_cast<uint4*>(ks + r * S::kKStride + c * EPC) = k_reg[i];
            *reinterpret_cast<uint4*>(vs + r * S::kVStride + c * EPC) = v_reg[i];
        }
    };

    // Rounds: warp w serves query heads w, w + n_warps, ... of the group, one per round (one
    // round when the group fits the block's warps, as 8 heads in 8 warps of 32 do).
    for (int64_t round0 = 0; round0 < group; round0 += n_warps) {
        const int64_t g = round0 + warp;
        const bool active = g < group;  // inactive warps still load tiles and reach every barrier
        const int64_t h = kv_head * group + g;
        if (active) {
            const float* qh = q + (t * p.n_head + h) * p.head_dim_k;
            for (int d = lane; d < D; d += WS) qs[warp][d] = d < p.head_dim_k ? qh[d] * p.scale : 0.0f;
        }
        float m = -INFINITY, l = 0.0f;  // l: this lane's part of Σ exp(logit − m)
        float acc[kPairsPerLane][2];
#pragma unroll
        for (int i = 0; i < kPairsPerLane; ++i) acc[i][0] = acc[i][1] = 0.0f;

        load_tile(begin);
        for (int64_t k0 = begin; k0 < end; k0 += BK) {
            store_tile();
            __syncthreads();  // the tile (and, first time round, the queries) are in shared memory
            if (k0 + BK < end) load_tile(k0 + BK);  // in flight while this tile is computed
            const int n_keys = static_cast<int>(min(static_cast<int64_t>(BK), end - k0));

            if (active) {
                float s[kKeysPerLane];
#pragma unroll
                for (int r = 0; r < kKeysPerLane; ++r) s[r] = 0.0f;
#pragma unroll 2
                for (int c = 0; c < CPR; ++c) {
                    float qc[EPC];
#pragma unroll
                    for (int e = 0; e < EPC; e += 4) {
                        const float4 f = *reinterpret_cast<const float4*>(&qs[warp][c * EPC + e]);
                        qc[e] = f.x, qc[e + 1] = f.y, qc[e + 2] = f.z, qc[e + 3] = f.w;
                    }
#pragma unroll
                    for (int r = 0; r < kKeysPerLane; ++r) {
                        const int k = lane + r * WS;
                        if (k < BK) {
                            float kc[EPC];
                            chunk_floats(ks + k * S::kKStride + c * EPC, kc);
#pragma unroll
                            for (int e = 0; e < EPC; ++e) s[r] += qc[e] * kc[e];
                        }
                    }
                }
                float tile_max = -INFINITY;
#pragma unroll
                for (int r = 0; r < kKeysPerLane; ++r) {
                    const int k = lane + r * WS;
                    if (k >= n_keys) s[r] = -INFINITY;  // past the slice (or the tile)
                    tile_max = fmaxf(tile_max, s[r]);
                }
                // The tile holds at least one key, so the new max is finite and keys past the
                // end weigh exp(-inf) = 0.
                const float m_new = fmaxf(m, warp_max(tile_max));
                const float correction = expf(m - m_new);
                l *= correction;
#pragma unroll
                for (int r = 0; r < kKeysPerLane; ++r) {
                    const int k = lane + r * WS;
                    const float w = expf(s[r] - m_new);
                    l += w;
                    if (k < BK) ps[warp][k] = w;
                }
#pragma unroll
                for (int i = 0; i < kPairsPerLane; ++i) acc[i][0] *= correction, acc[i][1] *= correction;
                m = m_new;
            }
            __syncthreads();  // the weights are in shared memory

            if (active) {
                for (int k = 0; k < n_keys; ++k) {
                    const float w = ps[warp][k];
#pragma unroll
                    for (int i = 0; i < kPairsPerLane; ++i) {
                        const int pair = lane + i * WS;
                        if (pair < D / 2) {
                            float a, b;
                            pair_floats(vs + k * S::kVStride + 2 * pair, a, b);
                            acc[i][0] += w * a, acc[i][1] += w * b;
                        }
                    }
                }
            }
            __syncthreads();  // everyone is done with the tile before the next one replaces it
        }

        if (active) {
            l = warp_sum(l);
            const int64_t entry = (t * p.n_head + h) * n_split + split;
            if (lane == 0) part_ml[2 * entry] = m, part_ml[2 * entry + 1] = l;
            float* acc_out = part_acc + entry * p.head_dim_v;
#pragma unroll
            for (int i = 0; i < kPairsPerLane; ++i) {
                const int64_t d = 2 * (lane + static_cast<int64_t>(i) * WS);
                if (d < p.head_dim_v) acc_out[d] = acc[i][0];
                if (d + 1 < p.head_dim_v) acc_out[d + 1] = acc[i][1];
            }
        }
    }
}

}  // namespace strata::gpu
