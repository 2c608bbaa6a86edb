// The prompt-batch matmul on int8 tensor cores (CUDA sm_80 and later), MMQ-style: weights stay
// quantized until shared memory, where they are unpacked to signed bytes with a scale (and an
// offset) per 32 values (kernels/mmq_unpack.cuh); activations come quantized per 32 values
// (GpuQ8Rows, as the decode kernels read them). mma.m16n8k32 multiplies the bytes into int32 sums
// per 32-value chunk, which are scaled into f32 accumulators once per chunk:
//   y += d_w·d_x·Σ q_w·q_x + m_w·(d_x·Σq_x)
// The f16 tensor-core kernel (ops_matmul_tensor_cores.cu) dequantizes every weight to a float and
// rounds it to f16 per 64-column tile; here unpacking a nibble is one shift and mask per four
// values, int8 MMAs run at twice the f16 rate, and no activation is rounded to f16 (no overflow
// past 65504). The int8 activation rounding is the one the decode kernels and llama.cpp's MMQ
// already make.
//
// A block of 256 threads owns 128 (or 64) weight rows × up to 64 activation columns (a dense tile
// or a MoE plan's tile) and walks the inputs in stages of 128 values: the next stage's units and
// activation chunks are loaded into registers while the tensor cores work on the current one.
// Each warp owns 32 rows × 32 (or 16) columns; column tiles past the tile's count are skipped,
// which matters for experts whose tiles are half empty.
// STRATA_GPU_MMQ=0 turns this path off (A/B, or to rule it out); STRATA_GPU_MMQ_ROWS=64 or 128
// forces a tile height.
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/matmul_columns.cuh"
#include "backend/gpu/kernels/mma_int8.cuh"
#include "backend/gpu/kernels/mmq_unpack.cuh"

namespace strata::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kCols = kGpuTiledColumns;    // activation columns per block
constexpr int kStage = 128;                // input values per stage
[[maybe_unused]] constexpr int kStageChunks = kStage / 32;  // 32-value chunks per stage
// Byte stride of a staged row: 16-byte aligned, and ldmatrix's eight rows land on distinct banks.
[[maybe_unused]] constexpr int kLd = kStage + 16;
static_assert(kCols == 64, "the warp roles below assume tiles of 64 columns");

// kRows weight rows per block: 128 (each warp 32 rows × 32 columns), or 64 where tall tiles would
// leave the GPU few blocks (each warp 32 rows × 16 columns).
template <TensorType T, int kRows>
__global__ void __launch_bounds__(kThreads, 2)
    matmul_mmq_kernel(const uint8_t* w, uint64_t matrix_bytes, uint64_t row_bytes, int64_t n_in, int64_t n_out,
                      const int8_t* xq, const float* xds, float* y, Columns cols) {
#if STRATA_MMA_INT8
    using F = MmqUnpack<T>;
    using Unit = typename Q8Dot<T>::Unit;
    constexpr int kUnitValues = 32 * F::kChunks;
    constexpr int kUnitsPerRow = kStage / kUnitValues;                        // 4 or 2
    constexpr int kStageUnits = kRows * kUnitsPerRow;
    constexpr int kUnitsPerThread = kStageUnits > kThreads ? kStageUnits / kThreads : 1;
    constexpr int kThreadsPerRow = kUnitsPerRow / kUnitsPerThread;
    constexpr int kRowWarps = kRows / 32, kColWarps = 8 / kRowWarps;
    constexpr int kWarpCols = kCols / kColWarps, kColTiles = kWarpCols / 8;  // 32 and 4, or 16 and 2
    __shared__ __align__(16) int8_t wq[kRows][kLd];
    __shared__ __align__(16) int8_t xs[kCols][kLd];
    __shared__ float2 wsc[kRows][kStageChunks];  // (d, m) per weight chunk
    __shared__ float2 xsc[kCols][kStageChunks];  // (d_x, d_x·Σq_x) per activation chunk
    __shared__ uint16_t wsub[F::kSub16 ? kRows : 1][kStageChunks];  // Q6_K: two int8 scales per chunk

    int64_t matrix, first, count;
    if (!tile_of(cols, kCols, matrix, first, count)) return;  // the whole block leaves
    const int tid = static_cast<int>(threadIdx.x);
    const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;
    const int64_t n_chunks = n_in / 32;

    // Loader roles: kThreadsPerRow threads per weight row (a share of a stage's units each; with
    // 64 rows of 64-value units, half the threads), four per activation column (one chunk each).
    const int w_row = tid / kThreadsPerRow, w_part = tid % kThreadsPerRow;
    const bool w_loader = w_row < kRows;
    const uint8_t* wrow = nullptr;
    if (w_loader && row0 + w_row < n_out) {
        wrow = w + static_cast<uint64_t>(matrix) * matrix_bytes + static_cast<uint64_t>(row0 + w_row) * row_bytes;
    }
    const int x_col = tid / 4, x_chunk = tid % 4;
    const int8_t* xrow = nullptr;
    const float2* xdrow = nullptr;
    if (x_col < count) {
        const int64_t r = x_row_of(cols, first + x_col);
        xrow = xq + r * n_in;
        xdrow = reinterpret_cast<const float2*>(xds) + r * n_chunks;
    }

    Unit units[kUnitsPerThread] = {};
    int4 xv[2];
    float2 xd;
    const auto unit_of = [&](int64_t k0, int i) { return k0 / kUnitValues + w_part * kUnitsPerThread + i; };
    const auto unit_valid = [&](int64_t u) { return wrow != nullptr && u * kUnitValues < n_in; };
    const auto load = [&](int64_t k0) {
#pragma unroll
        for (int i = 0; i < kUnitsPerThread; ++i) {
            const int64_t u = unit_of(k0, i);
            if (unit_valid(u)) units[i] = Q8Dot<T>::load(wrow, u);
        }
        const int64_t c = k0 / 32 + x_chunk;
        if (xrow && c < n_chunks) {
            const int4* p = reinterpret_cast<const int4*>(xrow + 32 * c);
            xv[0] = p[0], xv[1] = p[1];
            xd = xdrow[c];
        } else {
            xv[0] = xv[1] = make_int4(0, 0, 0, 0);
            xd = make_float2(0.0f, 0.0f);
        }
    };
    const auto store = [&](int64_t k0) {
        const int64_t c0 = k0 / 32;
#pragma unroll
        for (int i = 0; i < kUnitsPerThread; ++i) {
            if (!w_loader) break;
            const int64_t u = unit_of(k0, i);
            const bool valid = unit_valid(u);
#pragma unroll
            for (int j = 0; j < F::kChunks; ++j) {
                const int cs = static_cast<int>(F::chunk(u, j) - c0);
                int* dst = reinterpret_cast<int*>(&wq[w_row][32 * cs]);
                if (valid) {
                    F::store(units[i], j, dst);
                    wsc[w_row][cs] = F::scale(units[i], j);
                    if constexpr (F::kSub16) wsub[w_row][cs] = static_cast<uint16_t>(F::sub(units[i], j));
                } else {
                    reinterpret_cast<int4*>(dst)[0] = reinterpret_cast<int4*>(dst)[1] = make_int4(0, 0, 0, 0);
                    wsc[w_row][cs] = make_float2(0.0f, 0.0f);
                    if constexpr (F::kSub16) wsub[w_row][cs] = 0;
                }
            }
        }
        int4* xdst = reinterpret_cast<int4*>(&xs[x_col][32 * x_chunk]);
        xdst[0] = xv[0], xdst[1] = xv[1];
        xsc[x_col][x_chunk] = xd;
    };

    const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int warp_row = 32 * (warp % kRowWarps), warp_col = kWarpCols * (warp / kRowWarps);
    float acc[2][kColTiles][4] = {};
    load(0);
    for (int64_t k0 = 0; k0 < n_in; k0 += kStage) {
        store(k0);
        __syncthreads();
        if (k0 + kStage < n_in) load(k0 + kStage);
        if (warp_col < count) {  // the warp's columns hold something (count is the block's)
#pragma unroll
            for (int c = 0; c < kStageChunks; ++c) {
                int a[2][4];
#pragma unroll
                for (int i = 0; i < 2; ++i) ldmatrix_x4(a[i], &wq[warp_row + 16 * i + lane % 16][32 * c + 16 * (lane / 16)]);
                int b[kColTiles][2];
#pragma unroll
                for (int jp = 0; jp < kColTiles / 2; ++jp) {
                    int r[4] = {0, 0, 0, 0};
                    if (warp_col + 16 * jp < count) {
                        ldmatrix_x4(r, &xs[warp_col + 16 * jp + lane % 8 + 8 * (lane / 16)][32 * c + 16 * ((lane / 8) % 2)]);
                    }
                    b[2 * jp][0] = r[0], b[2 * jp][1] = r[1], b[2 * jp + 1][0] = r[2], b[2 * jp + 1][1] = r[3];
                }
                float2 s_lo[2], s_hi[2];  // (d, m) of rows g and g + 8 of each row tile
                int sub_lo[2] = {0, 0}, sub_hi[2] = {0, 0};
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const int r = warp_row + 16 * i + g;
                    s_lo[i] = wsc[r][c], s_hi[i] = wsc[r + 8][c];
                    if constexpr (F::kSub16) sub_lo[i] = wsub[r][c], sub_hi[i] = wsub[r + 8][c];
                }
#pragma unroll
                for (int j = 0; j < kColTiles; ++j) {
                    if (warp_col + 8 * j >= count) continue;
                    const float2 x0 = xsc[warp_col + 8 * j + 2 * t][c], x1 = xsc[warp_col + 8 * j + 2 * t + 1][c];
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        int s[4] = {0, 0, 0, 0};
                        if constexpr (F::kSub16) {
                            int lo[4] = {0, 0, 0, 0}, hi[4] = {0, 0, 0, 0};
                            mma_k16(lo, a[i][0], a[i][1], b[j][0]);
                            mma_k16(hi, a[i][2], a[i][3], b[j][1]);
                            const int l0 = static_cast<int8_t>(sub_lo[i] & 0xFF), h0 = static_cast<int8_t>(sub_lo[i] >> 8);
                            const int l1 = static_cast<int8_t>(sub_hi[i] & 0xFF), h1 = static_cast<int8_t>(sub_hi[i] >> 8);
                            s[0] = l0 * lo[0] + h0 * hi[0], s[1] = l0 * lo[1] + h0 * hi[1];
                            s[2] = l1 * lo[2] + h1 * hi[2], s[3] = l1 * lo[3] + h1 * hi[3];
                        } else {
                            mma_k32(s, a[i], b[j][0], b[j][1]);
                        }
                        acc[i][j][0] += s_lo[i].x * x0.x * static_cast<float>(s[0]);
                        acc[i][j][1] += s_lo[i].x * x1.x * static_cast<float>(s[1]);
                        acc[i][j][2] += s_hi[i].x * x0.x * static_cast<float>(s[2]);
                        acc[i][j][3] += s_hi[i].x * x1.x * static_cast<float>(s[3]);
                        if constexpr (F::kOffset) {
                            acc[i][j][0] += s_lo[i].y * x0.y, acc[i][j][1] += s_lo[i].y * x1.y;
                            acc[i][j][2] += s_hi[i].y * x0.y, acc[i][j][3] += s_hi[i].y * x1.y;
                        }
                    }
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
        for (int j = 0; j < kColTiles; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int64_t row = row0 + warp_row + 16 * i + g + 8 * (e / 2);
                const int col = warp_col + 8 * j + 2 * t + e % 2;
                if (col < count && row < n_out) y[y_row_of(cols, first + col) * n_out + row] = acc[i][j][e];
            }
        }
    }
#endif
}

// Tall tiles unless they would leave the GPU with few blocks (the k and v projections of a
// prompt: 512 rows × 8 column tiles of 512 tokens are 32 tall blocks on 132 multiprocessors).
bool tall_tiles(int64_t n_out, int64_t grid_y, const GpuContext& ctx) {
    const int forced = ctx.tuning().mmq_rows;  // 64 or 128 forces a height (A/B)
    if (forced == 64 || forced == 128) return forced == 128;
    return 2 * ((n_out + 127) / 128) * grid_y >= ctx.device().multiprocessors;
}

}  // namespace

bool gpu_prompt_takes_q8(const GpuContext& ctx) {
#if defined(__HIP__) || defined(__HIPCC__) || defined(STRATA_GPU_HIP)
    constexpr bool kHasInt8Mma = false;  // no int8 MMA path for HIP yet: prompts take the float kernels
#else
    constexpr bool kHasInt8Mma = true;
#endif
    const std::string& arch = ctx.device().arch;  // "sm_90"
    return kHasInt8Mma && ctx.tuning().mmq && arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 80;
}

bool launch_matmul_mmq(const DeviceWeight& w, const GpuQ8Rows& xq, float* y, const Columns& cols, int64_t grid_y,
                       GpuContext& ctx) {
    if (!gpu_prompt_takes_q8(ctx) || xq.n_in != w.ne[0] || w.ne[0] % 32 != 0) return false;
    const bool tall = tall_tiles(w.ne[1], grid_y, ctx);
    const dim3 grid(grid_for(w.ne[1], tall ? 128 : 64), static_cast<unsigned>(grid_y));
    bool launched = false;
    dispatch_q8_weight_type(w.type, [&](auto tag) {
        constexpr TensorType T = decltype(tag)::value;
        if constexpr (kMmqUnpacks<T>) {
            auto* const kernel = tall ? &matmul_mmq_kernel<T, 128> : &matmul_mmq_kernel<T, 64>;
            // A build for targets before sm_80 reaches this GPU as PTX without the kernel's body.
            int ptx = 0;
            if (!vendor::ok(vendor::kernel_ptx_version(reinterpret_cast<const void*>(kernel), &ptx)) || ptx < 80) return;
            kernel<<<grid, kThreads, 0, stream_of(ctx)>>>(w.data, w.matrix_stride(), w.row_bytes, w.ne[0], w.ne[1],
                                                          xq.q, xq.ds, y, cols);
            STRATA_GPU_LAUNCHED();
            launched = true;
        }
    });
    return launched;
}

}  // namespace strata::gpu
