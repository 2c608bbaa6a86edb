// The request scheduler on a real (tiny, synthetic) model: results, prefix reuse that gives the
// same tokens as a fresh computation, the bounded queue, FIFO order, interleaving of slots,
// cancellation, timeouts and draining. Every wait is bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "server/scheduler.h"
#include "server_test_support.h"
#include "support/device_rows_model.h"

namespace strata::server {
namespace {

using namespace std::chrono_literals;

struct Outcome {
    std::string text;
    TaskResult result;
    bool done = false;
};

// Reads a task's events until Done or `limit`.
Outcome collect(TaskHandle& task, std::chrono::seconds limit = 60s) {
    Outcome o;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        auto ev = task.next(20ms);
        if (!ev) continue;
        if (ev->kind == TaskEvent::Kind::Text) {
            o.text += ev->text;
            continue;
        }
        o.result = ev->result;
        o.done = true;
        break;
    }
    return o;
}

// When the engine gave the task a slot and when it finished it, on the engine's own clock, so the
// readers' scheduling (threads on a loaded machine) plays no part.
struct EngineSpan {
    std::chrono::steady_clock::time_point started, finished;
};
EngineSpan engine_span(const TaskHandle& task, const TaskResult& r) {
    const auto at = [](double seconds) {
        return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    };
    EngineSpan s;
    s.started = task.submitted_at() + at(r.queue_seconds);
    s.finished = s.started + at(r.prompt_seconds + r.generation_seconds);
    return s;
}

class SchedulerTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { model_ = test::load_tiny_model().release(); }
    static void TearDownTestSuite() {
        delete model_;
        model_ = nullptr;
    }

    std::unique_ptr<Scheduler> make(int slots, size_t max_queue, int64_t n_ctx = 256) {
        return std::make_unique<Scheduler>(*model_->model, *model_->tokenizer, pool_,
                                           SchedulerOptions{.n_slots = slots, .n_ctx = n_ctx, .n_batch = 16, .max_queue = max_queue},
                                           &metrics_);
    }
    static TaskSpec spec(const std::string& prompt, int64_t max_tokens) {
        TaskSpec s;
        s.prompt = model_->tokenizer->encode(prompt, false, false);
        s.max_tokens = max_tokens;
        s.sampling.temperature = 0.0f;  // greedy: the same prompt gives the same text
        s.ignore_eos = true;            // every generation runs to max_tokens
        return s;
    }

    static Engine* model_;
    ThreadPool pool_{ThreadPool::Options{.threads = 2}};
    Metrics metrics_;
};
Engine* SchedulerTest::model_ = nullptr;

TEST_F(SchedulerTest, GeneratesExactlyMaxTokensAndReportsUsage) {
    auto sched = make(1, 4);
    auto task = sched->submit(spec("Hello there", 12));
    ASSERT_TRUE(task);
    Outcome o = collect(*task);
    ASSERT_TRUE(o.done);
    EXPECT_EQ(o.result.outcome, TaskOutcome::Length);
    EXPECT_EQ(o.result.generated_tokens, 12);
    EXPECT_EQ(o.result.prompt_tokens, 11);
    EXPECT_EQ(o.result.cached_tokens, 0);
    EXPECT_FALSE(o.text.empty());
    EXPECT_GT(o.result.prompt_seconds, 0.0);
}

TEST_F(SchedulerTest, StopStringEndsTheTextBeforeIt) {
    auto sched = make(1, 4);
    Outcome full = collect(*sched->submit(spec("abc", 24)));
    ASSERT_TRUE(full.done);
    ASSERT_GE(full.text.size(), 6u);
    // Stop at a piece of what greedy decoding is known to produce.
    TaskSpec s = spec("abc", 24);
    s.stop = {full.text.substr(3, 2)};
    Outcome cut = collect(*sched->submit(s));
    ASSERT_TRUE(cut.done);
    EXPECT_EQ(cut.result.outcome, TaskOutcome::Stop);
    EXPECT_EQ(cut.text, full.text.substr(0, full.text.find(s.stop[0])));
}

TEST_F(SchedulerTest, PrefixReuseGivesTheSameTokensAsAFreshComputation) {
    const std::string turn1 = "The first turn of a conversation. ";
    const std::string turn2 = turn1 + "And the second one, longer.";
    auto sched = make(2, 4);
    Outcome a = collect(*sched->submit(spec(turn1, 8)));
    ASSERT_TRUE(a.done);
    Outcome b = collect(*sched->submit(spec(turn2, 16)));
    ASSERT_TRUE(b.done);
    EXPECT_GE(b.result.cached_tokens, static_cast<int64_t>(turn1.size()));  // byte vocabulary: one token per byte
    EXPECT_LT(b.result.cached_tokens, static_cast<int64_t>(turn2.size()));

    auto fresh = make(1, 4);
    Outcome c = collect(*fresh->submit(spec(turn2, 16)));
    ASSERT_TRUE(c.done);
    EXPECT_EQ(c.result.cached_tokens, 0);
    EXPECT_EQ(b.text, c.text);
}

TEST_F(SchedulerTest, QueueIsBoundedAndFull503IsPossible) {
    auto sched = make(1, 1, 4096);
    auto a = sched->submit(spec("long one", 4000));
    auto b = sched->submit(spec("second", 4));
    auto c = sched->submit(spec("third", 4));
    ASSERT_TRUE(a);
    ASSERT_TRUE(b);
    EXPECT_FALSE(c) << "one slot and one queue place: a third task must be refused";
    a->cancel();
    EXPECT_TRUE(collect(*a).done);
    EXPECT_TRUE(collect(*b).done);
    EXPECT_TRUE(sched->submit(spec("room again", 2)));
}

TEST_F(SchedulerTest, QueuedTasksStartInArrivalOrder) {
    auto sched = make(1, 8);
    std::vector<std::shared_ptr<TaskHandle>> tasks;
    // The first task is the longest, so the others usually wait behind it in the queue.
    for (int i = 0; i < 4; ++i) tasks.push_back(sched->submit(spec("task " + std::to_string(i), i == 0 ? 32 : 6)));
    std::vector<std::chrono::steady_clock::time_point> started;
    for (auto& t : tasks) {
        Outcome o = collect(*t);
        ASSERT_TRUE(o.done);
        ASSERT_EQ(o.result.outcome, TaskOutcome::Length);
        started.push_back(engine_span(*t, o.result).started);
    }
    for (size_t i = 1; i < started.size(); ++i) EXPECT_LT(started[i - 1], started[i]) << "task " << i << " started before task " << i - 1;
}

TEST_F(SchedulerTest, SlotsAdvanceSideBySide) {
    auto sched = make(2, 4);
    auto a = sched->submit(spec("first request", 60));
    auto b = sched->submit(spec("second request", 60));
    Outcome ob;
    std::thread reader([&] { ob = collect(*b); });
    Outcome oa = collect(*a);
    reader.join();
    ASSERT_TRUE(oa.done && ob.done);
    // Batched together: each request ran while the other one did.
    const EngineSpan sa = engine_span(*a, oa.result), sb = engine_span(*b, ob.result);
    EXPECT_LT(sb.started, sa.finished);
    EXPECT_LT(sa.started, sb.finished);
}

// Continuous batching: requests running together share forward passes (fused steps), and each
// produces exactly the tokens it produces alone — prompts of different lengths, some longer than
// a chunk, so steps mix prompt chunks with decode tokens.
TEST_F(SchedulerTest, ConcurrentRequestsGiveTheTokensTheyGiveAlone) {
    const std::vector<std::string> prompts = {"In the beginning", "And God said, Let there be light: and there was light.",
                                              "x", "The quick brown fox jumps over the lazy dog, twice over."};
    std::vector<std::string> alone;
    for (const auto& p : prompts) {
        auto sched = make(1, 4);
        Outcome o = collect(*sched->submit(spec(p, 24)));
        ASSERT_TRUE(o.done);
        EXPECT_EQ(sched->stats().fused_steps, 0u) << "one request alone has nothing to fuse with";
        alone.push_back(o.text);
    }

    auto sched = make(4, 4);
    std::vector<std::shared_ptr<TaskHandle>> tasks;
    for (const auto& p : prompts) tasks.push_back(sched->submit(spec(p, 24)));
    std::vector<Outcome> together(tasks.size());
    std::vector<std::thread> readers;
    for (size_t i = 0; i < tasks.size(); ++i) readers.emplace_back([&, i] { together[i] = collect(*tasks[i]); });
    for (auto& r : readers) r.join();
    for (size_t i = 0; i < prompts.size(); ++i) {
        ASSERT_TRUE(together[i].done);
        EXPECT_EQ(together[i].result.generated_tokens, 24);
        EXPECT_EQ(together[i].text, alone[i]) << "request " << i << " changed when batched with the others";
    }

    const SchedulerStats st = sched->stats();
    EXPECT_GT(st.fused_steps, 0u);
    EXPECT_GT(st.step_sequences, st.steps) << "steps averaged more than one sequence";
    EXPECT_EQ(st.steps_le.back(), st.steps);
    // Every token was computed by some step: prompts, and all generated tokens but each last one.
    uint64_t tokens = 0;
    for (const auto& p : prompts) tokens += p.size() + 24 - 1;
    EXPECT_EQ(st.step_tokens, tokens);
    const std::string page = metrics_.render(st);
    EXPECT_NE(page.find("strata_engine_fused_steps_total " + std::to_string(st.fused_steps) + "\n"), std::string::npos) << page;
    EXPECT_NE(page.find("strata_batch_sequences_bucket{le=\"+Inf\"} " + std::to_string(st.steps) + "\n"), std::string::npos)
        << page;
}

// A request cancelled while others run leaves them untouched.
TEST_F(SchedulerTest, CancellingOneBatchedRequestLeavesTheOthers) {
    std::string want;
    {
        auto sched = make(1, 4);
        Outcome o = collect(*sched->submit(spec("steady", 30)));
        ASSERT_TRUE(o.done);
        want = o.text;
    }
    auto sched = make(2, 4, 4096);
    auto doomed = sched->submit(spec("to be cancelled", 4000));
    auto steady = sched->submit(spec("steady", 30));
    ASSERT_TRUE(doomed && steady);
    ASSERT_TRUE(doomed->next(30s));  // it runs
    doomed->cancel();
    Outcome o = collect(*steady);
    Outcome c = collect(*doomed, 30s);
    ASSERT_TRUE(o.done && c.done);
    EXPECT_EQ(c.result.outcome, TaskOutcome::Cancelled);
    EXPECT_EQ(o.result.outcome, TaskOutcome::Length);
    EXPECT_EQ(o.text, want);
}

// A model whose forward passes fail (throw, as an engine failure would) whenever they contain a
// poison token; otherwise it is the tiny model, fused multi-sequence pass included.
class PoisonedModel final : public Model {
public:
    PoisonedModel(Model& inner, int32_t poison) : inner_(inner), poison_(poison) { config_ = inner.config(); }
    KvCache make_kv_cache(int64_t n_ctx) const override { return inner_.make_kv_cache(n_ctx); }
    RecurrentState make_recurrent_state() const override { return inner_.make_recurrent_state(); }
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        check(batch.tokens, batch.n_tokens, 1);
        inner_.forward(batch, kv, logits, which, ctx);
    }
    void forward_multi(std::span<const SequenceStep> steps, CpuContext& ctx) override {
        for (const SequenceStep& s : steps) check(s.tokens, s.n_tokens, steps.size());
        inner_.forward_multi(steps, ctx);
    }
    bool fuses_sequences() const override { return inner_.fuses_sequences(); }
    int failed_fused_passes = 0;

private:
    void check(const int32_t* tokens, int64_t n, size_t n_steps) {
        if (std::find(tokens, tokens + n, poison_) == tokens + n) return;
        if (n_steps > 1) ++failed_fused_passes;
        throw std::runtime_error("poisoned token");
    }
    Model& inner_;
    int32_t poison_;
};

// A control byte the steady request's text does not contain (each is a token of its own in the
// tiny model's byte vocabulary): the poison, so that only the bad request ever feeds it. Which
// bytes the tiny model generates changes whenever its synthetic weights do.
char poison_byte_absent_from(const std::string& text) {
    for (char c = 1; c < 32; ++c)
        if (c != '\n' && text.find(c) == std::string::npos) return c;
    ADD_FAILURE() << "the steady text holds every control byte";
    return '\x07';
}

// An engine failure in a batched pass fails only the request that caused it: the others are
// retried alone and produce the tokens they produce on their own.
TEST_F(SchedulerTest, AnEngineFailureInABatchedStepFailsOnlyItsRequest) {
    std::string want;
    {
        auto sched = make(1, 4, 1024);
        Outcome o = collect(*sched->submit(spec("steady one", 300)));
        ASSERT_TRUE(o.done);
        want = o.text;
    }
    const char byte = poison_byte_absent_from(want);
    const std::string bad_prompt = std::string("bad ") + byte + " prompt";
    const int32_t poison = model_->tokenizer->encode(std::string(1, byte), false, false).at(0);

    PoisonedModel poisoned(*model_->model, poison);
    Scheduler sched(poisoned, *model_->tokenizer, pool_,
                    SchedulerOptions{.n_slots = 2, .n_ctx = 1024, .n_batch = 16, .max_queue = 4}, &metrics_);
    auto steady = sched.submit(spec("steady one", 300));
    auto first = steady->next(30s);  // generating: the bad request will join its passes
    ASSERT_TRUE(first && first->kind == TaskEvent::Kind::Text);
    auto bad = sched.submit(spec(bad_prompt, 10));
    Outcome ob = collect(*bad);
    Outcome os = collect(*steady);
    ASSERT_TRUE(ob.done && os.done);
    EXPECT_EQ(ob.result.outcome, TaskOutcome::Failed);
    EXPECT_NE(ob.result.error.find("the engine failed: poisoned token"), std::string::npos) << ob.result.error;
    EXPECT_EQ(os.result.outcome, TaskOutcome::Length);
    EXPECT_EQ(first->text + os.text, want);
    EXPECT_GT(poisoned.failed_fused_passes, 0) << "the failure did not happen in a batched pass";
    Outcome next = collect(*sched.submit(spec("after the failure", 4)));
    ASSERT_TRUE(next.done);
    EXPECT_EQ(next.result.outcome, TaskOutcome::Length);
}

// The same with the logits kept where a GPU model keeps them (support/device_rows_model.h): the
// chunks retried alone are separate passes, so each one's logits must reach the host before the
// next replaces them.
TEST_F(SchedulerTest, AnEngineFailureWithDeviceLogitsFailsOnlyItsRequest) {
    std::string want;
    {
        auto sched = make(1, 4, 1024);
        Outcome o = collect(*sched->submit(spec("steady one", 300)));
        ASSERT_TRUE(o.done);
        want = o.text;
    }
    const char byte = poison_byte_absent_from(want);
    const int32_t poison = model_->tokenizer->encode(std::string(1, byte), false, false).at(0);
    PoisonedModel poisoned(*model_->model, poison);
    strata::test::DeviceRowsModel device(poisoned);
    Scheduler sched(device, *model_->tokenizer, pool_,
                    SchedulerOptions{.n_slots = 2, .n_ctx = 1024, .n_batch = 16, .max_queue = 4}, &metrics_);
    auto steady = sched.submit(spec("steady one", 300));
    auto first = steady->next(30s);
    ASSERT_TRUE(first && first->kind == TaskEvent::Kind::Text);
    auto bad = sched.submit(spec(std::string("bad ") + byte + " prompt", 10));
    Outcome ob = collect(*bad);
    Outcome os = collect(*steady);
    ASSERT_TRUE(ob.done && os.done);
    EXPECT_EQ(ob.result.outcome, TaskOutcome::Failed);
    EXPECT_EQ(os.result.outcome, TaskOutcome::Length) << os.result.error;
    EXPECT_EQ(first->text + os.text, want);
    EXPECT_GT(poisoned.failed_fused_passes, 0) << "the failure did not happen in a batched pass";
}

TEST_F(SchedulerTest, CancellingARunningTaskStopsItAndFreesTheSlot) {
    auto sched = make(1, 4, 4096);
    auto a = sched->submit(spec("to be cancelled", 4000));
    auto first = a->next(30s);  // wait until it runs
    ASSERT_TRUE(first);
    a->cancel();
    Outcome o = collect(*a, 30s);
    ASSERT_TRUE(o.done);
    EXPECT_EQ(o.result.outcome, TaskOutcome::Cancelled);
    EXPECT_LT(o.result.generated_tokens, 4000);
    Outcome next = collect(*sched->submit(spec("next", 3)));
    ASSERT_TRUE(next.done);
    EXPECT_EQ(next.result.outcome, TaskOutcome::Length);
}

TEST_F(SchedulerTest, CancellingAQueuedTaskRemovesItFromTheQueue) {
    auto sched = make(1, 1, 4096);
    auto a = sched->submit(spec("running", 4000));
    auto b = sched->submit(spec("queued", 4));
    ASSERT_TRUE(a && b);
    b->cancel();
    Outcome ob = collect(*b, 10s);
    ASSERT_TRUE(ob.done);
    EXPECT_EQ(ob.result.outcome, TaskOutcome::Cancelled);
    EXPECT_EQ(ob.result.generated_tokens, 0);
    EXPECT_TRUE(sched->submit(spec("takes the freed place", 2)));  // a still runs: the place was freed
    a->cancel();
}

TEST_F(SchedulerTest, DeadlinesEndTasks) {
    auto sched = make(1, 4, 4096);
    TaskSpec s = spec("slow", 4000);
    s.deadline = std::chrono::steady_clock::now() + 50ms;
    Outcome o = collect(*sched->submit(s), 30s);
    ASSERT_TRUE(o.done);
    EXPECT_EQ(o.result.outcome, TaskOutcome::TimedOut);
    EXPECT_NE(o.result.error.find("timed out"), std::string::npos);
}

TEST_F(SchedulerTest, DrainRefusesNewTasksAndFinishesRunningOnes) {
    auto sched = make(1, 4);
    auto a = sched->submit(spec("in flight", 10));
    sched->begin_drain();
    EXPECT_FALSE(sched->submit(spec("late", 2)));
    EXPECT_TRUE(sched->wait_idle(30s));
    Outcome o = collect(*a, 1s);
    ASSERT_TRUE(o.done);
    EXPECT_EQ(o.result.outcome, TaskOutcome::Length);
}

TEST_F(SchedulerTest, StatsAndMetricsFollowTheWork) {
    auto sched = make(2, 4, 128);
    Outcome o = collect(*sched->submit(spec("count me", 5)));
    ASSERT_TRUE(o.done);
    SchedulerStats st = sched->stats();
    EXPECT_EQ(st.slots, 2);
    EXPECT_EQ(st.active, 0);
    EXPECT_EQ(st.kv_capacity_tokens, 256);
    EXPECT_EQ(st.kv_used_tokens, 8 + 4);  // prompt + generated but the last token
    const std::string page = metrics_.render(st);
    EXPECT_NE(page.find("strata_generated_tokens_total 5\n"), std::string::npos) << page;
    EXPECT_NE(page.find("strata_requests_finished_total{outcome=\"length\"} 1\n"), std::string::npos) << page;
    EXPECT_NE(page.find("strata_kv_cache_used_tokens 12\n"), std::string::npos) << page;
}

}  // namespace
}  // namespace strata::server
