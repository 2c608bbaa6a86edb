// F16C row kernels for an f16 KV cache (backend/cpu/f16_rows.h). Eight halves are widened per
// instruction and go straight into the eight lanes, so an f16 row costs no more instructions
// than an f32 one while it moves half the bytes (the kernels: row_kernels_avx2.h).
#include <immintrin.h>

#include "backend/cpu/f16_rows.h"
#include "backend/cpu/row_kernels_avx2.h"
#include "core/fp16.h"

namespace strata {

namespace {
struct HalfRows {
    using T = uint16_t;
    static __m256 load(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    static float scalar(const uint16_t* p) { return fp16_to_fp32(*p); }
};

void dots_avx2(const float* q, const uint16_t* rows, int64_t row_stride, int64_t n_rows, int64_t n, float scale,
               float* out) {
    avx2_rows::dots<HalfRows>(q, rows, row_stride, n_rows, n, scale, out);
}

void accumulate_avx2(const float* weights, float inv, const uint16_t* rows, int64_t row_stride, int64_t n_rows,
                     int64_t n, float* out) {
    avx2_rows::accumulate<HalfRows>(weights, inv, rows, row_stride, n_rows, n, out);
}

}  // namespace

const F16RowKernels& f16_row_kernels_avx2() {
    static const F16RowKernels k{dots_avx2, accumulate_avx2};
    return k;
}

}  // namespace strata
