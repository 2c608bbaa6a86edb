#pragma once
// Runs generation requests on one model: N slots, each a Session (its own KV cache) on the shared
// model, fed from a bounded FIFO queue. One engine thread owns the model (its forward pass is not
// reentrant) and runs continuous batching: each engine step, every generating slot samples its
// next token, and those tokens, with prompt chunks of prefilling slots (up to n_batch tokens in
// all), go through ONE forward pass (Session::append_batched → Model::forward_multi), so the
// weights are read once per step for every slot instead of once per slot. A slot joins the batch
// the step after it is admitted and leaves it when it finishes; concurrent requests stream side
// by side, and a long prompt cannot stall the others for more than a chunk. Each sequence's
// logits are those it would get alone, so batching never changes a request's tokens.
//
// A new request takes the free slot whose tokens share the longest prefix with its prompt and
// keeps that part of the KV cache (Session::truncate), so a conversation that grows by a turn
// only computes the new turn. A recurrent state cannot be rewound, so on hybrid models that works
// only when the prompt extends everything the slot holds; a turn checkpoint covers the rest
// (server/checkpoint_cache.h): the state is saved at the task's checkpoint positions (the chat
// template's turn starts) and at the end of each reply, and a prompt that diverges from the slot
// inside the last reply (re-rendered, thinking dropped) resumes from the latest checkpoint before
// the divergence.
//
//   Scheduler sched(model, tokenizer, pool, SchedulerOptions{.n_slots = 4}, &metrics);
//   auto task = sched.submit(spec);                  // nullptr: queue full (answer 503)
//   while (auto ev = task->next(100ms)) { ... }      // text pieces, then one Done event
//   task->cancel();                                  // the client went away

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"
#include "runtime/grammar_sampling.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative.h"
#include "server/checkpoint_cache.h"
#include "server/metrics.h"
#include "tokenizer/tokenizer.h"

namespace strata::server {

struct SchedulerOptions {
    int n_slots = 1;
    int64_t n_ctx = 4096;    // per slot
    int64_t n_batch = 512;   // prompt tokens per step
    size_t max_queue = 64;   // requests waiting for a slot; more are refused
    // Turn checkpoints of hybrid models, all slots together (0: none; attention-only models
    // never take any: their KV rows alone can be cut back to any prefix).
    uint64_t checkpoint_bytes = 0;
    // Speculative decoding (runtime/speculative.h) for tasks that do not choose: off unless set
    // (`strata serve` sets auto). Never for a task under a grammar or with forced_next_token.
    SpeculationOptions speculation{.mode = DraftMode::None};
    // Test hook: when set, it picks every generated token instead of the sampler (from the
    // task's prompt and the number generated so far), so end-to-end tests can force an exact
    // output such as a tool call.
    std::function<int32_t(const std::vector<int32_t>& prompt, int64_t n_generated)> forced_next_token = nullptr;
    // Test hook: when set, a speculating task drafts with the drafter it returns for the task's
    // prompt instead of prompt lookup, so that tests choose which drafts are right.
    std::function<std::unique_ptr<Drafter>(const std::vector<int32_t>& prompt)> drafter = nullptr;
};

struct TaskSpec {
    std::vector<int32_t> prompt;  // not empty; prompt.size() + max_tokens <= n_ctx (checked by the caller)
    SamplingParams sampling;
    int64_t max_tokens = 256;
    std::vector<std::string> stop;
    bool ignore_eos = false;      // generate past end-of-generation tokens
    bool render_special = false;  // keep control tokens in the text (harmony channel markers)
    // Constrained decoding: every token must continue a sentence of this grammar; end tokens
    // only where a sentence is complete, and the task stops when nothing can follow.
    std::shared_ptr<const Grammar> grammar;
    // Prompt positions, ascending, after which a hybrid model's state is kept as a turn
    // checkpoint (the chat template's turn starts; turn_starts.h). Others are ignored.
    std::vector<int64_t> checkpoints;
    // The request's own speculative decoding settings; unset: the server's.
    std::optional<SpeculationOptions> speculation;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

enum class TaskOutcome { Stop, Length, Cancelled, TimedOut, Failed };
std::string_view task_outcome_name(TaskOutcome o);

struct TaskResult {
    TaskOutcome outcome = TaskOutcome::Stop;
    std::string error;  // Failed / TimedOut: what happened
    std::string stop_string;  // Stop by one of the task's stop strings: which one (empty: an end token)
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
    int64_t checkpoint_tokens = 0;  // of cached_tokens, those restored from a turn checkpoint
    int64_t generated_tokens = 0;
    double queue_seconds = 0.0;
    double prompt_seconds = 0.0;
    double generation_seconds = 0.0;
};

struct TaskEvent {
    enum class Kind { Text, Done } kind = Kind::Text;
    std::string text;   // Text: the next piece (complete UTF-8, stop strings cut)
    TaskResult result;  // Done
};

// The request's side of a task, shared by the HTTP thread and the engine thread.
class TaskHandle {
public:
    // The next event, waiting up to `wait`; nullopt on timeout. After Done, always nullopt.
    std::optional<TaskEvent> next(std::chrono::milliseconds wait);
    // Asks the engine to stop the task at its next step (or drop it from the queue); a Done event
    // with outcome Cancelled follows.
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
    // When submit() queued the task; with TaskResult::queue_seconds it gives when a slot took it.
    std::chrono::steady_clock::time_point submitted_at() const { return submitted_; }

private:
    friend class Scheduler;
    void push(TaskEvent ev);

    TaskSpec spec_;
    std::chrono::steady_clock::time_point submitted_;
    std::atomic<bool> cancelled_{false};
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<TaskEvent> events_;
    bool done_ = false;
};

class Scheduler {
public:
    Scheduler(Model& model, const Tokenizer& tokenizer, ThreadPool& pool, SchedulerOptions options, Metrics* metrics);
    ~Scheduler();  // fails queued tasks, cancels running ones and joins the engine thread
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Queues a task; nullptr when the queue is full or the scheduler is draining.
    std::shared_ptr<TaskHandle> submit(TaskSpec spec);
    // Refuses new tasks from now on; queued and running ones finish.
    void begin_drain();
    // Waits until no task is queued or running; false on timeout.
    bool wait_idle(std::chrono::milliseconds timeout);

    SchedulerStats stats() const;
    // How long the engine's current forward pass has run (0 between passes): the supervisor's
    // watchdog reads it through /health to tell a long pass from a hung one.
    double running_step_seconds() const;
    const SchedulerOptions& options() const { return options_; }
    // Whether tasks' checkpoint positions are used: a hybrid model and a checkpoint budget.
    bool takes_checkpoints() const { return takes_checkpoints_; }

private:
    struct Slot;
    void engine_loop();
    std::atomic<int64_t> step_started_ns_{0};  // steady-clock time the running pass began; 0: none
    void admit_locked(std::unique_lock<std::mutex>& lock);
    void sweep_queue_locked();
    // One engine step over every busy slot (scheduler_step.cpp); returns what ran.
    struct StepRecord {
        int64_t sequences = 0, tokens = 0;
        int64_t passes = 0, drafted = 0, accepted = 0;  // this step's verifications (speculative decoding)
    };
    StepRecord run_step();
    void run_chunks();               // this step's forward pass: one status per chunk in chunk_status_
    bool still_running(Slot& slot);  // false: cancelled or timed out, and finished
    bool sample_next(Slot& slot);    // a generating slot's next token; false: it finished
    // A generated token counted, recorded and streamed; how it ends the task, or nullopt to go on.
    std::optional<TaskOutcome> emit(Slot& slot, int32_t token);
    // After the pass: a verifying slot's drafts tested, the accepted ones emitted, the session
    // rolled back to the last kept token (scheduler_step.cpp).
    void verify_drafts(Slot& slot, StepRecord& record, double step_seconds);
    void record_step_locked(const StepRecord& r);
    void finish(Slot& slot, TaskOutcome outcome, std::string error = {});
    // The tokenizer's vocabulary for grammars, built by the engine thread at the first grammar.
    const std::shared_ptr<const TokenVocabulary>& token_vocabulary();
    void finish_unstarted(TaskHandle& task, TaskOutcome outcome, std::string error);
    // Admission: what a free slot offers a prompt, and taking it (scheduler_reuse.cpp).
    struct Reuse {
        size_t common = 0;      // tokens the slot shares with the prompt
        size_t live = 0;        // kept as they are (Session::reusable_prefix)
        int64_t checkpoint = 0; // restorable from a turn checkpoint of the slot (0: none)
        // A checkpoint was looked for: the live prefix fell short of a shared part that reaches
        // past the prompt's first turn start (less is a new conversation in the same template).
        // At admission: in any free slot, so that a request is a hit or a miss.
        bool looked_up = false;
        size_t tokens() const { return std::max(live, static_cast<size_t>(checkpoint)); }
    };
    Reuse reuse_offer(const Slot& slot, const TaskSpec& task) const;
    size_t take_reuse(Slot& slot, const Reuse& offer);  // the prompt tokens now in the session
    // The prompt position the slot's next chunk must stop at to keep a checkpoint there (0: none).
    size_t next_checkpoint(Slot& slot);
    void checkpoint_if_due(Slot& slot);  // after a prompt chunk: keeps one when it ended at a checkpoint
    void keep_checkpoint(Slot& slot);

    Model& model_;
    const Tokenizer& tokenizer_;
    ThreadPool& pool_;
    SchedulerOptions options_;
    Metrics* metrics_;
    std::vector<std::unique_ptr<Slot>> slots_;
    CpuContext step_ctx_;                  // scratch of the batched forward pass (engine thread)
    std::vector<SessionChunk> chunks_;     // this step's work, reused between steps
    std::vector<Slot*> stepped_;           // the slot of each chunk
    std::vector<Status> chunk_status_;     // how each chunk's forward pass went
    std::vector<int32_t> drafts_;          // sample_next's drafts, reused
    CandidateSet verify_set_;              // verify_drafts' reduction of a row, reused
    std::vector<float> verify_scratch_;
    std::shared_ptr<const TokenVocabulary> token_vocabulary_;  // engine thread; null until a grammar comes
    CheckpointCache checkpoints_;
    bool takes_checkpoints_ = false;
    size_t prefill_cursor_ = 0;            // the prefilling slot served first, rotating for fairness

    mutable std::mutex mutex_;
    std::condition_variable work_cv_;   // the engine waits for tasks
    std::condition_variable idle_cv_;   // wait_idle waits for the end of work
    std::deque<std::shared_ptr<TaskHandle>> queue_;
    int64_t active_ = 0;
    uint64_t lru_clock_ = 0;
    bool draining_ = false;
    bool stopping_ = false;
    SchedulerStats step_stats_;  // only the engine-step fields, under mutex_
    std::thread engine_;
};

}  // namespace strata::server
