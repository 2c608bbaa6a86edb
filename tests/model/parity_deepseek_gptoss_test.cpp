// Logits of the CPU engine against HF transformers' float32 logits for DeepSeek-V3 ("deepseek2":
// MLA, grouped sigmoid routing, shared experts) and gpt-oss (sinks, sliding window, YaRN,
// clamped SwiGLU experts) — the same check and band as parity_test.cpp: the whole prompt as one
// batch and token by token through the KV cache, NMSE < 1e-5, top-1 on all but at most one position.
#include <gtest/gtest.h>

#include <string>

#include "core/file.h"
#include "core/thread_pool.h"
#include "model/parity.h"
#include "support/testdata.h"

namespace strata {
namespace {

class DeepseekGptOssParity : public ::testing::TestWithParam<std::string> {};

TEST_P(DeepseekGptOssParity, MatchesTransformersLogits) {
    const std::string name = GetParam();
    const std::string model_path = test::testdata_path("models/" + name + ".gguf");
    const std::string ref_path = test::testdata_path("models/" + name + ".ref.gguf");
    STRATA_SKIP_IF_MISSING(model_path);
    STRATA_SKIP_IF_MISSING(ref_path);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    for (bool one_by_one : {false, true}) {
        auto report = run_parity(model_path, ref_path, one_by_one ? 1 : 0, pool);
        ASSERT_TRUE(report) << report.status().message();
        SCOPED_TRACE(one_by_one ? "token by token" : "one batch");
        EXPECT_LT(report->nmse, 1e-5) << name;
        EXPECT_GE(report->top1_agree, report->n_tokens - 1) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, DeepseekGptOssParity, ::testing::Values("deepseek3", "gptoss"));

}  // namespace
}  // namespace strata
