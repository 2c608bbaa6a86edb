// The prompt-batch matmul on tensor cores (CUDA, sm_70 and later): the tiling of
// ops_matmul_tiled.cu — a block of 256 threads owns 128 (or 64) weight rows × up to 64 activation
// columns, dequantizing 64-value slices of the rows and staging the activations' — but both slices
// are stored in shared memory as f16 and multiplied by WMMA fragments (16 × 16 × 16, f32
// accumulators), which is what tensor cores are for: the FMA kernel spends most of a prompt's time
// in its inner product. Weights and activations are rounded to f16 once (as llama.cpp's f16 GEMM path does);
// the sums stay f32. F32 weights (norms, routers in f32 files) keep the f32 kernel: a router's
// top-k should not change with rounding. HIP keeps the FMA kernel for now.
// STRATA_GPU_TENSOR_CORES=0 turns this path off (A/B, or to rule it out). H200, synthetic
// Qwen3-30B-A3B: pp512 2121 → 3825 tok/s, pp4096 2530 → 4284 (bench/results/2026-11-29-prompt-tensor-cores/).
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/dequant.cuh"
#include "backend/gpu/kernels/matmul_columns.cuh"

#if defined(__HIP__) || defined(__HIPCC__) || defined(STRATA_GPU_HIP)
#define STRATA_TENSOR_CORES 0
#else
#define STRATA_TENSOR_CORES 1
#include <mma.h>
#endif

namespace strata::gpu {

#if STRATA_TENSOR_CORES
namespace {

constexpr int kThreads = 256;
static_assert(kGpuTiledColumns == 64, "the warp roles below assume tiles of 64 columns");

constexpr int kStep = 64;           // inputs per stage (kTiledK)
constexpr int kLd = kStep + 8;      // f16 row stride of the staged slices: a multiple of 8 (WMMA)
static_assert(kStep == kTiledK, "tiled_matmul_fits checks rows against kTiledK");

// The stage's slices are staged as f16; while the tensor cores work on them, the next stage's
// are loaded into registers, so global latency overlaps the MMAs of other warps.
// Tall tiles (kRows = 128): every thread dequantizes half a slice of one weight row and converts
// a quarter slice of one activation column, each warp owns 32 rows × 32 columns (four
// accumulators, each fragment used twice). Short tiles (kRows = 64): threads 0-127 dequantize,
// 128-255 convert, each warp owns 16 rows × 32 columns.
// Two blocks per multiprocessor (at most 128 registers, no spills): three (80 registers, ~450
// bytes spilled) measured 22% slower on pp512 (H200), one lets the compiler take ~157.
template <TensorType T, int kRows>
__global__ void __launch_bounds__(kThreads, 2)
    matmul_tensor_cores_kernel(const uint8_t* w, uint64_t matrix_bytes, uint64_t row_bytes, int64_t n_in, int64_t n_out,
                               const float* x, float* y, Columns cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    using namespace nvcuda;
    constexpr bool kTall = kRows == 128;
    constexpr int kOutLd = kRows + 4;  // f32 stride of the staged output tile: a multiple of 4
    constexpr int kSliceBytes = (kRows + kGpuTiledColumns) * kLd * 2, kOutBytes = kGpuTiledColumns * kOutLd * 4;
    __shared__ __align__(32) unsigned char smem[kSliceBytes > kOutBytes ? kSliceBytes : kOutBytes];
    auto ws = reinterpret_cast<__half(*)[kLd]>(smem);                    // ws[row][k]: A, row-major
    auto xs = reinterpret_cast<__half(*)[kLd]>(smem + kRows * kLd * 2);  // xs[column][k]: B, column-major
    auto out = reinterpret_cast<float(*)[kOutLd]>(smem);                 // out[column][row], after the loop
    int64_t matrix, first, count;
    if (!tile_of(cols, kGpuTiledColumns, matrix, first, count)) return;  // the whole block leaves
    const int tid = static_cast<int>(threadIdx.x);
    const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;

    // This thread's weight row (null: none, or past the end) and activation column (null likewise).
    const int w_item = kTall ? tid / 2 : (tid < 128 ? tid / 2 : -1), w_half = tid % 2;
    const int x_item = kTall ? tid / 4 : (tid >= 128 ? (tid - 128) / 2 : -1);
    const int x_part = kTall ? tid % 4 : tid % 2;  // quarter (tall) or half (short) of the slice
    constexpr int kXValues = kTall ? 16 : 32;
    const uint8_t* wrow = nullptr;
    const float* xrow = nullptr;
    if (w_item >= 0 && row0 + w_item < n_out) {
        wrow = w + static_cast<uint64_t>(matrix) * matrix_bytes + static_cast<uint64_t>(row0 + w_item) * row_bytes;
    }
    if (x_item >= 0 && x_item < count) xrow = x + x_row_of(cols, first + x_item) * n_in + kXValues * x_part;

    const int warp = tid / 32;
    constexpr int kFragRows = kTall ? 2 : 1;
    const int warp_row = (kTall ? 32 : 16) * (warp % 4), warp_col = 32 * (warp / 4);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[kFragRows];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[2];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragRows][2];
#pragma unroll
    for (int i = 0; i < kFragRows; ++i) wmma::fill_fragment(acc[i][0], 0.0f), wmma::fill_fragment(acc[i][1], 0.0f);

    float wv[32], xv[kXValues];
    const auto load = [&](int64_t k0) {
        if (w_item >= 0) {
            if (wrow) {
                dequant_chunk<T>(wrow, k0 / 32 + w_half, wv);
            } else {
#pragma unroll
                for (int i = 0; i < 32; ++i) wv[i] = 0.0f;
            }
        }
        if (x_item >= 0) {
            if (xrow) {
                const float4* p = reinterpret_cast<const float4*>(xrow + k0);
#pragma unroll
                for (int i = 0; i < kXValues / 4; ++i) {
                    const float4 f = p[i];
                    xv[4 * i] = f.x, xv[4 * i + 1] = f.y, xv[4 * i + 2] = f.z, xv[4 * i + 3] = f.w;
                }
            } else {
#pragma unroll
                for (int i = 0; i < kXValues; ++i) xv[i] = 0.0f;
            }
        }
    };
    load(0);
    for (int64_t k0 = 0; k0 < n_in; k0 += kStep) {
        if (w_item >= 0) {
            auto* d = reinterpret_cast<__half2*>(&ws[w_item][32 * w_half]);
#pragma unroll
            for (int i = 0; i < 16; ++i) d[i] = __floats2half2_rn(wv[2 * i], wv[2 * i + 1]);
        }
        if (x_item >= 0) {
            auto* d = reinterpret_cast<__half2*>(&xs[x_item][kXValues * x_part]);
#pragma unroll
            for (int i = 0; i < kXValues / 2; ++i) d[i] = __floats2half2_rn(xv[2 * i], xv[2 * i + 1]);
        }
        __syncthreads();
        if (k0 + kStep < n_in) load(k0 + kStep);
#pragma unroll
        for (int kk = 0; kk < kStep; kk += 16) {
#pragma unroll
            for (int i = 0; i < kFragRows; ++i) wmma::load_matrix_sync(a[i], &ws[warp_row + 16 * i][kk], kLd);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &xs[warp_col + 16 * j][kk], kLd);
#pragma unroll
            for (int i = 0; i < kFragRows; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    // Element (row m, column n) of a 16 × 16 accumulator lands at out[column][row].
#pragma unroll
    for (int i = 0; i < kFragRows; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&out[warp_col + 16 * j][warp_row + 16 * i], acc[i][j], kOutLd, wmma::mem_col_major);
    __syncthreads();
    const int r = tid % kRows;
    const int64_t row = row0 + r;
    if (row >= n_out) return;
    for (int c = tid / kRows; c < count; c += kThreads / kRows) y[y_row_of(cols, first + c) * n_out + row] = out[c][r];
#endif
}

// Tall tiles halve how often each weight is dequantized per column and use each fragment twice
// (H200, synthetic Qwen3-30B-A3B: pp512 3825 vs 3395 tok/s with short ones), unless they leave
// the GPU with few blocks (k and v projections of a short prompt): then short ones.
// GpuTuning::tensor_core_rows = 64 or 128 forces one (A/B; the device script tests both).
int tile_rows(int64_t n_out, int64_t grid_y, const GpuContext& ctx) {
    const int forced = ctx.tuning().tensor_core_rows;
    if (forced == 64 || forced == 128) return forced;
    const int64_t tall_blocks = (n_out + 127) / 128 * grid_y;
    return 2 * tall_blocks < ctx.device().multiprocessors ? 64 : 128;
}

}  // namespace

bool gpu_tiled_matmul_f16(const DeviceWeight& w, const GpuContext& ctx) {
    const std::string& arch = ctx.device().arch;  // "sm_90"
    const bool has_tensor_cores = arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 70;
    return ctx.tuning().tensor_cores && has_tensor_cores && w.type != TensorType::F32;
}

bool launch_matmul_tensor_cores(const DeviceWeight& w, const float* x, float* y, const Columns& cols, int64_t grid_y,
                                GpuContext& ctx) {
    if (!gpu_tiled_matmul_f16(w, ctx)) return false;
    const bool tall = tile_rows(w.ne[1], grid_y, ctx) == 128;
    const dim3 grid(grid_for(w.ne[1], tall ? 128 : 64), static_cast<unsigned>(grid_y));
    dispatch_weight_type(w.type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        if (tall) {
            matmul_tensor_cores_kernel<T, 128><<<grid, kThreads, 0, stream_of(ctx)>>>(
                w.data, w.matrix_stride(), w.row_bytes, w.ne[0], w.ne[1], x, y, cols);
        } else {
            matmul_tensor_cores_kernel<T, 64><<<grid, kThreads, 0, stream_of(ctx)>>>(
                w.data, w.matrix_stride(), w.row_bytes, w.ne[0], w.ne[1], x, y, cols);
        }
    });
    STRATA_GPU_LAUNCHED();
    return true;
}

#else  // HIP: the f32 tiled kernel serves every prompt batch.

bool gpu_tiled_matmul_f16(const DeviceWeight&, const GpuContext&) { return false; }
bool launch_matmul_tensor_cores(const DeviceWeight&, const float*, float*, const Columns&, int64_t, GpuContext&) { return false; }

#endif

}  // namespace strata::gpu
