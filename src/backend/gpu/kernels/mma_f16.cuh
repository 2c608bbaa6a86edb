#pragma once
// Warp-level f16 tensor-core products with f32 sums (CUDA sm_80 and later), and the asynchronous
// global → shared copies that feed them, for the flash attention kernel
// (ops_attention_flash_mma.cu). A warp multiplies a 16 × 16 f16 tile A (rows, row-major) by a
// 16 × 8 f16 tile B (columns, each column's 16 values contiguous) into 16 × 8 f32 sums. Lane l
// holds g = l / 4 and t = l % 4, and these pieces of the tiles (PTX ISA, mma.m16n8k16 .f16),
// each register two halves, the lower column (A) or row (B) in the low 16 bits:
//   A: a[0] = row g, columns 2t, 2t+1;        a[1] = row g + 8, columns 2t, 2t+1;
//      a[2] = row g, columns 8+2t, 9+2t;      a[3] = row g + 8, columns 8+2t, 9+2t
//   B: b[0] = column g, rows 2t, 2t+1;        b[1] = column g, rows 8+2t, 9+2t
//   C: c[0], c[1] = row g, columns 2t, 2t+1;  c[2], c[3] = row g + 8, the same columns.
// So a C tile of scores, rounded to f16 pairwise, is already an A tile for the next product:
// two neighbouring 16 × 8 C tiles (columns 0..7 and 8..15) make one 16 × 16 A tile.
// ldmatrix loads 8 × 8 f16 matrices (8 rows of 16 bytes) from shared memory, lane l receiving
// row l / 4, halves 2(l % 4) and 2(l % 4) + 1: with rows = B's columns that is b[0] (and b[1]
// from the matrix 8 values on). With .trans lane l receives column l / 4, rows 2(l % 4) and
// 2(l % 4) + 1 instead: B from a tile stored row by row along B's rows (values, key by key).
#include <cstdint>

#include "backend/gpu/kernels/ldmatrix.cuh"

namespace strata::gpu {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define STRATA_MMA_F16 1

// c += A · B over 16 values, f16 inputs, f32 sums. Pure arithmetic: the compiler may schedule it.
__device__ __forceinline__ void mma_f16_k16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to f16 (nearest) in one register, `lo` in the low half (cvt's first source
// goes to the upper half).
__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// 2^x in one MUFU op, results below 2^-126 flushed to zero (softmax weights that small are zero
// in f16 anyway); exp2f adds a fix-up for them. 2^-inf = 0.
__device__ __forceinline__ float exp2_flush(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Whether `p` holds in every lane of the (full) warp.
__device__ __forceinline__ bool warp_all(bool p) { return __all_sync(0xffffffffu, p); }

// 16 bytes global → shared without passing through registers (L2 only: the tile is used once per
// block, other blocks find it in L2). With `fill` false nothing is read and zeros are written.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src, bool fill) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :
                 : "r"(shared_address(shared_dst)), "l"(global_src), "r"(fill ? 16 : 0));
}
// Closes the group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits for this thread's committed copies; a barrier after it makes every thread's visible.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }

#else
#define STRATA_MMA_F16 0
#endif

}  // namespace strata::gpu
