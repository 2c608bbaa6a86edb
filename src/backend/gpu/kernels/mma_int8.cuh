#pragma once
// Warp-level int8 tensor-core products (CUDA sm_80 and later), for the MMQ kernel
// (ops_matmul_mmq.cu). A warp multiplies a 16 × 32 int8 tile A (rows, row-major) by a 32 × 8
// int8 tile B (columns, each column's 32 values contiguous) into 16 × 8 int32 sums. Lane l holds
// g = l / 4 and t = l % 4, and these pieces of the tiles (PTX ISA, mma.m16n8k32 .s8):
//   A: a[0] = row g, bytes 4t..4t+3;      a[1] = row g + 8, same bytes;
//      a[2] = row g, bytes 16+4t..;       a[3] = row g + 8, bytes 16+4t..
//   B: b[0] = column g, bytes 4t..4t+3;   b[1] = column g, bytes 16+4t..
//   C: c[0], c[1] = row g, columns 2t and 2t + 1;  c[2], c[3] = row g + 8, the same columns.
// The k16 shape multiplies the first or the second 16 bytes alone: A = (a[0], a[1]) or
// (a[2], a[3]), B = b[0] or b[1] (Q6_K keeps a scale per 16 values).
// ldmatrix_x4 (kernels/ldmatrix.cuh) fills A's registers from shared memory in one instruction
// per 16 × 32 tile (lane l gets word l % 4 of row l / 4: the layout above), and two B tiles' alike.
#include <cstdint>

#include "backend/gpu/kernels/ldmatrix.cuh"

namespace strata::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define STRATA_MMA_INT8 1

// c += A · B over 32 values.
__device__ __forceinline__ void mma_k32(int (&c)[4], const int (&a)[4], int b0, int b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += A · B over 16 values (A = rows' registers a_lo (row g) and a_hi (row g + 8)).
__device__ __forceinline__ void mma_k16(int (&c)[4], int a_lo, int a_hi, int b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a_lo), "r"(a_hi), "r"(b));
}

#else
#define STRATA_MMA_INT8 0
#endif

}  // namespace strata::gpu
