// The GPU kernels' warp and block reductions (src/backend/gpu/kernels/reductions.inc) run on the
// CPU with an emulated 64-lane wavefront: the gfx906 (MI50/MI60) path, which no machine here
// has. The fragment is the one the kernels compile; here every GPU thread of a block is a CPU
// thread, shfl_xor exchanges values through a block-wide barrier, and __syncthreads is that
// barrier too. Each reduction must give every thread the exact result (small integers: no
// rounding) for blocks of one to sixteen wavefronts — the sizes the kernels launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace strata::test::wave64 {

// ---- the emulated device --------------------------------------------------------------------
struct Dim3 {
    unsigned x = 0;
};
thread_local Dim3 threadIdx;  // NOLINT: the names the fragment uses
Dim3 blockDim;

// One block in flight at a time; every emulated GPU thread meets at the barrier.
struct Block {
    std::unique_ptr<std::barrier<>> sync;
    std::vector<float> exchange;  // shfl_xor's mailbox, one slot per thread
};
Block block;

inline void __syncthreads() { block.sync->arrive_and_wait(); }

namespace lanes {
constexpr int kWarpSize = 64;
// Every thread of the block calls it at the same point (as on the device, where the whole
// wavefront executes it together): publish, wait, read the partner's value, wait again.
inline float shfl_xor(float v, int lane_mask) {
    const unsigned me = threadIdx.x;
    const unsigned warp_base = me / kWarpSize * kWarpSize;
    const unsigned partner = warp_base + ((me % kWarpSize) ^ static_cast<unsigned>(lane_mask));
    block.exchange[me] = v;
    __syncthreads();
    const float got = block.exchange[partner];
    __syncthreads();
    return got;
}
}  // namespace lanes

#define __device__
#define __forceinline__ inline
#include "backend/gpu/kernels/reductions.inc"
#undef __device__
#undef __forceinline__

// Runs `body(thread)` on `threads` CPU threads as one block; collects each thread's result.
std::vector<float> run_block(unsigned threads, const std::function<float(unsigned)>& body) {
    blockDim.x = threads;
    block.sync = std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(threads));
    block.exchange.assign(threads, 0.0f);
    std::vector<float> out(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            threadIdx.x = t;
            out[t] = body(t);
        });
    }
    for (auto& th : pool) th.join();
    return out;
}

float value_of(unsigned t) { return static_cast<float>(static_cast<int>(t * 7 % 23) - 11); }

class Wave64Reductions : public ::testing::TestWithParam<unsigned> {};

TEST_P(Wave64Reductions, WarpSumAndMaxReachEveryLaneOfItsWavefront) {
    const unsigned threads = GetParam();
    const std::vector<float> sums = run_block(threads, [](unsigned t) { return warp_sum(value_of(t)); });
    const std::vector<float> maxes = run_block(threads, [](unsigned t) { return warp_max(value_of(t)); });
    for (unsigned t = 0; t < threads; ++t) {
        const unsigned base = t / 64 * 64;
        float sum = 0.0f, best = -1e30f;
        for (unsigned l = base; l < base + 64; ++l) sum += value_of(l), best = std::max(best, value_of(l));
        ASSERT_EQ(sums[t], sum) << "thread " << t;
        ASSERT_EQ(maxes[t], best) << "thread " << t;
    }
}

TEST_P(Wave64Reductions, BlockSumAndMaxReachEveryThread) {
    const unsigned threads = GetParam();
    std::vector<float> shared(32);  // kMaxWarpsPerBlock in kernels/common.cuh
    float sum = 0.0f, best = -1e30f;
    for (unsigned t = 0; t < threads; ++t) sum += value_of(t), best = std::max(best, value_of(t));
    const std::vector<float> sums = run_block(threads, [&](unsigned t) { return block_sum(value_of(t), shared.data()); });
    const std::vector<float> maxes = run_block(threads, [&](unsigned t) { return block_max(value_of(t), shared.data()); });
    for (unsigned t = 0; t < threads; ++t) {
        ASSERT_EQ(sums[t], sum) << "thread " << t;
        ASSERT_EQ(maxes[t], best) << "thread " << t;
    }
}

// 64: one wavefront; 256 and 512: the kernels' usual blocks; 1024: sixteen wavefronts, the most.
INSTANTIATE_TEST_SUITE_P(BlockSizes, Wave64Reductions, ::testing::Values(64u, 256u, 512u, 1024u));

}  // namespace strata::test::wave64
