// The prompt-batch matmul on tensor cores (CUDA, sm_70 and later): the tiling of
// ops_matmul_tiled.cu — a block of 256 threads owns 64 weight rows × up to 64 activation columns,
// half the threads dequantize a 64-value slice of the rows while the other half stage the
// activations — but both slices are stored in shared memory as f16 and multiplied by WMMA
// fragments (16 × 16 × 16, f32 accumulators), which is what tensor cores are for: the FMA kernel
// spends most of a prompt's time in its inner product. Each of the 8 warps owns 16 rows × 32
// columns. Weights and activations are rounded to f16 once (as llama.cpp's f16 GEMM path does);
// the sums stay f32. F32 weights (norms, routers in f32 files) keep the f32 kernel: a router's
// top-k should not change with rounding. HIP keeps the FMA kernel for now.
// STRATA_GPU_TENSOR_CORES=0 turns this path off (A/B, or to rule it out).
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

constexpr int kRows = 64;
constexpr int kThreads = 256;
constexpr int kLd = kTiledK + 8;      // f16 row stride of the staged slices: a multiple of 8 (WMMA)
constexpr int kOutLd = kRows + 4;     // f32 stride of the staged output tile: a multiple of 4
static_assert(kGpuTiledColumns == 64 && kTiledK == 64, "the warp roles below assume 64 × 64 × 64 tiles");

template <TensorType T>
__global__ void __launch_bounds__(kThreads)
    matmul_tensor_cores_kernel(const uint8_t* w, uint64_t matrix_bytes, uint64_t row_bytes, int64_t n_in, int64_t n_out,
                               const float* x, float* y, Columns cols) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    using namespace nvcuda;
    __shared__ __align__(32) __half ws[kRows][kLd];             // ws[row][k]: A, row-major
    __shared__ __align__(32) __half xs[kGpuTiledColumns][kLd];  // xs[column][k]: B, column-major
    __shared__ __align__(32) float out[kGpuTiledColumns][kOutLd];  // out[column][row]
    int64_t matrix, first, count;
    if (!tile_of(cols, kGpuTiledColumns, matrix, first, count)) return;  // the whole block leaves
    const int tid = static_cast<int>(threadIdx.x);
    const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;

    // Loader roles as in the f32 kernel: threads 0-127 dequantize half a 64-value slice of one
    // weight row each, threads 128-255 convert half a slice of one activation column each.
    const int half = tid % 2;
    const int item = (tid % 128) / 2;
    const uint8_t* wrow = nullptr;
    const float* xrow = nullptr;
    if (tid < 128) {
        const int64_t r = row0 + item;
        if (r < n_out) wrow = w + static_cast<uint64_t>(matrix) * matrix_bytes + static_cast<uint64_t>(r) * row_bytes;
    } else if (item < count) {
        xrow = x + x_row_of(cols, first + item) * n_in;
    }
    __half* dst = tid < 128 ? &ws[item][32 * half] : &xs[item][32 * half];

    const int warp = tid / 32;
    const int rows16 = 16 * (warp % 4), cols32 = 32 * (warp / 4);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);

    for (int64_t k0 = 0; k0 < n_in; k0 += kTiledK) {
        float v[32];
        if (wrow) {
            dequant_chunk<T>(wrow, k0 / 32 + half, v);
        } else if (xrow) {
            const float4* p = reinterpret_cast<const float4*>(xrow + k0 + 32 * half);
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float4 f = p[i];
                v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
            }
        } else {
#pragma unroll
            for (int i = 0; i < 32; ++i) v[i] = 0.0f;
        }
        __half2* d2 = reinterpret_cast<__half2*>(dst);
#pragma unroll
        for (int i = 0; i < 16; ++i) d2[i] = __floats2half2_rn(v[2 * i], v[2 * i + 1]);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTiledK; kk += 16) {
            wmma::load_matrix_sync(a, &ws[rows16][kk], kLd);
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                wmma::load_matrix_sync(b, &xs[cols32 + 16 * j][kk], kLd);
                wmma::mma_sync(acc[j], a, b, acc[j]);
            }
        }
        __syncthreads();
    }
    // Element (row m, column n) of a 16 × 16 accumulator lands at out[column][row].
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::store_matrix_sync(&out[cols32 + 16 * j][rows16], acc[j], kOutLd, wmma::mem_col_major);
    __syncthreads();
    const int r = tid % kRows;
    const int64_t row = row0 + r;
    if (row >= n_out) return;
    for (int c = tid / kRows; c < count; c += kThreads / kRows) y[y_row_of(cols, first + c) * n_out + row] = out[c][r];
#endif
}

bool enabled_by_environment() {
    const char* v = std::getenv("STRATA_GPU_TENSOR_CORES");
    return !(v && std::strcmp(v, "0") == 0);
}

}  // namespace

bool gpu_tiled_matmul_f16(const DeviceWeight& w, const GpuContext& ctx) {
    static const bool enabled = enabled_by_environment();
    const std::string& arch = ctx.device().arch;  // "sm_90"
    const bool has_tensor_cores = arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 70;
    return enabled && has_tensor_cores && w.type != TensorType::F32;
}

bool launch_matmul_tensor_cores(const DeviceWeight& w, const float* x, float* y, const Columns& cols, int64_t grid_y,
                                GpuContext& ctx) {
    if (!gpu_tiled_matmul_f16(w, ctx)) return false;
    const dim3 grid(grid_for(w.ne[1], kRows), static_cast<unsigned>(grid_y));
    dispatch_weight_type(w.type, [&](auto tag) {
        matmul_tensor_cores_kernel<decltype(tag)::value><<<grid, kThreads, 0, stream_of(ctx)>>>(
            w.data, w.matrix_stride(), w.row_bytes, w.ne[0], w.ne[1], x, y, cols);
    });
    STRATA_GPU_LAUNCHED();
    return true;
}

#else  // HIP: the f32 tiled kernel serves every prompt batch.

bool gpu_tiled_matmul_f16(const DeviceWeight&, const GpuContext&) { return false; }
bool launch_matmul_tensor_cores(const DeviceWeight&, const float*, float*, const Columns&, int64_t, GpuContext&) { return false; }

#endif

}  // namespace strata::gpu
