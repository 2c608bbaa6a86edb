// deepseek4's recipe on a tiny random model (tests/model/deepseek4_tiny_model.h): the prompt as
// one batch, token by token and in chunks gives the same logits; a restored compressor state
// rewinds a sequence; sequences batched together keep their own caches and states. The HF parity
// of the recipe is in parity_test.cpp (the project's fixture).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "model/model.h"
#include "plan/allocations.h"
#include "support/scratch.h"
#include "deepseek4_tiny_model.h"

namespace strata {
namespace {

// 160 tokens: the HCA layer (ratio 128) completes its first entry, the CSA layers (ratio 4) have
// 40 entries for the indexer to choose 4 of, and the window (8) has long slid.
constexpr int64_t kTokens = 160;

class Deepseek4Recipe : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = test::write_tiny_deepseek4(dir_.path("ds4.gguf"));
        auto file = GgufFile::open(path_);
        ASSERT_TRUE(file) << file.status().message();
        file_ = std::make_unique<GgufFile>(std::move(*file));
        auto model = Model::load(*file_);
        ASSERT_TRUE(model) << model.status().message();
        model_ = std::move(*model);
        vocab_ = model_->config().n_vocab;
        std::mt19937 rng(11);
        tokens_.resize(kTokens);
        for (int32_t& t : tokens_) t = static_cast<int32_t>(rng() % vocab_);
        positions_.resize(kTokens);
        std::iota(positions_.begin(), positions_.end(), 0);
    }

    // Logits of every token, the prompt fed in chunks of the given sizes (their sum: kTokens).
    std::vector<float> run_chunks(const std::vector<int64_t>& chunks, int threads = 2) {
        ThreadPool pool(ThreadPool::Options{.threads = threads});
        CpuContext ctx(pool);
        KvCache kv = model_->make_kv_cache(kTokens);
        RecurrentState rs = model_->make_recurrent_state();
        std::vector<float> logits(static_cast<size_t>(kTokens * vocab_));
        int64_t at = 0;
        for (int64_t n : chunks) {
            model_->forward_with_state(Batch{tokens_.data() + at, positions_.data() + at, n, at}, kv, rs,
                                       logits.data() + at * vocab_, LogitsFor::All, ctx);
            at += n;
        }
        EXPECT_EQ(rs.n_past(), kTokens);
        EXPECT_TRUE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
        return logits;
    }

    static float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
        float worst = 0.0f;
        for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
        return worst;
    }

    test::ScratchDir dir_;
    std::string path_;
    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Model> model_;
    int64_t vocab_ = 0;
    std::vector<int32_t> tokens_, positions_;
};

TEST_F(Deepseek4Recipe, ReadsTheLayerKinds) {
    const ModelConfig& c = model_->config();
    EXPECT_EQ(c.n_layer, 5u);
    EXPECT_EQ(c.indexer.compress_ratio, (std::vector<uint32_t>{0, 0, 4, 128, 4}));
    EXPECT_EQ(c.dsv4.n_hash_layers, 3u);
    EXPECT_EQ(c.hc_count, 4u);
    EXPECT_TRUE(model_->make_recurrent_state().has_history(2));
    EXPECT_FALSE(model_->make_recurrent_state().has_history(0));
}

TEST_F(Deepseek4Recipe, TokenByTokenGivesTheBatchLogits) {
    const std::vector<float> batch = run_chunks({kTokens});
    const std::vector<float> one_by_one = run_chunks(std::vector<int64_t>(kTokens, 1));
    float scale = 0.0f;
    for (float v : batch) scale = std::max(scale, std::fabs(v));
    ASSERT_GT(scale, 0.1f);
    std::printf("batch vs token by token: max |diff| %.3g, largest logit %.3g\n", max_abs_diff(batch, one_by_one), scale);
    EXPECT_LT(max_abs_diff(batch, one_by_one), 1e-4f * scale) << "largest logit " << scale;
}

TEST_F(Deepseek4Recipe, ChunkedPromptsGiveTheBatchLogits) {
    const std::vector<float> batch = run_chunks({kTokens});
    float scale = 0.0f;
    for (float v : batch) scale = std::max(scale, std::fabs(v));
    // Chunk edges inside and on compressor windows (4, 128) and the sliding window (8).
    for (const std::vector<int64_t>& chunks : {std::vector<int64_t>{3, 5, 120, 32}, std::vector<int64_t>{128, 1, 31},
                                               std::vector<int64_t>{7, 9, 126, 18}}) {
        EXPECT_LT(max_abs_diff(batch, run_chunks(chunks)), 1e-4f * scale);
    }
    // One thread or several: the same bits (rows are independent).
    EXPECT_EQ(run_chunks({kTokens}, 1), batch);
}

// A checkpoint of the compressor state at position 90, a detour of other tokens past the HCA
// window's end, the state restored: the logits after it equal those of the uninterrupted run.
TEST_F(Deepseek4Recipe, ARestoredCheckpointRewindsTheSequence) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    const int64_t at = 90, rest = kTokens - at;
    const std::vector<float> want = run_chunks({at, rest});

    KvCache kv = model_->make_kv_cache(kTokens);
    RecurrentState rs = model_->make_recurrent_state();
    std::vector<float> logits(static_cast<size_t>(kTokens * vocab_));
    model_->forward_with_state(Batch{tokens_.data(), positions_.data(), at, 0}, kv, rs, logits.data(), LogitsFor::All, ctx);
    const RecurrentSnapshot checkpoint = rs.snapshot();
    std::vector<int32_t> detour(tokens_.begin() + at, tokens_.end());
    std::reverse(detour.begin(), detour.end());
    std::vector<float> scratch(static_cast<size_t>(rest * vocab_));
    model_->forward_with_state(Batch{detour.data(), positions_.data() + at, rest, at}, kv, rs, scratch.data(),
                               LogitsFor::All, ctx);
    ASSERT_TRUE(rs.restore(checkpoint).is_ok());
    model_->forward_with_state(Batch{tokens_.data() + at, positions_.data() + at, rest, at}, kv, rs,
                               logits.data() + at * vocab_, LogitsFor::All, ctx);
    EXPECT_EQ(logits, want);

    // Without the restore the detour's compressor rows show: the check is not vacuous.
    RecurrentState moved_on = model_->make_recurrent_state();
    KvCache kv2 = model_->make_kv_cache(kTokens);
    model_->forward_with_state(Batch{tokens_.data(), positions_.data(), at, 0}, kv2, moved_on, logits.data(), LogitsFor::All, ctx);
    model_->forward_with_state(Batch{detour.data(), positions_.data() + at, 2, at}, kv2, moved_on, scratch.data(),
                               LogitsFor::All, ctx);
    RecurrentSnapshot position_only = moved_on.snapshot();
    position_only.n_past = at;
    ASSERT_TRUE(moved_on.restore(position_only).is_ok());
    model_->forward_with_state(Batch{tokens_.data() + at, positions_.data() + at, rest, at}, kv2, moved_on,
                               logits.data() + at * vocab_, LogitsFor::All, ctx);
    EXPECT_NE(logits, want);
}

// The planner reserves what a sequence allocates: the K = V rows, the entries and indexer keys,
// the compressors' state.
TEST_F(Deepseek4Recipe, ThePlanCountsTheCacheAndTheCompressorState) {
    for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16, KvCacheType::Q8_0}) {
        model_->set_kv_type(type);
        for (int64_t n_ctx : {int64_t{1}, int64_t{130}, int64_t{4096}}) {
            const ContextMemory m = context_memory(model_->config(), n_ctx, type);
            EXPECT_EQ(m.kv_bytes, model_->make_kv_cache(n_ctx).bytes()) << kv_type_name(type) << " " << n_ctx;
            EXPECT_EQ(m.recurrent_bytes, model_->make_recurrent_state().bytes());
        }
    }
    model_->set_kv_type(KvCacheType::F32);
}

// Two sequences in one fused pass give the logits each gives alone.
TEST_F(Deepseek4Recipe, SequencesInOnePassKeepTheirOwnState) {
    const std::vector<float> alone = run_chunks({kTokens});
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    std::vector<int32_t> other(tokens_.rbegin(), tokens_.rend());
    KvCache kv_a = model_->make_kv_cache(kTokens), kv_b = model_->make_kv_cache(kTokens);
    RecurrentState rs_a = model_->make_recurrent_state(), rs_b = model_->make_recurrent_state();
    std::vector<float> got(alone.size()), got_b(alone.size());
    for (int64_t at = 0; at < kTokens;) {
        const int64_t n = std::min<int64_t>(at < 100 ? 50 : 1, kTokens - at);
        const SequenceStep steps[] = {
            {tokens_.data() + at, n, at, &kv_a, &rs_a, got.data() + at * vocab_, LogitsFor::All},
            {other.data() + at, n, at, &kv_b, &rs_b, got_b.data() + at * vocab_, LogitsFor::All},
        };
        model_->forward_multi(steps, ctx);
        at += n;
    }
    float scale = 0.0f;
    for (float v : alone) scale = std::max(scale, std::fabs(v));
    EXPECT_LT(max_abs_diff(got, alone), 1e-4f * scale);
    EXPECT_GT(max_abs_diff(got_b, alone), 1e-2f * scale);  // the other sequence is another prompt
}

}  // namespace
}  // namespace strata
