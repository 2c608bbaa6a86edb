#pragma once
// Device pieces shared by the attention kernels that hold one query row per block
// (ops_attention.cu: a block per query token and head over all its keys; ops_attention_split.cu:
// a block per token, head and slice of keys). The query row lives in registers spread over a
// warp's lanes; each warp scores its own key groups with an online softmax; the warps' partial
// softmaxes are then merged through shared memory.
//
//   float m = -INFINITY, l = 0.0f, acc[kRowPerLane] = {};
//   warp_attend(qv, k_base, v_base, rows, begin, end, warp, n_warps, m, l, acc);
//   publish_warp(shared, warp, lane, m, l, acc, head_dim_v);          // then __syncthreads()
//   const RowTotals t = row_totals(shared, n_warps, extra_logit);
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/kv_access.cuh"

namespace strata::gpu {

// Head dimensions a lane holds: kGpuMaxHeadDim spread over the warp. Device code only (the HIP
// host pass sees a warp of 64 whatever the target).
constexpr int kRowPerLane = static_cast<int>(kGpuMaxHeadDim) / vendor::kWarpSize;
// Keys a warp scores at once. A warp working through keys one by one waits for each key row and
// then its value row (two memory round trips per key); with a group, the loads of all its keys
// are issued before the first is used, and the online softmax rescales once per group.
constexpr int kKeyGroup = 4;

// The keys a query at position `pos` sees: [begin, end), causal and the last `sliding_window`.
struct KeySpan {
    int64_t begin, end;
};
__device__ __forceinline__ KeySpan visible_keys(const GpuAttentionParams& p, int64_t pos) {
    const int64_t end = pos + 1;
    return {p.sliding_window > 0 ? max(static_cast<int64_t>(0), end - p.sliding_window) : 0, end};
}

// Which key the i-th key a warp walks is: the i-th (contiguous spans), or a selection's
// (ops_qsa.cu: the blocks QSA's indexer kept).
struct ContiguousKeys {
    __device__ __forceinline__ int64_t operator()(int64_t i) const { return i; }
};

// One KV head's rows of a layer: element d of key j is k[j · k_stride + d].
template <typename KV>
struct HeadRows {
    const KV* k;
    const KV* v;
    int64_t k_stride, v_stride, head_dim_k, head_dim_v;
};

// Folds keys key_at(begin) .. key_at(end - 1) into this warp's running softmax (m: largest logit so far, l: Σ
// exp(logit − m), acc: Σ exp(logit − m) · value, lane holding dims lane + i · warp size). Warp w
// takes key groups w, w + n_warps, ...; qv holds the (already scaled) query the same way.
template <typename KV, typename KeyAt = ContiguousKeys>
__device__ __forceinline__ void warp_attend(const float* qv, const HeadRows<KV>& rows, int64_t begin, int64_t end,
                                            int warp, int n_warps, float& m, float& l, float* acc,
                                            KeyAt key_at = {}) {
    constexpr int G = kKeyGroup;
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    for (int64_t base = begin + static_cast<int64_t>(warp) * G; base < end; base += static_cast<int64_t>(n_warps) * G) {
        float s[G];
        int64_t key[G];
#pragma unroll
        for (int g = 0; g < G; ++g) {
            const int64_t j = base + g < end ? key_at(base + g) : 0;  // (past the end: masked)
            key[g] = j;
            float dot = 0.0f;
#pragma unroll
            for (int i = 0; i < kRowPerLane; ++i) {
                const int64_t d = lane + i * vendor::kWarpSize;
                if (base + g < end && d < rows.head_dim_k) dot += qv[i] * load_kv(rows.k + j * rows.k_stride, d);
            }
            s[g] = dot;
        }
        float m_new = m;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            s[g] = base + g < end ? warp_sum(s[g]) : -INFINITY;
            m_new = fmaxf(m_new, s[g]);
        }
        // base < end, so s[0] is finite and so is m_new: keys past the end weigh exp(-inf) = 0.
        const float correction = expf(m - m_new);
        float weight[G];
        l *= correction;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            weight[g] = expf(s[g] - m_new);
            l += weight[g];
        }
#pragma unroll
        for (int i = 0; i < kRowPerLane; ++i) {
            const int64_t d = lane + i * vendor::kWarpSize;
            if (d >= rows.head_dim_v) continue;
            float a = acc[i] * correction;
#pragma unroll
            for (int g = 0; g < G; ++g) {
                if (base + g < end) a += weight[g] * load_kv(rows.v + key[g] * rows.v_stride, d);
            }
            acc[i] = a;
        }
        m = m_new;
    }
}

// The warps' partial softmaxes of one block, for the merge.
template <int kMaxWarps>
struct RowShared {
    float max[kMaxWarps], sum[kMaxWarps];
    float acc[kMaxWarps][kGpuMaxHeadDim];
};

// Writes this warp's (m, l, acc) to shared memory; the caller syncs before reading them.
template <int kMaxWarps>
__device__ __forceinline__ void publish_warp(RowShared<kMaxWarps>& s, int warp, float m, float l, const float* acc,
                                             int64_t head_dim_v) {
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    if (lane == 0) s.max[warp] = m, s.sum[warp] = l;
#pragma unroll
    for (int i = 0; i < kRowPerLane; ++i) {
        const int64_t d = lane + i * vendor::kWarpSize;
        if (d < head_dim_v) s.acc[warp][d] = acc[i];
    }
}

// The block's softmax over all its warps' keys plus one optional extra logit (a sink: it joins
// the normalization and adds no value; -inf for none). A warp that saw no key has m = -inf and
// adds nothing; at least one warp must have seen a key or `extra` must be finite.
struct RowTotals {
    float max, sum;
};
template <int kMaxWarps>
__device__ __forceinline__ RowTotals row_totals(const RowShared<kMaxWarps>& s, int n_warps, float extra) {
    RowTotals t{extra, 0.0f};
    for (int w = 0; w < n_warps; ++w) t.max = fmaxf(t.max, s.max[w]);
    t.sum = extra == -INFINITY ? 0.0f : expf(extra - t.max);
    for (int w = 0; w < n_warps; ++w) t.sum += s.sum[w] * expf(s.max[w] - t.max);
    return t;
}
// Value dimension d of the block's Σ exp(logit − t.max) · value.
template <int kMaxWarps>
__device__ __forceinline__ float row_value(const RowShared<kMaxWarps>& s, int n_warps, const RowTotals& t, int64_t d) {
    float v = 0.0f;
    for (int w = 0; w < n_warps; ++w) v += s.acc[w][d] * expf(s.max[w] - t.max);
    return v;
}

// Loads query row `qh` into registers, lane holding dims lane + i · warp size, times `scale`.
__device__ __forceinline__ void load_query_row(const float* qh, int64_t head_dim_k, float scale, float* qv) {
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
#pragma unroll
    for (int i = 0; i < kRowPerLane; ++i) {
        const int64_t d = lane + i * vendor::kWarpSize;
        qv[i] = d < head_dim_k ? qh[d] * scale : 0.0f;
    }
}

}  // namespace strata::gpu
