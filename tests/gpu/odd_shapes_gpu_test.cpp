// The odd-width grid (tests/support/odd_shapes.h: expert FFNs of 24, 48 and 80, 40 heads and odd
// head counts and widths, a hidden size of 200, vocabularies of 300 and 1000) on the GPU: all
// experts resident against the CPU, and the expert tiers with one cache slot (streamed misses,
// and the CPU lane) against all resident; decode and a prompt batch. A kernel contract a valid
// GGUF can break shows here as an internal error instead of a number. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/nmse.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "model/gpu/gpu_model.h"
#include "model/model.h"
#include "model_logits.h"
#include "runtime/gpu_placement.h"
#include "support/odd_shapes.h"
#include "support/scratch.h"

namespace strata {
namespace {

class OddShapesGpu : public ::testing::TestWithParam<test::OddShape> {};

std::vector<int32_t> grid_tokens(uint32_t n_vocab) {
    std::vector<int32_t> tokens(40);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 37 + 11) % n_vocab);
    return tokens;
}

TEST_P(OddShapesGpu, ResidentMatchesCpuAndOneSlotMatchesResident) {
    const std::string why = gpu_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
    const test::OddShape& shape = GetParam();
    test::ScratchDir dir;
    const std::string path = dir.path(shape.name + ".gguf");
    ASSERT_TRUE(write_synth_model(shape.spec(), nullptr, path, nullptr));
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.status().message();
    auto on_cpu = load_model_on(*file, ComputeOptions{});
    ASSERT_TRUE(on_cpu) << on_cpu.status().message();
    auto resident = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(resident) << shape.name << ": " << resident.status().message();

    const std::vector<int32_t> tokens = grid_tokens(shape.n_vocab);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    for (bool one_by_one : {true, false}) {
        const std::vector<float> want = test::model_logits(**on_cpu, tokens, one_by_one, cpu);
        const std::vector<float> got = test::model_logits(**resident, tokens, one_by_one, cpu);
        // The GPU rounds activations (int8, f16 tiles) where the CPU does not: against
        // transformers the qwen4exp fixture gave 1.7e-6 resident on the GPU and 8.0e-7 on the CPU
        // (bench/results/2026-12-07-qwen4exp-gpu), under the parity limit of 1e-4 used here; a
        // wrong row or head costs order one. The measured value is printed for the device log.
        const double nmse = normalized_mse(got, want);
        std::printf("odd-shapes %s resident GPU vs CPU %s: NMSE %.3e\n", shape.name.c_str(), one_by_one ? "decode" : "batch", nmse);
        EXPECT_LT(nmse, 1e-4) << shape.name << ": resident GPU against the CPU" << (one_by_one ? ", decode" : ", batch");
    }
    for (const char* lane : {"stream", "cpu"}) {
        GpuPlacementRequest req;
        req.expert_slots = 1;
        req.force_tiers = true;
        req.miss_lane = miss_lane_from_name(lane).value();
        req.n_ctx = 256;
        ComputeOptions options{.device = ComputeDevice::Gpu};  // the placement fills in the tiers
        auto placement = place_on_gpu(*file, options, req);
        ASSERT_TRUE(placement) << shape.name << ": " << placement.status().message();
        ASSERT_TRUE(placement->tiered);
        auto tiered = load_model_on(*file, options);
        ASSERT_TRUE(tiered) << shape.name << ": " << tiered.status().message();
        for (bool one_by_one : {true, false}) {
            const std::vector<float> got = test::model_logits(**tiered, tokens, one_by_one, cpu);
            const std::vector<float> want = test::model_logits(**resident, tokens, one_by_one, cpu);
            // As tests/gpu/expert_tiers_narrow_ffn_test.cpp: streamed misses run the resident
            // kernels; the CPU lane quantizes its activations its own way.
            const double bound = std::string(lane) == "cpu" ? 1e-3 : 1e-5;
            const double nmse = normalized_mse(got, want);
            std::printf("odd-shapes %s one slot, %s lane, %s: NMSE %.3e\n", shape.name.c_str(), lane, one_by_one ? "decode" : "batch", nmse);
            EXPECT_LT(nmse, bound)
                << shape.name << ", lane " << lane << (one_by_one ? ", decode" : ", batch");
        }
    }
}

// Heads wider than the GPU attention takes are refused when the model loads, with the way out,
// not at the first step (it was an internal error in gpu_attention).
TEST(OddShapesGpuRefusal, WideHeadsAreRefusedAtLoad) {
    const std::string why = gpu_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
    const test::OddShape shape = test::wide_head_shape();
    test::ScratchDir dir;
    const std::string path = dir.path(shape.name + ".gguf");
    ASSERT_TRUE(write_synth_model(shape.spec(), nullptr, path, nullptr));
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.status().message();
    auto model = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_FALSE(model);
    EXPECT_NE(model.status().message().find("--device cpu"), std::string::npos) << model.status().message();
}

INSTANTIATE_TEST_SUITE_P(Grid, OddShapesGpu, ::testing::ValuesIn(test::odd_shapes()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
}  // namespace strata
