// cpu_rope and cpu_rope_qk (backend/cpu/ops.h): the rotation HF transformers applies (inv_freq =
// base^(−2i/d), theta = position · inv_freq; neighbours (2i, 2i+1) paired in the Normal style, the
// two halves (i, i + d/2) in Neox), evaluated here in double; only the first rope_dims of each head
// turn. And q and k rotated together are, bit for bit, what two separate calls give.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/ops.h"

namespace strata {
namespace {

std::vector<float> random_rows(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

TEST(CpuRope, RotatesAsTheHfFormula) {
    for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
        const RopeParams p{style, 16, 12, 10000.0f};  // 12 of 16 values turn
        const int64_t n_tokens = 3, n_head = 2;
        const std::vector<int32_t> positions = {0, 7, 4099};
        const std::vector<float> x = random_rows(static_cast<size_t>(n_tokens * n_head * p.head_dim), 3);
        std::vector<float> got = x;
        cpu_rope(got.data(), n_tokens, n_head, p, positions.data());
        const int64_t half = p.rope_dims / 2;
        for (int64_t t = 0; t < n_tokens; ++t) {
            for (int64_t h = 0; h < n_head; ++h) {
                const size_t row = static_cast<size_t>((t * n_head + h) * p.head_dim);
                for (int64_t i = 0; i < half; ++i) {
                    const double theta = positions[static_cast<size_t>(t)] * std::pow(10000.0, -2.0 * i / p.rope_dims);
                    const size_t a = row + static_cast<size_t>(style == RopeStyle::Normal ? 2 * i : i);
                    const size_t b = row + static_cast<size_t>(style == RopeStyle::Normal ? 2 * i + 1 : i + half);
                    EXPECT_NEAR(got[a], x[a] * std::cos(theta) - x[b] * std::sin(theta), 1e-5) << "token " << t << " pair " << i;
                    EXPECT_NEAR(got[b], x[a] * std::sin(theta) + x[b] * std::cos(theta), 1e-5) << "token " << t << " pair " << i;
                }
                for (int64_t d = p.rope_dims; d < p.head_dim; ++d)
                    EXPECT_EQ(got[row + static_cast<size_t>(d)], x[row + static_cast<size_t>(d)]) << "unrotated value moved";
            }
        }
    }
}

TEST(CpuRope, QkTogetherSameBitsAsSeparately) {
    for (RopeStyle style : {RopeStyle::Normal, RopeStyle::Neox}) {
        const RopeParams p{style, 8, 8, 1e6f};
        const int64_t n_tokens = 4, n_head_q = 4, n_head_k = 2;
        const std::vector<int32_t> positions = {5, 6, 100, 31999};
        std::vector<float> q = random_rows(static_cast<size_t>(n_tokens * n_head_q * p.head_dim), 11);
        std::vector<float> k = random_rows(static_cast<size_t>(n_tokens * n_head_k * p.head_dim), 12);
        std::vector<float> q_alone = q, k_alone = k;
        cpu_rope(q_alone.data(), n_tokens, n_head_q, p, positions.data());
        cpu_rope(k_alone.data(), n_tokens, n_head_k, p, positions.data());
        cpu_rope_qk(q.data(), n_head_q, k.data(), n_head_k, n_tokens, p, positions.data());
        for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(q[i]), std::bit_cast<uint32_t>(q_alone[i])) << "q " << i;
        for (size_t i = 0; i < k.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(k[i]), std::bit_cast<uint32_t>(k_alone[i])) << "k " << i;
    }
}

}  // namespace
}  // namespace strata
