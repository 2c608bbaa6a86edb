#include "backend/cpu/f16_rows.h"

#include <algorithm>

#include "core/fp16.h"
#include "quant/cpu/cpu_features.h"

namespace strata {

namespace {
// Widened a chunk at a time into a stack buffer, a multiple of eight values long so that the
// eight lanes see the values in the same order as one dot_eight_lanes over the whole row.
constexpr int64_t kChunk = 64;

void dots_scalar(const float* q, const uint16_t* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale,
                 float* out) {
    float row[kChunk];
    for (int64_t i = 0; i < n_rows; ++i) {
        const uint16_t* r = rows + i * row_stride;
        float lane[8] = {};
        int64_t d = 0;
        while (d + 8 <= n) {
            const int64_t m = std::min(kChunk, (n - d) / 8 * 8);
            for (int64_t e = 0; e < m; ++e) row[e] = fp16_to_fp32(r[d + e]);
            for (int64_t e = 0; e < m; e += 8) {
                for (int l = 0; l < 8; ++l) lane[l] += q[d + e + l] * row[e + l];
            }
            d += m;
        }
        float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        for (; d < n; ++d) s += q[d] * fp16_to_fp32(r[d]);
        out[i] = s * scale;
    }
}

void accumulate_scalar(const float* weights, float inv, const uint16_t* rows, int64_t row_stride, int64_t n_rows,
                       int64_t n, float* out) {
    for (int64_t i = 0; i < n_rows; ++i) {
        const uint16_t* r = rows + i * row_stride;
        const float w = weights[i] * inv;
        for (int64_t d = 0; d < n; ++d) out[d] += w * fp16_to_fp32(r[d]);
    }
}
}  // namespace

const F16RowKernels& f16_row_kernels_scalar() {
    static const F16RowKernels k{dots_scalar, accumulate_scalar};
    return k;
}

const F16RowKernels& f16_row_kernels() {
    // SimdLevel::Avx2 is only reported with F16C (quant/cpu/cpu_features.h).
    return cpu_simd_level() >= SimdLevel::Avx2 ? f16_row_kernels_avx2() : f16_row_kernels_scalar();
}

}  // namespace strata
