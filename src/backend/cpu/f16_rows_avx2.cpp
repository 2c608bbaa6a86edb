// F16C row kernels for an f16 KV cache (backend/cpu/f16_rows.h). Eight halves are widened per
// instruction and go straight into the eight lanes, so an f16 row costs no more instructions
// than an f32 one while it moves half the bytes. Dot products run eight rows at once: one row's
// lanes are a chain of dependent adds, and independent chains keep the adder busy; each row's
// own operations and their order are unchanged.
#include <immintrin.h>

#include "backend/cpu/f16_rows.h"
#include "core/fp16.h"

namespace strata {

namespace {
__m256 load_halves(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }

// The pairwise sum of the lanes, then the tail past the last multiple of eight, as dot_eight_lanes.
float finish(__m256 acc, const float* q, const uint16_t* r, int64_t d, int64_t n) {
    alignas(32) float lane[8];
    _mm256_store_ps(lane, acc);
    float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    for (; d < n; ++d) s += q[d] * fp16_to_fp32(r[d]);
    return s;
}

// Rows [i, i + R) against q: R independent chains of dependent adds, each row's lanes as the
// single-row loop has them.
template <int R>
void dots_rows(const float* q, const uint16_t* rows, int64_t row_stride, int64_t i, int64_t n8, int64_t n, float scale,
               float* out) {
    const uint16_t* r[R];
    __m256 acc[R];
    for (int k = 0; k < R; ++k) r[k] = rows + (i + k) * row_stride, acc[k] = _mm256_setzero_ps();
    for (int64_t d = 0; d < n8; d += 8) {
        const __m256 qv = _mm256_loadu_ps(q + d);
        for (int k = 0; k < R; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(qv, load_halves(r[k] + d)));
    }
    for (int k = 0; k < R; ++k) out[i + k] = finish(acc[k], q, r[k], n8, n) * scale;
}

// Lane l of eight accumulators into vector l (an 8x8 transpose).
void transpose8(__m256 v[8]) {
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
// Finishing each row through memory with scalar adds took about half of this kernel's time for
// 128-value heads.
void dots_eight_rows(const float* q, const uint16_t* rows, int64_t row_stride, int64_t i, int64_t n, float scale,
                     float* out) {
    const uint16_t* r = rows + i * row_stride;
    __m256 acc[8];
    #pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
    for (int64_t d = 0; d < n; d += 8) {
        const __m256 qv = _mm256_loadu_ps(q + d);
        #pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(qv, load_halves(r + k * row_stride + d)));
    }
    transpose8(acc);
    const __m256 sums = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])),
                                      _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]), _mm256_add_ps(acc[6], acc[7])));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
}

// Eight rows at a time: an add's latency (3-4 cycles) over eight chains leaves the adder no gaps,
// where four chains left it half idle.
void dots_avx2(const float* q, const uint16_t* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale,
               float* out) {
    const int64_t n8 = n / 8 * 8;
    int64_t i = 0;
    if (n8 == n) {
        for (; i + 8 <= n_rows; i += 8) dots_eight_rows(q, rows, row_stride, i, n, scale, out);
    }
    for (; i + 8 <= n_rows; i += 8) dots_rows<8>(q, rows, row_stride, i, n8, n, scale, out);
    for (; i + 4 <= n_rows; i += 4) dots_rows<4>(q, rows, row_stride, i, n8, n, scale, out);
    for (; i < n_rows; ++i) dots_rows<1>(q, rows, row_stride, i, n8, n, scale, out);
}

// out stays in registers, 64 values (eight vectors) at a time, while every row's terms are added
// to it; it used to be loaded and stored back for each row, which made this kernel a chain of
// L1 round trips. Each out[d] still takes the rows' terms one after another in row order, with
// the same multiply and add, so the bits are those of the per-row loop.
void accumulate_avx2(const float* weights, float inv, const uint16_t* rows, int64_t row_stride, int64_t n_rows,
                     int64_t n, float* out) {
    constexpr int kVectors = 8;
    const int64_t n8 = n / 8 * 8;
    int64_t d0 = 0;
    for (; d0 + 8 * kVectors <= n8; d0 += 8 * kVectors) {
        __m256 acc[kVectors];
        for (int v = 0; v < kVectors; ++v) acc[v] = _mm256_loadu_ps(out + d0 + 8 * v);
        for (int64_t i = 0; i < n_rows; ++i) {
            const uint16_t* r = rows + i * row_stride + d0;
            const __m256 wv = _mm256_set1_ps(weights[i] * inv);
            for (int v = 0; v < kVectors; ++v) acc[v] = _mm256_add_ps(acc[v], _mm256_mul_ps(wv, load_halves(r + 8 * v)));
        }
        for (int v = 0; v < kVectors; ++v) _mm256_storeu_ps(out + d0 + 8 * v, acc[v]);
    }
    for (; d0 < n8; d0 += 8) {
        __m256 acc = _mm256_loadu_ps(out + d0);
        for (int64_t i = 0; i < n_rows; ++i) {
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(weights[i] * inv), load_halves(rows + i * row_stride + d0)));
        }
        _mm256_storeu_ps(out + d0, acc);
    }
    for (int64_t d = n8; d < n; ++d) {
        for (int64_t i = 0; i < n_rows; ++i) out[d] += (weights[i] * inv) * fp16_to_fp32(rows[i * row_stride + d]);
    }
}
}  // namespace

const F16RowKernels& f16_row_kernels_avx2() {
    static const F16RowKernels k{dots_avx2, accumulate_avx2};
    return k;
}

}  // namespace strata
