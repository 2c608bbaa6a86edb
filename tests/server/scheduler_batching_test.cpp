// Continuous batching on the built-in model (a real trained Qwen3-MoE, so greedy continuations
// differ from prompt to prompt): requests served together, sharing forward passes, produce the
// tokens each produces alone — with end-of-text stops, different lengths and a prompt that
// arrives while the others are generating.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/file.h"
#include "runtime/engine.h"
#include "server/scheduler.h"

namespace strata::server {
namespace {

using namespace std::chrono_literals;

struct Reply {
    std::string text;
    TaskResult result;
    bool done = false;
};

Reply collect(TaskHandle& task) {
    Reply r;
    const auto end = std::chrono::steady_clock::now() + 120s;
    while (!r.done && std::chrono::steady_clock::now() < end) {
        auto ev = task.next(20ms);
        if (!ev) continue;
        if (ev->kind == TaskEvent::Kind::Text) r.text += ev->text;
        else r = Reply{r.text, ev->result, true};
    }
    return r;
}

class BuiltinBatching : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string path = std::string(STRATA_SOURCE_DIR) + "/models/strata-kjv-moe.gguf";
        if (!file_exists(path)) GTEST_SKIP() << "built-in model missing: " << path;
        auto lm = Engine::open({.model_path = path});
        ASSERT_TRUE(lm) << lm.status().message();
        lm_ = std::move(*lm);
    }
    std::unique_ptr<Scheduler> make(int slots) {
        return std::make_unique<Scheduler>(*lm_->model, *lm_->tokenizer, pool_,
                                           SchedulerOptions{.n_slots = slots, .n_ctx = 256, .n_batch = 32, .max_queue = 8},
                                           nullptr);
    }
    TaskSpec spec(const std::string& prompt, int64_t max_tokens) const {
        TaskSpec s;
        s.prompt = lm_->tokenizer->encode(prompt, lm_->tokenizer->wants_bos(), false);
        s.max_tokens = max_tokens;
        s.sampling.temperature = 0.0f;
        return s;
    }

    std::unique_ptr<Engine> lm_;
    ThreadPool pool_{ThreadPool::Options{.threads = 2}};
};

TEST_F(BuiltinBatching, TogetherEachRequestGivesItsTokensAlone) {
    const std::vector<std::pair<std::string, int64_t>> requests = {
        {"In the beginning God created", 40},
        {"And the LORD spake unto Moses, saying,", 25},
        {"Blessed are the poor in spirit: for theirs is the kingdom of heaven. Blessed are they that mourn:", 48},
        {"The LORD is my shepherd;", 33},
    };
    std::vector<Reply> alone;
    for (const auto& [prompt, n] : requests) {
        auto sched = make(1);
        alone.push_back(collect(*sched->submit(spec(prompt, n))));
        ASSERT_TRUE(alone.back().done);
        ASSERT_TRUE(alone.back().result.outcome == TaskOutcome::Length || alone.back().result.outcome == TaskOutcome::Stop);
    }
    // The continuations differ, so a mixed-up sequence would show.
    EXPECT_NE(alone[0].text, alone[1].text);

    auto sched = make(4);
    std::vector<std::shared_ptr<TaskHandle>> tasks;
    for (size_t i = 0; i + 1 < requests.size(); ++i) tasks.push_back(sched->submit(spec(requests[i].first, requests[i].second)));
    // The last request joins once the others are generating.
    auto first = tasks[0]->next(60s);
    ASSERT_TRUE(first.has_value());
    ASSERT_EQ(first->kind, TaskEvent::Kind::Text);
    tasks.push_back(sched->submit(spec(requests.back().first, requests.back().second)));
    std::vector<Reply> together(tasks.size());
    std::vector<std::thread> readers;
    for (size_t i = 0; i < tasks.size(); ++i) readers.emplace_back([&, i] { together[i] = collect(*tasks[i]); });
    for (auto& r : readers) r.join();
    together[0].text = first->text + together[0].text;
    for (size_t i = 0; i < tasks.size(); ++i) {
        ASSERT_TRUE(together[i].done);
        EXPECT_EQ(together[i].text, alone[i].text) << "request " << i;
        EXPECT_EQ(together[i].result.generated_tokens, alone[i].result.generated_tokens) << "request " << i;
        EXPECT_EQ(together[i].result.outcome, alone[i].result.outcome) << "request " << i;
    }
    EXPECT_GT(sched->stats().fused_steps, 0u);
}

}  // namespace
}  // namespace strata::server
