// Session::checkpoint / restore_checkpoint, what the server's turn checkpoints rest on: on each
// hybrid fixture (and deepseek4, whose compressors keep their running state beside the
// cache), a session that read a turn, kept a checkpoint inside it, went on (the rest of
// the turn and a reply), was restored and read a next turn that diverges after the checkpoint
// gives the logits of a session that read the next turn whole, bit for bit, in other chunks.
#include <gtest/gtest.h>

#include <vector>

#include "model/model.h"
#include "runtime/session.h"
#include "support/testdata.h"

namespace strata {
namespace {

class SessionCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(SessionCheckpoint, RestoringThenReadingTheRestEqualsAFullRereadBitForBit) {
    const std::string path = test::model_fixture_stem(GetParam()) + ".gguf";
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    const std::vector<int32_t> turn1 = {5, 17, 99, 300, 41, 8, 77, 1000, 12, 3}, reply = {64, 9, 250, 31};
    std::vector<int32_t> turn2(turn1.begin(), turn1.begin() + 8);  // diverges at 8, after the checkpoint at 6
    turn2.insert(turn2.end(), {2000, 64, 128, 7, 81, 1024, 12});

    Session s(**model, SessionOptions{.n_ctx = 64, .n_batch = 4}, pool);
    ASSERT_TRUE(s.append(std::span(turn1).first(6)));
    const RecurrentSnapshot at6 = s.checkpoint();
    EXPECT_EQ(at6.n_past, 6);
    ASSERT_TRUE(s.append(std::span(turn1).subspan(6)));
    ASSERT_TRUE(s.append(reply));
    ASSERT_TRUE(s.restore_checkpoint(at6));
    EXPECT_EQ(s.n_past(), 6);
    ASSERT_TRUE(s.append(std::span(turn2).subspan(6)));

    Session full(**model, SessionOptions{.n_ctx = 64, .n_batch = 7}, pool);
    ASSERT_TRUE(full.append(turn2));
    const std::vector<float> want(full.logits(), full.logits() + full.n_vocab());
    const std::vector<float> got(s.logits(), s.logits() + s.n_vocab());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "logit " << i;

    // Without the restore, the reply read after the checkpoint shows: the check is not vacuous.
    Session moved_on(**model, SessionOptions{.n_ctx = 64, .n_batch = 4}, pool);
    ASSERT_TRUE(moved_on.append(turn1));
    ASSERT_TRUE(moved_on.append(reply));
    std::vector<int32_t> stale = turn1;
    stale.insert(stale.end(), reply.begin(), reply.end());
    stale.insert(stale.end(), turn2.begin() + 6, turn2.end());
    Session other(**model, SessionOptions{.n_ctx = 64, .n_batch = 4}, pool);
    ASSERT_TRUE(other.append(stale));
    EXPECT_NE(std::vector<float>(other.logits(), other.logits() + other.n_vocab()), want);
}

TEST_P(SessionCheckpoint, ACheckpointPastTheSessionIsRefused) {
    const std::string path = test::model_fixture_stem(GetParam()) + ".gguf";
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    Session s(**model, SessionOptions{.n_ctx = 64, .n_batch = 4}, pool);
    ASSERT_TRUE(s.append(std::vector<int32_t>{5, 17, 99, 300}));
    RecurrentSnapshot ahead = s.checkpoint();
    ahead.n_past = 9;
    const Status st = s.restore_checkpoint(ahead);
    EXPECT_FALSE(st);
    EXPECT_NE(st.message().find("holds 4 tokens"), std::string::npos) << st.message();
    EXPECT_EQ(s.n_past(), 4);
}

INSTANTIATE_TEST_SUITE_P(HybridModels, SessionCheckpoint,
                         ::testing::Values("qwen3next", "qwen35moe", "project:qwen4exp", "project:deepseek4"),
                         [](const auto& param_info) { return test::model_fixture_label(param_info.param); });

TEST(SessionCheckpointOnAttentionOnly, RestoringIsRefusedWithTheReason) {
    const std::string path = test::testdata_path("models/llama.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    Session s(**model, SessionOptions{.n_ctx = 16}, pool);
    const Status st = s.restore_checkpoint(RecurrentSnapshot{});
    EXPECT_FALSE(st);
    EXPECT_NE(st.message().find("no recurrent state"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace strata
