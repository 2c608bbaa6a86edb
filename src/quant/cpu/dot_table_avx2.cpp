// The avx2 dot kernels, one row per type. Kernel bodies live in dot_<family>_avx2.cpp files,
// compiled with avx2 enabled; this file only lists them (and is compiled like them, so the table
// itself is plain data with no avx2 code of its own).
#include "quant/cpu/dot_kernels.h"
#include "quant/cpu/dot_kernels_avx2.h"

namespace strata {

namespace {
constexpr DotKernel kKernels[] = {
    // K-quant, legacy and MXFP4 kernels (dot_kquants_avx2.cpp, dot_legacy_avx2.cpp,
    // dot_mxfp4_avx2.cpp)
    {TensorType::Q2_K, dot_q2_k_q8_k_avx2},
    {TensorType::Q3_K, dot_q3_k_q8_k_avx2},
    {TensorType::Q4_K, dot_q4_k_q8_k_avx2},
    {TensorType::Q5_K, dot_q5_k_q8_k_avx2},
    {TensorType::Q6_K, dot_q6_k_q8_k_avx2},
    {TensorType::Q8_0, dot_q8_0_q8_0_avx2},
    {TensorType::Q4_0, dot_q4_0_q8_0_avx2},
    {TensorType::Q5_0, dot_q5_0_q8_0_avx2},
    {TensorType::MXFP4, dot_mxfp4_q8_0_avx2},
    // Q1_0, Q2_0 and NVFP4 (dot_low_bit_avx2.cpp)
    {TensorType::Q1_0, dot_q1_0_q8_0_avx2},
    {TensorType::Q2_0, dot_q2_0_q8_0_avx2},
    {TensorType::NVFP4, dot_nvfp4_q8_0_avx2},
    // IQ kernels (dot_iq_avx2.cpp)
    {TensorType::IQ1_S, dot_iq1_s_q8_k_avx2},
    {TensorType::IQ1_M, dot_iq1_m_q8_k_avx2},
    {TensorType::IQ2_XXS, dot_iq2_xxs_q8_k_avx2},
    {TensorType::IQ2_XS, dot_iq2_xs_q8_k_avx2},
    {TensorType::IQ2_S, dot_iq2_s_q8_k_avx2},
    {TensorType::IQ3_XXS, dot_iq3_xxs_q8_k_avx2},
    {TensorType::IQ3_S, dot_iq3_s_q8_k_avx2},
    {TensorType::IQ4_NL, dot_iq4_nl_q8_0_avx2},
    {TensorType::IQ4_XS, dot_iq4_xs_q8_k_avx2},
    {TensorType::F32, dot_f32_avx2},  // dot_float_avx2.cpp, as the two below; the avx512 level falls back to them
    {TensorType::F16, dot_f16_avx2},
    {TensorType::BF16, dot_bf16_avx2},
};
}  // namespace

const DotKernel* avx2_dot_kernels(size_t* count) {
    *count = sizeof(kKernels) / sizeof(kKernels[0]);
    return kKernels;
}

}  // namespace strata
