// SwiGLU on eight floats at a time (ops.cpp dispatches here on AVX2 machines). A decode step runs
// it on the caller thread while the pool waits (k experts × n_ff values per MoE layer), where the
// scalar std::exp cost more than the layer's other serial work together.
//
// exp(−g) is exp8 (backend/cpu/exp_avx2.h).

#include <immintrin.h>

#include <cmath>

#include "backend/cpu/exp_avx2.h"
#include "backend/cpu/swiglu_kernels.h"

namespace strata {

void swiglu_avx2(float* gate, const float* up, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 g = _mm256_loadu_ps(gate + i);
        const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
        const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, e));
        _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
    for (; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace strata
