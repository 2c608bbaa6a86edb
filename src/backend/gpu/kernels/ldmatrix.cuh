#pragma once
// Shared-memory fragment loads for the warp-level tensor-core products (CUDA sm_80 and later):
// kernels/mma_int8.cuh (MMQ prompt matmuls) and kernels/mma_f16.cuh (flash attention).
// ldmatrix loads four 8 × 16-byte matrices in one instruction: lanes 8m .. 8m + 7 give the row
// addresses of matrix m (16-byte aligned), and lane l receives the 32-bit word l % 4 of row l / 4
// of matrix m in r[m] — with .trans, of the matrix transposed as 8 × 8 halves.
#include <cstdint>

namespace strata::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <typename Word>
__device__ __forceinline__ void ldmatrix_x4(Word (&r)[4], const void* row_address) {
    static_assert(sizeof(Word) == 4, "ldmatrix fills 32-bit registers");
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row_address)));
}

template <typename Word>
__device__ __forceinline__ void ldmatrix_x4_trans(Word (&r)[4], const void* row_address) {
    static_assert(sizeof(Word) == 4, "ldmatrix fills 32-bit registers");
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(row_address)));
}

#endif

}  // namespace strata::gpu
