// Element-wise and per-row ops (gpu_ops.h); CPU references in backend/cpu/ops.cpp.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/kernels/common.cuh"
#include "backend/gpu/kernels/norm_row.cuh"
#include "backend/gpu/kernels/rope.cuh"

namespace strata::gpu {

namespace {

constexpr int kRowBlock = 256;   // threads per row for per-row reductions
constexpr int kElemBlock = 256;  // threads per block for element-wise ops

__global__ void rms_norm_kernel(const float* x, const float* weight, int64_t n, float eps, float* out, GpuQ8Rows q8) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    const float* xr = x + blockIdx.x * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
    norm_row(xr, weight, n, eps, sum, shared, out + blockIdx.x * n, q8);
}

// One thread per rotated pair of one head of one token. theta in double, as the CPU reference
// and HF's inv_freq: at positions in the tens of thousands a float angle is off by ~1e-3 rad.
__global__ void rope_kernel(float* x, int64_t n_head, GpuRope p, const int32_t* positions) {
    vendor::wait_for_previous_kernel();
    const int64_t half = p.rope_dims / 2;
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;  // pair within the head
    const int64_t h = blockIdx.y, t = blockIdx.z;
    if (i >= half) return;
    float c, s;
    rope_cos_sin(p, positions[t], i, c, s);
    float* head = x + (t * n_head + h) * p.head_dim;
    const int64_t a = p.neox ? i : 2 * i, b = p.neox ? i + half : 2 * i + 1;
    const float x0 = head[a], x1 = head[b];
    head[a] = x0 * c - x1 * s;
    head[b] = x0 * s + x1 * c;
}

__global__ void swiglu_kernel(float* gate, const float* up, int64_t n) {
    vendor::wait_for_previous_kernel();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

__global__ void empty_kernel() { vendor::wait_for_previous_kernel(); }

__global__ void add_kernel(float* x, const float* y, int64_t n) {
    vendor::wait_for_previous_kernel();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        x[i] += y[i];
    }
}

__global__ void write_words_kernel(uint32_t* dst, const uint32_t* src, int64_t n) {
    vendor::wait_for_previous_kernel();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        dst[i] = src[i];
    }
}

// One block copies both spans (either side may be host memory seen through its mapping), then
// raises the host's word: every thread's stores are made visible to the system before the block
// meets, and only then does one thread store the value.
__global__ void __launch_bounds__(1024) write_words_then_flag_kernel(uint32_t* dst0, const uint32_t* src0, int64_t n0,
                                                                   uint32_t* dst1, const uint32_t* src1, int64_t n1,
                                                                   volatile uint32_t* word, uint32_t value) {
    vendor::wait_for_previous_kernel();
    for (int64_t i = threadIdx.x; i < n0; i += blockDim.x) dst0[i] = src0[i];
    for (int64_t i = threadIdx.x; i < n1; i += blockDim.x) dst1[i] = src1[i];
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) *word = value;
}

// One thread polls the host's word through its mapping until the counter there reaches `value`
// (compared modulo 2^32), so that the kernels queued after it start only then. A counter that
// never comes is a bug of the host: after about 30 s (2^36 clock ticks) the kernel traps, which
// the host's next runtime call reports, where spinning on would hang the process.
__global__ void wait_host_word_kernel(const volatile uint32_t* word, uint32_t value) {
    vendor::wait_for_previous_kernel();
    const long long start = clock64();
    while (static_cast<int32_t>(*word - value) < 0) {
        if (clock64() - start > (1ll << 36)) vendor::trap();
    }
    __threadfence_system();
}

__global__ void probe_wait_then_answer_kernel(volatile uint32_t* words, uint32_t value) {
    vendor::wait_for_previous_kernel();
    const long long start = clock64();
    bool seen = false;
    while (!(seen = words[0] == value) && clock64() - start < (1ll << 31)) {
    }
    words[1] = seen ? value : 0u;
    __threadfence_system();
}

// Tagged words (core/tagged_words.h): one block writes each word of both spans as the pair
// (tag << 32) | word by one 8-byte store, with no fence and no flag: the host polls the pairs.
__global__ void __launch_bounds__(1024) write_words_tagged_kernel(volatile unsigned long long* pairs, const uint32_t* src0,
                                                                  int64_t n0, const uint32_t* src1, int64_t n1,
                                                                  uint32_t tag) {
    vendor::wait_for_previous_kernel();
    const unsigned long long high = static_cast<unsigned long long>(tag) << 32;
    for (int64_t i = threadIdx.x; i < n0; i += blockDim.x) pairs[i] = high | src0[i];
    for (int64_t i = threadIdx.x; i < n1; i += blockDim.x) pairs[n0 + i] = high | src1[i];
}

// One block: thread 0 polls `start` until the counter there reaches `start_value` (the writer's
// word that it has begun; null: none), then every thread polls its own pairs until each holds
// `tag`, and writes their words to dst. Polling only once the writer has begun keeps the bus
// free of these reads for the rest of the wait. Traps after about 30 s, as wait_host_word_kernel.
__global__ void __launch_bounds__(1024) await_tagged_words_kernel(const volatile unsigned long long* pairs, int64_t n,
                                                                  uint32_t tag, const volatile uint32_t* start,
                                                                  uint32_t start_value, uint32_t* dst) {
    vendor::wait_for_previous_kernel();
    const long long t0 = clock64();
    if (start != nullptr && threadIdx.x == 0) {
        while (static_cast<int32_t>(*start - start_value) < 0) {
            if (clock64() - t0 > (1ll << 36)) vendor::trap();
        }
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        unsigned long long v = pairs[i];
        while (static_cast<uint32_t>(v >> 32) != tag) {
            if (clock64() - t0 > (1ll << 36)) vendor::trap();
            v = pairs[i];
        }
        dst[i] = static_cast<uint32_t>(v);
    }
}

__global__ void add_bias_kernel(float* x, const float* bias, int64_t n_rows, int64_t n) {
    vendor::wait_for_previous_kernel();
    const int64_t total = n_rows * n;
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        x[i] += bias[i % n];
    }
}

__global__ void softmax_kernel(float* x, int64_t n) {
    vendor::wait_for_previous_kernel();
    __shared__ float shared[kMaxWarpsPerBlock];
    float* xr = x + blockIdx.x * n;
    float m = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, xr[i]);
    m = block_max(m, shared);
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float e = expf(xr[i] - m);
        xr[i] = e;
        sum += e;
    }
    const float inv = 1.0f / block_sum(sum, shared);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) xr[i] *= inv;
}

// Enough blocks to fill the device for grid-stride loops, no more.
unsigned elementwise_grid(int64_t n, const GpuContext& ctx) {
    const int64_t cap = static_cast<int64_t>(ctx.device().multiprocessors) * 8;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(cap, (n + kElemBlock - 1) / kElemBlock)));
}

struct SumParts {
    const float* part[kGpuMaxSumParts];
};

__global__ void sum_parts_kernel(float* out, SumParts parts, int n_parts, int64_t count) {
    vendor::wait_for_previous_kernel();
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        float s = parts.part[0][i];
        for (int q = 1; q < n_parts; ++q) s += parts.part[q][i];
        out[i] = s;
    }
}

}  // namespace

void gpu_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out, GpuContext& ctx,
                  const GpuQ8Rows* q8) {
    if (n_rows == 0) return;
    launch_chained(ctx, rms_norm_kernel, static_cast<unsigned>(n_rows), kRowBlock, 0, x, weight, n, eps, out,
                   q8_target(q8, n));
}

void gpu_rope(float* x, int64_t n_tokens, int64_t n_head, const GpuRope& p, const int32_t* positions, GpuContext& ctx) {
    STRATA_CHECK(p.rope_dims % 2 == 0 && p.rope_dims <= p.head_dim, "gpu_rope: rope_dims must be even and at most head_dim");
    if (n_tokens == 0 || p.rope_dims == 0) return;
    const int block = 64;
    const dim3 grid(grid_for(p.rope_dims / 2, block), static_cast<unsigned>(n_head), static_cast<unsigned>(n_tokens));
    launch_chained(ctx, rope_kernel, grid, block, 0, x, n_head, p, positions);
}

void gpu_swiglu(float* gate, const float* up, int64_t n, GpuContext& ctx) {
    if (n == 0) return;
    launch_chained(ctx, swiglu_kernel, elementwise_grid(n, ctx), kElemBlock, 0, gate, up, n);
}

void gpu_empty_launches(int n, GpuContext& ctx) {
    for (int i = 0; i < n; ++i) launch_chained(ctx, empty_kernel, 1, 32, 0);
}

void gpu_add(float* x, const float* y, int64_t n, GpuContext& ctx) {
    if (n == 0) return;
    launch_chained(ctx, add_kernel, elementwise_grid(n, ctx), kElemBlock, 0, x, y, n);
}

void gpu_copy_words(void* dst, const void* src, uint64_t bytes, GpuContext& ctx) {
    STRATA_CHECK(bytes % 4 == 0 && reinterpret_cast<uintptr_t>(dst) % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 4 == 0,
                 "gpu_copy_words: whole, aligned 4-byte words");
    const auto n = static_cast<int64_t>(bytes / 4);
    if (n == 0) return;
    launch_chained(ctx, write_words_kernel, elementwise_grid(n, ctx), kElemBlock, 0, static_cast<uint32_t*>(dst),
                   static_cast<const uint32_t*>(src), n);
}

void gpu_copy_words_then_flag(void* dst0, const void* src0, uint64_t bytes0, void* dst1, const void* src1,
                              uint64_t bytes1, uint32_t* word_view, uint32_t value, GpuContext& ctx) {
    for (const auto& [dst, src, bytes] : {std::tuple{dst0, src0, bytes0}, std::tuple{dst1, src1, bytes1}}) {
        STRATA_CHECK(bytes % 4 == 0 && reinterpret_cast<uintptr_t>(dst) % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 4 == 0,
                     "gpu_copy_words_then_flag: whole, aligned 4-byte words");
    }
    launch_chained(ctx, write_words_then_flag_kernel, 1, 1024, 0, static_cast<uint32_t*>(dst0),
                   static_cast<const uint32_t*>(src0), static_cast<int64_t>(bytes0 / 4), static_cast<uint32_t*>(dst1),
                   static_cast<const uint32_t*>(src1), static_cast<int64_t>(bytes1 / 4), word_view, value);
}

void gpu_copy_words_tagged(uint64_t* pairs_view, const void* src0, uint64_t bytes0, const void* src1, uint64_t bytes1,
                           uint32_t tag, GpuContext& ctx) {
    STRATA_CHECK(tag != 0, "gpu_copy_words_tagged: tag 0 is what a cleared buffer holds");
    for (const auto& [src, bytes] : {std::pair{src0, bytes0}, std::pair{src1, bytes1}}) {
        STRATA_CHECK(bytes % 4 == 0 && reinterpret_cast<uintptr_t>(src) % 4 == 0,
                     "gpu_copy_words_tagged: whole, aligned 4-byte words");
    }
    STRATA_CHECK(reinterpret_cast<uintptr_t>(pairs_view) % 8 == 0, "gpu_copy_words_tagged: pairs 8-byte aligned");
    launch_chained(ctx, write_words_tagged_kernel, 1, 1024, 0, reinterpret_cast<unsigned long long*>(pairs_view),
                   static_cast<const uint32_t*>(src0), static_cast<int64_t>(bytes0 / 4), static_cast<const uint32_t*>(src1),
                   static_cast<int64_t>(bytes1 / 4), tag);
}

void gpu_await_tagged_words(const uint64_t* pairs_view, uint64_t n, uint32_t tag, const uint32_t* start_view,
                            uint32_t start_value, void* dst, GpuContext& ctx) {
    STRATA_CHECK(tag != 0, "gpu_await_tagged_words: tag 0 is what a cleared buffer holds");
    STRATA_CHECK(reinterpret_cast<uintptr_t>(pairs_view) % 8 == 0 && reinterpret_cast<uintptr_t>(dst) % 4 == 0,
                 "gpu_await_tagged_words: pairs 8-byte and words 4-byte aligned");
    if (n == 0) return;
    launch_chained(ctx, await_tagged_words_kernel, 1, 1024, 0, reinterpret_cast<const unsigned long long*>(pairs_view),
                   static_cast<int64_t>(n), tag, start_view, start_value, static_cast<uint32_t*>(dst));
}

void gpu_wait_host_word(const uint32_t* word_view, uint32_t value, GpuContext& ctx) {
    launch_chained(ctx, wait_host_word_kernel, 1, 1, 0, word_view, value);
}

void gpu_probe_wait_then_answer(uint32_t* words_view, uint32_t value, GpuContext& ctx) {
    launch_chained(ctx, probe_wait_then_answer_kernel, 1, 1, 0, words_view, value);
}

void gpu_add_bias(float* x, const float* bias, int64_t n_rows, int64_t n, GpuContext& ctx) {
    if (n_rows * n == 0) return;
    launch_chained(ctx, add_bias_kernel, elementwise_grid(n_rows * n, ctx), kElemBlock, 0, x, bias, n_rows, n);
}

void gpu_softmax(float* x, int64_t n_rows, int64_t n, GpuContext& ctx) {
    if (n_rows == 0) return;
    launch_chained(ctx, softmax_kernel, static_cast<unsigned>(n_rows), kRowBlock, 0, x, n);
}

void gpu_sum_parts(float* out, const float* const* parts, int n_parts, int64_t count, GpuContext& ctx) {
    STRATA_CHECK(n_parts >= 1 && n_parts <= kGpuMaxSumParts, "gpu_sum_parts: 1 to 8 parts");
    if (count == 0) return;
    SumParts p{};
    for (int q = 0; q < n_parts; ++q) p.part[q] = parts[q];
    launch_chained(ctx, sum_parts_kernel, elementwise_grid(count, ctx), kElemBlock, 0, out, p, n_parts, count);
}

}  // namespace strata::gpu
