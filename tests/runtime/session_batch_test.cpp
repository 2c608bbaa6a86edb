// Session::append_batched: sessions advanced together in one forward pass end where they would
// have ended one at a time (tokens and logits), and a bad chunk is refused before anything runs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/session.h"
#include "support/testdata.h"

namespace strata {
namespace {

class SessionBatch : public ::testing::TestWithParam<std::string> {};

TEST_P(SessionBatch, BatchedAppendEqualsAppendingAlone) {
    const std::string path = test::testdata_path("models/" + GetParam() + ".gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    const SessionOptions options{.n_ctx = 32, .n_batch = 4};
    const std::vector<std::vector<int32_t>> prompts = {{5, 17, 99, 300, 41}, {3, 1000}, {2000, 64, 128, 7, 7, 81}};
    const std::vector<std::vector<int32_t>> next = {{8}, {12, 64, 9}, {250}};

    std::vector<std::vector<float>> want;
    for (size_t i = 0; i < prompts.size(); ++i) {
        Session s(**model, options, pool);
        ASSERT_TRUE(s.append(prompts[i]));
        ASSERT_TRUE(s.append(next[i]));
        want.emplace_back(s.logits(), s.logits() + s.n_vocab());
    }

    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<SessionChunk> chunks;
    for (const auto& p : prompts) {
        sessions.push_back(std::make_unique<Session>(**model, options, pool));
        chunks.push_back(SessionChunk{sessions.back().get(), p});
    }
    CpuContext ctx(pool);
    ASSERT_TRUE(Session::append_batched(chunks, ctx));
    for (size_t i = 0; i < chunks.size(); ++i) chunks[i].tokens = next[i];
    ASSERT_TRUE(Session::append_batched(chunks, ctx));
    for (size_t i = 0; i < sessions.size(); ++i) {
        EXPECT_EQ(sessions[i]->n_past(), static_cast<int64_t>(prompts[i].size() + next[i].size()));
        EXPECT_EQ(std::vector<float>(sessions[i]->logits(), sessions[i]->logits() + sessions[i]->n_vocab()), want[i])
            << "session " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Models, SessionBatch, ::testing::Values("qwen3moe", "qwen3next"));

TEST(SessionBatchErrors, ABadChunkIsRefusedBeforeAnythingRuns) {
    const std::string path = test::testdata_path("models/llama.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model);
    ThreadPool pool(ThreadPool::Options{.threads = 1});
    CpuContext ctx(pool);
    Session a(**model, SessionOptions{.n_ctx = 8}, pool), b(**model, SessionOptions{.n_ctx = 8}, pool);
    const std::vector<int32_t> two = {1, 2}, ten(10, 5);

    SessionChunk too_long[] = {{&a, two}, {&b, ten}};
    Status st = Session::append_batched(too_long, ctx);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("batched chunk 1: context full"), std::string::npos) << st.message();
    EXPECT_EQ(a.n_past(), 0);

    SessionChunk twice[] = {{&a, two}, {&a, two}};
    st = Session::append_batched(twice, ctx);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("same session"), std::string::npos) << st.message();
    EXPECT_EQ(a.n_past(), 0);
}

}  // namespace
}  // namespace strata
