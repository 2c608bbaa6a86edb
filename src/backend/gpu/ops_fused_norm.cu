// A block's residual add fused with the next block's RMS norm (gpu_ops.h): gpu_add_rms_norm and
// gpu_moe_combine_rms_norm. Separately, the add writes x and the norm reads it back in a second
// launch; at decode both are launch-bound, so one pass per row halves the launches between the
// blocks. One block per row, of 1024 threads: at decode there is one row, and a block of 256
// spends most of its time walking the row (the MoE combine reads k rows per element). Rows of up
// to 8 × 1024 values are held in registers (norm_row.cuh), so that every load of the row is in
// flight at once: a decode step runs these kernels twice per layer, and each is latency, not
// bandwidth.
#include <utility>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/norm_row.cuh"

namespace strata::gpu {

namespace {

constexpr int kRowBlock = 1024;  // at most kMaxBlock: block_sum's shared array holds its warps

// x += y, then the norm of x. kPer > 0: the row held in registers (norm_row.cuh); 0: walked.
template <int kPer>
__global__ void __launch_bounds__(kRowBlock) add_rms_norm_kernel(float* x, const float* y, const float* weight, int64_t n, float eps, float* out,
                                    GpuQ8Rows q8) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    float* xr = x + blockIdx.x * n;
    const float* yr = y + blockIdx.x * n;
    float sum = 0.0f;
    if constexpr (kPer == 0) {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            const float v = xr[i] + yr[i];
            xr[i] = v;
            sum += v * v;
        }
        norm_row(xr, weight, n, eps, sum, shared, out + blockIdx.x * n, q8);
    } else {
        float v[kPer], w[kPer];
#pragma unroll
        for (int r = 0; r < kPer; ++r) {  // every load first
            const int64_t i = held_index(r);
            v[r] = i < n ? xr[i] + yr[i] : 0.0f;
            w[r] = i < n && weight ? weight[i] : 1.0f;
        }
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
            if (held_index(r) >= n) continue;
            xr[held_index(r)] = v[r];
            sum += v[r] * v[r];
        }
        norm_held_row(v, w, n, eps, sum, shared, out + blockIdx.x * n, q8);
    }
}

// x += addend (if any) + Σ_j weights[j]·expert_out[j], then the norm of x; kPer as above.
template <int kPer>
__global__ void __launch_bounds__(kRowBlock) moe_combine_rms_norm_kernel(const float* expert_out, const float* weights, int64_t k, int64_t n,
                                            float* x, const float* weight, float eps, float* out, GpuQ8Rows q8,
                                            const float* addend) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    const int64_t t = blockIdx.x;
    float* xr = x + t * n;
    const float* add_row = addend ? addend + t * n : nullptr;
    float sum = 0.0f;
    if constexpr (kPer == 0) {
        for (int64_t d = threadIdx.x; d < n; d += blockDim.x) {
            float s = 0.0f;  // the same order as combine_kernel (ops_moe.cu)
            for (int64_t j = 0; j < k; ++j) s += weights[t * k + j] * expert_out[(t * k + j) * n + d];
            const float v = (add_row ? xr[d] + add_row[d] : xr[d]) + s;
            xr[d] = v;
            sum += v * v;
        }
        norm_row(xr, weight, n, eps, sum, shared, out + t * n, q8);
    } else {
        float v[kPer], w[kPer], s[kPer];
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
            const int64_t i = held_index(r);
            const bool in = i < n;
            v[r] = in ? (add_row ? xr[i] + add_row[i] : xr[i]) : 0.0f;
            w[r] = in && weight ? weight[i] : 1.0f;
            s[r] = 0.0f;
        }
        // Experts in the order of the walked form (and combine_kernel); their rows' loads are
        // independent, so an unrolled round has several in flight (fewer rounds for long rows:
        // registers).
        constexpr int kRounds = kPer >= 8 ? 2 : 4;
#pragma unroll kRounds
        for (int64_t j = 0; j < k; ++j) {
            const float wj = weights[t * k + j];
            const float* row = expert_out + (t * k + j) * n;
#pragma unroll
            for (int r = 0; r < kPer; ++r) {
                if (held_index(r) < n) s[r] += wj * row[held_index(r)];
            }
        }
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
            if (held_index(r) >= n) continue;
            v[r] += s[r];
            xr[held_index(r)] = v[r];
            sum += v[r] * v[r];
        }
        norm_held_row(v, w, n, eps, sum, shared, out + t * n, q8);
    }
}

// kernel<kPer> for rows of n values, kPer as held_values_per_thread picks it.
template <template <int> class Kernel, typename... Args>
void launch_row_kernel(int64_t n, unsigned rows, GpuContext& ctx, Args&&... args) {
    switch (held_values_per_thread(n, kRowBlock)) {
        case 1: launch_chained(ctx, Kernel<1>::fn, rows, kRowBlock, 0, std::forward<Args>(args)...); break;
        case 2: launch_chained(ctx, Kernel<2>::fn, rows, kRowBlock, 0, std::forward<Args>(args)...); break;
        case 4: launch_chained(ctx, Kernel<4>::fn, rows, kRowBlock, 0, std::forward<Args>(args)...); break;
        case 8: launch_chained(ctx, Kernel<8>::fn, rows, kRowBlock, 0, std::forward<Args>(args)...); break;
        default: launch_chained(ctx, Kernel<0>::fn, rows, kRowBlock, 0, std::forward<Args>(args)...); break;
    }
}
template <int kPer> struct AddRmsNorm { static constexpr auto fn = add_rms_norm_kernel<kPer>; };
template <int kPer> struct CombineRmsNorm { static constexpr auto fn = moe_combine_rms_norm_kernel<kPer>; };

}  // namespace

void gpu_add_rms_norm(float* x, const float* y, const float* weight, int64_t n_rows, int64_t n, float eps, float* out,
                      GpuContext& ctx, const GpuQ8Rows* q8) {
    if (n_rows == 0) return;
    launch_row_kernel<AddRmsNorm>(n, static_cast<unsigned>(n_rows), ctx, x, y, weight, n, eps, out, q8_target(q8, n));
}

void gpu_moe_combine_rms_norm(const float* expert_out, const float* weights, int64_t n_tokens, int64_t k, int64_t n,
                              float* x, const float* weight, float eps, float* out, GpuContext& ctx,
                              const GpuQ8Rows* q8, const float* addend) {
    if (n_tokens == 0) return;
    launch_row_kernel<CombineRmsNorm>(n, static_cast<unsigned>(n_tokens), ctx, expert_out, weights, k, n, x, weight, eps,
                                      out, q8_target(q8, n), addend);
}

}  // namespace strata::gpu
