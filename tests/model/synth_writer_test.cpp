// write_synth_files, the writer behind `strata synth --preset qwen3.8-flash-next`: float tensors
// take the asked distribution (routers skewed by --router-skew, uniform ranges such as ssm_a's),
// the same plan and seed give the same bytes, and a plan a quantized type cannot hold is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <vector>

#include "gguf/reader.h"
#include "model/synth_writer.h"
#include "support/scratch.h"

namespace strata {
namespace {

SynthFile one_tensor(SynthTensor t) {
    SynthFile f;
    f.metadata.emplace_back("general.architecture", GgufValue::make_string("test"));
    f.tensors.push_back(std::move(t));
    return f;
}

std::vector<float> read_f32(const std::string& path, const std::string& name) {
    auto f = GgufFile::open(path);
    EXPECT_TRUE(f) << f.status().message();
    if (!f) return {};
    const GgufTensorInfo* t = f->tensor(name);
    const float* v = reinterpret_cast<const float*>(f->tensor_data(*t));
    return std::vector<float>(v, v + t->n_elements);
}

// With skew s, the expert ranked r has its router row scaled by (r+1)^-s: sorted by size, the
// rows' RMS fall as 1/(r+1) for s = 1 (within sampling noise of 512 values a row).
TEST(SynthWriter, RouterRowsFollowTheSkew) {
    test::ScratchDir dir;
    const uint64_t cols = 512, rows = 16;
    ASSERT_TRUE(write_synth_files({one_tensor({"r", TensorType::F32, {cols, rows}, SynthFill::Router, 0.0f, 1.0f})},
                                  {dir.path("r.gguf")}, {.seed = 3, .router_skew = 1.0}, nullptr));
    const std::vector<float> v = read_f32(dir.path("r.gguf"), "r");
    std::vector<double> rms;
    for (uint64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (uint64_t c = 0; c < cols; ++c) s += double(v[r * cols + c]) * v[r * cols + c];
        rms.push_back(std::sqrt(s / cols));
    }
    std::sort(rms.rbegin(), rms.rend());
    for (uint64_t r = 0; r < rows; ++r) EXPECT_NEAR(rms[r] * double(r + 1), 1.0, 0.15) << r;
}

TEST(SynthWriter, UniformValuesStayInTheirRange) {
    test::ScratchDir dir;
    ASSERT_TRUE(write_synth_files({one_tensor({"a", TensorType::F32, {48}, SynthFill::Uniform, -16.0f, -1.0f})},
                                  {dir.path("a.gguf")}, {}, nullptr));
    for (float x : read_f32(dir.path("a.gguf"), "a")) {
        EXPECT_GE(x, -16.0f);
        EXPECT_LE(x, -1.0f);
    }
}

TEST(SynthWriter, TheSamePlanAndSeedGiveTheSameBytes) {
    test::ScratchDir dir;
    const SynthFile f = one_tensor({"w", TensorType::Q4_K, {256, 64}, SynthFill::Gaussian, 0.0f, 0.1f});
    ASSERT_TRUE(write_synth_files({f}, {dir.path("1.gguf")}, {.seed = 9}, nullptr));
    ASSERT_TRUE(write_synth_files({f}, {dir.path("2.gguf")}, {.seed = 9}, nullptr));
    ASSERT_TRUE(write_synth_files({f}, {dir.path("3.gguf")}, {.seed = 10}, nullptr));
    auto bytes = [&](const char* name) {
        std::ifstream in(dir.path(name), std::ios::binary);
        return std::vector<char>(std::istreambuf_iterator<char>(in), {});
    };
    EXPECT_EQ(bytes("1.gguf"), bytes("2.gguf"));
    EXPECT_NE(bytes("1.gguf"), bytes("3.gguf"));
}

TEST(SynthWriter, AQuantizedTensorTakesNoUniformValues) {
    test::ScratchDir dir;
    const Status s = write_synth_files({one_tensor({"w", TensorType::Q8_0, {32, 2}, SynthFill::Uniform, 1.0f, 2.0f})},
                                       {dir.path("w.gguf")}, {}, nullptr);
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("tensor w"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace strata
