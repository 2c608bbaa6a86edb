// deepseek4 against transformers (the project's fixture, tests/model/data/deepseek4.*: 5 blocks
// with sliding, CSA + lightning indexer and HCA attention over 160 tokens, hash and score routing,
// MXFP4 routed experts; tools/fixtures/PROVENANCE.md).
//
// The recipe's arithmetic is checked with the experts' exact values: the fixture's MXFP4 experts
// widened to F32, so that every product is f32 as in transformers. The file as shipped runs its
// experts as every MXFP4 model does, against activations rounded to q8_0 blocks (1/254 of a
// block's largest value); that moves the logits by about 1e-9 NMSE, except where an indexer's
// top-k boundary is a near-tie in transformers' own f32 scores (rows 152 and 157 of this prompt,
// relative gaps 8e-5 and 6e-6), which the rounding can flip. llama.cpp's own deepseek4 graph
// flips row 157 too (PROVENANCE.md). An f16 cache (`--kv-type f16`) rounds the K = V rows the
// attention reads by 2^-11: most rows stay near 1e-6, but it flips a layer-2 near-tie at row 62,
// whose change reaches the rows after it through the window and the entries (to 1e-4 .. 7e-2).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "model/parity.h"
#include "quant/traits.h"
#include "support/scratch.h"
#include "support/testdata.h"

namespace strata {
namespace {

const std::string kStem = test::model_fixture_stem("project:deepseek4");

// The fixture with every MXFP4 tensor replaced by its F32 values (the same numbers transformers
// computed with: the generator wrote the dequantized experts back into the model).
std::string widened_copy(const test::ScratchDir& dir) {
    auto orig = GgufFile::open(kStem + ".gguf");
    EXPECT_TRUE(orig) << orig.status().message();
    if (!orig) return "";
    GgufWriter w;
    for (const auto& e : orig->metadata()) w.set(e.key, e.value);
    for (const auto& t : orig->tensors()) {
        const uint8_t* d = orig->tensor_data(t);
        std::vector<uint64_t> ne(t.ne, t.ne + t.n_dims);
        if (t.type != TensorType::MXFP4) {
            EXPECT_TRUE(w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(d, d + t.n_bytes)));
            continue;
        }
        const uint64_t n = t.ne[0], rows = t.n_bytes / tensor_type_info(t.type)->row_bytes(n);
        std::vector<float> values(rows * n);
        for (uint64_t r = 0; r < rows; ++r) {
            quant_traits(t.type).dequantize_row(d + r * tensor_type_info(t.type)->row_bytes(n), values.data() + r * n,
                                                static_cast<int64_t>(n));
        }
        std::vector<uint8_t> bytes(values.size() * sizeof(float));
        std::memcpy(bytes.data(), values.data(), bytes.size());
        EXPECT_TRUE(w.add_tensor(t.name, TensorType::F32, ne, std::move(bytes)));
    }
    const std::string path = dir.path("deepseek4_f32_experts.gguf");
    EXPECT_TRUE(w.write(path));
    return path;
}

TEST(Deepseek4Parity, TheRecipeMatchesTransformersWithExactExperts) {
    STRATA_SKIP_IF_MISSING(kStem + ".gguf");
    test::ScratchDir dir;
    const std::string path = widened_copy(dir);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    for (int64_t chunk : {0, 1, 5}) {
        SCOPED_TRACE(chunk == 0 ? "one batch" : "chunks of " + std::to_string(chunk));
        auto report = run_parity(path, kStem + ".ref.gguf", chunk, pool);
        ASSERT_TRUE(report) << report.status().message();
        EXPECT_LT(report->nmse, 1e-8);  // measured 1.5e-12
        EXPECT_EQ(report->top1_agree, report->n_tokens);
    }
}

// Positions whose NMSE is over `limit`, and the NMSE of the others.
struct Split {
    std::vector<int64_t> over;
    double rest = 0.0;
};
Split split_positions(const ParityReport& r, double limit) {
    Split s;
    double sum = 0.0;
    int64_t n = 0;
    for (int64_t t = 0; t < r.n_tokens; ++t) {
        if (r.token_nmse[static_cast<size_t>(t)] > limit) s.over.push_back(t);
        else sum += r.token_nmse[static_cast<size_t>(t)], ++n;
    }
    s.rest = n ? sum / static_cast<double>(n) : 0.0;
    return s;
}

TEST(Deepseek4Parity, TheShippedFileMatchesExceptAtTheIndexersNearTies) {
    STRATA_SKIP_IF_MISSING(kStem + ".gguf");
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    for (int64_t chunk : {0, 1, 5}) {
        SCOPED_TRACE(chunk == 0 ? "one batch" : "chunks of " + std::to_string(chunk));
        auto report = run_parity(kStem + ".gguf", kStem + ".ref.gguf", chunk, pool);
        ASSERT_TRUE(report) << report.status().message();
        const Split s = split_positions(*report, 1e-5);
        EXPECT_LT(s.rest, 1e-8);  // measured 1.3e-9
        // Only the near-tie rows may be off (the rounding flips them here; other kernels might not).
        for (int64_t t : s.over) EXPECT_TRUE(t == 152 || t == 157) << "row " << t << ": " << report->token_nmse[static_cast<size_t>(t)];
        EXPECT_GE(report->top1_agree, report->n_tokens - 2);
    }
}

TEST(Deepseek4Parity, AnF16CacheStaysCloseBeforeItsFirstFlip) {
    STRATA_SKIP_IF_MISSING(kStem + ".gguf");
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    const ModelLoader f16_cache = [](const GgufFile& f) -> Result<std::unique_ptr<Model>> {
        STRATA_ASSIGN_OR_RETURN(auto model, Model::load(f));
        model->set_kv_type(KvCacheType::F16);
        return model;
    };
    for (int64_t chunk : {0, 1, 5}) {
        SCOPED_TRACE(chunk == 0 ? "one batch" : "chunks of " + std::to_string(chunk));
        auto report = run_parity(kStem + ".gguf", kStem + ".ref.gguf", chunk, pool, f16_cache);
        ASSERT_TRUE(report) << report.status().message();
        for (int64_t t = 0; t < 62; ++t) EXPECT_LT(report->token_nmse[static_cast<size_t>(t)], 1e-5) << "row " << t;
        const Split s = split_positions(*report, 1e-5);
        EXPECT_LE(s.over.size(), 32u);  // measured 23
        EXPECT_GE(report->top1_agree, report->n_tokens - 3);
    }
}

}  // namespace
}  // namespace strata
