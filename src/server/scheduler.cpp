#include "server/scheduler.h"

#include <fmt/format.h>

#include <algorithm>

#include "server/scheduler_slot.h"

namespace strata::server {

using Clock = std::chrono::steady_clock;

namespace {
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// How often the idle engine wakes to expire queued tasks whose deadline passed or whose client left.
constexpr auto kQueueSweepInterval = std::chrono::milliseconds(50);
}  // namespace

std::string_view task_outcome_name(TaskOutcome o) {
    switch (o) {
        case TaskOutcome::Stop: return "stop";
        case TaskOutcome::Length: return "length";
        case TaskOutcome::Cancelled: return "cancelled";
        case TaskOutcome::TimedOut: return "timeout";
        case TaskOutcome::Failed: return "error";
    }
    return "error";
}

// ---- TaskHandle ------------------------------------------------------------------------------

std::optional<TaskEvent> TaskHandle::next(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, wait, [&] { return !events_.empty(); })) return std::nullopt;
    TaskEvent ev = std::move(events_.front());
    events_.pop_front();
    return ev;
}

void TaskHandle::push(TaskEvent ev) {
    {
        std::lock_guard lock(mutex_);
        if (done_) return;
        done_ = ev.kind == TaskEvent::Kind::Done;
        events_.push_back(std::move(ev));
    }
    cv_.notify_all();
}

Scheduler::Scheduler(Model& model, const Tokenizer& tokenizer, ThreadPool& pool, SchedulerOptions options, Metrics* metrics)
    : model_(model),
      tokenizer_(tokenizer),
      pool_(pool),
      options_(options),
      metrics_(metrics),
      step_ctx_(pool, model.cpu_tuning()),
      checkpoints_(options.checkpoint_bytes) {
    STRATA_CHECK(options_.n_slots >= 1, "a scheduler needs at least one slot");
    for (int i = 0; i < options_.n_slots; ++i) {
        slots_.push_back(std::make_unique<Slot>(i, model_, SessionOptions{.n_ctx = options_.n_ctx, .n_batch = options_.n_batch, .logits_on_device = true}, pool_));
    }
    takes_checkpoints_ = checkpoints_.enabled() && slots_[0]->session.has_recurrent_state();
    engine_ = std::thread([this] { engine_loop(); });
}

Scheduler::~Scheduler() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        draining_ = true;
        for (auto& task : queue_) finish_unstarted(*task, TaskOutcome::Cancelled, "the server is shutting down");
        queue_.clear();
        for (auto& slot : slots_) {
            if (slot->task) slot->task->cancel();
        }
    }
    work_cv_.notify_all();
    engine_.join();
}

std::shared_ptr<TaskHandle> Scheduler::submit(TaskSpec spec) {
    STRATA_CHECK(!spec.prompt.empty(), "a task needs a prompt");
    auto task = std::make_shared<TaskHandle>();
    task->spec_ = std::move(spec);
    task->submitted_ = Clock::now();
    {
        std::lock_guard lock(mutex_);
        if (draining_) return nullptr;
        // Tasks that a free slot will take at once do not count against the queue bound.
        const size_t free_slots = static_cast<size_t>(options_.n_slots - active_);
        if (queue_.size() >= options_.max_queue + free_slots) return nullptr;
        queue_.push_back(task);
    }
    work_cv_.notify_one();
    return task;
}

void Scheduler::begin_drain() {
    std::lock_guard lock(mutex_);
    draining_ = true;
}

bool Scheduler::wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return idle_cv_.wait_for(lock, timeout, [&] { return active_ == 0 && queue_.empty(); });
}

SchedulerStats Scheduler::stats() const {
    SchedulerStats s;
    std::lock_guard lock(mutex_);
    s.queued = static_cast<int64_t>(queue_.size());
    s.active = active_;
    s.slots = options_.n_slots;
    for (const auto& slot : slots_) s.kv_used_tokens += slot->kv_used.load(std::memory_order_relaxed);
    s.kv_capacity_tokens = options_.n_ctx * options_.n_slots;
    // What the caches hold, whatever their element type and layers (hybrid models: attention only).
    for (const auto& slot : slots_) s.kv_bytes += slot->session.kv_bytes();
    s.steps = step_stats_.steps;
    s.fused_steps = step_stats_.fused_steps;
    s.step_sequences = step_stats_.step_sequences;
    s.step_tokens = step_stats_.step_tokens;
    s.last_step_sequences = step_stats_.last_step_sequences;
    s.steps_le = step_stats_.steps_le;
    s.speculative_passes = step_stats_.speculative_passes;
    s.drafted_tokens = step_stats_.drafted_tokens;
    s.accepted_tokens = step_stats_.accepted_tokens;
    s.checkpoints = checkpoints_.stats();
    return s;
}

double Scheduler::running_step_seconds() const {
    const int64_t began = step_started_ns_.load(std::memory_order_relaxed);
    if (began == 0) return 0.0;
    const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    return static_cast<double>(now - began) * std::chrono::steady_clock::period::num / std::chrono::steady_clock::period::den;
}

// ---- the engine thread -----------------------------------------------------------------------

void Scheduler::engine_loop() {
    std::unique_lock lock(mutex_);
    while (true) {
        sweep_queue_locked();
        admit_locked(lock);
        if (active_ == 0) {
            if (stopping_) break;
            if (queue_.empty()) idle_cv_.notify_all();
            work_cv_.wait_for(lock, kQueueSweepInterval);
            continue;
        }
        lock.unlock();
        // Every busy slot advances together: one forward pass for all of them.
        step_started_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
        const StepRecord record = run_step();
        step_started_ns_.store(0, std::memory_order_relaxed);
        lock.lock();
        record_step_locked(record);
    }
}

void Scheduler::record_step_locked(const StepRecord& r) {
    if (r.sequences == 0) return;  // every slot finished before the pass: nothing ran
    SchedulerStats& s = step_stats_;
    ++s.steps;
    if (r.sequences > 1 && model_.fuses_sequences()) ++s.fused_steps;
    s.step_sequences += static_cast<uint64_t>(r.sequences);
    s.step_tokens += static_cast<uint64_t>(r.tokens);
    s.last_step_sequences = r.sequences;
    s.speculative_passes += static_cast<uint64_t>(r.passes);
    s.drafted_tokens += static_cast<uint64_t>(r.drafted);
    s.accepted_tokens += static_cast<uint64_t>(r.accepted);
    for (size_t i = 0; i < kBatchSequenceBuckets.size(); ++i) {
        if (r.sequences <= kBatchSequenceBuckets[i]) ++s.steps_le[i];
    }
}

void Scheduler::sweep_queue_locked() {
    const auto now = Clock::now();
    for (auto it = queue_.begin(); it != queue_.end();) {
        TaskHandle& t = **it;
        if (t.cancelled()) {
            finish_unstarted(t, TaskOutcome::Cancelled, "cancelled while queued");
        } else if (now > t.spec_.deadline) {
            finish_unstarted(t, TaskOutcome::TimedOut,
                             fmt::format("timed out after {:.1f} s waiting in the queue for a free slot", seconds_between(t.submitted_, now)));
        } else {
            ++it;
            continue;
        }
        it = queue_.erase(it);
    }
}

void Scheduler::admit_locked(std::unique_lock<std::mutex>& lock) {
    while (!queue_.empty()) {
        // The free slot that keeps the longest prefix of the prompt (its KV rows, and on hybrid
        // models a state to resume from); on a tie the least recently used, so slots holding
        // other conversations are overwritten last. (Not the one sharing the most tokens: on a
        // hybrid model a prompt can share a few template tokens with a slot and keep none, and
        // taking that slot would drop its conversation's checkpoints.)
        Slot* best = nullptr;
        Reuse best_offer;
        bool looked_up = false;  // some slot shared more than it could keep: a checkpoint was looked for
        for (auto& slot : slots_) {
            if (slot->task) continue;
            const Reuse offer = reuse_offer(*slot, queue_.front()->spec_);
            looked_up = looked_up || offer.looked_up;
            if (!best || offer.tokens() > best_offer.tokens() ||
                (offer.tokens() == best_offer.tokens() && slot->last_used < best->last_used)) {
                best = slot.get();
                best_offer = offer;
            }
        }
        if (!best) return;
        best_offer.looked_up = looked_up;  // a hit or a miss for the metrics, whichever slot won
        Slot& slot = *best;
        slot.task = std::move(queue_.front());
        queue_.pop_front();
        ++active_;
        const TaskSpec& spec = slot.task->spec_;
        slot.result = TaskResult{};
        const size_t reuse = take_reuse(slot, best_offer);
        slot.prompt_done = reuse;
        slot.checkpoint_cursor = 0;
        slot.started = Clock::now();
        slot.result.prompt_tokens = static_cast<int64_t>(spec.prompt.size());
        slot.result.cached_tokens = static_cast<int64_t>(reuse);
        slot.result.queue_seconds = seconds_between(slot.task->submitted_, slot.started);
        slot.sampler.emplace(spec.sampling);
        slot.grammar.reset();  // made by the engine thread at the first sample (sample_next)
        slot.streamer.emplace(spec.stop);
        // A grammar masks each token after sampling, which a verification does not do; a forced
        // token is not sampled at all.
        slot.speculation.reset();
        slot.pass.clear();
        slot.drawn = -1;
        const SpeculationOptions& speculation = spec.speculation ? *spec.speculation : options_.speculation;
        if (speculation.mode != DraftMode::None && !spec.grammar && !options_.forced_next_token) {
            if (options_.drafter) {
                slot.speculation.emplace(speculation, options_.drafter(spec.prompt));
            } else {
                slot.speculation.emplace(speculation);
            }
        }
    }
}

void Scheduler::finish(Slot& slot, TaskOutcome outcome, std::string error) {
    TaskHandle& task = *slot.task;
    if (outcome == TaskOutcome::Stop || outcome == TaskOutcome::Length) {
        std::string rest = slot.streamer->finish();
        if (!rest.empty()) task.push(TaskEvent{TaskEvent::Kind::Text, std::move(rest), {}});
    }
    if (outcome == TaskOutcome::Failed) {
        slot.session.truncate(0);
        slot.kv_used.store(0, std::memory_order_relaxed);
        checkpoints_.drop_after(slot.id, 0);  // a failed pass may have left rows half written
    } else {
        keep_checkpoint(slot);  // the end of the reply: where the next turn of this conversation starts
    }
    TaskResult& r = slot.result;
    r.outcome = outcome;
    r.error = std::move(error);
    if (outcome == TaskOutcome::Stop) r.stop_string = slot.streamer->matched();
    if (slot.prompt_done == task.spec_.prompt.size()) r.generation_seconds = seconds_between(slot.decode_started, Clock::now());
    if (metrics_) {
        metrics_->record_task(TaskRecord{std::string(task_outcome_name(outcome)), r.prompt_tokens, r.cached_tokens,
                                         r.checkpoint_tokens, r.generated_tokens, r.prompt_seconds, r.generation_seconds,
                                         r.queue_seconds});
    }
    // The slot is free before the client hears of the end, so a client that sends its next
    // request at once finds the slot (and its prefix) available.
    std::shared_ptr<TaskHandle> keep;
    {
        std::lock_guard lock(mutex_);  // the destructor reads slot.task under this lock
        keep = std::move(slot.task);
        slot.last_used = ++lru_clock_;
        --active_;
        if (active_ == 0 && queue_.empty()) idle_cv_.notify_all();
    }
    keep->push(TaskEvent{TaskEvent::Kind::Done, {}, r});
}

void Scheduler::finish_unstarted(TaskHandle& task, TaskOutcome outcome, std::string error) {
    TaskResult r;
    r.outcome = outcome;
    r.error = std::move(error);
    r.prompt_tokens = static_cast<int64_t>(task.spec_.prompt.size());
    r.queue_seconds = seconds_between(task.submitted_, Clock::now());
    if (metrics_) metrics_->record_task(TaskRecord{std::string(task_outcome_name(outcome)), 0, 0, 0, 0, 0.0, 0.0, r.queue_seconds});
    task.push(TaskEvent{TaskEvent::Kind::Done, {}, r});
}

}  // namespace strata::server
