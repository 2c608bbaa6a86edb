// The DeltaNet CPU ops (backend/cpu/ssm_ops.h) against direct formulas: the convolution against
// a sum over a zero-padded sequence, the delta-rule step against the matrix form written out
// with explicit temporaries, the norms against their definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/ssm_ops.h"

namespace strata {
namespace {

std::vector<float> random_vector(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Feeding a sequence in pieces through the history gives the causal convolution of the whole
// zero-padded sequence, whatever the piece sizes (smaller and larger than the history).
TEST(SsmOps, CausalConvMatchesPaddedConvolutionAcrossPieces) {
    const int64_t n = 11, ch = 5, kernel = 4;
    const auto x = random_vector(n * ch, 1), w = random_vector(ch * kernel, 2);
    std::vector<float> history((kernel - 1) * ch, 0.0f), out(n * ch);
    int64_t done = 0;
    for (int64_t piece : {1, 2, 5, 3}) {
        cpu_causal_conv1d_silu(x.data() + done * ch, piece, ch, w.data(), kernel, history.data(), out.data() + done * ch);
        done += piece;
    }
    ASSERT_EQ(done, n);
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t c = 0; c < ch; ++c) {
            double sum = 0.0;
            for (int64_t j = 0; j < kernel; ++j) {
                const int64_t s = t - (kernel - 1) + j;
                if (s >= 0) sum += static_cast<double>(w[c * kernel + j]) * x[s * ch + c];
            }
            EXPECT_NEAR(out[t * ch + c], silu(sum), 1e-5) << "t " << t << " c " << c;
        }
    }
    // The history holds the last kernel-1 inputs.
    for (int64_t i = 0; i < (kernel - 1) * ch; ++i) EXPECT_EQ(history[i], x[(n - kernel + 1) * ch + i]);
}

TEST(SsmOps, L2NormGivesUnitRows) {
    auto x = random_vector(3 * 16, 3, 4.0f);
    const auto orig = x;
    cpu_l2_norm(x.data(), 3, 16, 1e-6f);
    for (int r = 0; r < 3; ++r) {
        double ss = 0.0, oss = 0.0;
        for (int i = 0; i < 16; ++i) ss += x[r * 16 + i] * x[r * 16 + i], oss += orig[r * 16 + i] * orig[r * 16 + i];
        EXPECT_NEAR(ss, oss / (oss + 1e-6), 1e-5);
        for (int i = 0; i < 16; ++i) EXPECT_NEAR(x[r * 16 + i], orig[r * 16 + i] / std::sqrt(oss + 1e-6), 1e-6);
    }
}

// S' = e^g S + k (beta (v − (e^g S)ᵀ k))ᵀ, out = S'ᵀ q, over several steps with d_k ≠ d_v.
TEST(SsmOps, GatedDeltaStepMatchesMatrixForm) {
    const int64_t dk = 6, dv = 4;
    std::vector<float> state(dk * dv, 0.0f);
    std::vector<double> ref(dk * dv, 0.0);
    for (uint32_t step = 0; step < 5; ++step) {
        const auto q = random_vector(dk, 10 + step), k = random_vector(dk, 20 + step), v = random_vector(dv, 30 + step);
        const float g = -0.3f * static_cast<float>(step + 1), beta = 0.25f + 0.1f * static_cast<float>(step);
        std::vector<float> out(dv);
        cpu_gated_delta_step(state.data(), q.data(), k.data(), v.data(), g, beta, dk, dv, out.data());

        for (auto& s : ref) s *= std::exp(static_cast<double>(g));
        std::vector<double> delta(dv);
        for (int64_t j = 0; j < dv; ++j) {
            double kv = 0.0;
            for (int64_t i = 0; i < dk; ++i) kv += ref[i * dv + j] * k[i];
            delta[j] = beta * (v[j] - kv);
        }
        for (int64_t i = 0; i < dk; ++i) {
            for (int64_t j = 0; j < dv; ++j) ref[i * dv + j] += k[i] * delta[j];
        }
        for (int64_t j = 0; j < dv; ++j) {
            double o = 0.0;
            for (int64_t i = 0; i < dk; ++i) o += ref[i * dv + j] * q[i];
            EXPECT_NEAR(out[j], o, 1e-5) << "step " << step << " j " << j;
        }
        for (int64_t i = 0; i < dk * dv; ++i) EXPECT_NEAR(state[i], ref[i], 1e-5);
    }
}

TEST(SsmOps, GatedRmsNormMatchesDefinition) {
    const int64_t rows = 3, n = 8;
    const auto x = random_vector(rows * n, 4), z = random_vector(rows * n, 5), w = random_vector(n, 6);
    std::vector<float> out(rows * n);
    cpu_gated_rms_norm(x.data(), z.data(), w.data(), rows, n, 1e-6f, out.data());
    for (int64_t r = 0; r < rows; ++r) {
        double ms = 0.0;
        for (int64_t i = 0; i < n; ++i) ms += x[r * n + i] * x[r * n + i] / static_cast<double>(n);
        for (int64_t i = 0; i < n; ++i) {
            const double want = x[r * n + i] / std::sqrt(ms + 1e-6) * w[i] * silu(z[r * n + i]);
            EXPECT_NEAR(out[r * n + i], want, 1e-5);
        }
    }
}

TEST(SsmOps, SoftplusFollowsPytorch) {
    EXPECT_NEAR(softplus(0.0f), std::log(2.0), 1e-7);
    EXPECT_NEAR(softplus(-30.0f), std::exp(-30.0), 1e-15);
    EXPECT_EQ(softplus(25.0f), 25.0f);  // above the threshold: identity
    EXPECT_NEAR(softplus(3.0f), std::log1p(std::exp(3.0)), 1e-6);
}

}  // namespace
}  // namespace strata
