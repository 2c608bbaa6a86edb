// The row ops a prompt batch splits over the thread pool (backend/cpu/ops.h: cpu_rms_norm and
// cpu_rope_qk with a CpuContext; model/blocks/moe_routing.h: the routed experts' weighted sum)
// give the bits the calling thread alone gives, with batches large enough to be split.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/ops.h"
#include "core/thread_pool.h"

namespace strata {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CpuRowOpsThreads, RmsNormSplitOverThreadsSameBits) {
    ThreadPool pool(ThreadPool::Options{.threads = 4});
    CpuContext ctx(pool);
    // 300 rows of 2048: over the size where the pool takes the rows; 3 rows: the caller alone.
    for (const int64_t rows : {300, 3}) {
        const int64_t n = 2048;
        const std::vector<float> x = random_values(static_cast<size_t>(rows * n), 5);
        const std::vector<float> weight = random_values(static_cast<size_t>(n), 6);
        std::vector<float> alone(x.size()), split(x.size());
        cpu_rms_norm(x.data(), weight.data(), rows, n, 1e-6f, alone.data());
        cpu_rms_norm(x.data(), weight.data(), rows, n, 1e-6f, split.data(), ctx);
        EXPECT_TRUE(same_bits(alone, split)) << rows << " rows";
        // In place, as the q/k norms run.
        std::vector<float> in_place = x;
        cpu_rms_norm(in_place.data(), weight.data(), rows, n, 1e-6f, in_place.data(), ctx);
        EXPECT_TRUE(same_bits(alone, in_place)) << rows << " rows in place";
    }
}

TEST(CpuRowOpsThreads, RopeSplitOverThreadsSameBits) {
    ThreadPool pool(ThreadPool::Options{.threads = 3});
    CpuContext ctx(pool);
    for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
        const RopeParams p{style, 128, 64, 1e6f};
        for (const int64_t n_tokens : {200, 2}) {
            const int64_t n_head_q = 8, n_head_k = 2;
            std::vector<int32_t> positions(static_cast<size_t>(n_tokens));
            for (int64_t t = 0; t < n_tokens; ++t) positions[static_cast<size_t>(t)] = static_cast<int32_t>(17 + 3 * t);
            const std::vector<float> q = random_values(static_cast<size_t>(n_tokens * n_head_q * p.head_dim), 7);
            const std::vector<float> k = random_values(static_cast<size_t>(n_tokens * n_head_k * p.head_dim), 8);
            std::vector<float> q_alone = q, k_alone = k, q_split = q, k_split = k;
            cpu_rope_qk(q_alone.data(), n_head_q, k_alone.data(), n_head_k, n_tokens, p, positions.data());
            cpu_rope_qk(q_split.data(), n_head_q, k_split.data(), n_head_k, n_tokens, p, positions.data(), ctx);
            EXPECT_TRUE(same_bits(q_alone, q_split)) << n_tokens << " tokens";
            EXPECT_TRUE(same_bits(k_alone, k_split)) << n_tokens << " tokens";
            EXPECT_FALSE(same_bits(q, q_split)) << "nothing turned";
        }
    }
}

}  // namespace
}  // namespace strata
