// Speculative decoding in the scheduler: a request's text is the one it gets without speculation
// (greedy, and sampled with a seed), alone and batched with other slots (speculating or not), on
// an attention-only model and on a hybrid one (whose rollback restores and replays the recurrent
// state); a stop string inside a verification ends the text where plain decoding ends it; the
// per-request choice overrides the server's; /metrics counts passes, drafts and accepted drafts.
// The drafts are scripted: plain decoding's own tokens (computed here through a Session), every
// third one wrong, so that verifications accept and reject in a known pattern.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/speculative.h"
#include "server/scheduler.h"
#include "server_test_support.h"
#include "support/testdata.h"

namespace strata::server {
namespace {

using namespace std::chrono_literals;

struct Outcome {
    std::string text;
    TaskResult result;
    bool done = false;
};

Outcome collect(TaskHandle& task) {
    Outcome o;
    const auto end = std::chrono::steady_clock::now() + 120s;
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

const SpeculationOptions kLookup{.mode = DraftMode::Lookup, .k_max = 3};

// Plain decoding's continuation of a prompt, every third position drafted wrong.
class ScriptedDrafter : public Drafter {
public:
    ScriptedDrafter(std::vector<int32_t> expected, size_t prompt_size, int32_t n_vocab)
        : expected_(std::move(expected)), prompt_size_(prompt_size), n_vocab_(n_vocab) {}
    std::string_view name() const override { return "scripted"; }
    void draft(std::span<const int32_t> context, int64_t max, std::vector<int32_t>& out) override {
        out.clear();
        for (size_t p = context.size() - prompt_size_; p < expected_.size() && static_cast<int64_t>(out.size()) < max; ++p) {
            out.push_back(p % 3 == 2 ? (expected_[p] + 1) % n_vocab_ : expected_[p]);
        }
    }

private:
    std::vector<int32_t> expected_;
    size_t prompt_size_;
    int32_t n_vocab_;
};
const SpeculationOptions kOff{.mode = DraftMode::None};

class SchedulerSpeculative : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        if (GetParam() == "tiny") {
            engine_ = test::load_tiny_model();
        } else {
            const std::string path = strata::test::testdata_path("models/" + GetParam() + ".gguf");
            if (!file_exists(path)) GTEST_SKIP() << "test data missing: " << path;
            auto lm = Engine::open({.model_path = path, .chat_template = test::kTinyChatTemplate});
            ASSERT_TRUE(lm) << lm.status().message();
            engine_ = std::move(*lm);
        }
    }
    std::unique_ptr<Scheduler> make(int slots, const SpeculationOptions& speculation) {
        SchedulerOptions o{.n_slots = slots, .n_ctx = 256, .n_batch = 16, .max_queue = 8, .speculation = speculation};
        o.drafter = [this](const std::vector<int32_t>& prompt) -> std::unique_ptr<Drafter> {
            return std::make_unique<ScriptedDrafter>(plain_tokens(prompt), prompt.size(),
                                                     static_cast<int32_t>(engine_->model->config().n_vocab));
        };
        return std::make_unique<Scheduler>(*engine_->model, *engine_->tokenizer, pool_, o, &metrics_);
    }
    // Plain decoding's tokens after `prompt` with the sampling of the test's requests.
    std::vector<int32_t> plain_tokens(const std::vector<int32_t>& prompt) {
        Session session(*engine_->model, SessionOptions{.n_ctx = 256}, pool_);
        EXPECT_TRUE(session.append(prompt));
        Sampler sampler(sampling_);
        for (int32_t t : prompt) sampler.accept(t);
        std::vector<int32_t> out;
        EXPECT_TRUE(decode_tokens(session, sampler, nullptr, 64, [&](int32_t t) {
            out.push_back(t);
            return TokenVerdict::Continue;
        }));
        return out;
    }
    // Also the sampling the scripted drafter replays for the next task admitted.
    TaskSpec spec(const std::string& prompt, int64_t max_tokens, float temperature) {
        TaskSpec s;
        s.prompt = engine_->tokenizer->encode(prompt, false, false);
        s.max_tokens = max_tokens;
        s.sampling.temperature = temperature;
        s.sampling.seed = 17;
        sampling_ = s.sampling;
        s.ignore_eos = true;
        return s;
    }
    Outcome run_alone(const SpeculationOptions& speculation, TaskSpec s, SchedulerStats* stats = nullptr) {
        auto sched = make(1, speculation);
        auto task = sched->submit(std::move(s));
        EXPECT_TRUE(task);
        Outcome o = collect(*task);
        EXPECT_TRUE(o.done);
        if (stats) *stats = sched->stats();
        return o;
    }

    std::unique_ptr<Engine> engine_;
    SamplingParams sampling_;
    ThreadPool pool_{ThreadPool::Options{.threads = 2}};
    Metrics metrics_;
};

const std::vector<std::string> kPrompts = {"the cat sat on the mat and the cat sat on the mat and the cat",
                                           "In the beginning", "one two three one two three one two",
                                           "x y z x y z x y z x y"};

TEST_P(SchedulerSpeculative, AloneGivesThePlainText) {
    int64_t accepted = 0;
    for (float temperature : {0.0f, 0.9f}) {
        for (const std::string& p : kPrompts) {
            const Outcome plain = run_alone(kOff, spec(p, 32, temperature));
            SchedulerStats st;
            const Outcome spec_run = run_alone(kLookup, spec(p, 32, temperature), &st);
            EXPECT_EQ(spec_run.text, plain.text) << "prompt \"" << p << "\", temperature " << temperature;
            EXPECT_EQ(spec_run.result.generated_tokens, 32);
            EXPECT_LE(st.accepted_tokens, st.drafted_tokens);
            accepted += static_cast<int64_t>(st.accepted_tokens);
        }
    }
    EXPECT_GT(accepted, 0) << "no draft was ever accepted: the comparison did not exercise verification";
    SchedulerStats counted;
    counted.speculative_passes = 3;
    counted.drafted_tokens = 7;
    counted.accepted_tokens = 5;
    const std::string page = metrics_.render(counted);
    EXPECT_NE(page.find("strata_speculative_passes_total 3\n"), std::string::npos) << page;
    EXPECT_NE(page.find("strata_speculative_drafted_tokens_total 7\n"), std::string::npos) << page;
    EXPECT_NE(page.find("strata_speculative_accepted_tokens_total 5\n"), std::string::npos) << page;
}

TEST_P(SchedulerSpeculative, BatchedSlotsGiveTheirPlainTexts) {
    std::vector<std::string> alone;
    for (const std::string& p : kPrompts) alone.push_back(run_alone(kOff, spec(p, 24, 0.0f)).text);
    auto sched = make(4, kLookup);
    std::vector<std::shared_ptr<TaskHandle>> tasks;
    for (size_t i = 0; i < kPrompts.size(); ++i) {
        TaskSpec s = spec(kPrompts[i], 24, 0.0f);
        if (i == 1) s.speculation = kOff;  // one slot decodes plainly beside the verifying ones
        tasks.push_back(sched->submit(std::move(s)));
    }
    std::vector<Outcome> together(tasks.size());
    std::vector<std::thread> readers;
    for (size_t i = 0; i < tasks.size(); ++i) readers.emplace_back([&, i] { together[i] = collect(*tasks[i]); });
    for (auto& r : readers) r.join();
    for (size_t i = 0; i < kPrompts.size(); ++i) {
        ASSERT_TRUE(together[i].done);
        EXPECT_EQ(together[i].text, alone[i]) << "request " << i;
    }
    EXPECT_GT(sched->stats().speculative_passes, 0u);
}

TEST_P(SchedulerSpeculative, StopStringsAndTheRequestsChoice) {
    const std::string p = kPrompts[0];
    const Outcome plain = run_alone(kOff, spec(p, 40, 0.0f));
    ASSERT_GE(plain.text.size(), 12u);
    // A stop string from the middle of the plain text: both stop before it.
    TaskSpec stopped = spec(p, 40, 0.0f);
    stopped.stop = {plain.text.substr(plain.text.size() / 2, 4)};
    const Outcome plain_stop = run_alone(kOff, stopped);
    const Outcome spec_stop = run_alone(kLookup, stopped);
    EXPECT_EQ(spec_stop.text, plain_stop.text);
    EXPECT_EQ(spec_stop.result.outcome, TaskOutcome::Stop);
    // The request turns it off on a server that has it on, and on where the server has it off.
    SchedulerStats st;
    TaskSpec off = spec(p, 16, 0.0f);
    off.speculation = kOff;
    EXPECT_EQ(run_alone(kLookup, off, &st).text.size() > 0, true);
    EXPECT_EQ(st.speculative_passes, 0u);
    TaskSpec on = spec(p, 16, 0.0f);
    on.speculation = kLookup;
    run_alone(kOff, on, &st);
    EXPECT_GT(st.speculative_passes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, SchedulerSpeculative, ::testing::Values("tiny", "qwen3next"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace strata::server
