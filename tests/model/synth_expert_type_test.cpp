// `strata synth --expert-type`: the routed experts take the asked type, whether Strata has a
// quantizer for it (Q2_0) or writes random valid blocks scaled to the asked spread (the
// i-quants), and the model runs with sane values either way; a type synth cannot write is
// refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "model/gpu/gpu_model.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "model/synth.h"
#include "quant/traits.h"
#include "support/scratch.h"

namespace strata {
namespace {

class SynthExpertType : public ::testing::TestWithParam<TensorType> {};

TEST_P(SynthExpertType, ExpertsTakeTheTypeAndTheModelRuns) {
    const TensorType type = GetParam();
    SynthSpec spec;  // the tiny preset: 256 wide, 8 experts
    spec.n_layers = 2;
    spec.type_expert_gate_up = spec.type_expert_down = type;
    test::ScratchDir dir;
    const std::string path = dir.path("m.gguf");
    ASSERT_TRUE(write_synth_model(spec, nullptr, path, nullptr));
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.is_ok()) << file.status().message();
    for (const char* name : {"blk.1.ffn_gate_exps.weight", "blk.1.ffn_up_exps.weight", "blk.1.ffn_down_exps.weight"}) {
        const GgufTensorInfo* t = file->tensor(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->type, type) << name;
    }
    // The experts' values have the spread of the other matrices (1/sqrt(fan-in)), not the random
    // blocks' own: within a factor of two of 1/16 for the 256-wide gate.
    const GgufTensorInfo* gate = file->tensor("blk.0.ffn_gate_exps.weight");
    std::vector<float> row(static_cast<size_t>(gate->ne[0]));
    double sum_sq = 0;
    const int64_t rows = 64;
    for (int64_t r = 0; r < rows; ++r) {
        quant_traits(type).dequantize_row(file->tensor_data(*gate) + static_cast<uint64_t>(r) * (gate->n_bytes / gate->rows()),
                                          row.data(), gate->ne[0]);
        for (float v : row) sum_sq += double(v) * v;
    }
    const double rms = std::sqrt(sum_sq / double(rows * gate->ne[0]));
    EXPECT_GT(rms, 1.0 / 32);
    EXPECT_LT(rms, 1.0 / 8);

    auto model = load_model_on(*file, ComputeOptions{});
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const int64_t n = 16;
    std::vector<int32_t> ids(n), pos(n);
    std::iota(ids.begin(), ids.end(), 40);
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    KvCache kv = (*model)->make_kv_cache(n);
    std::vector<float> logits(static_cast<size_t>((*model)->config().n_vocab));
    (*model)->forward(Batch{ids.data(), pos.data(), n, 0}, kv, logits.data(), LogitsFor::Last, ctx);
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
}

INSTANTIATE_TEST_SUITE_P(Types, SynthExpertType,
                         ::testing::Values(TensorType::Q2_0, TensorType::NVFP4, TensorType::IQ2_XXS, TensorType::IQ3_S,
                                           TensorType::IQ4_XS),
                         [](const auto& p) { return std::string(tensor_type_name(p.param)); });

TEST(SynthExpertTypeRefusal, ATypeSynthCannotWriteIsNamed) {
    SynthSpec spec;
    spec.n_layers = 1;
    spec.type_expert_gate_up = TensorType::IQ1_M;
    test::ScratchDir dir;
    const Status s = write_synth_model(spec, nullptr, dir.path("m.gguf"), nullptr);
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("IQ1_M"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace strata
