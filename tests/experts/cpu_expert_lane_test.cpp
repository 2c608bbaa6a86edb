// The GPU expert tiers' CPU lane arithmetic (experts/cpu_expert_lane.h) on the fixture MoE
// models' real expert tensors: a step's lane of several experts, each with pairs from several
// tokens (a token may have more than one of its k pairs there), gives what computing every pair
// on its own gives — the token's gate and up products, the activation (gpt-oss: its biases and
// clamped SwiGLU), the down product and its bias, weighted and summed in the lane's order. Tokens
// with no pair in the lane stay zero.
#include "experts/cpu_expert_lane.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/ops.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "support/testdata.h"

namespace strata {
namespace {

struct LaneCase {
    std::string model;
    ExpertActivation activation;
};
void PrintTo(const LaneCase& c, std::ostream* os) { *os << c.model; }

// A fixture model's expert layers; the file stays open, since the tensors point into its mapping.
struct FixtureExperts {
    std::unique_ptr<GgufFile> file;
    std::vector<ExpertLayerTensors> layers;
    std::string error;  // why layers is empty
};
FixtureExperts open_fixture(const std::string& path) {
    FixtureExperts f;
    auto file = GgufFile::open(path);
    if (!file) {
        f.error = file.status().message();
        return f;
    }
    f.file = std::make_unique<GgufFile>(std::move(*file));
    auto layers = expert_tensors_from_gguf(*f.file);
    if (!layers) {
        f.error = layers.status().message();
        return f;
    }
    f.layers = std::move(*layers);
    return f;
}

std::string lane_case_name(const ::testing::TestParamInfo<LaneCase>& c) { return c.param.model; }

class CpuExpertLaneTest : public ::testing::TestWithParam<LaneCase> {};

TEST_P(CpuExpertLaneTest, SumsEveryPairComputedAlone) {
    const std::string path = test::testdata_path("models/" + GetParam().model + ".gguf");
    STRATA_SKIP_IF_MISSING(path);
    const FixtureExperts fixture = open_fixture(path);
    ASSERT_FALSE(fixture.layers.empty()) << fixture.error;
    const ExpertLayerTensors& layer = fixture.layers.back();
    const int64_t e = layer.gate.ne[0], ff = layer.gate.ne[1], n_expert = layer.gate.ne[2];
    ASSERT_GE(n_expert, 4);

    // 5 tokens, k = 3: pair p is token p / 3. The lane takes experts 3, 0 and 2 (in that order);
    // token 4 routes to none of them.
    const int64_t n = 5, k = 3;
    const std::vector<int32_t> ids = {3, 0, 1, 2, 3, 1, 0, 1, 2, 1, 3, 1, 1, 1, 1};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f), positive(0.1f, 1.0f);
    std::vector<float> h(static_cast<size_t>(n * e)), weights(ids.size());
    for (float& v : h) v = uniform(rng);
    for (float& w : weights) w = positive(rng);
    const std::vector<int32_t> lane = {3, 0, 2};
    std::vector<std::vector<int32_t>> pairs(static_cast<size_t>(n_expert));
    for (size_t p = 0; p < ids.size(); ++p) {
        if (ids[p] == 0 || ids[p] == 2 || ids[p] == 3) pairs[static_cast<size_t>(ids[p])].push_back(static_cast<int32_t>(p));
    }

    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    std::vector<float> got(static_cast<size_t>(n * e), 99.0f);
    CpuExpertLane math;
    math.compute(layer, GetParam().activation, lane, pairs, k, h.data(), weights.data(), n, e, got.data(), cpu);

    // Each pair alone: one token through one expert.
    std::vector<float> want(static_cast<size_t>(n * e), 0.0f), g(static_cast<size_t>(ff)), u(g.size()), d(static_cast<size_t>(e));
    for (int32_t x : lane) {
        for (int32_t p : pairs[static_cast<size_t>(x)]) {
            const float* ht = h.data() + (p / k) * e;
            std::vector<MatmulJob> gate_up{{&layer.gate, x, ht, 1, g.data()}, {&layer.up, x, ht, 1, u.data()}};
            cpu_matmul_grouped(gate_up, cpu);
            if (layer.gate_bias) cpu_add_bias(g.data(), layer.gate_bias.f32() + x * ff, 1, ff);
            if (layer.up_bias) cpu_add_bias(u.data(), layer.up_bias.f32() + x * ff, 1, ff);
            apply_expert_activation(GetParam().activation, g.data(), u.data(), ff);
            std::vector<MatmulJob> down{{&layer.down, x, g.data(), 1, d.data()}};
            cpu_matmul_grouped(down, cpu);
            if (layer.down_bias) cpu_add_bias(d.data(), layer.down_bias.f32() + x * e, 1, e);
            float* out = want.data() + (p / k) * e;
            for (int64_t i = 0; i < e; ++i) out[i] += weights[static_cast<size_t>(p)] * d[static_cast<size_t>(i)];
        }
    }
    double err = 0, ref = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        ref += want[i] * want[i];
    }
    ASSERT_GT(ref, 0.0);
    EXPECT_LT(err / ref, 1e-10) << "nmse";
    for (int64_t i = 0; i < e; ++i) ASSERT_EQ(got[static_cast<size_t>(4 * e + i)], 0.0f) << "token 4, value " << i;
    for (int64_t t = 0; t < 4; ++t) {
        double norm = 0;
        for (int64_t i = 0; i < e; ++i) norm += std::fabs(got[static_cast<size_t>(t * e + i)]);
        EXPECT_GT(norm, 0.0) << "token " << t;
    }
}

INSTANTIATE_TEST_SUITE_P(Models, CpuExpertLaneTest,
                         ::testing::Values(LaneCase{"qwen3moe", ExpertActivation::SwiGlu},
                                           LaneCase{"gptoss", ExpertActivation::GptOssClampedSwiGlu}),
                         lane_case_name);

TEST(CpuExpertLane, CalibrationMeasuresPositiveCosts) {
    const std::string path = test::testdata_path("models/qwen3moe.gguf");
    STRATA_SKIP_IF_MISSING(path);
    const FixtureExperts fixture = open_fixture(path);
    ASSERT_FALSE(fixture.layers.empty()) << fixture.error;
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    const ExpertLayerTensors& layer = fixture.layers.front();
    const CpuExpertCosts c =
        CpuExpertLane::calibrate(layer, static_cast<uint32_t>(layer.gate.ne[2]), layer.gate.ne[0], cpu);
    EXPECT_GT(c.expert_s, 0.0);
    EXPECT_GE(c.token_s, 0.0);
}

}  // namespace
}  // namespace strata
