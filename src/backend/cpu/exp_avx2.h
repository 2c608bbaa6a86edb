#pragma once
// e^x on eight floats, for the AVX2 kernels (include only from *_avx2.cpp files, which are
// compiled for AVX2 and FMA): SwiGLU's sigmoid and the attention's softmax weights.
//
// The usual reduction: x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r from a degree-6 polynomial (the
// minimax coefficients of the Cephes library's expf, within ~2 ulp of e^r), and 2^n added to the
// exponent bits. Inputs are clamped to where 2^n stays a normal float; a NaN stays NaN, as with
// std::exp.

#include <immintrin.h>

namespace strata {

inline __m256 exp8(__m256 x) {
    // min/max return their second operand when one is NaN: x goes second, so NaN passes.
    x = _mm256_max_ps(_mm256_set1_ps(-87.3f), _mm256_min_ps(_mm256_set1_ps(88.3f), x));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // r = x − n·ln 2, with ln 2 in two parts so that n·ln2_hi is exact.
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    const __m256 r2 = _mm256_mul_ps(r, r);
    const __m256 er = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
    const __m256i two_n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(er, _mm256_castsi256_ps(two_n));
}

}  // namespace strata
