// The avx2 multi-row dot kernels, one row per type (bodies in dot_rows_<family>_avx2.cpp).
// Types missing here fall back, in the matmul, to a loop over their single-row kernel.
#include "quant/cpu/dot_rows.h"
#include "quant/cpu/dot_rows_kernels_avx2.h"

namespace strata {

namespace {
constexpr DotRowsKernel kKernels[] = {
    {TensorType::Q2_K, dot_rows_q2_k_q8_k_avx2, dot_tile_q2_k_q8_k_avx2},
    {TensorType::Q3_K, dot_rows_q3_k_q8_k_avx2, dot_tile_q3_k_q8_k_avx2},
    {TensorType::Q4_K, dot_rows_q4_k_q8_k_avx2, dot_tile_q4_k_q8_k_avx2},
    {TensorType::Q5_K, dot_rows_q5_k_q8_k_avx2, dot_tile_q5_k_q8_k_avx2},
    {TensorType::Q6_K, dot_rows_q6_k_q8_k_avx2, dot_tile_q6_k_q8_k_avx2},
};
}  // namespace

const DotRowsKernel* avx2_dot_rows_kernels(size_t* count) {
    *count = sizeof(kKernels) / sizeof(kKernels[0]);
    return kKernels;
}

}  // namespace strata
