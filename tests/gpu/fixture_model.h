#pragma once
// The base of GPU tests over the fixture model the test parameter names (model_fixture_stem: models/NAME.gguf
// of the test data or a project fixture): skipped without a GPU or without the file; `file` is the opened model and `cpu` a
// two-thread CPU context for the forward passes.
//
//   class GpuMyTest : public test::GpuFixtureModel {};
//   TEST_P(GpuMyTest, Works) { auto m = load_model_on(*file, options); ... m->forward(..., cpu); }
//   INSTANTIATE_TEST_SUITE_P(Models, GpuMyTest, ::testing::Values("qwen3moe"));
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "backend/cpu/cpu_context.h"
#include "model/gpu/gpu_model.h"
#include "gguf/reader.h"
#include "support/testdata.h"

namespace strata::test {

class GpuFixtureModel : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        const std::string why = gpu_unavailable_reason();
        if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
        const std::string path = model_fixture_stem(GetParam()) + ".gguf";
        STRATA_SKIP_IF_MISSING(path);
        auto opened = GgufFile::open(path);
        ASSERT_TRUE(opened) << opened.status().message();
        file.emplace(std::move(*opened));
    }

    std::optional<GgufFile> file;
    ThreadPool pool{ThreadPool::Options{.threads = 2}};
    CpuContext cpu{pool};
};

}  // namespace strata::test
