// The prompt-batch matmul (gpu_ops.h: gpu_matmul from kGpuTiledMinTokens tokens, and MoE plans
// with kGpuTiledColumns-wide tiles): a classic shared-memory tiled product. A block of 256
// threads owns 64 output rows × up to 64 activation columns; per step of kTiledK inputs half the
// threads dequantize the 64 weight rows' slice into shared memory (each weight value once per
// block, however many columns use it) while the other half stage the activations, then every
// thread accumulates a 4 × 4 register tile. The row-per-warp kernel of ops_matmul.cu dequantizes
// each weight once per 8 columns and reads activations from global memory, which is what made
// prompt processing ~20× slower than this. Plain FMA arithmetic, so one source serves CUDA and HIP;
// on CUDA GPUs with tensor cores ops_matmul_tensor_cores.cu takes these tiles instead.
#include <algorithm>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/dequant.cuh"
#include "backend/gpu/kernels/matmul_columns.cuh"

namespace strata::gpu {

namespace {

constexpr int kTileRows = 64;
constexpr int kTileThreads = 256;
constexpr int kPad = 4;  // keeps float4 alignment and spreads the transposed stores over banks
constexpr int64_t kMaxSplits = 16;
static_assert(kGpuTiledColumns == 64 && kTiledK == 64, "the thread roles below assume 64 × 64 × 64 tiles");

// Block z of the grid covers inputs [z·k_split, (z + 1)·k_split) and writes its partial products
// to y + z·y_split (k_split = n_in and one z: the whole product into y).
template <TensorType T>
__global__ void __launch_bounds__(kTileThreads)
    matmul_tiled_kernel(const uint8_t* w, uint64_t matrix_bytes, uint64_t row_bytes, int64_t n_in, int64_t n_out,
                        const float* x, float* y, Columns cols, int64_t k_split, int64_t y_split) {
    __shared__ __align__(16) float ws[kTiledK][kTileRows + kPad];         // ws[k][row]
    __shared__ __align__(16) float xs[kTiledK][kGpuTiledColumns + kPad];  // xs[k][column]
    int64_t matrix, first, count;
    if (!tile_of(cols, kGpuTiledColumns, matrix, first, count)) return;  // the whole block leaves
    const int tid = static_cast<int>(threadIdx.x);
    const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kTileRows;

    // Loader roles: threads 0-127 dequantize half a 64-value slice of one weight row each; threads
    // 128-255 copy half a slice of one activation column each.
    const int half = tid % 2;
    const int lane_item = (tid % 128) / 2;  // weight row or activation column within the tile
    const uint8_t* wrow = nullptr;
    const float* xrow = nullptr;
    if (tid < 128) {
        const int64_t r = row0 + lane_item;
        if (r < n_out) wrow = w + static_cast<uint64_t>(matrix) * matrix_bytes + static_cast<uint64_t>(r) * row_bytes;
    } else if (lane_item < count) {
        xrow = x + x_row_of(cols, first + lane_item) * n_in;
    }

    const int tx = tid % 16, ty = tid / 16;  // this thread's outputs: rows 4·ty.., columns 4·tx..
    float acc[4][4] = {};
    const int64_t k_begin = static_cast<int64_t>(blockIdx.z) * k_split, k_end = min(n_in, k_begin + k_split);
    y += static_cast<int64_t>(blockIdx.z) * y_split;
    for (int64_t k0 = k_begin; k0 < k_end; k0 += kTiledK) {
        float v[32];
        if (tid < 128) {
            if (wrow) {
                dequant_chunk<T>(wrow, k0 / 32 + half, v);
            } else {
#pragma unroll
                for (int i = 0; i < 32; ++i) v[i] = 0.0f;
            }
#pragma unroll
            for (int i = 0; i < 32; ++i) ws[32 * half + i][lane_item] = v[i];
        } else {
            if (xrow) {
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
#pragma unroll
            for (int i = 0; i < 32; ++i) xs[32 * half + i][lane_item] = v[i];
        }
        __syncthreads();
#pragma unroll 16
        for (int k = 0; k < kTiledK; ++k) {
            const float4 a = *reinterpret_cast<const float4*>(&ws[k][4 * ty]);
            const float4 b = *reinterpret_cast<const float4*>(&xs[k][4 * tx]);
            const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = 4 * tx + j;
        if (c >= count) break;
        float* yrow = y + y_row_of(cols, first + c) * n_out;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int64_t r = row0 + 4 * ty + i;
            if (r < n_out) yrow[r] = acc[i][j];
        }
    }
}

// out[i] = Σ_z parts[z·n + i], in z order (the same sums every run).
__global__ void sum_splits_kernel(const float* parts, int n_split, int64_t n, float* out) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int z = 0; z < n_split; ++z) s += parts[z * n + i];
    out[i] = s;
}

// How many input ranges a dense product is split into: enough blocks for the GPU when its tiles
// alone are few (a MoE router of 128 f32 rows: two row tiles per 64 prompt tokens), each range
// at least two stages long. Products through MoE plans are never split.
int split_count(const DeviceWeight& w, const Columns& cols, int64_t grid_y, const GpuContext& ctx) {
    if (cols.tiles) return 1;
    const int64_t blocks = grid_for(w.ne[1], kTileRows) * grid_y;
    const int64_t wanted = (ctx.device().multiprocessors + blocks - 1) / blocks;
    const int64_t by_k = w.ne[0] / (2 * kTiledK);
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({wanted, by_k, kMaxSplits})));
}

}  // namespace

bool tiled_matmul_fits(const DeviceWeight& w) { return w.ne[0] % kTiledK == 0 && gpu_supports_type(w.type); }

void launch_matmul_tiled(const DeviceWeight& w, const float* x, float* y, const Columns& cols, int64_t grid_y,
                         GpuContext& ctx) {
    if (grid_y <= 0) return;
    if (launch_matmul_tensor_cores(w, x, y, cols, grid_y, ctx)) return;
    const int n_split = split_count(w, cols, grid_y, ctx);
    const int64_t k_split = (w.ne[0] / n_split + kTiledK - 1) / kTiledK * kTiledK;
    const int64_t out_size = cols.n_cols * w.ne[1];
    float* out = n_split > 1 ? ctx.scratch_floats(kGpuSplitKScratchSlot, static_cast<uint64_t>(n_split * out_size)) : y;
    const dim3 grid(grid_for(w.ne[1], kTileRows), static_cast<unsigned>(grid_y), static_cast<unsigned>(n_split));
    dispatch_weight_type(w.type, [&](auto tag) {
        matmul_tiled_kernel<decltype(tag)::value><<<grid, kTileThreads, 0, stream_of(ctx)>>>(
            w.data, w.matrix_stride(), w.row_bytes, w.ne[0], w.ne[1], x, out, cols, k_split, out_size);
    });
    STRATA_GPU_LAUNCHED();
    if (n_split == 1) return;
    sum_splits_kernel<<<grid_for(out_size, 256), 256, 0, stream_of(ctx)>>>(out, n_split, out_size, y);
    STRATA_GPU_LAUNCHED();
}

int gpu_moe_tile_columns(int64_t n_pairs, int64_t n_expert, const DeviceWeight& gate_up, const DeviceWeight& down) {
    // Wide tiles pay once the average expert fills a quarter of one; below that the row-per-warp
    // kernel wastes less on empty columns.
    const bool wide = n_expert > 0 && n_pairs >= n_expert * (kGpuTiledColumns / 4);
    return wide && tiled_matmul_fits(gate_up) && tiled_matmul_fits(down) ? kGpuTiledColumns : kGpuMatmulColumns;
}

}  // namespace strata::gpu
