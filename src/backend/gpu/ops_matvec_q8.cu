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
#include <cstdlib>
#include <cstring>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/matmul_columns.cuh"
#include "backend/gpu/kernels/q8_dot.cuh"
#include "backend/gpu/kernels/q8_quantize.cuh"

namespace strata::gpu {

namespace {

constexpr int kQuantizeBlock = 256;
constexpr int kMatvecBlock = 128;  // threads; rows per block = kMatvecBlock / lanes per row

// One 32-value block per 32 consecutive threads (kernels/q8_quantize.cuh).
__global__ void quantize_q8_kernel(const float* x, int64_t n_in, int8_t* q, float* ds) {
    vendor::wait_for_previous_kernel();
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    const int64_t r = blockIdx.y;
    const bool in = i < n_in;  // n_in is a multiple of 32: a 32-lane group is all in or all out
    quantize_q8_value(in ? x[r * n_in + i] : 0.0f, in, q + r * n_in, reinterpret_cast<float2*>(ds) + r * (n_in / 32), i);
}

// One launch's products (MatvecJob): up to three weights that read the same activations, each
// with its own rows of blocks (grid x from first_block on) and output; or, in swiglu mode, one
// gate weight and its up twin (same type and shape) giving silu(gate · x) · (up · x).
struct MatvecPart {
    const uint8_t* w = nullptr;
    const uint8_t* w_up = nullptr;
    uint64_t matrix_bytes = 0, up_matrix_bytes = 0, row_bytes = 0;
    int64_t n_out = 0;
    TensorType type = TensorType::Q8_0;
    float* y = nullptr;
    unsigned first_block = 0;
};
constexpr int kMaxParts = 3;
struct MatvecJob {
    MatvecPart part[kMaxParts];
    int n_parts = 0;
};

// A lane group's output from its lanes' partial sums (every lane of the group gets it): the sum,
// or in swiglu mode silu(gate sum) · up sum, as gpu_swiglu.
template <int kLanes, bool kSwiglu> __device__ __forceinline__ float group_result(float acc, float acc_up) {
#pragma unroll
    for (int off = kLanes / 2; off > 0; off /= 2) acc += vendor::shfl_xor(acc, off);
    if constexpr (kSwiglu) {
#pragma unroll
        for (int off = kLanes / 2; off > 0; off /= 2) acc_up += vendor::shfl_xor(acc_up, off);
        acc = acc / (1.0f + expf(-acc)) * acc_up;
    }
    return acc;
}

// The rows of one part for block `block` of it: kLanes lanes per output row; each lane takes
// units lane, lane + kLanes, ... and the group's partial sums meet through shuffles (masks below
// kLanes stay within the group). kCols: columns a tile may hold, kGpuMatmulColumns or 1 (a
// one-token step: the kernel then keeps one accumulator, and its lower register count lets more
// warps wait on memory at once).
template <TensorType T, int kLanes, bool kSwiglu, int kCols>
__device__ __forceinline__ void matvec_rows(const MatvecPart& part, unsigned block, int64_t n_in, const GpuQ8Rows& xq,
                                            const Columns& cols) {
    using Dot = Q8Dot<T>;
    const int lane = static_cast<int>(threadIdx.x) % kLanes;
    const int64_t o = block * static_cast<int64_t>(blockDim.x / kLanes) + threadIdx.x / kLanes;
    int64_t matrix, first, count;
    if (!tile_of(cols, kCols, matrix, first, count)) return;  // the whole block
    count = min(count, static_cast<int64_t>(kCols));  // 1-column kernels run only where tiles hold one
    // Rows past the end still run (on the last row) so every lane joins the shuffles.
    const bool valid = o < part.n_out;
    const int64_t row_index = valid ? o : part.n_out - 1;

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
    const uint64_t row_offset = static_cast<uint64_t>(row_index) * part.row_bytes;
    const uint8_t* row = part.w + static_cast<uint64_t>(matrix) * part.matrix_bytes + row_offset;
    const uint8_t* row_up = kSwiglu ? part.w_up + static_cast<uint64_t>(matrix) * part.up_matrix_bytes + row_offset : nullptr;
    const int64_t units = n_in / Dot::kUnitValues;
    float acc[kCols] = {}, acc_up[kCols] = {};
    for (int64_t u = lane; u < units; u += kLanes) {
        const typename Dot::Unit unit = Dot::load(row, u);
#pragma unroll
        for (int j = 0; j < kCols; ++j) {
            if (j >= count) break;
            acc[j] += Dot::dot(unit, xin[j], dsin[j], u);
        }
        if constexpr (kSwiglu) {
            const typename Dot::Unit unit_up = Dot::load(row_up, u);
#pragma unroll
            for (int j = 0; j < kCols; ++j) {
                if (j >= count) break;
                acc_up[j] += Dot::dot(unit_up, xin[j], dsin[j], u);
            }
        }
    }
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
        if (j >= count) break;  // the same for the whole block
        const float s = group_result<kLanes, kSwiglu>(acc[j], acc_up[j]);
        if (lane == 0 && valid) part.y[yrow[j] * part.n_out + o] = s;
    }
}

// The part whose rows this block computes (parts own consecutive runs of blocks).
__device__ __forceinline__ const MatvecPart& part_of_block(const MatvecJob& job) {
    int p = 0;
    for (int i = 1; i < job.n_parts; ++i) {
        if (blockIdx.x >= job.part[i].first_block) p = i;
    }
    return job.part[p];
}

// The part of this block, then its format's rows (a branch the whole block takes alike).
template <int kLanes, bool kSwiglu, int kCols>
__global__ void matvec_q8_kernel(MatvecJob job, int64_t n_in, GpuQ8Rows xq, Columns cols) {
    vendor::wait_for_previous_kernel();
    const MatvecPart& part = part_of_block(job);
    const unsigned block = blockIdx.x - part.first_block;
    using T = TensorType;
    switch (part.type) {  // the formats of dispatch_q8_weight_type (a host function)
        case T::Q4_0: matvec_rows<T::Q4_0, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q4_1: matvec_rows<T::Q4_1, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q5_0: matvec_rows<T::Q5_0, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q5_1: matvec_rows<T::Q5_1, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q8_0: matvec_rows<T::Q8_0, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q4_K: matvec_rows<T::Q4_K, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q5_K: matvec_rows<T::Q5_K, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q6_K: matvec_rows<T::Q6_K, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::IQ4_NL: matvec_rows<T::IQ4_NL, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::MXFP4: matvec_rows<T::MXFP4, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::NVFP4: matvec_rows<T::NVFP4, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q1_0: matvec_rows<T::Q1_0, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        case T::Q2_0: matvec_rows<T::Q2_0, kLanes, kSwiglu, kCols>(part, block, n_in, xq, cols); break;
        default: break;  // gpu_matvec_takes_q8 keeps other formats out
    }
}

// One format known at compile time, for one-column jobs whose parts all have it (the q/k/v job of
// a model whose v differs takes the kernel above): without the switch over every format, the
// kernel's registers are its own format's (ptxas, sm_90: Q4_K 42 plain / 61 swiglu, Q6_K 56 / 64,
// against 59 / 72 for the switch), so more blocks fit an SM.
template <TensorType T, int kLanes, bool kSwiglu>
__global__ void matvec_q8_typed_kernel(MatvecJob job, int64_t n_in, GpuQ8Rows xq, Columns cols) {
    vendor::wait_for_previous_kernel();
    const MatvecPart& part = part_of_block(job);
    matvec_rows<T, kLanes, kSwiglu, 1>(part, blockIdx.x - part.first_block, n_in, xq, cols);
}

int unit_values(TensorType type) {
    int values = 0;
    dispatch_q8_weight_type(type, [&](auto tag) { values = Q8Dot<decltype(tag)::value>::kUnitValues; });
    return values;
}

// The narrowest lane group (8, 16 or 32) that gives every lane at least one unit of the row; or,
// for one-column steps, the narrowest in which no lane takes two units (a lane's second unit is a
// second trip to memory): the expert down projection's rows of 12 Q6_K units then take 16 lanes,
// not 8. Measured on the H200, tg128 of the synthetic Qwen3-30B-A3B, two runs of alternated
// rounds: 358.0-358.7 against 356.0-357.9 tok/s, and 360.6-361.2 against 359.9-360.5.
int lanes_for(int64_t units, bool one_column) {
    if (one_column) return units > 16 ? 32 : units > 8 ? 16 : 8;
    return units >= 32 ? 32 : units >= 16 ? 16 : 8;
}



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
    launch_chained(ctx, quantize_q8_kernel, grid, kQuantizeBlock, 0, x + first * n_in, n_in,
                   const_cast<int8_t*>(out.q) + first * n_in, const_cast<float*>(out.ds) + first * (n_in / 16));
}

GpuQ8Rows gpu_quantize_q8(const float* x, int64_t n_rows, int64_t n_in, int scratch_slot, GpuContext& ctx) {
    const GpuQ8Rows rows = gpu_q8_view(ctx.scratch(scratch_slot, gpu_q8_bytes(n_rows, n_in)), n_rows, n_in);
    gpu_quantize_q8_rows(x, 0, n_rows, rows, ctx);
    return rows;
}

namespace {

// (Taking two units per round in one-column steps, so that a lane's loads are in flight
// together, was measured slower: tg128 322 against 346, the registers it needs cost occupancy.)
template <bool kSwiglu, int kCols>
void launch_kernel(int lanes, dim3 grid, const MatvecJob& job, int64_t n_in, const GpuQ8Rows& xq, const Columns& cols,
                   const GpuContext& ctx) {
    const auto kernel = lanes == 32   ? matvec_q8_kernel<32, kSwiglu, kCols>
                        : lanes == 16 ? matvec_q8_kernel<16, kSwiglu, kCols>
                                      : matvec_q8_kernel<8, kSwiglu, kCols>;
    launch_chained(ctx, kernel, grid, kMatvecBlock, 0, job, n_in, xq, cols);
}

// One-column jobs of one format take matvec_q8_typed_kernel unless GpuTuning::typed_matvec is off
// (for timing studies). Measured on the H200, tg128 of the synthetic
// Qwen3-30B-A3B: 345.5-347.7 tok/s with the all-format kernel, 357.9-360.3 typed (three
// alternated rounds, bench/results/2026-11-30-typed-matvec).

// (Staging a block's rows in shared memory with 16-byte loads before the lane groups read them
// was measured slower: tg128 320 against 357, one run of three alternated rounds.)
template <TensorType T, bool kSwiglu>
void launch_typed(int lanes, dim3 grid, const MatvecJob& job, int64_t n_in, const GpuQ8Rows& xq, const Columns& cols,
                  const GpuContext& ctx) {
    const auto kernel = lanes == 32   ? matvec_q8_typed_kernel<T, 32, kSwiglu>
                        : lanes == 16 ? matvec_q8_typed_kernel<T, 16, kSwiglu>
                                      : matvec_q8_typed_kernel<T, 8, kSwiglu>;
    launch_chained(ctx, kernel, grid, kMatvecBlock, 0, job, n_in, xq, cols);
}

// Whether every part of the job has the first part's format.
bool one_format(const MatvecJob& job) {
    for (int i = 1; i < job.n_parts; ++i) {
        if (job.part[i].type != job.part[0].type) return false;
    }
    return true;
}

// Queues a job over the parts' rows (lane groups sized by the first part's row). one_column: every
// tile holds one column (a one-token step).
void launch_job(MatvecJob& job, int64_t n_in, bool swiglu, bool one_column, const GpuQ8Rows& xq, const Columns& cols,
                int64_t grid_y, GpuContext& ctx) {
    STRATA_CHECK(xq.n_in == n_in, "int8 activations of another width than the weight's rows");
    const int lanes = lanes_for(n_in / unit_values(job.part[0].type), one_column);
    const int rows_per_block = kMatvecBlock / lanes;
    unsigned blocks = 0;
    for (int i = 0; i < job.n_parts; ++i) {
        job.part[i].first_block = blocks;
        blocks += grid_for(job.part[i].n_out, rows_per_block);
    }
    const dim3 grid(blocks, static_cast<unsigned>(grid_y));
    constexpr int kWide = kGpuMatmulColumns;
    if (one_column && ctx.tuning().typed_matvec && one_format(job)) {
        const bool launched = dispatch_q8_weight_type(job.part[0].type, [&](auto tag) {
            constexpr TensorType T = decltype(tag)::value;
            if (swiglu) launch_typed<T, true>(lanes, grid, job, n_in, xq, cols, ctx);
            else launch_typed<T, false>(lanes, grid, job, n_in, xq, cols, ctx);
        });
        if (launched) return;
    }
    if (swiglu) {
        if (one_column) launch_kernel<true, 1>(lanes, grid, job, n_in, xq, cols, ctx);
        else launch_kernel<true, kWide>(lanes, grid, job, n_in, xq, cols, ctx);
    } else {
        if (one_column) launch_kernel<false, 1>(lanes, grid, job, n_in, xq, cols, ctx);
        else launch_kernel<false, kWide>(lanes, grid, job, n_in, xq, cols, ctx);
    }
}

MatvecPart part_of(const DeviceWeight& w, float* y) {
    MatvecPart p;
    p.w = w.data;
    p.matrix_bytes = w.matrix_stride();
    p.row_bytes = w.row_bytes;
    p.n_out = w.ne[1];
    p.type = w.type;
    p.y = y;
    return p;
}

bool same_shape(const DeviceWeight& a, const DeviceWeight& b) {
    return a.type == b.type && a.ne[0] == b.ne[0] && a.ne[1] == b.ne[1] && a.row_bytes == b.row_bytes;
}

// A swiglu job, when gate and up can share one.
bool swiglu_job(const DeviceWeight& gate, const DeviceWeight& up, float* y, MatvecJob& job) {
    if (!gpu_matvec_takes_q8(gate) || !same_shape(gate, up)) return false;
    job.part[0] = part_of(gate, y);
    job.part[0].w_up = up.data;
    job.part[0].up_matrix_bytes = up.matrix_stride();
    job.n_parts = 1;
    return true;
}

Columns dense_columns(int64_t n_tokens) {
    Columns cols;
    cols.n_cols = n_tokens;
    return cols;
}

int64_t dense_tiles(int64_t n_tokens) { return (n_tokens + kGpuMatmulColumns - 1) / kGpuMatmulColumns; }

}  // namespace

void launch_matvec_q8(const DeviceWeight& w, const GpuQ8Rows& xq, float* y, const Columns& cols, int64_t grid_y,
                      bool one_column, GpuContext& ctx) {
    MatvecJob job;
    job.part[0] = part_of(w, y);
    job.n_parts = 1;
    launch_job(job, w.ne[0], false, one_column, xq, cols, grid_y, ctx);
}

bool gpu_matvec_q8_many(const GpuMatvecOut* outs, int n, const GpuQ8Rows& xq, int64_t n_tokens, GpuContext& ctx) {
    if (n < 1 || n > kMaxParts || n_tokens >= kGpuTiledMinTokens) return false;
    MatvecJob job;
    for (int i = 0; i < n; ++i) {
        const DeviceWeight& w = *outs[i].w;
        if (!w || !gpu_matvec_takes_q8(w) || w.ne[0] != outs[0].w->ne[0] || w.ne[2] * w.ne[3] != 1) return false;
        job.part[i] = part_of(w, outs[i].y);
    }
    job.n_parts = n;
    launch_job(job, outs[0].w->ne[0], false, n_tokens == 1, xq, dense_columns(n_tokens), dense_tiles(n_tokens), ctx);
    return true;
}

bool gpu_matvec_q8_swiglu(const DeviceWeight& gate, const DeviceWeight& up, const GpuQ8Rows& xq, int64_t n_tokens,
                          float* y, GpuContext& ctx) {
    MatvecJob job;
    if (n_tokens >= kGpuTiledMinTokens || gate.ne[2] * gate.ne[3] != 1 || !swiglu_job(gate, up, y, job)) return false;
    launch_job(job, gate.ne[0], true, n_tokens == 1, xq, dense_columns(n_tokens), dense_tiles(n_tokens), ctx);
    return true;
}

bool gpu_matvec_q8_swiglu_experts(const DeviceWeight& gate, const DeviceWeight& up, const MoePlan& plan,
                                  const GpuQ8Rows& xq, MoeRows x_rows, int64_t pairs_per_x_row, float* y, MoeRows y_rows,
                                  GpuContext& ctx) {
    MatvecJob job;
    if (plan.tile_columns != kGpuMatmulColumns || !swiglu_job(gate, up, y, job)) return false;
    if (plan.n_pairs == 0 || plan.max_tiles == 0) return true;
    const Columns cols = plan_columns(plan, x_rows, pairs_per_x_row, y_rows);
    launch_job(job, gate.ne[0], true, plan.max_tile_pairs == 1, xq, cols, plan.max_tiles, ctx);
    return true;
}

}  // namespace strata::gpu
