#pragma once
// The AVX2 bodies of the attention's row kernels, shared by the f16 rows (widened as they are
// read, f16_rows_avx2.cpp) and the f32 rows (f32_rows_avx2.cpp). Include only from *_avx2.cpp
// files: the templates use AVX2 and F16C instructions.
//
// A row policy gives `T` (the element), `load(const T*)` (eight values as floats) and
// `scalar(const T*)` (one value as a float). Every kernel does, per row, the float operations of
// dot_eight_lanes (f32_rows.h) or of out[d] += w · row[d], in the same order, with no fused
// multiply-add, so the bits do not depend on the element type nor on how many rows run at once.
#include <immintrin.h>

#include <cstdint>

namespace strata::avx2_rows {

// The pairwise sum of the lanes, then the tail past the last multiple of eight, as dot_eight_lanes.
template <class P>
float finish(__m256 acc, const float* q, const typename P::T* r, int64_t d, int64_t n) {
    alignas(32) float lane[8];
    _mm256_store_ps(lane, acc);
    float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    for (; d < n; ++d) s += q[d] * P::scalar(r + d);
    return s;
}

// Rows [i, i + R) against q: R independent chains of dependent adds, each row's lanes as the
// single-row loop has them.
template <class P, int R>
void dots_rows(const float* q, const typename P::T* rows, int64_t row_stride, int64_t i, int64_t n8, int64_t n,
               float scale, float* out) {
    const typename P::T* r[R];
    __m256 acc[R];
    for (int k = 0; k < R; ++k) r[k] = rows + (i + k) * row_stride, acc[k] = _mm256_setzero_ps();
    for (int64_t d = 0; d < n8; d += 8) {
        const __m256 qv = _mm256_loadu_ps(q + d);
        for (int k = 0; k < R; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(qv, P::load(r[k] + d)));
    }
    for (int k = 0; k < R; ++k) out[i + k] = finish<P>(acc[k], q, r[k], n8, n) * scale;
}

// Lane l of eight accumulators into vector l (an 8x8 transpose).
inline void transpose8(__m256 v[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
    const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    v[0] = _mm256_permute2f128_ps(u0, u4, 0x20), v[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    v[1] = _mm256_permute2f128_ps(u1, u5, 0x20), v[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    v[2] = _mm256_permute2f128_ps(u2, u6, 0x20), v[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    v[3] = _mm256_permute2f128_ps(u3, u7, 0x20), v[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Eight rows whose length is a multiple of eight: the rows' lane sums are finished together, the
// lanes transposed so that one vertical add does pairwise step s of all eight rows; each row
// gets ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then the scale, as finish() gives it.
// Finishing each row through memory with scalar adds took about half of the f16 kernel's time
// for 128-value heads.
template <class P>
void dots_eight_rows(const float* q, const typename P::T* rows, int64_t row_stride, int64_t i, int64_t n, float scale,
                     float* out) {
    const typename P::T* r = rows + i * row_stride;
    __m256 acc[8];
    #pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
    for (int64_t d = 0; d < n; d += 8) {
        const __m256 qv = _mm256_loadu_ps(q + d);
        #pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(qv, P::load(r + k * row_stride + d)));
    }
    transpose8(acc);
    const __m256 sums = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])),
                                      _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]), _mm256_add_ps(acc[6], acc[7])));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
}

// out[i] = (q · row i) · scale. Eight rows at a time: an add's latency (3-4 cycles) over eight
// chains leaves the adder no gaps, where four chains left it half idle.
template <class P>
void dots(const float* q, const typename P::T* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale,
          float* out) {
    const int64_t n8 = n / 8 * 8;
    int64_t i = 0;
    if (n8 == n) {
        for (; i + 8 <= n_rows; i += 8) dots_eight_rows<P>(q, rows, row_stride, i, n, scale, out);
    }
    for (; i + 8 <= n_rows; i += 8) dots_rows<P, 8>(q, rows, row_stride, i, n8, n, scale, out);
    for (; i + 4 <= n_rows; i += 4) dots_rows<P, 4>(q, rows, row_stride, i, n8, n, scale, out);
    for (; i < n_rows; ++i) dots_rows<P, 1>(q, rows, row_stride, i, n8, n, scale, out);
}

// out += (weights[i] · inv) · row i. out stays in registers, 64 values (eight vectors) at a time,
// while every row's terms are added to it; loaded and stored back for each row, it made the
// kernel a chain of L1 round trips. Each out[d] still takes the rows' terms one after another in
// row order, with the same multiply and add, so the bits are those of the per-row loop.
template <class P>
void accumulate(const float* weights, float inv, const typename P::T* rows, int64_t row_stride, int64_t n_rows, int64_t n,
                float* out) {
    constexpr int kVectors = 8;
    const int64_t n8 = n / 8 * 8;
    int64_t d0 = 0;
    for (; d0 + 8 * kVectors <= n8; d0 += 8 * kVectors) {
        __m256 acc[kVectors];
        for (int v = 0; v < kVectors; ++v) acc[v] = _mm256_loadu_ps(out + d0 + 8 * v);
        for (int64_t i = 0; i < n_rows; ++i) {
            const typename P::T* r = rows + i * row_stride + d0;
            const __m256 wv = _mm256_set1_ps(weights[i] * inv);
            for (int v = 0; v < kVectors; ++v) acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(wv, P::load(r + 8 * v)));
        }
        for (int v = 0; v < kVectors; ++v) _mm256_storeu_ps(out + d0 + 8 * v, acc[v]);
    }
    for (; d0 < n8; d0 += 8) {
        __m256 acc = _mm256_loadu_ps(out + d0);
        for (int64_t i = 0; i < n_rows; ++i) {
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(weights[i] * inv), P::load(rows + i * row_stride + d0)));
        }
        _mm256_storeu_ps(out + d0, acc);
    }
    for (int64_t d = n8; d < n; ++d) {
        for (int64_t i = 0; i < n_rows; ++i) out[d] += (weights[i] * inv) * P::scalar(rows + i * row_stride + d);
    }
}

}  // namespace strata::avx2_rows
