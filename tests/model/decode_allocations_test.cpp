// The token loop allocates nothing (issue 4: "no allocation inside the token loop"): after a
// prompt and a few decode steps have sized every scratch buffer, further one-token forward passes
// of every fixture architecture on the CPU make no heap allocation on any thread. This test
// binary's global operator new counts the allocations made while the count is on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "model/model.h"
#include "support/testdata.h"

// A replaced operator new that mallocs, paired with a delete that frees, is the pair GCC's
// -Wmismatched-new-delete cannot see through once inlined into callers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace strata {
namespace {

class DecodeAllocations : public ::testing::TestWithParam<std::string> {};

TEST_P(DecodeAllocations, OneTokenStepsAllocateNothing) {
    const std::string path = test::model_fixture_stem(GetParam()) + ".gguf";
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file) << file.status().message();
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    Model& m = **model;
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    const int64_t vocab = m.config().n_vocab, prompt = 8, warm_up = 3, counted = 4;
    KvCache kv = m.make_kv_cache(prompt + warm_up + counted);
    RecurrentState state = m.make_recurrent_state();
    std::vector<int32_t> tokens(static_cast<size_t>(prompt + warm_up + counted));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 13 + 5) % static_cast<size_t>(vocab));
    std::vector<int32_t> positions(tokens.size());
    for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i);
    std::vector<float> logits(static_cast<size_t>(prompt * vocab));
    const auto step = [&](int64_t first, int64_t n) {
        m.forward_with_state(Batch{tokens.data() + first, positions.data() + first, n, first}, kv, state, logits.data(),
                             LogitsFor::Last, cpu);
    };
    step(0, prompt);
    for (int64_t i = 0; i < warm_up; ++i) step(prompt + i, 1);
    g_allocations = 0;
    g_counting = true;
    for (int64_t i = 0; i < counted; ++i) step(prompt + warm_up + i, 1);
    g_counting = false;
    std::printf("decode-allocations %-10s %lld in %lld one-token steps\n", GetParam().c_str(),
                static_cast<long long>(g_allocations.load()), static_cast<long long>(counted));
    EXPECT_EQ(g_allocations.load(), 0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeAllocations,
                         ::testing::Values("llama", "qwen3", "qwen3moe", "mixtral", "gptoss", "qwen3next", "qwen35moe",
                                           "deepseek3", "project:qwen4exp", "project:deepseek4"),
                         [](const auto& param_info) { return test::model_fixture_label(param_info.param); });

}  // namespace
}  // namespace strata
