#include "backend/cpu/q8_rows.h"

#include "backend/cpu/f16_rows.h"
#include "quant/cpu/cpu_features.h"
#include "quant/legacy.h"

namespace strata {

namespace {
// A head row is dequantized a block at a time by the reference dequantizer; 32 values are four
// whole groups of eight, so the lanes see the values in the order one dot_eight_lanes over the
// whole row would.
constexpr int64_t kBlock = 32;
constexpr int64_t kBlockBytes = 34;

void dots_scalar(const float* q, const uint8_t* rows, int64_t row_bytes, int64_t n_rows, int64_t n, float scale,
                 float* out) {
    float values[kBlock];
    for (int64_t i = 0; i < n_rows; ++i) {
        const uint8_t* r = rows + i * row_bytes;
        float lane[8] = {};
        for (int64_t b = 0; b < n / kBlock; ++b) {
            dequantize_row_q8_0(r + b * kBlockBytes, values, kBlock);
            for (int64_t e = 0; e < kBlock; e += 8) {
                for (int l = 0; l < 8; ++l) lane[l] += q[b * kBlock + e + l] * values[e + l];
            }
        }
        out[i] = (((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))) * scale;
    }
}

void accumulate_scalar(const float* weights, float inv, const uint8_t* rows, int64_t row_bytes, int64_t n_rows, int64_t n,
                       float* out) {
    float values[kBlock];
    for (int64_t i = 0; i < n_rows; ++i) {
        const uint8_t* r = rows + i * row_bytes;
        const float w = weights[i] * inv;
        for (int64_t b = 0; b < n / kBlock; ++b) {
            dequantize_row_q8_0(r + b * kBlockBytes, values, kBlock);
            for (int64_t e = 0; e < kBlock; ++e) out[b * kBlock + e] += w * values[e];
        }
    }
}
void dots_heads_scalar(const float* q, int64_t q_stride, int64_t heads, const uint8_t* rows, int64_t row_bytes, int64_t n_rows,
                       int64_t n, float scale, float* out, int64_t out_stride) {
    for (int64_t h = 0; h < heads; ++h) dots_scalar(q + h * q_stride, rows, row_bytes, n_rows, n, scale, out + h * out_stride);
}
}  // namespace

const Q8RowKernels& q8_row_kernels_scalar() {
    static const Q8RowKernels k{dots_scalar, accumulate_scalar, dots_heads_scalar};
    return k;
}

const Q8RowKernels& q8_row_kernels() {
    return cpu_simd_level() >= SimdLevel::Avx2 ? q8_row_kernels_avx2() : q8_row_kernels_scalar();
}

}  // namespace strata
