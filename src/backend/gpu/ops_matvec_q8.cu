// Matrix × a few activation rows with int8 activations (gpu_ops.h: gpu_quantize_q8 and the
// GpuQ8Rows overloads of gpu_matmul*). Decode reads every weight once per token, so its speed is
// the speed of reading weights; the float kernel of ops_matmul.cu unpacks each quant to a float
// and multiplies it with a float activation, which costs more instructions and activation traffic
// per weight byte than the memory system delivers weight bytes. Here the activations are
// quantized once per op input (blocks of 32, as the CPU's Q8_0) and each group of lanes computes
// one output row with dot4_i8 on the packed weights (kernels/q8_dot.cuh). Rows shorter than a
// warp's worth of units take narrower lane groups, so every lane has work.
// CPU reference: backend/cpu/matmul.cpp, which quantizes activations the same way for its dot
// kernels; tests/gpu/op_parity_q8_test.cpp compares both with an exact product of the same int8
// activations.
#include <cmath>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/matmul_columns.cuh"
#include "backend/gpu/kernels/q8_dot.cuh"

namespace strata::gpu {

namespace {

constexpr int kQuantizeBlock = 256;
constexpr int kMatvecBlock = 128;  // threads; rows per block = kMatvecBlock / lanes per row

// One 32-value block per 32 consecutive threads (half a wavefront on wave64: the reductions use
// lane masks below 32, so they stay within the block's lanes).
__global__ void quantize_q8_kernel(const float* x, int64_t n_in, int8_t* q, float* ds) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t r = blockIdx.y;
    const bool in = i < n_in;  // n_in is a multiple of 32: a 32-lane group is all in or all out
    const float v = in ? x[r * n_in + i] : 0.0f;
    float amax = fabsf(v);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, vendor::shfl_xor(amax, off));
    const float d = amax / 127.0f;
    const int qv = d > 0.0f ? static_cast<int>(roundf(v / d)) : 0;
    int sum = qv;
#pragma unroll
    for (int off = 16; off > 0; off /= 2) sum += vendor::shfl_xor(sum, off);
    if (!in) return;
    q[r * n_in + i] = static_cast<int8_t>(qv);
    if (i % 32 == 0) {
        float2* out = reinterpret_cast<float2*>(ds) + (r * n_in + i) / 32;
        *out = make_float2(d, d * static_cast<float>(sum));
    }
}

// kLanes lanes per output row; each lane takes units lane, lane + kLanes, ... and the group's
// partial sums meet through shuffles (masks below kLanes stay within the group).
template <TensorType T, int kLanes>
__global__ void matvec_q8_kernel(const uint8_t* w, uint64_t matrix_bytes, uint64_t row_bytes, int64_t n_in, int64_t n_out,
                                 GpuQ8Rows xq, float* y, Columns cols) {
    using Dot = Q8Dot<T>;
    constexpr int kCols = kGpuMatmulColumns;
    const int lane = static_cast<int>(threadIdx.x) % kLanes;
    const int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x / kLanes) + threadIdx.x / kLanes;
    int64_t matrix, first, count;
    if (!tile_of(cols, kCols, matrix, first, count)) return;  // the whole block
    // Rows past the end still run (on the last row) so every lane joins the shuffles.
    const bool valid = o < n_out;
    const int64_t row_index = valid ? o : n_out - 1;

    const int8_t* xin[kCols];
    const float* dsin[kCols];
    int64_t yrow[kCols];
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
        const int64_t c = first + min(static_cast<int64_t>(j), count - 1);
        const int64_t xr = x_row_of(cols, c);
        xin[j] = xq.q + xr * n_in;
        dsin[j] = xq.ds + xr * (n_in / 16);  // two floats per 32 values
        yrow[j] = y_row_of(cols, c);
    }
    const uint8_t* row = w + static_cast<uint64_t>(matrix) * matrix_bytes + static_cast<uint64_t>(row_index) * row_bytes;
    const int64_t units = n_in / Dot::kUnitValues;
    float acc[kCols] = {};
    for (int64_t u = lane; u < units; u += kLanes) {
        const typename Dot::Unit unit = Dot::load(row, u);
#pragma unroll
        for (int j = 0; j < kCols; ++j) {
            if (j >= count) break;
            acc[j] += Dot::dot(unit, xin[j], dsin[j], u);
        }
    }
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
        if (j >= count) break;  // the same for the whole block
        float s = acc[j];
#pragma unroll
        for (int off = kLanes / 2; off > 0; off /= 2) s += vendor::shfl_xor(s, off);
        if (lane == 0 && valid) y[yrow[j] * n_out + o] = s;
    }
}

int unit_values(TensorType type) {
    int values = 0;
    dispatch_q8_weight_type(type, [&](auto tag) { values = Q8Dot<decltype(tag)::value>::kUnitValues; });
    return values;
}

// The narrowest lane group (8, 16 or 32) that gives every lane at least one unit of the row.
int lanes_for(int64_t units) { return units >= 32 ? 32 : units >= 16 ? 16 : 8; }

}  // namespace

bool gpu_matvec_takes_q8(const DeviceWeight& w) {
    const int values = unit_values(w.type);
    return values > 0 && w.ne[0] % values == 0;
}

namespace {
uint64_t q8_quant_bytes(int64_t n_rows, int64_t n_in) { return (static_cast<uint64_t>(n_rows * n_in) + 255) / 256 * 256; }
}  // namespace

uint64_t gpu_q8_bytes(int64_t n_rows, int64_t n_in) {
    return q8_quant_bytes(n_rows, n_in) + static_cast<uint64_t>(n_rows * (n_in / 32)) * 2 * sizeof(float);
}

GpuQ8Rows gpu_q8_view(void* buffer, int64_t n_rows, int64_t n_in) {
    STRATA_CHECK(n_in % 32 == 0 && n_rows > 0, "int8 activations: rows must be a positive number of 32-value blocks");
    auto* base = static_cast<uint8_t*>(buffer);
    GpuQ8Rows rows;
    rows.q = reinterpret_cast<int8_t*>(base);
    rows.ds = reinterpret_cast<float*>(base + q8_quant_bytes(n_rows, n_in));
    rows.n_in = n_in;
    return rows;
}

void gpu_quantize_q8_rows(const float* x, int64_t first, int64_t n, const GpuQ8Rows& out, GpuContext& ctx) {
    if (n == 0) return;
    const int64_t n_in = out.n_in;
    const dim3 grid(grid_for(n_in, kQuantizeBlock), static_cast<unsigned>(n));
    quantize_q8_kernel<<<grid, kQuantizeBlock, 0, stream_of(ctx)>>>(x + first * n_in, n_in,
                                                                   const_cast<int8_t*>(out.q) + first * n_in,
                                                                   const_cast<float*>(out.ds) + first * (n_in / 16));
    STRATA_GPU_LAUNCHED();
}

GpuQ8Rows gpu_quantize_q8(const float* x, int64_t n_rows, int64_t n_in, int scratch_slot, GpuContext& ctx) {
    const GpuQ8Rows rows = gpu_q8_view(ctx.scratch(scratch_slot, gpu_q8_bytes(n_rows, n_in)), n_rows, n_in);
    gpu_quantize_q8_rows(x, 0, n_rows, rows, ctx);
    return rows;
}

void launch_matvec_q8(const DeviceWeight& w, const GpuQ8Rows& xq, float* y, const Columns& cols, int64_t grid_y,
                      GpuContext& ctx) {
    STRATA_CHECK(xq.n_in == w.ne[0], "int8 activations of another width than the weight's rows");
    const int lanes = lanes_for(w.ne[0] / unit_values(w.type));
    const dim3 grid(grid_for(w.ne[1], kMatvecBlock / lanes), static_cast<unsigned>(grid_y));
    const uint64_t matrix_bytes = w.matrix_stride();
    dispatch_q8_weight_type(w.type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        const auto s = stream_of(ctx);
        if (lanes == 32) matvec_q8_kernel<T, 32><<<grid, kMatvecBlock, 0, s>>>(w.data, matrix_bytes, w.row_bytes, w.ne[0], w.ne[1], xq, y, cols);
        else if (lanes == 16) matvec_q8_kernel<T, 16><<<grid, kMatvecBlock, 0, s>>>(w.data, matrix_bytes, w.row_bytes, w.ne[0], w.ne[1], xq, y, cols);
        else matvec_q8_kernel<T, 8><<<grid, kMatvecBlock, 0, s>>>(w.data, matrix_bytes, w.row_bytes, w.ne[0], w.ne[1], xq, y, cols);
    });
    STRATA_GPU_LAUNCHED();
}

}  // namespace strata::gpu
