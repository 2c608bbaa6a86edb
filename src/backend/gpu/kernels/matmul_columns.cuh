#pragma once
// Which activation rows a matmul block's tile covers, shared by the row-per-warp kernel
// (ops_matmul.cu, decode and small batches) and the shared-memory tiled kernel
// (ops_matmul_tiled.cu, prompt batches). Dense: tile y = columns [w·y, w·y + w) of matrix
// `matrix` (w: the kernel's tile width). Experts: tile y = (matrix, first, count) from a plan;
// sorted column c is pair sorted[c], reading x row pair / pairs_per_x_row (or c) and writing y
// row pair (or c).
#include <cstdint>

#include "backend/gpu/gpu_ops.h"

namespace strata::gpu {

struct Columns {
    const int32_t* tiles = nullptr;
    const int32_t* n_tiles = nullptr;
    const int32_t* sorted = nullptr;
    int64_t pairs_per_x_row = 1;
    int64_t n_cols = 0;
    int64_t matrix = 0;
    bool x_by_sorted = false, y_by_sorted = false;  // MoeRows::Sorted
};

// The columns of a MoE plan's tiles, rows as gpu_matmul_experts_rows documents.
inline Columns plan_columns(const MoePlan& plan, MoeRows x_rows, int64_t pairs_per_x_row, MoeRows y_rows) {
    Columns cols;
    cols.tiles = plan.tiles;
    cols.n_tiles = plan.n_tiles;
    cols.sorted = plan.sorted;
    cols.pairs_per_x_row = pairs_per_x_row;
    cols.x_by_sorted = x_rows == MoeRows::Sorted;
    cols.y_by_sorted = y_rows == MoeRows::Sorted;
    return cols;
}

// The tile of block y: false when the block has nothing to do (beyond the plan's tile count).
__device__ __forceinline__ bool tile_of(const Columns& cols, int tile_width, int64_t& matrix, int64_t& first,
                                        int64_t& count) {
    if (cols.tiles) {
        if (static_cast<int32_t>(blockIdx.y) >= *cols.n_tiles) return false;
        const int32_t* tile = cols.tiles + 3 * blockIdx.y;
        matrix = tile[0], first = tile[1], count = tile[2];
    } else {
        matrix = cols.matrix, first = static_cast<int64_t>(blockIdx.y) * tile_width;
        count = min(static_cast<int64_t>(tile_width), cols.n_cols - first);
    }
    return count > 0;
}

// x row read and y row written for sorted column c.
__device__ __forceinline__ int64_t x_row_of(const Columns& cols, int64_t c) {
    if (cols.x_by_sorted || !cols.sorted) return c;
    return cols.sorted[c] / cols.pairs_per_x_row;
}
__device__ __forceinline__ int64_t y_row_of(const Columns& cols, int64_t c) {
    if (cols.y_by_sorted || !cols.sorted) return c;
    return cols.sorted[c];
}

// Prompt batches: tiles of up to kGpuTiledColumns columns through the shared-memory kernel.
// Needs rows of a multiple of kTiledK values.
constexpr int kTiledK = 64;
bool tiled_matmul_fits(const DeviceWeight& w);
void launch_matmul_tiled(const DeviceWeight& w, const float* x, float* y, const Columns& cols, int64_t grid_y,
                         GpuContext& ctx);
// The same tiles on tensor cores (ops_matmul_tensor_cores.cu); false, and nothing queued, where
// gpu_tiled_matmul_f16 says no.
bool launch_matmul_tensor_cores(const DeviceWeight& w, const float* x, float* y, const Columns& cols, int64_t grid_y,
                                GpuContext& ctx);

// The same tiles on int8 tensor cores with int8 activations (ops_matmul_mmq.cu); false, and
// nothing queued, where gpu_prompt_takes_q8 says no or the weight's type has no int8 unpacking.
bool launch_matmul_mmq(const DeviceWeight& w, const GpuQ8Rows& xq, float* y, const Columns& cols, int64_t grid_y,
                       GpuContext& ctx);

// Decode and small batches with int8 activations (ops_matvec_q8.cu): tiles of up to
// kGpuMatmulColumns columns, as the float row-per-warp kernel.
// one_column: every tile holds one column (one-token steps), which takes a leaner kernel.
void launch_matvec_q8(const DeviceWeight& w, const GpuQ8Rows& xq, float* y, const Columns& cols, int64_t grid_y,
                      bool one_column, GpuContext& ctx);

}  // namespace strata::gpu
