// AVX2 row kernels for a q8_0 KV cache (backend/cpu/q8_rows.h). Eight int8 values are widened to
// floats and multiplied by the block's scale per instruction — the reference dequantizer's values,
// rounded once each — and go straight into the eight lanes. Dot products run four rows at once
// (four independent chains of adds keep the adder busy; eight, finished through a transpose as
// the f16 kernel does, measured no faster), and the value sum keeps 64 outputs in registers
// across the rows; each row's own operations and their order are those of the scalar kernel.
#include <immintrin.h>

#include "backend/cpu/q8_rows.h"
#include "backend/cpu/row_kernels_avx2.h"  // transpose8
#include "core/fp16.h"

namespace strata {

namespace {
constexpr int64_t kBlock = 32;
constexpr int64_t kBlockBytes = 34;

// Values 8·g .. 8·g + 7 of the block at b (scale d already widened).
__m256 load_eight(const uint8_t* b, int g, __m256 d) {
    const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + 8 * g));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d);
}

__m256 scale_of(const uint8_t* b) {
    uint16_t h;
    __builtin_memcpy(&h, b, sizeof h);
    return _mm256_set1_ps(fp16_to_fp32(h));
}

float finish(__m256 acc) {
    alignas(32) float lane[8];
    _mm256_store_ps(lane, acc);
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

void dots_avx2(const float* q, const uint8_t* rows, int64_t row_bytes, int64_t n_rows, int64_t n, float scale, float* out) {
    const int64_t blocks = n / kBlock;
    int64_t i = 0;
    for (; i + 4 <= n_rows; i += 4) {
        const uint8_t* r[4] = {rows + i * row_bytes, rows + (i + 1) * row_bytes, rows + (i + 2) * row_bytes,
                               rows + (i + 3) * row_bytes};
        __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (int64_t b = 0; b < blocks; ++b) {
            __m256 d[4];
            for (int k = 0; k < 4; ++k) d[k] = scale_of(r[k] + b * kBlockBytes);
            for (int g = 0; g < 4; ++g) {
                const __m256 qv = _mm256_loadu_ps(q + b * kBlock + 8 * g);
                for (int k = 0; k < 4; ++k) {
                    acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(qv, load_eight(r[k] + b * kBlockBytes, g, d[k])));
                }
            }
        }
        for (int k = 0; k < 4; ++k) out[i + k] = finish(acc[k]) * scale;
    }
    for (; i < n_rows; ++i) {
        const uint8_t* r = rows + i * row_bytes;
        __m256 acc = _mm256_setzero_ps();
        for (int64_t b = 0; b < blocks; ++b) {
            const __m256 d = scale_of(r + b * kBlockBytes);
            for (int g = 0; g < 4; ++g) {
                acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(q + b * kBlock + 8 * g), load_eight(r + b * kBlockBytes, g, d)));
            }
        }
        out[i] = finish(acc) * scale;
    }
}

// Four query heads against two rows at once: each group of eight values is dequantized once for
// the four heads, where one head at a time dequantized every row again for each head of a kv
// head's group. The eight accumulators are finished together through a transpose; each (head,
// row) gets its lanes and their pairwise sum as the one-row kernel has them.
void dots_four_heads_two_rows(const float* q, int64_t q_stride, const uint8_t* r0, const uint8_t* r1, int64_t blocks,
                              float scale, float* out, int64_t out_stride) {
    __m256 acc[8];  // head h, row k: acc[2h + k]
    #pragma GCC unroll 8
    for (int v = 0; v < 8; ++v) acc[v] = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
        const __m256 d0 = scale_of(r0 + b * kBlockBytes), d1 = scale_of(r1 + b * kBlockBytes);
        for (int g = 0; g < 4; ++g) {
            const __m256 v0 = load_eight(r0 + b * kBlockBytes, g, d0), v1 = load_eight(r1 + b * kBlockBytes, g, d1);
            #pragma GCC unroll 4
            for (int h = 0; h < 4; ++h) {
                const __m256 qv = _mm256_loadu_ps(q + h * q_stride + b * kBlock + 8 * g);
                acc[2 * h] = _mm256_add_ps(acc[2 * h], _mm256_mul_ps(qv, v0));
                acc[2 * h + 1] = _mm256_add_ps(acc[2 * h + 1], _mm256_mul_ps(qv, v1));
            }
        }
    }
    avx2_rows::transpose8(acc);
    const __m256 sums = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])),
                                      _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]), _mm256_add_ps(acc[6], acc[7])));
    alignas(32) float s[8];
    _mm256_store_ps(s, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
    for (int h = 0; h < 4; ++h) out[h * out_stride] = s[2 * h], out[h * out_stride + 1] = s[2 * h + 1];
}

void dots_heads_avx2(const float* q, int64_t q_stride, int64_t heads, const uint8_t* rows, int64_t row_bytes, int64_t n_rows,
                     int64_t n, float scale, float* out, int64_t out_stride) {
    const int64_t blocks = n / kBlock;
    int64_t h = 0;
    for (; h + 4 <= heads; h += 4) {
        const float* qh = q + h * q_stride;
        float* oh = out + h * out_stride;
        int64_t i = 0;
        for (; i + 2 <= n_rows; i += 2) {
            dots_four_heads_two_rows(qh, q_stride, rows + i * row_bytes, rows + (i + 1) * row_bytes, blocks, scale, oh + i, out_stride);
        }
        for (int64_t k = 0; k < 4 && i < n_rows; ++k) dots_avx2(qh + k * q_stride, rows + i * row_bytes, row_bytes, 1, n, scale, oh + k * out_stride + i);
    }
    for (; h < heads; ++h) dots_avx2(q + h * q_stride, rows, row_bytes, n_rows, n, scale, out + h * out_stride);
}

// out stays in registers, B blocks (B · 32 values) at a time, while every row's terms are added
// to it: loaded and stored back for each row, the kernel was a chain of L1 round trips. Each
// out[d] still takes the rows' terms one after another in row order, with the same multiply and
// add, so the bits are those of the per-row loop.
template <int B>
void accumulate_blocks(const float* weights, float inv, const uint8_t* rows, int64_t row_bytes, int64_t n_rows, int64_t b0,
                       float* out) {
    __m256 acc[4 * B];
    for (int v = 0; v < 4 * B; ++v) acc[v] = _mm256_loadu_ps(out + b0 * kBlock + 8 * v);
    for (int64_t i = 0; i < n_rows; ++i) {
        const uint8_t* r = rows + i * row_bytes + b0 * kBlockBytes;
        const __m256 wv = _mm256_set1_ps(weights[i] * inv);
        for (int b = 0; b < B; ++b) {
            const __m256 d = scale_of(r + b * kBlockBytes);
            for (int g = 0; g < 4; ++g) acc[4 * b + g] = _mm256_add_ps(acc[4 * b + g], _mm256_mul_ps(wv, load_eight(r + b * kBlockBytes, g, d)));
        }
    }
    for (int v = 0; v < 4 * B; ++v) _mm256_storeu_ps(out + b0 * kBlock + 8 * v, acc[v]);
}

void accumulate_avx2(const float* weights, float inv, const uint8_t* rows, int64_t row_bytes, int64_t n_rows, int64_t n,
                     float* out) {
    const int64_t blocks = n / kBlock;
    int64_t b0 = 0;
    for (; b0 + 2 <= blocks; b0 += 2) accumulate_blocks<2>(weights, inv, rows, row_bytes, n_rows, b0, out);
    for (; b0 < blocks; ++b0) accumulate_blocks<1>(weights, inv, rows, row_bytes, n_rows, b0, out);
}
}  // namespace

const Q8RowKernels& q8_row_kernels_avx2() {
    static const Q8RowKernels k{dots_avx2, accumulate_avx2, dots_heads_avx2};
    return k;
}

}  // namespace strata
