// The hybrid DeltaNet models' recurrent state belongs to the sequence, not the model (their HF
// parity, batch and token by token, is in parity_test.cpp).
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/file.h"
#include "model/model.h"
#include "model/parity.h"
#include "support/testdata.h"

namespace strata {
namespace {

// Two sequences interleaved on one model, each with its own KV cache and recurrent state, give
// the logits each gives alone: no state hides in the model.
TEST(HybridState, InterleavedSequencesKeepTheirOwnState) {
    const std::string path = test::testdata_path("models/qwen3next.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    const int64_t n = 6, vocab = (*model)->config().n_vocab;
    const std::vector<int32_t> a = {11, 200, 37, 4000, 5, 999}, b = {3000, 7, 7, 81, 1024, 12};
    std::vector<int32_t> pos(n);
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);

    // Alone, as one batch each.
    std::vector<float> want_a(static_cast<size_t>(n * vocab)), want_b(want_a.size());
    for (auto [tokens, out] : {std::pair{&a, &want_a}, std::pair{&b, &want_b}}) {
        KvCache kv = (*model)->make_kv_cache(n);
        RecurrentState rs = (*model)->make_recurrent_state();
        (*model)->forward_with_state(Batch{tokens->data(), pos.data(), n, 0}, kv, rs, out->data(), LogitsFor::All, ctx);
    }
    // Interleaved, one token at a time.
    KvCache kv_a = (*model)->make_kv_cache(n), kv_b = (*model)->make_kv_cache(n);
    RecurrentState rs_a = (*model)->make_recurrent_state(), rs_b = (*model)->make_recurrent_state();
    std::vector<float> got(static_cast<size_t>(vocab));
    for (int64_t t = 0; t < n; ++t) {
        for (auto [tokens, kv, rs, want] : {std::tuple{&a, &kv_a, &rs_a, &want_a}, std::tuple{&b, &kv_b, &rs_b, &want_b}}) {
            (*model)->forward_with_state(Batch{tokens->data() + t, pos.data() + t, 1, t}, *kv, *rs, got.data(),
                                         LogitsFor::All, ctx);
            for (int64_t i = 0; i < vocab; ++i) ASSERT_NEAR(got[i], (*want)[t * vocab + i], 1e-3f) << "token " << t;
        }
    }
    EXPECT_EQ(rs_a.n_past(), n);
}

// A turn checkpoint: the state snapshotted after a prompt, the sequence taken elsewhere (another
// reply), then the state restored and the next turn read — the logits equal those of the run that
// never left, bit for bit (the same CPU kernels on the same chunks; the KV rows past the checkpoint
// are written again before they are read).
TEST(HybridState, RestoredCheckpointGivesTheLogitsOfAnUninterruptedRun) {
    const std::string path = test::testdata_path("models/qwen3next.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    const int64_t vocab = (*model)->config().n_vocab;
    const std::vector<int32_t> turn1 = {11, 200, 37, 4000, 5}, turn2 = {999, 3000, 7, 81}, detour = {1024, 12, 12};
    std::vector<int32_t> pos(16);
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    const int64_t n1 = static_cast<int64_t>(turn1.size()), n2 = static_cast<int64_t>(turn2.size());

    // Uninterrupted: turn 1, then turn 2.
    KvCache kv = (*model)->make_kv_cache(16);
    RecurrentState rs = (*model)->make_recurrent_state();
    std::vector<float> first(static_cast<size_t>(vocab)), want(static_cast<size_t>(n2 * vocab));
    (*model)->forward_with_state(Batch{turn1.data(), pos.data(), n1, 0}, kv, rs, first.data(), LogitsFor::Last, ctx);
    (*model)->forward_with_state(Batch{turn2.data(), pos.data() + n1, n2, n1}, kv, rs, want.data(), LogitsFor::All, ctx);

    // Checkpointed after turn 1, a detour of other tokens, restored, turn 2.
    KvCache kv2 = (*model)->make_kv_cache(16);
    RecurrentState rs2 = (*model)->make_recurrent_state();
    (*model)->forward_with_state(Batch{turn1.data(), pos.data(), n1, 0}, kv2, rs2, first.data(), LogitsFor::Last, ctx);
    const RecurrentSnapshot checkpoint = rs2.snapshot();
    EXPECT_EQ(checkpoint.n_past, n1);
    (*model)->forward_with_state(Batch{detour.data(), pos.data() + n1, 3, n1}, kv2, rs2, first.data(), LogitsFor::Last, ctx);
    ASSERT_TRUE(rs2.restore(checkpoint).is_ok());
    EXPECT_EQ(rs2.n_past(), n1);
    std::vector<float> got(want.size());
    (*model)->forward_with_state(Batch{turn2.data(), pos.data() + n1, n2, n1}, kv2, rs2, got.data(), LogitsFor::All, ctx);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "logit " << i;

    // Without the restore the detour shows: the check above is not vacuous.
    KvCache kv3 = (*model)->make_kv_cache(16);
    RecurrentState rs3 = (*model)->make_recurrent_state();
    (*model)->forward_with_state(Batch{turn1.data(), pos.data(), n1, 0}, kv3, rs3, first.data(), LogitsFor::Last, ctx);
    (*model)->forward_with_state(Batch{detour.data(), pos.data() + n1, 3, n1}, kv3, rs3, first.data(), LogitsFor::Last, ctx);
    RecurrentSnapshot moved_on = rs3.snapshot();
    moved_on.n_past = n1;  // the position alone, not the state, set back
    ASSERT_TRUE(rs3.restore(moved_on).is_ok());
    (*model)->forward_with_state(Batch{turn2.data(), pos.data() + n1, n2, n1}, kv3, rs3, got.data(), LogitsFor::All, ctx);
    EXPECT_NE(got, want);
}

}  // namespace
}  // namespace strata
