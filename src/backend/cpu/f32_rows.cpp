#include "backend/cpu/f32_rows.h"

#include "quant/cpu/cpu_features.h"

namespace strata {

namespace {
void dots_scalar(const float* q, const float* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale, float* out) {
    for (int64_t i = 0; i < n_rows; ++i) out[i] = dot_eight_lanes(q, rows + i * row_stride, n) * scale;
}

void accumulate_scalar(const float* weights, float inv, const float* rows, int64_t row_stride, int64_t n_rows, int64_t n,
                       float* out) {
    for (int64_t i = 0; i < n_rows; ++i) {
        const float* v = rows + i * row_stride;
        const float w = weights[i] * inv;
        for (int64_t d = 0; d < n; ++d) out[d] += w * v[d];
    }
}
}  // namespace

const F32RowKernels& f32_row_kernels_scalar() {
    static const F32RowKernels k{dots_scalar, accumulate_scalar};
    return k;
}

const F32RowKernels& f32_row_kernels() {
    return cpu_simd_level() >= SimdLevel::Avx2 ? f32_row_kernels_avx2() : f32_row_kernels_scalar();
}

}  // namespace strata
