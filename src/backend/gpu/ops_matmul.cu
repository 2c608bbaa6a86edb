// Quantized weights: embedding rows and matrix × activations (gpu_ops.h). One kernel serves the
// dense and the per-expert products: a block computes a few output rows (one per warp) for a
// tile of up to kGpuMatmulColumns activation rows that use the same matrix, so each weight row
// is dequantized once per tile. Lanes own 32-value chunks of the row (kernels/dequant.cuh).
// CPU references: backend/cpu/matmul.cpp (which quantizes the activations to the weight's dot
// type; here they stay f32, so the GPU is the closer of the two to an exact product).
#include <algorithm>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/dequant.cuh"
#include "backend/gpu/kernels/matmul_columns.cuh"

namespace strata::gpu {

bool gpu_supports_type(TensorType type) {
    return dispatch_weight_type(type, [](auto) {});
}

bool gpu_supports_rows(TensorType type, int64_t n) {
    if (!gpu_supports_type(type) || n <= 0) return false;
    return n % 32 == 0 || (is_float_weight(type) && n % 8 == 0);
}

namespace {

constexpr int kMatmulBlock = 256;   // threads; rows per block = kMatmulBlock / warp size
constexpr int kSmallMatmulBlock = 64;  // for matrices of at most kSmallMatrixRows rows
constexpr int64_t kSmallMatrixRows = 1024;
constexpr int kGetRowsBlock = 64;   // threads, one 32-value chunk each

template <TensorType T>
__global__ void get_rows_kernel(const uint8_t* w, uint64_t row_bytes, int64_t n_in, const int32_t* ids, float* out) {
    const int64_t chunk = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t t = blockIdx.y;
    if constexpr (is_float_weight(T)) {  // a row's last n_in % 32 values, one per thread of the first block
        const int64_t i = 32 * (n_in / 32) + threadIdx.x;
        if (blockIdx.x == 0 && i < n_in) out[t * n_in + i] = dequant_value<T>(w + static_cast<uint64_t>(ids[t]) * row_bytes, i);
    }
    if (chunk >= n_in / 32) return;
    float v[32];
    dequant_chunk<T>(w + static_cast<uint64_t>(ids[t]) * row_bytes, chunk, v);
    float4* o = reinterpret_cast<float4*>(out + t * n_in + 32 * chunk);
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
}

template <TensorType T>
__global__ void matmul_kernel(const uint8_t* w, uint64_t matrix_bytes, uint64_t row_bytes, int64_t n_in, int64_t n_out,
                              const float* x, float* y, Columns cols) {
    constexpr int kCols = kGpuMatmulColumns;
    const int lane = static_cast<int>(threadIdx.x) % vendor::kWarpSize;
    const int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x / vendor::kWarpSize) + threadIdx.x / vendor::kWarpSize;
    int64_t matrix, first, count;
    if (!tile_of(cols, kCols, matrix, first, count)) return;
    if (o >= n_out) return;  // no barriers below: a whole warp leaves together

    const float* xin[kCols];
    int64_t yrow[kCols];
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
        const int64_t c = first + min(static_cast<int64_t>(j), count - 1);
        xin[j] = x + x_row_of(cols, c) * n_in;
        yrow[j] = y_row_of(cols, c);
    }
    const uint8_t* row = w + static_cast<uint64_t>(matrix) * matrix_bytes + static_cast<uint64_t>(o) * row_bytes;
    float acc[kCols] = {};
    for (int64_t ch = lane; ch < n_in / 32; ch += vendor::kWarpSize) {
        float v[32];
        dequant_chunk<T>(row, ch, v);
#pragma unroll
        for (int j = 0; j < kCols; ++j) {
            if (j >= count) break;
            const float4* xp = reinterpret_cast<const float4*>(xin[j] + 32 * ch);
            float s = 0.0f;
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float4 a = xp[i];
                s += v[4 * i] * a.x + v[4 * i + 1] * a.y + v[4 * i + 2] * a.z + v[4 * i + 3] * a.w;
            }
            acc[j] += s;
        }
    }
    if constexpr (is_float_weight(T)) {  // rows of float types may end in a part chunk: value by value
        for (int64_t i = 32 * (n_in / 32) + lane; i < n_in; i += vendor::kWarpSize) {
            const float wv = dequant_value<T>(row, i);
#pragma unroll
            for (int j = 0; j < kCols; ++j) {
                if (j >= count) break;
                acc[j] += wv * xin[j][i];
            }
        }
    }
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
        if (j >= count) break;  // count is the same for the whole warp
        const float s = warp_sum(acc[j]);
        if (lane == 0) y[yrow[j] * n_out + o] = s;
    }
}

void check_weight(const DeviceWeight& w, const char* op) {
    STRATA_CHECK(w.data != nullptr, op);
    STRATA_CHECK(gpu_supports_rows(w.type, w.ne[0]),
                 "weight type or row length without a GPU kernel (check gpu_supports_rows at load)");
}

void launch_matmul(const DeviceWeight& w, const float* x, float* y, const Columns& cols, int64_t grid_y, GpuContext& ctx) {
    // Small matrices (a MoE router: 128 rows) get small blocks, so that their few rows still
    // spread over many multiprocessors.
    const int block = w.ne[1] <= kSmallMatrixRows ? kSmallMatmulBlock : kMatmulBlock;
    const int64_t rows_per_block = std::max<int64_t>(1, block / ctx.warp_size());
    const dim3 grid(grid_for(w.ne[1], static_cast<int>(rows_per_block)), static_cast<unsigned>(grid_y));
    const uint64_t matrix_bytes = w.matrix_stride();
    dispatch_weight_type(w.type, [&](auto tag) {
        matmul_kernel<decltype(tag)::value><<<grid, block, 0, stream_of(ctx)>>>(
            w.data, matrix_bytes, w.row_bytes, w.ne[0], w.ne[1], x, y, cols);
    });
    STRATA_GPU_LAUNCHED();
}

}  // namespace

void gpu_get_rows(const DeviceWeight& w, const int32_t* ids, int64_t n, float* out, GpuContext& ctx) {
    check_weight(w, "gpu_get_rows with an absent weight");
    if (n == 0) return;
    const dim3 grid(std::max(1u, grid_for(w.ne[0] / 32, kGetRowsBlock)), static_cast<unsigned>(n));
    dispatch_weight_type(w.type, [&](auto tag) {
        get_rows_kernel<decltype(tag)::value><<<grid, kGetRowsBlock, 0, stream_of(ctx)>>>(w.data, w.row_bytes, w.ne[0], ids, out);
    });
    STRATA_GPU_LAUNCHED();
}

void gpu_matmul(const DeviceWeight& w, int64_t matrix, const float* x, int64_t n_tokens, float* y, GpuContext& ctx,
                const GpuQ8Rows* xq) {
    check_weight(w, "gpu_matmul with an absent weight");
    STRATA_CHECK(matrix >= 0 && matrix < w.ne[2] * w.ne[3], "gpu_matmul matrix index out of range");
    if (n_tokens == 0) return;
    Columns cols;
    cols.n_cols = n_tokens;
    cols.matrix = matrix;
    const bool tiled = n_tokens >= kGpuTiledMinTokens && tiled_matmul_fits(w);
    if (tiled) {
        if (xq && launch_matmul_mmq(w, *xq, y, cols, (n_tokens + kGpuTiledColumns - 1) / kGpuTiledColumns, ctx)) return;
        launch_matmul_tiled(w, x, y, cols, (n_tokens + kGpuTiledColumns - 1) / kGpuTiledColumns, ctx);
        return;
    }
    const int64_t grid_y = (n_tokens + kGpuMatmulColumns - 1) / kGpuMatmulColumns;
    if (xq && gpu_matvec_takes_q8(w)) {
        launch_matvec_q8(w, *xq, y, cols, grid_y, n_tokens == 1, ctx);
        return;
    }
    launch_matmul(w, x, y, cols, grid_y, ctx);
}

void gpu_matmul_experts(const DeviceWeight& w, const MoePlan& plan, const float* x, int64_t pairs_per_x_row, float* y,
                        GpuContext& ctx, const GpuQ8Rows* xq) {
    gpu_matmul_experts_rows(w, plan, x, MoeRows::Pair, pairs_per_x_row, y, MoeRows::Pair, ctx, xq);
}

void gpu_matmul_experts_rows(const DeviceWeight& w, const MoePlan& plan, const float* x, MoeRows x_rows,
                             int64_t pairs_per_x_row, float* y, MoeRows y_rows, GpuContext& ctx, const GpuQ8Rows* xq) {
    check_weight(w, "gpu_matmul_experts with an absent weight");
    if (plan.n_pairs == 0 || plan.max_tiles == 0) return;
    const Columns cols = plan_columns(plan, x_rows, pairs_per_x_row, y_rows);
    if (plan.tile_columns > kGpuMatmulColumns) {
        STRATA_CHECK(plan.tile_columns <= kGpuTiledColumns && tiled_matmul_fits(w),
                     "a MoE plan with wide tiles for a weight the tiled kernel cannot read");
        if (xq && launch_matmul_mmq(w, *xq, y, cols, plan.max_tiles, ctx)) return;
        launch_matmul_tiled(w, x, y, cols, plan.max_tiles, ctx);
        return;
    }
    if (xq && gpu_matvec_takes_q8(w)) {
        launch_matvec_q8(w, *xq, y, cols, plan.max_tiles, plan.max_tile_pairs == 1, ctx);
        return;
    }
    launch_matmul(w, x, y, cols, plan.max_tiles, ctx);
}

}  // namespace strata::gpu
