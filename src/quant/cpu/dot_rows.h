#pragma once
// Multi-row dot kernels: several weight rows against one activation row in one call, four rows
// (two for Q6_K) side by side, a super-block of each in turn. Each activation vector is loaded
// once for all of them, the activation-only terms are computed once, and one independent
// accumulator chain per row is in flight. Faster than the single-row kernel when the rows are in cache (the CPU matmul's
// second and later tokens of a row block); streamed from DRAM it is slower on the Zen 4 we
// measured, because four row streams interleaved inside each 4 KiB page defeat the hardware
// prefetchers (bench/results/2026-11-29-dot-rows/README.md) — so the matmul streams a block's
// first token through the single-row kernel.
//
// Each multi-row kernel is bit-identical, row by row, to the single-row kernel of the same type
// and level: the same integer partial sums land in the same SIMD lanes and are accumulated in
// floats in the same order (tests/quant/cpu_rows_kernels_test.cpp checks it).
//
//   DotRowsFn rows = cpu_dot_rows_kernel(TensorType::Q4_K);   // null: loop over cpu_dot_kernel
//   if (rows) rows(w, row_bytes, act, n, 16, out);             // out[r] = dot(w + r·row_bytes, act, n)
//   DotTileFn tile = cpu_dot_tile_kernel(TensorType::Q4_K);   // several activation rows at once
//   if (tile) tile(w, row_bytes, acts, 4, n, 16, out, n_out);  // out[t·n_out + r]

#include <cstddef>
#include <cstdint>

#include "quant/cpu/cpu_features.h"
#include "quant/traits.h"

namespace strata {

// out[r] = dot(weights + r·row_stride bytes, activation, n) for 0 ≤ r < rows (any rows ≥ 0).
using DotRowsFn = void (*)(const void* weights, uint64_t row_stride, const void* activation, int64_t n, int64_t rows,
                           float* out);

// Tiles: out[t·out_stride + r] = dot(weights + r·row_stride, activations[t], n) for 0 ≤ r < rows
// and 0 ≤ t < tokens. For a matmul's rows already in cache, a row's unpacked quants and scales
// serve several activation rows at once; each (row, token) has the single-row kernel's bits.
using DotTileFn = void (*)(const void* weights, uint64_t row_stride, const void* const* activations, int64_t tokens,
                           int64_t n, int64_t rows, float* out, int64_t out_stride);

struct DotRowsKernel {
    TensorType type;
    DotRowsFn rows;
    DotTileFn tile = nullptr;  // null: none for the type
};

// Multi-row kernels of one SIMD level (dot_rows_table_<level>.cpp).
const DotRowsKernel* avx2_dot_rows_kernels(size_t* count);
const DotRowsKernel* avx512_dot_rows_kernels(size_t* count);

// The multi-row kernel of the level whose single-row kernel cpu_dot_kernel(type, max_level)
// returns, so that both give the same bits; null when that level has none for the type (callers
// then loop over the single-row kernel).
DotRowsFn cpu_dot_rows_kernel(TensorType type, SimdLevel max_level = SimdLevel::Avx512);
// The multi-row kernel of exactly `level`, or null (for tests and benches).
DotRowsFn cpu_dot_rows_kernel_exact(TensorType type, SimdLevel level);
// The tile kernel paired with cpu_dot_kernel(type, max_level) the same way, or null.
DotTileFn cpu_dot_tile_kernel(TensorType type, SimdLevel max_level = SimdLevel::Avx512);
DotTileFn cpu_dot_tile_kernel_exact(TensorType type, SimdLevel level);

}  // namespace strata
