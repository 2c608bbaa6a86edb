// Session semantics that callers (chat, server prefix reuse) rely on, on real fixture models.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "model/model.h"
#include "runtime/session.h"
#include "support/testdata.h"

namespace strata {
namespace {

std::vector<float> logits_after(Model& model, ThreadPool& pool, const std::vector<int32_t>& tokens) {
    Session s(model, SessionOptions{.n_ctx = 64, .n_batch = 7}, pool);
    EXPECT_TRUE(s.append(tokens));
    return std::vector<float>(s.logits(), s.logits() + s.n_vocab());
}

double max_diff(const std::vector<float>& a, const float* b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
    return m;
}

// Rewinding to a shared prefix and continuing must give the logits of a fresh run — also on a
// hybrid model whose recurrent state cannot be rewound (the session starts over instead).
class SessionRewind : public ::testing::TestWithParam<std::string> {};

TEST_P(SessionRewind, TruncateThenAppendEqualsAFreshRun) {
    const std::string path = test::testdata_path("models/" + GetParam() + ".gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    std::vector<int32_t> a = {5, 17, 99, 300, 41, 8, 77, 1000, 12, 3};
    std::vector<int32_t> b = a;
    b.resize(6);
    b.insert(b.end(), {2000, 64, 128});

    Session s(**model, SessionOptions{.n_ctx = 64, .n_batch = 4}, pool);
    ASSERT_TRUE(s.append(a));
    s.truncate(6);
    const bool recurrent = !(*model)->make_recurrent_state().empty();
    EXPECT_EQ(s.n_past(), recurrent ? 0 : 6);
    std::vector<int32_t> rest(b.begin() + s.n_past(), b.end());
    ASSERT_TRUE(s.append(rest));
    EXPECT_LT(max_diff(logits_after(**model, pool, b), s.logits()), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Models, SessionRewind, ::testing::Values("qwen3moe", "qwen3next", "deepseek3"));

TEST(Session, RefusesPromptsLongerThanTheContext) {
    const std::string path = test::testdata_path("models/llama.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model);
    ThreadPool pool(ThreadPool::Options{.threads = 1});
    Session s(**model, SessionOptions{.n_ctx = 8}, pool);
    std::vector<int32_t> ten(10, 5);
    Status st = s.append(ten);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("2 more than the context size 8"), std::string::npos) << st.message();
    EXPECT_EQ(s.n_past(), 0);
    std::vector<int32_t> bad = {1, 999999};
    EXPECT_FALSE(s.append(bad));
    EXPECT_EQ(s.n_past(), 0);
}

}  // namespace
}  // namespace strata
