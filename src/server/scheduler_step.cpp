// The engine step of continuous batching (scheduler.h): every busy slot either samples its next
// token (generating) or offers a prompt chunk (prefilling), then all of them advance in one
// forward pass of the model.
#include <fmt/format.h>

#include <algorithm>

#include "server/scheduler.h"
#include "runtime/select_candidates.h"
#include "server/scheduler_slot.h"

namespace strata::server {

using Clock = std::chrono::steady_clock;

namespace {
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}  // namespace

bool Scheduler::still_running(Slot& slot) {
    TaskHandle& task = *slot.task;
    if (task.cancelled()) {
        finish(slot, TaskOutcome::Cancelled, "cancelled");
        return false;
    }
    const auto now = Clock::now();
    if (now > task.spec_.deadline) {
        finish(slot, TaskOutcome::TimedOut,
               fmt::format("timed out after {:.1f} s (the server's --timeout); {} tokens were generated",
                           seconds_between(task.submitted_, now), slot.result.generated_tokens));
        return false;
    }
    return true;
}

bool Scheduler::sample_next(Slot& slot) {
    TaskHandle& task = *slot.task;
    const TaskSpec& spec = task.spec_;
    Session& session = slot.session;
    if (spec.grammar && !slot.grammar) slot.grammar.emplace(spec.grammar, token_vocabulary());
    int32_t next = 0;
    if (slot.drawn >= 0) {  // drawn by the last verification, where it rejected a draft
        next = slot.drawn;
        slot.drawn = -1;
    } else if (options_.forced_next_token) {
        next = options_.forced_next_token(spec.prompt, slot.result.generated_tokens);
    } else if (slot.grammar) {
        next = session.sample(*slot.sampler, *slot.grammar);
        if (next < 0) {  // the grammar allows no token (nor the end): what was written is all it can be
            finish(slot, TaskOutcome::Stop);
            return false;
        }
    } else {
        next = session.sample(*slot.sampler);
    }
    if (const auto end = emit(slot, next)) {
        finish(slot, *end);
        return false;
    }
    slot.next_token = next;
    slot.pass.clear();
    if (slot.speculation && slot.speculation->enabled()) {
        // Drafts only where every one of them can be emitted without reaching the token limit or
        // the context's end, so that only an end token or a stop string ends a task mid-pass.
        const int64_t budget = std::min(spec.max_tokens - slot.result.generated_tokens - 1, session.n_ctx() - session.n_past() - 2);
        slot.speculation->draft(session, next, budget, drafts_);
        if (!drafts_.empty()) {
            slot.pass.assign(1, next);
            slot.pass.insert(slot.pass.end(), drafts_.begin(), drafts_.end());
        }
    }
    return true;
}

std::optional<TaskOutcome> Scheduler::emit(Slot& slot, int32_t next) {
    TaskHandle& task = *slot.task;
    const TaskSpec& spec = task.spec_;
    if (slot.grammar) static_cast<void>(slot.grammar->accept(next));
    slot.sampler->accept(next);
    ++slot.result.generated_tokens;
    if (!spec.ignore_eos && (next == tokenizer_.eos_id() || next == tokenizer_.eot_id())) return TaskOutcome::Stop;
    std::string ready = slot.streamer->push(tokenizer_.token_to_piece(next, spec.render_special));
    if (!ready.empty()) task.push(TaskEvent{TaskEvent::Kind::Text, std::move(ready), {}});
    if (slot.streamer->stopped() || (slot.grammar && slot.grammar->exhausted())) return TaskOutcome::Stop;
    // The last token is not run through the model: nothing would use its logits.
    if (slot.result.generated_tokens >= spec.max_tokens || slot.session.n_past() >= slot.session.n_ctx()) return TaskOutcome::Length;
    return std::nullopt;
}

void Scheduler::verify_drafts(Slot& slot, StepRecord& record, double step_seconds) {
    const auto start = Clock::now();
    Session& session = slot.session;
    const int64_t m = static_cast<int64_t>(slot.pass.size()) - 1;
    int64_t accepted = 0, keep = m + 1;
    std::optional<TaskOutcome> end;
    for (int64_t i = 0; i < m; ++i) {
        // As decode_tokens does (runtime/speculative.cpp): row i drawn from as a plain step
        // would, the draft kept when it is the drawn token.
        const int32_t d = slot.pass[static_cast<size_t>(i + 1)];
        select_candidates(session.speculative_logits(i), session.n_vocab(), slot.sampler->query(session.n_vocab()),
                          verify_set_, verify_scratch_);
        const int32_t t = slot.sampler->choose(verify_set_);
        if (t != d) {
            slot.drawn = t;
            keep = i + 1;
            break;
        }
        ++accepted;
        if ((end = emit(slot, d))) {
            keep = i + 1;  // the ending token is not kept, as a plain step does not run it
            break;
        }
    }
    // Rolled back before a finish, which keeps the reply's end as a checkpoint.
    if (Status s = session.rollback_speculative(keep); !s) return finish(slot, TaskOutcome::Failed, s.message());
    slot.kv_used.store(session.n_past(), std::memory_order_relaxed);
    slot.speculation->record(m, accepted, keep, step_seconds + seconds_between(start, Clock::now()));
    ++record.passes;
    record.drafted += m;
    record.accepted += accepted;
    if (end) finish(slot, *end);
}

const std::shared_ptr<const TokenVocabulary>& Scheduler::token_vocabulary() {
    if (!token_vocabulary_) token_vocabulary_ = std::make_shared<const TokenVocabulary>(TokenVocabulary::from(tokenizer_));
    return token_vocabulary_;
}

Scheduler::StepRecord Scheduler::run_step() {
    chunks_.clear();
    stepped_.clear();
    auto add = [&](Slot& slot, std::span<const int32_t> tokens, bool speculative) {
        // A chunk the session would refuse (context full, ...) fails its request alone, before
        // the shared pass.
        if (Status s = slot.session.check_append(tokens); !s) return finish(slot, TaskOutcome::Failed, s.message());
        chunks_.push_back(SessionChunk{&slot.session, tokens, speculative});
        stepped_.push_back(&slot);
    };

    // Generating slots first: one token each. Their sampling reads the logits of the previous
    // step, so it happens before this step's pass overwrites them.
    int64_t decode_tokens = 0;
    for (auto& owned : slots_) {
        Slot& slot = *owned;
        if (!slot.task || !still_running(slot)) continue;
        if (slot.prompt_done < slot.task->spec_.prompt.size()) continue;
        try {
            if (!sample_next(slot)) continue;
        } catch (const std::exception& e) {
            finish(slot, TaskOutcome::Failed, fmt::format("the engine failed: {}", e.what()));
            continue;
        }
        if (slot.pass.empty()) {
            add(slot, std::span<const int32_t>(&slot.next_token, 1), false);
            ++decode_tokens;
        } else {
            add(slot, std::span<const int32_t>(slot.pass), true);
            decode_tokens += static_cast<int64_t>(slot.pass.size());
        }
    }

    // Prefilling slots share what is left of n_batch tokens (at least one chunk runs, so prompts
    // progress however many slots generate); the slot served first rotates, so two long prompts
    // advance alternately rather than one after the other.
    int64_t budget = std::max<int64_t>(1, std::max<int64_t>(1, options_.n_batch) - decode_tokens);
    const size_t n_slots = slots_.size();
    for (size_t i = 0; i < n_slots && budget > 0; ++i) {
        Slot& slot = *slots_[(prefill_cursor_ + i) % n_slots];
        if (!slot.task) continue;
        const std::vector<int32_t>& prompt = slot.task->spec_.prompt;
        if (slot.prompt_done >= prompt.size()) continue;  // (cancellation was checked above)
        size_t n = std::min(prompt.size() - slot.prompt_done, static_cast<size_t>(budget));
        // A chunk ends at the next turn checkpoint, so that the state there can be kept.
        if (const size_t at = next_checkpoint(slot); at > slot.prompt_done) n = std::min(n, at - slot.prompt_done);
        add(slot, std::span(prompt).subspan(slot.prompt_done, n), false);
        budget -= static_cast<int64_t>(n);
    }
    prefill_cursor_ = (prefill_cursor_ + 1) % n_slots;
    if (chunks_.empty()) return {};

    StepRecord record{static_cast<int64_t>(chunks_.size()), 0};
    for (const SessionChunk& c : chunks_) record.tokens += static_cast<int64_t>(c.tokens.size());
    const auto pass_start = Clock::now();
    run_chunks();
    const double step_seconds = seconds_between(pass_start, Clock::now());
    for (size_t i = 0; i < stepped_.size(); ++i) {
        Slot& slot = *stepped_[i];
        slot.kv_used.store(slot.session.n_past(), std::memory_order_relaxed);
        if (!chunk_status_[i]) {
            finish(slot, TaskOutcome::Failed, chunk_status_[i].message());
            continue;
        }
        const std::vector<int32_t>& prompt = slot.task->spec_.prompt;
        if (slot.prompt_done >= prompt.size()) {  // a decode step
            // The draft length weighs this step's time: the whole pass, shared with the slots
            // batched beside it (the acceptance tests' time is this slot's own).
            if (chunks_[i].speculative) {
                try {
                    verify_drafts(slot, record, step_seconds);
                } catch (const std::exception& e) {
                    finish(slot, TaskOutcome::Failed, fmt::format("the engine failed: {}", e.what()));
                }
            } else if (slot.speculation) {
                slot.speculation->record(0, 0, 1, step_seconds);
            }
            continue;
        }
        slot.prompt_done += chunks_[i].tokens.size();
        checkpoint_if_due(slot);
        if (slot.prompt_done == prompt.size()) {
            slot.decode_started = Clock::now();
            slot.result.prompt_seconds = seconds_between(slot.started, slot.decode_started);
            for (int32_t t : prompt) slot.sampler->accept(t);  // the penalties see the prompt
        }
    }
    return record;
}

void Scheduler::run_chunks() {
    chunk_status_.assign(chunks_.size(), Status::ok());
    std::string failure;
    try {
        const Status s = Session::append_batched(chunks_, step_ctx_);
        if (!s) chunk_status_.assign(chunks_.size(), s);
        return;
    } catch (const std::exception& e) {
        failure = e.what();
    }
    // The shared pass threw (out of memory, ...). An engine failure should fail the request that
    // caused it, not every request it was batched with, so each chunk is retried alone: a failed
    // pass leaves an attention-only session as it was (its tokens did not advance; the cache rows
    // it wrote past them are rewritten), but a recurrent state may be half advanced, so those
    // sessions fail with the pass.
    for (size_t i = 0; i < chunks_.size(); ++i) {
        if (chunks_.size() == 1 || chunks_[i].session->has_recurrent_state()) {
            chunk_status_[i] = Status::error("the engine failed: {}", failure);
            continue;
        }
        try {
            chunk_status_[i] = Session::append_batched(std::span(&chunks_[i], 1), step_ctx_);
            // Its logits to the host now: the next chunk's pass replaces what a GPU keeps.
            if (chunk_status_[i]) static_cast<void>(chunks_[i].session->logits());
        } catch (const std::exception& e) {
            chunk_status_[i] = Status::error("the engine failed: {}", e.what());
        }
    }
}

}  // namespace strata::server
