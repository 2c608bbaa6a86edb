// AVX2 row kernels for f32 rows (backend/cpu/f32_rows.h; the kernels: row_kernels_avx2.h).
#include <immintrin.h>

#include "backend/cpu/f32_rows.h"
#include "backend/cpu/row_kernels_avx2.h"

namespace strata {

namespace {
struct FloatRows {
    using T = float;
    static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
    static float scalar(const float* p) { return *p; }
};

void dots_avx2(const float* q, const float* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale, float* out) {
    avx2_rows::dots<FloatRows>(q, rows, row_stride, n_rows, n, scale, out);
}

void accumulate_avx2(const float* weights, float inv, const float* rows, int64_t row_stride, int64_t n_rows, int64_t n,
                     float* out) {
    avx2_rows::accumulate<FloatRows>(weights, inv, rows, row_stride, n_rows, n, out);
}
}  // namespace

const F32RowKernels& f32_row_kernels_avx2() {
    static const F32RowKernels k{dots_avx2, accumulate_avx2};
    return k;
}

}  // namespace strata
