#pragma once
// Declarations of the avx2 dot kernels (same signature as DotFn in quant/traits.h). Call them
// only through cpu_dot_kernel(), which checks that the CPU supports avx2.

#include <cstdint>

namespace strata {

// K-quant, legacy and MXFP4 kernels
float dot_f32_avx2(const void* weights, const void* activation, int64_t n);
float dot_f16_avx2(const void* weights, const void* activation, int64_t n);
float dot_bf16_avx2(const void* weights, const void* activation, int64_t n);
float dot_q2_k_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_q3_k_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_q4_k_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_q5_k_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_q6_k_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_q8_0_q8_0_avx2(const void* weights, const void* activation, int64_t n);
float dot_q4_0_q8_0_avx2(const void* weights, const void* activation, int64_t n);
float dot_q5_0_q8_0_avx2(const void* weights, const void* activation, int64_t n);
float dot_mxfp4_q8_0_avx2(const void* weights, const void* activation, int64_t n);
// The 64- and 128-value formats (dot_low_bit_avx2.cpp)
float dot_q1_0_q8_0_avx2(const void* weights, const void* activation, int64_t n);
float dot_q2_0_q8_0_avx2(const void* weights, const void* activation, int64_t n);
float dot_nvfp4_q8_0_avx2(const void* weights, const void* activation, int64_t n);

// IQ kernels
float dot_iq1_s_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq1_m_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq2_xxs_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq2_xs_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq2_s_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq3_xxs_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq3_s_q8_k_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq4_nl_q8_0_avx2(const void* weights, const void* activation, int64_t n);
float dot_iq4_xs_q8_k_avx2(const void* weights, const void* activation, int64_t n);

}  // namespace strata
