// Logits of the CPU engine against HF transformers' float32 logits (testdata/models/*.ref.gguf),
// for the whole prompt as one batch and token by token. llama.cpp reaches a normalized MSE of
// 9e-7 .. 9e-6 on these models (PROVENANCE.md); we hold ourselves to the same band.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/file.h"
#include "model/model.h"
#include "model/parity.h"
#include "gguf/writer.h"
#include "support/scratch.h"
#include "support/testdata.h"

namespace strata {
namespace {

std::string fixture_stem(const std::string& name) { return test::model_fixture_stem(name); }
std::string fixture_label(const ::testing::TestParamInfo<std::string>& info) { return test::model_fixture_label(info.param); }

class ModelParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelParity, MatchesTransformersLogits) {
    const std::string name = GetParam();
    const std::string model_path = fixture_stem(name) + ".gguf";
    const std::string ref_path = fixture_stem(name) + ".ref.gguf";
    STRATA_SKIP_IF_MISSING(model_path);
    STRATA_SKIP_IF_MISSING(ref_path);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    // Chunks of 5 cross batch boundaries mid-prompt: recurrent state and KV cache must carry.
    for (int64_t chunk : {0, 1, 5}) {
        auto report = run_parity(model_path, ref_path, chunk, pool);
        ASSERT_TRUE(report) << report.status().message();
        SCOPED_TRACE(chunk == 0 ? "one batch" : "chunks of " + std::to_string(chunk));
        EXPECT_LT(report->nmse, 1e-5) << name;
        EXPECT_GE(report->top1_agree, report->n_tokens - 1) << name;
    }
}

// The same with an f16 KV cache (`--kv-type f16`): the rounding of keys and values to half
// precision must keep every model in the same band.
TEST_P(ModelParity, MatchesTransformersLogitsWithAnF16Cache) {
    const std::string name = GetParam();
    const std::string model_path = fixture_stem(name) + ".gguf";
    const std::string ref_path = fixture_stem(name) + ".ref.gguf";
    STRATA_SKIP_IF_MISSING(model_path);
    STRATA_SKIP_IF_MISSING(ref_path);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    const ModelLoader f16_cache = [](const GgufFile& f) -> Result<std::unique_ptr<Model>> {
        STRATA_ASSIGN_OR_RETURN(auto model, Model::load(f));
        model->set_kv_type(KvCacheType::F16);
        return model;
    };
    for (int64_t chunk : {0, 1, 5}) {
        auto report = run_parity(model_path, ref_path, chunk, pool, f16_cache);
        ASSERT_TRUE(report) << report.status().message();
        SCOPED_TRACE(chunk == 0 ? "one batch" : "chunks of " + std::to_string(chunk));
        EXPECT_LT(report->nmse, 1e-5) << name;
        EXPECT_GE(report->top1_agree, report->n_tokens - 1) << name;
    }
}

// Every architecture of the fixtures: Llama family (llama, qwen3, qwen3moe, mixtral), deepseek2
// (MLA, grouped sigmoid routing, shared experts), gpt-oss (sinks, sliding window, YaRN, clamped
// SwiGLU), the gated-DeltaNet hybrids (qwen3next, qwen35moe) and qwen4exp (hyper-connections,
// QSA with block selection, PLE with an EOS inside the prompt: the project's own fixture, and
// one in the outside test data when it has one).
INSTANTIATE_TEST_SUITE_P(Architectures, ModelParity,
                         ::testing::Values("llama", "qwen3", "qwen3moe", "mixtral", "deepseek3", "gptoss", "qwen3next",
                                           "qwen35moe", "qwen4exp", "project:qwen4exp"),
                         fixture_label);

TEST(ModelLoad, UnsupportedArchitectureIsNamed) {
    test::ScratchDir dir;
    GgufWriter w;
    w.set_string("general.architecture", "not-a-real-arch");
    ASSERT_TRUE(w.write(dir.path("m.gguf")));
    auto f = GgufFile::open(dir.path("m.gguf"));
    ASSERT_TRUE(f);
    auto m = Model::load(*f);
    ASSERT_FALSE(m);
    EXPECT_NE(m.status().message().find("architecture \"not-a-real-arch\" is not supported"), std::string::npos)
        << m.status().message();
}

// A vocabulary-only file has the hyper-parameters but no weights: the first missing tensor is named.
TEST(ModelLoad, MissingTensorIsNamed) {
    const std::string path = test::testdata_path("vocab/ggml-vocab-llama-spm.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto f = GgufFile::open(path);
    ASSERT_TRUE(f);
    auto m = Model::load(*f);
    ASSERT_FALSE(m);
    EXPECT_NE(m.status().message().find("tensor token_embd.weight is missing"), std::string::npos) << m.status().message();
}

// A tensor of the wrong shape is reported with both shapes.
TEST(ModelLoad, WrongShapeIsNamed) {
    const std::string src = test::testdata_path("models/qwen3.gguf");
    STRATA_SKIP_IF_MISSING(src);
    auto orig = GgufFile::open(src);
    ASSERT_TRUE(orig);
    test::ScratchDir dir;
    GgufWriter w;
    for (const auto& e : orig->metadata()) w.set(e.key, e.value);
    for (const auto& t : orig->tensors()) {
        std::vector<uint64_t> ne(t.ne, t.ne + t.n_dims);
        if (t.name == "blk.1.attn_q.weight") std::swap(ne[0], ne[1]);
        const uint8_t* d = orig->tensor_data(t);
        ASSERT_TRUE(w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(d, d + t.n_bytes)));
    }
    ASSERT_TRUE(w.write(dir.path("bad.gguf")));
    auto f = GgufFile::open(dir.path("bad.gguf"));
    ASSERT_TRUE(f);
    auto m = Model::load(*f);
    ASSERT_FALSE(m);
    EXPECT_NE(m.status().message().find("tensor blk.1.attn_q.weight: expected shape [64, 128], got [128, 64]"), std::string::npos)
        << m.status().message();
}

}  // namespace
}  // namespace strata
