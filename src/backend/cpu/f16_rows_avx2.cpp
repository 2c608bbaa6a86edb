// F16C row kernels for an f16 KV cache (backend/cpu/f16_rows.h). Eight halves are widened per
// instruction and go straight into the eight lanes, so an f16 row costs no more instructions
// than an f32 one while it moves half the bytes. Dot products run four rows at once: one row's
// lanes are a chain of dependent adds, and four independent chains keep the adder busy; each
// row's own operations and their order are unchanged.
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

void dots_avx2(const float* q, const uint16_t* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale,
               float* out) {
    const int64_t n8 = n / 8 * 8;
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        const uint16_t* r[4] = {rows + i * row_stride, rows + (i + 1) * row_stride, rows + (i + 2) * row_stride,
                                rows + (i + 3) * row_stride};
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int64_t d = 0; d < n8; d += 8) {
            const __m256 qv = _mm256_loadu_ps(q + d);
            for (int k = 0; k < 4; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(qv, load_halves(r[k] + d)));
        }
        for (int k = 0; k < 4; ++k) out[i + k] = finish(acc[k], q, r[k], n8, n) * scale;
    }
    for (; i < n_rows; ++i) {
        const uint16_t* r = rows + i * row_stride;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t d = 0; d < n8; d += 8) acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(q + d), load_halves(r + d)));
        out[i] = finish(acc, q, r, n8, n) * scale;
    }
}

void accumulate_avx2(const float* weights, float inv, const uint16_t* rows, int64_t row_stride, int64_t n_rows,
                     int64_t n, float* out) {
    const int64_t n8 = n / 8 * 8;
    for (int64_t i = 0; i < n_rows; ++i) {
        const uint16_t* r = rows + i * row_stride;
        const float w = weights[i] * inv;
        const __m256 wv = _mm256_set1_ps(w);
        for (int64_t d = 0; d < n8; d += 8) {
            _mm256_storeu_ps(out + d, _mm256_add_ps(_mm256_loadu_ps(out + d), _mm256_mul_ps(wv, load_halves(r + d))));
        }
        for (int64_t d = n8; d < n; ++d) out[d] += w * fp16_to_fp32(r[d]);
    }
}
}  // namespace

const F16RowKernels& f16_row_kernels_avx2() {
    static const F16RowKernels k{dots_avx2, accumulate_avx2};
    return k;
}

}  // namespace strata
