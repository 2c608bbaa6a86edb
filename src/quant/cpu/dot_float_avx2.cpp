// The float dots with avx2: f32 × f32 (router weights of MoE models, f32 models), f16 × f16 and
// bf16 × bf16 (DeepSeek-V4's compressor, indexer, router and hyper-connection weights are F16 in
// its published files). The scalar references accumulate in double one element at a time: a chain
// of dependent adds that made the router of a Qwen3-MoE decode ~7% of the token for ~2% of its
// bytes, and the F16 rows of a DeepSeek-V4 decode a quarter of its time. Here the sums stay in
// double (the same precision as the references) but in 16 independent lanes. An f16 × f16 or
// bf16 × bf16 product is exact in float (11 or 8 significant bits each), so forming it in float
// as the references do loses nothing either.
#include <immintrin.h>

#include "core/fp16.h"

#include "quant/cpu/dot_kernels_avx2.h"

namespace strata {

float dot_f32_avx2(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const float*>(weights);
    const auto* a = static_cast<const float*>(activation);
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int k = 0; k < 4; ++k) {
            const __m256d wk = _mm256_cvtps_pd(_mm_loadu_ps(w + i + 4 * k));
            const __m256d ak = _mm256_cvtps_pd(_mm_loadu_ps(a + i + 4 * k));
            acc[k] = _mm256_fmadd_pd(wk, ak, acc[k]);
        }
    }
    const __m256d s = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, s);
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; ++i) sum += static_cast<double>(w[i]) * static_cast<double>(a[i]);
    return static_cast<float>(sum);
}

namespace {

// Adds the eight exact float products p to two double accumulators.
inline void add_products(__m256 p, __m256d& lo, __m256d& hi) {
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(p)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(p, 1)));
}

inline __m256 load_f16(const uint16_t* x) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))); }

inline __m256 load_bf16(const uint16_t* x) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

template <__m256 (*Load)(const uint16_t*), float (*ToFloat)(uint16_t)>
float dot_half(const void* weights, const void* activation, int64_t n) {
    const auto* w = static_cast<const uint16_t*>(weights);
    const auto* a = static_cast<const uint16_t*>(activation);
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        add_products(_mm256_mul_ps(Load(w + i), Load(a + i)), acc[0], acc[1]);
        add_products(_mm256_mul_ps(Load(w + i + 8), Load(a + i + 8)), acc[2], acc[3]);
    }
    const __m256d s = _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3]));
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, s);
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; ++i) sum += static_cast<double>(ToFloat(w[i]) * ToFloat(a[i]));
    return static_cast<float>(sum);
}

}  // namespace

float dot_f16_avx2(const void* weights, const void* activation, int64_t n) {
    return dot_half<load_f16, fp16_to_fp32>(weights, activation, n);
}

float dot_bf16_avx2(const void* weights, const void* activation, int64_t n) {
    return dot_half<load_bf16, bf16_to_fp32>(weights, activation, n);
}

}  // namespace strata
